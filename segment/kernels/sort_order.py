"""Row order by SQL sort keys over key arrays already evaluated: each key has its own
direction and NULLS FIRST/LAST (Arrow's per-key null placement). Arrow sorts NaN next to
the nulls, while SQL orders NaN above every number; where the two disagree (ASC NULLS
FIRST, DESC NULLS LAST) an auxiliary is-NaN key goes first. Text sorts by bytes, as
DESIGN.md asks. Integer-like keys that fit 64 bits together with the row number take a
faster path (`_packed_order`). Arrays, jsonb and intervals sort by binary sort keys
(`prepared`).
segment/operators/ordering.py evaluates the keys of a batch; Sort, Gather Merge and the
in-array sort of array_agg's ORDER BY (expr_list_sort.py) order by them here.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import plan
from planner.types import Kind, SqlType
from segment.kernels import expr_json, interval_order, numeric_dscale
from segment.kernels.expr_pgarray import sort_key


def prepared(v: pa.Array, t: SqlType) -> pa.Array:
    """A key column as it sorts: arrays as PostgreSQL orders them, jsonb in its btree
    order and intervals by their span (a month 30 days), each by a binary key; a padded
    bpchar without its trailing spaces."""
    if pa.types.is_list(v.type):
        return sort_key(v)
    if v.type == pa.month_day_nano_interval():
        return interval_order.order_key(v)
    if t.is_dynamic:  # by value: the display scale does not order
        return numeric_dscale.value_of(v)
    if t.kind is Kind.JSONB:  # (planner/json_values.sort_key)
        return expr_json.sort_keys(v)
    if t.padded:  # bpchar orders without its trailing spaces (types.BPCHAR_PADDED)
        if pa.types.is_dictionary(v.type):  # a Top-K keeps strings encoded
            v = v.cast(v.type.value_type)
        return pc.utf8_rtrim(v, characters=" ")
    return v


def _sort_table(arrays: Sequence[pa.Array | pa.ChunkedArray],
                keys: Sequence[plan.SortKey]) -> tuple[pa.Table, list[tuple[str, str, str]]]:
    cols: dict[str, pa.Array] = {}
    spec: list[tuple[str, str, str]] = []
    for i, (arr, k) in enumerate(zip(arrays, keys)):
        order = "descending" if k.descending else "ascending"
        nulls = "at_start" if k.nulls_first else "at_end"
        if pa.types.is_floating(arr.type) and k.nulls_first != k.descending \
                and pc.any(pc.is_nan(arr)).as_py():
            cols[f"n{i}"] = pc.is_nan(arr)
            spec.append((f"n{i}", order, nulls))
        cols[f"k{i}"] = arr
        spec.append((f"k{i}", order, nulls))
    return pa.table(cols), spec


def sort_indices(arrays: Sequence[pa.Array | pa.ChunkedArray],
                 keys: Sequence[plan.SortKey]) -> pa.Array:
    """Indices that put rows in the order of `keys`; `arrays` are the key values."""
    packed = _packed_order(arrays, keys)
    if packed is not None:
        return pa.array(packed)
    table, spec = _sort_table(arrays, keys)
    return pc.sort_indices(table, sort_keys=spec)


def _packed_order(arrays, keys) -> np.ndarray | None:
    """The order by integer-like keys (ints, dates, timestamps, bools) whose value ranges,
    null flags and the row number fit one uint64 together: each row becomes one packed
    word and numpy's SIMD sort of plain integers does the rest, several times faster than
    a comparison sort of rows. None when the keys do not fit."""
    n = len(arrays[0]) if arrays else 0
    if n < 2:
        return np.arange(n, dtype=np.int64) if arrays else None
    total = (n - 1).bit_length()
    parts = []
    for arr, k in zip(arrays, keys):
        t = arr.type
        if pa.types.is_integer(t) or pa.types.is_boolean(t):
            vals = arr.cast(pa.int64())
        elif pa.types.is_date32(t):
            vals = arr.cast(pa.int32()).cast(pa.int64())
        elif pa.types.is_timestamp(t) or pa.types.is_date64(t):
            vals = arr.cast(pa.int64())
        else:
            return None
        mm = pc.min_max(vals).as_py()
        lo, hi = mm["min"], mm["max"]
        nulls = vals.null_count > 0
        if lo is None:  # every value NULL
            lo = hi = 0
        bits = (hi - lo).bit_length()
        total += bits + nulls
        if total > 64:
            return None
        parts.append((vals, lo, hi, bits, nulls, k))
    # In-place arithmetic: fresh 8-byte-per-row arrays cost more than the sort itself.
    packed = None
    for vals, lo, hi, bits, nulls, k in parts:
        if nulls:
            vals_np = vals.fill_null(lo).to_numpy(zero_copy_only=False)
        else:
            vals_np = vals.to_numpy(zero_copy_only=False)
        field = vals_np.astype(np.int64, copy=True)
        field -= np.int64(lo)
        field = field.view(np.uint64)  # 0 .. hi - lo
        if k.descending:
            np.subtract(np.uint64(hi - lo), field, out=field)
        if nulls:
            flag = vals.is_null().to_numpy(zero_copy_only=False) != k.nulls_first  # 0 first
            field |= flag.astype(np.uint64) << np.uint64(bits)
        if packed is None:
            packed = field
        else:
            packed <<= np.uint64(bits + nulls)
            packed |= field
    idx_bits = (n - 1).bit_length()
    packed <<= np.uint64(idx_bits)
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    packed &= np.uint64((1 << idx_bits) - 1)
    return packed.view(np.int64)


def top_k_indices(arrays: Sequence[pa.Array | pa.ChunkedArray],
                  keys: Sequence[plan.SortKey], k: int) -> pa.Array:
    """Indices of the first k rows in the order of `keys`, in that order."""
    candidates = _candidates(arrays, keys, k)
    if candidates is not None and 2 * len(candidates) <= len(arrays[0]):
        idx = _top_k([a.take(candidates) for a in arrays], keys, k)
        return candidates.take(idx)
    # (a bound that drops under half the rows, many ties at it: not worth the take)
    return _top_k(arrays, keys, k)


def _top_k(arrays, keys, k: int) -> pa.Array:
    table, spec = _sort_table(arrays, keys)
    if k >= table.num_rows:
        return pc.sort_indices(table, sort_keys=spec)
    return pc.select_k_unstable(table, k, sort_keys=spec)


# A top-K over at least this many rows first drops the rows a sample proves are not among
# them; the sample has SAMPLE_PER_ROW rows per row kept (at least MIN_SAMPLE).
PREFILTER_ROWS = 1 << 15
SAMPLE_PER_ROW = 64
MIN_SAMPLE = 4096


def _candidates(arrays, keys, k: int) -> pa.Array | None:
    """Indices of the rows whose first key is not worse than a bound, or None when the
    shortcut does not apply. Arrow's select_k costs about 8 ns a row (a top 10 of 1M
    rows: 8 ms); comparing the first key with a bound costs 0.4 ns. The bound is the
    k-th best first key of an evenly spaced sample: k real rows are at least that good,
    so a row strictly worse is beaten by k rows under every later key too, and goes.
    Integer-like first keys only (ints, dates, timestamps: no NaN, one byte order), and
    NULLs only where they sort last (then they are worse than any bound)."""
    n = len(arrays[0]) if arrays else 0
    first, key = arrays[0] if arrays else None, keys[0] if keys else None
    if n < PREFILTER_ROWS or k <= 0 or not isinstance(first, pa.Array):
        return None
    t = first.type
    if pa.types.is_integer(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t):
        width = pa.int32() if pa.types.is_date32(t) else (
            pa.int64() if pa.types.is_timestamp(t) else t)
    else:
        return None
    if first.null_count and key.nulls_first:
        return None
    sample_rows = max(SAMPLE_PER_ROW * k, MIN_SAMPLE)
    if sample_rows * 2 > n:
        return None
    values = first.view(width)
    step = n // sample_rows
    sample = values.take(pa.array(np.arange(0, n, step, dtype=np.int64))).drop_null()
    if len(sample) < k:
        return None
    order = "descending" if key.descending else "ascending"
    bound = sample.take(pc.select_k_unstable(sample, k, sort_keys=[("", order)])[k - 1:])[0]
    keep = (pc.greater_equal if key.descending else pc.less_equal)(values, bound)
    return pc.indices_nonzero(keep.fill_null(False))
