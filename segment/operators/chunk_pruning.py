"""Chunk skipping: decide from a chunk's min/max/null-count statistics that a scan filter
cannot be true for any of its rows, so the chunk is never read.

Understood shapes (anything else means "may match"): AND (skip if any conjunct skips), OR
(skip if every disjunct skips), `column op literal` for = <> < <= > >= in either order
(BETWEEN arrives as two comparisons), `column IN (literals)`, `column IS [NOT] NULL`, and a
constant false/NULL predicate. `column` may sit under monotone casts (int -> bigint,
int -> numeric, date -> timestamp, ...): the statistics are cast the same way first.

Statistics are physical values (ints for integers, dates as days, timestamps as
microseconds, scaled numerics as scaled ints, bytea and uuid as hex); literals are logical
Python values (int, Decimal, date, datetime, bytes). Both are compared as logical values,
exactly. Float bounds follow PostgreSQL's order (segment/storage/stats.py: max is NaN when
the chunk holds one); every comparison with NaN is false in Python, so a NaN bound never
proves anything.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any, Callable

from planner import expr as ex
from planner import temporal
from planner.types import BINARY_KINDS, Kind, SqlType

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_TZ = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

_WIDE = decimal.Context(prec=80)  # room for any numeric(38, s) without rounding

_FLIP = {ex.Func.EQ: ex.Func.EQ, ex.Func.NE: ex.Func.NE, ex.Func.LT: ex.Func.GT,
         ex.Func.LE: ex.Func.GE, ex.Func.GT: ex.Func.LT, ex.Func.GE: ex.Func.LE}

# stats_of(output column index) -> (stats with .min .max .null_count, column SqlType) or None
StatsOf = Callable[[int], "tuple[Any, SqlType] | None"]


def can_skip(pred: ex.Expr, stats_of: StatsOf, rows: int) -> bool:
    """True when `pred` is provably not true (false or NULL) for every row of the chunk."""
    if isinstance(pred, ex.Literal):
        return pred.value is None or pred.value is False
    if isinstance(pred, ex.Call):
        if pred.func is ex.Func.AND:
            return any(can_skip(a, stats_of, rows) for a in pred.args)
        if pred.func is ex.Func.OR:
            return all(can_skip(a, stats_of, rows) for a in pred.args)
        if pred.func in _FLIP and len(pred.args) == 2:
            return _skip_comparison(pred, stats_of, rows)
        return False
    if isinstance(pred, ex.IsNull):
        col = _column(pred.arg, stats_of)
        if col is None:
            return False
        st = col[0]
        nulls = getattr(st, "null_count", None)
        if nulls is None:
            return False
        return nulls == rows if pred.negated else nulls == 0
    if isinstance(pred, ex.InList) and not pred.negated:
        return _skip_in_list(pred, stats_of, rows)
    return False


def _skip_comparison(call: ex.Call, stats_of: StatsOf, rows: int) -> bool:
    left, right = call.args
    func = call.func
    if isinstance(left, ex.Literal) and not isinstance(right, ex.Literal):
        left, right, func = right, left, _FLIP[func]
    if not isinstance(right, ex.Literal):
        return False
    col = _column(left, stats_of)
    if col is None:
        return False
    st, ctype, lo, hi = col
    if right.value is None or _all_null(st, rows):
        return True  # a comparison with NULL is never true
    lit = right.value
    if isinstance(lit, float) and math.isnan(lit):
        return False
    if func is ex.Func.EQ:
        return _lt(lit, lo) is True or _lt(hi, lit) is True
    if func is ex.Func.NE:
        return _eq(lo, lit) is True and _eq(hi, lit) is True
    if func is ex.Func.LT:
        return _le(lit, lo) is True
    if func is ex.Func.LE:
        return _lt(lit, lo) is True
    if func is ex.Func.GT:
        return _le(hi, lit) is True
    if func is ex.Func.GE:
        return _lt(hi, lit) is True
    return False


def _skip_in_list(pred: ex.InList, stats_of: StatsOf, rows: int) -> bool:
    if not all(isinstance(v, ex.Literal) for v in pred.values):
        return False
    col = _column(pred.arg, stats_of)
    if col is None:
        return False
    st, ctype, lo, hi = col
    if _all_null(st, rows):
        return True
    for v in pred.values:
        if v.value is None:
            continue
        if isinstance(v.value, float) and math.isnan(v.value):
            return False
        if not (_lt(v.value, lo) is True or _lt(hi, v.value) is True):
            return False
    return True


def _all_null(st, rows: int) -> bool:
    nulls = getattr(st, "null_count", None)
    return nulls is not None and rows > 0 and nulls >= rows


def _column(e: ex.Expr, stats_of: StatsOf):
    """(stats, column type, logical min, logical max) of a column under monotone casts."""
    casts: list[SqlType] = []
    while isinstance(e, ex.Cast):
        casts.append(e.type)
        e = e.arg
    if not isinstance(e, ex.ColumnRef):
        return None
    found = stats_of(e.index)
    if found is None:
        return None
    st, ctype = found
    if ctype.kind is Kind.CHAR:
        return None  # bpchar compares without trailing blanks; the raw bytes would mislead
    lo = _logical(getattr(st, "min", None), ctype)
    hi = _logical(getattr(st, "max", None), ctype)
    src = ctype
    for dst in reversed(casts):  # innermost cast first
        if not _monotone(src, dst):
            return None
        lo, hi = _cast(lo, dst), _cast(hi, dst)
        src = dst
    return st, src, lo, hi


def _logical(v: Any, t: SqlType) -> Any:
    """A physical statistics value as the Python value a Literal of type t would hold."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str) and t.is_numeric:
        return decimal.Decimal(v)  # decimal128 bounds are kept as exact strings
    if isinstance(v, str) and t.kind in BINARY_KINDS:
        return bytes.fromhex(v)  # bytea and uuid bounds are kept as hex
    if isinstance(v, int):
        if t.is_numeric:
            return decimal.Decimal(v).scaleb(-t.scale, context=_WIDE) if t.is_scaled_int \
                else decimal.Decimal(v)
        if t.kind in (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ) and v in (
                temporal.INFINITE_DAYS if t.kind is Kind.DATE else temporal.INFINITE_MICROS):
            return temporal.INFINITY if v > 0 else temporal.NEG_INFINITY
        if t.kind is Kind.DATE:
            return _EPOCH_DATE + datetime.timedelta(days=v)
        if t.kind is Kind.TIMESTAMP:
            return _EPOCH + datetime.timedelta(microseconds=v)
        if t.kind is Kind.TIMESTAMPTZ:
            return _EPOCH_TZ + datetime.timedelta(microseconds=v)
    return v


def _monotone(src: SqlType, dst: SqlType) -> bool:
    if src == dst:
        return True
    if src.is_integer or src.is_numeric:
        return dst.is_integer and src.is_integer or dst.is_numeric or dst.is_float
    if src.kind is Kind.DATE:
        return dst.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ)
    if src.is_float:
        return dst.is_float
    return False


def _cast(v: Any, dst: SqlType) -> Any:
    if v is None:
        return None
    if dst.is_float:
        return float(v)
    if dst.is_numeric:
        return decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-dst.scale),
                                           rounding=decimal.ROUND_HALF_UP, context=_WIDE)
    if dst.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ) and type(v) is datetime.date:
        out = datetime.datetime(v.year, v.month, v.day)
        return out.replace(tzinfo=datetime.timezone.utc) if dst.kind is Kind.TIMESTAMPTZ else out
    return v


def _pair(a: Any, b: Any):
    # date vs datetime do not compare in Python; SQL compares the date as its midnight.
    if isinstance(a, datetime.datetime) and type(b) is datetime.date:
        b = datetime.datetime(b.year, b.month, b.day, tzinfo=a.tzinfo)
    elif isinstance(b, datetime.datetime) and type(a) is datetime.date:
        a = datetime.datetime(a.year, a.month, a.day, tzinfo=b.tzinfo)
    return a, b


def _lt(a: Any, b: Any) -> bool | None:
    """a < b, or None when unknown (missing statistics, incomparable kinds)."""
    if a is None or b is None:
        return None
    a, b = _pair(a, b)
    try:
        return bool(a < b)
    except TypeError:
        return None


def _le(a: Any, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    a, b = _pair(a, b)
    try:
        return bool(a <= b)
    except TypeError:
        return None


def _eq(a: Any, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    a, b = _pair(a, b)
    try:
        return bool(a == b)
    except TypeError:
        return None
