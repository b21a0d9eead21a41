"""Expand: each input batch once per projection list (GROUP BY ROLLUP / CUBE / GROUPING
SETS feed the Aggregate above it one copy of the rows per grouping set)."""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import plan
from segment.operators import base


class ExpandOp:
    def __init__(self, node: plan.Expand, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        for batch in self.child.execute(ctx):
            for row in self.node.sets:
                ctx.check_cancel()
                cols = [base.as_array(base.evaluate(e, batch, ctx.now, keep_dictionary=True),
                                  batch.num_rows) for e in row]
                yield base.conform(pa.RecordBatch.from_arrays(cols, names=self.schema.names),
                                   self.schema, dictionaries=True)


@base.register(plan.Expand, dictionaries=True)
def _build(node: plan.Expand, build_child) -> ExpandOp:
    return ExpandOp(node, build_child(node.child))
