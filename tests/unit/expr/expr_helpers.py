"""Helpers shared by the expression tests: typed columns, evaluation to Python values."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest
import sqlglot

from planner import errors
from planner import expr as ex
from planner import functions as F
from planner import types as T
from planner.bind_expr import ExprBinder
from planner.scope import Scope
from planner.values import from_value_and_scale
from segment.expr import evaluate
from segment.kernels import expr_cast as xcast

L = F.literal


def col(index: int, t: T.SqlType, name: str = "") -> ex.ColumnRef:
    return ex.ColumnRef(index, t, name)


def py_values(e: ex.Expr, batch: pa.RecordBatch) -> list:
    """evaluate() as Python values; numerics as Decimals at the expression's scale."""
    arr = evaluate(e, batch)
    assert arr.type == e.type.arrow_type(), (arr.type, e.type)
    assert len(arr) == batch.num_rows
    vals = arr.to_pylist()
    if e.type.is_scaled_int:
        return [None if v is None else Decimal(v).scaleb(-e.type.scale) for v in vals]
    if e.type.is_dynamic:  # each value at its own display scale
        return [None if v is None else from_value_and_scale(v) for v in vals]
    return vals


def one(e: ex.Expr):
    """The value of an expression without columns, on a one-row batch."""
    return py_values(e, pa.record_batch({"x": pa.array([0])}))[0]


def raises_sqlstate(sqlstate: str, fn, *args):
    with pytest.raises(errors.QueryError) as info:
        fn(*args)
    assert info.value.sqlstate == sqlstate, (info.value.sqlstate, info.value.message)
    return info.value


def bound(sql: str, scope: Scope) -> ex.Expr:
    """A SQL expression bound over `scope` and folded, as the planner leaves it."""
    return F.fold_constants(ExprBinder(scope).bind(sqlglot.parse_one(sql, dialect="postgres")))


def texts(sql: str, scope: Scope, batch: pa.RecordBatch) -> list:
    """The values of `sql` over the batch, printed as PostgreSQL prints them."""
    e = bound(sql, scope)
    arr = evaluate(e, batch)
    assert arr.type == e.type.arrow_type()
    if e.type.kind is T.Kind.TEXT or arr.type == pa.string():
        return arr.to_pylist()
    return xcast.cast(arr, e.type, T.TEXT).to_pylist()

