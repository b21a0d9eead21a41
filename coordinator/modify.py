"""DELETE and UPDATE: lock the table, plan the change (planner/modify.py), run it.

One transaction at a time deletes from or updates a table: the statement holds the
table's name lock (coordinator/transaction.py NameLocks, as TRUNCATE and DDL do) until its
transaction ends, so two transactions never delete the same row or switch the same
chunk's deletion file, and a second UPDATE of a row waits for the first to commit and
then finds the new version (its snapshot is taken after the wait), as PostgreSQL's read
committed re-reads the row. Inserts and queries do not wait: they never touch the rows a
delete marks.
"""

from __future__ import annotations

import time

from sqlglot import exp

from coordinator import autostats, compaction, ddl, query
from coordinator import defaults
from coordinator.pgwire.boundary import QueryResult, ResultColumn, ResultKind
from planner import modify, sequence_calls
from planner.schema import DistKind


def run(session, tree: exp.Delete | exp.Update, txn, cancel) -> QueryResult:
    word = _word(tree)
    m = _locked_plan(session, tree, txn)
    txn.begin_write()
    qrun = query.run(session, m.root, txn, cancel)
    if m.columns is None:
        counts = [c for b in qrun.batches() for c in b.column(0).to_pylist()]
        rows = counts[0] if m.table.policy.kind is DistKind.REPLICATED and counts \
            else sum(counts)
        after_changes(session, txn, m.table, rows, word)
        return QueryResult(ResultKind.COMMAND, tag=lambda: f"{word} {rows}")
    count = [0]

    def batches():
        for b in qrun.batches():
            count[0] += b.num_rows
            yield b
        after_changes(session, txn, m.table, count[0], word)
    return QueryResult(ResultKind.ROWS, tag=lambda: f"{word} {count[0]}",
                       columns=[ResultColumn(n, t) for n, t in m.columns], batches=batches(),
                       time_zone=session.time_zone())


def explain(session, tree, txn, cancel, analyze: bool) -> QueryResult:
    """EXPLAIN of DELETE or UPDATE: the distributed plan; ANALYZE runs the statement (its
    changes commit with the transaction, as in PostgreSQL)."""
    t0 = time.perf_counter()
    m = _locked_plan(session, tree, txn) if analyze else plan(session, tree, txn)
    planning_ms = (time.perf_counter() - t0) * 1000
    if analyze:
        txn.begin_write()
    return query.explain_plan(session, m.root, txn, cancel, analyze, planning_ms)


def after_changes(session, txn, table, rows: int, word: str) -> None:
    """What a DELETE, UPDATE or MERGE leaves for its commit: a DELETE's rows leave the
    table's row estimate, and the chunks it left mostly dead are compacted in the
    background."""
    if not rows:
        return
    if word == "DELETE":
        autostats.note_load(session, txn, table, -rows)
    compaction.after_commit(session, txn, table)


def _word(tree) -> str:
    return "DELETE" if isinstance(tree, exp.Delete) else "UPDATE"


def _locked_plan(session, tree, txn) -> modify.Modification:
    """The plan, made once the transaction holds the table's lock (read-only: 25006)."""
    view = session.catalog_view(txn)
    table = modify.target_table(view, tree)
    session.check_writable(_word(tree))
    ddl.lock_table(session, txn, view, table)
    return plan(session, tree, txn)


def plan(session, tree, txn, params=None) -> modify.Modification:
    """The statement's plan, in `txn`'s view of the catalog (after its lock: a table
    dropped and created again meanwhile is the new one). InitPlans run now, unless
    `params` says this only describes the statement."""
    view = session.catalog_view(txn)
    runner = None if params is not None else (lambda n: query.run_initplan(session, n))
    n = session.engine.cluster.n_segments
    if isinstance(tree, exp.Delete):
        m = modify.plan_delete(view, tree, n, params, runner)
    else:
        m = modify.plan_update(view, tree, n, params, runner,
                               lambda table: defaults.column_defaults(view, table))
    sequence_calls.check_placement(m.root)  # the counters are the coordinator's
    return m


def returning_columns(session, tree, ptypes) -> list[ResultColumn] | None:
    """RETURNING's result columns, for Describe (None without RETURNING)."""
    if tree.args.get("returning") is None:
        return None
    m = plan(session, tree, session.txn, list(ptypes))
    return [ResultColumn(n, t) for n, t in m.columns]
