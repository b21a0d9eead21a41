"""MERGE as plans (coordinator/merge.py runs them): the matched rows as UPDATE and DELETE
do them (planner/modify.py), the not-matched source rows as an INSERT ... SELECT.

PostgreSQL joins the source to the target once; each source row either matches target
rows (the first WHEN MATCHED clause whose condition holds acts on each) or matches none
(the first WHEN NOT MATCHED clause's INSERT, if any). Here the two sets are two queries
over the same snapshot: `not_matched` (source rows with no target row satisfying ON, the
values of the row each inserts) runs first and its rows are kept until `matched` (the
target rows the source matches, each with its action's new row) has run, so neither
sees the other's writes. A target row matched by two source rows is 21000, as in
PostgreSQL. The result count is both plans' rows.

INSERT ... ON CONFLICT (planner/on_conflict.py) runs as a MERGE with a `guard` query,
planned here to run first, and may have RETURNING (PostgreSQL 15's MERGE has none): its
list is computed over the inserted rows in `not_matched` (as columns after the row's)
and over the updated rows' new versions where `matched` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from planner import default_values as dv
from planner import distribute, errors, functions, rules, types
from planner import expr as ex
from planner import locus as lc
from planner import plan as pl
from planner.bind import QueryBinder
from planner.coercion import bind_assign
from planner.expr import Func
from planner.modify import (assignments, assigned_column, back_home, qualifier,
                            returning_of, system_columns, target_of, target_table)
from planner.schema import MODIFY_TARGET, CatalogView, DistKind, Identity, TableDef

_ACT = pl.Field("action", types.INT4)


@dataclass(frozen=True)
class Clause:
    """One WHEN clause: `kind` is UPDATE, DELETE, INSERT or NOTHING."""

    matched: bool
    condition: exp.Expression | None
    kind: str
    assign: tuple[tuple[int, exp.Expression], ...] = ()  # UPDATE SET / INSERT's values


@dataclass(frozen=True)
class MergePlans:
    table: TableDef
    # distributed; yields one count per segment, or with `returning` the returned rows
    matched: pl.Node | None
    # distributed; yields the rows to insert (table's columns, then `returning`'s)
    not_matched: pl.Node | None
    guard: pl.Node | None = None  # distributed; a row from it fails the statement
    returning: tuple[tuple[str, types.SqlType], ...] | None = None


def plan(catalog: CatalogView, tree: exp.Merge, n_segments: int, run_plan=None,
         defaults: dv.ColumnDefaults | None = None, guard: exp.Select | None = None,
         returning: list[exp.Expression] | None = None) -> MergePlans:
    """MERGE's plans; `defaults` gives the target's column defaults (an INSERT's columns
    left out or DEFAULT, an UPDATE's SET column = DEFAULT). `guard` and `returning` are
    ON CONFLICT's (planner/on_conflict.py)."""
    target = target_of(tree, "MERGE")
    table = target_table(catalog, tree)
    clauses = _clauses(tree, table)
    source = tree.args.get("using")
    on = tree.args.get("on")
    if source is None or on is None:
        raise errors.SyntaxError_("MERGE needs USING and ON")
    binder = QueryBinder(catalog, None, run_plan=run_plan)
    matched = [c for c in clauses if c.matched]
    inserts = [c for c in clauses if not c.matched]
    out = None
    if returning is not None:
        if table.policy.kind is DistKind.REPLICATED:
            raise errors.FeatureNotSupported(
                "INSERT ... ON CONFLICT ... RETURNING into a replicated table")
        out = returning_of(catalog, target, returning, None, run_plan)
    return MergePlans(
        table,
        _matched(binder, table, target, source, on, matched, n_segments, defaults, out)
        if matched else None,
        _not_matched(binder, table, target, source, on, inserts, n_segments, defaults, out)
        if any(c.kind == "INSERT" for c in inserts) else None,
        distribute.distribute(rules.rewrite(binder.bind(guard).node), n_segments)
        if guard is not None else None,
        tuple((nm, e.type if e.type.kind is not types.Kind.UNKNOWN else types.TEXT)
              for nm, e in zip(out[1], out[0])) if out is not None else None)


def _clauses(tree: exp.Merge, table: TableDef) -> list[Clause]:
    whens = tree.args.get("whens")
    out = []
    for w in (whens.expressions if whens is not None else []):
        if w.args.get("source"):
            raise errors.FeatureNotSupported("MERGE ... WHEN NOT MATCHED BY SOURCE")
        matched = bool(w.args.get("matched"))
        then = w.args.get("then")
        cond = w.args.get("condition") or None
        if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
            kind, assign = "DELETE", ()
        elif isinstance(then, exp.Var) and then.name.upper() == "DO NOTHING":
            kind, assign = "NOTHING", ()
        elif isinstance(then, exp.Update):
            kind, assign = "UPDATE", tuple(assignments(then, table))
        elif isinstance(then, exp.Insert):
            kind, assign = "INSERT", tuple(_insert_values(then, table))
        else:
            raise errors.FeatureNotSupported(f"MERGE action {then.sql(dialect='postgres')}")
        if matched and kind == "INSERT":
            raise errors.SyntaxError_('syntax error at or near "INSERT"')
        if not matched and kind in ("UPDATE", "DELETE"):
            raise errors.SyntaxError_(f'syntax error at or near "{kind}"')
        out.append(Clause(matched, cond, kind, assign))
    if not out:
        raise errors.SyntaxError_("MERGE needs a WHEN clause")
    return out


def _insert_values(ins: exp.Insert, table: TableDef) -> list[tuple[int, exp.Expression]]:
    """MERGE's INSERT [(cols)] VALUES (...) | DEFAULT VALUES as (column, value)."""
    if ins.args.get("overriding"):
        raise errors.FeatureNotSupported("MERGE ... INSERT OVERRIDING")
    cols = ins.this
    values = ins.expression
    if values is None:  # DEFAULT VALUES
        return []
    items = list(values.expressions) if isinstance(values, exp.Tuple) else [values]
    names = list(cols.expressions) if isinstance(cols, exp.Tuple) else (
        [cols] if cols is not None else None)
    positions = [assigned_column(c, table) for c in names] if names is not None \
        else list(range(len(table.columns)))
    if len(items) > len(positions):
        raise errors.SyntaxError_("INSERT has more expressions than target columns")
    if names is not None and len(items) < len(positions):
        raise errors.SyntaxError_("INSERT has more target columns than expressions")
    if len(set(positions)) != len(positions):
        dup = next(p for p in positions if positions.count(p) > 1)
        raise errors.SyntaxError_(f'column "{table.columns[dup].name}" specified more than once')
    for p, v in zip(positions, items):
        col = table.columns[p]
        if col.identity is Identity.ALWAYS and not dv.is_default(v):
            raise errors.QueryError(
                f'cannot insert a non-DEFAULT value into column "{col.name}"', "428C9",
                detail=f'Column "{col.name}" is an identity column defined as GENERATED '
                       "ALWAYS.", hint="Use OVERRIDING SYSTEM VALUE to override.")
    return list(zip(positions, items))


def _action(clauses: list[Clause]) -> exp.Expression:
    """CASE WHEN cond1 THEN 1 ... ELSE 0 END: the number (from 1, in order) of the first
    clause whose condition holds; 0 when none does or it is DO NOTHING."""
    case = exp.Case()
    for k, c in enumerate(clauses):
        code = 0 if c.kind == "NOTHING" else k + 1
        case = case.when(c.condition.copy() if c.condition is not None else exp.true(),
                         exp.Literal.number(code))
    return case.else_(exp.Literal.number(0))


def _values(clauses: list[Clause]):
    """The select items: per (acting clause, column it sets) its value; returns (items,
    {(clause index, column): item position})."""
    items, where = [], {}
    for k, c in enumerate(clauses):
        for i, value in c.assign:
            if dv.is_default(value):
                where[(k, i)] = None  # the column's default (`_new_row`)
                continue
            where[(k, i)] = len(items)
            items.append(value.copy())
    return items, where


def _new_row(fields, table: TableDef, clauses: list[Clause], where, act: int,
             offset: int, keep_old: bool, defaults: dv.ColumnDefaults | None) -> list[ex.Expr]:
    """Per table column: CASE action WHEN k THEN that clause's value (assigned to the
    column's type; DEFAULT its default) ... ELSE the old value (UPDATE) or the column's
    default (INSERT) END."""
    act_ref = ex.ColumnRef(act, types.INT4, "action")
    statement = "MERGE ... UPDATE" if keep_old else "MERGE ... INSERT"
    out = []
    for i, col in enumerate(table.columns):
        if keep_old:
            otherwise = ex.ColumnRef(i, col.type, col.name)
        elif all(where.get((k, i)) is not None for k, c in enumerate(clauses)
                 if c.kind == "INSERT"):
            # Every INSERT clause gives the column a value (the rows here are those an
            # INSERT clause acts on): its default is never taken, nor a sequence advanced.
            otherwise = ex.Literal(None, col.type)
        else:
            otherwise = dv.value_of(defaults, table, i, False, statement)
        whens = []
        for k, c in enumerate(clauses):
            if (k, i) not in where:
                continue
            if where[(k, i)] is None:
                if not keep_old:
                    continue  # an INSERT's DEFAULT: what ELSE gives
                value = dv.value_of(defaults, table, i, True, statement)
            else:
                j = offset + where[(k, i)]
                value = bind_assign(ex.ColumnRef(j, fields[j].type, fields[j].name),
                                    col.type, col.name)
            whens.append((functions.bind_call(Func.EQ, [act_ref, ex.Literal(k + 1,
                                                                            types.INT4)]),
                          value))
        if whens and ex.calls_sequence(otherwise):
            # The counter would be advanced for the rows another INSERT clause writes too.
            raise errors.FeatureNotSupported(
                f'MERGE with INSERT clauses that give column "{col.name}" a value and leave '
                "it to its default, which calls a sequence function")
        out.append(functions.bind_case(whens, otherwise) if whens else otherwise)
    return out


def _matched(binder, table, target, source, on, clauses, n, defaults, returning) -> pl.Node:
    q = qualifier(target)
    marked = target.copy()
    marked.meta[MODIFY_TARGET] = True
    act = _action(clauses)
    old = [exp.Column(this=exp.Identifier(this=c.name, quoted=True),
                      table=exp.Identifier(this=q, quoted=True)) for c in table.columns]
    values, where = _values(clauses)
    sel = exp.Select(expressions=old + [act] + values + system_columns(q)).from_(marked)
    sel = sel.join(source.copy(), on=on.copy(), join_type="inner")
    sel.set("where", exp.Where(this=exp.NEQ(this=act.copy(), expression=exp.Literal.number(0))))
    bq = binder.bind(sel)
    fields = bq.node.fields
    ncols = len(table.columns)
    new = _new_row(fields, table, clauses, where, ncols, ncols + 1, True, defaults)
    act_ref = ex.ColumnRef(ncols, types.INT4, "action")
    writes = functions.bind_in(act_ref, [ex.Literal(k + 1, types.INT4)
                                         for k, c in enumerate(clauses) if c.kind == "UPDATE"]) \
        if any(c.kind == "UPDATE" for c in clauses) else ex.Literal(False, types.BOOL)
    seg, row = len(fields) - 2, len(fields) - 1
    exprs = tuple(new) + (writes, ex.ColumnRef(seg, fields[seg].type, fields[seg].name),
                          ex.ColumnRef(row, fields[row].type, fields[row].name))
    out_fields = tuple(pl.Field(c.name, c.type) for c in table.columns) + (
        pl.Field("write", types.BOOL),) + fields[-2:]
    node = pl.Project(bq.node, exprs, out_fields)
    node = back_home(distribute.place(rules.rewrite(node), n), table, ncols + 1)
    deleted = pl.DeleteRows(node, table, ncols + 2, node.fields, count=False, strict=True,
                            locus=lc.STREWN)
    # With RETURNING (ON CONFLICT: its one clause UPDATEs) every row found is written.
    kept = node.fields[:ncols + (returning is None)]
    rows: pl.Node = pl.Project(deleted, tuple(ex.ColumnRef(i, f.type, f.name)
                                              for i, f in enumerate(kept)),
                               kept, locus=lc.STREWN)
    keys = table.policy.keys
    if table.policy.kind is DistKind.HASHED and any(
            i in keys for c in clauses for i, _ in c.assign):
        rows = distribute.redistribute(rows, tuple(keys), table.segment_count(n))
    if returning is None:
        written = pl.Insert(rows, table, (pl.Field("rows", types.INT8),), locus=lc.STREWN,
                            write_flag=ncols)
        return distribute.finish(written)
    assert all(c.kind == "UPDATE" for c in clauses)
    written = pl.Insert(rows, table, kept, locus=lc.STREWN, returning=True)
    exprs = returning[0]
    return distribute.finish(pl.Project(written, exprs, _returned_fields(exprs),
                                        locus=lc.STREWN))


def _returned_fields(exprs) -> tuple[pl.Field, ...]:
    return tuple(pl.Field(f"c{i}", e.type) for i, e in enumerate(exprs))


def _not_matched(binder, table, target, source, on, clauses, n, defaults,
                 returning) -> pl.Node:
    act = _action(clauses)
    values, where = _values(clauses)
    probe = exp.Select(expressions=[exp.Literal.number(1)]).from_(target.copy())
    probe.set("where", exp.Where(this=on.copy()))
    sel = exp.Select(expressions=[act] + values).from_(source.copy())
    sel.set("where", exp.Where(this=exp.and_(
        exp.Not(this=exp.Exists(this=probe)),
        exp.NEQ(this=act.copy(), expression=exp.Literal.number(0)))))
    bq = binder.bind(sel)
    new = _new_row(bq.node.fields, table, clauses, where, 0, 1, False, defaults)
    row_fields = tuple(pl.Field(c.name, c.type) for c in table.columns)
    node = pl.Project(bq.node, tuple(new), row_fields)
    if returning is not None:
        exprs = returning[0]
        node = pl.Project(node, tuple(ex.ColumnRef(i, f.type, f.name)
                                      for i, f in enumerate(row_fields)) + tuple(exprs),
                          row_fields + _returned_fields(exprs))
    return distribute.distribute(rules.rewrite(node), n)

