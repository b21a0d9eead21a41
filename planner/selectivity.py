"""Selectivity of a predicate: the fraction of rows it keeps, from column statistics.

PostgreSQL's clausesel.c, simplified to the statistics raympp keeps (ANALYZE's null
fraction, distinct estimate, min, max and most common values per column; no histograms):
- `column = constant`: a most common value's own fraction; else (1 - null fraction - the
  common values' fractions) / the other distinct values, 0 when the constant lies
  outside [min, max]; `<>` its complement; `column IN (constants)` the sum over them;
- `column < constant` (and <=, >, >=): the share of [min, max] below the constant,
  interpolated linearly for numbers, dates and timestamps; a lower and an upper bound
  on one column AND-ed together make one range (lo + hi - 1, as PostgreSQL's range
  pairs), not the product of two independent thirds;
- `column = column`: 1 / the larger distinct count; IS [NOT] NULL: the null fraction;
- AND multiplies (independence), OR is s1 + s2 - s1*s2, NOT is 1 - s;
- LIKE a pattern without wildcards is an equality; other patterns keep DEFAULT_MATCH;
- anything else keeps DEFAULT_INEQ (PostgreSQL's DEFAULT_INEQ_SEL), and so does a
  column without statistics, equality included: where PostgreSQL guesses 0.005 for an
  equality, raympp stays cautious, because an underestimate makes it broadcast a big
  side to every segment; AND-ed conjuncts without statistics count once, not each.
What it leaves to others: where the column statistics come from (planner/estimate.py
traces output columns to table columns).
"""

from __future__ import annotations

import datetime
import decimal
from typing import Callable

from planner import expr as ex
from planner.schema import ColumnStats
from planner.types import Kind, SqlType

DEFAULT_EQ = 0.005     # PostgreSQL's DEFAULT_EQ_SEL
DEFAULT_INEQ = 1 / 3   # DEFAULT_INEQ_SEL
DEFAULT_MATCH = 0.1    # a LIKE pattern with wildcards
DEFAULT_RANGE = 0.005  # DEFAULT_RANGE_INEQ_SEL: a range pair whose bounds are unknown
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)

# stats_of(input column index) -> (its statistics, its type), or None when unknown
StatsOf = Callable[[int], "tuple[ColumnStats, SqlType] | None"]

_FLIP = {ex.Func.LT: ex.Func.GT, ex.Func.LE: ex.Func.GE, ex.Func.GT: ex.Func.LT,
         ex.Func.GE: ex.Func.LE, ex.Func.EQ: ex.Func.EQ, ex.Func.NE: ex.Func.NE}
_RANGE = (ex.Func.LT, ex.Func.LE, ex.Func.GT, ex.Func.GE)


def selectivity(pred: ex.Expr, stats_of: StatsOf) -> float:
    """The estimated fraction of rows for which `pred` is true, in [0, 1]."""
    return min(1.0, max(0.0, _sel(pred, stats_of)))


def _sel(p: ex.Expr, stats_of: StatsOf) -> float:
    if isinstance(p, ex.Literal):
        return 1.0 if p.value is True else 0.0
    if isinstance(p, ex.Call):
        if p.func is ex.Func.AND:
            return _and(p.args, stats_of)
        if p.func is ex.Func.OR:
            s = 0.0
            for a in p.args:
                x = _sel(a, stats_of)
                s = s + x - s * x
            return s
        if p.func is ex.Func.NOT:
            return 1.0 - _sel(p.args[0], stats_of)
        if p.func in _FLIP and len(p.args) == 2:
            return _comparison(p, stats_of)
    if isinstance(p, ex.InList):
        col = _column(p.arg, stats_of)
        s = min(1.0, sum(_equal(col, v.value) for v in p.values if isinstance(v, ex.Literal))
                + DEFAULT_EQ * sum(not isinstance(v, ex.Literal) for v in p.values))
        return 1.0 - s - _null_frac(col) if p.negated else s
    if isinstance(p, ex.IsNull):
        col = _column(p.arg, stats_of)
        frac = _null_frac(col) if col is not None else DEFAULT_EQ
        return 1.0 - frac if p.negated else frac
    if isinstance(p, ex.Like):
        s = _like(p, stats_of)
        return 1.0 - s if p.negated else s
    return DEFAULT_INEQ


def _and(args, stats_of: StatsOf) -> float:
    """Product of the conjuncts, with a lower and an upper bound on one column as one
    range; the conjuncts over columns without statistics together keep DEFAULT_INEQ
    (as one unknown filter did before there were estimates: a product of guesses would
    shrink with every conjunct)."""
    s = 1.0
    blind = False
    bounds: dict[int, list] = {}  # column -> [lower selectivity, upper selectivity]
    for a in args:
        if not _informed(a, stats_of):
            blind = True
            continue
        b = _bound(a, stats_of)
        if b is None:
            s *= _sel(a, stats_of)
            continue
        index, upper, sel = b
        pair = bounds.setdefault(index, [None, None])
        slot = 1 if upper else 0
        pair[slot] = sel if pair[slot] is None else min(pair[slot], sel)
    for index, (lo, hi) in bounds.items():
        if lo is not None and hi is not None:
            col = stats_of(index)
            known = col is not None and col[0].min is not None
            both = lo + hi - 1.0 + (_null_frac(col) if col is not None else 0.0)
            s *= max(both, 1e-4) if known else DEFAULT_RANGE
        else:
            s *= lo if lo is not None else hi
    return s * (DEFAULT_INEQ if blind else 1.0)


def _informed(p: ex.Expr, stats_of: StatsOf) -> bool:
    """Whether some column `p` reads has statistics (or `p` is a constant)."""
    used = ex.columns_used(p)
    return not used or any(stats_of(i) is not None for i in used)


def _bound(p: ex.Expr, stats_of: StatsOf):
    """(column, is an upper bound, selectivity) of `column <op> constant`, else None."""
    if not (isinstance(p, ex.Call) and p.func in _RANGE and len(p.args) == 2):
        return None
    left, right, func = p.args[0], p.args[1], p.func
    if isinstance(left, ex.Literal):
        left, right, func = right, left, _FLIP[func]
    index = _column_index(left)
    if index is None or not isinstance(right, ex.Literal):
        return None
    return index, func in (ex.Func.LT, ex.Func.LE), _comparison(p, stats_of)


def _comparison(p: ex.Call, stats_of: StatsOf) -> float:
    left, right, func = p.args[0], p.args[1], p.func
    if isinstance(left, ex.Literal) and not isinstance(right, ex.Literal):
        left, right, func = right, left, _FLIP[func]
    lcol = _column(left, stats_of)
    if not isinstance(right, ex.Literal):
        rcol = _column(right, stats_of)
        if func is ex.Func.EQ:
            ds = [c[0].distinct for c in (lcol, rcol) if c is not None and c[0].distinct]
            return 1.0 / max(ds) if ds else DEFAULT_EQ
        if func is ex.Func.NE:
            return 1.0 - DEFAULT_EQ
        return DEFAULT_INEQ
    if right.value is None:
        return 0.0  # a comparison with NULL is never true
    if func is ex.Func.EQ:
        return _equal(lcol, right.value)
    if func is ex.Func.NE:
        return 1.0 - _equal(lcol, right.value) - _null_frac(lcol)
    if lcol is None:
        return DEFAULT_INEQ
    st, t = lcol
    lo, hi = _position(st.min, t), _position(st.max, t)
    x = _literal_position(right.value, t)
    if lo is None or hi is None or x is None:
        return DEFAULT_INEQ
    if hi <= lo:
        below = 0.0 if x < lo else (1.0 if x > lo else 0.5)
    else:
        below = min(1.0, max(0.0, (x - lo) / (hi - lo)))
    frac = below if func in (ex.Func.LT, ex.Func.LE) else 1.0 - below
    return frac * (1.0 - st.null_frac)


def _equal(col, value) -> float:
    """Selectivity of `column = value`."""
    if value is None:
        return 0.0
    if col is None or not col[0].distinct:
        return DEFAULT_INEQ  # no statistics: as cautious as any other unknown filter
    st, t = col
    x = _literal_position(value, t)
    lo, hi = _position(st.min, t), _position(st.max, t)
    if x is not None and lo is not None and hi is not None and (x < lo or x > hi):
        return 0.0
    if st.common:  # PostgreSQL's var_eq_const: a common value's own fraction, or an
        # equal share of what the common values leave among the other distinct values
        for v, frac in st.common:
            if _same(v, value, x, t):
                return frac
        rest = 1.0 - st.null_frac - sum(frac for _, frac in st.common)
        return max(0.0, rest) / max(1.0, st.distinct - len(st.common))
    return (1.0 - st.null_frac) / max(1.0, st.distinct)


def _same(common, value, x: float | None, t: SqlType) -> bool:
    """Whether a common value (physical) is the constant `value` (at `x` on the line)."""
    if isinstance(common, str) and t.kind in (Kind.CHAR, Kind.VARCHAR, Kind.TEXT):
        return common == value
    return x is not None and _position(common, t) == x


def _like(p: ex.Like, stats_of: StatsOf) -> float:
    pat = p.pattern.value if isinstance(p.pattern, ex.Literal) else None
    if isinstance(pat, str) and not p.case_insensitive and not any(c in pat for c in "%_\\"):
        return _equal(_column(p.arg, stats_of), pat)
    return DEFAULT_MATCH


def _null_frac(col) -> float:
    return col[0].null_frac if col is not None else 0.0


def _column_index(e: ex.Expr) -> int | None:
    while isinstance(e, ex.Cast):
        e = e.arg
    return e.index if isinstance(e, ex.ColumnRef) else None


def _column(e: ex.Expr, stats_of: StatsOf):
    index = _column_index(e)
    return stats_of(index) if index is not None else None


def _position(v, t: SqlType) -> float | None:
    """A physical statistics value (scaled integers, days, microseconds) on a line."""
    if v is None or isinstance(v, str) and not t.is_numeric:
        return None
    try:
        if t.is_scaled_int:
            return float(v) / 10 ** t.scale
        return float(v) if t.kind not in (Kind.CHAR, Kind.VARCHAR, Kind.TEXT) else None
    except (TypeError, ValueError):
        return None


def _literal_position(v, t: SqlType) -> float | None:
    """A literal's value on the same line as `_position` of a column of type t (dates as
    days, timestamps as microseconds, either compared with the other)."""
    if t.kind is Kind.DATE and isinstance(v, datetime.datetime):
        us = _literal_position(v, SqlType(Kind.TIMESTAMP))
        return us / 86_400e6 if us is not None else None
    if t.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ) and type(v) is datetime.date:
        v = datetime.datetime(v.year, v.month, v.day)
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float, decimal.Decimal)):
        return float(v)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return (v - _EPOCH) / datetime.timedelta(microseconds=1)
    if isinstance(v, datetime.date):
        return float((v - _EPOCH_DATE).days)
    return None
