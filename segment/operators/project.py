"""Project: compute the node's expressions over each input batch.

Column references pass through without a copy; other expressions go to segment.expr, or,
with SET jit on, run together as one compiled loop (segment/jit) where they compile.
Results are cast to the node's field types when an expression produced a compatible but
different Arrow type (e.g. int64 for an int4 field); string results computed over a
dictionary-encoded column stay encoded.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import expr as ex
from planner import plan
from segment.jit.codegen import machine_kind
from segment.jit.evaluate import OperatorKernel
from segment.operators import base


class ProjectOp:
    def __init__(self, node: plan.Project, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)
        # The computed expressions (not bare columns) run as one compiled loop.
        self._computed = [i for i, e in enumerate(node.exprs)
                          if not isinstance(e, (ex.ColumnRef, ex.Literal))
                          and machine_kind(e.type)]
        self.jit = OperatorKernel([node.exprs[i] for i in self._computed])
        self.counters: dict[str, int] = {}

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        exprs = self.node.exprs
        for batch in self.child.execute(ctx):
            if not exprs:
                yield base.rows_without_columns(batch.num_rows)
                continue
            compiled = self.jit.get(ctx, batch.num_rows) if self._computed else None
            done = compiled.run(batch, ctx.now) if compiled is not None else None
            if done is not None:
                self.jit.count_into(self.counters)
                computed = dict(zip(self._computed, done[1]))
            else:
                computed = {}
            cols = [computed[i] if i in computed else
                    base.as_array(base.evaluate(e, batch, ctx.now, keep_dictionary=True),
                                  batch.num_rows) for i, e in enumerate(exprs)]
            yield base.conform(pa.RecordBatch.from_arrays(cols, names=self.schema.names),
                               self.schema, dictionaries=True)


@base.register(plan.Project, dictionaries=True)
def _build(node: plan.Project, build_child) -> ProjectOp:
    return ProjectOp(node, build_child(node.child))
