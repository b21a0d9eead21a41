"""ProjectSet: unnest / generate_subscripts in lockstep (planner/plan.py ProjectSet).

Per batch: the arrays are evaluated once, each input row is repeated as many times as its
longest array (numpy repeat over the lengths; at least once for an outer ProjectSet), and
each output column takes its element at the row's position from the list's flat child
(NULL past the array's end).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from planner import plan
from segment.kernels import expr_pgarray as xpa
from segment.operators import base


class ProjectSetOp:
    def __init__(self, node: plan.ProjectSet, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        node = self.node
        for batch in self.child.execute(ctx):
            n = batch.num_rows
            parts = [xpa.Parts(base.as_array(base.evaluate(e, batch, ctx.now), n))
                     for e in node.arrays]
            counts = np.zeros(n, dtype=np.int64)
            for p in parts:
                counts = np.maximum(counts, p.lengths)
            if node.outer:
                counts = np.maximum(counts, 1)
            rows = xpa.parents(counts)
            if len(rows) == 0:
                continue
            within = np.arange(len(rows), dtype=np.int64) - np.repeat(
                np.cumsum(counts) - counts, counts)
            take = pa.array(rows, pa.int64())
            cols = [c.take(take) for c in batch.columns]
            for e, p, sub in zip(node.arrays, parts, node.subscripts):
                ok = within < p.lengths[rows]
                if sub:
                    cols.append(pa.array((within + e.type.lower_bound).astype(np.int32),
                                         pa.int32(), mask=~ok))
                else:
                    idx = pa.array(np.where(ok, p.starts[rows] + within, 0), pa.int64(),
                                   mask=~ok)
                    cols.append(p.values.take(idx))
            yield base.conform(pa.RecordBatch.from_arrays(cols, names=self.schema.names),
                               self.schema)


@base.register(plan.ProjectSet)
def _build(node: plan.ProjectSet, build_child) -> ProjectSetOp:
    return ProjectSetOp(node, build_child(node.child))
