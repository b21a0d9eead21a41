"""Exact numeric arithmetic over scaled integers, as PostgreSQL's numeric computes it.

numeric(p <= 18, s) columns are int64 holding value * 10^s; wider ones are decimal128(38, s).
Every operation first works on int64 (pyarrow's checked kernels, numba for division and
rounding); when a value does not fit int64 the whole batch is recomputed on Python ints in
numpy object arrays ("wide"), which is exact and only pays off for the rare overflowing
batch. Results are written in the layout of the node's declared type; precision is checked
only where a typmod can be exceeded (casts), because the binder sized every other result.
Division rounds half away from zero at the result scale, as numeric division does.
"""

from __future__ import annotations

from decimal import Decimal

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner.expr import Func
from planner.functions import DEC
from planner.types import SqlType
from segment.kernels import expr_arrays as xa

INT64_MAX = 2**63 - 1
MODE_TRUNC, MODE_HALF_AWAY, MODE_FLOOR, MODE_CEIL, MODE_MOD = 0, 1, 2, 3, 4
_MODE_FUNCS = {Func.ROUND: MODE_HALF_AWAY, Func.TRUNC: MODE_TRUNC, Func.FLOOR: MODE_FLOOR,
               Func.CEIL: MODE_CEIL}


class Num:
    """A numeric datum as integers at `scale`: `fast` (pyarrow int64 Array or Scalar), or
    `wide` (numpy object array of Python ints, length 1 or n) with its `valid` mask."""

    __slots__ = ("fast", "wide", "valid", "scale")

    def __init__(self, fast=None, wide=None, valid=None, scale=0):
        self.fast, self.wide, self.valid, self.scale = fast, wide, valid, scale


class _Overflow(Exception):
    """An int64 intermediate overflowed: redo the batch on Python ints."""


@numba.njit(cache=True, nogil=True)
def _divide(a, b, valid, mode):  # pragma: no cover - compiled
    """a / b per row with the rounding `mode` (or the remainder for MODE_MOD). a and b have
    length n or 1. Returns (out, status): 1 division by zero, 2 overflow."""
    n = valid.shape[0]
    out = np.zeros(n, np.int64)
    for i in range(n):
        if not valid[i]:
            continue
        x = a[i] if a.shape[0] > 1 else a[0]
        y = b[i] if b.shape[0] > 1 else b[0]
        if y == 0:
            return out, 1
        if y == -1:
            if x == -9223372036854775807 - 1:
                if mode == 4:
                    continue
                return out, 2
            out[i] = 0 if mode == 4 else -x
            continue
        q = x // y  # floor division; the remainder takes the divisor's sign
        r = x - q * y
        neg = (x < 0) != (y < 0)
        if r != 0 and neg:  # truncate toward zero instead
            q += 1
            r -= y
        if mode == 4:
            out[i] = r
            continue
        if r != 0:
            ar = -r if r < 0 else r
            ay = -y if y < 0 else y
            if mode == 1 and ar >= ay - ar:
                q = q - 1 if neg else q + 1
            elif mode == 2 and neg:
                q -= 1
            elif mode == 3 and not neg:
                q += 1
        out[i] = q
    return out, 0


def _trunc_div(x: int, y: int) -> tuple[int, int]:
    q = abs(x) // abs(y)
    q = q if (x < 0) == (y < 0) else -q
    return q, x - q * y


def _py_divide(x: int, y: int, mode: int) -> int:
    q, r = _trunc_div(x, y)
    if mode == MODE_MOD:
        return r
    if r:
        neg = (x < 0) != (y < 0)
        if (mode == MODE_HALF_AWAY and 2 * abs(r) >= abs(y)) or (mode == MODE_FLOOR and neg) or (
                mode == MODE_CEIL and not neg):
            q += -1 if neg else 1
    return q


_py_divide_u = np.frompyfunc(_py_divide, 3, 1)


# --- conversions ---------------------------------------------------------------------------
def to_num(d: xa.Datum, t: SqlType) -> Num:
    """The integers at t's scale of an int, scaled-int64 or decimal128 datum."""
    scale = t.scale if t.is_numeric else 0
    if isinstance(d, pa.Scalar):
        v = d.as_py()
        if v is None:
            return Num(pa.scalar(None, pa.int64()), scale=scale)
        iv = int(DEC.scaleb(v, scale)) if isinstance(v, Decimal) else int(v)
        if -INT64_MAX - 1 <= iv <= INT64_MAX:
            return Num(pa.scalar(iv, pa.int64()), scale=scale)
        return Num(None, np.array([iv], dtype=object), None, scale)
    if pa.types.is_decimal(d.type):
        words = xa.np_view(d, np.int64).reshape(-1, 2)
        lo, hi = words[:, 0], words[:, 1]
        valid = xa.valid_mask(d)
        fits = hi == (lo >> 63)
        if fits.all() or (valid is not None and (fits | ~valid).all()):
            data = pa.py_buffer(np.ascontiguousarray(lo))
            return Num(pa.Array.from_buffers(pa.int64(), len(d), [xa.validity_buffer(d), data],
                                             null_count=d.null_count), scale=scale)
        wide = hi.astype(object) * (1 << 64) + lo.view(np.uint64).astype(object)
        if valid is not None:
            wide[~valid] = 0
        return Num(None, wide, valid, scale)
    if d.type != pa.int64():
        d = d.cast(pa.int64())
    return Num(d, scale=scale)


def _wide(x: Num) -> tuple[np.ndarray, np.ndarray | None]:
    if x.wide is not None:
        return x.wide, x.valid
    if isinstance(x.fast, pa.Scalar):
        v = x.fast.as_py()
        return np.array([v or 0], dtype=object), (None if v is not None else np.array([False]))
    vals = xa.np_view(x.fast, np.int64).astype(object)
    valid = xa.valid_mask(x.fast)
    if valid is not None:
        vals[~valid] = 0
    return vals, valid


def _is_null_scalar(x: Num) -> bool:
    return isinstance(x.fast, pa.Scalar) and not x.fast.is_valid


def upscale(x: Num, scale: int) -> Num:
    """x at a scale >= its own (exact)."""
    k = scale - x.scale
    if k == 0:
        return x
    if x.fast is not None and k <= 18:
        try:
            return Num(pc.multiply_checked(x.fast, pa.scalar(10**k, pa.int64())), scale=scale)
        except pa.ArrowInvalid:
            pass
    w, valid = _wide(x)
    return Num(None, w * (10**k), valid, scale)


def rescale(x: Num, scale: int, mode: int = MODE_HALF_AWAY) -> Num:
    """x at any scale; a smaller scale rounds with `mode` (half away from zero by default)."""
    if scale >= x.scale:
        return upscale(x, scale)
    return divide_ints(x, Num(pa.scalar(10**(x.scale - scale), pa.int64())) if x.scale - scale
                       <= 18 else Num(None, np.array([10**(x.scale - scale)], dtype=object)),
                       mode, scale)


def to_array(x: Num, t: SqlType, n: int, check: bool = True) -> pa.Array:
    """x in the layout of numeric type t (rounding to t's scale). With `check`, values
    beyond t's precision raise 22003 'numeric field overflow'."""
    x = rescale(x, t.scale)
    limit = 10 ** (t.precision or 38)
    if x.fast is not None:
        arr = xa.as_array(x.fast, n)
        if check and t.precision is not None and t.precision <= 18 and len(arr):
            lim = pa.scalar(limit, pa.int64())
            over = pc.or_(pc.greater_equal(arr, lim), pc.less_equal(arr, pa.scalar(-limit, pa.int64())))
            if pc.any(over).as_py():
                raise _field_overflow(t)
        if t.is_scaled_int:
            return arr
        words = np.empty((len(arr), 2), dtype=np.int64)
        words[:, 0] = xa.np_view(arr, np.int64)
        words[:, 1] = words[:, 0] >> 63
        return pa.Array.from_buffers(t.arrow_type(), len(arr),
                                     [xa.validity_buffer(arr), pa.py_buffer(words)],
                                     null_count=arr.null_count)
    w, valid = x.wide, x.valid
    if len(w) != n:
        w = np.repeat(w, n)
        valid = None if valid is None else np.repeat(valid, n)
    live = w if valid is None else w[valid]
    if len(live) and (live.max() >= limit or live.min() <= -limit):
        raise _field_overflow(t)
    if valid is not None:
        w = w.copy()
        w[~valid] = 0
    if t.is_scaled_int:
        return xa.from_numpy(w.astype(np.int64), pa.int64(), valid)
    words = np.empty((n, 2), dtype=np.int64)
    words[:, 0] = (w & ((1 << 64) - 1)).astype(np.uint64).view(np.int64)
    words[:, 1] = (w >> 64).astype(np.int64)
    return xa.from_numpy(words, t.arrow_type(), valid)


def _field_overflow(t: SqlType) -> errors.QueryError:
    if t.precision is None:
        return errors.NumericOutOfRange("value overflows numeric format",
                                        detail="raympp numerics hold at most 38 digits")
    return errors.NumericOutOfRange(
        "numeric field overflow", detail=f"A field with precision {t.precision}, scale "
        f"{t.scale} must round to an absolute value less than 10^{t.precision - t.scale}.")


# --- arithmetic ----------------------------------------------------------------------------
def divide_ints(a: Num, b: Num, mode: int, scale: int) -> Num:
    """Row-wise a / b on the integers (not the values) with a rounding mode; the result is
    declared at `scale`."""
    if a.fast is not None and b.fast is not None:
        n = max(_length(a), _length(b))
        valid = xa.and_masks(_valid(a.fast, n), _valid(b.fast, n))
        out, status = _divide(_ints(a.fast), _ints(b.fast), valid if valid is not None
                              else np.ones(n, dtype=bool), mode)
        if status == 1:
            raise errors.DivisionByZero("division by zero")
        if status == 0:
            return Num(xa.from_numpy(out, pa.int64(), valid), scale=scale)
    wa, va = _wide(a)
    wb, vb = _wide(b)
    valid = xa.and_masks(*np.broadcast_arrays(*(v for v in (va, vb) if v is not None))) \
        if va is not None or vb is not None else None
    zero = wb == 0
    if valid is not None:
        zero = zero & valid
        wb = np.where(valid, wb, 1)
    if zero.any():
        raise errors.DivisionByZero("division by zero")
    return Num(None, _py_divide_u(wa, wb, mode).astype(object), valid, scale)


def _length(x: Num) -> int:
    return 1 if isinstance(x.fast, pa.Scalar) else len(x.fast)


def _valid(d: xa.Datum, n: int) -> np.ndarray | None:
    if isinstance(d, pa.Scalar):
        return None if d.is_valid else np.zeros(n, dtype=bool)
    return xa.valid_mask(d)


def _ints(d: xa.Datum) -> np.ndarray:
    if isinstance(d, pa.Scalar):
        return np.array([d.as_py() or 0], dtype=np.int64)
    return xa.np_view(d, np.int64)


def binop(func: Func, a: Num, b: Num, t: SqlType, n: int) -> pa.Array:
    """a func b for numeric operands, written as type t (the binder's result type)."""
    if _is_null_scalar(a) or _is_null_scalar(b):
        return pa.nulls(n, t.arrow_type())
    if func in (Func.ADD, Func.SUB, Func.MOD):
        s = max(a.scale, b.scale)
        a, b = upscale(a, s), upscale(b, s)
    if func is Func.DIV:
        a = upscale(a, t.scale + b.scale)
    if func in (Func.DIV, Func.MOD):
        mode = MODE_MOD if func is Func.MOD else MODE_HALF_AWAY
        return to_array(divide_ints(a, b, mode, t.scale if func is Func.DIV else a.scale), t, n,
                        check=False)
    scale = a.scale + b.scale if func is Func.MUL else a.scale
    if a.fast is not None and b.fast is not None:
        kernel = {Func.ADD: pc.add_checked, Func.SUB: pc.subtract_checked,
                  Func.MUL: pc.multiply_checked}[func]
        try:
            return to_array(Num(kernel(a.fast, b.fast), scale=scale), t, n, check=False)
        except pa.ArrowInvalid:
            pass
    (wa, va), (wb, vb) = _wide(a), _wide(b)
    w = {Func.ADD: np.add, Func.SUB: np.subtract, Func.MUL: np.multiply}[func](wa, wb)
    valid = _broadcast_valid(va, vb, len(w))
    return to_array(Num(None, w, valid, scale), t, n, check=False)


def _broadcast_valid(va, vb, n):
    masks = [np.broadcast_to(v, (n,)) for v in (va, vb) if v is not None]
    return xa.and_masks(*masks) if masks else None


def compare(func: Func, a: Num, b: Num) -> xa.Datum:
    """a func b (=, <>, <, <=, >, >=) for numerics of any scales."""
    s = max(a.scale, b.scale)
    a, b = upscale(a, s), upscale(b, s)
    if a.fast is not None and b.fast is not None:
        return _COMPARE[func](a.fast, b.fast)
    (wa, va), (wb, vb) = _wide(a), _wide(b)
    res = {Func.EQ: np.equal, Func.NE: np.not_equal, Func.LT: np.less, Func.LE: np.less_equal,
           Func.GT: np.greater, Func.GE: np.greater_equal}[func](wa, wb).astype(bool)
    valid = _broadcast_valid(va, vb, len(res))
    return pa.array(res, pa.bool_(), mask=None if valid is None else ~valid)


_COMPARE = {Func.EQ: pc.equal, Func.NE: pc.not_equal, Func.LT: pc.less,
            Func.LE: pc.less_equal, Func.GT: pc.greater, Func.GE: pc.greater_equal}


def negate(a: Num, t: SqlType, n: int, absolute: bool = False) -> pa.Array:
    if a.fast is not None:
        kernel = pc.abs_checked if absolute else pc.negate_checked
        return to_array(Num(kernel(a.fast), scale=a.scale), t, n, check=False)
    w, valid = _wide(a)
    return to_array(Num(None, np.abs(w) if absolute else -w, valid, a.scale), t, n, check=False)


def round_to(a: Num, digits: int, func: Func) -> Num:
    """round/trunc/floor/ceil to `digits` decimal places (negative: tens, hundreds, ...)."""
    if digits >= a.scale:
        return a
    mode = _MODE_FUNCS[func]
    if digits >= 0:
        return rescale(a, digits, mode)
    k = a.scale - digits
    unit = Num(pa.scalar(10**k, pa.int64())) if k <= 18 else Num(
        None, np.array([10**k], dtype=object))
    q = divide_ints(a, unit, mode, 0)
    factor = 10**(-digits)
    if q.fast is not None and factor <= INT64_MAX:
        try:
            return Num(pc.multiply_checked(q.fast, pa.scalar(factor, pa.int64())), scale=0)
        except pa.ArrowInvalid:
            pass
    w, valid = _wide(q)
    return Num(None, w * factor, valid, 0)


def to_float(a: Num, n: int) -> pa.Array:
    """numeric -> float8, correctly rounded for values below 2^53 units."""
    if a.fast is not None:
        f = pc.cast(xa.as_array(a.fast, n), pa.float64())
        return pc.divide(f, pa.scalar(float(10**a.scale))) if a.scale else f
    w, valid = _wide(a)
    scale = 10**a.scale
    vals = np.frompyfunc(lambda v: v / scale, 1, 1)(w).astype(np.float64)
    return xa.from_numpy(np.broadcast_to(vals, (n,)).copy(), pa.float64(), valid)
