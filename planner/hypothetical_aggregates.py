"""The hypothetical-set aggregates rank, dense_rank, percent_rank and cume_dist(v...)
WITHIN GROUP (ORDER BY k...) as expressions over counts, so that they distribute in two
phases as count does. With `before` true for a row whose keys sort before the hypothetical
row (v...) under the ORDER BY (directions, NULLS FIRST/LAST: NULLs are peers of each other)
and `peer` for one that sorts with it:

    rank         = count(CASE WHEN before THEN 1 END) + 1
    percent_rank = CASE WHEN count(*) = 0 THEN 0 ELSE (rank - 1)::float8 / count(*) END
    cume_dist    = (count(CASE WHEN before OR peer THEN 1 END) + 1)::float8 / (count(*) + 1)
    dense_rank   = count(DISTINCT CASE WHEN before THEN k END) + 1
                   (+ 1 when a NULL k is before: count(DISTINCT ...) skips it)

as PostgreSQL's hypothetical_*_final. The direct arguments v are evaluated once per group
there; here they are read in every row, which is the same only for grouped columns and
constants: ungrouped columns are 42803 as there, aggregates in them 42803, volatile
functions and (under grouping sets) columns 0A000. dense_rank over several keys is 0A000.
A FILTER condition goes into every count.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from planner import coercion, errors
from planner.bind_array import mark_subscripts
from planner.bind_expr import find_aggregate
from planner.sql_dialect import RaymppPostgres

NODES = {exp.Rank: "rank", exp.DenseRank: "dense_rank", exp.PercentRank: "percent_rank",
         exp.CumeDist: "cume_dist"}
_VOLATILE = {"random", "setseed", "nextval", "clock_timestamp", "timeofday", "gen_random_uuid"}


def rewrite(tree: exp.WithinGroup, bind, check_direct, cond: exp.Expression | None = None,
            grouping_sets: bool = False) -> exp.Expression:
    """The expression hypothetical-set aggregate `tree` equals. `bind` binds a sqlglot
    expression of the query level, `check_direct` binds a direct argument as the SELECT
    list does (42803 for an ungrouped column); `cond` is a FILTER condition."""
    name = NODES[type(tree.this)]
    direct = list(tree.this.expressions)
    order = tree.expression.expressions if isinstance(tree.expression, exp.Order) else []
    if len(direct) != len(order):
        shown = [bind(a) for a in direct] + [bind(o.this) for o in order]
        raise errors.UndefinedFunction(
            f"function {name}({', '.join(_type(e) for e in shown)}) does not exist",
            hint=f"To use the hypothetical-set aggregate {name}, the number of hypothetical "
                 f"direct arguments (here {len(direct)}) must match the number of ordering "
                 f"columns (here {len(order)}).")
    for v in direct:
        _check_direct(v, check_direct, grouping_sets)
    for v, key in zip(direct, order):
        hv, kv = bind(v), bind(key.this)
        if not coercion.is_unknown(hv) and not coercion.is_unknown(kv):
            coercion.common_type(kv.type, hv.type, "WITHIN GROUP")
    befores, peers = [], []
    for v, key in zip(direct, order):
        k, h = _sql(key.this), _sql(v)
        lt = f"{k} > {h}" if key.args.get("desc") else f"{k} < {h}"
        if key.args.get("nulls_first"):
            befores.append(f"(CASE WHEN {h} IS NULL THEN false WHEN {k} IS NULL THEN true "
                           f"ELSE {lt} END)")
        else:
            befores.append(f"(CASE WHEN {k} IS NULL THEN false WHEN {h} IS NULL THEN true "
                           f"ELSE {lt} END)")
        peers.append(f"({k} IS NOT DISTINCT FROM {h})")
    before = " OR ".join(f"({' AND '.join(peers[:i] + [b])})" for i, b in enumerate(befores))
    before = f"({before})"
    when = f"({_sql(cond)}) AND " if cond is not None else ""
    total = f"count(CASE WHEN {_sql(cond)} THEN 1 END)" if cond is not None else "count(*)"
    ahead = f"count(CASE WHEN {when}{before} THEN 1 END)"
    if name == "rank":
        sql = f"{ahead} + 1"
    elif name == "percent_rank":
        sql = f"CASE WHEN {total} = 0 THEN 0::float8 ELSE {ahead}::float8 / {total} END"
    elif name == "cume_dist":
        upto = f"({before} OR ({' AND '.join(peers)}))"
        sql = f"(count(CASE WHEN {when}{upto} THEN 1 END) + 1)::float8 / ({total} + 1)"
    else:
        if len(order) != 1:
            raise errors.FeatureNotSupported("dense_rank() WITHIN GROUP over several keys")
        k = _sql(order[0].this)
        null_ahead = f"count(CASE WHEN {when}{before} AND {k} IS NULL THEN 1 END) > 0"
        sql = (f"count(DISTINCT CASE WHEN {when}{before} THEN {k} END) + 1 + "
               f"CASE WHEN {null_ahead} THEN 1 ELSE 0 END")
    out = sqlglot.parse_one(sql, read=RaymppPostgres)
    mark_subscripts(out)  # the keys' a[i] are 1-based, as statements.py marks them
    return out


def _check_direct(v: exp.Expression, check_direct, grouping_sets: bool) -> None:
    if find_aggregate(v) is not None:
        raise errors.GroupingError("aggregate function calls cannot be nested")
    for node in v.walk():
        if isinstance(node, (exp.Subquery, exp.Select, exp.Window)):
            raise errors.FeatureNotSupported(
                "hypothetical-set aggregate arguments with subqueries or window functions")
        if isinstance(node, exp.Rand) or isinstance(node, exp.Anonymous) and \
                node.name.lower() in _VOLATILE:
            raise errors.FeatureNotSupported(
                "hypothetical-set aggregate arguments with volatile functions")
        if grouping_sets and isinstance(node, exp.Column):
            raise errors.FeatureNotSupported(
                "hypothetical-set aggregate arguments with columns under grouping sets")
    check_direct(v)


def _sql(e: exp.Expression) -> str:
    return f"({e.sql(dialect='postgres')})"


def _type(e) -> str:
    return coercion.type_name(e).split("(")[0]  # PostgreSQL names types without typmods
