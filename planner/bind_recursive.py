"""WITH RECURSIVE: a recursive CTE computed before the statement, by PostgreSQL's iteration.

    WITH RECURSIVE t(c, ...) AS (non-recursive term UNION [ALL] recursive term)

The non-recursive term runs first; its rows are the result so far and the working table.
Then, as long as the working table has rows, the recursive term runs with `t` meaning the
working table, and its rows (for UNION: those not already in the result, once each) are
added to the result and become the next working table. Each step is a distributed query
of its own (the binder's plan runner, as for InitPlans), reading the working table from a
Materialized leaf that every process has; the CTE then reads the whole result the same way.
The recursive term is bound once and its plan reused at every step with the working
table's leaf replaced (`_bound_once`), unless a plan run while binding it read that leaf.
Column types are the non-recursive term's; a recursive term whose column would need
another type is 42804, as in PostgreSQL. A recursion that never ends runs until the
statement is cancelled or times out, as in PostgreSQL, or until its result passes
`raympp.max_recursive_rows` (SESSION_INFO's max_recursive_rows; 54000): the result is
held whole, where PostgreSQL's LIMIT above a recursive CTE stops it lazily.

What it leaves to others: binding each term (bind.py), running plans (the coordinator's
runner), and correlated subqueries, whose recursive CTEs are 0A000 (subquery_domain.py
decorrelates the subquery's own FROM and WHERE only).
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from planner import errors, functions, set_operations, types
from planner import expr as ex
from planner import plan as pl
from planner.bind_expr import find_aggregate
from planner.session_info import SESSION_INFO

_SHAPE = "42P19"  # invalid_recursion


def references(tree: exp.Expression, name: str) -> list[exp.Table]:
    """The FROM references to the CTE `name` in `tree` (unqualified table names)."""
    return [t for t in tree.find_all(exp.Table)
            if isinstance(t.this, exp.Identifier) and not t.db and _name(t) == name]


def _name(t: exp.Table) -> str:
    ident = t.this
    return ident.name if ident.quoted else ident.name.lower()


def bind(qb, name: str, body: exp.Expression, col_aliases: list[str]):
    """(the plan, the column names) of the recursive CTE `name` (body: its query), or None
    when `body` does not refer to `name` (an ordinary CTE in a WITH RECURSIVE list)."""
    if not references(body, name):
        return None
    if not isinstance(body, exp.Union) or references(body.this, name):
        raise errors.QueryError(f'recursive query "{name}" does not have the form '
                                "non-recursive-term UNION [ALL] recursive-term", _SHAPE)
    if any(body.args.get(k) for k in ("order", "limit", "offset")):
        raise errors.FeatureNotSupported("ORDER BY, LIMIT or OFFSET in a recursive query")
    term = body.expression
    refs = references(term, name)
    if len(refs) > 1:
        raise errors.QueryError(f'recursive reference to query "{name}" must not appear '
                                "more than once", _SHAPE)
    if _in_subquery(refs[0], term):
        raise errors.QueryError(f'recursive reference to query "{name}" must not appear '
                                "within a subquery", _SHAPE)
    if isinstance(term, exp.Select) and (
            term.args.get("group") or any(find_aggregate(e) for e in term.expressions)):
        raise errors.QueryError("aggregate functions are not allowed in a recursive query's "
                                "recursive term", _SHAPE)
    anchor = qb.child().bind(body.this)
    if len(col_aliases) > len(anchor.names):
        raise errors.QueryError(f'WITH query "{name}" has {len(anchor.names)} columns '
                                f"available but {len(col_aliases)} columns specified", "42P10")
    names = tuple(col_aliases) + anchor.names[len(col_aliases):]
    fields = tuple(pl.Field(n, types.TEXT if f.type.kind is types.Kind.UNKNOWN else f.type)
                   for n, f in zip(names, anchor.node.fields))
    distinct = bool(body.args.get("distinct"))

    def step(rows: pa.Table) -> pl.Node:
        sub = qb.child()
        sub.with_relation(name, pl.Materialized(rows, fields), names)
        bq = sub.bind(term)
        if len(bq.node.fields) != len(fields):
            raise errors.SyntaxError_("each UNION query must have the same number of columns")
        return _conformed(bq.node, fields, name)

    empty = pa.table({f"c{i}": pa.array([], f.type.arrow_type()) for i, f in enumerate(fields)})
    if qb.run_plan is None:  # describing only: the types are what matter
        step(empty)
        return pl.Materialized(empty, fields), names
    first = _conformed(anchor.node, fields, name)
    total = qb.run_plan(set_operations.distinct(first) if distinct else first)
    work = total
    reused = _bound_once(qb, term, name, fields, names)
    if reused is not None:
        bound, placeholder = reused

        def step(rows: pa.Table) -> pl.Node:  # noqa: F811 (the term bound once, reused)
            working = pl.Materialized(rows, fields)
            return pl.transform(bound, lambda n: working if n is placeholder else n)
    limit = SESSION_INFO.get().get("max_recursive_rows") or 0
    while work.num_rows:
        if limit and total.num_rows > limit:
            raise errors.QueryError(
                f'recursive query "{name}" produced more than {limit} rows', "54000",
                hint="A recursion without an end (UNION ALL of a cycle, or no stop "
                     "condition) never finishes; raise raympp.max_recursive_rows if more "
                     "rows are expected.")
        node = step(work)
        if distinct:  # new rows only, once each
            node = set_operations.intersect_except(node, pl.Materialized(total, fields), fields, False)
        work = qb.run_plan(node)
        if work.num_rows:
            total = pa.concat_tables([total, work])
    return pl.Materialized(total.combine_chunks(), fields), names


def _bound_once(qb, term: exp.Expression, name: str, fields, names):
    """(the recursive term's plan, the leaf standing for the working table in it), bound
    once to be run at every step with that leaf replaced (binding it anew at each step
    took most of a 1,000-step recursion's time); None when the leaf is not read exactly
    once in the plan tree or a plan run while binding read it (an InitPlan over the
    working table, which must run at each step): then each step is bound anew."""
    placeholder = pl.Materialized(pa.table({f"c{i}": pa.array([], f.type.arrow_type())
                                            for i, f in enumerate(fields)}), fields)
    ran: list[pl.Node] = []
    outer = qb.run_plan

    def recorded(node: pl.Node) -> pa.Table:
        ran.append(node)
        return outer(node)
    sub = qb.child()
    sub.run_plan = recorded
    sub.with_relation(name, placeholder, names)
    bq = sub.bind(term)
    if len(bq.node.fields) != len(fields):
        raise errors.SyntaxError_("each UNION query must have the same number of columns")
    node = _conformed(bq.node, fields, name)
    if sum(1 for n in pl.walk(node) if n is placeholder) != 1 or any(
            n is placeholder for r in ran for n in pl.walk(r)):
        return None
    return node, placeholder


def _in_subquery(ref: exp.Expression, top: exp.Expression) -> bool:
    """Whether the reference is inside a subquery of an expression (EXISTS, IN, a scalar
    subquery); a derived table in FROM is not one."""
    p = ref.parent
    while p is not None and p is not top:
        if isinstance(p, exp.Exists) or (isinstance(p, exp.Subquery) and not isinstance(
                p.parent, (exp.From, exp.Join))):
            return True
        p = p.parent
    return False


def _conformed(node: pl.Node, fields, name: str) -> pl.Node:
    """`node` with the CTE's column types (where a value of another type coerces to the
    non-recursive term's type as UNION would give it); 42804 otherwise."""
    exprs, changed = [], False
    for i, (f, want) in enumerate(zip(node.fields, fields)):
        ref = ex.ColumnRef(i, f.type, want.name)
        if f.type == want.type:
            exprs.append(ref)
            continue
        if types.common_type(want.type, f.type) != want.type:
            raise errors.QueryError(
                f'recursive query "{name}" column {i + 1} has type {want.type} in '
                f"non-recursive term but type {types.common_type(want.type, f.type)} overall",
                "42804", hint="Cast the output of the non-recursive term to the correct type.")
        exprs.append(functions.bind_cast(ref, want.type))
        changed = True
    if not changed and tuple(f.name for f in node.fields) == tuple(f.name for f in fields):
        return node
    return pl.Project(node, tuple(exprs), tuple(fields))
