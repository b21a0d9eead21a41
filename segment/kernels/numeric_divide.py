"""Quotients of unconstrained numerics, each row at its own select_div_scale, in one
compiled pass (segment/kernels/expr_numeric.py `_dynamic_divide` calls it).

Per row: the dividend and divisor are taken at their own display scales (exact: the digits
below are zeros), the dividend is multiplied by 10^k so that the integer quotient has the
row's result scale r, and that 256-bit number is divided by the divisor: a divisor within
64 bits by four 128-by-64-bit steps (Hacker's Delight `divlu`), a wider one by Knuth's
algorithm D on 32-bit limbs (`divmnu`). The quotient is rounded half away from zero (as
PostgreSQL's div_var with round=true) and written at the storage scale S of the result
type (a row whose scale r is beyond S only when its digits past S are zeros: it keeps
display scale r). A quotient that needs more than decimal128's 38 digits at S, or nonzero
digits past S, is an overflow (22003);
a row whose scaled dividend passes 256 bits is left to the general path (the caller's)."""

from __future__ import annotations

import numba
import numpy as np

from segment.kernels.expr_kernels import _divlu, _magnitude, _mul64, _signed

DIV_OK, DIV_BY_ZERO, DIV_OVERFLOW, DIV_GENERAL, DIV_INEXACT = 0, 1, 2, 3, 4
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


_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_B = np.uint64(1) << _S32


@numba.njit(inline="always")
def _limbs_nlz(x):  # pragma: no cover - compiled
    """Leading zero bits of a 32-bit limb (x > 0)."""
    n = np.uint64(0)
    while (x << n) & np.uint64(0x80000000) == _ZERO:
        n += _ONE
    return n


@numba.njit(nogil=True, cache=True)
def _divide_wide(words, bhi, blo, u, v, un, vn, q):  # pragma: no cover - compiled
    """The 256-bit `words` (w3, w2, w1, w0) over a divisor of more than 64 bits (bhi > 0),
    by Knuth's algorithm D on 32-bit limbs (Hacker's Delight divmnu): the quotient's low
    two words, whether it passes 128 bits, and whether to round it up (half away)."""
    for i in range(4):  # little-endian 32-bit limbs
        w = words[3 - i]
        u[2 * i], u[2 * i + 1] = w & _M32, w >> _S32
    v[0], v[1], v[2], v[3] = blo & _M32, blo >> _S32, bhi & _M32, bhi >> _S32
    n = 4 if v[3] != _ZERO else 3
    m = 8
    while m > 0 and u[m - 1] == _ZERO:
        m -= 1
    if m < n:  # the quotient is 0; the remainder is the dividend itself
        rem_hi, rem_lo = words[2], words[3]
        for i in range(8):
            q[i] = _ZERO
    else:
        sh = _limbs_nlz(v[n - 1])
        back = np.uint64(32) - sh
        for i in range(n - 1, 0, -1):
            vn[i] = ((v[i] << sh) | (v[i - 1] >> back)) & _M32 if sh else v[i]
        vn[0] = (v[0] << sh) & _M32
        un[m] = (u[m - 1] >> back) if sh else _ZERO
        for i in range(m - 1, 0, -1):
            un[i] = ((u[i] << sh) | (u[i - 1] >> back)) & _M32 if sh else u[i]
        un[0] = (u[0] << sh) & _M32
        for i in range(8):
            q[i] = _ZERO
        for j in range(m - n, -1, -1):
            num = (un[j + n] << _S32) | un[j + n - 1]
            qhat = num // vn[n - 1]
            rhat = num - qhat * vn[n - 1]
            while qhat >= _B or qhat * vn[n - 2] > ((rhat << _S32) | un[j + n - 2]):
                qhat -= _ONE
                rhat += vn[n - 1]
                if rhat >= _B:
                    break
            carry, borrow = _ZERO, _ZERO  # un[j..j+n] -= qhat * vn
            for i in range(n):
                p = qhat * vn[i] + carry
                carry = p >> _S32
                take = (p & _M32) + borrow
                if un[i + j] >= take:
                    un[i + j] -= take
                    borrow = _ZERO
                else:
                    un[i + j] = un[i + j] + _B - take
                    borrow = _ONE
            take = carry + borrow
            negative = un[j + n] < take
            un[j + n] = (un[j + n] - take) & _M32 if not negative else \
                (un[j + n] + _B - (take & _M32)) & _M32
            q[j] = qhat
            if negative:  # qhat was one too large: add the divisor back
                q[j] -= _ONE
                carry = _ZERO
                for i in range(n):
                    t = un[i + j] + vn[i] + carry
                    un[i + j] = t & _M32
                    carry = t >> _S32
                un[j + n] = (un[j + n] + carry) & _M32
        for i in range(n):  # the remainder, unnormalized
            un[i] = ((un[i] >> sh) | (un[i + 1] << back)) & _M32 if sh else un[i]
        for i in range(n, 4):
            un[i] = _ZERO
        rem_lo = un[0] | (un[1] << _S32)
        rem_hi = un[2] | (un[3] << _S32)
    # half away from zero: remainder >= divisor - remainder
    dlo = blo - rem_lo
    dhi = bhi - rem_hi - (_ONE if blo < rem_lo else _ZERO)
    up = rem_hi > dhi or (rem_hi == dhi and rem_lo >= dlo)
    q0 = q[0] | (q[1] << _S32)
    q1 = q[2] | (q[3] << _S32)
    wide = q[4] != _ZERO or q[5] != _ZERO or q[6] != _ZERO or q[7] != _ZERO
    return q1, q0, wide, up


@numba.njit(cache=True, nogil=True)
def divide_rows(a_lo, a_hi, a_storage, a_scale, b_lo, b_hi, b_storage, b_scale, rscale,
                storage, valid, out_lo, out_hi):  # pragma: no cover - compiled
    """out[i] = round(a[i] / b[i], rscale[i]) held at `storage` fractional digits. a and b
    are 128-bit words at their storage scales with per-row display scales (arrays of
    length 1 broadcast). Returns (DIV_* status, the row it stopped at)."""
    out_lo[:] = 0  # NULL slots hold zeros
    out_hi[:] = 0
    words, u, v, q = (np.zeros(4, np.uint64), np.zeros(8, np.uint64), np.zeros(4, np.uint64),
                      np.zeros(8, np.uint64))
    un, vn = np.zeros(9, np.uint64), np.zeros(4, np.uint64)
    for i in np.flatnonzero(valid):
        ja, jb = _row(a_lo, i), _row(b_lo, i)
        sa, sb = a_scale[_row(a_scale, i)], b_scale[_row(b_scale, i)]
        r = rscale[i]
        bhi, blo = _magnitude(b_lo[jb], b_hi[jb])
        bhi, blo = _shrink(bhi, blo, b_storage - sb)
        if bhi == _ZERO and blo == _ZERO:
            return DIV_BY_ZERO, i
        ahi, alo = _magnitude(a_lo[ja], a_hi[ja])
        ahi, alo = _shrink(ahi, alo, a_storage - sa)
        # a / b at scale r: a_own * 10^(sb + r - sa) / b_own, where r >= sa (select_div_scale)
        k = sb + r - sa
        w3, w2, w1, w0 = _ZERO, _ZERO, ahi, alo
        while k > 0:
            step = min(k, 19)
            p = _POW10[step]
            if w1 == _ZERO and w2 == _ZERO and w3 == _ZERO:  # a 64-bit value: one product
                w1, w0 = _mul64(w0, p)
                k -= step
                continue
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
        if bhi == _ZERO and w3 == _ZERO and w2 == _ZERO:  # 128 by 64 bits: skip zero words
            q3, q2 = _ZERO, _ZERO
            if w1 < blo:
                q1, rem = _ZERO, w1
            else:
                q1, rem = _divlu(_ZERO, w1, blo)
            if rem == _ZERO:
                q0, rem = w0 // blo, w0 % blo
            else:
                q0, rem = _divlu(rem, w0, blo)
            up = rem >= blo - rem  # half away from zero
        elif bhi == _ZERO:  # four 128-by-64-bit steps
            q3, rem = _divlu(_ZERO, w3, blo)
            q2, rem = _divlu(rem, w2, blo)
            q1, rem = _divlu(rem, w1, blo)
            q0, rem = _divlu(rem, w0, blo)
            up = rem >= blo - rem  # half away from zero
        else:
            words[0], words[1], words[2], words[3] = w3, w2, w1, w0
            q1, q0, wide, up = _divide_wide(words, bhi, blo, u, v, un, vn, q)
            q3, q2 = (_ONE if wide else _ZERO), _ZERO
        if up:
            q0 += _ONE
            if q0 == _ZERO:
                q1 += _ONE
                if q1 == _ZERO:
                    q2 += _ONE
        if q3 != _ZERO or q2 != _ZERO:
            return DIV_OVERFLOW, i
        if r > storage:
            # more fractional digits than the storage scale: held exactly only when those
            # are zeros (avg(int8) of 0, 1 or 1, 2: 20 digits, 19 held)
            if r - storage > 19:
                return DIV_INEXACT, i
            d = _POW10[r - storage]
            qhi = q1 // d
            qlo, rem = _divlu(q1 - qhi * d, q0, d)
            if rem != _ZERO:
                return DIV_INEXACT, i
            q1, q0, r = qhi, qlo, storage
        # held at `storage` digits it must stay below 10^38
        e = 38 - (storage - r)
        if e < 0 or q1 > _POW_HI[e] or (q1 == _POW_HI[e] and q0 >= _POW_LO[e]):
            return DIV_OVERFLOW, i
        mhi, mlo = _grow(q1, q0, storage - r)
        out_lo[i], out_hi[i] = _signed(mhi, mlo, (a_hi[ja] < 0) != (b_hi[jb] < 0))
    return DIV_OK, valid.shape[0]
