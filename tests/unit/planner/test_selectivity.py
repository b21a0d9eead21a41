"""Row estimates of filters from column statistics (planner/selectivity.py through
planner/estimate.py), the broadcast of a small side hashed on its join key
(planner/distribute.py) and single-relation filters implied by an OR over several
(bind_join.restrictions_of_or)."""

from __future__ import annotations

import datetime

import pytest

from planner import distribute, estimate
from planner import expr as ex
from planner import plan as pl
from planner import types as T
from planner.bind_join import Part, restrictions_of_or
from planner.schema import ColumnDef, ColumnStats, DistKind, DistPolicy, TableDef, TableStats

F = ex.Func
DAYS_1994 = (datetime.date(1994, 1, 1) - datetime.date(1970, 1, 1)).days

STATS = TableStats(1_000_000, {
    "k": ColumnStats(0.0, 1_000_000, 1, 1_000_000),
    "brand": ColumnStats(0.0, 25, "Brand#11", "Brand#55"),
    "d": ColumnStats(0.0, 2000, DAYS_1994, DAYS_1994 + 1999),
    "price": ColumnStats(0.1, 5000, 0, 100_000),   # numeric(15,2): 0.00 .. 1000.00
})
COLS = (ColumnDef("k", T.INT8), ColumnDef("brand", T.TEXT), ColumnDef("d", T.DATE),
        ColumnDef("price", T.numeric(15, 2)), ColumnDef("x", T.INT4))
TABLE = TableDef(1, "t", COLS, DistPolicy(DistKind.HASHED, (0,)), STATS)
FIELDS = pl.fields_of([(c.name, c.type) for c in COLS])
K, BRAND, D, PRICE, X = (ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(FIELDS))


def call(func, *args):
    return ex.Call(func, tuple(args), T.BOOL)


def lit(v, t):
    return ex.Literal(v, t)


def rows(pred):
    return estimate.rows(pl.Scan(TABLE, (0, 1, 2, 3, 4), FIELDS, pred))


def test_equality_is_one_over_distinct():
    assert rows(call(F.EQ, BRAND, lit("Brand#23", T.TEXT))) == pytest.approx(40_000)
    assert rows(call(F.AND, call(F.EQ, BRAND, lit("Brand#23", T.TEXT)),
                     call(F.EQ, K, lit(7, T.INT8)))) == pytest.approx(0.04)


def test_constant_outside_the_bounds_matches_nothing():
    assert rows(call(F.EQ, K, lit(5_000_000, T.INT8))) == 0


def test_range_pair_on_one_column_is_one_range():
    lo = call(F.GE, D, lit(datetime.date(1994, 1, 1), T.DATE))
    hi = call(F.LT, D, lit(datetime.date(1994, 1, 1) + datetime.timedelta(days=500), T.DATE))
    assert rows(call(F.AND, lo, hi)) == pytest.approx(250_000, rel=0.01)
    assert rows(lo) == pytest.approx(1_000_000, rel=0.01)


def test_scaled_numeric_bounds_and_null_fraction():
    below_250 = call(F.LT, PRICE, lit(250, T.INT4))
    assert rows(below_250) == pytest.approx(1_000_000 * 0.25 * 0.9, rel=0.01)
    assert rows(ex.IsNull(PRICE, False)) == pytest.approx(100_000)


def test_or_in_and_not():
    a = call(F.EQ, BRAND, lit("Brand#1", T.TEXT))
    assert rows(call(F.OR, a, a)) == pytest.approx(1_000_000 * (0.04 + 0.04 - 0.04 * 0.04))
    values = tuple(lit(f"Brand#{i}", T.TEXT) for i in range(3))
    assert rows(ex.InList(BRAND, values, False)) == pytest.approx(120_000)
    assert rows(call(F.NOT, a)) == pytest.approx(960_000)


def test_columns_without_statistics_count_once():
    unknown = [call(F.GT, X, lit(i, T.INT4)) for i in range(3)]
    assert rows(call(F.AND, *unknown)) == pytest.approx(1_000_000 / 3)
    assert rows(call(F.EQ, X, lit(1, T.INT4))) == pytest.approx(1_000_000 / 3)


def test_small_side_hashed_on_its_key_is_broadcast_not_the_big_side_moved():
    big_t = TableDef(2, "big", (ColumnDef("a", T.INT8), ColumnDef("b", T.INT8)),
                     DistPolicy(DistKind.RANDOM), TableStats(6_000_000, {}))
    small = pl.Scan(TABLE, (0, 1, 2, 3, 4), FIELDS,
                    call(F.EQ, K, lit(7, T.INT8)))  # about one row, hashed on k
    big = pl.Scan(big_t, (0, 1), pl.fields_of([("a", T.INT8), ("b", T.INT8)]))
    join = pl.HashJoin(big, small, pl.JoinType.INNER, (0,), (0,), None,
                       big.fields + small.fields)
    placed = distribute.distribute(join, 4)
    kinds = [n.kind for n in pl.walk(placed) if isinstance(n, pl.Motion)]
    assert pl.MotionKind.BROADCAST in kinds and pl.MotionKind.REDISTRIBUTE not in kinds


def test_or_over_two_relations_gives_each_its_own_filter():
    n1 = ex.ColumnRef(0, T.TEXT, "n1")
    n2 = ex.ColumnRef(1, T.TEXT, "n2")
    fr, de = lit("FRANCE", T.TEXT), lit("GERMANY", T.TEXT)
    pred = call(F.OR, call(F.AND, call(F.EQ, n1, fr), call(F.EQ, n2, de)),
                call(F.AND, call(F.EQ, n1, de), call(F.EQ, n2, fr)))
    parts = [Part(None, [0]), Part(None, [1])]
    got = restrictions_of_or(pred, parts)
    assert [ex.show(g) for g in got] == ["((n1 = 'FRANCE') OR (n1 = 'GERMANY'))",
                                         "((n2 = 'GERMANY') OR (n2 = 'FRANCE'))"]
    # a relation missing from one branch gets nothing; a one-relation OR is left alone
    partial = call(F.OR, call(F.EQ, n1, fr), call(F.EQ, n2, de))
    assert restrictions_of_or(partial, parts) == []
    assert restrictions_of_or(call(F.OR, call(F.EQ, n1, fr), call(F.EQ, n1, de)), parts) == []


def test_common_values_give_their_own_fraction_and_the_rest_shares_what_is_left():
    skewed = TableStats(1_000_000, {
        "brand": ColumnStats(0.0, 25, "Brand#11", "Brand#55", (("Brand#23", 0.3),)),
        "k": ColumnStats(0.1, 1001, 1, 1_000_000, ((62, 0.4), (7, 0.1))),
        "d": ColumnStats(0.0, 2000, DAYS_1994, DAYS_1994 + 1999, ((DAYS_1994 + 5, 0.5),)),
    })
    table = TableDef(1, "t", COLS, DistPolicy(DistKind.HASHED, (0,)), skewed)

    def est(pred):
        return estimate.rows(pl.Scan(table, (0, 1, 2, 3, 4), FIELDS, pred))
    assert est(call(F.EQ, BRAND, lit("Brand#23", T.TEXT))) == pytest.approx(300_000)
    assert est(call(F.EQ, BRAND, lit("Brand#12", T.TEXT))) == pytest.approx(700_000 / 24)
    assert est(call(F.EQ, K, lit(62, T.INT8))) == pytest.approx(400_000)
    assert est(call(F.EQ, lit(62, T.INT8), K)) == pytest.approx(400_000)
    assert est(call(F.EQ, K, lit(8, T.INT8))) == pytest.approx(400_000 / 999)
    assert est(ex.InList(K, (lit(62, T.INT8), lit(7, T.INT8)), False)) == \
        pytest.approx(500_000)
    assert est(call(F.EQ, D, lit(datetime.date(1994, 1, 6), T.DATE))) == \
        pytest.approx(500_000)
