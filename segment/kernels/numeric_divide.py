"""Quotients of unconstrained numerics, each row at its own select_div_scale, in one
compiled pass (segment/kernels/expr_numeric.py `_dynamic_divide` calls it).

Per row: the dividend and divisor are taken at their own display scales (exact: the digits
below are zeros), the dividend is multiplied by 10^k so that the integer quotient has the
row's result scale r, and that 256-bit number is divided by the divisor when its digits
fit 64 bits (Hacker's Delight `divlu` over four words), rounded half away from zero (as
PostgreSQL's div_var with round=true), and written at the storage scale S of the result
type. A quotient that needs more than decimal128's 38 digits at S is an overflow (22003);
a row whose divisor has more than 64 bits of digits, or whose scaled dividend passes 256
bits, is left to the general path (the caller's), which handles any size.
"""

from __future__ import annotations

import numba
import numpy as np

from segment.kernels.expr_kernels import _divlu, _magnitude, _mul64, _signed

DIV_OK, DIV_BY_ZERO, DIV_OVERFLOW, DIV_GENERAL = 0, 1, 2, 3
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_TOP = np.uint64(1) << np.uint64(63)
_POW10 = np.array([10**i for i in range(20)], dtype=np.uint64)
# 10^0 .. 10^38 as (high, low) 64-bit words: the bound of a 38-digit value at each scale
_POW_HI = np.array([10**k >> 64 for k in range(39)], dtype=np.uint64)
_POW_LO = np.array([10**k & ((1 << 64) - 1) for k in range(39)], dtype=np.uint64)


@numba.njit(inline="always")
def _row(arr, i):  # pragma: no cover - compiled
    """Row i of an array that may broadcast (length 1)."""
    return i if arr.shape[0] > 1 else 0


@numba.njit(inline="always")
def _shrink(mhi, mlo, digits):  # pragma: no cover - compiled
    """(mhi, mlo) / 10^digits for a 128-bit magnitude (exact for the callers: the digits
    dropped are zeros)."""
    while digits > 0:
        step = min(digits, 19)
        d = _POW10[step]
        qhi = mhi // d
        qlo, _ = _divlu(mhi - qhi * d, mlo, d)
        mhi, mlo = qhi, qlo
        digits -= step
    return mhi, mlo


@numba.njit(inline="always")
def _grow(mhi, mlo, digits):  # pragma: no cover - compiled
    """(mhi, mlo) * 10^digits as 128 bits; the caller has checked that it fits."""
    while digits > 0:
        step = min(digits, 19)
        phi, plo = _mul64(mlo, _POW10[step])
        _, hlo = _mul64(mhi, _POW10[step])
        mhi, mlo = hlo + phi, plo
        digits -= step
    return mhi, mlo


@numba.njit(cache=True, nogil=True)
def divide_rows(a_lo, a_hi, a_storage, a_scale, b_lo, b_hi, b_storage, b_scale, rscale,
                storage, valid, out_lo, out_hi):  # pragma: no cover - compiled
    """out[i] = round(a[i] / b[i], rscale[i]) held at `storage` fractional digits. a and b
    are 128-bit words at their storage scales with per-row display scales (arrays of
    length 1 broadcast). Returns (DIV_* status, the row it stopped at)."""
    out_lo[:] = 0  # NULL slots hold zeros
    out_hi[:] = 0
    for i in np.flatnonzero(valid):
        ja, jb = _row(a_lo, i), _row(b_lo, i)
        sa, sb = a_scale[_row(a_scale, i)], b_scale[_row(b_scale, i)]
        r = rscale[i]
        bhi, blo = _magnitude(b_lo[jb], b_hi[jb])
        bhi, blo = _shrink(bhi, blo, b_storage - sb)
        if bhi != _ZERO:
            return DIV_GENERAL, i
        if blo == _ZERO:
            return DIV_BY_ZERO, i
        ahi, alo = _magnitude(a_lo[ja], a_hi[ja])
        ahi, alo = _shrink(ahi, alo, a_storage - sa)
        # a / b at scale r: a_own * 10^(sb + r - sa) / b_own, where r >= sa (select_div_scale)
        k = sb + r - sa
        w3, w2, w1, w0 = _ZERO, _ZERO, ahi, alo
        while k > 0:
            step = min(k, 19)
            p = _POW10[step]
            c1, x0 = _mul64(w0, p)
            h1, l1 = _mul64(w1, p)
            x1 = l1 + c1
            c2 = h1 + (_ONE if x1 < l1 else _ZERO)
            h2, l2 = _mul64(w2, p)
            x2 = l2 + c2
            c3 = h2 + (_ONE if x2 < l2 else _ZERO)
            h3, l3 = _mul64(w3, p)
            x3 = l3 + c3
            if h3 != _ZERO or x3 < l3:
                return DIV_GENERAL, i
            w3, w2, w1, w0 = x3, x2, x1, x0
            k -= step
        q3, rem = _divlu(_ZERO, w3, blo)
        q2, rem = _divlu(rem, w2, blo)
        q1, rem = _divlu(rem, w1, blo)
        q0, rem = _divlu(rem, w0, blo)
        if rem >= blo - rem:  # half away from zero
            q0 += _ONE
            if q0 == _ZERO:
                q1 += _ONE
                if q1 == _ZERO:
                    q2 += _ONE
        # held at `storage` digits it must stay below 10^38
        e = 38 - (storage - r)
        if q3 != _ZERO or q2 != _ZERO or e < 0 or q1 > _POW_HI[e] or (
                q1 == _POW_HI[e] and q0 >= _POW_LO[e]):
            return DIV_OVERFLOW, i
        mhi, mlo = _grow(q1, q0, storage - r)
        out_lo[i], out_hi[i] = _signed(mhi, mlo, (a_hi[ja] < 0) != (b_hi[jb] < 0))
    return DIV_OK, valid.shape[0]
