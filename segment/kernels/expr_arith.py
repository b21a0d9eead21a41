"""Arithmetic, comparison and math functions over batches, with PostgreSQL's errors.

Integers use pyarrow's plain kernels when the operands' bounds prove that nothing can
overflow and the checked kernels otherwise (overflow -> 22003 'integer out of range',
division by zero -> 22012, both only for non-null rows; a checked kernel that does overflow
takes seconds per batch, so it is kept for the error path); floats check overflow,
underflow and division by zero the way float.c does; numerics go to expr_numeric; dates,
timestamps and intervals to expr_datetime. Every function takes the typed Call and its
evaluated arguments (arrays or scalars) and returns a datum of the Call's Arrow type.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, types
from planner.expr import Call, Func
from planner.types import Kind
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_datetime as xd
from segment.kernels import expr_numeric as xn
from segment.kernels import numeric_dscale as nd

_INT_KERNELS = {Func.ADD: pc.add_checked, Func.SUB: pc.subtract_checked,
                Func.MUL: pc.multiply_checked, Func.DIV: pc.divide_checked}
_FAST_INT = {Func.ADD: pc.add, Func.SUB: pc.subtract, Func.MUL: pc.multiply}
_FLOAT_KERNELS = {Func.ADD: pc.add, Func.SUB: pc.subtract, Func.MUL: pc.multiply,
                  Func.DIV: pc.divide}
_SCALED0 = types.numeric(18, 0)  # int64 at scale 0: integer remainders pass through it
_COMPARE = {Func.EQ: pc.equal, Func.NE: pc.not_equal, Func.LT: pc.less,
            Func.LE: pc.less_equal, Func.GT: pc.greater, Func.GE: pc.greater_equal}


def _any(d) -> bool:
    return bool(pc.any(d).as_py()) if isinstance(d, pa.Array) else bool(d.as_py())


def arith(e: Call, args: list, n: int) -> xa.Datum:
    a, b = args
    ta, tb, t = e.args[0].type, e.args[1].type, e.type
    if t.is_numeric:
        return xn.binop(e.func, xn.to_num(a, ta), xn.to_num(b, tb), t, n)
    if t.is_integer and ta.is_integer:
        return int_arith(e.func, a, b, t)
    if t.is_float:
        return float_arith(e.func, a, b)
    return xd.temporal_arith(e, args, n)


def int_arith(func: Func, a, b, t) -> xa.Datum:
    try:
        if func is Func.MOD:  # C remainder (sign of the dividend); INT_MIN % -1 is 0
            n = max((len(x) for x in (a, b) if isinstance(x, pa.Array)), default=1)
            out = xn.divide_ints(xn.to_num(a, t), xn.to_num(b, t), xn.MODE_MOD, 0)
            return xn.to_array(out, _SCALED0, n, check=False).cast(t.arrow_type())
        if func is not Func.DIV:  # prove no overflow from the operands' bounds
            ma, mb = xa.max_abs(a), xa.max_abs(b)
            if (ma * mb if func is Func.MUL else ma + mb) <= xa.INT_MAX[t.arrow_type().bit_width]:
                return _FAST_INT[func](a, b)
        return _INT_KERNELS[func](a, b)
    except pa.ArrowInvalid as exc:
        raise xa.arrow_error(exc, f"{t.kind.value} out of range")


_NP_INT = {16: np.int16, 32: np.int32, 64: np.int64}
_BIT_KERNELS = {Func.BIT_AND: np.bitwise_and, Func.BIT_OR: np.bitwise_or,
                Func.BIT_XOR: np.bitwise_xor}


def bitwise(e: Call, args: list, n: int) -> xa.Datum:
    """& | # ~ << >> of integers, as PostgreSQL's: NULL if an operand is; results wrap to
    the type's width; a shift count is taken modulo the width (the C shift PostgreSQL runs
    does so on x86-64)."""
    width = e.type.arrow_type().bit_width
    dtype = _NP_INT[width]
    cols = [xa.as_array(a, n) for a in args]
    valid = np.ones(n, dtype=bool)
    vals = []
    for c in cols:
        if c.null_count:
            valid &= np.asarray(c.is_valid(), dtype=bool)
        vals.append(np.asarray(c.cast(pa.int64()).fill_null(0), dtype=np.int64))
    with np.errstate(over="ignore"):
        if e.func is Func.BIT_NOT:
            out = np.invert(vals[0].astype(dtype))
        elif e.func in _BIT_KERNELS:
            out = _BIT_KERNELS[e.func](vals[0].astype(dtype), vals[1].astype(dtype))
        else:
            count = (vals[1] % width).astype(dtype)
            shift = np.left_shift if e.func is Func.SHIFT_LEFT else np.right_shift
            out = shift(vals[0].astype(dtype), count)
    return pa.array(out.astype(dtype), e.type.arrow_type(), mask=~valid if not valid.all() else None)


def float_arith(func: Func, a, b) -> xa.Datum:
    """float8 (or real) arithmetic: 22012 on x / 0 unless x is NaN, 22003 when a finite
    result overflows to infinity or a nonzero one underflows to zero."""
    if func is Func.DIV and _any(pc.and_(pc.equal(b, 0), pc.invert(pc.is_nan(a)))):
        raise errors.DivisionByZero("division by zero")
    r = _FLOAT_KERNELS[func](a, b)
    if _any(pc.is_inf(r)):
        finite = pc.is_finite(a) if func is Func.DIV else pc.and_(pc.is_finite(a), pc.is_finite(b))
        if _any(pc.and_(pc.is_inf(r), finite)):
            raise errors.NumericOutOfRange("value out of range: overflow")
    if func in (Func.MUL, Func.DIV) and _any(pc.equal(r, 0)):
        nonzero = pc.and_(pc.not_equal(a, 0), pc.not_equal(b, 0)) if func is Func.MUL else \
            pc.and_(pc.not_equal(a, 0), pc.invert(pc.is_inf(b)))
        if _any(pc.and_(pc.equal(r, 0), nonzero)):
            raise errors.NumericOutOfRange("value out of range: underflow")
    return r


def compare(e: Call, args: list, n: int) -> xa.Datum:
    return compare_values(e.func, args[0], args[1], e.args[0].type, e.args[1].type)


def compare_values(func: Func, a, b, ta, tb) -> xa.Datum:
    """a func b with PostgreSQL's orderings: numerics by value at any scales, NaN equal
    to itself and above every number, intervals by their 30-day-month span."""
    if ta.is_numeric or tb.is_numeric:
        return xn.compare(func, xn.to_num(a, ta), xn.to_num(b, tb))
    if ta.kind is Kind.INTERVAL:
        return _COMPARE[func](xd.interval_key(a), xd.interval_key(b))
    if ta.is_float and (_any(pc.is_nan(a)) or _any(pc.is_nan(b))):
        na, nb = pc.is_nan(a), pc.is_nan(b)
        eq = pc.or_(pc.and_(na, nb), pc.equal(a, b))
        lt = pc.or_(pc.and_(pc.invert(na), nb), pc.less(a, b))
        le = pc.or_(lt, eq)
        return {Func.EQ: eq, Func.NE: pc.invert(eq), Func.LT: lt, Func.LE: le,
                Func.GT: pc.invert(le), Func.GE: pc.invert(lt)}[func]
    return _COMPARE[func](a, b)


def negate(e: Call, args: list, n: int) -> xa.Datum:
    """Unary minus and abs()."""
    (x,), t = args, e.type
    absolute = e.func is Func.ABS
    if t.is_numeric:
        return xn.negate(xn.to_num(x, t), t, n, absolute)
    if t.kind is Kind.INTERVAL:
        return xd.interval_negate(x, n)
    if t.is_float:
        return pc.abs(x) if absolute else pc.negate(x)
    try:
        if xa.max_abs(x) <= xa.INT_MAX[t.arrow_type().bit_width]:
            return pc.abs(x) if absolute else pc.negate(x)
        return pc.abs_checked(x) if absolute else pc.negate_checked(x)
    except pa.ArrowInvalid as exc:
        raise xa.arrow_error(exc, f"{t.kind.value} out of range")


_FLOAT_ROUNDING = {Func.FLOOR: pc.floor, Func.CEIL: pc.ceil, Func.TRUNC: pc.trunc,
                   Func.ROUND: lambda x: pc.round(x, round_mode="half_to_even")}


def rounding(e: Call, args: list, n: int) -> xa.Datum:
    """round/trunc(x[, digits]), floor, ceil: rint for floats, half away from zero for
    numerics (as PostgreSQL)."""
    x, t = args[0], e.type
    if t.is_float:
        return _FLOAT_ROUNDING[e.func](x)
    num = xn.to_num(x, e.args[0].type)
    digits = args[1] if len(args) > 1 else pa.scalar(0, pa.int32())
    if isinstance(digits, pa.Scalar):
        if not digits.is_valid:
            return pa.nulls(n, t.arrow_type())
        return xn.to_array(xn.round_to(num, digits.as_py(), e.func), t, n, check=False)
    # digits vary by row: one pass per distinct value
    out = pa.nulls(n, t.arrow_type())
    for d in pc.unique(digits.drop_null()).to_pylist():
        part = xn.to_array(xn.round_to(num, d, e.func), t, n, check=False)
        out = pc.if_else(pc.fill_null(pc.equal(digits, d), False), part, out)
    return out


def float_math(e: Call, args: list, n: int) -> xa.Datum:
    """sqrt, ln, exp, power over float8 with PostgreSQL's errors."""
    f, x = e.func, args[0]
    if f is Func.SQRT:
        if _any(pc.less(x, 0)):
            raise errors.QueryError("cannot take square root of a negative number", "2201F")
        return pc.sqrt(x)
    if f is Func.LN:
        if _any(pc.equal(x, 0)):
            raise errors.QueryError("cannot take logarithm of zero", "2201E")
        if _any(pc.less(x, 0)):
            raise errors.QueryError("cannot take logarithm of a negative number", "2201E")
        return pc.ln(x)
    if f is Func.EXP:
        r = pc.exp(x)
        _check_float_range(r, pc.is_finite(x), pc.is_finite(x))
        return r
    y = args[1]
    if _any(pc.and_(pc.equal(x, 0), pc.less(y, 0))):
        raise errors.QueryError("zero raised to a negative power is undefined", "2201F")
    if _any(pc.and_(pc.less(x, 0), pc.not_equal(pc.floor(y), y))):
        raise errors.QueryError(
            "a negative number raised to a non-integer power yields a complex result", "2201F")
    r = pc.power(x, y)
    finite = pc.and_(pc.is_finite(x), pc.is_finite(y))
    _check_float_range(r, finite, pc.and_(finite, pc.not_equal(x, 0)))
    return r


_TRIG = {Func.SIN: pc.sin, Func.COS: pc.cos, Func.TAN: pc.tan, Func.ASIN: pc.asin,
         Func.ACOS: pc.acos, Func.ATAN: pc.atan}


def trig(e: Call, args: list, n: int) -> xa.Datum:
    """sin & co. with the C library's functions (as PostgreSQL's dsin & co.): NaN gives
    NaN, an infinite angle or an asin/acos argument outside [-1, 1] is 22003."""
    f, x = e.func, args[0]
    if f in (Func.SIN, Func.COS, Func.TAN) and _any(pc.is_inf(x)):
        raise errors.NumericOutOfRange("input is out of range")
    if f in (Func.ASIN, Func.ACOS) and _any(pc.or_(pc.less(x, -1.0), pc.greater(x, 1.0))):
        raise errors.NumericOutOfRange("input is out of range")
    if f is Func.ATAN2:
        return pc.atan2(x, args[1])
    return _TRIG[f](x)


def cbrt(e: Call, args: list, n: int) -> xa.Datum:
    x = xa.as_array(args[0], n)
    values = np.cbrt(pc.fill_null(x, 0.0).to_numpy(zero_copy_only=False))
    return xa.from_numpy(values, pa.float64(), xa.valid_mask(x))


def sign(e: Call, args: list, n: int) -> xa.Datum:
    """sign(float8): 1, -1 or 0 -- NaN is 0, as the comparisons of PostgreSQL's dsign."""
    x = args[0]
    return pc.if_else(pc.greater(x, 0.0), 1.0, pc.if_else(pc.less(x, 0.0), -1.0, 0.0))


def gcd_lcm(e: Call, args: list, n: int) -> xa.Datum:
    """gcd/lcm of int4 or int8 in int64 (magnitudes in uint64): a result the type cannot
    hold (gcd(INT_MIN, 0), lcm(INT_MIN, 1)) is 22003 on the rows that get one."""
    t = e.type
    bits = t.arrow_type().bit_width
    hi, lo = xa.INT_MAX[bits], -xa.INT_MAX[bits] - 1
    a, b = xa.as_array(args[0], n), xa.as_array(args[1], n)
    av = pc.fill_null(a, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    bv = pc.fill_null(b, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    valid = xa.and_masks(xa.valid_mask(a), xa.valid_mask(b))
    live = np.ones(n, bool) if valid is None else valid
    zero = (av == 0) | (bv == 0)
    lcm = e.func is Func.LCM
    both_min = (av == lo) & (bv == lo)
    if lcm:  # lcm(x, 0) is 0 before any gcd; gcd(INT_MIN, INT_MIN) overflows
        overflow = live & ~zero & both_min
    else:
        overflow = live & (both_min | (zero & ((av == lo) | (bv == lo))))
    if overflow.any():
        raise errors.NumericOutOfRange(f"{t.kind.value} out of range")
    safe_a, safe_b = np.where(live & ~both_min, av, 1), np.where(live & ~both_min, bv, 1)
    g = np.gcd(safe_a, safe_b)
    if not lcm:
        return xa.from_numpy(g.astype(np.dtype(f"int{bits}")), t.arrow_type(), valid)
    g = np.where(g == 0, 1, g)
    q = np.abs(np.where(zero, 0, safe_a // g)).view(np.uint64)
    mb = np.abs(np.where(zero, 0, safe_b)).view(np.uint64)
    limit = np.uint64(hi) // np.maximum(mb, np.uint64(1))
    if (live & ~zero & (q > limit)).any():
        raise errors.NumericOutOfRange(f"{t.kind.value} out of range")
    r = (q * mb).view(np.int64)
    return xa.from_numpy(r.astype(np.dtype(f"int{bits}")), t.arrow_type(), valid)


def _check_float_range(r, may_not_overflow, may_not_underflow) -> None:
    if _any(pc.and_(pc.is_inf(r), may_not_overflow)):
        raise errors.NumericOutOfRange("value out of range: overflow")
    if _any(pc.and_(pc.equal(r, 0), may_not_underflow)):
        raise errors.NumericOutOfRange("value out of range: underflow")


def extreme(e: Call, args: list, n: int) -> xa.Datum:
    """GREATEST / LEAST: NULLs are ignored; NULL only when every argument is NULL. Values
    that compare by a key (intervals by their span, a padded bpchar without its trailing
    spaces) give the first argument of the best key, as PostgreSQL keeps the first."""
    fn = pc.max_element_wise if e.func is Func.GREATEST else pc.min_element_wise
    if e.type.kind is Kind.INTERVAL or e.type.padded or e.type.is_dynamic:
        keys = [xd.interval_key(a) if e.type.kind is Kind.INTERVAL else
                nd.value_of(a) if e.type.is_dynamic else
                pc.utf8_rtrim(xa.as_array(a, n), characters=" ") for a in args]
        best = fn(*keys, skip_nulls=True)
        out = xa.as_array(args[-1], n)
        for a, k in reversed(list(zip(args, keys))):
            out = pc.if_else(pc.fill_null(pc.equal(k, best), False), a, out)
        return out
    return fn(*args, skip_nulls=True)


def nullif(e: Call, args: list, n: int) -> xa.Datum:
    a, b = args
    eq = compare_values(Func.EQ, a, b, e.args[0].type, e.args[1].type)
    return pc.if_else(pc.fill_null(eq, False), pa.scalar(None, e.type.arrow_type()), a)

