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
        batches = (b for b in self.child.execute(ctx) if b.num_rows)
        if self.node.write_flag is not None:
            flagged = self._flagged(batches, counted := [0])
            yield self._count((_checked(table, b, ctx.now) for b in flagged), ctx, counted)
            return
        batches = (_checked(table, b, ctx.now) for b in batches)
        if self.node.returning:
            # RETURNING computes over the rows written: keep them until the write is done
            # (all or nothing), then pass them on.
            kept = list(batches)
            ctx.store.write(ctx.txn_id, self.node.table.id, kept)
            yield from kept
            return
        rows = ctx.store.write(ctx.txn_id, self.node.table.id, batches)
        yield pa.record_batch([pa.array([rows], pa.int64())], schema=self.schema)


    def _flagged(self, batches, counted: list[int]):
        """The rows whose flag column is true, without it; every row is counted."""
        flag = self.node.write_flag
        for b in batches:
            counted[0] += b.num_rows
            keep = b.column(flag)
            kept = b.filter(keep) if keep.false_count or keep.null_count else b
            if kept.num_rows:  # by position: a table column may be named like the flag
                yield pa.RecordBatch.from_arrays(
                    [c for i, c in enumerate(kept.columns) if i != flag],
                    names=[n for i, n in enumerate(kept.schema.names) if i != flag])

    def _count(self, batches, ctx, counted: list[int]) -> pa.RecordBatch:
        ctx.store.write(ctx.txn_id, self.node.table.id, batches)
        return pa.record_batch([pa.array([counted[0]], pa.int64())], schema=self.schema)
def _checked(table, batch: pa.RecordBatch, now) -> pa.RecordBatch:
    """The batch, once it meets the table's NOT NULL and CHECK constraints."""
    check_constraints.check(table, batch, now)
    return batch


base.register(plan.Insert)(lambda node, build_child: InsertOp(node, build_child(node.child)))
