"""Materialized: rows computed before the statement (a recursive CTE's result), carried in
the plan as an Arrow table, emitted in batches of at most BATCH_ROWS."""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import plan
from segment.operators import base


class MaterializedOp:
    def __init__(self, node: plan.Materialized):
        self.node = node
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        table = self.node.table
        for batch in table.to_batches(max_chunksize=base.BATCH_ROWS):
            if batch.num_rows:
                yield base.conform(pa.RecordBatch.from_arrays(
                    batch.columns, names=self.schema.names), self.schema)


@base.register(plan.Materialized)
def _build(node: plan.Materialized, build_child) -> MaterializedOp:
    return MaterializedOp(node)
