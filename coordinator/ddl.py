"""DDL: CREATE TABLE [AS], DROP TABLE, TRUNCATE, ANALYZE.

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

from coordinator import autostats, load, sequence_ddl, table_stats
from coordinator.ddl_locks import lock_name
from coordinator.pgwire.boundary import QueryResult, ResultKind
from planner import constraints, errors, statements, types
from planner.schema import CheckDef, ColumnDef, RelationName, TableDef, relation_name
from sqlglot import exp
from coordinator import query


def _command(tag: str) -> QueryResult:
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag)


def _target_relation(tree) -> RelationName:
    """The table a CREATE TABLE [AS] names."""
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    return relation_name(target)


def new_table(session, txn, name: str, columns: list[ColumnDef], policy_clause,
              checks: tuple[CheckDef, ...] = ()) -> TableDef:
    """Create table `name` in `txn` (its name already locked by it)."""
    if not columns:
        raise errors.FeatureNotSupported("tables without columns")
    policy = statements.dist_policy(policy_clause, columns)
    table = TableDef(session.engine.catalog.next_id("table"), name, tuple(columns), policy,
                     checks=checks)
    txn.create_table(table)
    return table


def _exists_after_lock(session, txn, view, name: str) -> bool:
    """Lock `name`, then whether a table of that name is visible (another transaction
    may have committed one while this one waited)."""
    lock_name(session, txn, name)
    return view.relation_taken(name)


def create_table(session, st, txn) -> QueryResult:
    view = session.catalog_view(txn)
    name = view.creation_name(_target_relation(st.tree))
    if view.relation_taken(name) or _exists_after_lock(session, txn, view, name):
        if st.if_not_exists:
            return _command("CREATE TABLE")  # PostgreSQL: NOTICE ... already exists, skipping
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    checks = _checks(view, name, st.checks, st.columns)
    seqs, columns = sequence_ddl.column_sequences(session, txn, view, name,
                                                  st.column_sequences, st.columns)
    table = new_table(session, txn, name, columns, st.policy_clause, checks)
    sequence_ddl.create_owned(session, txn, table, seqs, st.column_sequences)
    return _command("CREATE TABLE")


def _checks(view, table: str, given, columns) -> tuple[CheckDef, ...]:
    """The CHECK constraints of a new table, named as PostgreSQL names them."""
    taken = {k.name for t in view.tables() for k in t.checks}
    mine: set[str] = set()
    out = []
    for name, tree in given:
        if name is not None and name in mine:
            raise errors.QueryError(f'constraint "{name}" for relation "{table}" already '
                                    "exists", "42710")
        if name is None:
            name = constraints.check_name(table, tree, columns, taken | mine)
        mine.add(name)
        constraints.bind_check_tree(tree, columns, table)  # its errors, as written
        sql = constraints.check_text(tree, columns, table)
        out.append(CheckDef(name, sql, constraints.stored_check(sql, columns, table)))
    return tuple(out)


def create_table_as(session, st, tree, txn, cancel) -> QueryResult:
    view = session.catalog_view(txn)
    name = view.creation_name(_target_relation(tree))
    root, names = query.plan(session, tree.expression)  # its errors first, as in PostgreSQL
    if view.relation_taken(name) or _exists_after_lock(session, txn, view, name):
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


def drop_table(session, st, txn) -> QueryResult:
    view = session.catalog_view(txn)
    names = []
    for t in st.tree.find_all(exp.Table):
        rel = relation_name(t)
        view.check_database(rel)
        if rel.schema is not None and not view.schema_exists(rel.schema):
            if st.if_not_exists:
                continue  # PostgreSQL: NOTICE schema ... does not exist, skipping
            view.check_schema(rel)
        if view.lookup(rel) is None:
            if view.lookup_sequence(rel) is not None:
                raise errors.QueryError(f'"{rel.name}" is not a table', "42809",
                                        hint="Use DROP SEQUENCE to remove a sequence.")
            if st.if_not_exists:
                continue  # PostgreSQL: NOTICE table ... does not exist, skipping
            raise errors.UndefinedTable(f'table "{rel.name}" does not exist')
        names.append(rel.name)
    for name in names:
        lock_name(session, txn, name)
        table = view.visible(name)  # whatever holds the name now that it is ours
        if table is None:
            if st.if_not_exists:
                continue
            raise errors.UndefinedTable(f'table "{name}" does not exist')
        sequence_ddl.drop_owned(session, txn, view, table, set(names))
        txn.drop_table(table)
    return _command("DROP TABLE")


def truncate(session, tree, txn) -> QueryResult:
    view = session.catalog_view(txn)
    tables = [view.open(relation_name(t)) for t in tree.find_all(exp.Table)]
    restart = (tree.args.get("identity") or "").upper() == "RESTART"
    for table in tables:
        lock_name(session, txn, table.name)
        current = view.visible(table.name)
        if current is None:
            raise errors.UndefinedTable(f'relation "{table.name}" does not exist')
        txn.truncate(current.id)
        autostats.note_truncate(session, txn, current)
    if restart:
        # RESTART IDENTITY restarts the sequences the tables' columns own, in the
        # transaction, as ALTER SEQUENCE ... RESTART does (coordinator/sequence_ddl.py).
        for q in view.sequences():
            if q.owner is not None and any(q.owner.table_id == t.id for t in tables):
                sequence_ddl.restart_in(session, txn, q, q.options.start)
    return _command("TRUNCATE TABLE")


def analyze(session, st) -> QueryResult:
    """ANALYZE [table, ...]: rows, null fraction and distinct estimates per column."""
    view = session.catalog_view(session.txn)
    tables = [view.open(rel) for rel in st.relations] if st.relations else view.tables()
    for table in tables:
        table_stats.analyze_table(session, table)
    return _command("ANALYZE" if st.text.lstrip()[:7].upper() == "ANALYZE" else "VACUUM")
