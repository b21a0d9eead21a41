"""sum(x + c) = sum(x) + c * count(x): arithmetic with a constant moves out of a sum.

An aggregate list such as `SUM(w), SUM(w + 1), ..., SUM(w + 89)` then computes one sum
and one count instead of ninety sums of ninety computed columns (ClickHouse does the
same, optimize_arithmetic_operations_in_aggregate_functions). The identity holds with SQL
NULLs: rows where x is NULL count in neither, and with no such row both sides are NULL.

Only where the rewrite cannot change an answer or hide an error: x a smallint (so x ± c
is an integer that cannot overflow for any integer constant c the rule accepts) and c an
integer literal; float sums would round differently, wider integers could overflow row
by row in PostgreSQL, where this would not.
"""

from __future__ import annotations

from dataclasses import replace

from planner import expr as ex
from planner import functions, types
from planner import plan as pl

_MAX_CONSTANT = (1 << 31) - (1 << 15) - 1  # int2 ± c stays inside int4


def sum_of_constant(node: pl.Node) -> pl.Node:
    return pl.transform(node, _rewrite)


def _rewrite(node: pl.Node) -> pl.Node:
    if not isinstance(node, pl.Aggregate) or node.mode is not pl.AggMode.SINGLE:
        return node
    parts = [_split(a) for a in node.aggs]
    if not any(p is not None for p in parts):
        return node
    aggs: list[ex.AggCall] = []

    def position(call: ex.AggCall) -> int:
        if call not in aggs:
            aggs.append(call)
        return aggs.index(call)

    nk = len(node.keys)
    plans = []  # per original aggregate: its position, or (sum position, count position, c)
    for a, p in zip(node.aggs, parts):
        if p is None:
            plans.append(position(a))
            continue
        x, c = p
        s = position(ex.AggCall(ex.AggFunc.SUM, x, False, types.INT8))
        n = position(ex.AggCall(ex.AggFunc.COUNT, x, False, types.INT8))
        plans.append((s, n, c))
    fields = node.fields[:nk] + tuple(pl.Field(a.sql(), a.type) for a in aggs)
    inner = replace(node, aggs=tuple(aggs), fields=fields)
    exprs: list[ex.Expr] = [ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields[:nk])]
    for a, plan in zip(node.aggs, plans):
        if isinstance(plan, int):
            exprs.append(ex.ColumnRef(nk + plan, a.type, fields[nk + plan].name))
            continue
        s, n, c = plan
        total = ex.ColumnRef(nk + s, types.INT8, fields[nk + s].name)
        count = ex.ColumnRef(nk + n, types.INT8, fields[nk + n].name)
        shift = functions.bind_call(ex.Func.MUL, [count, ex.Literal(c, types.INT8)])
        e = functions.bind_call(ex.Func.ADD, [total, shift])
        exprs.append(e if e.type == a.type else functions.bind_cast(e, a.type))
    return pl.Project(inner, tuple(exprs), node.fields)


def _split(a: ex.AggCall) -> tuple[ex.Expr, int] | None:
    """(x, c) when `a` is a plain sum of x + c, c + x or x - c with x a smallint."""
    if a.func is not ex.AggFunc.SUM or a.distinct or not isinstance(a.arg, ex.Call):
        return None
    call = a.arg
    if call.func not in (ex.Func.ADD, ex.Func.SUB) or len(call.args) != 2:
        return None
    left, right = call.args
    if call.func is ex.Func.ADD and _constant(left) is not None:
        left, right = right, left
    c = _constant(right)
    x = _smallint(left)
    if c is None or x is None or _constant(left) is not None:
        return None
    return x, (-c if call.func is ex.Func.SUB else c)


def _constant(e: ex.Expr) -> int | None:
    if isinstance(e, ex.Literal) and e.type.is_integer and e.value is not None \
            and abs(e.value) <= _MAX_CONSTANT:
        return int(e.value)
    return None


def _smallint(e: ex.Expr) -> ex.Expr | None:
    """e as a smallint expression: itself, or the smallint under a widening cast."""
    if isinstance(e, ex.Cast) and e.type.is_integer:
        e = e.arg
    return e if e.type.kind is types.Kind.INT2 else None
