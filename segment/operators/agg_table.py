"""Hash aggregation in one numba group table that lives across batches.

hash_agg.py's general path groups each batch with Arrow and merges the per-batch tables;
here every batch's keys are looked up in one open-addressing table (segment/kernels/
group_table.py) and the aggregates accumulate straight into per-group arrays, so a row
is hashed once and nothing is regrouped. It covers what most analytical aggregations are:
keys of integers, dates, timestamps, booleans, scaled numerics, floats and strings of
few distinct values (a dictionary-encoded column of at most SMALL_DICTIONARY values per
batch: each value gets a number of its own, kept across batches, and the indices are
mapped to those numbers in one take: TPC-H Q01's flags), and count, sum, avg over
integers, scaled numerics and floats, min/max over integer-coded types. `covers(node)` says whether a node qualifies; the operator
picks this path then (EXPLAIN ANALYZE counts `table_batches`).

It produces the same states as the general path (agg_state.py), finalized by the same
code, so both answer alike. Where the general path would spill or meets what this path
does not hold well (more hashed groups than HASH_GROUPS_MAX: keys too spread for a
direct map), the table so far is turned
into a table of states and handed to the general path, which goes on with the remaining
batches (`HashAggOp.run_general(..., seed=states)`). A PARTIAL stage over budget emits
what it holds and starts afresh instead, and one whose groups hardly repeat stops
reducing and emits each batch's groups as they come (hash_agg.py's SKIP_* rule).
A FINAL or SINGLE stage asks its budget before the table grows (`assign`'s `grow`) and,
refused, stops taking groups (`frozen`): hash_agg.py sets the rows of other groups aside
in partitions (a hybrid hash aggregation), and HASH_GROUPS_MAX does not apply to it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import expr as ex
from planner import plan
from planner.types import Kind, SqlType
from segment.kernels import group_table as gt
from segment.operators import agg_state

AK = agg_state.AggKind
# The most cells of a direct map (keys looked up without hashing; int32 group ids, so
# 32 MB), and at most DIRECT_PER_ROW cells per row seen beyond DIRECT_MIN cells: a map
# far sparser than the rows would cost more memory than hashing them.
DIRECT_MAX = 1 << 23
DIRECT_MIN = 1 << 21
DIRECT_PER_ROW = 8
# Groups a PARTIAL stage's hashed table holds before handing over (a FINAL or SINGLE
# stage's table grows while its budget allows).
HASH_GROUPS_MAX = 1 << 16
_INT_KINDS = (Kind.INT2, Kind.INT4, Kind.INT8, Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ)
_KEY_KINDS = _INT_KINDS + (Kind.BOOL, Kind.FLOAT4, Kind.FLOAT8)
# String keys only with small dictionaries: Arrow groups a dictionary-encoded column by
# its indices per batch, which looking up every distinct string of a big dictionary in a
# global one (tried: ClickBench's URLs and phrases) did not beat. A batch of a plain
# string column, or of a bigger dictionary, hands the table over to the general path.
SMALL_DICTIONARY = 1024
STRINGS_MAX = 1 << 16  # distinct strings of one key before the table hands over


def _int_coded(t: SqlType) -> bool:
    return t.kind in _INT_KINDS or t.is_scaled_int


def _summable(t: SqlType) -> bool:
    """Integers, floats and numerics of known scale: a decimal128 column is summed here
    while its unscaled values fit an int64 (`_narrowed`), as the results of arithmetic
    on scaled numerics mostly do (TPC-H Q01's price * (1 - discount) * (1 + tax))."""
    return t.is_integer or t.is_float or (t.is_numeric and t.scale is not None
                                          and not t.is_dynamic)


def covers(node: plan.Aggregate, specs: list[agg_state.AggSpec]) -> bool:
    """Whether this path computes `node` (else hash_agg.py's general path does)."""
    if not node.keys:
        return False  # one group: Arrow's vectorized sums are as fast
    for k in node.keys:
        if not (k.type.kind in _KEY_KINDS or k.type.is_scaled_int or k.type.is_string):
            return False
    for s in specs:
        if s.distinct or s.call.order:
            return False
        t = s.arg_type
        if s.kind is AK.COUNT:
            continue
        if s.kind in (AK.SUM, AK.FLOAT_SUM, AK.AVG) and _summable(t):
            continue
        if s.kind is AK.MINMAX and _int_coded(t):
            continue
        return False
    return True


# assign's question before the table takes more memory: may it hold this many bytes?
Grow = Callable[[int], bool]


class Handover(Exception):
    """The table should not go on (too many hashed groups): hand it to the general path.
    `rest`: the rows of the batch not added (None: none of it was)."""

    def __init__(self, rest: pa.RecordBatch | None = None):
        super().__init__()
        self.rest = rest


class GroupTable:
    """Groups and their accumulators, grown by doubling."""

    def __init__(self, key_types: list[SqlType], specs: list[agg_state.AggSpec]):
        self.key_types = key_types
        self.specs = specs
        self.nullable = True  # a NULL-flags column is always kept: keys may be NULL anywhere
        self.width = len(key_types) + 1
        self.n = 0
        self.cap = 0
        self.slots = np.full(gt.table_size(1), gt.EMPTY, np.int64)
        self.gkeys = np.zeros((0, self.width), np.int64)
        self.acc: list[list[np.ndarray]] = [[] for _ in specs]
        # Keys of integers, dates, booleans and dictionary ids whose ranges multiply to
        # at most DIRECT_MAX cells are looked up in an array indexed by their values
        # (DuckDB's perfect hash aggregate): no hashing, no probing. A batch that widens
        # a range re-lays the map out; past DIRECT_MAX the table hashes for good.
        self.direct = not any(t.is_float for t in key_types)
        self.los = np.zeros(len(key_types), np.int64)
        self.spans = np.zeros(len(key_types), np.int64)  # 0: no value seen yet
        self.dmap = np.empty(0, np.int32)
        self.rows = 0  # rows added so far
        self.frozen = False  # takes no more groups (assign's `grow` refused memory)
        # String keys: key position -> (number of each string seen, the strings in order).
        self.strings: dict[int, tuple[dict[str, int], list[str]]] = {
            j: ({}, []) for j, t in enumerate(key_types) if t.is_string}
        self._grow(1024)

    # --- sizes ----------------------------------------------------------------------------
    def nbytes(self) -> int:
        return self.slots.nbytes + self.dmap.nbytes + self.cap * self._per_group()

    def _per_group(self) -> int:
        return self.width * 8 + sum(a.itemsize for accs in self.acc for a in accs)

    def _nbytes_at(self, cap: int) -> int:
        """nbytes once grown to `cap` groups."""
        slots = self.slots.nbytes
        if not self.direct and self.slots.shape[0] < 2 * cap:
            slots = gt.table_size(cap) * 8
        return slots + self.dmap.nbytes + cap * self._per_group()

    def _hashing_nbytes(self) -> int:
        """nbytes once turned from a direct map into hashing."""
        return gt.table_size(self.cap) * 8 + self.cap * self._per_group()

    def _grow(self, cap: int) -> None:
        old = self.cap
        self.cap = cap
        gkeys = np.zeros((cap, self.width), np.int64)
        gkeys[:old] = self.gkeys[:old]
        self.gkeys = gkeys
        for i, s in enumerate(self.specs):
            fresh = self._accumulators(s, cap)
            for a, f in zip(self.acc[i], fresh):
                f[:old] = a[:old]
            self.acc[i] = fresh
        if not self.direct and self.slots.shape[0] < 2 * cap:
            self.slots = np.full(gt.table_size(cap), gt.EMPTY, np.int64)
            gt.rehash(self.gkeys, self.n, self.slots)

    @staticmethod
    def _accumulators(s: agg_state.AggSpec, cap: int) -> list[np.ndarray]:
        k = s.kind
        if k is AK.COUNT:
            return [np.zeros(cap, np.int64)]
        if k is AK.MINMAX:
            return [np.zeros(cap, np.int64), np.zeros(cap, np.bool_)]
        if k is AK.FLOAT_SUM or (k is AK.AVG and s.arg_type.is_float):
            out = [np.zeros(cap, np.float64), np.zeros(cap, np.bool_)]
        else:  # exact sums: low word, high word, seen
            out = [np.zeros(cap, np.uint64), np.zeros(cap, np.int64), np.zeros(cap, np.bool_)]
        if k is AK.AVG:
            out.append(np.zeros(cap, np.int64))
        return out

    # --- one batch --------------------------------------------------------------------------
    def add(self, keys: list[pa.Array], args: list[pa.Array | None]) -> None:
        """Add one batch, or raise Handover (having added none of it)."""
        args = self.narrowed(args)
        self.accumulate(self.assign(keys), args)

    def narrowed(self, args: list[pa.Array | None]) -> list[pa.Array | None]:
        """The arguments as `accumulate` takes them (decimal128 as int64), or Handover."""
        return [_narrowed(a, s.arg_type) if a is not None and pa.types.is_decimal(a.type)
                else a for a, s in zip(args, self.specs)]

    def accumulate(self, gid: np.ndarray, args: list[pa.Array | None]) -> None:
        """Add arguments (`narrowed`) to the groups `gid` of their rows."""
        for s, accs, arg in zip(self.specs, self.acc, args):
            self._accumulate(s, accs, gid, arg)

    def accumulation_ops(self) -> list[tuple[int | None, str]]:
        """Per spec, the argument it reads (its position among the specs' distinct
        arguments, `accumulation_args`) and how it accumulates, as
        codegen.compile_accumulation takes them."""
        args = self.accumulation_args()
        ops = []
        for s in self.specs:
            arg = s.call.arg
            if s.kind is AK.COUNT:
                ops.append((None, "count_rows") if arg is None else (args.index(arg), "count"))
            elif s.kind is AK.MINMAX:
                ops.append((args.index(arg), "max" if s.call.func is ex.AggFunc.MAX else "min"))
            else:
                avg = "_avg" if s.kind is AK.AVG else ""
                ops.append((args.index(arg), ("float" if s.arg_type.is_float else "exact") + avg))
        return ops

    def accumulation_args(self) -> list[ex.Expr]:
        return list(dict.fromkeys(s.call.arg for s in self.specs if s.call.arg is not None))

    def accumulators(self) -> list[np.ndarray]:
        """Every spec's arrays in order, as the compiled accumulation takes them."""
        return [a for accs in self.acc for a in accs]

    def assign(self, keys: list[pa.Array], grow: Grow | None = None) -> np.ndarray:
        """Each row's group, new groups added; or Handover, having added none.

        With `grow` (asked before the table takes more memory: its bytes after growing),
        the table grows only while `grow` allows and, once refused, takes no more groups
        (`frozen`): rows of keys that are no group then get gid EMPTY (-1), for the
        caller to set aside, and there is no HASH_GROUPS_MAX handover."""
        if grow is None and not self.direct and self.n > HASH_GROUPS_MAX:
            raise Handover
        n = len(keys[0])
        codes = np.empty((n, self.width), np.int64)
        flags = np.zeros(n, np.int64)
        nulls = []
        for j, (arr, t) in enumerate(zip(keys, self.key_types)):
            codes[:, j], null = self._encode(j, arr, t)
            nulls.append(null)
            if null is not None:
                flags |= null.astype(np.int64) << j
        codes[:, -1] = flags
        gid = np.empty(n, np.int64)
        if self.frozen:
            self._lookup(codes, 0, gid)
            return gid
        if self.direct and not self._direct_layout(codes, nulls, grow):
            if self.frozen:
                self._lookup(codes, 0, gid)
                return gid
            if grow is None and self.n > HASH_GROUPS_MAX:
                raise Handover
            if grow is not None and not grow(self._hashing_nbytes()):
                self.frozen = True
                self._lookup(codes, 0, gid)
                return gid
            self._to_hashing()
        before = self.n
        row = 0
        while True:
            if self.direct:
                row, self.n = gt.assign_direct(codes, row, self.los, self.spans,
                                               self._strides(), self.dmap, self.gkeys,
                                               self.n, gid)
            else:
                row, self.n = gt.assign(codes, row, self.slots, self.gkeys, self.n, gid)
            if row == n:
                break
            if grow is None and not self.direct and self.cap >= HASH_GROUPS_MAX:
                # forget the groups this batch began, so that none of it was added
                self.n = before
                self.slots.fill(gt.EMPTY)
                gt.rehash(self.gkeys, self.n, self.slots)
                raise Handover
            if not self._grown(grow, n - row):
                self.frozen = True
                self._lookup(codes, row, gid)
                break
        self.rows += n
        return gid

    def _grown(self, grow: Grow | None, more: int) -> bool:
        """Grow for at least one more group: four times as big while the table is small
        next to the rows still to come (fewer rehashes), else twice; False when `grow`
        allows neither."""
        for factor in (4, 2) if more > 2 * self.cap else (2,):
            if grow is None or grow(self._nbytes_at(self.cap * factor)):
                self._grow(self.cap * factor)
                return True
        return False

    def reserve(self, groups: int, grow: Grow | None) -> None:
        """Room for `groups` groups at once (a partition of known rows), where `grow`
        allows it, so that the table does not double its way up."""
        cap = 1 << max(int(groups) - 1, 1).bit_length()
        if cap > self.cap and (grow is None or grow(self._nbytes_at(cap))):
            self._grow(cap)

    def _lookup(self, codes: np.ndarray, start: int, gid: np.ndarray) -> None:
        if self.direct:
            gt.lookup_direct(codes, start, self.los, self.spans, self._strides(), self.dmap,
                             gid)
        else:
            gt.lookup(codes, start, self.slots, self.gkeys, gid)

    def _strides(self) -> np.ndarray:
        radix = self.spans + 1  # every key has one more cell, for NULL
        return np.concatenate([[1], np.cumprod(radix)[:-1]]).astype(np.int64)

    def _direct_layout(self, codes: np.ndarray, nulls: list, grow: Grow | None) -> bool:
        """Widen the direct map's ranges to this batch's keys; False when the map would
        need more cells than allowed, or (`frozen` set) more memory than `grow` allows. A range that must grow grows by at least its own
        size three times over where the cells allow, so that keys arriving in order (a table stored by its
        key) re-lay the map out a few times, not at every batch."""
        seen = self.spans > 0
        los, his = self.los.copy(), self.los + self.spans - 1
        for j, null in enumerate(nulls):
            present = codes[:, j] if null is None else codes[~null, j]
            if len(present) == 0:
                continue
            lo, hi = int(present.min()), int(present.max())
            if seen[j]:
                lo, hi = min(lo, int(los[j])), max(hi, int(his[j]))
            los[j], his[j] = lo, hi
            seen[j] = True
        spans = np.where(seen, his - los + 1, 0).astype(np.int64)
        if np.array_equal(los, self.los) and np.array_equal(spans, self.spans) \
                and len(self.dmap):
            return True
        limit = min(DIRECT_MAX, max(DIRECT_MIN, DIRECT_PER_ROW * (self.rows + len(codes))))
        if _cells(spans) > limit:
            return False
        for j in range(len(spans)):
            if self.spans[j] and spans[j] > self.spans[j]:  # room to grow into, if it fits
                wider = spans.copy()
                others = _cells(np.delete(spans, j))
                wider[j] = max(spans[j], min(4 * self.spans[j], limit // others - 1))
                if wider[j] > spans[j]:
                    if los[j] < self.los[j]:  # growing downward
                        los[j] = his[j] - wider[j] + 1
                    spans = wider
        if grow is not None and not grow(self.nbytes() - self.dmap.nbytes + 4 * _cells(spans)):
            self.frozen = True
            return False
        self.los, self.spans = los, spans
        self.dmap = np.full(_cells(self.spans), gt.EMPTY, np.int32)
        gt.direct_rebuild(self.gkeys, self.n, self.los, self.spans, self._strides(), self.dmap)
        return True

    def _to_hashing(self) -> None:
        self.direct = False
        self.dmap = np.empty(0, np.int32)
        self.slots = np.full(gt.table_size(self.cap), gt.EMPTY, np.int64)
        gt.rehash(self.gkeys, self.n, self.slots)

    def _encode(self, j: int, arr: pa.Array, t: SqlType) -> tuple[np.ndarray, np.ndarray | None]:
        """int64 codes of one key column (0 where NULL) and its NULL mask (None: none)."""
        if t.is_string:
            return self._string_codes(j, arr)
        null = _null_mask(arr)
        if t.is_float:
            v = arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False)
            v = np.where(v == 0.0, 0.0, v)         # -0.0 and 0.0: one group
            v = np.where(np.isnan(v), np.nan, v)   # every NaN: one group
            return v.view(np.int64), null
        return _int64_values(arr), null

    def _string_codes(self, j: int, arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
        """A dictionary-encoded string key as the numbers of its strings (0 where NULL),
        or Handover for a plain string column or a big dictionary. Strings new to the
        table get numbers now; that changes no group, so it may precede a Handover."""
        if not pa.types.is_dictionary(arr.type) or len(arr.dictionary) > SMALL_DICTIONARY:
            raise Handover
        numbers, seen = self.strings[j]
        mapping = np.empty(len(arr.dictionary) + 1, np.int64)  # the last: a NULL index
        mapping[-1] = -1
        for i, value in enumerate(arr.dictionary.to_pylist()):
            if value is None:
                mapping[i] = -1
                continue
            number = numbers.get(value)
            if number is None:
                if len(seen) >= STRINGS_MAX:
                    raise Handover
                number = numbers[value] = len(seen)
                seen.append(value)
            mapping[i] = number
        indices = arr.indices
        if indices.null_count:
            indices = indices.fill_null(len(arr.dictionary))
        codes = mapping[indices.to_numpy(zero_copy_only=False)]
        null = codes < 0
        if not null.any():
            return codes, None
        return np.where(null, 0, codes), null

    @staticmethod
    def _accumulate(s: agg_state.AggSpec, accs: list[np.ndarray], gid: np.ndarray,
                    arg: pa.Array | None) -> None:
        k = s.kind
        if k is AK.COUNT:
            if arg is None:
                gt.count_rows(gid, accs[0])
            else:
                null = _null_mask(arg)
                if null is None:
                    gt.count_rows(gid, accs[0])
                else:
                    gt.count_valid(gid, ~null, accs[0])
            return
        valid = _valid(arg)
        if k is AK.MINMAX:
            gt.min_max(gid, _int64_values(arg), valid, accs[0], accs[1],
                       s.call.func is ex.AggFunc.MAX)
            return
        if accs[0].dtype == np.float64:
            values = arg.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False)
            gt.sum_float(gid, values, valid, accs[0], accs[1])
        else:
            gt.sum_exact(gid, _int64_values(arg), valid, accs[0], accs[1], accs[2])
        if k is AK.AVG:
            if len(valid):
                gt.count_valid(gid, valid, accs[-1])
            else:
                gt.count_rows(gid, accs[-1])

    # --- results --------------------------------------------------------------------------
    def key_arrays(self) -> list[pa.Array]:
        n = self.n
        flags = self.gkeys[:n, -1]
        out = []
        for j, t in enumerate(self.key_types):
            null = (flags >> j) & 1 == 1
            mask = null if null.any() else None
            codes = self.gkeys[:n, j]
            if t.is_float:
                out.append(pa.array(codes.view(np.float64), mask=mask)
                           .cast(t.arrow_type()))
            elif t.is_string:
                values = pa.array(self.strings[j][1], pa.string())
                taken = values.take(pa.array(codes, mask=mask)) if len(values) else \
                    pa.nulls(n, pa.string())
                out.append(taken.cast(t.arrow_type()))
            else:
                out.append(_from_int64(codes, mask, t))
        return out

    def states(self) -> list[list[pa.Array]]:
        """Per spec, its state arrays as agg_state.py keeps them."""
        n = self.n
        out = []
        for s, accs in zip(self.specs, self.acc):
            k = s.kind
            if k is AK.COUNT:
                out.append([pa.array(accs[0][:n])])
                continue
            if k is AK.MINMAX:
                out.append([_from_int64(accs[0][:n], ~accs[1][:n], s.arg_type)])
                continue
            if accs[0].dtype == np.float64:
                total = pa.array(accs[0][:n], mask=~accs[1][:n])
            else:
                # a decimal128 argument's sums stay decimal128 at its scale, as the
                # general path keeps them (agg_state's exact states of decimals)
                wide = s.arg_type.is_numeric and not s.arg_type.is_scaled_int
                total = _exact(accs[0][:n], accs[1][:n], accs[2][:n],
                               s.arg_type.scale if wide else None)
            states = [total]
            if k is AK.AVG:
                states.append(pa.array(accs[-1][:n]))
            out.append(states)
        return out


def _cells(spans: np.ndarray) -> int:
    """Cells of a direct map over keys of these spans (one more per key, for NULL)."""
    return int(np.prod((spans + 1).astype(np.float64)))


def _exact(lo: np.ndarray, hi: np.ndarray, seen: np.ndarray,
           scale: int | None = None) -> pa.Array:
    """128-bit sums as int64 where all fit, else decimal128(38, 0); NULL where unseen.
    With a `scale`, always decimal128(38, scale) holding the unscaled sums."""
    mask = ~seen
    n = len(lo)
    if scale is None and gt.fits_int64(lo, hi, n):
        return pa.array(lo.view(np.int64), mask=mask if mask.any() else None)
    words = np.empty((n, 2), np.uint64)  # little-endian: low word first
    words[:, 0] = lo
    words[:, 1] = hi.view(np.uint64)
    validity = pa.array(~mask).buffers()[1] if mask.any() else None
    return pa.Array.from_buffers(pa.decimal128(38, scale or 0), n,
                                 [validity, pa.py_buffer(words.tobytes())])


def _narrowed(arr: pa.Array, t: SqlType) -> pa.Array:
    """A decimal128 column of type `t` as its unscaled values in int64, or Handover when
    some value does not fit one (the general path sums decimals of any size)."""
    if arr.type.scale != t.scale:
        raise Handover
    n = len(arr)
    words = np.frombuffer(arr.buffers()[1], np.int64, 2 * (arr.offset + n))[2 * arr.offset:]
    lo, hi = words[0::2], words[1::2]
    wide = hi != (lo >> 63)
    if arr.null_count:
        wide &= pc.is_valid(arr).to_numpy(zero_copy_only=False)
    if wide.any():
        raise Handover
    validity = arr.buffers()[0]
    if validity is not None and arr.offset:
        validity = pc.is_valid(arr).buffers()[1]
    return pa.Array.from_buffers(pa.int64(), n, [validity if arr.null_count else None,
                                                 pa.py_buffer(np.ascontiguousarray(lo))])


def _null_mask(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return pc.is_null(arr).to_numpy(zero_copy_only=False)


def _valid(arr: pa.Array) -> np.ndarray:
    """Validity as booleans, or an empty array when there are no NULLs."""
    if arr.null_count == 0:
        return np.empty(0, np.bool_)
    return pc.is_valid(arr).to_numpy(zero_copy_only=False)


def _int64_values(arr: pa.Array) -> np.ndarray:
    """The values of an integer-coded column as int64 (0 where NULL)."""
    t = arr.type
    if pa.types.is_date32(t):
        arr = arr.view(pa.int32())
    elif pa.types.is_timestamp(t):
        arr = arr.view(pa.int64())
    elif pa.types.is_boolean(t):
        arr = arr.cast(pa.int8())
    if arr.null_count:
        arr = arr.fill_null(0)
    values = arr.to_numpy(zero_copy_only=False)
    return values if values.dtype == np.int64 else values.astype(np.int64)


def _from_int64(codes: np.ndarray, mask: np.ndarray | None, t: SqlType) -> pa.Array:
    if mask is not None and not mask.any():
        mask = None
    target = t.arrow_type()
    if pa.types.is_date32(target):
        return pa.array(codes.astype(np.int32), mask=mask).view(target)
    if pa.types.is_timestamp(target):
        return pa.array(codes, mask=mask).view(target)
    if pa.types.is_boolean(target):
        return pa.array(codes != 0, mask=mask)
    arr = pa.array(codes, mask=mask)
    return arr if target == pa.int64() else arr.cast(target)
