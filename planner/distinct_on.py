"""SELECT DISTINCT ON (keys): the first row of each group of rows equal on keys, first
in the query's ORDER BY (any row of the group without one).

Planned as the windowed form PostgreSQL's own docs give it, so that it distributes as a
window does (rows Redistributed by the keys, or a top-1 per segment first):

    WindowAgg(row_number() OVER (PARTITION BY keys ORDER BY <the ORDER BY>))
      -> Project -> Filter(rn = 1) -> Project (without rn)

which planner/rules/window_top_n.py turns into a per-segment top-1 before the Motion.
NULL keys form one group, as in PostgreSQL. bind.py resolves the keys (output names,
positions or expressions, as ORDER BY's) and checks that they lead the ORDER BY.
"""

from __future__ import annotations

from planner import errors, functions, types
from planner import expr as ex
from planner import plan as pl
from planner import window as wn

MISMATCH = "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"


def check_order(keys: list[int], sort_keys) -> None:
    """PostgreSQL's rule (transformDistinctOnClause): the ORDER BY items that are DISTINCT
    ON keys all come before any that is not (42P10 otherwise)."""
    skipped = False
    for k in sort_keys:
        if k.expr.index in keys:
            if skipped:
                raise errors.QueryError(MISMATCH, "42P10")
        else:
            skipped = True


def first_rows(node: pl.Node, keys: list[int], sort_keys) -> pl.Node:
    """The first row (by `sort_keys`, ColumnRefs over `node`) of each group of `node`'s
    rows with equal columns `keys`."""
    n = len(node.fields)
    rn = pl.Field("_distinct_on_rn", types.INT8)
    numbered = pl.WindowAgg(node, tuple(keys), tuple(sort_keys),
                            (wn.WindowCall(wn.WindowFunc.ROW_NUMBER, None, types.INT8),),
                            node.fields + (rn,))
    cols = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(numbered.fields))
    projected = pl.Project(numbered, cols, numbered.fields)
    first = functions.bind_call(ex.Func.EQ, [cols[n], ex.Literal(1, types.INT8)])
    kept = pl.Filter(projected, first, projected.fields)
    return pl.Project(kept, cols[:n], node.fields)
