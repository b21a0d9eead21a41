"""CREATE INDEX and DROP INDEX (planner/index_statement.py), in the session's transaction.

raympp builds no index structure: scans read every chunk a query's min/max ranges cannot
skip. CREATE INDEX records the index in its table's definition (planner/schema.py
IndexDef), which replaces the table's at COMMIT as ALTER TABLE's does (nothing is left
after ROLLBACK, nor after ROLLBACK TO a savepoint before it: it is a catalog change only,
`Transaction.redefine_table`), says so in a NOTICE, and the catalog shows it as PostgreSQL shows a
btree index (coordinator/index_catalog.py). It goes with its table (DROP TABLE) and with a
column it covers (ALTER TABLE DROP COLUMN). Index names are relation names: they clash
with tables, views, sequences and the keys' indexes of their schema (42P07), and the
name is locked as a table's is.
"""

from __future__ import annotations

from dataclasses import replace

from coordinator import ddl
from coordinator.ddl_locks import lock_name
from coordinator.index_catalog import opclass
from coordinator.pgwire.boundary import Notice
from coordinator.transaction import relation_tag
from planner import errors
from planner.index_statement import CreateIndex, DropIndex
from planner.schema import IndexDef, TableDef, ViewDef


def execute(session, st, txn):
    if isinstance(st, CreateIndex):
        return create(session, st, txn)
    return drop(session, st, txn)


def create(session, st: CreateIndex, txn):
    session.check_writable("CREATE INDEX")
    view = session.catalog_view(txn)
    table = view.lookup(st.table)
    if table is None and view.lookup_sequence(st.table) is not None:
        raise _cannot_index(st.table.name, "sequences")
    if table is None:
        view.open(st.table)  # 42P01 / 3F000 / 0A000 as PostgreSQL says them
    if isinstance(table, ViewDef):
        raise _cannot_index(table.name, "views")
    ddl.lock_table(session, txn, view, table)
    table = view.visible(table.namespace, table.name)
    if table is None:
        raise errors.UndefinedTable(f'relation "{st.table}" does not exist')
    positions = []
    for name in st.columns:
        p = table.column_index(name)
        if p is None:
            raise errors.UndefinedColumn(f'column "{name}" does not exist')
        c = table.columns[p]
        opclass(c.type.oid, c.type.is_array)  # 42704 for a type btree cannot order
        positions.append(p)
    schema = view.schema_name(table.namespace)
    name = st.name or _default_name(view, table, st.columns)
    lock_name(session, txn, relation_tag(table.namespace, schema, name))
    if view.relation_taken(table.namespace, name):
        if st.if_not_exists:
            return ddl._command("CREATE INDEX", session,
                                [Notice(f'relation "{name}" already exists, skipping',
                                        code="42P07")])
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    index = IndexDef(session.engine.catalog.next_id("table"), name, tuple(positions))
    txn.redefine_table(table, replace(table, indexes=table.indexes + (index,)))
    return ddl._command("CREATE INDEX", session, [Notice(
        f'index "{name}" is recorded in the catalog only: raympp builds no index structure '
        "(scans skip chunks by their min/max values)")])


def _cannot_index(name: str, kind: str) -> errors.QueryError:
    return errors.QueryError(f'cannot create index on relation "{name}"', "42809",
                             detail=f"This operation is not supported for {kind}.")


def _default_name(view, table: TableDef, columns: tuple[str, ...]) -> str:
    """PostgreSQL's ChooseIndexName: table_col1_col2_idx, then ...idx1, idx2, ... until
    no relation of the schema has the name."""
    base = f"{table.name}_{'_'.join(columns)}_idx"
    name, n = base, 0
    while view.relation_taken(table.namespace, name):
        n += 1
        name = f"{base}{n}"
    return name


def drop(session, st: DropIndex, txn):
    session.check_writable("DROP INDEX")
    notices = []
    for rel in st.names:
        view = session.catalog_view(txn)
        view.check_database(rel)
        found = view.lookup_index(rel)
        if found is None:
            other = view.lookup(rel) if (rel.schema is None or view.schema_exists(rel.schema)) \
                else None
            if other is not None:
                kind = "VIEW" if isinstance(other, ViewDef) else "TABLE"
                raise errors.QueryError(f'"{rel.name}" is not an index', "42809",
                                        hint=f"Use DROP {kind} to remove a "
                                             f"{kind.lower()}.")
            if st.if_exists:
                notices.append(Notice(f'index "{rel}" does not exist, skipping'))
                continue
            view.check_schema(rel)
            raise errors.QueryError(f'index "{rel}" does not exist', "42704")
        table, index = found
        if not isinstance(index, IndexDef):
            # A key's index: the constraint needs it (DROP ... CASCADE would drop the
            # constraint, which ALTER TABLE cannot do here).
            if st.cascade:
                raise errors.FeatureNotSupported(
                    f"DROP INDEX ... CASCADE of the index of constraint {index.name}")
            raise errors.QueryError(
                f"cannot drop index {index.name} because constraint {index.name} on table "
                f"{table.name} requires it", "2BP01",
                hint=f"You can drop constraint {index.name} on table {table.name} instead.")
        ddl.lock_table(session, txn, view, table)
        table = view.visible(table.namespace, table.name)
        current = [x for x in table.indexes if x.id == index.id] if table is not None else []
        if not current:
            raise errors.QueryError(f'index "{rel}" does not exist', "42704")
        txn.redefine_table(table, replace(
            table, indexes=tuple(x for x in table.indexes if x.id != index.id)))
    return ddl._command("DROP INDEX", session, notices)
