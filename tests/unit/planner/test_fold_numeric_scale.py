"""planner/fold.py: a numeric of scale s compared with a constant of more decimal places
runs at scale s, the constant rounded the way that keeps the answer."""

from __future__ import annotations

from decimal import Decimal

import pytest

from planner import expr as ex
from planner import types as T
from planner.fold import fold_constants

X = ex.ColumnRef(0, T.numeric(15, 2), "x")


def lit(text: str) -> ex.Literal:
    d = Decimal(text)
    return ex.Literal(d, T.numeric(max(len(d.as_tuple().digits), 1), -d.as_tuple().exponent))


@pytest.mark.parametrize("func,value,expected_func,bound", [
    (ex.Func.GT, "5003.6857", ex.Func.GT, "5003.68"),
    (ex.Func.GE, "5003.6857", ex.Func.GE, "5003.69"),
    (ex.Func.LT, "5003.6857", ex.Func.LT, "5003.69"),
    (ex.Func.LE, "5003.6857", ex.Func.LE, "5003.68"),
    (ex.Func.GT, "-1.001", ex.Func.GT, "-1.01"),
    (ex.Func.LT, "-1.001", ex.Func.LT, "-1.00"),
    (ex.Func.GE, "7.500", ex.Func.GE, "7.50"),
])
def test_column_left(func, value, expected_func, bound):
    out = fold_constants(ex.Call(func, (X, lit(value)), T.BOOL))
    assert out.func is expected_func and out.args[0] == X
    assert out.args[1].value == Decimal(bound) and out.args[1].type.scale == 2


@pytest.mark.parametrize("func,expected_func,bound", [
    (ex.Func.LT, ex.Func.GT, "2.71"),   # 2.718 < x: x > 2.71
    (ex.Func.LE, ex.Func.GE, "2.72"),   # 2.718 <= x: x >= 2.72
    (ex.Func.GT, ex.Func.LT, "2.72"),   # 2.718 > x: x < 2.72
    (ex.Func.GE, ex.Func.LE, "2.71"),   # 2.718 >= x: x <= 2.71
])
def test_constant_left_mirrors(func, expected_func, bound):
    out = fold_constants(ex.Call(func, (lit("2.718"), X), T.BOOL))
    assert out.func is expected_func and out.args[0] == X
    assert out.args[1].value == Decimal(bound)


@pytest.mark.parametrize("call", [
    ex.Call(ex.Func.EQ, (X, lit("1.005")), T.BOOL),          # = is not rounded
    ex.Call(ex.Func.GT, (X, lit("1.5")), T.BOOL),            # scale 1 <= 2: as it is
    ex.Call(ex.Func.GT, (X, ex.Literal(Decimal("NaN"), T.numeric(None, 0))), T.BOOL),
    ex.Call(ex.Func.GT, (ex.ColumnRef(0, T.INT4, "i"), lit("1.005")), T.BOOL),
])
def test_left_alone(call):
    assert fold_constants(call) == call
