"""Append (UNION ALL): the batches of each input in turn."""

from __future__ import annotations

from planner import plan
from segment.operators import base


class AppendOp:
    def __init__(self, node: plan.Append, inputs):
        self.node = node
        self.inputs = inputs
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext):
        for op in self.inputs:
            for batch in op.execute(ctx):
                yield base.conform(batch, self.schema)


base.register(plan.Append)(
    lambda node, build_child: AppendOp(node, [build_child(c) for c in node.inputs]))
