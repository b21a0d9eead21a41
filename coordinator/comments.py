"""COMMENT ON (planner/comment_statement.py), in the session's transaction.

A comment is kept with its object (planner/schema.py: TableDef, ColumnDef, ViewDef,
CheckDef, UniqueKey, IndexDef, Namespace; planner/sequences.py SequenceDef), so it is
changed the way the object's other DDL changes it: a new definition of a table, view,
sequence or schema that replaces the old one at COMMIT and is gone on ROLLBACK, under the
object's name lock. ROLLBACK TO a savepoint before it undoes a table's or view's comment
(a catalog change only, as view DDL); a sequence's or schema's is DDL it refuses to undo,
as for their other changes. It goes with its object (DROP) and shows in pg_description and the
*_description functions (coordinator/system_catalog.py). Errors are PostgreSQL's, naming
what was written: 42P01 no such relation, 42809 a relation of another kind, 42703 no such
column, 42704 no such constraint or index, 3F000 no such schema.
"""

from __future__ import annotations

from dataclasses import replace

from coordinator import ddl
from coordinator.ddl_locks import lock_name, sequence_tag
from coordinator.pgwire.boundary import QueryResult, ResultKind
from coordinator.transaction import schema_tag
from planner import errors
from planner.comment_statement import Comment, Target
from planner.schema import IndexDef, TableDef, ViewDef


def execute(session, st: Comment, txn) -> QueryResult:
    session.check_writable("COMMENT")
    view = session.catalog_view(txn)
    if st.target is Target.SCHEMA:
        _schema(session, view, st, txn)
    elif st.target is Target.SEQUENCE:
        _sequence(session, view, st, txn)
    elif st.target is Target.INDEX:
        _index(session, view, st, txn)
    else:
        _relation(session, view, st, txn)
    return QueryResult(ResultKind.COMMAND, tag=lambda: "COMMENT")


def _kind_of(view, rel) -> str | None:
    """What `rel` names besides a table or view: "sequence", "index" or None."""
    if view.lookup_sequence(rel) is not None:
        return "sequence"
    if view.lookup_index(rel) is not None:
        return "index"
    return None


def _not_a(name: str, kind: str) -> errors.QueryError:
    article = "an" if kind[0] in "aeiou" else "a"
    return errors.QueryError(f'"{name}" is not {article} {kind}', "42809")


def _relation(session, view, st: Comment, txn) -> None:
    """TABLE, VIEW, COLUMN and CONSTRAINT: a new definition of the table or view."""
    rel = st.name
    found = view.lookup(rel)
    if found is None:
        other = _kind_of(view, rel)
        if other is None:
            view.open(rel)  # 42P01 / 3F000 / 0A000
        if st.target is Target.COLUMN:
            raise errors.QueryError(f'cannot set comment on relation "{rel.name}"', "42809",
                                    detail="This operation is not supported for "
                                           f"{ {'index': 'indexes'}.get(other, other + 's')}.")
        if st.target is Target.CONSTRAINT:
            raise _no_constraint(st)
        raise _not_a(rel.name, st.target.value.lower())
    is_view = isinstance(found, ViewDef)
    if st.target is Target.TABLE and is_view:
        raise _not_a(rel.name, "table")
    if st.target is Target.VIEW and not is_view:
        raise _not_a(rel.name, "view")
    if st.target is Target.CONSTRAINT and is_view:
        raise _no_constraint(st)
    ddl.lock_table(session, txn, view, found)
    current = view.visible(found.namespace, found.name)
    if current is None or current.id != found.id:
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    if st.target is Target.COLUMN:
        i = current.column_index(st.column)
        if i is None:
            raise errors.UndefinedColumn(
                f'column "{st.column}" of relation "{current.name}" does not exist')
        cols = list(current.columns)
        cols[i] = replace(cols[i], comment=st.text)
        new = replace(current, columns=tuple(cols))
    elif st.target is Target.CONSTRAINT:
        new = _constraint(current, st)
    else:
        new = replace(current, comment=st.text)
    if is_view:
        txn.create_view(new, replaces=current)
    else:
        txn.redefine_table(current, new)


def _no_constraint(st: Comment) -> errors.QueryError:
    return errors.QueryError(
        f'constraint "{st.constraint}" for table "{st.name.name}" does not exist', "42704")


def _constraint(table: TableDef, st: Comment) -> TableDef:
    if any(c.name == st.constraint for c in table.checks):
        return replace(table, checks=tuple(replace(c, comment=st.text)
                                           if c.name == st.constraint else c
                                           for c in table.checks))
    if any(k.name == st.constraint for k in table.unique):
        return replace(table, unique=tuple(replace(k, comment=st.text)
                                           if k.name == st.constraint else k
                                           for k in table.unique))
    raise _no_constraint(st)


def _find(view, rel, find, kind: str):
    """What `find` (one of the view's lookups) finds for `rel`, else PostgreSQL's error:
    42809 when a relation of another kind has the name, 42P01 (3F000) when none has."""
    found = find(rel)
    if found is None:
        if any(other(rel) is not None for other in
               (view.lookup, view.lookup_sequence, view.lookup_index) if other != find):
            raise _not_a(rel.name, kind)
        view.check_schema(rel)
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    return found


def _index(session, view, st: Comment, txn) -> None:
    rel = st.name
    table, index = _find(view, rel, view.lookup_index, "index")
    ddl.lock_table(session, txn, view, table)
    current = view.visible(table.namespace, table.name)
    if current is None or current.id != table.id:
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    if isinstance(index, IndexDef):
        new = replace(current, indexes=tuple(replace(x, comment=st.text)
                                             if x.id == index.id else x
                                             for x in current.indexes))
    else:
        new = replace(current, unique=tuple(replace(k, index_comment=st.text)
                                            if k.name == index.name else k
                                            for k in current.unique))
    txn.redefine_table(current, new)


def _sequence(session, view, st: Comment, txn) -> None:
    rel = st.name
    seq = _find(view, rel, view.lookup_sequence, "sequence")
    lock_name(session, txn, sequence_tag(seq.name))
    current = session.catalog_view(txn).visible_sequence(seq.name)
    if current is None or current.id != seq.id:
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    txn.alter_sequence(replace(current, comment=st.text), None)


def _schema(session, view, st: Comment, txn) -> None:
    name = st.name.name
    lock_name(session, txn, schema_tag(name))
    ns = session.catalog_view(txn).namespace(name)
    if ns is None:
        raise errors.QueryError(f'schema "{name}" does not exist', "3F000")
    txn.change_namespace(ns.oid, replace(ns, comment=st.text))
