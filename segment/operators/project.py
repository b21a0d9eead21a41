"""Project: compute the node's expressions over each input batch.

Column references pass through without a copy; other expressions go to segment.expr.
Results are cast to the node's field types when an expression produced a compatible but
different Arrow type (e.g. int64 for an int4 field); string results computed over a
dictionary-encoded column stay encoded.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import plan
from segment.operators import base


class ProjectOp:
    def __init__(self, node: plan.Project, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        exprs = self.node.exprs
        for batch in self.child.execute(ctx):
            if not exprs:
                yield base.rows_without_columns(batch.num_rows)
                continue
            cols = [base.as_array(base.evaluate(e, batch, ctx.now, keep_dictionary=True),
                              batch.num_rows) for e in exprs]
            yield base.conform(pa.RecordBatch.from_arrays(cols, names=self.schema.names),
                               self.schema, dictionaries=True)


@base.register(plan.Project, dictionaries=True)
def _build(node: plan.Project, build_child) -> ProjectOp:
    return ProjectOp(node, build_child(node.child))
