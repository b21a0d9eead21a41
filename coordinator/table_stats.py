"""The planner's row and column statistics of a table, kept in the catalog: the estimate
a load adds to and ANALYZE's figures, both under the catalog's statistics lock."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from planner import errors
from planner.schema import TableDef, TableStats


@contextlib.contextmanager
def catalog_lock(session):
    """The engine's statistics lock, waited for at most lock_timeout (0: as long as it
    takes), then 55P03 as PostgreSQL says it."""
    ms = session.settings.milliseconds("lock_timeout")
    if not session.engine.ddl_lock.acquire(timeout=ms / 1000.0 if ms > 0 else -1):
        raise errors.LockNotAvailable("canceling statement due to lock timeout")
    try:
        yield
    finally:
        session.engine.ddl_lock.release()


def add_row_estimate(session, table: TableDef, added: int) -> None:
    set_rows(session, table, lambda old: old + added)


def set_rows(session, table: TableDef, new_rows, columns=None) -> None:
    txn = session.txn
    mine = txn.created.get(table.name) if txn is not None else None
    if mine is not None and mine.id == table.id:
        # A table this transaction created: its statistics commit (or vanish) with it.
        stats = TableStats(new_rows(mine.stats.rows),
                           mine.stats.columns if columns is None else columns)
        txn.replace_created(replace(mine, stats=stats))
        return
    with catalog_lock(session):
        current = session.engine.catalog.get_table(table.name)
        if current is not None and current.id == table.id:
            stats = TableStats(new_rows(current.stats.rows),
                               current.stats.columns if columns is None else columns)
            session.engine.catalog.update_table(replace(current, stats=stats))
