"""Evaluate a WindowAgg's calls over rows sorted by (partition, order) keys that hold
whole partitions: partition and peer boundaries as numpy arrays, frames as [lo, hi) row
ranges, values by the kernels of segment/kernels/window_frames.py and Arrow takes.

Types and NULLs as PostgreSQL: count ignores NULLs (count(*) counts rows), sum and
min/max over no (non-NULL) rows are NULL, sum(int2/int4) is bigint (22003 past it),
sum(int8/numeric) exact numeric, rank numbers peers equally, lag/lead outside the
partition give the default (else NULL). Sorting and holding rows is window.py's.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner import values as values_mod
from planner import plan
from planner import window as wn
from segment.kernels import group_keys
from segment.kernels import window_frames as k
from segment.kernels import youngs_cramer as yc


def change_flags(cols: Sequence[pa.Array], n: int) -> np.ndarray:
    """flags[i]: row i starts a new group (differs from row i-1 in some column; NULLs
    equal each other, NaN equals NaN). flags[0] is True."""
    flags = np.zeros(n, dtype=np.bool_)
    if n == 0:
        return flags
    flags[0] = True
    for col in cols:
        if n < 2:
            break
        if group_keys.needs_encoding(col.type):  # arrays: equal where their bytes are
            col = group_keys.encode(col)
        a, b = col.slice(0, n - 1), col.slice(1)
        an, bn = a.is_null(), b.is_null()
        diff = pc.not_equal(a, b)
        if pa.types.is_floating(col.type):
            diff = pc.and_(diff, pc.invert(pc.and_(pc.is_nan(a), pc.is_nan(b))))
        diff = pc.if_else(pc.or_(an, bn), pc.not_equal(an, bn), diff)
        flags[1:] |= diff.to_numpy(zero_copy_only=False)
    return flags


class Window:
    """The partition, peer and frame geometry of one sorted chunk, shared by its calls."""

    def __init__(self, batch: pa.RecordBatch, node: plan.WindowAgg):
        n = self.n = batch.num_rows
        part_flags = change_flags([batch.column(i) for i in node.partition], n)
        self.part_start, self.part_end = k.group_bounds(part_flags)
        order_cols = [batch.column(key.expr.index) for key in node.order]
        self._order = list(zip(order_cols, node.order))
        self.peer_flags = part_flags | change_flags(order_cols, n) if order_cols else part_flags
        self.peer_start, self.peer_end = k.group_bounds(self.peer_flags)
        self.rows = np.arange(n, dtype=np.int64)
        self._groups = None

    def groups(self):
        """Peer groups numbered over the chunk: each row's group, each group's first row
        and end, and the first and last group of each row's partition."""
        if self._groups is None:
            gid = np.cumsum(self.peer_flags, dtype=np.int64) - 1
            gstart = np.flatnonzero(self.peer_flags).astype(np.int64)
            gend = np.append(gstart[1:], self.n).astype(np.int64)
            self._groups = (gid, gstart, gend, gid[self.part_start],
                            gid[np.maximum(self.part_end - 1, 0)])
        return self._groups

    def frame(self, f: wn.Frame) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi) of every row's frame (empty frames have lo == hi)."""
        lo = self._bound(f.start, f.start_offset, f.rows, True, f.groups)
        hi = self._bound(f.end, f.end_offset, f.rows, False, f.groups)
        return lo, np.maximum(hi, lo)

    def exclusion(self, f: wn.Frame, lo, hi):
        """A frame with EXCLUDE as two row ranges [lo, a) and [b, hi) and whether the
        current row (between them, for EXCLUDE TIES) counts too."""
        i = self.rows
        if f.exclude is wn.Exclude.CURRENT_ROW:
            elo, ehi = i, i + 1
        else:  # GROUP, TIES: the peer group
            elo, ehi = self.peer_start, self.peer_end
        a = np.clip(elo, lo, hi)
        b = np.clip(ehi, a, hi)
        keep_i = (f.exclude is wn.Exclude.TIES) & (i >= lo) & (i < hi)
        return a, b, np.asarray(keep_i, dtype=np.bool_)

    def _group_bound(self, b: wn.Bound, off: int, start: bool) -> np.ndarray:
        """GROUPS n PRECEDING / FOLLOWING: the first row of the group n before or after
        this row's (start), or the end of it (end), within the partition; before the
        partition that is its first row, past it its end (empty frames follow)."""
        gid, gstart, gend, gfirst, glast = self.groups()
        g = gid - off if b is wn.Bound.PRECEDING else gid + off
        inside = (g >= gfirst) & (g <= glast)
        gc = np.clip(g, gfirst, glast)
        outside = np.where(g < gfirst, self.part_start, self.part_end)
        return np.where(inside, gstart[gc] if start else gend[gc], outside)

    def _range_bound(self, b: wn.Bound, off, start: bool) -> np.ndarray:
        """RANGE offset PRECEDING / FOLLOWING over the one ORDER BY key: the first row
        (start) or the end (end) of the rows whose key is within `off` of this row's, by
        binary search among the partition's non-NULL keys; a NULL key's frame is its
        peers (the NULLs), as in PostgreSQL."""
        col, key = self._order[0]
        vals, exact = _range_values(col)
        isnull = ~_valid(col)
        counts = k.prefix_counts(isnull)
        nulls = counts[self.part_end] - counts[self.part_start]
        nn_lo = self.part_start + (nulls if key.nulls_first else 0)
        nn_hi = self.part_end - (0 if key.nulls_first else nulls)
        if isinstance(off, tuple):  # months: each row's own target, by the calendar
            sign = 1 if (b is wn.Bound.PRECEDING) == key.descending else -1
            targets = _add_months(vals, sign * off[0]) + sign * off[1]
            return k.range_bounds_to(vals, isnull, nn_lo, nn_hi, self.peer_start,
                                     self.peer_end, targets, key.descending, start)
        return k.range_bounds(vals, isnull, nn_lo, nn_hi, self.peer_start, self.peer_end,
                              off, key.descending, b is wn.Bound.PRECEDING, start, exact)

    def _bound(self, b: wn.Bound, off: int, rows: bool, start: bool,
               groups: bool = False) -> np.ndarray:
        i, ps, pe = self.rows, self.part_start, self.part_end
        if b is wn.Bound.UNBOUNDED_PRECEDING:
            return ps
        if b is wn.Bound.UNBOUNDED_FOLLOWING:
            return pe
        if b is wn.Bound.CURRENT_ROW:
            if rows:
                return i if start else i + 1
            return self.peer_start if start else self.peer_end
        if not rows and not groups:
            return self._range_bound(b, off, start)  # `off` in the key's units
        off = min(off, self.n + 1)  # a count of rows or groups: no farther than the chunk
        if groups:
            return self._group_bound(b, off, start)
        if b is wn.Bound.PRECEDING:
            return np.maximum(ps, i - off + (0 if start else 1))
        return np.minimum(pe, i + off + (0 if start else 1))  # FOLLOWING


def evaluate(batch: pa.RecordBatch, node: plan.WindowAgg) -> list[pa.Array]:
    """One output array per call of `node` over `batch` (sorted, whole partitions)."""
    w = Window(batch, node)
    return [_call(w, batch, c) for c in node.calls]


def _call(w: Window, batch: pa.RecordBatch, c: wn.WindowCall) -> pa.Array:
    f = wn.WindowFunc
    out_type = c.type.arrow_type()
    if c.func is f.ROW_NUMBER:
        return pa.array(w.rows - w.part_start + 1, pa.int64())
    if c.func is f.RANK:
        return pa.array(w.peer_start - w.part_start + 1, pa.int64())
    if c.func is f.DENSE_RANK:
        return pa.array(k.dense_ranks(w.peer_flags, w.part_start), pa.int64())
    if c.func is f.PERCENT_RANK:
        size = (w.part_end - w.part_start).astype(np.float64)
        rank = (w.peer_start - w.part_start).astype(np.float64)
        return pa.array(np.where(size > 1, rank / np.maximum(size - 1, 1), 0.0), pa.float64())
    if c.func is f.CUME_DIST:
        size = (w.part_end - w.part_start).astype(np.float64)
        return pa.array((w.peer_end - w.part_start) / size, pa.float64())
    if c.func is f.NTILE:
        return _ntile(w, batch, c)
    if c.func in (f.LAG, f.LEAD):
        return _shift(w, batch, c)
    lo, hi = w.frame(c.frame)
    if c.func is f.ARRAY_AGG:
        return _array_agg(w, batch, c, lo, hi, out_type)
    if c.func is f.REGR:
        return _regression(w, batch, c, lo, hi)
    if c.frame.exclude is not wn.Exclude.NO_OTHERS:
        return _excluding(w, batch, c, lo, hi, out_type)
    if c.func is f.COUNT_STAR:
        return pa.array(hi - lo, pa.int64())
    values = batch.column(c.arg)
    if c.func is f.COUNT:
        counts = k.prefix_counts(_valid(values))
        return pa.array(counts[hi] - counts[lo], pa.int64())
    if c.func in (f.FIRST_VALUE, f.LAST_VALUE, f.NTH_VALUE):
        return _nth(values, c, lo, hi, out_type, batch)
    if c.func is f.SUM:
        return _sum(values, lo, hi, out_type)
    return _extreme(values, lo, hi, w, c.func is f.MAX)


def _valid(values: pa.Array) -> np.ndarray:
    if values.null_count == 0:
        return np.ones(len(values), dtype=np.bool_)
    return values.is_valid().to_numpy(zero_copy_only=False)


def _ntile(w: Window, batch: pa.RecordBatch, c: wn.WindowCall) -> pa.Array:
    """ntile(n) as PostgreSQL's: n is read at the partition's first row, or, while it is
    NULL there (the result is NULL), at the next; from the row that has one, rows fill
    n buckets of the partition's size, the first size % n of them one row larger."""
    if c.n_col is None and c.n is None:
        return pa.nulls(w.n, pa.int32())
    if c.n_col is None:
        start = w.part_start
        buckets = np.full(w.n, c.n, np.int64)
        null = np.zeros(w.n, np.bool_)
    else:
        col = batch.column(c.n_col)
        vals = col.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        nxt = np.where(_valid(col), w.rows, w.n)
        nxt = np.minimum.accumulate(nxt[::-1])[::-1]  # the first non-NULL at or after
        start = nxt[w.part_start]       # the row of the partition whose n counts
        null = (w.rows < start) | (start >= w.part_end)
        buckets = np.where(null, 1, vals[np.minimum(start, w.n - 1)])
    if ((buckets <= 0) & ~null).any():
        raise errors.QueryError("argument of ntile must be greater than zero", "22014")
    buckets = np.maximum(buckets, 1)
    size = w.part_end - w.part_start
    r = w.rows - start
    per, extra = size // buckets, size % buckets
    big = (per + 1) * extra  # the first `extra` buckets hold one row more
    out = np.where(r < big, r // np.maximum(per + 1, 1),
                   extra + (r - big) // np.maximum(per, 1)) + 1
    return pa.array(out.astype(np.int32), pa.int32(), mask=null if null.any() else None)


def _take(values: pa.Array, idx: np.ndarray, ok: np.ndarray) -> pa.Array:
    """values[idx] where ok, NULL elsewhere."""
    if not len(idx):
        return values.slice(0, 0)
    if ok.all():
        return values.take(pa.array(idx, pa.int64()))
    return values.take(pa.array(np.where(ok, idx, 0), pa.int64(), mask=~ok))


def _n_per_row(batch: pa.RecordBatch, c: wn.WindowCall) -> tuple[np.ndarray, np.ndarray]:
    """lag/lead's offset or nth_value's n for every row (bounded to the chunk's size),
    and where it is NULL (the result is NULL there)."""
    n = batch.num_rows
    if c.n_col is None:
        return np.full(n, 0 if c.n is None else max(-n - 1, min(c.n, n + 1)), np.int64), \
            np.full(n, c.n is None)
    col = batch.column(c.n_col)
    vals = col.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.clip(vals, -n - 1, n + 1), ~_valid(col)


def _shift(w: Window, batch: pa.RecordBatch, c: wn.WindowCall) -> pa.Array:
    values = batch.column(c.arg)
    if c.n_col is None and c.n is None:
        return pa.nulls(w.n, values.type)
    off, null = _n_per_row(batch, c)
    idx = w.rows - off if c.func is wn.WindowFunc.LAG else w.rows + off
    ok = (idx >= w.part_start) & (idx < w.part_end) & ~null
    out = _take(values, idx, ok)
    if c.default is None or ok.all():
        return out
    use_default = ~ok & ~null
    if not use_default.any():
        return out
    return pc.if_else(pa.array(use_default), batch.column(c.default), out)


def _nth(values, c: wn.WindowCall, lo, hi, out_type, batch=None) -> pa.Array:
    if c.func is wn.WindowFunc.FIRST_VALUE:
        idx = lo
    elif c.func is wn.WindowFunc.LAST_VALUE:
        idx = hi - 1
    else:
        if c.n_col is None and c.n is None:
            return pa.nulls(len(lo), out_type)
        nth, null = _n_per_row(batch, c)
        if ((nth <= 0) & ~null).any():
            raise errors.QueryError("argument of nth_value must be greater than zero", "22016")
        idx = lo + nth - 1
        return _take(values, idx, (idx >= lo) & (idx < hi) & ~null)
    return _take(values, idx, (idx >= lo) & (idx < hi))


def _sum(values: pa.Array, lo, hi, out_type: pa.DataType) -> pa.Array:
    valid = _valid(values)
    counts = k.prefix_counts(valid)
    empty = (counts[hi] - counts[lo]) == 0
    mask = empty if empty.any() else None
    if pa.types.is_floating(values.type):
        v, zero = _floats(values)
        out = pa.array(k.frame_sums_float(v, valid, lo, hi, zero), mask=mask)
        return out.cast(out_type) if out_type != out.type else out
    _check_wide_sums(values, valid)
    vlo, vhi = _words(values, valid)
    slo, shi = k.frame_sums_128(vlo, vhi, lo, hi)
    if pa.types.is_integer(out_type):
        fits = shi == (slo.view(np.int64) >> 63)
        if mask is not None:
            fits |= empty
        if not fits.all():
            raise errors.NumericOutOfRange("bigint out of range")
        return pa.array(slo.view(np.int64), pa.int64(), mask=mask)
    return _from_words(slo, shi, out_type, mask)


def _extreme(values: pa.Array, lo, hi, w: Window, want_max: bool) -> pa.Array:
    valid = _valid(values)
    if len(values) == 0:
        return values
    # NULLs rank somewhere too, but `valid` keeps them out of every frame.
    codes = pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy(
        zero_copy_only=False).astype(np.int64)
    from_end = bool(len(hi)) and bool((hi == w.part_end).all()) and not bool(
        (lo == w.part_start).all())
    idx = k.frame_extremes(codes, valid, lo, hi, want_max, from_end)
    return _take(values, idx, idx >= 0)


def _pieces(w: Window, c: wn.WindowCall, lo, hi):
    """Every row's frame as [lo, a), the row itself where keep_i, then [b, hi) (without
    EXCLUDE: a == b == hi), and whether the frame excludes rows."""
    if c.frame.exclude is wn.Exclude.NO_OTHERS:
        return lo, hi, np.zeros(w.n, np.bool_), hi, hi, False
    a, b, keep_i = w.exclusion(c.frame, lo, hi)
    return lo, a, keep_i, b, hi, True


# The most values array_agg over a chunk's frames may gather: a running frame over a
# partition of n rows holds n(n+1)/2 of them.
ARRAY_AGG_MAX_VALUES = 100_000_000


def _array_agg(w: Window, batch: pa.RecordBatch, c: wn.WindowCall, lo, hi,
               out_type: pa.DataType) -> pa.Array:
    """array_agg over each row's frame, in frame order, NULL inputs kept; NULL over an
    empty frame, as PostgreSQL's."""
    lo, a, keep_i, b, hi, _ = _pieces(w, c, lo, hi)
    offsets, rows = k.frame_rows(lo, a, keep_i, b, hi)
    if len(rows) > ARRAY_AGG_MAX_VALUES:
        raise errors.QueryError(
            f"array_agg over window frames would hold {len(rows)} values, more than "
            f"{ARRAY_AGG_MAX_VALUES}", "54000")
    values = batch.column(c.arg).take(pa.array(rows, pa.int64()))
    empty = offsets[1:] == offsets[:-1]
    out = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32), pa.int32()), values,
                                   mask=pa.array(empty) if empty.any() else None)
    return out if out.type == out_type else out.cast(out_type)


def _regression(w: Window, batch: pa.RecordBatch, c: wn.WindowCall, lo, hi) -> pa.Array:
    """float8 regr_*, corr, covar_*, stddev and variance over each row's frame: the
    Youngs-Cramer sums of the pairs without a NULL, finished by `c.regression`."""
    xs, ys = batch.column(c.arg), batch.column(c.arg2)
    ok = _valid(xs) & _valid(ys)
    st, overflow = k.frame_regressions(_float8(xs), _float8(ys), ok, *_pieces(w, c, lo, hi))
    if overflow:
        raise errors.NumericOutOfRange("value out of range: overflow")
    values, none = yc.final(c.regression, st)
    return pa.array(values, pa.float64(), mask=none if none.any() else None)


def _float8(values: pa.Array) -> np.ndarray:
    return np.asarray(values.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False),
                      dtype=np.float64)


def _words(values: pa.Array, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integers, scaled numerics (int64) and decimal128 values as 128-bit two's
    complement words (low uint64, high int64); NULLs as 0."""
    if pa.types.is_decimal(values.type):
        n, off = len(values), values.offset
        raw = np.frombuffer(values.buffers()[1], dtype=np.uint64, count=2 * (off + n))[2 * off:]
        lo, hi = raw[0::2].copy(), raw[1::2].view(np.int64).copy()
        lo[~valid] = 0
        hi[~valid] = 0
        return lo, hi
    v = values.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    return v.view(np.uint64), v >> 63


def _from_words(lo: np.ndarray, hi: np.ndarray, out_type: pa.DataType,
                mask: np.ndarray | None) -> pa.Array:
    data = np.empty(2 * len(lo), dtype=np.uint64)
    data[0::2], data[1::2] = lo, hi.view(np.uint64)
    out = pa.Array.from_buffers(out_type, len(lo), [None, pa.py_buffer(data.tobytes())])
    if mask is None:
        return out
    return pc.if_else(pa.array(~mask), out, pa.scalar(None, out_type))


def _range_values(col: pa.Array) -> tuple[np.ndarray, bool]:
    """A RANGE key as numbers in the units planner/bind_window.py gives offsets in:
    int64 for integers, scaled numerics and timestamps (microseconds; dates too), float64
    for floats (exact=False)."""
    t = col.type
    if pa.types.is_floating(t):
        v = col.cast(pa.float64()).fill_null(0).to_numpy(zero_copy_only=False)
        if np.isnan(v).any():
            raise errors.FeatureNotSupported("RANGE offsets over NaN keys are not supported")
        return v, False
    if pa.types.is_date32(t):
        days = col.cast(pa.int32()).cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        return days * np.int64(86_400_000_000), True
    if pa.types.is_timestamp(t):
        col = col.cast(pa.timestamp("us", tz=t.tz))
    return col.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64), True


def _excluding(w: Window, batch: pa.RecordBatch, c: wn.WindowCall, lo, hi,
               out_type: pa.DataType) -> pa.Array:
    """A framed call whose frame has EXCLUDE: the frame's rows are [lo, a), the current
    row when `keep_i` (EXCLUDE TIES), then [b, hi), in that order (PostgreSQL restarts
    its aggregates on every row of such frames: so do the float sums here)."""
    f = wn.WindowFunc
    a, b, keep_i = w.exclusion(c.frame, lo, hi)
    i = w.rows
    sizes = (a - lo) + keep_i + (hi - b)
    if c.func is f.COUNT_STAR:
        return pa.array(sizes, pa.int64())
    values = batch.column(c.arg)
    valid = _valid(values)
    if c.func in (f.FIRST_VALUE, f.LAST_VALUE, f.NTH_VALUE):
        null = np.zeros(w.n, np.bool_)
        if c.func is f.NTH_VALUE:
            if c.n_col is None and c.n is None:
                return pa.nulls(w.n, out_type)
            nth, null = _n_per_row(batch, c)
            if ((nth <= 0) & ~null).any():
                raise errors.QueryError("argument of nth_value must be greater than zero",
                                        "22016")
            pos = nth - 1
        else:
            pos = np.zeros(w.n, np.int64) if c.func is f.FIRST_VALUE else sizes - 1
        first = a - lo
        idx = np.where(pos < first, lo + pos, np.where(
            keep_i & (pos == first), i, b + pos - first - keep_i))
        return _take(values, idx, (pos >= 0) & (pos < sizes) & ~null)
    counts = k.prefix_counts(valid)
    n_valid = (counts[a] - counts[lo]) + (counts[hi] - counts[b]) + (keep_i & valid)
    if c.func is f.COUNT:
        return pa.array(n_valid, pa.int64())
    if c.func in (f.MIN, f.MAX):
        if not len(values):
            return values
        codes = pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy(
            zero_copy_only=False).astype(np.int64)
        idx = k.excluded_extremes(codes, valid, lo, a, b, hi, keep_i, c.func is f.MAX)
        return _take(values, idx, idx >= 0)
    empty = n_valid == 0
    mask = empty if empty.any() else None
    if pa.types.is_floating(values.type):
        v, zero = _floats(values)
        out = pa.array(k.excluded_float_sums(v, valid, lo, a, b, hi, keep_i, zero), mask=mask)
        return out.cast(out_type) if out_type != out.type else out
    _check_wide_sums(values, valid)
    vlo, vhi = _words(values, valid)
    lo1, hi1 = k.frame_sums_128(vlo, vhi, lo, a)
    lo2, hi2 = k.frame_sums_128(vlo, vhi, b, hi)
    slo, shi = _add128(lo1, hi1, lo2, hi2)
    slo, shi = _add128(slo, shi, np.where(keep_i, vlo, 0).astype(np.uint64),
                       np.where(keep_i, vhi, 0).astype(np.int64))
    if pa.types.is_integer(out_type):
        fits = (shi == (slo.view(np.int64) >> 63)) | empty
        if not fits.all():
            raise errors.NumericOutOfRange("bigint out of range")
        return pa.array(slo.view(np.int64), pa.int64(), mask=mask)
    return _from_words(slo, shi, out_type, mask)


def _add128(lo1, hi1, lo2, hi2):
    lo = lo1 + lo2  # wraps in uint64; the carry goes to the high word
    carry = (lo < lo1).astype(np.int64)
    return lo, hi1 + hi2 + carry


def _floats(values: pa.Array) -> tuple[np.ndarray, np.floating]:
    """Float values (NULLs as 0) in their own precision, and the zero to sum from."""
    dtype = np.float32 if pa.types.is_float32(values.type) else np.float64
    v = values.fill_null(0).to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return v, dtype(0)


_DECIMAL_MAX = 10 ** 38


def _check_wide_sums(values: pa.Array, valid: np.ndarray) -> None:
    """128-bit sums are exact while no frame's sum leaves numeric(38): certain for
    int64 values (2**64 rows would be needed), and checked for decimal128 ones, whose
    sums could wrap, with Python integers when the chunk could reach it at all."""
    if not pa.types.is_decimal(values.type) or not len(values):
        return
    top = pc.max(pc.abs(values)).as_py()
    if top is None or int(top.scaleb(values.type.scale, values_mod.DEC)) * int(valid.sum()) \
            < _DECIMAL_MAX:
        return
    unscaled = [0 if v is None else int(v.scaleb(values.type.scale, values_mod.DEC))
                for v in values.to_pylist()]
    prefix = np.cumsum(np.array([0] + unscaled, dtype=object))
    if max(abs(prefix.max()), abs(prefix.min())) * 2 >= _DECIMAL_MAX:
        raise errors.NumericOutOfRange("numeric field overflow")


_DAY_US = 86_400_000_000


def _add_months(micros: np.ndarray, months: int) -> np.ndarray:
    """Timestamps (microseconds) moved by whole months as PostgreSQL's timestamp +
    interval does: the day of month is kept, or clamped to the new month's last day."""
    days, tod = np.divmod(micros, _DAY_US)
    d = days.astype("datetime64[D]")
    m = d.astype("datetime64[M]")
    dom = (d - m.astype("datetime64[D]")).astype(np.int64)
    nm = m + np.timedelta64(months, "M")
    length = ((nm + np.timedelta64(1, "M")).astype("datetime64[D]")
              - nm.astype("datetime64[D]")).astype(np.int64)
    nd = nm.astype("datetime64[D]").astype(np.int64) + np.minimum(dom, length - 1)
    return nd * _DAY_US + tod
