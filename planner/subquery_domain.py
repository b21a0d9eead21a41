"""Correlated subqueries of any shape, decorrelated over the domain of the outer values.

A subquery that uses the outer query's columns c1..ck in any way (conditions that are not
equalities, conditions on outer columns only, outer columns inside its value, ON clauses
of its joins) is evaluated once per distinct (c1..ck) instead of once per outer row:

    D = SELECT DISTINCT c1..ck FROM <outer rows>
    R = SELECT D.c1..D.ck, <value> FROM D, <the subquery's FROM> WHERE <its WHERE>
        GROUP BY D.c1..D.ck          -- every outer reference now reads D's columns
    <outer rows> LEFT JOIN R ON (c1..ck) IS NOT DISTINCT FROM (R.c1..R.ck)

This is the "magic set" / dependent-join unnesting of Neumann and Kemper ("Unnesting
Arbitrary Queries", BTW 2015), restricted to one level. The conditions between D and the
subquery's relations become ordinary join keys or residuals, so the join planner chooses
hash or nested-loop joins as for any FROM clause. The join back matches NULL outer values
too (a condition such as `o.x IS NULL OR ...` may hold for them), so each key is compared
as the pair (x IS NULL, COALESCE(x, zero)), which hashes.

bind_subquery.py tries its cheaper equality-only rewrite first and comes here otherwise.
"""

from __future__ import annotations

from sqlglot import exp

from planner import bind_lateral, errors, functions, types
from planner import expr as ex
from planner import plan as pl
from planner.bind_expr import ExprBinder
from planner.scope import LayeredScope, Scope

DOMAIN = "?outer_domain"  # the CTE name D is bound under; no user name can start with ?
_CORRELATED = (errors.UndefinedColumn, errors.UndefinedTable)


def inner_scope(qb, select: exp.Select, outer: Scope) -> Scope:
    """The columns the subquery's own FROM items provide (before any join condition is
    bound, since ON clauses may use outer columns)."""
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        return Scope([])
    columns = []
    for rel in [from_.this] + [j.this for j in select.args.get("joins") or []]:
        if isinstance(rel, exp.Lateral) and isinstance(rel.this, exp.Subquery):
            columns += qb.lateral_columns(rel, LayeredScope(Scope(list(columns)), outer))
            continue
        call = bind_lateral.call_of(rel)
        if call is not None and bind_lateral.is_lateral(qb, call):
            # A function reading earlier items' or outer columns: bound as the rewritten
            # subquery binds it, after D's columns (its own columns are what matter here).
            columns += bind_lateral.bind(qb, call, LayeredScope(Scope(list(columns)),
                                                                outer)).columns
            continue
        try:
            columns += qb._relation(rel)[1].columns
        except _CORRELATED:
            if isinstance(rel, exp.Subquery):
                raise errors.FeatureNotSupported(
                    "outer references in a FROM subquery of a correlated subquery") from None
            raise
    return Scope(columns)


def outer_references(select: exp.Select, inner: Scope, outer: Scope, params,
                     ungrouped: Scope | None = None) -> list[tuple[exp.Column, int]]:
    """The column references of `select` itself (not of subqueries nested in it) that do
    not resolve in its own FROM but do in the outer scope, with their outer positions.
    Above an aggregate (`ungrouped`: the columns before grouping), a reference to a
    column that is not a group key is 42803, as PostgreSQL says it."""
    found = []
    for col in select.find_all(exp.Column):
        if outer.marker is not None and col.table == outer.marker:
            found.append((col, int(col.name[1:])))
            continue
        if isinstance(col.this, exp.Star) or _nested_in_subquery(col, select):
            continue
        if _resolves(inner, col, params):
            continue  # the subquery's own column
        try:
            ref = ExprBinder(outer, params).bind(col)
        except _CORRELATED as e:
            if ungrouped is not None and _resolves(ungrouped, col, params):
                raise errors.GroupingError(
                    f'subquery uses ungrouped column "{col.sql(dialect="postgres")}" '
                    "from outer query") from None
            if isinstance(e, errors.UndefinedColumn) and col.table:
                raise  # the outer table has no such column
            continue  # undefined everywhere: binding the rewritten query reports it
        found.append((col, ref.index))
    return found


def _resolves(scope: Scope, col: exp.Column, params) -> bool:
    try:
        ExprBinder(scope, params).bind(col)
        return True
    except _CORRELATED:
        return False


def outer_marker(scope: Scope, position: int) -> exp.Column:
    """A column reference that means `scope`'s column at `position` (scope.marker)."""
    return exp.column(f"c{position}", scope.marker, quoted=True)


def _nested_in_subquery(node: exp.Expression, top: exp.Expression) -> bool:
    p = node.parent
    while p is not None and p is not top:
        if isinstance(p, (exp.Select, exp.Subquery)) and p is not top:
            return True
        p = p.parent
    return False


def domain(outer_node: pl.Node, positions: list[int]) -> pl.Node:
    """D: the distinct values of the outer columns at `positions`, named k0, k1, ..."""
    refs = tuple(ex.ColumnRef(i, outer_node.fields[i].type, f"k{j}")
                 for j, i in enumerate(positions))
    fields = tuple(pl.Field(f"k{j}", r.type) for j, r in enumerate(refs))
    proj = pl.Project(outer_node, refs, fields)
    keys = tuple(ex.ColumnRef(j, f.type, f.name) for j, f in enumerate(fields))
    return pl.Aggregate(proj, keys, (), pl.AggMode.SINGLE, fields)


def rewrite(select: exp.Select, refs: list[tuple[exp.Column, int]], positions: list[int],
            plain: bool) -> exp.Select:
    """The subquery (a copy; `refs` are nodes of it) reading D: outer references become
    D's columns, D is joined first in its FROM, and the select list is D's columns then,
    grouped by them, the aggregate and `true` (which is NULL for an outer row the LEFT
    join back finds no group for) or, for a `plain` value, min(value) and count(*)."""
    for col, i in refs:
        col.replace(domain_column(positions.index(i)))
    out = select
    value = out.expressions[0]
    value = value.this if isinstance(value, exp.Alias) else value
    computed = [exp.Min(this=value.copy()), exp.Count(this=exp.Star())] if plain else \
        [value.copy(), exp.Boolean(this=True)]
    from_ = out.args.get("from_") or out.args.get("from")
    table = exp.Table(this=exp.to_identifier(DOMAIN, quoted=True))
    joins = [exp.Join(this=from_.this)] + list(out.args.get("joins") or []) \
        if from_ is not None else []
    out.set("from_" if "from_" in out.arg_types else "from", exp.From(this=table))
    out.set("joins", joins or None)
    keys = [domain_column(j) for j in range(len(positions))]
    if plain and any(out.args.get(k) for k in ("order", "limit", "offset")):
        return _first_rows(out, value, keys)
    out.set("expressions", [k.copy() for k in keys] + computed)
    out.set("group", exp.Group(expressions=keys))
    return out


def _first_rows(inner: exp.Select, value: exp.Expression, keys: list[exp.Column]) -> exp.Select:
    """A plain value with ORDER BY / LIMIT / OFFSET: the rows of each outer value are
    numbered in the subquery's order (row_number() partitioned by D's columns), and those
    LIMIT and OFFSET keep are grouped as for any plain value (min(value), count(*))."""
    limit, offset = _constant_count(inner.args.get("limit")), _constant_count(
        inner.args.get("offset")) or 0
    names = [out.alias_or_name for out in inner.expressions]
    orders = []
    for o in (inner.args["order"].expressions if inner.args.get("order") else []):
        o = o.copy()
        target = o.this
        if isinstance(target, exp.Literal) and not target.is_string:
            if int(target.name) != 1:
                raise errors.QueryError(
                    f"ORDER BY position {target.name} is not in select list", "42P10")
            o.set("this", value.copy())
        elif isinstance(target, exp.Column) and not target.table and target.name in names:
            o.set("this", value.copy())  # the output column's name, as ORDER BY reads it
        orders.append(o)
    rank = exp.Window(this=exp.RowNumber(), partition_by=[k.copy() for k in keys],
                      order=exp.Order(expressions=orders) if orders else None, over="OVER")
    inner.set("expressions", [exp.alias_(k.copy(), f"k{j}", quoted=True)
                              for j, k in enumerate(keys)]
              + [exp.alias_(value.copy(), "?v", quoted=True), exp.alias_(rank, "?rn", quoted=True)])
    for k in ("order", "limit", "offset"):
        inner.set(k, None)
    ranked = "?ranked"
    rn = exp.column("?rn", ranked, quoted=True)
    conds = [exp.GT(this=rn.copy(), expression=exp.Literal.number(offset))]
    if limit is not None:
        conds.append(exp.LTE(this=rn.copy(), expression=exp.Literal.number(offset + limit)))
    out_keys = [exp.column(f"k{j}", ranked, quoted=True) for j in range(len(keys))]
    v = exp.column("?v", ranked, quoted=True)
    return exp.Select(
        expressions=[k.copy() for k in out_keys] + [exp.Min(this=v), exp.Count(this=exp.Star())],
        **{"from_" if "from_" in exp.Select.arg_types else "from": exp.From(this=exp.Subquery(
            this=inner, alias=exp.TableAlias(this=exp.to_identifier(ranked, quoted=True))))},
        where=exp.Where(this=exp.and_(*conds)),
        group=exp.Group(expressions=out_keys))


def _constant_count(clause) -> int | None:
    """LIMIT / OFFSET's value: a non-negative integer constant (None: no limit)."""
    if clause is None:
        return None
    e = clause.args.get("expression") if isinstance(clause, exp.Limit) else clause.this
    if isinstance(clause, exp.Offset) and e is None:
        e = clause.args.get("expression")
    if isinstance(e, exp.Null):
        return None
    if not (isinstance(e, exp.Literal) and not e.is_string and e.name.isdigit()):
        raise errors.FeatureNotSupported(
            "correlated scalar subqueries with a LIMIT or OFFSET that is not a constant")
    return int(e.name)


def domain_column(j: int) -> exp.Column:
    """D's j-th column, as a reference in the rewritten subquery."""
    return exp.column(f"k{j}", DOMAIN, quoted=True)


def join_back_keys(outer_fields, positions: list[int], result_base: int,
                   result_fields) -> list[ex.Expr]:
    """Equalities joining the outer rows to R on D's columns, NULL matching NULL."""
    preds = []
    for j, i in enumerate(positions):
        t = outer_fields[i].type
        o = ex.ColumnRef(i, t)
        r = ex.ColumnRef(result_base + j, result_fields[j].type)
        zero = _zero(t)
        preds.append(functions.bind_call(ex.Func.EQ, [
            functions.bind_call(ex.Func.COALESCE, [o, zero]),
            functions.bind_call(ex.Func.COALESCE, [r, zero])]))
        preds.append(functions.bind_call(ex.Func.EQ, [
            functions.bind_is_null(o), functions.bind_is_null(r)]))
    return preds


_ZERO_TEXT = {types.Kind.BOOL: "false", types.Kind.DATE: "2000-01-01",
              types.Kind.TIMESTAMP: "2000-01-01 00:00:00",
              types.Kind.TIMESTAMPTZ: "2000-01-01 00:00:00+00", types.Kind.INTERVAL: "0"}
# Catalog types stored as strings (reg* hold the name they print as) or as int64.
_STRING_STORED = (types.Kind.NAME, types.Kind.CHAR1, types.Kind.REGCLASS, types.Kind.REGTYPE,
                  types.Kind.REGPROC, types.Kind.REGNAMESPACE, types.Kind.REGROLE)


def _zero(t: types.SqlType) -> ex.Expr:
    """Some non-NULL value of type `t`, to stand in for NULL in a hashed key."""
    if t.is_string or t.kind in _STRING_STORED:
        return ex.Literal("", t)
    if t.kind in (types.Kind.OID, types.Kind.XID):
        return ex.Literal(0, t)
    if t.is_array:
        return ex.Literal((), t)  # the empty array (planner/values.py's form)
    text = "0" if t.is_number else _ZERO_TEXT.get(t.kind)
    if text is None:
        raise errors.FeatureNotSupported(f"correlated subqueries over outer columns of type {t}")
    return functions.fold_constants(functions.bind_cast(ex.Literal(text, types.TEXT), t))
