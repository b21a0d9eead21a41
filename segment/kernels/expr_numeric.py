"""Exact numeric arithmetic over scaled integers, as PostgreSQL's numeric computes it.

numeric(p <= 18, s) columns are int64 holding value * 10^s; wider ones are decimal128(38, s).
An operand (`Num`) is held in the cheapest form that is exact for the batch:
- `fast`: an int64 Arrow array or scalar; add, subtract, multiply use pyarrow's checked
  kernels;
- `lo`/`hi`: 128-bit integers as two int64 word arrays; division and rescaling run in the
  numba 128-bit kernel (expr_kernels.divide128), so decimal128 inputs and quotients that
  need more than 64 bits stay fast;
- `wide`: Python ints in numpy object arrays, exact for anything but slow; only a batch
  whose values overflow the other two forms takes it.
An unconstrained numeric (a struct of value and display scale, segment/kernels/
numeric_dscale.py) is read as its values plus `dscale`, each row's scale; results of a
dynamic type get theirs by PostgreSQL's rules (+ - % the larger, * the sum, / and avg
select_div_scale per row, rounded there).
Results are written in the layout of the node's declared type. Precision is checked where a
typmod can be exceeded (casts) and always against decimal128's 38 digits; the binder sized
every other result so that it fits. Division rounds half away from zero at the result
scale, as numeric division does.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner.expr import Func
from planner.values import DEC
from planner.types import Kind, SqlType
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_kernels as xk
from segment.kernels import numeric_dscale as nd
from segment.kernels import numeric_divide as ndiv

INT64_MAX = 2**63 - 1
MODE_TRUNC, MODE_HALF_AWAY, MODE_FLOOR, MODE_CEIL, MODE_MOD = (
    xk.MODE_TRUNC, xk.MODE_HALF_AWAY, xk.MODE_FLOOR, xk.MODE_CEIL, xk.MODE_MOD)
_MODE_FUNCS = {Func.ROUND: MODE_HALF_AWAY, Func.TRUNC: MODE_TRUNC, Func.FLOOR: MODE_FLOOR,
               Func.CEIL: MODE_CEIL}
_COMPARE = {Func.EQ: pc.equal, Func.NE: pc.not_equal, Func.LT: pc.less,
            Func.LE: pc.less_equal, Func.GT: pc.greater, Func.GE: pc.greater_equal}
_NP_COMPARE = {Func.EQ: np.equal, Func.NE: np.not_equal, Func.LT: np.less,
               Func.LE: np.less_equal, Func.GT: np.greater, Func.GE: np.greater_equal}


class Num:
    """A numeric datum as integers at `scale`, in one of three forms (see the module doc):
    `fast`, or `lo`/`hi`, or `wide`; `valid` masks the latter two (None: no NULLs).
    `dscale` is the display scale of each value (an int for all rows, or an int64 array),
    None where it is `scale` (results of rounding and rescaling)."""

    __slots__ = ("fast", "lo", "hi", "wide", "valid", "scale", "constant", "dscale")

    def __init__(self, fast=None, scale=0, lo=None, hi=None, wide=None, valid=None,
                 constant=False, dscale=None):
        self.fast, self.lo, self.hi, self.wide = fast, lo, hi, wide
        self.valid, self.scale, self.dscale = valid, scale, dscale
        self.constant = constant or isinstance(fast, pa.Scalar)  # one value for every row

    def length(self) -> int:
        if self.fast is not None:
            return 1 if isinstance(self.fast, pa.Scalar) else len(self.fast)
        return len(self.lo if self.lo is not None else self.wide)


def display_scale(x: Num):
    """Each value's display scale: an int for every row or an int64 array."""
    return x.scale if x.dscale is None else x.dscale


def _rows(*xs: Num) -> int:
    """The row count of operands that broadcast (constants have one value)."""
    return max((x.length() for x in xs if not x.constant), default=1)


# --- conversions ---------------------------------------------------------------------------
def to_num(d: xa.Datum, t: SqlType) -> Num:
    """The integers at t's scale of an integer, scaled-int64 or decimal128 datum; of a
    dynamic numeric, its values at the storage scale with their display scales."""
    if nd.is_dynamic(d):
        return _dynamic_num(d)
    scale = t.scale if t.is_numeric else 0
    num = _fixed_num(d, scale)
    num.dscale = scale
    return num


def _dynamic_num(d: xa.Datum) -> Num:
    storage = d.type.field(0).type.scale
    if isinstance(d, pa.Scalar):
        v = d.as_py()
        if v is None:
            return Num(pa.scalar(None, pa.int64()), storage, dscale=0)
        num = _fixed_num(pa.scalar(v[d.type.field(0).name], d.type.field(0).type), storage)
        num.dscale = int(v[d.type.field(1).name])
        return num
    value, dscale = nd.parts(d)
    num = _fixed_num(value, storage)
    num.dscale = dscale
    return num


def _fixed_num(d: xa.Datum, scale: int) -> Num:
    if isinstance(d, pa.Scalar):
        v = d.as_py()
        if v is None:
            return Num(pa.scalar(None, pa.int64()), scale)
        iv = int(DEC.scaleb(v, scale)) if isinstance(v, Decimal) else int(v)
        if -INT64_MAX - 1 <= iv <= INT64_MAX:
            return Num(pa.scalar(iv, pa.int64()), scale)
        return Num(scale=scale, wide=np.array([iv], dtype=object), constant=True)
    if pa.types.is_decimal(d.type):
        n = len(d)
        lo, lo_buf = xa.alloc(n, np.int64)
        hi, _ = xa.alloc(n, np.int64)
        valid = xa.valid_mask(d)
        live = xa.all_valid(n) if valid is None else valid
        if xk.split_words(xa.np_view(d, np.int64), live, lo, hi):
            return Num(pa.Array.from_buffers(pa.int64(), n, [xa.validity_buffer(d), lo_buf],
                                             null_count=d.null_count), scale)
        return Num(scale=scale, lo=lo, hi=hi, valid=valid)
    return Num(d if d.type == pa.int64() else d.cast(pa.int64()), scale)


def words(x: Num) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(lo, hi, valid) 128-bit words of a fast or 128-bit operand."""
    if x.lo is not None:
        return x.lo, x.hi, x.valid
    if isinstance(x.fast, pa.Scalar):
        v = x.fast.as_py()
        lo = np.array([v or 0], dtype=np.int64)
        return lo, lo >> 63, (None if v is not None else np.zeros(1, dtype=bool))
    lo = xa.np_view(x.fast, np.int64)
    return lo, lo >> 63, xa.valid_mask(x.fast)


def _int64s(x: Num) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The operand as int64 values and mask, when every value fits; None otherwise."""
    if x.wide is not None:
        return None
    lo, hi, valid = words(x)
    if x.lo is not None and not (hi == (lo >> 63))[slice(None) if valid is None else valid].all():
        return None
    return lo, valid


def _wide(x: Num) -> tuple[np.ndarray, np.ndarray | None]:
    if x.wide is not None:
        return x.wide, x.valid
    lo, hi, valid = words(x)
    vals = hi.astype(object) * (1 << 64) + lo.view(np.uint64).astype(object)
    if valid is not None:
        vals[~valid] = 0
    return vals, valid


def wide_values(x: Num, n: int) -> tuple[np.ndarray, np.ndarray]:
    """x's integers as n Python ints (an object array; NULL rows 0) and its validity."""
    w, valid = _wide(x)
    w = np.broadcast_to(w, (n,)).copy() if len(w) != n else w
    return w, np.ones(n, bool) if valid is None else np.broadcast_to(valid, (n,))


def _is_null_scalar(x: Num) -> bool:
    return isinstance(x.fast, pa.Scalar) and not x.fast.is_valid


def _valid_n(n: int, *masks) -> np.ndarray | None:
    ms = [np.broadcast_to(m, (n,)) for m in masks if m is not None]
    return xa.and_masks(*ms) if ms else None


def upscale(x: Num, scale: int) -> Num:
    """x at a scale >= its own (exact)."""
    k = scale - x.scale
    if k == 0:
        return x
    if x.fast is not None:
        r = _times_checked(x, k)
        if r is not None:
            return r
    if x.wide is None:
        r = divide_ints(x, Num(pa.scalar(1, pa.int64())), MODE_TRUNC, scale, k, strict=False)
        if r is not None:
            return r
    w, valid = _wide(x)
    return Num(scale=scale, wide=w * (10**k), valid=valid, constant=x.constant)


def rescale(x: Num, scale: int, mode: int = MODE_HALF_AWAY) -> Num:
    """x at any scale; a smaller scale rounds with `mode` (half away from zero by default)."""
    if scale >= x.scale:
        return upscale(x, scale)
    return divide_ints(x, _power(x.scale - scale), mode, scale)


def _power(k: int) -> Num:
    if k <= 18:
        return Num(pa.scalar(10**k, pa.int64()))
    return Num(wide=np.array([10**k], dtype=object), constant=True)


def to_array(x: Num, t: SqlType, n: int, check: bool = True) -> pa.Array:
    """x in the layout of numeric type t (rounding to t's scale). With `check`, values
    beyond t's precision raise 22003 'numeric field overflow'; beyond decimal128's 38
    digits they always raise. A dynamic t keeps each value's display scale, which must
    not exceed t's storage scale (22003)."""
    if t.is_dynamic:
        ds = display_scale(x)
        if isinstance(ds, np.ndarray) and len(ds) != n:
            ds = np.broadcast_to(ds, (n,))
        value = to_array(x, SqlType(t.kind, None, t.scale), n, check=False)
        return nd.build(value, ds, t.scale)
    x = rescale(x, t.scale)
    digits = t.precision or 38
    if x.fast is not None:
        arr = xa.as_array(x.fast, n)
        bounded = check and t.precision is not None and t.precision <= 18
        if bounded and xa.max_abs(arr) >= 10**digits:
            raise _field_overflow(t)
        if t.is_scaled_int:
            return arr
        words, buf = xa.alloc(2 * len(arr), np.int64)
        xk.int64_to_words(xa.np_view(arr, np.int64), words)
        return pa.Array.from_buffers(t.arrow_type(), len(arr), [xa.validity_buffer(arr), buf],
                                     null_count=arr.null_count)
    if x.lo is not None:
        lo, hi = (np.broadcast_to(w, (n,)) for w in (x.lo, x.hi))
        valid = _valid_n(n, x.valid)
        live = xa.all_valid(n) if valid is None else valid
        if (check or t.precision is None or not t.is_scaled_int) and xk.exceeds(
                lo, hi, live, *_limit(digits if check or t.precision is None else 38)):
            raise _field_overflow(t)
        if t.is_scaled_int:
            if not (hi == (lo >> 63))[live].all():
                raise _field_overflow(t)
            return xa.from_numpy(np.ascontiguousarray(lo), pa.int64(), valid)
        words, buf = xa.alloc(2 * n, np.int64)
        xk.join_words(np.ascontiguousarray(lo), np.ascontiguousarray(hi), words)
        return xa.from_numpy(buf, t.arrow_type(), valid, n)
    w, valid = x.wide, x.valid
    if len(w) != n:
        w = np.repeat(w, n)
        valid = None if valid is None else np.repeat(valid, n)
    live = w if valid is None else w[valid]
    limit = 10**digits
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


def _limit(digits: int) -> tuple[np.uint64, np.uint64]:
    v = 10**digits
    return np.uint64(v >> 64), np.uint64(v & ((1 << 64) - 1))


def _field_overflow(t: SqlType) -> errors.QueryError:
    if t.precision is None:
        return errors.NumericOutOfRange("value overflows numeric format",
                                        detail="raympp numerics hold at most 38 digits")
    return errors.NumericOutOfRange(
        "numeric field overflow", detail=f"A field with precision {t.precision}, scale "
        f"{t.scale} must round to an absolute value less than 10^{t.precision - t.scale}.")


# --- arithmetic ----------------------------------------------------------------------------
def divide_ints(a: Num, b: Num, mode: int, scale: int, k: int = 0, strict: bool = True):
    """Row-wise (a * 10^k) / b on the integers with a rounding mode (or the remainder),
    declared at `scale`. Division by zero on a non-NULL row raises 22012. With
    strict=False, returns None instead of falling back to Python ints."""
    n = _rows(a, b)
    constant = a.constant and b.constant
    divisor = _int64s(b)
    if a.fast is not None and divisor is not None and k <= 18:
        a64 = a if k == 0 else _times_checked(a, k)
        if a64 is not None:
            (av, va), (bv, vb) = _int64s(a64), divisor
            valid = _valid_n(n, va, vb)
            out, buf = xa.alloc(n, np.int64)
            status = xk.divide64(av, bv, xa.all_valid(n) if valid is None else valid, mode, out)
            if status == xk.DIVIDE_BY_ZERO:
                raise errors.DivisionByZero("division by zero")
            if status == xk.DIVIDE_OK:
                return Num(xa.from_numpy(buf, pa.int64(), valid, n), scale, constant=constant)
    if a.wide is None and divisor is not None:
        lo, hi, va = words(a)
        bv, vb = divisor
        valid = _valid_n(n, va, vb)
        out_lo, _ = xa.alloc(n, np.int64)
        out_hi, _ = xa.alloc(n, np.int64)
        status = xk.divide128(lo, hi, k, bv, xa.all_valid(n) if valid is None else valid, mode,
                              out_lo, out_hi)
        if status == xk.DIVIDE_BY_ZERO:
            raise errors.DivisionByZero("division by zero")
        if status == xk.DIVIDE_OK:
            return Num(scale=scale, lo=out_lo, hi=out_hi, valid=valid, constant=constant)
    if not strict:
        return None
    (wa, va), (wb, vb) = _wide(a), _wide(b)
    valid = _valid_n(n, va, vb)
    wa = wa * (10**k) if k else wa
    wb = np.broadcast_to(wb, (n,)) if len(wb) != n else wb
    zero = wb == 0
    if valid is not None:
        zero = zero & valid
        wb = np.where(valid, wb, 1)
    if zero.any():
        raise errors.DivisionByZero("division by zero")
    return Num(scale=scale, wide=_py_divide(wa, wb, mode).astype(object), valid=valid,
               constant=constant)


def _times_checked(x: Num, k: int) -> Num | None:
    """x * 10^k in int64, or None when that could overflow."""
    if k > 18 or xa.max_abs(x.fast) * 10**k > INT64_MAX:
        return None
    return Num(pc.multiply(x.fast, pa.scalar(10**k, pa.int64())), x.scale + k)


def _py_divide_one(x: int, y: int, mode: int) -> int:
    q = abs(x) // abs(y)
    q = q if (x < 0) == (y < 0) else -q
    r = x - q * y
    if mode == MODE_MOD:
        return r
    neg = (x < 0) != (y < 0)
    if r and ((mode == MODE_HALF_AWAY and 2 * abs(r) >= abs(y)) or (mode == MODE_FLOOR and neg)
              or (mode == MODE_CEIL and not neg)):
        q += -1 if neg else 1
    return q


_py_divide = np.frompyfunc(_py_divide_one, 3, 1)


def binop(func: Func, a: Num, b: Num, t: SqlType, n: int) -> pa.Array:
    """a func b for numeric operands, written as type t (the binder's result type)."""
    if _is_null_scalar(a) or _is_null_scalar(b):
        return pa.nulls(n, t.arrow_type())
    if t.is_dynamic:
        return _dynamic_binop(func, a, b, t, n)
    return _fixed_binop(func, a, b, t, n)


def _dynamic_binop(func: Func, a: Num, b: Num, t: SqlType, n: int) -> pa.Array:
    """a func b with each result's display scale as numeric.c gives it."""
    values = SqlType(t.kind, None, t.scale)
    if func is Func.DIV:
        return _dynamic_divide(a, b, t, n)
    da, db = (np.asarray(display_scale(x), dtype=np.int64) for x in (a, b))
    ds = da + db if func is Func.MUL else np.maximum(da, db)
    # a sum or difference of values exact at the storage scale is exact there, even
    # where a display scale goes beyond it (an average's 20 digits of zeros, 19 held)
    return nd.build(_fixed_binop(func, a, b, values, n), ds, t.scale,
                    exact_beyond=func in (Func.ADD, Func.SUB))


def _dynamic_divide(a: Num, b: Num, t: SqlType, n: int) -> pa.Array:
    """a / b rounded half away from zero at each row's select_div_scale: one compiled pass
    (segment/kernels/numeric_divide.py); where that cannot hold a row (a scaled dividend
    beyond 256 bits, an operand beyond 128), the quotient truncated one digit beyond the
    largest scale, then rounded once per distinct scale (truncating first loses nothing:
    the digits kept decide the rounding)."""
    values = SqlType(t.kind, None, t.scale)
    r = nd.division_scales(*_weight_first(a, n), *_weight_first(b, n),
                           *(np.broadcast_to(np.asarray(display_scale(x), dtype=np.int64), (n,))
                             for x in (a, b)))
    valid = _valid_n(n, *(_mask(x) for x in (a, b)))
    live = r if valid is None else r[valid]
    compiled = _compiled_divide(a, b, r, valid, t, n)
    if compiled is not None:
        return compiled
    if len(live) and live.max() > t.scale:
        raise nd.too_many_digits(int(live.max()), t.scale)
    # the general path (a scaled dividend beyond 256 bits, operands beyond 128 bits):
    # the operands at their largest display scale (exact), the quotient one digit past the
    # largest scale wanted: the smallest integers that decide every row
    a, b = (rescale(x, int(np.max(display_scale(x)))) for x in (a, b))
    exact = int(r.max(initial=0)) + 1
    q = divide_ints(a, b, MODE_TRUNC, exact, exact + b.scale - a.scale)
    valid = _valid_n(n, q.valid if q.fast is None else xa.valid_mask(xa.as_array(q.fast, n)))
    out = _round_rows(q, r, valid, values, n)
    return nd.build(out, np.minimum(r, t.scale), t.scale)


def _mask(x: Num) -> np.ndarray | None:
    """x's validity (None: no NULLs)."""
    if x.fast is not None:
        return words(x)[2]
    return x.valid


def _compiled_divide(a: Num, b: Num, r: np.ndarray, valid, t: SqlType, n: int):
    """a / b by numeric_divide's one compiled pass (each row at its scale r[i]), or None
    where a row needs the general path."""
    if a.wide is not None or b.wide is not None:
        return None
    (alo, ahi, _), (blo, bhi, _) = words(a), words(b)
    # a display scale beyond the storage scale has zeros there: the value at the storage
    # scale is the value at its own
    own_a, own_b = (np.atleast_1d(np.minimum(np.asarray(display_scale(x), dtype=np.int64),
                                             x.scale)) for x in (a, b))
    out_lo, buf_lo = xa.alloc(n, np.int64)
    out_hi, buf_hi = xa.alloc(n, np.int64)
    status, row = ndiv.divide_rows(
        alo, ahi, a.scale, own_a, blo, bhi, b.scale, own_b,
        np.ascontiguousarray(r), t.scale, xa.all_valid(n) if valid is None else valid,
        out_lo, out_hi)
    if status == ndiv.DIV_BY_ZERO:
        raise errors.DivisionByZero("division by zero")
    if status == ndiv.DIV_OVERFLOW:
        raise errors.NumericOutOfRange(
            "value overflows numeric format",
            detail=f"a quotient with {int(r[row])} fractional digits and more than "
                   f"{38 - t.scale} integer digits: raympp's unconstrained numerics hold "
                   f"38 digits, {t.scale} of them fractional here")
    if status == ndiv.DIV_INEXACT:
        raise nd.too_many_digits(int(r[row]), t.scale)
    if status == ndiv.DIV_GENERAL:
        return None
    pairs = np.empty((n, 2), np.int64)
    pairs[:, 0], pairs[:, 1] = out_lo, out_hi
    value = xa.from_numpy(pairs.reshape(-1), pa.decimal128(38, t.scale), valid, n)
    return nd.build(value, r, t.scale, exact_beyond=True)


def _weight_first(x: Num, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the base-10000 weight and first digit of x's values (numeric_dscale)."""
    if x.wide is not None:  # beyond 128 bits: only constants and overflowed results
        return nd.weight_first_py(wide_values(x, n)[0], x.scale)
    lo, hi, _ = words(x)
    return nd.weight_first(*(np.broadcast_to(v, (n,)) for v in (lo, hi)), x.scale)


def _round_rows(q: Num, r: np.ndarray, valid, t: SqlType, n: int) -> pa.Array:
    """q's values rounded half away from zero to r[i] fractional digits, as decimals of
    type t (at its scale): each distinct scale over its own rows (a batch holds few)."""
    if q.wide is not None:
        w, _ = wide_values(q, n)
    else:
        lo, hi, _ = words(q)
        lo, hi = (np.broadcast_to(v, (n,)) for v in (lo, hi))
    words_out = np.zeros((n, 2), np.int64)
    live = np.ones(n, bool) if valid is None else valid
    for scale in np.unique(r[live]):
        idx = np.flatnonzero(live & (r == scale))
        sub = Num(scale=q.scale, wide=w[idx]) if q.wide is not None else Num(
            scale=q.scale, lo=np.ascontiguousarray(lo[idx]), hi=np.ascontiguousarray(hi[idx]))
        part = to_array(rescale(sub, int(scale)), t, len(idx), check=False)
        words_out[idx] = xa.np_view(part, np.int64).reshape(len(idx), 2)
    return xa.from_numpy(words_out.reshape(-1), t.arrow_type(), valid, n)


def _fixed_binop(func: Func, a: Num, b: Num, t: SqlType, n: int) -> pa.Array:
    if func is Func.DIV:
        if a.scale > t.scale + b.scale:
            a = rescale(a, t.scale + b.scale)
        k = t.scale + b.scale - a.scale
        return to_array(divide_ints(a, b, MODE_HALF_AWAY, t.scale, k), t, n, check=False)
    if func in (Func.ADD, Func.SUB, Func.MOD):
        s = max(a.scale, b.scale)
        a, b = upscale(a, s), upscale(b, s)
    if func is Func.MOD:
        return to_array(divide_ints(a, b, MODE_MOD, a.scale), t, n, check=False)
    scale = a.scale + b.scale if func is Func.MUL else a.scale
    if a.fast is not None and b.fast is not None:
        ma, mb = xa.max_abs(a.fast), xa.max_abs(b.fast)
        if (ma * mb if func is Func.MUL else ma + mb) <= INT64_MAX:  # cannot overflow
            kernel = {Func.ADD: pc.add, Func.SUB: pc.subtract, Func.MUL: pc.multiply}[func]
            return to_array(Num(kernel(a.fast, b.fast), scale), t, n, check=False)
    (wa, va), (wb, vb) = _wide(a), _wide(b)
    w = {Func.ADD: np.add, Func.SUB: np.subtract, Func.MUL: np.multiply}[func](wa, wb)
    return to_array(Num(scale=scale, wide=w, valid=_valid_n(len(w), va, vb)), t, n, check=False)


def compare(func: Func, a: Num, b: Num) -> xa.Datum:
    """a func b (=, <>, <, <=, >, >=) for numerics of any scales."""
    s = max(a.scale, b.scale)
    a, b = upscale(a, s), upscale(b, s)
    if a.fast is not None and b.fast is not None:
        return _COMPARE[func](a.fast, b.fast)
    (wa, va), (wb, vb) = _wide(a), _wide(b)
    res = _NP_COMPARE[func](wa, wb).astype(bool)
    valid = _valid_n(len(res), va, vb)
    return pa.array(res, pa.bool_(), mask=None if valid is None else ~valid)


def negate(a: Num, t: SqlType, n: int, absolute: bool = False) -> pa.Array:
    """-a or abs(a), each value keeping its display scale."""
    if a.fast is not None and xa.max_abs(a.fast) <= INT64_MAX:
        kernel = pc.abs if absolute else pc.negate
        return to_array(Num(kernel(a.fast), a.scale, dscale=a.dscale), t, n, check=False)
    w, valid = _wide(a)
    return to_array(Num(scale=a.scale, wide=np.abs(w) if absolute else -w, valid=valid,
                        dscale=a.dscale), t, n, check=False)


def round_to(a: Num, digits: int, func: Func) -> Num:
    """round/trunc/floor/ceil to `digits` decimal places (negative: tens, hundreds, ...)."""
    if digits >= a.scale:
        return a
    mode = _MODE_FUNCS[func]
    if digits >= 0:
        return rescale(a, digits, mode)
    q = divide_ints(a, _power(a.scale - digits), mode, digits)  # units of 10^-digits
    return upscale(q, 0)


def to_float(a: Num, n: int) -> pa.Array:
    """numeric -> float8, correctly rounded for values below 2^53 units."""
    if a.fast is not None:
        f = pc.cast(xa.as_array(a.fast, n), pa.float64(), safe=False)
        return pc.divide(f, pa.scalar(float(10**a.scale))) if a.scale else f
    w, valid = _wide(a)
    scale = 10**a.scale
    vals = np.frompyfunc(lambda v: v / scale, 1, 1)(w).astype(np.float64)
    return xa.from_numpy(np.broadcast_to(vals, (n,)).copy(), pa.float64(), _valid_n(n, valid))
