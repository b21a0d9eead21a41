"""log / log10 of float8, div, factorial, width_bucket and random() over batches, with
PostgreSQL's errors (planner/math_rules.py types them).

random() draws from one generator per segment process, seeded from the OS: every
evaluation gives new values, a different one per row. A call bound after setseed()
carries a seed and a number: its values come from a generator of that seed and the
process (each segment draws its own sequence), kept by the call's number so that the
batches of one run continue it; repeatable while the session's segments live.
"""

from __future__ import annotations

import collections
import math
import os
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, numeric_math, types
from planner.temporal import TEMPORAL
from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_datetime as xd
from segment.kernels import expr_numeric as xn
from segment.kernels import numeric_dscale as nd

_RNG = np.random.default_rng()
_SEEDED: collections.OrderedDict[int, np.random.Generator] = collections.OrderedDict()
_SEEDED_KEPT = 64  # generators of recent seeded calls, by call number
# factorial(n) for every n whose value fits a raympp numeric (38 digits): 0! .. 33!
_FACTORIALS = pa.array([Decimal(math.factorial(k)) for k in range(34)], pa.decimal128(38, 0))


def log10(e: Call, args: list, n: int) -> xa.Datum:
    """log(float8) and log10(float8): base 10, 2201E for zero and negative numbers."""
    x = args[0]
    if bool(pc.any(pc.equal(x, 0.0)).as_py()):
        raise errors.QueryError("cannot take logarithm of zero", "2201E")
    if bool(pc.any(pc.less(x, 0.0)).as_py()):
        raise errors.QueryError("cannot take logarithm of a negative number", "2201E")
    return pc.log10(x)


def div(e: Call, args: list, n: int) -> xa.Datum:
    """div(a, b) of numerics: the quotient truncated toward zero (scale 0)."""
    a, b = (xn.to_num(x, arg.type) for x, arg in zip(args, e.args))
    s = max(a.scale, b.scale)
    q = xn.divide_ints(xn.upscale(a, s), xn.upscale(b, s), xn.MODE_TRUNC, 0)
    return xn.to_array(q, e.type, n)


def min_scale(e: Call, args: list, n: int) -> xa.Datum:
    """min_scale(numeric): the fewest decimal places that hold each value exactly, counted
    as the places at which truncating changes it (one vectorized pass per place)."""
    a = xn.to_num(args[0], e.args[0].type)
    out = np.zeros(n, dtype=np.int32)
    for k in range(a.scale):
        exact = xa.as_array(xn.compare(Func.EQ, xn.round_to(a, k, Func.TRUNC), a), n)
        out += ~np.asarray(exact.fill_null(True), dtype=bool)
    valid = np.asarray(xa.as_array(args[0], n).is_valid(), dtype=bool)
    return pa.array(out, pa.int32(), mask=~valid)


def factorial(e: Call, args: list, n: int) -> xa.Datum:
    """factorial(int8): 22003 for a negative argument, and beyond 33! (more digits than
    a raympp numeric holds; PostgreSQL's limit is 32177!)."""
    k, valid = xa.filled(args[0], n, np.int64)
    if (valid & (k < 0)).any():
        raise errors.NumericOutOfRange("factorial of a negative number is undefined")
    if (valid & (k >= len(_FACTORIALS))).any():
        raise errors.NumericOutOfRange("value overflows numeric format",
                                       detail="raympp numerics hold at most 38 digits")
    idx = pa.array(np.where(valid, k, 0), pa.int64(), mask=~valid)
    out = _FACTORIALS.take(idx)
    return out if out.type == e.type.arrow_type() else xn.to_array(
        xn.to_num(out, types.numeric(None, 0)), e.type, n)


def _bucket_errors(count, valid_count, low_eq_high) -> None:
    if (valid_count & (count <= 0)).any():
        raise errors.QueryError("count must be greater than zero", "2201G")
    if low_eq_high.any():
        raise errors.QueryError("lower bound cannot equal upper bound", "2201G")


def width_bucket(e: Call, args: list, n: int) -> xa.Datum:
    """width_bucket(op, low, high, count): 0 below the range, count + 1 at or above it,
    else the 1-based equal-width bucket (PostgreSQL 15's width_bucket_float8 and the
    exact numeric computation of compute_bucket)."""
    if len(args) == 2:
        return _width_bucket_array(e, args, n)
    count, vc = xa.filled(args[3], n, np.int64)
    if e.args[0].type.is_float:
        (op, vo), (lo, vl), (hi, vh) = (xa.filled(a, n, np.float64) for a in args[:3])
        valid = vo & vl & vh & vc
        if (valid & (np.isnan(op) | np.isnan(lo) | np.isnan(hi))).any():
            raise errors.QueryError("operand, lower bound, and upper bound cannot be NaN",
                                    "2201G")
        if (valid & ~(np.isfinite(lo) & np.isfinite(hi))).any():
            raise errors.QueryError("lower and upper bounds must be finite", "2201G")
        _bucket_errors(count, vc, valid & (lo == hi))
        with np.errstate(all="ignore"):
            up = lo < hi
            inside = np.where(up, (op >= lo) & (op < hi), (op <= lo) & (op > hi))
            above = np.where(up, op >= hi, op <= hi)
            frac = np.where(up, count * (op - lo) / np.where(hi != lo, hi - lo, 1.0),
                            count * (lo - op) / np.where(hi != lo, lo - hi, 1.0))
            inner = np.where(inside, np.trunc(frac) + 1, 0).astype(np.int64)
    else:
        nums = [xn.to_num(a, t.type) for a, t in zip(args[:3], e.args[:3])]
        s = max(x.scale for x in nums)
        (op, vo), (lo, vl), (hi, vh) = (xn.wide_values(xn.upscale(x, s), n) for x in nums)
        valid = vo & vl & vh & vc
        _bucket_errors(count, vc, valid & (lo == hi))
        up = lo < hi
        inside = np.where(up, (op >= lo) & (op < hi), (op <= lo) & (op > hi)) & valid
        num = np.where(inside, np.where(up, op - lo, lo - op) * count.astype(object), 0)
        den = np.where(inside, np.where(up, hi - lo, lo - hi), 1)
        inner = np.where(inside, num // den + 1, 0).astype(np.int64)
        above = np.where(up, op >= hi, op <= hi)
    above = above & valid
    if (above & (count == 2**31 - 1)).any():
        raise errors.NumericOutOfRange("integer out of range")
    out = np.where(above, count + 1, inner)
    return xa.from_numpy(out.astype(np.int32), pa.int32(), valid)


def _comparable(d: xa.Datum, t: types.SqlType, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Values that numpy compares as the SQL type orders them (numerics as their integers
    at the type's scale, timestamps as microseconds, text as Python strings), and
    validity."""
    if t.is_float:
        return xa.filled(d, n, np.float64)
    if t.is_numeric:
        return xn.wide_values(xn.to_num(d, t), n)
    if t.kind in TEMPORAL:
        values, valid = xd.micros_of(d, n)
        return np.broadcast_to(values, (n,)), np.ones(n, bool) if valid is None else valid
    if t.is_string:  # code point order is UTF-8's byte order: the C collation's
        arr = xa.as_array(d, n)
        valid = xa.valid_mask(arr)
        return (np.array(arr.fill_null("").to_pylist(), dtype=object),
                np.ones(n, bool) if valid is None else valid)
    return xa.filled(d, n, np.int64)


def _less(a: np.ndarray, b: np.ndarray, t: types.SqlType) -> np.ndarray:
    """a < b, NaN above every other float as PostgreSQL orders them."""
    if t.is_float:
        return (~np.isnan(a) & np.isnan(b)) | (a < b)
    return (a < b).astype(bool)


def _width_bucket_array(e: Call, args: list, n: int) -> pa.Array:
    """width_bucket(op, thresholds): PostgreSQL's binary search for the first threshold
    above op (the count of those not above it, for sorted thresholds), row by row in
    lockstep; 22004 for a NULL threshold."""
    t = e.args[0].type
    lists = xa.as_array(args[1], n)
    values = lists.values
    offsets = np.asarray(lists.offsets, np.int64)
    op, vo = _comparable(args[0], t, n)
    valid = vo & pc.is_valid(lists).to_numpy(zero_copy_only=False)
    lengths = np.where(valid, offsets[1:] - offsets[:-1], 0)
    if values.null_count:  # only rows it is called for: a NULL operand is not
        nulls = np.concatenate([[0], np.cumsum(pc.is_null(values).to_numpy(
            zero_copy_only=False))])
        if (valid & (nulls[offsets[1:]] > nulls[offsets[:-1]])).any():
            raise errors.QueryError("thresholds array must not contain NULLs", "22004")
    vals, _ = _comparable(values, t, len(values)) if len(values) else (np.zeros(0), None)
    left, right = np.zeros(n, np.int64), lengths.astype(np.int64)
    while True:
        active = left < right
        if not active.any():
            break
        mid = (left + right) // 2
        probe = vals[np.where(active, offsets[:-1] + mid, 0)]
        below = _less(op, probe, t) & active
        right = np.where(below, mid, right)
        left = np.where(active & ~below, mid + 1, left)
    return xa.from_numpy(left.astype(np.int32), pa.int32(), valid)


def random(n: int, seeded: tuple[int, int] | None = None) -> pa.Array:
    """n values uniformly in [0, 1): the next ones of the seeded call's (seed, number)
    sequence in this process, or fresh ones."""
    rng = _RNG
    if seeded is not None:
        seed, call = seeded
        rng = _SEEDED.pop(call, None) or np.random.default_rng([seed, os.getpid()])
        _SEEDED[call] = rng
        while len(_SEEDED) > _SEEDED_KEPT:
            _SEEDED.popitem(last=False)
    return pa.array(rng.random(n), pa.float64())


def numeric_root(e: Call, args: list, n: int) -> xa.Datum:
    """Func.NUMERIC_ROOT: each value's exact square root at the type's scale, once per
    distinct value (it runs over an aggregate's groups: stddev of numerics)."""
    scale = e.type.scale
    x = args[0]
    arrow = x.type
    if e.type.is_dynamic:  # each value's root at its own display scale
        x = xa.as_array(x, n)
        value, dscale = nd.parts(x)
        roots = [None if v is None else numeric_math.fixed_sqrt(v, int(d))
                 for v, d in zip(value.to_pylist(), dscale)]
        return nd.build(pa.array(roots, value.type), dscale, scale)
    if pa.types.is_decimal(arrow):
        return xa.per_distinct(lambda v: numeric_math.fixed_sqrt(v, scale), [x], n, arrow)
    # scaled int64: the unscaled integers in, the unscaled root out
    return xa.per_distinct(
        lambda v: int(numeric_math.fixed_sqrt(Decimal(v).scaleb(-scale), scale).scaleb(scale)),
        [x], n, arrow)
