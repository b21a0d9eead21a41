"""chunk_pruning.can_skip on hand-made statistics: physical bounds against logical
literals, monotone casts, NULL handling, NaN, and shapes it must not claim to prove."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest

import opkit as k
from planner import expr as ex
from planner import types as T
from segment.operators.chunk_pruning import can_skip
from segment.storage.stats import ColumnStats

F = ex.Func


def _skip(pred, stats, t, rows=100):
    return can_skip(pred, lambda i: (stats, t) if i == 0 else None, rows)


def _c(t):
    return k.col(0, t)


@pytest.mark.parametrize("func,value,skip", [
    (F.EQ, 5, True), (F.EQ, 10, False), (F.EQ, 21, True),
    (F.LT, 10, True), (F.LT, 11, False), (F.LE, 9, True), (F.LE, 10, False),
    (F.GT, 20, True), (F.GT, 19, False), (F.GE, 21, True), (F.GE, 20, False),
    (F.NE, 15, False),
])
def test_integer_comparisons(func, value, skip):
    st = ColumnStats(10, 20, 0)
    assert _skip(k.call(func, _c(T.INT8), k.lit(value, T.INT8)), st, T.INT8) is skip


def test_ne_proves_only_a_constant_chunk():
    pred = k.call(F.NE, _c(T.INT4), k.lit(7, T.INT4))
    assert _skip(pred, ColumnStats(7, 7, 3), T.INT4)
    assert not _skip(pred, ColumnStats(7, 8, 0), T.INT4)


def test_scaled_numeric_bounds_against_decimal_literals():
    st = ColumnStats(100, 12345, 0)  # numeric(15,2): 1.00 .. 123.45
    t = T.numeric(15, 2)
    assert _skip(k.call(F.GT, _c(t), k.lit(Decimal("123.45"), t)), st, t)
    assert not _skip(k.call(F.GT, _c(t), k.lit(Decimal("123.449"), t)), st, t)
    assert _skip(k.call(F.LT, _c(t), k.lit(Decimal("1"), t)), st, t)
    assert _skip(k.call(F.LT, _c(t), k.lit(1, T.INT4)), st, t)


def test_wide_decimal_bounds_are_strings():
    t = T.numeric(38, 3)
    st = ColumnStats("-1.500", "99999999999999999999999999999999999.000", 0)
    assert _skip(k.call(F.LT, _c(t), k.lit(Decimal("-1.5"), t)), st, t)
    assert not _skip(k.call(F.LE, _c(t), k.lit(Decimal("-1.5"), t)), st, t)


def test_dates_and_timestamps():
    st = ColumnStats(10957, 10960, 0)  # 2000-01-01 .. 2000-01-04
    assert _skip(k.call(F.GT, _c(T.DATE), k.lit(dt.date(2000, 1, 4), T.DATE)), st, T.DATE)
    assert not _skip(k.call(F.GE, _c(T.DATE), k.lit(dt.date(2000, 1, 4), T.DATE)), st, T.DATE)
    # date column under a cast to timestamp, compared with a timestamp literal
    pred = k.call(F.GT, ex.Cast(_c(T.DATE), T.TIMESTAMP),
                  k.lit(dt.datetime(2000, 1, 4, 0, 0, 1), T.TIMESTAMP))
    assert _skip(pred, st, T.DATE)
    us = int((dt.datetime(2020, 5, 1) - dt.datetime(1970, 1, 1)).total_seconds() * 1e6)
    ts = ColumnStats(us, us + 10, 0)
    assert _skip(k.call(F.LT, _c(T.TIMESTAMP), k.lit(dt.datetime(2020, 5, 1), T.TIMESTAMP)),
                 ts, T.TIMESTAMP)
    aware = k.lit(dt.datetime(2020, 5, 1, tzinfo=dt.timezone.utc), T.TIMESTAMPTZ)
    assert _skip(k.call(F.LT, _c(T.TIMESTAMPTZ), aware), ts, T.TIMESTAMPTZ)


def test_casts_to_numeric_round_like_sql():
    st = ColumnStats(100, 200, 0)  # an int column
    t = T.numeric(10, 0)
    pred = k.call(F.GT, ex.Cast(_c(T.INT4), t), k.lit(Decimal("200"), t))
    assert _skip(pred, st, T.INT4)
    # numeric(15,2) 2.49 .. 2.50 cast to numeric(10,0) is 2 .. 3: "= 3" may match
    pred = k.call(F.EQ, ex.Cast(_c(T.numeric(15, 2)), t), k.lit(Decimal("3"), t))
    assert not _skip(pred, ColumnStats(249, 250, 0), T.numeric(15, 2))


def test_non_monotone_cast_is_not_used():
    pred = k.call(F.EQ, ex.Cast(_c(T.INT4), T.TEXT), k.lit("9", T.TEXT))
    assert not _skip(pred, ColumnStats(10, 20, 0), T.INT4)


def test_nulls():
    t = T.INT4
    all_null = ColumnStats(None, None, 100)
    assert _skip(k.call(F.EQ, _c(t), k.lit(1, t)), all_null, t)
    assert _skip(ex.IsNull(_c(t), True), all_null, t)
    assert not _skip(ex.IsNull(_c(t), False), all_null, t)
    none_null = ColumnStats(1, 2, 0)
    assert _skip(ex.IsNull(_c(t), False), none_null, t)
    assert not _skip(ex.IsNull(_c(t), True), none_null, t)
    assert _skip(k.call(F.EQ, _c(t), k.lit(None, t)), none_null, t)


def test_floats_and_nan():
    t = T.FLOAT8
    with_nan = ColumnStats(1.0, math.nan, 0)  # storage: max is NaN when a NaN is present
    assert not _skip(k.call(F.GT, _c(t), k.lit(5.0, t)), with_nan, t)
    assert _skip(k.call(F.LT, _c(t), k.lit(1.0, t)), with_nan, t)
    plain = ColumnStats(1.0, 2.0, 0)
    assert _skip(k.call(F.GT, _c(t), k.lit(2.0, t)), plain, t)
    assert not _skip(k.call(F.EQ, _c(t), k.lit(math.nan, t)), plain, t)
    assert not _skip(ex.InList(_c(t), (k.lit(math.nan, t),), False), plain, t)


def test_in_list_and_boolean_structure():
    t = T.TEXT
    st = ColumnStats("b", "d", 0)
    inl = ex.InList(_c(t), (k.lit("a", t), k.lit("e", t), k.lit(None, t)), False)
    assert _skip(inl, st, t)
    assert not _skip(ex.InList(_c(t), (k.lit("a", t), k.lit("c", t)), False), st, t)
    assert not _skip(ex.InList(_c(t), (k.lit("a", t),), True), st, t)
    no = k.call(F.EQ, _c(t), k.lit("z", t))
    maybe = k.call(F.EQ, _c(t), k.lit("c", t))
    assert _skip(k.call(F.AND, maybe, no), st, t)
    assert not _skip(k.call(F.OR, maybe, no), st, t)
    assert _skip(k.call(F.OR, no, no), st, t)
    assert not _skip(k.call(F.NOT, no), st, t)


def test_unknown_bounds_prove_nothing():
    t = T.TEXT
    assert _skip(k.call(F.LT, _c(t), k.lit("a", t)), ColumnStats("b", None, 0), t)  # min known
    assert not _skip(k.call(F.GT, _c(t), k.lit("z", t)), ColumnStats("b", None, 0), t)
    assert not can_skip(k.call(F.EQ, _c(t), k.lit("a", t)), lambda i: None, 10)
    # bpchar compares without trailing blanks: never pruned on raw bounds
    assert not _skip(k.call(F.EQ, _c(T.char(3)), k.lit("zz", T.char(3))),
                     ColumnStats("a", "b", 0), T.char(3))
