"""DELETE and UPDATE as plans: find the target rows with a query, change them where they live.

The finding query is the statement as a SELECT over the target table and the relations it
names (DELETE's USING, UPDATE's FROM, subqueries in WHERE), bound and distributed like any
query. The target's scan also reads two system columns (planner/schema.py): the segment
each row is stored on and its row id there. Where the query moved the target's rows (a
join that redistributed them), an Explicit Redistribute Motion sends each found row back
to its segment; there DeleteRows marks it deleted, once however many times a join found
it. UPDATE then writes the row's new version, computed by the finding query from the old
values: on the same segment, or through a Redistribute by the distribution key when the
statement assigns a key column (Greenplum's SplitUpdate moves such a row the same way).

A replicated table changes alike on every segment: each segment finds and changes the
rows of its own copy, so for it only statements that read nothing but replicated tables
and constants are planned (others are 0A000).

RETURNING: DELETE's list is computed by the finding query over the deleted row (and the
USING relations); UPDATE's over the new row, on the segment that writes it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sqlglot import exp

from planner import distribute, errors, modify_items, multi_assign, rules, types
from planner import default_values as dv
from planner import expr as ex
from planner import locus as lc
from planner import plan as pl
from planner.bind import QueryBinder
from planner.bind_expr import ExprBinder
from planner.coercion import bind_assign
from planner.fold import fold_constants
from planner.scope import EMPTY
from planner.schema import (MODIFY_TARGET, ROW_ID, SYSTEM_COLUMNS, SEGMENT_ID, CatalogView,
                            DistKind, TableDef, ViewDef, identifier, relation_name)
from planner.system_tables import find as find_system, resolve_relation

_COUNT = (pl.Field("rows", types.INT8),)


@dataclass(frozen=True)
class Modification:
    """A planned DELETE or UPDATE. `root` is distributed; it yields one row count per
    segment (`columns` None: sum them, or take one for a replicated table) or, with
    RETURNING, the returned rows, whose names and types `columns` gives."""

    table: TableDef
    root: pl.Node
    columns: tuple[tuple[str, types.SqlType], ...] | None


def target_table(catalog: CatalogView, tree: exp.Delete | exp.Update | exp.Merge) -> TableDef:
    """The table a DELETE, UPDATE or MERGE changes (42P01 as PostgreSQL's
    parserOpenTable; a view is refused)."""
    target = target_of(tree)
    rel = relation_name(target)
    if find_system(catalog, rel) is not None:
        raise errors.FeatureNotSupported(
            f'cannot change system relation "{rel.name}": the system catalog is read-only')
    table = resolve_relation(catalog, target)
    if isinstance(table, ViewDef) and isinstance(tree, exp.Merge):
        raise errors.QueryError(f'cannot execute MERGE on relation "{table.name}"', "42809",
                                detail="This operation is not supported for views.")
    if isinstance(table, ViewDef):
        # PostgreSQL writes through simple (auto-updatable) views; raympp does not.
        what = "delete from" if isinstance(tree, exp.Delete) else "update"
        raise errors.FeatureNotSupported(
            f'cannot {what} view "{table.name}"',
            detail="Views are not updatable in raympp: change the tables it reads.")
    return table


def plan_delete(catalog: CatalogView, tree: exp.Delete, n_segments: int, params=None,
                run_plan=None) -> Modification:
    target = target_of(tree)
    table = target_table(catalog, tree)
    items = _returning_items(tree)
    sel = _finder(tree, target, items or [], tree.args.get("using") or [], table)
    bq = QueryBinder(catalog, params, run_plan=run_plan).bind(sel)
    node = distribute.place(rules.rewrite(bq.node), n_segments)
    n_out = len(node.fields) - 2
    node = back_home(node, table, n_out)
    if items is None:
        top = pl.DeleteRows(node, table, n_out + 1, _COUNT, count=True, locus=lc.STREWN)
        return Modification(table, distribute.finish(top), None)
    if table.policy.kind is DistKind.REPLICATED:
        raise errors.FeatureNotSupported("DELETE ... RETURNING from a replicated table")
    deleted = pl.DeleteRows(node, table, n_out + 1, node.fields, count=False,
                            locus=lc.STREWN)
    top = pl.Project(deleted, tuple(ex.ColumnRef(i, f.type, f.name)
                                    for i, f in enumerate(node.fields[:n_out])),
                     node.fields[:n_out], locus=lc.STREWN)
    return Modification(table, distribute.finish(top), _columns(bq.names[:n_out], top))


def plan_update(catalog: CatalogView, tree: exp.Update, n_segments: int, params=None,
                run_plan=None, defaults: dv.ColumnDefaults | None = None) -> Modification:
    """UPDATE's plan; `defaults` gives the columns' defaults for SET column = DEFAULT."""
    target = target_of(tree)
    table = target_table(catalog, tree)
    assigned = assignments(tree, table)
    items = _returning_items(tree)
    returning = None if items is None else \
        _new_row_returning(catalog, tree, target, items, params, run_plan)
    if returning is not None and table.policy.kind is DistKind.REPLICATED:
        raise errors.FeatureNotSupported("UPDATE ... RETURNING of a replicated table")
    q = qualifier(target)
    old = [_column(q, c.name) for c in table.columns]
    others = _from_items(tree)
    # A value that reads no column is bound as INSERT's VALUES are, so that a quoted
    # literal or untyped parameter takes its column's type (PostgreSQL's unknown).
    constants = {i: dv.value_of(defaults, table, i, True, "UPDATE") if dv.is_default(v)
                 else _constant(v, params) for i, v in assigned
                 if dv.is_default(v) or _is_constant(v)}
    computed = [(i, v) for i, v in assigned if i not in constants]
    sel = _finder(tree, target, old + [v for _, v in computed], others, table)
    bq = QueryBinder(catalog, params, run_plan=run_plan).bind(sel)
    fields = bq.node.fields
    n = len(table.columns)
    position = {i: n + j for j, (i, _) in enumerate(computed)}
    exprs = []
    for i, c in enumerate(table.columns):
        j = position.get(i, i)
        ref = ex.ColumnRef(j, fields[j].type, fields[j].name)
        value = constants[i] if i in constants else ref
        exprs.append(bind_assign(value, c.type, c.name)
                     if i in position or i in constants else ref)
    seg, row = len(fields) - 2, len(fields) - 1
    exprs += [ex.ColumnRef(seg, fields[seg].type, fields[seg].name),
              ex.ColumnRef(row, fields[row].type, fields[row].name)]
    new_fields = tuple(pl.Field(c.name, c.type) for c in table.columns) + fields[-2:]
    node = pl.Project(bq.node, tuple(exprs), new_fields)
    node = back_home(distribute.place(rules.rewrite(node), n_segments), table, n)
    deleted = pl.DeleteRows(node, table, n + 1, node.fields, count=False, locus=lc.STREWN)
    row_fields = node.fields[:n]
    rows: pl.Node = pl.Project(deleted, tuple(ex.ColumnRef(i, f.type, f.name)
                                              for i, f in enumerate(row_fields)),
                               row_fields, locus=lc.STREWN)
    keys = table.policy.keys
    if table.policy.kind is DistKind.HASHED and any(i in keys for i, _ in assigned):
        # The row moves with its key.
        rows = distribute.redistribute(rows, tuple(keys), table.segment_count(n_segments))
    written = pl.Insert(rows, table, row_fields if returning else _COUNT, locus=lc.STREWN,
                        returning=returning is not None)
    if returning is None:
        return Modification(table, distribute.finish(written), None)
    exprs_out, names = returning
    top = pl.Project(written, exprs_out, tuple(pl.Field(f"c{i}", e.type)
                                               for i, e in enumerate(exprs_out)),
                     locus=lc.STREWN)
    return Modification(table, distribute.finish(top),
                        tuple((nm, e.type) for nm, e in zip(names, exprs_out)))


def inference_query(catalog: CatalogView, tree: exp.Delete | exp.Update) -> exp.Select:
    """The statement as a query whose parameters stand where the statement's do, for
    parameter type inference (coordinator/param_types.py): a parameter assigned to a
    column is cast to the column's type, which is the type PostgreSQL infers for it."""
    target = target_of(tree)
    table = resolve_relation(catalog, target)
    if isinstance(tree, exp.Delete):
        return _finder(tree, target, list(_returning_items(tree) or [exp.Literal.number(1)]),
                       tree.args.get("using") or [], table, system=False)
    items = []
    for i, value in assignments(tree, table):
        if isinstance(value, (exp.Placeholder, exp.Parameter)):
            value = exp.Cast(this=value.copy(), to=exp.DataType.build(
                table.columns[i].type.sql(), dialect="postgres"))
        items.append(exp.Null() if dv.is_default(value) else value)
    return _finder(tree, target, items or [exp.Literal.number(1)], _from_items(tree), table,
                   system=False)


def assignments(tree: exp.Update, table: TableDef) -> list[tuple[int, exp.Expression]]:
    """UPDATE's SET list as (column position, expression), in the order written."""
    out: list[tuple[int, exp.Expression]] = []
    for item in tree.expressions:
        if not isinstance(item, exp.EQ):
            raise errors.SyntaxError_("syntax error in UPDATE's SET list")
        lhs, rhs = item.this, item.expression
        if isinstance(lhs, (exp.Tuple, exp.Paren)):
            pairs = multi_assign.pairs(lhs, rhs)
        else:
            pairs = [(lhs, rhs)]
        for col, value in pairs:
            i = assigned_column(col, table)
            if any(i == j for j, _ in out):
                raise errors.SyntaxError_(
                    f'multiple assignments to same column "{table.columns[i].name}"')
            dv.refuse_update_always(table, i, value)
            out.append((i, value))
    return out


def assigned_column(col: exp.Expression, table: TableDef) -> int:
    if not isinstance(col, exp.Column):
        raise errors.SyntaxError_("syntax error in UPDATE's SET list")
    if col.table:  # PostgreSQL reads t.x as field x of a composite column t
        raise errors.UndefinedColumn(
            f'column "{identifier(col.args["table"])}" of relation "{table.name}" does not exist')
    name = identifier(col.this)
    i = table.column_index(name)
    if i is None:
        raise errors.UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
    return i


def returning_of(catalog: CatalogView, target: exp.Table, items: list[exp.Expression],
                 params=None, run_plan=None) -> tuple[tuple[ex.Expr, ...], tuple[str, ...]]:
    """(expressions over the target table's columns, names) of a RETURNING list computed
    over a written row: expressions of the row and uncorrelated scalar subqueries (run
    first, as InitPlans: they see the table before the statement, as PostgreSQL's snapshot
    does). Aggregates are 42803 as in PostgreSQL; anything that would read other rows per
    row (a correlated subquery) is refused (0A000)."""
    sel = exp.Select(expressions=[e.copy() for e in items]).from_(target.copy())
    bq = QueryBinder(catalog, params, run_plan=run_plan).bind(sel)
    node = bq.node
    if isinstance(node, pl.Scan) and node.filter is None:
        exprs = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in zip(node.columns, node.fields))
    elif isinstance(node, pl.Project) and isinstance(node.child, pl.Scan) \
            and node.child.filter is None \
            and node.child.columns == tuple(range(len(node.child.table.columns))):
        exprs = node.exprs
    elif any(isinstance(n, pl.HashJoin) for n in pl.walk(node)):
        raise errors.FeatureNotSupported("correlated subqueries in RETURNING")
    elif any(isinstance(n, pl.Aggregate) for n in pl.walk(node)):
        raise errors.QueryError("aggregate functions are not allowed in RETURNING", "42803")
    else:
        raise errors.FeatureNotSupported(
            "RETURNING of anything but expressions of the written row and uncorrelated "
            "scalar subqueries")
    return exprs, bq.names


# --- internals ---------------------------------------------------------------------------
def target_of(tree, word: str | None = None) -> exp.Table:
    """The table DELETE, UPDATE or MERGE changes, as written."""
    target = tree.this
    if not isinstance(target, exp.Table) or not isinstance(target.this, exp.Identifier):
        word = word or ("DELETE" if isinstance(tree, exp.Delete) else "UPDATE")
        raise errors.FeatureNotSupported(f"{word} of {target.sql(dialect='postgres')}")
    return target


def system_columns(q: str) -> list[exp.Column]:
    """References to the target's segment and row id columns, qualified by `q`."""
    return [_column(q, SYSTEM_COLUMNS[c].name) for c in (SEGMENT_ID, ROW_ID)]


def qualifier(target: exp.Table) -> str:
    alias = target.args.get("alias")
    return identifier(alias.this) if alias is not None else relation_name(target).name


def _column(q: str, name: str) -> exp.Column:
    return exp.Column(this=exp.Identifier(this=name, quoted=True),
                      table=exp.Identifier(this=q, quoted=True))


def _from_items(tree: exp.Update) -> list[exp.Expression]:
    sources = tree.args.get("from_") or tree.args.get("from")
    if sources is None:
        return []
    return [sources.this] + [j.this for j in sources.args.get("joins") or []]


def _is_constant(value: exp.Expression) -> bool:
    return value.find(exp.Column, exp.Select, exp.Subquery, exp.Star) is None


def _constant(value: exp.Expression, params) -> ex.Expr:
    return fold_constants(ExprBinder(EMPTY, params).bind(value))


def _finder(tree, target: exp.Table, items: list[exp.Expression], others: list[exp.Expression],
            table: TableDef, system: bool = True) -> exp.Select:
    """SELECT items, <segment>, <row id> FROM target, others WHERE (the statement's)
    (planner/modify_items.py joins the others)."""
    marked = target.copy()
    marked.meta[MODIFY_TARGET] = system
    columns = system_columns(qualifier(target)) if system else []
    first, joins = modify_items.joined(tree, marked, qualifier(target),
                                       {c.name for c in table.columns}, others, items)
    sel = exp.Select(expressions=[e.copy() for e in items] + columns).from_(first)
    if joins:
        sel.set("joins", joins)
    where = tree.args.get("where")
    if where is not None:
        sel.set("where", where.copy())
    return sel


def _returning_items(tree) -> list[exp.Expression] | None:
    returning = tree.args.get("returning")
    if returning is None:
        return None
    items = list(returning.expressions)
    for item in items:
        if item.find(exp.AggFunc) is not None:
            raise errors.QueryError("aggregate functions are not allowed in RETURNING", "42803")
        if item.find(exp.Window) is not None:
            raise errors.QueryError("window functions are not allowed in RETURNING", "42P20")
    return items


def _new_row_returning(catalog, tree: exp.Update, target: exp.Table, items, params, run_plan):
    if _from_items(tree) and any(isinstance(i, exp.Star) for i in items):
        # PostgreSQL's * there is the FROM items' columns too
        raise errors.FeatureNotSupported("UPDATE ... FROM ... RETURNING *")
    try:
        return returning_of(catalog, target, items, params, run_plan)
    except (errors.UndefinedTable, errors.UndefinedColumn):
        if tree.args.get("from_") is None and tree.args.get("from") is None:
            raise
        raise errors.FeatureNotSupported(
            "UPDATE ... RETURNING of anything but the updated row's columns") from None


def back_home(node: pl.Node, table: TableDef, n_out: int) -> pl.Node:
    """The found rows (placed; column `n_out` the segment, the next the row id), on the
    segments that store them."""
    if not node.locus.on_segments and _finds_nothing(node):
        # WHERE false and the like: the binder folded the target away; each segment
        # finds nothing (and counts 0), as PostgreSQL's DELETE 0.
        return dataclasses.replace(node, locus=lc.STREWN)
    if table.policy.kind is DistKind.REPLICATED:
        if node.locus.kind is not lc.LocusKind.REPLICATED or any(
                isinstance(n, pl.Motion) for n in pl.walk(node)):
            raise errors.FeatureNotSupported(
                "DELETE, UPDATE or MERGE of a replicated table that reads other tables or "
                "calls volatile functions")
        return node
    if not node.locus.on_segments:
        raise errors.FeatureNotSupported(
            "DELETE, UPDATE or MERGE whose rows are found on the coordinator (LIMIT, ORDER BY or "
            "volatile functions over constants in its subqueries)")
    if _moved(node):
        return pl.Motion(node, pl.MotionKind.EXPLICIT, node.fields, hash_keys=(n_out,),
                         locus=lc.STREWN)
    return node


def _finds_nothing(node: pl.Node) -> bool:
    """Whether `node` is constant rows of none (through projections and filters)."""
    while isinstance(node, (pl.Project, pl.Filter)):
        node = node.child
    return isinstance(node, pl.Values) and not node.rows and not node.system


def _moved(node: pl.Node) -> bool | None:
    """Whether a Motion lies between `node` and the target's scan (None: not below)."""
    if isinstance(node, pl.Scan):
        return False if ROW_ID in node.columns else None
    for child in node.children():
        below = _moved(child)
        if below is not None:
            return below or isinstance(node, pl.Motion)
    return None


def _columns(names, node: pl.Node) -> tuple[tuple[str, types.SqlType], ...]:
    return tuple((nm, f.type if f.type.kind is not types.Kind.UNKNOWN else types.TEXT)
                 for nm, f in zip(names, node.fields))
