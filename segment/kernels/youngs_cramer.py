"""PostgreSQL's float8_regr_accum and its final functions: the Youngs-Cramer sums of
pairs (x, y) that regr_*, corr, covar_* and (over (x, x)) the float stddev/variance
aggregates finish from. One state is six float64s: N, Sx, Sxx, Sy, Syy, Sxy.

`accumulate` adds one pair to a state exactly as PostgreSQL does (so the rounding is the
same when pairs come in the same order), with its rules for infinities and NaN: a
dependent sum that overflows becomes NaN, and the overflow of finite inputs is reported
(22003 for the caller). The aggregate over lists (segment/kernels/expr_list_agg.py) and
the window function over frames (segment/kernels/window_frames.py) share it.
"""

from __future__ import annotations

import numba
import numpy as np

from planner import errors

STATE = 6


@numba.njit(cache=True, nogil=True)
def accumulate(st, g, x, y):  # pragma: no cover - compiled
    """Add (x, y) to state row g of `st`; True where finite inputs overflowed."""
    N, Sx, Sxx = st[g, 0], st[g, 1], st[g, 2]
    Sy, Syy, Sxy = st[g, 3], st[g, 4], st[g, 5]
    px, py = Sx, Sy
    overflow = False
    N += 1.0
    Sx += x
    Sy += y
    if N > 1.0:
        tx = x * N - Sx
        ty = y * N - Sy
        scale = 1.0 / (N * (N - 1.0))
        Sxx += tx * tx * scale
        Syy += ty * ty * scale
        Sxy += tx * ty * scale
        if np.isinf(Sx) or np.isinf(Sxx) or np.isinf(Sy) or np.isinf(Syy) or np.isinf(Sxy):
            if ((np.isinf(Sx) or np.isinf(Sxx)) and not np.isinf(px) and not np.isinf(x)) or \
                    ((np.isinf(Sy) or np.isinf(Syy)) and not np.isinf(py)
                     and not np.isinf(y)) or \
                    (np.isinf(Sxy) and not np.isinf(px) and not np.isinf(x)
                     and not np.isinf(py) and not np.isinf(y)):
                overflow = True
            if np.isinf(Sxx):
                Sxx = np.nan
            if np.isinf(Syy):
                Syy = np.nan
            if np.isinf(Sxy):
                Sxy = np.nan
    else:
        # a first input of Inf or NaN: the dependent sums are NaN, not 0
        if np.isnan(x) or np.isinf(x):
            Sxx = Sxy = np.nan
        if np.isnan(y) or np.isinf(y):
            Syy = Sxy = np.nan
    st[g, 0], st[g, 1], st[g, 2] = N, Sx, Sxx
    st[g, 3], st[g, 4], st[g, 5] = Sy, Syy, Sxy
    return overflow


def final(name: str, st: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, NULL mask) of PostgreSQL's final function `name` over the states."""
    N, Sx, Sxx, Sy, Syy, Sxy = (st[:, j] for j in range(STATE))
    none = N < 1.0
    with np.errstate(all="ignore"):
        if name == "regr_sxx":
            v = Sxx
        elif name == "regr_syy":
            v = Syy
        elif name == "regr_sxy":
            v = Sxy
        elif name == "regr_avgx":
            v = Sx / N
        elif name == "regr_avgy":
            v = Sy / N
        elif name == "covar_pop":
            v = Sxy / N
        elif name == "covar_samp":
            none = N < 2.0
            v = Sxy / (N - 1.0)
        elif name == "corr":
            none = none | (Sxx == 0) | (Syy == 0)
            v = Sxy / np.sqrt(Sxx * Syy)
        elif name == "regr_r2":
            none = none | (Sxx == 0)
            v = np.where(Syy == 0, 1.0, (Sxy * Sxy) / (Sxx * Syy))
        elif name == "regr_slope":
            none = none | (Sxx == 0)
            v = Sxy / Sxx
        elif name == "regr_intercept":
            none = none | (Sxx == 0)
            v = (Sy - Sx * Sxy / Sxx) / N
        else:
            raise errors.InternalError(f"no regression final function {name}")
    return np.where(none, 0.0, v), none
