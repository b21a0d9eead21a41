"""The plans of UNION, INTERSECT and EXCEPT over their bound inputs (and of the same
operations a recursive CTE's steps need): casts to the common column types, DISTINCT as a
grouping by every column (NULLs compare equal, as set operations require), and INTERSECT /
EXCEPT as a grouping of both inputs tagged by side."""

from __future__ import annotations

from planner import functions, json_grouping, types
from planner import expr as ex
from planner import plan as pl


def cast_to(node: pl.Node, fields, extra: tuple = ()) -> pl.Node:
    """`node`'s columns cast to `fields`' types, then the (expr, name) pairs `extra`."""
    exprs = tuple(functions.bind_cast(ex.ColumnRef(i, f.type, f.name), t.type)
                  if f.type != t.type else ex.ColumnRef(i, f.type, f.name)
                  for i, (f, t) in enumerate(zip(node.fields, fields)))
    return pl.Project(node, exprs + tuple(e for e, _ in extra),
                      tuple(fields) + tuple(pl.Field(n, e.type) for e, n in extra))


def distinct(node: pl.Node) -> pl.Node:
    """Each distinct row of `node` once."""
    keys = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(node.fields))
    return json_grouping.aggregate(node, keys, (), node.fields)


def intersect_except(left: pl.Node, right: pl.Node, fields, intersect: bool) -> pl.Node:
    """The distinct rows of `left` that are (INTERSECT) or are not (EXCEPT) in `right`."""
    one, zero = ex.Literal(1, types.INT8), ex.Literal(0, types.INT8)
    tagged = pl.Append((
        cast_to(left, fields, ((one, "_in_left"), (zero, "_in_right"))),
        cast_to(right, fields, ((zero, "_in_left"), (one, "_in_right")))),
        tuple(fields) + (pl.Field("_in_left", types.INT8), pl.Field("_in_right", types.INT8)))
    n = len(fields)
    keys = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields))
    aggs = tuple(ex.AggCall(ex.AggFunc.MAX, ex.ColumnRef(n + k, types.INT8), False, types.INT8)
                 for k in range(2))
    agg = json_grouping.aggregate(tagged, keys, aggs, tuple(fields) + (
        pl.Field("_l", types.INT8), pl.Field("_r", types.INT8)))
    in_left = functions.bind_call(ex.Func.EQ, [ex.ColumnRef(n, types.INT8), one])
    in_right = functions.bind_call(ex.Func.EQ, [ex.ColumnRef(n + 1, types.INT8), one])
    pred = functions.bind_call(ex.Func.AND, [in_left, in_right if intersect else
                                             functions.bind_call(ex.Func.NOT, [in_right])])
    filt = pl.Filter(agg, pred, agg.fields)
    return pl.Project(filt, keys, tuple(fields))
