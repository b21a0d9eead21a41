"""numba kernels of window functions over rows sorted by (partition, order) keys.

Rows are numbered 0..n-1 in sorted order. Groups (partitions, peer groups) are given as
start flags; `group_bounds` turns them into each row's [start, end) of its group, and
frames are [lo, hi) row ranges per row (segment/operators/window_eval.py computes them
from the frame clause). Sums of integers and numerics are exact: 128-bit prefix sums
whose differences give any frame's sum in O(1). Floats are summed the way PostgreSQL's
aggregates do without an inverse transition (restart when the frame's head moves, else
extend), so the rounding is the same; min/max also restart-or-extend, from the end of
the partition when frames end there. Everything else (types, NULLs, Arrow arrays) is the
caller's.
"""

from __future__ import annotations

import numba
import numpy as np

from segment.kernels import youngs_cramer as yc

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _first_after(vals, a, b, t, desc, start):
    """The first j in [a, b) whose key is at or past t (start) or beyond t (end), in
    the sort order (a binary search over sorted `vals`)."""
    while a < b:
        m = (a + b) // 2
        x = vals[m]
        if desc:
            after = x <= t if start else x < t
        else:
            after = x >= t if start else x > t
        if after:
            b = m
        else:
            a = m + 1
    return a


@_jit
def group_bounds(flags):
    """For start flags (flags[0] is True): each row's group [start, end)."""
    n = len(flags)
    start = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    s = 0
    for i in range(n):
        if flags[i]:
            s = i
        start[i] = s
    e = n
    for i in range(n - 1, -1, -1):
        end[i] = e
        if flags[i]:
            e = i
    return start, end


@_jit
def prefix_counts(valid):
    """c[i] = number of valid rows before row i (length n + 1)."""
    n = len(valid)
    c = np.zeros(n + 1, np.int64)
    for i in range(n):
        c[i + 1] = c[i] + (1 if valid[i] else 0)
    return c


@_jit
def frame_sums_128(vlo, vhi, lo, hi):
    """Sums over [lo[j], hi[j]) of 128-bit values (vlo: low 64 bits, vhi: high 64 bits,
    two's complement; NULLs given as 0), as (low, high) words."""
    n = len(vlo)
    plo = np.zeros(n + 1, np.uint64)
    phi = np.zeros(n + 1, np.int64)
    for i in range(n):
        a = plo[i] + vlo[i]
        carry = np.int64(1) if a < plo[i] else np.int64(0)
        plo[i + 1] = a
        phi[i + 1] = phi[i] + vhi[i] + carry
    m = len(lo)
    olo = np.empty(m, np.uint64)
    ohi = np.empty(m, np.int64)
    for j in range(m):
        a = plo[hi[j]]
        b = plo[lo[j]]
        borrow = np.int64(1) if a < b else np.int64(0)
        olo[j] = a - b
        ohi[j] = phi[hi[j]] - phi[lo[j]] - borrow
    return olo, ohi


@_jit
def frame_sums_float(v, valid, lo, hi, zero):
    """Float sums over [lo[j], hi[j]), accumulated in row order from each frame's head,
    in the precision of `zero` (float32 for real, as PostgreSQL's float4pl)."""
    m = len(lo)
    out = np.zeros(m, v.dtype)
    acc = zero
    cur_lo = -1
    cur_hi = -1
    for j in range(m):
        if lo[j] != cur_lo or hi[j] < cur_hi:
            acc = zero
            cur_lo = lo[j]
            cur_hi = lo[j]
        for k in range(cur_hi, hi[j]):
            if valid[k]:
                acc += v[k]
        if hi[j] > cur_hi:
            cur_hi = hi[j]
        out[j] = acc
    return out


@_jit
def frame_extremes(codes, valid, lo, hi, want_max, from_end):
    """The row holding the least (greatest) code among valid rows of [lo[j], hi[j]), -1
    when there is none. `from_end` walks backwards (frames that end at a fixed row)."""
    m = len(lo)
    out = np.full(m, -1, np.int64)
    best = np.int64(-1)
    cur_lo = np.int64(-1)
    cur_hi = np.int64(-1)
    for t in range(m):
        j = m - 1 - t if from_end else t
        restart = (hi[j] != cur_hi or lo[j] > cur_lo) if from_end else (
            lo[j] != cur_lo or hi[j] < cur_hi)
        if restart:
            best = -1
            if from_end:
                cur_lo = hi[j]
                cur_hi = hi[j]
            else:
                cur_lo = lo[j]
                cur_hi = lo[j]
        if from_end:
            for k in range(cur_lo - 1, lo[j] - 1, -1):
                if valid[k] and (best < 0 or (codes[k] > codes[best] if want_max
                                              else codes[k] < codes[best])):
                    best = k
            if lo[j] < cur_lo:
                cur_lo = lo[j]
        else:
            for k in range(cur_hi, hi[j]):
                if valid[k] and (best < 0 or (codes[k] > codes[best] if want_max
                                              else codes[k] < codes[best])):
                    best = k
            if hi[j] > cur_hi:
                cur_hi = hi[j]
        out[j] = best
    return out


@_jit
def dense_ranks(peer_flags, part_start):
    """dense_rank(): 1 + the peer groups before this row's within its partition."""
    n = len(peer_flags)
    out = np.empty(n, np.int64)
    r = 0
    for i in range(n):
        if i == part_start[i]:
            r = 1
        elif peer_flags[i]:
            r += 1
        out[i] = r
    return out


_INT64_MAX = np.int64(9223372036854775807)
_INT64_MIN = np.int64(-9223372036854775807 - 1)


@_jit
def range_bounds(vals, isnull, nn_lo, nn_hi, peer_start, peer_end, off, desc, preceding,
                 start, exact):
    """RANGE `off` PRECEDING/FOLLOWING bounds: for each row with a key, the first row of
    its partition's non-NULL keys [nn_lo, nn_hi) whose key is at or past (start) or
    beyond (end) the target key (this row's moved by `off` towards the partition's start
    for PRECEDING); keys ascend unless `desc`. A NULL key's bound is its peer group's.
    Integer targets that overflow lie past every key (`exact`: int64 keys)."""
    n = len(vals)
    out = np.empty(n, np.int64)
    toward_larger = desc == preceding  # DESC PRECEDING and ASC FOLLOWING add the offset
    for i in range(n):
        if isnull[i]:
            out[i] = peer_start[i] if start else peer_end[i]
            continue
        lo = nn_lo[i]
        hi = nn_hi[i]
        v = vals[i]
        past_all = False   # the target lies beyond every key, in the order's direction
        before_all = False
        if exact:
            if toward_larger and v > _INT64_MAX - off:
                if desc:
                    before_all = True
                else:
                    past_all = True
            elif not toward_larger and v < _INT64_MIN + off:
                if desc:
                    past_all = True
                else:
                    before_all = True
        t = v + off if toward_larger else v - off
        if past_all:
            out[i] = hi
            continue
        if before_all:
            out[i] = lo
            continue
        out[i] = _first_after(vals, lo, hi, t, desc, start)
    return out


@_jit
def excluded_float_sums(v, valid, lo, a, b, hi, keep_i, zero):
    """Float sums over [lo, a), the current row if keep_i, then [b, hi) (EXCLUDE)."""
    m = len(lo)
    out = np.zeros(m, v.dtype)
    for j in range(m):
        acc = zero
        for t in range(lo[j], a[j]):
            if valid[t]:
                acc += v[t]
        if keep_i[j] and valid[j]:
            acc += v[j]
        for t in range(b[j], hi[j]):
            if valid[t]:
                acc += v[t]
        out[j] = acc
    return out


@_jit
def excluded_extremes(codes, valid, lo, a, b, hi, keep_i, want_max):
    """The row of the least (greatest) code among [lo, a), the current row if keep_i,
    and [b, hi); -1 when none is valid."""
    m = len(lo)
    out = np.full(m, -1, np.int64)
    for j in range(m):
        best = -1
        for t in range(lo[j], hi[j]):
            if t >= a[j] and t < b[j] and not (keep_i[j] and t == j):
                continue
            if valid[t] and (best < 0 or (codes[t] > codes[best] if want_max
                                          else codes[t] < codes[best])):
                best = t
        out[j] = best
    return out


@_jit
def range_bounds_to(vals, isnull, nn_lo, nn_hi, peer_start, peer_end, targets, desc, start):
    """range_bounds with each row's target key given (RANGE offsets of months)."""
    n = len(vals)
    out = np.empty(n, np.int64)
    for i in range(n):
        if isnull[i]:
            out[i] = peer_start[i] if start else peer_end[i]
            continue
        out[i] = _first_after(vals, nn_lo[i], nn_hi[i], targets[i], desc, start)
    return out


@_jit
def frame_rows(lo, a, keep_i, b, hi):
    """The rows of every frame, [lo, a), the current row if keep_i, then [b, hi) (a == b
    == hi without EXCLUDE), as offsets into one array of row numbers."""
    m = len(lo)
    offsets = np.zeros(m + 1, np.int64)
    for j in range(m):
        offsets[j + 1] = offsets[j] + (a[j] - lo[j]) + (1 if keep_i[j] else 0) + (hi[j] - b[j])
    rows = np.empty(offsets[m], np.int64)
    for j in range(m):
        t = offsets[j]
        for r in range(lo[j], a[j]):
            rows[t] = r
            t += 1
        if keep_i[j]:
            rows[t] = j
            t += 1
        for r in range(b[j], hi[j]):
            rows[t] = r
            t += 1
    return offsets, rows


@_jit
def frame_regressions(xs, ys, ok, lo, a, keep_i, b, hi, excluding):
    """float8_regr_accum states (segment/kernels/youngs_cramer.py) of every frame's pairs
    where `ok`, in frame order: restarted when the frame's head moves (or on every row,
    `excluding`), else extended, as PostgreSQL evaluates an aggregate without an inverse
    transition, so the rounding is the same. Also whether finite inputs overflowed."""
    m = len(lo)
    st = np.zeros((m, yc.STATE))
    cur = np.zeros((1, yc.STATE))
    overflow = False
    cur_lo = -1
    cur_hi = -1
    for j in range(m):
        if excluding:
            cur[0, :] = 0.0
            for r in range(lo[j], a[j]):
                if ok[r]:
                    overflow |= yc.accumulate(cur, 0, xs[r], ys[r])
            if keep_i[j] and ok[j]:
                overflow |= yc.accumulate(cur, 0, xs[j], ys[j])
            for r in range(b[j], hi[j]):
                if ok[r]:
                    overflow |= yc.accumulate(cur, 0, xs[r], ys[r])
        else:
            if lo[j] != cur_lo or hi[j] < cur_hi:
                cur[0, :] = 0.0
                cur_lo = lo[j]
                cur_hi = lo[j]
            for r in range(cur_hi, hi[j]):
                if ok[r]:
                    overflow |= yc.accumulate(cur, 0, xs[r], ys[r])
            if hi[j] > cur_hi:
                cur_hi = hi[j]
        st[j, :] = cur[0, :]
    return st, overflow
