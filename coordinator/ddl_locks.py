"""The name locks every DDL statement takes (coordinator/transaction.py `NameLocks`), with
the session's lock_timeout and cancel."""

from __future__ import annotations

from coordinator.transaction import LockTag, relation_tag
from planner import schema as sch


def lock_name(session, txn, name: LockTag, shared: bool = False) -> None:
    """Lock a table or schema name for `txn` until it ends, waiting at most lock_timeout."""
    ms = session.settings.milliseconds("lock_timeout")
    txn.lock(name, ms / 1000.0 if ms > 0 else None, session.cancel.event, shared)


def sequence_tag(name: str) -> LockTag:
    """The lock of a sequence's name: sequences are all in public, whose names they share
    with its tables."""
    return relation_tag(sch.PUBLIC_OID, sch.PUBLIC, name)
