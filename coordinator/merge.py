"""MERGE: lock the target, run the not-matched plan (rows kept), the matched plan, then
write the kept rows (planner/merge.py says why in that order); tag MERGE n."""

from __future__ import annotations

from coordinator import ddl, query
from coordinator import defaults as defaults_of
from coordinator.modify import after_changes
from coordinator.pgwire.boundary import QueryResult, ResultKind
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
    """INSERT ... ON CONFLICT, run as the MERGE it means (planner/on_conflict.py)."""
    table, cols = load.target(session, tree.this)
    result = run(session, on_conflict.as_merge(tree, table, cols), txn, cancel)
    rows = result.tag().split()[-1]
    return QueryResult(ResultKind.COMMAND, tag=lambda: f"INSERT 0 {rows}")


def run(session, tree, txn, cancel) -> QueryResult:
    view = session.catalog_view(txn)
    table = modify.target_table(view, tree)
    session.check_writable("MERGE")
    ddl.lock_table(session, txn, view, table)
    view = session.catalog_view(txn)
    plans = merge.plan(view, tree, session.engine.cluster.n_segments,
                       lambda n: query.run_initplan(session, n),
                       lambda table: defaults_of.column_defaults(view, table))
    for root in (plans.matched, plans.not_matched):
        if root is not None:
            sequence_calls.check_placement(root)
    txn.begin_write()
    inserts = []
    if plans.not_matched is not None:
        inserts = [b for b in query.run(session, plans.not_matched, txn, cancel).batches()
                   if b.num_rows]
    rows = 0
    if plans.matched is not None:
        counts = [c for b in query.run(session, plans.matched, txn, cancel).batches()
                  for c in b.column(0).to_pylist()]
        rows = counts[0] if plans.table.policy.kind is DistKind.REPLICATED and counts \
            else sum(counts)
    if inserts:
        writer = TableWriter(session.engine.cluster, txn, plans.table)
        for b in inserts:
            writer.write(b)
        rows += writer.close()
    after_changes(session, txn, plans.table, rows, "MERGE")
    return QueryResult(ResultKind.COMMAND, tag=lambda: f"MERGE {rows}")
