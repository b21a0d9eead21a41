"""CREATE [OR REPLACE] VIEW, transactional as CREATE TABLE is.

The view's query is bound once here, in the statement's transaction, for what PostgreSQL
checks and fixes at creation: its errors, its columns (names and types; unknown-typed
literals become text), the relations it reads (its dependencies), and, for OR REPLACE,
that the new columns keep the old ones' names and types and only add columns at the end
(42P16). The view then lives in the transaction (`Transaction.create_view`) until COMMIT.

The view goes to the schema its name or search_path gives, as a new table does
(`SessionCatalog.creation_target`), and shares (schema, name) with the tables there.

Locks: the view's schema (shared, as CREATE TABLE holds it), its name, and the names of the tables and views its query reads, until the
transaction ends. PostgreSQL holds an AccessShareLock on those, so that a concurrent
DROP waits and then finds the new view depending on them; raympp's name locks are
exclusive, so two transactions creating views over one table also take turns.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from coordinator.ddl import hold_schema, lock_name, lock_table
from coordinator.pgwire.boundary import QueryResult, ResultKind
from coordinator import temp_tables
from coordinator.transaction import relation_tag
from planner import errors, statements, types
from planner.bind import QueryBinder
from planner.schema import ColumnDef, TableDef, ViewDef
from planner.sql_dialect import RaymppPostgres


def create_view(session, st: statements.Statement, txn) -> QueryResult:
    spec = st.view
    catalog = session.catalog_view(txn)
    _refuse_parameters(spec.tree)
    if any((j.args.get("method") or "").upper() == "NATURAL" for j in spec.tree.find_all(exp.Join)):
        # Its join columns are those both sides have when it is read, which columns added
        # to a view it reads (CREATE OR REPLACE) would change; PostgreSQL fixes them.
        raise errors.FeatureNotSupported("NATURAL JOIN in a view is not supported: write "
                                         "the join columns (USING or ON)")
    binder = QueryBinder(catalog, [])  # no InitPlans run: only the shape is wanted
    bq = binder.bind(spec.tree)
    columns = _columns(spec.columns, bq.names, [f.type for f in bq.node.fields])
    schema, name = catalog.creation_target(spec.relation)
    _refuse_temporary(catalog, schema, binder.reads)
    hold_schema(session, txn, schema)
    lock_name(session, txn, relation_tag(schema.oid, schema.name, name))
    old = catalog.visible(schema.oid, name)
    if old is not None and not spec.replace:
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    if isinstance(old, TableDef):
        raise errors.QueryError(f'"{name}" is not a view', "42809")
    if old is not None:
        _check_replacement(old, columns)
    depends = _lock_reads(session, txn, catalog, binder.reads)
    if old is not None:  # the view keeps its comments and its kept columns' (PostgreSQL)
        columns = [replace(c, comment=old.columns[i].comment) if i < len(old.columns) else c
                   for i, c in enumerate(columns)]
    view = ViewDef(old.id if old is not None else session.engine.catalog.next_id("table"),
                   name, tuple(columns), spec.query, tuple(bq.names),
                   tuple(catalog.explicit), depends, definition(spec.query), schema.oid,
                   comment=old.comment if old is not None else None)
    txn.create_view(view, replaces=old)
    return QueryResult(ResultKind.COMMAND, tag=lambda: "CREATE VIEW")


def _refuse_temporary(catalog, schema, reads) -> None:
    """PostgreSQL makes a view temporary when it is created in pg_temp or reads a
    temporary table; raympp has no temporary views (the session's end drops its tables
    and schema only)."""
    if schema.name.startswith(temp_tables.PREFIX):
        raise errors.FeatureNotSupported("temporary views are not supported")
    for r in reads:
        if catalog.schema_name(r.namespace).startswith(temp_tables.PREFIX):
            raise errors.FeatureNotSupported(
                f'a view over temporary table "{r.name}" is not supported (it would be a '
                "temporary view)")


def definition(query: str) -> str:
    """pg_views.definition: the query as sqlglot normalises it (PostgreSQL deparses its
    own tree, qualifying columns; the texts differ, the meaning does not)."""
    return statements.parse_one(query).sql(dialect=RaymppPostgres, pretty=True)


def _refuse_parameters(tree: exp.Expression) -> None:
    for p in tree.find_all(exp.Parameter, exp.Placeholder):
        text = p.this.this if isinstance(p.this, exp.Literal) else p.name
        raise errors.QueryError(f"there is no parameter ${text}", "42P02")


def _columns(aliases: tuple[str, ...], names: tuple[str, ...],
             found: list[types.SqlType]) -> list[ColumnDef]:
    """The view's columns: the query's, renamed by the column list; an unknown-typed
    one (a string literal) is text, as PostgreSQL 10+ makes it."""
    if len(aliases) > len(names):
        raise errors.SyntaxError_("CREATE VIEW specifies more column names than columns")
    out: list[ColumnDef] = []
    for i, (n, t) in enumerate(zip(names, found)):
        col = aliases[i] if i < len(aliases) else n
        if any(c.name == col for c in out):
            raise errors.QueryError(f'column "{col}" specified more than once', "42701")
        if t.kind is types.Kind.RECORD or (t.is_array and t.elem.kind is types.Kind.RECORD):
            raise errors.QueryError(f'column "{col}" has pseudo-type {t}', "42P16")
        out.append(ColumnDef(col, types.TEXT if t.kind is types.Kind.UNKNOWN else t))
    return out


def _check_replacement(old: ViewDef, columns: list[ColumnDef]) -> None:
    """CREATE OR REPLACE keeps the old columns (names and types) and may add some at
    the end, as PostgreSQL's checkViewTupleDesc requires."""
    if len(columns) < len(old.columns):
        raise errors.QueryError("cannot drop columns from view", "42P16")
    for before, now in zip(old.columns, columns):
        if before.name != now.name:
            raise errors.QueryError(
                f'cannot change name of view column "{before.name}" to "{now.name}"', "42P16",
                hint="Use ALTER VIEW ... RENAME COLUMN ... to change name of view column "
                     "instead.")
        if before.type != now.type:
            raise errors.QueryError(
                f'cannot change data type of view column "{before.name}" from {before.type} '
                f"to {now.type}", "42P16")


def _lock_reads(session, txn, catalog, reads) -> tuple[int, ...]:
    """Lock the names of the relations the query reads; their ids (the dependencies),
    once each. A relation dropped or replaced by a transaction that committed while
    this one waited fails the statement, as its query was bound to the old one."""
    ids: list[int] = []
    for r in reads:
        if r.id in ids:
            continue
        lock_table(session, txn, catalog, r)
        now = catalog.visible(r.namespace, r.name)
        if now is None:
            raise errors.UndefinedTable(f'relation "{r.name}" does not exist')
        if now.id != r.id:
            raise errors.QueryError(f'could not serialize access: relation "{r.name}" was '
                                    "replaced concurrently", "40001")
        ids.append(r.id)
    return tuple(ids)
