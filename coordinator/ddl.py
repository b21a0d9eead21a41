"""DDL: CREATE TABLE [AS], TRUNCATE, ANALYZE (DROP: coordinator/drop.py; views:
coordinator/views.py).

CREATE, DROP and TRUNCATE run in the session's transaction (coordinator/transaction.py):
a created table is visible to its transaction only and a dropped one hidden from it until
COMMIT; ROLLBACK leaves the catalog and every row as they were. Each holds its table's
name locked until the transaction ends, so a second transaction's DDL on the name waits
(lock_timeout) and then sees the first one's outcome; queries and writes of other
sessions do not wait: they see the committed tables.

Table names are resolved as PostgreSQL resolves them (coordinator/catalog.py
`SessionCatalog`): `[[database.]schema.]name`, unqualified names through search_path,
with PostgreSQL's errors for schemas and databases that do not exist.
"""

from __future__ import annotations

from coordinator import autostats, compaction, load, table_stats
from coordinator.pgwire.boundary import Notice, QueryResult, ResultKind
from planner import errors, statements, types
from planner.schema import ColumnDef, RelationName, TableDef, ViewDef, relation_name
from sqlglot import exp
from coordinator import query


def lock_name(session, txn, name: str) -> None:
    """Lock table name `name` for `txn` until it ends, waiting at most lock_timeout."""
    ms = session.settings.milliseconds("lock_timeout")
    txn.lock(name, ms / 1000.0 if ms > 0 else None, session.cancel.event)


def _command(tag: str) -> QueryResult:
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag)


def _target_relation(tree) -> RelationName:
    """The table a CREATE TABLE [AS] names."""
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    return relation_name(target)


def new_table(session, txn, name: str, columns: list[ColumnDef], policy_clause) -> TableDef:
    """Create table `name` in `txn` (its name already locked by it)."""
    if not columns:
        raise errors.FeatureNotSupported("tables without columns")
    policy = statements.dist_policy(policy_clause, columns)
    table = TableDef(session.engine.catalog.next_id("table"), name, tuple(columns), policy)
    txn.create_table(table)
    return table


def _exists_after_lock(session, txn, view, name: str) -> bool:
    """Lock `name`, then whether a table of that name is visible (another transaction
    may have committed one while this one waited)."""
    lock_name(session, txn, name)
    return view.visible(name) is not None


def create_table(session, st, txn) -> QueryResult:
    view = session.catalog_view(txn)
    name = view.creation_name(_target_relation(st.tree))
    if view.visible(name) is not None or _exists_after_lock(session, txn, view, name):
        if st.if_not_exists:
            return _command("CREATE TABLE")  # PostgreSQL: NOTICE ... already exists, skipping
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    new_table(session, txn, name, st.columns, st.policy_clause)
    return _command("CREATE TABLE")


def create_table_as(session, st, tree, txn, cancel) -> QueryResult:
    view = session.catalog_view(txn)
    name = view.creation_name(_target_relation(tree))
    root, names = query.plan(session, tree.expression)  # its errors first, as in PostgreSQL
    if view.visible(name) is not None or _exists_after_lock(session, txn, view, name):
        if st.if_not_exists:
            return _command("CREATE TABLE AS")
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    aliases = [c.name for c in st.columns]
    if len(aliases) > len(names):
        raise errors.SyntaxError_("CREATE TABLE AS specifies too many column names")
    cols = []
    for i, (n, f) in enumerate(zip(names, root.fields)):
        t = types.TEXT if f.type.kind is types.Kind.UNKNOWN else f.type
        cols.append(ColumnDef(aliases[i] if i < len(aliases) else n, t))
    table = new_table(session, txn, name, cols, st.policy_clause)
    # A failure from here on fails the statement: its transaction's abort removes the table.
    rows = load.insert_plan(session, table, tree.expression, None, txn, cancel)
    load.note_rows(session, txn, table, rows, ctas=True)
    return _command(f"SELECT {rows}")


def truncate(session, tree, txn) -> QueryResult:
    view = session.catalog_view(txn)
    tables = [view.open(relation_name(t)) for t in tree.find_all(exp.Table)]
    for table in tables:
        lock_name(session, txn, table.name)
        current = view.visible(table.name)
        if current is None:
            raise errors.UndefinedTable(f'relation "{table.name}" does not exist')
        if isinstance(current, ViewDef):
            raise errors.QueryError(f'"{current.name}" is not a table', "42809")
        txn.truncate(current.id)
        autostats.note_truncate(session, txn, current)
    return _command("TRUNCATE TABLE")


def analyze(session, st) -> QueryResult:
    """ANALYZE [table, ...]: rows, null fraction and distinct estimates per column.
    VACUUM [table, ...] first compacts each table (coordinator/compaction.py: every chunk
    with a deleted row rewritten), then analyzes it. A view named is skipped with
    PostgreSQL's WARNING."""
    vacuum = st.text.lstrip()[:7].upper() != "ANALYZE"
    if vacuum and session.txn is not None and session.txn.explicit:
        raise errors.QueryError("VACUUM cannot run inside a transaction block", "25001")
    view = session.catalog_view(session.txn)
    tables = [view.open(rel) for rel in st.relations] if st.relations else view.tables()
    word = "VACUUM" if vacuum else "ANALYZE"
    notices = []
    for table in tables:
        if isinstance(table, ViewDef):
            notices.append(Notice("WARNING", "01000", f'skipping "{table.name}" --- cannot '
                                  f"{word.lower()} non-tables or special system tables"))
            continue
        if vacuum:
            ms = session.settings.milliseconds("lock_timeout")
            compaction.compact(session.engine, table, 0.0, ms / 1000.0 if ms > 0 else None,
                               session.cancel.event)
        table_stats.analyze_table(session, table)
    return QueryResult(ResultKind.COMMAND, tag=lambda: word, notices=notices)
