"""'infinity' and '-infinity' of date, timestamp and timestamptz in batches.

They are the extreme integers of the physical layout, as in PostgreSQL's binary format:
date32 2**31 - 1 and -2**31 days, timestamp int64 2**63 - 1 and -2**63 microseconds
(planner/temporal.py INFINITE_DAYS / INFINITE_MICROS). No finite value reaches them, so
comparisons, ORDER BY, min/max, grouping, joins and the distribution hash need nothing
more. Kernels that compute with the values (casts, arithmetic, EXTRACT, date_trunc, text
output) find the infinite rows here (`infinities`), compute over the rest with the
infinite rows set to 0 (`finite`), and put infinities back where PostgreSQL keeps them
(`put`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import temporal
from planner.types import SqlType
from segment.kernels import expr_arrays as xa


def _physical(t: pa.DataType):
    """(numpy dtype, Arrow integer type, (+inf, -inf)) of a date32 or timestamp type, or
    None for other types."""
    if pa.types.is_date32(t):
        return np.int32, pa.int32(), temporal.INFINITE_DAYS
    if pa.types.is_timestamp(t):
        return np.int64, pa.int64(), temporal.INFINITE_MICROS
    return None


def infinities(arr) -> tuple[np.ndarray, np.ndarray] | None:
    """(is +infinity, is -infinity) per row of a date or timestamp array (NULL rows are
    neither); None when no row is infinite (or the type has no infinity)."""
    if isinstance(arr, pa.Scalar) or isinstance(arr, pa.ChunkedArray):
        arr = xa.as_array(arr, 1) if isinstance(arr, pa.Scalar) else arr.combine_chunks()
    phys = _physical(arr.type)
    if phys is None or len(arr) == 0:
        return None
    dtype, _, (plus, minus) = phys
    v = xa.np_view(arr, dtype)
    pos, neg = v == plus, v == minus
    if not (pos.any() or neg.any()):
        return None
    valid = xa.valid_mask(arr)
    if valid is not None:
        pos, neg = pos & valid, neg & valid
    return pos, neg


def finite(d: xa.Datum, inf) -> xa.Datum:
    """d with its infinite rows (`inf` from `infinities`) set to the epoch."""
    if inf is None:
        return d
    if isinstance(d, pa.Scalar):
        return pa.scalar(0, _physical(d.type)[1]).cast(d.type)
    arr = d
    zero = pa.scalar(0, _physical(arr.type)[1]).cast(arr.type)
    return pc.if_else(pa.array(inf[0] | inf[1]), zero, arr)


def put(arr: pa.Array, inf) -> pa.Array:
    """arr (a date or timestamp array) with +/-infinity at the rows of `inf`."""
    if inf is None:
        return arr
    dtype, itype, (plus, minus) = _physical(arr.type)
    pos, neg = (np.broadcast_to(m, (len(arr),)) for m in inf)
    v = np.array(xa.np_view(arr, dtype), copy=True)
    v[pos], v[neg] = plus, minus
    valid = xa.valid_mask(arr)
    if valid is not None:
        valid = valid | pos | neg
    return xa.from_numpy(v, arr.type, valid)


def with_infinities(values: list, t: SqlType) -> pa.Array:
    """Python values of a date or timestamp type (planner.temporal.Infinite among them)
    as an array of t's layout."""
    at = t.arrow_type()
    finite_values = pa.array([None if isinstance(v, temporal.Infinite) else v
                              for v in values], at)
    pos = np.array([isinstance(v, temporal.Infinite) and v.sign > 0 for v in values])
    neg = np.array([isinstance(v, temporal.Infinite) and v.sign < 0 for v in values])
    return put(finite_values, (pos, neg))


def text(arr: pa.Array, formatted) -> pa.Array:
    """`formatted(finite rows)` with 'infinity' / '-infinity' at the infinite rows."""
    inf = infinities(arr)
    out = formatted(finite(arr, inf))
    if inf is None:
        return out
    return pc.if_else(pa.array(inf[0]), "infinity",
                      pc.if_else(pa.array(inf[1]), "-infinity", out))


def without(arr: pa.Array, inf) -> pa.Array:
    """arr with NULL at the rows of `inf` (where PostgreSQL's result is NULL)."""
    if inf is None:
        return arr
    keep = np.broadcast_to(~(inf[0] | inf[1]), (len(arr),))
    return pc.if_else(pa.array(keep), arr, pa.scalar(None, arr.type))


def isfinite(arr: pa.Array) -> pa.Array:
    """isfinite(): false at +/-infinity, NULL where arr is NULL, true elsewhere."""
    inf = infinities(arr)
    flags = np.ones(len(arr), bool) if inf is None else ~(inf[0] | inf[1])
    valid = xa.valid_mask(arr)
    return pa.array(flags, pa.bool_(), mask=None if valid is None else ~valid)


def cast(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """A cast between date, timestamp and timestamptz that keeps +/-infinity."""
    inf = infinities(arr)
    return put(pc.cast(finite(arr, inf), target), inf)
