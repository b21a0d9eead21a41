"""Exact numeric helpers for aggregation: scaled integers <-> decimal128, range-checked
narrowing, and the exact, rounded quotient sum / count that avg() of integers and
numerics needs.

Values are *unscaled* integers plus a scale known to the caller (12.34 at scale 2 is
1234), held as int64 or decimal128(38, 0) arrays; nothing here goes through floats. The
quotient is vectorized with numpy (long division digit by digit, then a 64x64 -> 128-bit
multiply into the decimal128 buffer); Python integers are the fallback for sums that no
longer fit int64.
"""

from __future__ import annotations

import decimal

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from segment.kernels import expr_kernels

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_MASK32 = np.uint64(0xFFFFFFFF)


def from_int64(arr: pa.Array) -> pa.Array:
    """decimal128(38, 0) of an int64 array, each value sign-extended into the high word in
    one compiled pass (Arrow's cast checks every value against the precision: 40 ms for
    5M values)."""
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([from_int64(c) for c in arr.chunks], pa.decimal128(38, 0))
    n = len(arr)
    validity, data = arr.buffers()[0], arr.buffers()[1]
    if arr.type != pa.int64() or (validity is not None and arr.offset % 8):
        return arr.cast(pa.decimal128(38, 0))
    v = np.frombuffer(data, dtype=np.int64, count=n, offset=arr.offset * 8)
    out = np.empty(2 * n, dtype=np.int64)
    expr_kernels.int64_to_words(v, out)
    if validity is not None:
        validity = validity.slice(arr.offset // 8)
    return pa.Array.from_buffers(pa.decimal128(38, 0), n, [validity, pa.py_buffer(out)],
                                 null_count=arr.null_count)


@numba.njit(cache=True, nogil=True)
def _sum128(words, valid):  # pragma: no cover - compiled
    """The two's-complement 128-bit sum of decimal128 values (low, high words), and
    whether it overflowed 128 bits."""
    lo = np.uint64(0)
    hi = np.int64(0)
    overflow = False
    for i in range(words.shape[0]):
        if valid.shape[0] and not valid[i]:
            continue
        a = np.uint64(words[i, 0])
        s = lo + a
        carry = np.int64(1) if s < lo else np.int64(0)
        lo = s
        b = words[i, 1]
        t = hi + b + carry
        # Signed overflow of the high word: both operands of one sign, the result not.
        if (hi >= 0) == (b >= 0) and (t >= 0) != (hi >= 0):
            overflow = True
        hi = t
    return lo, hi, overflow


@numba.njit(cache=True, nogil=True)
def _sum_int64(v, valid):  # pragma: no cover - compiled
    """The 128-bit sum of int64 values (low, high words): it cannot overflow for fewer
    than 2**64 values."""
    lo = np.uint64(0)
    hi = np.int64(0)
    for i in range(v.shape[0]):
        if valid.shape[0] and not valid[i]:
            continue
        a = np.uint64(v[i])
        s = lo + a
        hi += (v[i] >> 63) + (np.int64(1) if s < lo else np.int64(0))
        lo = s
    return lo, hi


def _valid_flags(arr: pa.Array) -> np.ndarray:
    """Which values are not NULL, as the sum loops read it (empty: all of them)."""
    if not arr.null_count:
        return np.zeros(0, dtype=np.bool_)
    return arr.is_valid().to_numpy(zero_copy_only=False)


def exact_int64_sum(arr: pa.Array) -> int | None:
    """The exact sum of an int64 array as a Python int (None when it has no values):
    no widened copy of the values is made."""
    if arr.null_count == len(arr):
        return None
    v = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=len(arr), offset=arr.offset * 8)
    lo, hi = _sum_int64(v, _valid_flags(arr))
    return (int(hi) << 64) + int(lo)


def exact_sum(arr: pa.Array) -> int | None:
    """The exact sum of a decimal128 array's unscaled values as a Python int, None when
    it has no values or its sum leaves 128 bits (the caller then goes Arrow's way)."""
    if arr.null_count == len(arr):
        return None
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=2 * len(arr),
                          offset=arr.offset * 16).reshape(-1, 2)
    lo, hi, overflow = _sum128(words, _valid_flags(arr))
    total = (int(hi) << 64) + int(lo)
    return None if overflow or abs(total) >= 10 ** 38 else total


def unscaled_decimal(unscaled: int, scale: int) -> decimal.Decimal:
    """The Decimal whose unscaled value at `scale` is `unscaled` (exact: no context)."""
    return decimal.Decimal(f"{unscaled}e-{scale}")


def with_scale(unscaled: pa.Array, scale: int) -> pa.Array:
    """decimal128(38, scale) whose unscaled values are those of `unscaled` (no rescaling)."""
    if not pa.types.is_decimal(unscaled.type):
        unscaled = unscaled.cast(pa.decimal128(38, 0))
    if unscaled.type.scale == scale and unscaled.type.precision == 38:
        return unscaled
    return pa.Array.from_buffers(pa.decimal128(38, scale), len(unscaled), unscaled.buffers(),
                                 offset=unscaled.offset)


def rescale(dec: pa.Array, scale: int) -> pa.Array:
    """A decimal128 array at another scale; fewer digits round half away from zero."""
    if dec.type.scale == scale:
        return dec
    if scale < dec.type.scale:
        dec = pc.round(dec, ndigits=scale, round_mode="half_towards_infinity")
    return dec.cast(pa.decimal128(38, scale))


def to_int64(unscaled: pa.Array, message: str) -> pa.Array:
    """int64 from unscaled int64/decimal values; NumericOutOfRange(message) if one does not fit."""
    if pa.types.is_integer(unscaled.type):
        return unscaled.cast(pa.int64())
    lo_hi = pc.min_max(unscaled).as_py()
    lo, hi = lo_hi["min"], lo_hi["max"]
    if lo is not None and (lo < INT64_MIN or hi > INT64_MAX):
        raise errors.NumericOutOfRange(message)
    return with_scale(unscaled, 0).cast(pa.int64())


def max_abs(arr: pa.Array) -> int:
    """The largest |value| of an integer array (0 when it has no values)."""
    mm = pc.min_max(arr).as_py()
    if mm["min"] is None:
        return 0
    return max(abs(int(mm["min"])), abs(int(mm["max"])))


def exact_quotient(sums: pa.Array, counts: pa.Array, sum_scale: int, scale: int) -> pa.Array:
    """round(sum / count) at `scale` as decimal128(38, scale), rounding half away from zero.

    `sums` are unscaled values at `sum_scale`: int64 or decimal128(38, 0) (see with_scale);
    a count of 0 gives NULL.
    """
    n = len(sums)
    valid = pc.and_(pc.is_valid(sums), pc.greater(counts.fill_null(0), 0))
    e = scale - sum_scale
    if pa.types.is_integer(sums.type) and 0 <= e <= 18:
        s = sums.fill_null(0).cast(pa.int64()).to_numpy(zero_copy_only=False)
        c = counts.fill_null(1).cast(pa.int64()).to_numpy(zero_copy_only=False).copy()
        c[c <= 0] = 1
        data = _quotient_int128(s, c, e)
        out = pa.Array.from_buffers(pa.decimal128(38, scale), n, [None, pa.py_buffer(data)])
        valid = valid.fill_null(False)
        if valid.true_count == n:
            return out
        return pc.if_else(valid, out, pa.scalar(None, out.type))
    return _quotient_python(sums, counts, sum_scale, scale, valid)


def _quotient_int128(s: np.ndarray, c: np.ndarray, e: int) -> bytes:
    """Little-endian 128-bit two's complement of round(s * 10**e / c), vectorized."""
    neg = s < 0
    a = np.abs(s.astype(np.int64)).astype(np.uint64)  # |INT64_MIN| wraps to 2**63: right in uint64
    cu = c.astype(np.uint64)
    q = a // cu
    r = a - q * cu
    frac = np.zeros_like(q)
    for _ in range(e):
        r = r * np.uint64(10)
        d = r // cu
        r = r - d * cu
        frac = frac * np.uint64(10) + d
    up = (r * np.uint64(2)) >= cu  # the remainder decides rounding: half away from zero
    frac = frac + up.astype(np.uint64)
    carry = frac == np.uint64(10 ** e)
    frac[carry] = 0
    q = q + carry.astype(np.uint64)
    # value = q * 10**e + frac in 128 bits, from 32-bit limbs
    b = np.uint64(10 ** e)
    b_lo, b_hi = b & _MASK32, b >> np.uint64(32)
    q_lo, q_hi = q & _MASK32, q >> np.uint64(32)
    p0, p1, p2, p3 = q_lo * b_lo, q_lo * b_hi, q_hi * b_lo, q_hi * b_hi
    mid = (p0 >> np.uint64(32)) + (p1 & _MASK32) + (p2 & _MASK32)
    lo = (p0 & _MASK32) | (mid << np.uint64(32))
    hi = p3 + (p1 >> np.uint64(32)) + (p2 >> np.uint64(32)) + (mid >> np.uint64(32))
    lo2 = lo + frac
    hi = hi + (lo2 < lo).astype(np.uint64)
    lo = lo2
    # two's complement negation where the sum was negative
    nlo = ~lo + np.uint64(1)
    nhi = ~hi + (nlo == 0).astype(np.uint64)
    lo = np.where(neg, nlo, lo)
    hi = np.where(neg, nhi, hi)
    out = np.empty(2 * len(s), dtype=np.uint64)
    out[0::2], out[1::2] = lo, hi
    return out.tobytes()


def _quotient_python(sums, counts, sum_scale, scale, valid) -> pa.Array:
    e = scale - sum_scale
    out = []
    for sv, cv, ok in zip(sums.to_pylist(), counts.to_pylist(), valid.to_pylist()):
        if not ok:
            out.append(None)
            continue
        num = int(sv)
        den = cv
        if e >= 0:
            num *= 10 ** e
        else:
            den *= 10 ** -e
        q, r = divmod(abs(num), den)
        if 2 * r >= den:
            q += 1
        out.append(decimal.Decimal(f"{-q if num < 0 else q}e-{scale}"))
    return pa.array(out, pa.decimal128(38, scale))
