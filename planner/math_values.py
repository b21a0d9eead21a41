"""log10 of float8, div, factorial and width_bucket of constant values (planner/fold.py),
with PostgreSQL 15's results and errors; segment/kernels/expr_math.py computes the same
over columns."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from planner import errors

MAX_FACTORIAL = 33  # the largest n whose n! fits a raympp numeric (38 digits)


def log10(x: float) -> float:
    """log(float8) and log10(float8)."""
    if x == 0:
        raise errors.QueryError("cannot take logarithm of zero", "2201E")
    if x < 0:
        raise errors.QueryError("cannot take logarithm of a negative number", "2201E")
    return math.log10(x)


def div(a: Decimal, b: Decimal) -> Decimal:
    """div(numeric, numeric): the quotient truncated toward zero."""
    if b == 0:
        raise errors.DivisionByZero("division by zero")
    q = Fraction(abs(a)) // Fraction(abs(b))  # exact, whatever the digits
    return Decimal(-q if (a < 0) != (b < 0) else q)


def factorial(n: int) -> Decimal:
    if n < 0:
        raise errors.NumericOutOfRange("factorial of a negative number is undefined")
    if n > MAX_FACTORIAL:
        raise errors.NumericOutOfRange("value overflows numeric format",
                                       detail="raympp numerics hold at most 38 digits")
    return Decimal(math.factorial(n))


def width_bucket(op, low, high=None, count: int | None = None) -> int:
    """width_bucket over float8 (width_bucket_float8) or numeric (compute_bucket, exact);
    with two arguments, over a thresholds array."""
    if count is None:
        return width_bucket_array(op, low)
    if count <= 0:
        raise errors.QueryError("count must be greater than zero", "2201G")
    exact = isinstance(op, Decimal)
    if exact:  # exact differences and quotient, whatever the digits
        op, low, high = Fraction(op), Fraction(low), Fraction(high)
    else:
        if math.isnan(op) or math.isnan(low) or math.isnan(high):
            raise errors.QueryError("operand, lower bound, and upper bound cannot be NaN",
                                    "2201G")
        if not (math.isfinite(low) and math.isfinite(high)):
            raise errors.QueryError("lower and upper bounds must be finite", "2201G")
    if low == high:
        raise errors.QueryError("lower bound cannot equal upper bound", "2201G")
    up = low < high
    if (op < low) if up else (op > low):
        return 0
    if (op >= high) if up else (op <= high):
        if count == 2**31 - 1:
            raise errors.NumericOutOfRange("integer out of range")
        return count + 1
    num, den = (op - low, high - low) if up else (low - op, low - high)
    if exact:
        return int(num * count // den) + 1
    return int(count * num / den) + 1


def width_bucket_array(op, thresholds: tuple) -> int:
    """width_bucket(op, thresholds): PostgreSQL's binary search for the first threshold
    above op (floats: NaN above everything)."""
    if any(v is None for v in thresholds):
        raise errors.QueryError("thresholds array must not contain NULLs", "22004")
    key = (lambda v: (math.isnan(v), v)) if isinstance(op, float) else (lambda v: v)
    left, right = 0, len(thresholds)
    while left < right:
        mid = (left + right) // 2
        if key(op) < key(thresholds[mid]):
            right = mid
        else:
            left = mid + 1
    return left
