"""Filter: keep the rows where the predicate is true (NULL counts as false).

The predicate is evaluated by segment.expr on each input batch. What a selective
predicate leaves of small input batches is concatenated (base.coalesce) before going up;
with SET jit on, a predicate that has something to compile runs as one numba loop
(segment/jit) giving the kept rows' positions, the general evaluator where it cannot;
conjuncts of different cost run in stages (predicate_stages.py).
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import plan
from segment.operators import base
from segment.operators.predicate_stages import PredicateStages


class FilterOp:
    def __init__(self, node: plan.Filter, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)
        self.stages = PredicateStages(node.predicate)
        self.counters: dict[str, int] = {}

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        return base.coalesce(self._filtered(ctx), self.schema)

    def _filtered(self, ctx: base.ExecContext):
        for batch in self.child.execute(ctx):
            if batch.num_rows == 0:
                continue
            kept = self.stages.apply(ctx, batch)
            self.stages.count_into(self.counters)
            yield (None if kept is None else base.conform(kept, self.schema, True)), batch.num_rows


@base.register(plan.Filter, dictionaries=True)
def _build(node: plan.Filter, build_child) -> FilterOp:
    return FilterOp(node, build_child(node.child))
