"""The name lock every DDL statement takes (coordinator/transaction.py `NameLocks`), with
the session's lock_timeout and cancel."""

from __future__ import annotations


def lock_name(session, txn, name: str) -> None:
    """Lock relation name `name` for `txn` until it ends, waiting at most lock_timeout."""
    ms = session.settings.milliseconds("lock_timeout")
    txn.lock(name, ms / 1000.0 if ms > 0 else None, session.cancel.event)
