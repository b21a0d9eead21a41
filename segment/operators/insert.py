"""Insert: write the incoming rows into this segment's shard of a table, under the
statement's transaction (visible at commit), once they meet its constraints, and report
how many were written."""

from __future__ import annotations

import pyarrow as pa

from planner import plan
from segment import check_constraints
from segment.operators import base


class InsertOp:
    def __init__(self, node: plan.Insert, child):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext):
        if ctx.store is None or ctx.txn_id is None:
            raise RuntimeError("Insert runs on a segment, inside a transaction")
        table = self.node.table
        batches = (_checked(table, b, ctx.now) for b in self.child.execute(ctx) if b.num_rows)
        rows = ctx.store.write(ctx.txn_id, self.node.table.id, batches)
        yield pa.record_batch([pa.array([rows], pa.int64())], schema=self.schema)


def _checked(table, batch: pa.RecordBatch, now) -> pa.RecordBatch:
    """The batch, once it meets the table's NOT NULL and CHECK constraints."""
    check_constraints.check(table, batch, now)
    return batch


base.register(plan.Insert)(lambda node, build_child: InsertOp(node, build_child(node.child)))
