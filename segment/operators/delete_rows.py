"""DeleteRows: mark the rows a DELETE or UPDATE found as deleted in this segment's shard,
under the statement's transaction (gone for others at commit; segment/storage keeps a
deletion file per chunk)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from planner import errors
from planner import plan
from segment.operators import base


class DeleteRowsOp:
    def __init__(self, node: plan.DeleteRows, child):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext):
        if ctx.store is None or ctx.txn_id is None:
            raise errors.InternalError("DeleteRows runs on a segment, inside a transaction")
        deleted = 0
        for batch in self.child.execute(ctx):
            if not batch.num_rows:
                continue
            ctx.check_cancel()
            ids = batch.column(self.node.row_id).to_numpy(zero_copy_only=False)
            fresh = ctx.store.delete_rows(ctx.txn_id, self.node.table.id, ids)
            if self.node.strict and not fresh.all():
                raise errors.QueryError(
                    "MERGE command cannot affect row a second time", "21000",
                    hint="Ensure that not more than one source row matches any one target "
                         "row.")
            deleted += int(np.count_nonzero(fresh))
            if not self.node.count and fresh.any():
                yield batch if fresh.all() else batch.filter(pa.array(fresh))
        if self.node.count:
            yield pa.record_batch([pa.array([deleted], pa.int64())], schema=self.schema)


base.register(plan.DeleteRows)(
    lambda node, build_child: DeleteRowsOp(node, build_child(node.child)))
