"""CREATE SEQUENCE, ALTER SEQUENCE and DROP SEQUENCE; the sequences CREATE TABLE makes for
SERIAL and identity columns, and the ones DROP TABLE drops with their table.

CREATE and DROP are transactional as tables are (coordinator/transaction.py: the
transaction's `created_sequences` and `dropped_sequences`, applied at its commit point),
and hold the name locked until the transaction ends. Sequences exist in schema public only
(elsewhere 0A000, also for SERIAL and identity columns of tables in other schemas); they
share its names with its tables (a sequence and a table cannot both be public.s: 42P07). The counter is not transactional
(coordinator/sequences.py), as PostgreSQL's nextval is not.

ALTER SEQUENCE is transactional too: the new definition, and with RESTART a counter of the
transaction's own (its nextval and setval use it), are written at its commit point
(`altered_sequences`, `sequence_states`); ROLLBACK forgets them. Other sessions go on with
the committed definition and counter meanwhile (PostgreSQL would make them wait).
"""

from __future__ import annotations

import dataclasses
import re

from coordinator.ddl_locks import lock_name, sequence_tag
from coordinator.pgwire.boundary import QueryResult, ResultKind
from planner import catalog_names as cn
from planner import errors
from planner import schema as sch
from planner import sequences as sq
from planner.schema import Namespace, TableDef
from planner.constraints import choose_name
from planner.string_format import quote_literal
from planner.sequences import Action, Owner, SequenceDef, SequenceStatement


def _command(tag: str) -> QueryResult:
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag)


def execute(session, st: SequenceStatement, txn) -> QueryResult:
    session.check_writable(st.action.value)
    if st.action is Action.CREATE:
        return _create(session, st, txn)
    if st.action is Action.ALTER:
        return _alter(session, st, txn)
    return _drop(session, st, txn)


def _owner(view, st_owner, seq_name: str) -> Owner | None:
    """OWNED BY table.column: the table must be a visible table with that column, in the
    sequence's schema (public: so DROP SCHEMA never drops a table that owns one)."""
    rel, column = st_owner
    table = view.lookup(rel)
    if table is None:
        view.check_schema(rel)
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    if table.namespace != sch.PUBLIC_OID:  # the sequence's (all are in public)
        raise errors.QueryError("sequence must be in same schema as table it is linked to",
                                "55000")
    if table.column_index(column) is None:
        raise errors.UndefinedColumn(f'column "{column}" of relation "{table.name}" does not '
                                     "exist")
    return Owner(table.id, column)


def _create(session, st: SequenceStatement, txn) -> QueryResult:
    view = session.catalog_view(txn)
    schema, name = view.creation_target(st.names[0])
    check_public(schema)
    options = sq.resolve(st.options)
    if view.relation_taken(sch.PUBLIC_OID, name) or _taken_after_lock(session, txn, view, name):
        if st.if_exists:
            return _command("CREATE SEQUENCE")  # PostgreSQL: NOTICE ... already exists
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    owner = _owner(view, st.options.owned_by, name) if st.options.owned_by else None
    seq = SequenceDef(session.engine.catalog.next_id("table"), name, options, owner)
    txn.create_sequence(seq)
    return _command("CREATE SEQUENCE")


def check_public(schema: Namespace) -> None:
    """0A000 for a sequence in another schema than public (not implemented)."""
    if schema.oid != sch.PUBLIC_OID:
        raise errors.FeatureNotSupported(
            f'sequences in schema "{schema.name}" (sequences exist in schema public only)')


def _taken_after_lock(session, txn, view, name: str) -> bool:
    lock_name(session, txn, sequence_tag(name))
    return view.relation_taken(sch.PUBLIC_OID, name)


def _alter(session, st: SequenceStatement, txn) -> QueryResult:
    view = session.catalog_view(txn)
    rel = st.names[0]
    seq = view.lookup_sequence(rel)
    if seq is None:
        if view.lookup(rel) is not None:
            raise errors.QueryError(f'"{rel.name}" is not a sequence', "42809")
        if st.if_exists:
            return _command("ALTER SEQUENCE")  # NOTICE: relation ... does not exist, skipping
        view.check_schema(rel)
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    lock_name(session, txn, sequence_tag(seq.name))
    seq = view.visible_sequence(seq.name)  # as it is now that the name is ours
    if seq is None:
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    options = sq.resolve(st.options, seq.options)
    restart = sq.restart_value(st.options, options)
    owner = seq.owner
    if st.options.owned_none:
        owner = None
    elif st.options.owned_by:
        owner = _owner(view, st.options.owned_by, seq.name)
    changed = dataclasses.replace(seq, options=options, owner=owner)  # its comment stays
    if restart is None:
        txn.alter_sequence(changed, None)
    else:
        restart_in(session, txn, changed, restart)
    return _command("ALTER SEQUENCE")


def restart_in(session, txn, seq: SequenceDef, value: int) -> None:
    """`seq` (its definition as `txn` makes it) restarted at `value` in `txn`: its own
    counter until the commit point writes it; then the engine's counter follows."""
    lock_name(session, txn, sequence_tag(seq.name))
    txn.alter_sequence(seq, value)
    counters = session.engine.sequences
    txn.after_commit["sequence counters"] = lambda: counters.install(txn.sequence_states)


_NEXTVAL = re.compile(r"nextval\('((?:[^']|'')+)'::regclass\)")


def dependents(view, seq: SequenceDef) -> list[tuple[TableDef, str]]:
    """(table, column) of the defaults that call nextval of `seq`."""
    out = []
    for table in view.tables():
        for c in table.columns:
            if c.default and any(n.replace("''", "'").strip('"') == seq.name
                                 for n in _NEXTVAL.findall(c.default)):
                out.append((table, c.name))
    return out


def _drop(session, st: SequenceStatement, txn) -> QueryResult:
    view = session.catalog_view(txn)
    found: list[str] = []
    for rel in st.names:
        view.check_database(rel)
        if rel.schema is not None and not view.schema_exists(rel.schema):
            if st.if_exists:
                continue
            view.check_schema(rel)
        if view.lookup_sequence(rel) is None:
            if view.lookup(rel) is not None:
                raise errors.QueryError(f'"{rel.name}" is not a sequence', "42809",
                                        hint="Use DROP TABLE to remove a table.")
            if st.if_exists:
                continue  # NOTICE: sequence ... does not exist, skipping
            raise errors.UndefinedTable(f'sequence "{rel.name}" does not exist')
        found.append(rel.name)
    for name in found:
        lock_name(session, txn, sequence_tag(name))
        seq = view.visible_sequence(name)
        if seq is None:
            if st.if_exists:
                continue
            raise errors.UndefinedTable(f'sequence "{name}" does not exist')
        _check_droppable(view, seq, st.cascade)
        txn.drop_sequence(seq)
    return _command("DROP SEQUENCE")


def _check_droppable(view, seq: SequenceDef, cascade: bool) -> None:
    """2BP01 as PostgreSQL: an identity column's sequence goes with its column only; one
    a default uses needs CASCADE (which would drop the default: not implemented)."""
    if seq.identity and seq.owner is not None:
        table = next((t for t in view.tables() if t.id == seq.owner.table_id), None)
        if table is not None:
            raise errors.QueryError(
                f"cannot drop sequence {seq.name} because column {seq.owner.column} of table "
                f"{table.name} requires it", "2BP01",
                hint=f"You can drop column {seq.owner.column} of table {table.name} instead.")
    users = dependents(view, seq)
    if users and cascade:
        raise errors.FeatureNotSupported(
            "DROP SEQUENCE ... CASCADE of a sequence a column default uses (it would drop "
            "the default: ALTER TABLE is not implemented here)")
    if users:
        detail = "\n".join(f"default value for column {c} of table {t.name} depends on "
                           f"sequence {seq.name}" for t, c in users)
        raise errors.QueryError(
            f"cannot drop sequence {seq.name} because other objects depend on it", "2BP01",
            detail=detail, hint="Use DROP ... CASCADE to drop the dependent objects too.")


# --- CREATE TABLE / DROP TABLE ------------------------------------------------------------------
def column_sequences(session, txn, view, schema: Namespace, table_name: str, specs, columns):
    """The sequences of a new table's SERIAL and identity columns, named as PostgreSQL
    names them (`t_c_seq`, then `t_c_seq1`, ... while the name is taken), and the columns
    with a SERIAL's default `nextval('t_c_seq'::regclass)`. Their owner is set once the
    table has its id (`owned`). 0A000 for a table outside public (where PostgreSQL would
    put its sequences)."""
    if specs:
        check_public(schema)
    made, columns = [], list(columns)
    taken = ({q.name for q in view.sequences()}
             | {t.name for t in view.relations_in(sch.PUBLIC_OID)} | {table_name})
    for spec in specs:
        i = next(k for k, c in enumerate(columns) if c.name == spec.column)
        col = columns[i]
        name = choose_name(f"{table_name}_{spec.column}", "seq", taken)
        taken.add(name)
        type_name = {"INT2": "smallint", "INT4": "integer", "INT8": "bigint"}[col.type.kind.name]
        given = spec.options
        if given.type is not None:
            raise errors.QueryError("conflicting or redundant options", "42601")
        if given.owned_by is not None or given.owned_none:
            raise errors.QueryError("invalid OWNED BY option", "42601")
        options = sq.resolve(sq.OptionList(**{**_fields(given), "type": type_name}))
        made.append(SequenceDef(session.engine.catalog.next_id("table"), name, options,
                                None, spec.identity))
        if not spec.identity:
            columns[i] = dataclasses.replace(
                col, default=f"nextval({quote_literal(cn.quote_ident(name))}::regclass)")
    return made, columns


def _fields(options: sq.OptionList) -> dict:
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}


def create_owned(session, txn, table: TableDef, seqs: list[SequenceDef], specs) -> None:
    """Create the sequences of `table`'s SERIAL and identity columns, owned by them."""
    for seq, spec in zip(seqs, specs):
        lock_name(session, txn, sequence_tag(seq.name))
        if session.catalog_view(txn).relation_taken(sch.PUBLIC_OID, seq.name):
            raise errors.DuplicateTable(f'relation "{seq.name}" already exists')
        txn.create_sequence(SequenceDef(seq.id, seq.name, seq.options,
                                        Owner(table.id, spec.column), seq.identity))


def drop_owned(session, txn, view, table: TableDef, dropping: set[int]) -> None:
    """DROP TABLE drops the sequences its columns own (SERIAL, identity, OWNED BY); 2BP01
    when the default of a table the statement keeps (its id not in `dropping`) uses one."""
    for seq in view.sequences():
        if seq.owner is not None and seq.owner.table_id == table.id:
            users = [(t, c) for t, c in dependents(view, seq) if t.id not in dropping]
            if users:
                raise errors.QueryError(
                    f"cannot drop table {table.name} because other objects depend on it",
                    "2BP01", detail="\n".join(
                        f"default value for column {c} of table {t.name} depends on sequence "
                        f"{seq.name}" for t, c in users),
                    hint="Use DROP ... CASCADE to drop the dependent objects too.")
            lock_name(session, txn, sequence_tag(seq.name))
            txn.drop_sequence(seq)


def identity_sequence(view, table: TableDef, column: str) -> SequenceDef | None:
    """The sequence of an identity column."""
    return next((q for q in view.sequences() if q.identity and q.owner is not None
                 and q.owner.table_id == table.id and q.owner.column == column), None)
