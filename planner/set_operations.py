"""The plans of UNION, INTERSECT and EXCEPT over their bound inputs (and of the same
operations a recursive CTE's steps need): casts to the common column types, DISTINCT as a
grouping by every column (NULLs compare equal, as set operations require), and INTERSECT /
EXCEPT as a grouping of both inputs tagged by side, counting each row's occurrences per
side. Their ALL forms give a row min(l, r) (INTERSECT ALL) or l - r (EXCEPT ALL)
times, through a ProjectSet over generate_series(1, n)."""

from __future__ import annotations

from planner import coercion, functions, json_grouping, types
from planner import expr as ex
from planner import plan as pl


def cast_to(node: pl.Node, fields, extra: tuple = ()) -> pl.Node:
    """`node`'s columns cast to `fields`' types, then the (expr, name) pairs `extra`."""
    exprs = tuple(_converted(ex.ColumnRef(i, f.type, f.name), t.type)
                  if f.type != t.type else ex.ColumnRef(i, f.type, f.name)
                  for i, (f, t) in enumerate(zip(node.fields, fields)))
    return pl.Project(node, exprs + tuple(e for e, _ in extra),
                      tuple(fields) + tuple(pl.Field(n, e.type) for e, n in extra))


def _converted(e: ex.Expr, t: types.SqlType) -> ex.Expr:
    """A column as its common type: a char(n) keeps its padding in BPCHAR_PADDED."""
    return coercion.common_value(e, t) if t.padded else functions.bind_cast(e, t)


def column_type(a: types.SqlType, b: types.SqlType) -> types.SqlType:
    """The type of a set operation's column whose sides are typed a and b, as PostgreSQL's
    transformSetOperationTree (select_common_type of the two, left first)."""
    t = coercion.set_column_type(a, b)
    if t is None:
        t = types.common_type(a, b)
    return types.TEXT if t.kind is types.Kind.UNKNOWN else t


def distinct(node: pl.Node) -> pl.Node:
    """Each distinct row of `node` once."""
    return json_grouping.aggregate(node, _keys(node.fields), (), node.fields)


def _counted(left: pl.Node, right: pl.Node, fields) -> pl.Node:
    """Each distinct row of both inputs with the number of times each holds it: the
    columns `fields`, then l and r. A side's tag is 1 on its rows and NULL on the other's,
    so count(tag) counts that side's rows."""
    one, none = ex.Literal(1, types.INT8), ex.Literal(None, types.INT8)
    tagged = pl.Append((
        cast_to(left, fields, ((one, "_in_left"), (none, "_in_right"))),
        cast_to(right, fields, ((none, "_in_left"), (one, "_in_right")))),
        tuple(fields) + (pl.Field("_in_left", types.INT8), pl.Field("_in_right", types.INT8)))
    n = len(fields)
    counts = tuple(ex.AggCall(ex.AggFunc.COUNT, ex.ColumnRef(n + k, types.INT8), False,
                              types.INT8) for k in range(2))
    return json_grouping.aggregate(tagged, _keys(fields), counts, tuple(fields) + (
        pl.Field("_l", types.INT8), pl.Field("_r", types.INT8)))


def _keys(fields) -> tuple[ex.ColumnRef, ...]:
    return tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields))


def _positive(e: ex.Expr) -> ex.Expr:
    return functions.bind_call(ex.Func.GT, [e, ex.Literal(0, types.INT8)])


def intersect_except(left: pl.Node, right: pl.Node, fields, intersect: bool) -> pl.Node:
    """The distinct rows of `left` that are (INTERSECT) or are not (EXCEPT) in `right`."""
    counted = _counted(left, right, fields)
    n = len(fields)
    in_left = _positive(ex.ColumnRef(n, types.INT8))
    in_right = _positive(ex.ColumnRef(n + 1, types.INT8))
    pred = functions.bind_call(ex.Func.AND, [in_left, in_right if intersect else
                                             functions.bind_call(ex.Func.NOT, [in_right])])
    return pl.Project(pl.Filter(counted, pred, counted.fields), _keys(fields), tuple(fields))


def intersect_except_all(left: pl.Node, right: pl.Node, fields, intersect: bool) -> pl.Node:
    """INTERSECT ALL / EXCEPT ALL: a row that `left` holds l times and `right` r times comes
    out min(l, r) times (INTERSECT) or max(l - r, 0) times (EXCEPT), as PostgreSQL's
    SetOp does."""
    counted = _counted(left, right, fields)
    n = len(fields)
    keys = _keys(fields)
    left_n, right_n = ex.ColumnRef(n, types.INT8), ex.ColumnRef(n + 1, types.INT8)
    times = functions.bind_call(ex.Func.LEAST if intersect else ex.Func.SUB, [left_n, right_n])
    with_times = pl.Project(counted, keys + (times,),
                            tuple(fields) + (pl.Field("_n", types.INT8),))
    times_ref = ex.ColumnRef(n, types.INT8)
    kept = pl.Filter(with_times, _positive(times_ref), with_times.fields)
    series = functions.bind_call(ex.Func.SERIES, [ex.Literal(1, types.INT8), times_ref])
    repeated = pl.ProjectSet(kept, (series,), (False,),
                             kept.fields + (pl.Field("_i", types.INT8),))
    return pl.Project(repeated, keys, tuple(fields))
