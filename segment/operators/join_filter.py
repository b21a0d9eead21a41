"""Join-key filters: a hash join's build keys, pushed into the scan of its probe side.

When the build side of an inner, semi or right join is small next to its probe side
(TPC-H Q19: 970 parts against 6M lineitems), most probe rows find no partner, and the
scan below the join still reads them, runs its filter over them and hands them up. Once
the build rows are in (hash_join.py), their first key's values become a KeyFilter, and
the Scan the probe key comes from (through Projects and Filters that pass the column on,
in the same slice) drops rows whose key is none of them, before its own filter: chunks
whose statistics put the key outside the values' range are not read at all, the others
are tested in one numba loop over a bitmap of the values' range. A probe row whose key
is NULL or no build key would join nothing, so the join's rows are the same.

Integer keys only (int2/int4/int8 on both sides), and only where it pays: a scan whose
rows mostly pass after a few batches stops testing.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

from planner import plan
from planner.types import Kind

BITMAP_MAX = 1 << 26    # bits of one filter's bitmap (8 MB); wider ranges are not filtered
BUILD_MAX = 1 << 20     # build rows beyond which no filter is made
PASS_MAX = 0.5          # a probe batch passing more than this fraction counts as a miss
MISSES_MAX = 2          # ... and after this many the scan stops testing
_INTEGERS = (Kind.INT2, Kind.INT4, Kind.INT8)
_JOINS = (plan.JoinType.INNER, plan.JoinType.SEMI, plan.JoinType.RIGHT)
_ALL_VALID = np.empty(0, np.bool_)


class KeyFilter:
    """The values of a build key, as a bitmap over their range [lo, hi]."""

    def __init__(self, values: np.ndarray):
        self.lo, self.hi = int(values.min()), int(values.max())
        self.bits = np.zeros(((self.hi - self.lo) >> 3) + 1, np.uint8)
        _set_bits(values, self.lo, self.bits)
        self.misses = 0

    @property
    def active(self) -> bool:
        return self.misses < MISSES_MAX

    def disjoint(self, lo, hi) -> bool:
        """Whether [lo, hi] (a chunk's bounds of the probe key) holds none of the values."""
        return lo is not None and hi is not None and (hi < self.lo or lo > self.hi)

    def positions(self, column: pa.Array) -> np.ndarray | None:
        """The positions of rows whose value is one of the keys, or None when most rows
        are (then the batch is passed as it is)."""
        if column.null_count:
            valid = column.is_valid().to_numpy(zero_copy_only=False)
            column = column.fill_null(0)
        else:
            valid = _ALL_VALID
        values = column.to_numpy(zero_copy_only=False)
        out = np.empty(len(values), np.int64)
        n = _kept(values, valid, self.lo, self.hi, self.bits, out)
        if n > PASS_MAX * len(values):
            self.misses += 1
            return None
        return out[:n]


def for_build(node: plan.HashJoin, build: pa.RecordBatch) -> KeyFilter | None:
    """The filter of a join's built rows, where one applies."""
    if node.join_type not in _JOINS or node.build_left or not node.left_keys \
            or not 0 < build.num_rows <= BUILD_MAX:
        return None
    left, right = node.left_keys[0], node.right_keys[0]
    if node.left.fields[left].type.kind not in _INTEGERS or \
            node.right.fields[right].type.kind not in _INTEGERS:
        return None
    keys = build.column(right)
    keys = keys.drop_null() if keys.null_count else keys
    if len(keys) == 0:
        return None
    values = keys.cast(pa.int64()).to_numpy(zero_copy_only=False)
    if int(values.max()) - int(values.min()) >= BITMAP_MAX:
        return None
    return KeyFilter(values)


def probe_scan(op, node: plan.Node, column: int):
    """(the ScanOp, its output column) that column `column` of operator `op` (running
    `node`) reads unchanged, through Projects and Filters of the same slice; or None."""
    found = plan.column_source(node, column)
    if found is None or not isinstance(found[0], plan.Scan) or \
            found[0].columns[found[1]] < 0:
        return None
    scan, column = found
    while True:  # down the operators of the Projects and Filters passed
        op = getattr(op, "op", op)  # (the executor's instrumented wrapper)
        if op.node is scan:
            return op, column
        op = op.child


@numba.njit(cache=True, nogil=True)
def _set_bits(values, lo, bits):  # pragma: no cover - compiled
    for v in values:
        d = v - lo
        bits[d >> 3] |= np.uint8(1 << (d & 7))


@numba.njit(cache=True, nogil=True)
def _kept(values, valid, lo, hi, bits, out):  # pragma: no cover - compiled
    n = 0
    for i in range(values.shape[0]):
        v = np.int64(values[i])
        out[n] = i
        if lo <= v <= hi and (valid.shape[0] == 0 or valid[i]):
            d = v - lo
            n += (bits[d >> 3] >> (d & 7)) & 1
    return n
