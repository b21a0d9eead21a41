"""MERGE: lock the target, run the not-matched plan (rows kept), the matched plan, then
write the kept rows (planner/merge.py says why in that order); tag MERGE n. INSERT ... ON
CONFLICT runs the same way, after its guard query, with its RETURNING rows."""

from __future__ import annotations

import pyarrow as pa

from coordinator import ddl, query
from coordinator import defaults as defaults_of
from coordinator.modify import after_changes
from coordinator.pgwire.boundary import QueryResult, ResultColumn, ResultKind
from coordinator.writer import TableWriter
from coordinator import load
from planner import errors, merge, modify, on_conflict, sequence_calls
from planner.explain import explain as explain_lines
from planner.schema import DistKind


def explain(session, tree, txn, cancel, analyze: bool) -> QueryResult:
    """EXPLAIN MERGE: its two plans, the not-matched rows' first (ANALYZE is 0A000)."""
    if analyze:
        raise errors.FeatureNotSupported("EXPLAIN ANALYZE of MERGE")
    n = session.engine.cluster.n_segments
    view = session.catalog_view(txn)
    plans = merge.plan(view, tree, n, lambda node: query.run_initplan(session, node),
                       lambda table: defaults_of.column_defaults(view, table))
    lines = []
    for title, root in (("Not matched (rows kept, written last)", plans.not_matched),
                        ("Matched", plans.matched)):
        if root is not None:
            lines += [f"{title}:"] + ["  " + line for line in explain_lines(root, n)]
    lines.append(f"Segments: {n}")
    return query.text_rows("QUERY PLAN", lines, "EXPLAIN")


def insert_on_conflict(session, tree, txn, cancel) -> QueryResult:
    """INSERT ... ON CONFLICT, run as the MERGE it means (planner/on_conflict.py); tag
    INSERT 0 n, n the rows inserted and updated (or returned), as PostgreSQL counts."""
    table, cols = load.target(session, tree.this)
    if on_conflict.conflicts_impossible(tree, table):
        plain = tree.copy()
        plain.set("conflict", None)
        return load.insert(session, plain, txn, cancel)
    conflict = on_conflict.as_merge(tree, table, cols)
    return run(session, conflict.merge, txn, cancel, conflict)


def run(session, tree, txn, cancel, conflict: on_conflict.OnConflict | None = None
        ) -> QueryResult:
    view = session.catalog_view(txn)
    table = modify.target_table(view, tree)
    session.check_writable("INSERT" if conflict is not None else "MERGE")
    ddl.lock_table(session, txn, view, table)
    view = session.catalog_view(txn)
    plans = merge.plan(view, tree, session.engine.cluster.n_segments,
                       lambda n: query.run_initplan(session, n),
                       lambda table: defaults_of.column_defaults(view, table),
                       conflict.guard if conflict is not None else None,
                       conflict.returning if conflict is not None else None)
    for root in (plans.matched, plans.not_matched, plans.guard):
        if root is not None:
            sequence_calls.check_placement(root)
    txn.begin_write()
    if plans.guard is not None and any(
            b.num_rows for b in query.run(session, plans.guard, txn, cancel).batches()):
        raise on_conflict.cardinality_violation()
    ncols = len(plans.table.columns)
    inserts = []
    if plans.not_matched is not None:
        inserts = [b for b in query.run(session, plans.not_matched, txn, cancel).batches()
                   if b.num_rows]
    rows = 0
    returned: list[pa.RecordBatch] = []
    if plans.matched is not None:
        batches = query.run(session, plans.matched, txn, cancel).batches()
        if plans.returning is not None:
            returned = [b for b in batches if b.num_rows]
            rows = sum(b.num_rows for b in returned)
        else:
            counts = [c for b in batches for c in b.column(0).to_pylist()]
            rows = counts[0] if plans.table.policy.kind is DistKind.REPLICATED and counts \
                else sum(counts)
    if inserts:
        writer = TableWriter(session.engine.cluster, txn, plans.table)
        for b in inserts:
            writer.write(_columns(b, 0, ncols) if plans.returning is not None else b)
        rows += writer.close()
        if plans.returning is not None:
            returned += [_columns(b, ncols, b.num_columns) for b in inserts]
    after_changes(session, txn, plans.table, rows, "MERGE")
    if conflict is None:
        return QueryResult(ResultKind.COMMAND, tag=lambda: f"MERGE {rows}")
    if plans.returning is None:
        return QueryResult(ResultKind.COMMAND, tag=lambda: f"INSERT 0 {rows}")
    names = [f"c{i}" for i in range(len(plans.returning))]
    return QueryResult(ResultKind.ROWS, tag=lambda: f"INSERT 0 {rows}",
                       columns=[ResultColumn(n, t) for n, t in plans.returning],
                       batches=iter([pa.RecordBatch.from_arrays(b.columns, names=names)
                                     for b in returned]),
                       time_zone=session.time_zone())


def _columns(batch: pa.RecordBatch, start: int, stop: int) -> pa.RecordBatch:
    """Columns start..stop of a batch, by position (a returned column may be named as a
    table column is)."""
    return pa.RecordBatch.from_arrays(batch.columns[start:stop],
                                      names=batch.schema.names[start:stop])
