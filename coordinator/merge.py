"""MERGE: lock the target, run the not-matched plan (rows kept), the matched plan, then
write the kept rows (planner/merge.py says why in that order); tag MERGE n."""

from __future__ import annotations

from coordinator import ddl, query
from coordinator.modify import after_changes
from coordinator.pgwire.boundary import QueryResult, ResultKind
from coordinator.writer import TableWriter
from planner import merge, modify
from planner.schema import DistKind


def run(session, tree, txn, cancel) -> QueryResult:
    table = modify.target_table(session.catalog_view(txn), tree)
    session.check_writable("MERGE")
    ddl.lock_name(session, txn, table.name)
    plans = merge.plan(session.catalog_view(txn), tree, session.engine.cluster.n_segments,
                       lambda n: query.run_initplan(session, n))
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
