"""Temporary tables: CREATE TEMP TABLE puts the table in the session's own schema,
`pg_temp_<pid>` (as PostgreSQL's pg_temp_N), made by the first such CREATE in the session
(with its transaction: a ROLLBACK takes it back). The schema is searched first for
tables (coordinator/catalog.py SessionCatalog), `pg_temp` names it, and other sessions
see it only by its full name. When the session ends its tables and the schema are
dropped, in a transaction of their own; a coordinator that stopped before that drops the
temporary schemas left over when it starts again (`drop_orphans`), before any session.
"""

from __future__ import annotations

import logging

from coordinator.transaction import Transaction, relation_tag, schema_tag
from planner import errors
from planner import schema as sch

log = logging.getLogger(__name__)

PREFIX = "pg_temp_"
ALIAS = "pg_temp"  # how a statement names its session's temporary schema


def schema_name(pid: int) -> str:
    return f"{PREFIX}{pid}"


def ensure(session, txn) -> sch.Namespace:
    """The session's temporary schema, made in `txn` if it has none yet."""
    name = schema_name(session.pid)
    ms = session.settings.milliseconds("lock_timeout")
    wait = ms / 1000.0 if ms > 0 else None
    # Exclusive at once: the schema is this session's alone (and held so, a DROP SCHEMA
    # of it by another session waits for the end of this transaction).
    txn.lock(schema_tag(name), wait, session.cancel.event)
    ns = session.catalog_view(txn).namespace(name)
    if ns is not None:
        return ns
    me = session.engine.catalog.get_role(session.user)
    ns = sch.Namespace(session.engine.catalog.new_schema_oid(), name,
                       me.oid if me is not None else sch.BOOTSTRAP_ROLE_OID)
    txn.change_namespace(ns.oid, ns)
    return ns


def check_target(rel: sch.RelationName, pid: int) -> None:
    """42P16 for a temporary table named into a schema that is not temporary."""
    if rel.schema is not None and rel.schema not in (ALIAS, schema_name(pid)):
        raise errors.QueryError("cannot create temporary relation in non-temporary schema",
                                "42P16")


def drop_session_schema(engine, pid: int) -> None:
    """At the end of session `pid`: its temporary tables and schema, gone."""
    _drop(engine, [n for n in engine.catalog.schemas() if n.name == schema_name(pid)])


def drop_orphans(engine) -> None:
    """At start: the temporary schemas of sessions of an earlier coordinator process."""
    _drop(engine, [n for n in engine.catalog.schemas() if n.name.startswith(PREFIX)])


def _drop(engine, schemas: list[sch.Namespace]) -> None:
    if not schemas:
        return
    txn = Transaction(engine.catalog, engine.cluster, explicit=False, locks=engine.locks)
    ok = False
    try:
        for ns in schemas:
            txn.lock(schema_tag(ns.name))
            for table in [t for t in engine.catalog.tables() if t.namespace == ns.oid]:
                txn.lock(relation_tag(ns.oid, ns.name, table.name))
                txn.drop_table(table)
            txn.change_namespace(ns.oid, None)
        ok = True
    finally:
        if ok:
            txn.commit()
        else:
            txn.abort()
