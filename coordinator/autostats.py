"""Statistics without being asked, as Greenplum's gp_autostats_mode collects them: a table
that INSERT, COPY FROM or CREATE TABLE AS loads while it has no statistics is analyzed
once the load's transaction has committed, so a user who never runs ANALYZE still gets
plans from real row counts and distinct values.

The decision is the statement's, as in Greenplum's auto_stats(): its session's mode, and
the table as its transaction sees it (`note_load`). The work is the commit's
(`Transaction.after_commit`): the statistics describe committed rows only, a rolled-back
load leaves none, and the client's INSERT (autocommit) or COMMIT is acknowledged once
they are in the catalog. Greenplum runs the ANALYZE inside the loading transaction, whose
statistics commit with it; raympp's segments ANALYZE committed rows, hence after.

Modes (gp_autostats_mode): `on_no_stats` (the default) analyzes after a load into a
table without statistics (`table_stats.has_statistics`: never analyzed, or analyzed
while empty); `on_change` after a statement that wrote more rows than
gp_autostats_on_change_threshold; `none` never. A statement that wrote no rows leaves
nothing to describe and analyzes nothing.

The row estimate a load adds (pg_class.reltuples, the planner's Scan rows) is kept here
too: in the transaction's definition of a table it created (committed with it), and for
any other table added at commit, so rows rolled back never count. TRUNCATE sets it to
zero at commit (`note_truncate`), as PostgreSQL's TRUNCATE resets reltuples, and that
leaves the table without statistics: the next load analyzes it again, instead of adding
its rows to a count of rows that are gone.

A failed automatic ANALYZE is logged, never reported: the rows are committed already.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from coordinator import table_stats
from planner.schema import TableDef

log = logging.getLogger(__name__)

MODE = "gp_autostats_mode"
THRESHOLD = "gp_autostats_on_change_threshold"
_OWNER = "autostats"  # its key in Transaction.after_commit


@dataclass
class _Load:
    """What a transaction's loads into one table leave for its commit."""

    table: TableDef
    rows: int = 0            # added to a committed table's estimate at commit
    analyze: bool = False
    truncated: bool = False  # the estimate starts again from zero at commit


class _AfterCommit:
    """The tables one transaction loaded, by id, and the work its commit does on them."""

    def __init__(self, session):
        self.session = session
        self.loads: dict[int, _Load] = {}

    def __call__(self) -> None:
        for load in self.loads.values():
            try:
                if load.truncated:
                    table_stats.set_rows(self.session, load.table, lambda _old: load.rows)
                elif load.rows:
                    table_stats.add_row_estimate(self.session, load.table, load.rows)
                if load.analyze:
                    _analyze(self.session, load.table)
            except Exception as e:  # noqa: BLE001 - the load is committed: keep it
                log.warning("statistics of table %s after a load: %s", load.table.name, e)


def note_load(session, txn, table: TableDef, rows: int, ctas: bool = False) -> None:
    """A statement of `txn` (INSERT, COPY FROM, CREATE TABLE AS when `ctas`) wrote `rows`
    rows into `table`: keep its row estimate and decide whether its commit analyzes it."""
    mine = _created(txn, table)
    load = _load_of(session, txn, table)
    if mine is not None:
        table_stats.add_row_estimate(session, table, rows)  # commits or vanishes with it
    else:
        load.rows += rows
    stats = mine.stats if mine is not None else table.stats
    if _wanted(session, stats, rows, ctas, load.truncated):
        load.analyze = True


def note_truncate(session, txn, table: TableDef) -> None:
    """TRUNCATE of `table` in `txn`: no rows, and no statistics of them, from its commit."""
    load = _load_of(session, txn, table)
    load.rows, load.analyze = 0, False  # what it loaded before is gone
    if _created(txn, table) is not None:
        table_stats.set_rows(session, table, lambda _old: 0)  # commits with the table
    else:
        load.truncated = True


def _created(txn, table: TableDef) -> TableDef | None:
    """The transaction's own definition of `table`, when it created it."""
    mine = txn.created.get(table.key)
    return mine if mine is not None and mine.id == table.id else None


def _load_of(session, txn, table: TableDef) -> _Load:
    after = txn.after_commit.setdefault(_OWNER, _AfterCommit(session))
    return after.loads.setdefault(table.id, _Load(table))


def _wanted(session, stats, rows: int, ctas: bool, truncated: bool) -> bool:
    """Whether gp_autostats_mode asks for an ANALYZE after a statement that wrote `rows`
    rows into a table with `stats` (before the statement's rows), `truncated` by its
    transaction."""
    if rows <= 0:
        return False
    mode = session.settings.get(MODE)
    if mode == "on_no_stats":
        # Greenplum analyzes every CREATE TABLE AS; its new table has no statistics here.
        return ctas or truncated or not table_stats.has_statistics(stats)
    if mode == "on_change":
        return rows > session.settings.get(THRESHOLD)
    return False


def _analyze(session, table: TableDef) -> None:
    """ANALYZE `table` as committed now, unless it was dropped (by the loading
    transaction itself, or by another since)."""
    current = session.engine.catalog.table_by_id(table.id)
    if current is None or current.id != table.id:
        return
    table_stats.analyze_table(session, current)
    log.debug("automatic ANALYZE of %s (%s)", table.name, session.settings.get(MODE))
