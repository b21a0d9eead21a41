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
with PostgreSQL's errors for schemas and databases that do not exist; a name lock is on
(schema oid, name). Schemas: coordinator/schema_ddl.py.
"""

from __future__ import annotations

from dataclasses import replace

from coordinator import autostats, compaction, load, sequence_ddl, table_stats, temp_tables
from coordinator.ddl_locks import lock_name
from coordinator.pgwire.boundary import Notice, QueryResult, ResultKind
from coordinator.transaction import relation_tag, schema_tag
from planner import constraints, errors, statements, types, unique_keys
from planner.schema import (CheckDef, ColumnDef, Namespace, Relation, RelationName, TableDef,
                            UniqueKey, ViewDef, relation_name)
from sqlglot import exp
from coordinator import query


def hold_schema(session, txn, schema: Namespace) -> None:
    """Hold the name of the schema a table is created in shared: a DROP or ALTER SCHEMA
    of it in another transaction waits for this one, and this one for theirs; 3F000 when
    the schema is gone once the lock is ours."""
    lock_name(session, txn, schema_tag(schema.name), shared=True)
    if all(n.oid != schema.oid for n in session.catalog_view(txn).namespaces()):
        raise errors.QueryError(f'schema "{schema.name}" does not exist', "3F000")


def lock_table(session, txn, view, table: Relation) -> None:
    """Lock the name of `table` (a table or view found by `view`) for `txn`."""
    lock_name(session, txn, relation_tag(table.namespace, view.schema_name(table.namespace),
                                         table.name))


def _command(tag: str, session=None, notices: list[Notice] | None = None) -> QueryResult:
    """A command's result, with the NOTICEs client_min_messages lets through."""
    shown = notices if notices and session is not None and session.wants_notices() else []
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag, notices=shown)


def _exists_notice(name: str) -> Notice:
    return Notice(f'relation "{name}" already exists, skipping', code="42P07")


def _target_relation(tree) -> RelationName:
    """The table a CREATE TABLE [AS] names."""
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    return relation_name(target)


def new_table(session, txn, schema: Namespace, name: str, columns: list[ColumnDef],
              policy_clause, unique: tuple[UniqueKey, ...] = (),
              checks: tuple[CheckDef, ...] = ()) -> TableDef:
    """Create table `name` in `schema` in `txn` (its name already locked by it)."""
    if not columns:
        raise errors.FeatureNotSupported("tables without columns")
    policy = (unique_keys.default_policy(unique) if policy_clause is None else None) \
        or statements.dist_policy(policy_clause, columns)
    unique_keys.check_policy(name, policy, unique, columns)
    unique = _key_names(session, txn, schema, name, unique, columns)
    table = TableDef(session.engine.catalog.next_id("table"), name, tuple(columns), policy,
                     namespace=schema.oid, unique=unique, checks=checks,
                     numsegments=session.engine.cluster.n_segments)
    txn.create_table(table)
    return table


def _key_names(session, txn, schema: Namespace, table: str, unique: tuple[UniqueKey, ...],
               columns: list[ColumnDef]) -> tuple[UniqueKey, ...]:
    """Each key's index is a relation of the schema too: a name a relation there has is
    42P07, and a default name (t_pkey, t_a_key) takes the first free suffix instead
    (t_pkey1), as PostgreSQL's ChooseRelationName does. The names are locked."""
    view = session.catalog_view(txn)
    out = []
    for k in unique:
        name = k.name
        base = unique_keys.default_base(table, k.primary, [columns[p].name for p in k.columns])
        n = 0
        while name == (f"{base}{n}" if n else base) and view.relation_taken(schema.oid, name):
            n += 1
            name = f"{base}{n}"
        lock_name(session, txn, relation_tag(schema.oid, schema.name, name))
        if view.relation_taken(schema.oid, name) or any(o.name == name for o in out):
            raise errors.DuplicateTable(f'relation "{name}" already exists')
        out.append(replace(k, name=name) if name != k.name else k)
    return tuple(out)


def _exists(session, txn, view, schema: Namespace, name: str) -> bool:
    """Whether a relation named `name` (a table or view of `schema`, or in public a
    sequence) exists, its schema held and (when it does not exist yet) its name locked by
    `txn`: another transaction may have committed one while this one waited."""
    hold_schema(session, txn, schema)
    if view.relation_taken(schema.oid, name):
        return True
    lock_name(session, txn, relation_tag(schema.oid, schema.name, name))
    return view.relation_taken(schema.oid, name)


def create_table(session, st, txn, schema: Namespace | None = None) -> QueryResult:
    """CREATE TABLE, in the schema its name or search_path gives, or in `schema` (a
    schema element of CREATE SCHEMA: its name is the new schema's, if it has one)."""
    view = session.catalog_view(txn)
    if st.temporary:
        schema = _temp_schema(session, txn, _target_relation(st.tree))
        view = session.catalog_view(txn)
    if schema is None:
        schema, name = view.creation_target(_target_relation(st.tree))
    else:
        name = _target_relation(st.tree).name
    if _exists(session, txn, view, schema, name):
        if st.if_not_exists:
            return _command("CREATE TABLE", session, [_exists_notice(name)])
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    checks = _checks(view, schema.oid, name, st.checks, st.columns)
    seqs, columns = sequence_ddl.column_sequences(session, txn, view, schema, name,
                                                  st.column_sequences, st.columns)
    table = new_table(session, txn, schema, name, columns, st.policy_clause, st.unique, checks)
    sequence_ddl.create_owned(session, txn, table, seqs, st.column_sequences)
    return _command("CREATE TABLE")


def _temp_schema(session, txn, rel: RelationName) -> Namespace:
    """CREATE TEMP TABLE's schema: the session's temporary one (made now if need be)."""
    temp_tables.check_target(rel, session.pid)
    session.has_temp_tables = True
    return temp_tables.ensure(session, txn)


def _checks(view, namespace: int, table: str, given, columns) -> tuple[CheckDef, ...]:
    """The CHECK constraints of a new table, named as PostgreSQL names them (a name is
    unique among the constraints of the tables of its schema)."""
    taken = {k.name for t in view.relations_in(namespace) if isinstance(t, TableDef)
             for k in (*t.checks, *t.unique)}
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
    if st.temporary:
        schema = _temp_schema(session, txn, _target_relation(tree))
        view = session.catalog_view(txn)
        name = _target_relation(tree).name
    else:
        schema, name = view.creation_target(_target_relation(tree))
    # Its binding errors first, as in PostgreSQL; only the columns are wanted here, so no
    # InitPlan runs (insert_plan runs them once, with the rows it writes).
    root, names = query.plan(session, tree.expression, params=[])
    if _exists(session, txn, view, schema, name):
        if st.if_not_exists:
            return _command("CREATE TABLE AS", session, [_exists_notice(name)])
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    aliases = [c.name for c in st.columns]
    if len(aliases) > len(names):
        raise errors.SyntaxError_("CREATE TABLE AS specifies too many column names")
    cols = []
    for i, (n, f) in enumerate(zip(names, root.fields)):
        t = types.TEXT if f.type.kind is types.Kind.UNKNOWN else f.type
        if t.padded:  # stored bpchar keeps no trailing spaces: storing them is 0A000
            t = types.BPCHAR
        cols.append(ColumnDef(aliases[i] if i < len(aliases) else n, t))
    table = new_table(session, txn, schema, name, cols, st.policy_clause)
    # A failure from here on fails the statement: its transaction's abort removes the table.
    rows = load.insert_plan(session, table, tree.expression, None, txn, cancel)
    load.note_rows(session, txn, table, rows, ctas=True)
    return _command(f"SELECT {rows}")


def truncate(session, tree, txn) -> QueryResult:
    view = session.catalog_view(txn)
    tables = [view.open(relation_name(t)) for t in tree.find_all(exp.Table)]
    restart = (tree.args.get("identity") or "").upper() == "RESTART"
    for table in tables:
        lock_table(session, txn, view, table)
        current = session.catalog_view(txn).visible(table.namespace, table.name)
        if current is None:
            raise errors.UndefinedTable(f'relation "{table.name}" does not exist')
        if isinstance(current, ViewDef):
            raise errors.QueryError(f'"{current.name}" is not a table', "42809")
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
            if session.wants_notices("WARNING"):
                notices.append(Notice(f'skipping "{table.name}" --- cannot {word.lower()} '
                                      "non-tables or special system tables", code="01000",
                                      severity="WARNING"))
            continue
        if vacuum:
            ms = session.settings.milliseconds("lock_timeout")
            compaction.compact(session.engine, table, 0.0, ms / 1000.0 if ms > 0 else None,
                               session.cancel.event, view.schema_name(table.namespace))
        table_stats.analyze_table(session, table)
    return QueryResult(ResultKind.COMMAND, tag=lambda: word, notices=notices)
