"""ln, log and power of numeric constants, computed as PostgreSQL 15's numeric.c does.

PostgreSQL picks each result's display scale from the value itself (numeric_ln,
numeric_log and power_var estimate the result's decimal weight and keep at least 16
significant digits, never fewer decimals than an input has). A batch column has one scale,
so these run at bind time only, over constants (planner/math_rules.py refuses columns);
the value is computed with Python's decimal at enough extra precision and rounded half
away from zero to that scale, as round_var does. `dscale` arguments are the inputs'
display scales (their types' scales).
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from fractions import Fraction

from planner import errors

MIN_SIG_DIGITS = 16        # NUMERIC_MIN_SIG_DIGITS
MAX_DISPLAY_SCALE = 1000   # NUMERIC_MAX_DISPLAY_SCALE
MAX_RESULT_SCALE = 2000    # NUMERIC_MAX_RESULT_SCALE
MAX_DIGITS = 38            # what a raympp numeric holds
EXACT_POWER_DIGITS = 4000  # digits of base ^ k computed exactly (else at a bounded precision)


def _clamp_scale(rscale: int) -> int:
    return min(max(rscale, 0), MAX_DISPLAY_SCALE)


def _nbase(d: Decimal) -> tuple[list[int], int]:
    """|d|'s base-10000 digits without trailing zero digits, and its weight (the power of
    10000 of the first digit), as a NumericVar holds them."""
    _, digits, exp = abs(d).as_tuple()
    n = int("".join(map(str, digits)) or "0")
    shift = exp % 4
    n, e4 = n * 10**shift, (exp - shift) // 4
    groups = []
    while n:
        groups.append(n % 10000)
        n //= 10000
    groups.reverse()
    weight = e4 + len(groups) - 1
    while groups and groups[-1] == 0:
        groups.pop()
    return groups, weight


def estimate_ln_dweight(d: Decimal) -> int:
    """PostgreSQL's estimate of the decimal weight of ln(d) (estimate_ln_dweight)."""
    if Decimal("0.9") <= d <= Decimal("1.1"):
        x = d - 1
        return x.adjusted() if x != 0 else 0
    groups, weight = _nbase(d)
    if not groups:
        return 0
    digits, dweight = groups[0], weight * 4
    if len(groups) > 1:
        digits, dweight = digits * 10000 + groups[1], dweight - 4
    ln = math.log(digits) + dweight * math.log(10)
    return int(math.log10(abs(ln)))


# Exact shifts and roundings: Decimal.scaleb and quantize round to their context's
# precision, 28 digits by default.
_SHIFT = decimal.Context(prec=10**6, Emax=10**7, Emin=-10**7)


def _context(rscale: int, weight: int) -> decimal.Context:
    return decimal.Context(prec=max(rscale + max(weight, 0), 0) + 40,
                           rounding=decimal.ROUND_HALF_EVEN, Emax=10**7, Emin=-10**7)


def _round(v: Decimal | Fraction, rscale: int) -> Decimal:
    """v rounded half away from zero to rscale decimals (round_var)."""
    if isinstance(v, Fraction):
        scaled = v * 10**rscale
        q, r = divmod(abs(scaled.numerator), scaled.denominator)
        q += 2 * r >= scaled.denominator
        q = -q if scaled < 0 else q
        out = Decimal(q).scaleb(-rscale, _SHIFT)
    else:
        out = v.quantize(Decimal(1).scaleb(-rscale), rounding=decimal.ROUND_HALF_UP,
                         context=_SHIFT)
    if len(out.as_tuple().digits) > MAX_DIGITS and out != 0:
        raise errors.NumericOutOfRange("value overflows numeric format",
                                       detail="raympp numerics hold at most 38 digits")
    return abs(out) if out == 0 else out


def _check_log_arg(d: Decimal) -> None:
    if d == 0:
        raise errors.QueryError("cannot take logarithm of zero", "2201E")
    if d < 0:
        raise errors.QueryError("cannot take logarithm of a negative number", "2201E")


def ln(x: Decimal, dscale: int) -> Decimal:
    """ln(numeric) at numeric_ln's scale."""
    dweight = estimate_ln_dweight(x)
    rscale = _clamp_scale(max(MIN_SIG_DIGITS - dweight, dscale))
    _check_log_arg(x)
    return _round(x.ln(_context(rscale, dweight)), rscale)


def exp(x: Decimal, dscale: int) -> Decimal:
    """exp(numeric) at numeric_exp's scale."""
    val = min(max(float(x) * 0.434294481903252, -MAX_RESULT_SCALE), MAX_RESULT_SCALE)
    if val > MAX_DIGITS:
        raise errors.NumericOutOfRange("value overflows numeric format",
                                       detail="raympp numerics hold at most 38 digits")
    rscale = _clamp_scale(max(MIN_SIG_DIGITS - int(val), dscale))
    return _round(x.exp(_context(rscale, int(val) + 1)), rscale)


def sqrt(x: Decimal, dscale: int) -> Decimal:
    """sqrt(numeric) at numeric_sqrt's scale (from the base-10000 weight of x)."""
    if x < 0:
        raise errors.QueryError("cannot take square root of a negative number", "2201F")
    groups, weight = _nbase(x)
    sweight = (weight + 1 if groups else 1) * 2 - 1  # (weight + 1) * DEC_DIGITS / 2 - 1
    rscale = _clamp_scale(max(MIN_SIG_DIGITS - sweight, dscale))
    return _round(x.sqrt(_context(rscale, sweight)), rscale)


def fixed_sqrt(x: Decimal, scale: int) -> Decimal:
    """The square root of x >= 0 at `scale` fractional digits, exact: the integer root of
    x's digits shifted by 2 * scale, rounded half away from zero (as sqrt_var rounds)."""
    unscaled = int(x.scaleb(2 * scale, _SHIFT).to_integral_value(decimal.ROUND_HALF_UP))
    root = math.isqrt(unscaled)
    if unscaled - root * root > root:  # past (root + 1/2)^2 = root^2 + root + 1/4
        root += 1
    return Decimal(root).scaleb(-scale, _SHIFT)


def log(base: Decimal, bscale: int, x: Decimal, xscale: int) -> Decimal:
    """log(base, x) of numerics at log_var's scale (log(x) is log(10, x))."""
    result_dweight = estimate_ln_dweight(x) - estimate_ln_dweight(base)
    rscale = _clamp_scale(max(MIN_SIG_DIGITS - result_dweight, bscale, xscale))
    _check_log_arg(base)
    _check_log_arg(x)
    ctx = _context(rscale + abs(result_dweight), result_dweight)
    ln_base = base.ln(ctx)
    if ln_base == 0:
        raise errors.DivisionByZero("division by zero")
    return _round(ctx.divide(x.ln(ctx), ln_base), rscale)


def power(base: Decimal, bscale: int, exp: Decimal, escale: int) -> Decimal:
    """base ^ exp of numerics (numeric_power and power_var)."""
    if base == 0 and exp < 0:
        raise errors.QueryError("zero raised to a negative power is undefined", "2201F")
    integral = exp == exp.to_integral_value()
    if integral and -2**31 <= exp < 2**31:
        return _power_int(base, bscale, int(exp))
    if base == 0:
        return _round(Decimal(0), MIN_SIG_DIGITS)
    sign = 1
    if base < 0:
        if not integral:
            raise errors.QueryError("a negative number raised to a non-integer power yields "
                                    "a complex result", "2201F")
        sign, base = (-1 if exp % 2 else 1), -base
    ln_dweight = estimate_ln_dweight(base)
    local = max(8 - ln_dweight, 0)
    low = decimal.Context(prec=local + 60, Emax=10**7, Emin=-10**7)
    ln_num = _round_plain((_round_plain(base.ln(low), local) * exp), local)
    val = float(ln_num)
    if abs(val) > MAX_RESULT_SCALE * 3.01:
        if val > 0:
            raise errors.NumericOutOfRange("value overflows numeric format")
        return _round(Decimal(0), MAX_DISPLAY_SCALE)
    val *= 0.434294481903252  # the result's approximate decimal weight
    rscale = _clamp_scale(max(MIN_SIG_DIGITS - int(val), bscale, escale))
    if val > MAX_DIGITS:
        raise errors.NumericOutOfRange("value overflows numeric format",
                                       detail="raympp numerics hold at most 38 digits")
    ctx = _context(rscale, int(val) + 1)
    return _round(sign * ctx.exp(ctx.multiply(base.ln(ctx), exp)), rscale)


def _round_plain(v: Decimal, scale: int) -> Decimal:
    return v.quantize(Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP,
                      context=decimal.Context(prec=10**5, Emax=10**7, Emin=-10**7))


def _power_int(base: Decimal, bscale: int, k: int) -> Decimal:
    """power_var_int: an integral exponent, at scale max(16, base's)."""
    rscale = _clamp_scale(max(MIN_SIG_DIGITS, bscale))
    if k == 0:
        return _round(Decimal(1), rscale)
    if base == 0:
        return _round(Decimal(0), rscale)
    # log10 of the result, to stop before computing what cannot fit (or is below rscale)
    f = k * math.log10(abs(base))
    if f > MAX_DIGITS:
        raise errors.NumericOutOfRange("value overflows numeric format",
                                       detail="raympp numerics hold at most 38 digits")
    if f + 1 < -rscale:
        return _round(Decimal(0), rscale)
    if len(base.as_tuple().digits) * abs(k) <= EXACT_POWER_DIGITS:
        return _round(Fraction(base) ** k, rscale)
    # The exact power has too many digits to hold (1.0000001 ^ 1000000 has seven
    # million): binary powering at the digits the result shows plus 40 guard digits, as
    # power_var_int works at a bounded precision too.
    ctx = decimal.Context(prec=max(int(f) + rscale, 1) + 40, rounding=decimal.ROUND_HALF_EVEN,
                          Emax=10**7, Emin=-10**7)
    return _round(ctx.power(base, k), rscale)
