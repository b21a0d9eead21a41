"""Kernels that finish aggregates bound over array_agg (planner/ordered_aggregates.py,
planner/regression_aggregates.py): each works on the lists of a batch of groups at once.

Func.LIST_FILTER(values[], keep bool[]): the elements whose `keep` is true, NULL where none
is (array_agg(x) FILTER (WHERE c), whose c rides along as a second array_agg of the same
order).

Func.LIST_DISTINCT(sorted[]): each run of equal elements once (NULLs equal, and NaN equal to
NaN as PostgreSQL sorts it), array_agg(DISTINCT x) over the array sorted by x.

Func.PERCENTILE_CONT_MULTI / PERCENTILE_DISC_MULTI(sorted[], fractions float8[] constant):
percentile_cont / percentile_disc of an array of fractions over an array sorted by the
ORDER BY with NULLs last, as PostgreSQL's percentile_*_multi_final: NULL without a non-NULL
element; else one result per fraction (NULL for a NULL fraction), 22003 for a fraction
outside [0, 1].

Func.REGR(xs float8[], ys float8[], name): regr_* / corr / covar_* of float8 pairs by
PostgreSQL's float8_regr_accum (Youngs-Cramer, pairs with a NULL skipped, overflow of finite
inputs 22003, NaN where an input is infinite) in list order, then its final function.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_pgarray as xpa
from segment.kernels import youngs_cramer as yc


def list_filter(e: Call, args: list, n: int) -> pa.Array:
    values = xpa.Parts(xa.as_array(args[0], n))
    keep_parts = xpa.Parts(xa.as_array(args[1], n))
    flat = xpa.flat(values)
    keep = np.asarray(pc.fill_null(xpa.flat(keep_parts), False), dtype=bool)
    parent = xpa.parents(values.lengths)
    lengths = np.bincount(parent[keep], minlength=n).astype(np.int64)
    return xpa.build(flat.filter(pa.array(keep)), lengths, lengths > 0,
                     e.type.elem.arrow_type())


def list_distinct(e: Call, args: list, n: int) -> pa.Array:
    arr = xa.as_array(args[0], n)
    values = xpa.Parts(arr)
    flat = xpa.flat(values)
    parent = xpa.parents(values.lengths)
    keep = np.ones(len(flat), dtype=bool)
    if len(flat) > 1:
        a, b = flat.slice(1), flat.slice(0, len(flat) - 1)
        same = np.asarray(pc.fill_null(pc.equal(a, b), False), dtype=bool)
        if pa.types.is_floating(flat.type):
            same |= np.asarray(pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False),
                               dtype=bool)
        same |= np.asarray(pc.and_(pc.is_null(a), pc.is_null(b)), dtype=bool)
        keep[1:] = ~(same & (parent[1:] == parent[:-1]))
    lengths = np.bincount(parent[keep], minlength=n).astype(np.int64)
    return xpa.build(flat.filter(pa.array(keep)), lengths, values.valid,
                     e.type.elem.arrow_type())


def percentiles(e: Call, args: list, n: int) -> pa.Array:
    parts = xpa.Parts(xa.as_array(args[0], n))
    flat = xpa.flat(parts)
    fractions = e.args[1].value
    out_t = e.type.elem.arrow_type()
    # NULLs sort last: a list's non-NULL elements are its first ones.
    valid = np.asarray(flat.is_valid(), dtype=bool) if flat.null_count else \
        np.ones(len(flat), dtype=bool)
    counts = np.bincount(xpa.parents(parts.lengths)[valid], minlength=n).astype(np.int64)
    rows = np.flatnonzero(counts > 0)
    if fractions is None or not len(rows):
        return pa.nulls(n, e.type.arrow_type())
    for f in fractions:  # checked only where there is a value, as PostgreSQL does
        if f is not None and not 0 <= f <= 1:
            raise errors.NumericOutOfRange(f"percentile value {f:g} is not between 0 and 1")
    k = len(fractions)
    starts, m = parts.starts[rows], counts[rows]
    cells = []
    for f in fractions:
        if f is None:
            cells.append(pa.nulls(len(rows), out_t))
        elif e.func is Func.PERCENTILE_DISC_MULTI:
            at = np.maximum(np.ceil(f * m).astype(np.int64), 1) - 1
            cells.append(_take(flat, starts + at, out_t))
        else:
            p = f * (m - 1).astype(np.float64)
            lo, hi = np.floor(p), np.ceil(p)
            a = np.asarray(_take(flat, starts + lo.astype(np.int64), out_t), dtype=np.float64)
            b = np.asarray(_take(flat, starts + hi.astype(np.int64), out_t), dtype=np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                # PostgreSQL interpolates only between two rows (so inf stays inf)
                v = np.where(lo == hi, a, a + (p - lo) * (b - a))
            cells.append(pa.array(v, out_t))
    if not k:
        return xpa.build(pa.array([], out_t), np.zeros(n, dtype=np.int64), counts > 0, out_t)
    # row-major: each group's k results together
    values = pa.concat_arrays(cells).take(pa.array(
        (np.arange(k, dtype=np.int64)[None, :] * len(rows)
         + np.arange(len(rows), dtype=np.int64)[:, None]).ravel()))
    lengths = np.zeros(n, dtype=np.int64)
    lengths[rows] = k
    present = np.zeros(n, dtype=bool)
    present[rows] = True
    return xpa.build(values, lengths, present, out_t)


def _take(flat: pa.Array, at: np.ndarray, t: pa.DataType) -> pa.Array:
    out = flat.take(pa.array(at, pa.int64()))
    return out if out.type == t else out.cast(t)


@numba.njit(cache=True)
def _regr_accum(offsets, xs, ys, ok):  # pragma: no cover - compiled
    n = len(offsets) - 1
    st = np.zeros((n, yc.STATE))
    overflow = False
    for g in range(n):
        for i in range(offsets[g], offsets[g + 1]):
            if ok[i]:
                overflow |= yc.accumulate(st, g, xs[i], ys[i])
    return st, overflow


def regr(e: Call, args: list, n: int) -> pa.Array:
    xs_parts = xpa.Parts(xa.as_array(args[0], n))
    ys_parts = xpa.Parts(xa.as_array(args[1], n))
    xs, ys = xpa.flat(xs_parts), xpa.flat(ys_parts)
    ok = np.asarray(pc.and_(xs.is_valid(), ys.is_valid()), dtype=bool)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(xs_parts.lengths, out=offsets[1:])
    st, overflow = _regr_accum(offsets, _floats(xs), _floats(ys), ok)
    if overflow:
        raise errors.NumericOutOfRange("value out of range: overflow")
    values, none = yc.final(e.args[2].value, st)
    return pa.array(values, pa.float64(), mask=none)


def _floats(values: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(values.cast(pa.float64()), 0.0), dtype=np.float64)


CALLS = {Func.LIST_FILTER: list_filter, Func.LIST_DISTINCT: list_distinct, Func.PERCENTILE_CONT_MULTI: percentiles,
         Func.PERCENTILE_DISC_MULTI: percentiles, Func.REGR: regr}
