"""planner/rules/sum_of_constant.py: which sums move their constant out, and the shape of
the rewritten plan (one sum and one count shared by all of them)."""

from __future__ import annotations

import pytest

from planner import expr as ex
from planner import plan as pl
from planner import types as T
from planner.rules.sum_of_constant import sum_of_constant
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef

TABLE = TableDef(1, "t", (ColumnDef("s", T.INT2), ColumnDef("i", T.INT4), ColumnDef("f", T.FLOAT8)),
                 DistPolicy(DistKind.RANDOM))
SCAN = pl.Scan(TABLE, (0, 1, 2), pl.fields_of([("s", T.INT2), ("i", T.INT4), ("f", T.FLOAT8)]))
S, I, F = (ex.ColumnRef(j, t, n) for j, (n, t) in enumerate([("s", T.INT2), ("i", T.INT4),
                                                              ("f", T.FLOAT8)]))


def _lit(v, t=T.INT4):
    return ex.Literal(v, t)


def _sum(arg, distinct=False, t=T.INT8):
    return ex.AggCall(ex.AggFunc.SUM, arg, distinct, t)


def _agg(*calls):
    return pl.Aggregate(SCAN, (), tuple(calls), pl.AggMode.SINGLE,
                        tuple(pl.Field(f"a{j}", c.type) for j, c in enumerate(calls)))


def _add(a, b, func=ex.Func.ADD, t=T.INT4):
    return ex.Call(func, (a, b), t)


WIDE = ex.Cast(S, T.INT4)


def test_sums_of_a_smallint_and_constants_share_one_sum_and_count():
    node = _agg(_sum(_add(WIDE, _lit(1))), _sum(_add(_lit(2), WIDE)),
                _sum(_add(WIDE, _lit(7), ex.Func.SUB)), _sum(S))
    out = sum_of_constant(node)
    assert isinstance(out, pl.Project) and out.fields == node.fields
    inner = out.child
    assert [a.func for a in inner.aggs] == [ex.AggFunc.SUM, ex.AggFunc.COUNT]
    assert all(a.arg == S for a in inner.aggs)
    shown = [ex.show(e) for e in out.exprs]
    assert "* 1" in shown[0] and "* 2" in shown[1] and "* -7" in shown[2]


@pytest.mark.parametrize("call", [
    _sum(_add(I, _lit(1))),                                   # int4 + c can overflow per row
    _sum(_add(F, _lit(1.5, T.FLOAT8), t=T.FLOAT8), t=T.FLOAT8),  # floats round differently
    _sum(_add(WIDE, _lit(1)), distinct=True),                 # DISTINCT is not linear
    _sum(_add(_lit(1), WIDE, ex.Func.SUB)),                   # c - x: not of the form
    _sum(_add(WIDE, _lit((1 << 31) - 1, T.INT8))),               # constant too large
    ex.AggCall(ex.AggFunc.AVG, _add(WIDE, _lit(1)), False, T.numeric(38, 16)),
], ids=["int4", "float", "distinct", "constant_minus_x", "big_constant", "avg"])
def test_left_alone(call):
    node = _agg(call)
    assert sum_of_constant(node) == node
