"""Compaction: rewrite the chunks that deletes have left mostly dead.

A DELETE or UPDATE leaves its rows in their chunks, listed as deleted (segment/storage
deletions.py); scans skip them, but they cost reads and disk. Compaction rewrites each
chunk of which enough is deleted: its live rows become a new chunk and the old one goes,
in one transaction that holds the table's name lock (as DELETE does: nobody deletes from
a chunk while it is rewritten) and commits on every segment at once. The rows a query sees
never change, so a crash at any point leaves the table as it was or compacted.

`VACUUM [table, ...]` rewrites every chunk with a deleted row. After a transaction that
deleted rows from a table or added rows to it commits, a background compaction rewrites
the chunks more than half dead (AUTO_FRACTION) once they hold 50 deleted rows or are 8 on
a segment, and merges the chunks of fewer than 65,536 live rows once a segment has 16 of
them (each INSERT commits chunks of its own; `SET raympp.autocompact = off` in the
writing session skips it), if the table's lock is free at once: it never makes a writer
wait long, and a busy table is compacted after a later write. The files the rewritten chunks and replaced deletion
files occupied are removed by each segment once no query that could still read them runs
there (segment/worker.py).
"""

from __future__ import annotations

import logging
import threading

from coordinator.transaction import Transaction, relation_tag
from planner import errors
from planner.schema import TableDef

log = logging.getLogger(__name__)

AUTO_FRACTION = 0.5
# ... once those chunks hold this many deleted rows (PostgreSQL's
# autovacuum_vacuum_threshold), or are this many on some segment: an UPDATE of one row
# writes its new version as a chunk of one row, which the next UPDATE of it leaves dead,
# and compacting each such chunk at once made every such UPDATE wait for the last one's.
AUTO_MIN_DEAD_ROWS = 50
AUTO_MIN_CHUNKS = 8
_AUTO_LOCK_WAIT = 0.0  # seconds: a busy table is left for later


def compact(engine, table: TableDef, min_dead_fraction: float, lock_wait: float | None,
            cancel=None, schema: str = "", merge_small: bool = False) -> int:
    """Rewrite `table`'s chunks with at least `min_dead_fraction` deleted (and with
    `merge_small` its many small ones: ShardStore._doomed), in a transaction of its own.
    Returns the chunks rewritten (0: nothing committed)."""
    txn = Transaction(engine.catalog, engine.cluster, explicit=False, locks=engine.locks)
    ok = False
    try:
        txn.lock(relation_tag(table.namespace, schema, table.name), lock_wait, cancel)
        current = engine.catalog.get_table(table.name, table.namespace)
        if current is None or current.id != table.id:
            return 0  # dropped (or replaced) meanwhile
        txn.begin_write()
        rewritten = sum(txn.call_all("compact", txn.id, table.id, min_dead_fraction,
                                     merge_small))
        ok = rewritten > 0
        return rewritten
    finally:
        if ok:
            txn.commit()
        else:
            txn.abort()


def after_commit(session, txn, table: TableDef) -> None:
    """`txn` deleted rows from `table` or added chunks to it: its commit compacts the
    table in the background when it has enough to compact (`in_background`), unless the
    session set raympp.autocompact off."""
    if session.settings.get("raympp.autocompact"):
        engine = session.engine
        txn.after_commit[f"compact:{table.id}"] = lambda: in_background(engine, table)


def in_background(engine, table: TableDef) -> None:
    """Compact `table` in the background if it has enough to compact and its lock is free
    (after a commit that deleted rows from it or added chunks to it). The segments are
    asked first, without the lock: most commits leave little, and a compaction's
    transaction holding the lock made the writer's next statement on the table wait for
    it (a one-row UPDATE after another: 17.5 ms, a quarter of it waiting)."""
    def run():
        try:
            found = engine.cluster.call_all("compactable", table.id, AUTO_FRACTION, True)
            if sum(dead for _, dead in found) < AUTO_MIN_DEAD_ROWS and \
                    max((chunks for chunks, _ in found), default=0) < AUTO_MIN_CHUNKS:
                return
            compact(engine, table, AUTO_FRACTION, _AUTO_LOCK_WAIT, merge_small=True)
        except errors.QueryError as e:  # busy, dropped, a segment restarting: next time
            log.debug("automatic compaction of %s: %s", table.name, e)
        except Exception as e:  # noqa: BLE001 - the deletes are committed: keep them
            log.warning("automatic compaction of %s: %s", table.name, e)
    threading.Thread(target=run, name=f"compact-{table.name}", daemon=True).start()
