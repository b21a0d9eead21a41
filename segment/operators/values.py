"""Values: constant rows (SELECT without FROM, INSERT ... VALUES) as one batch.

Each row expression is evaluated by segment.expr over a one-row batch without columns
(they are constant), and each column is then concatenated and cast to its field's type.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import plan
from segment.operators import base


class ValuesOp:
    def __init__(self, node: plan.Values):
        self.node = node
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        rows = self.node.rows
        if not rows:
            return
        if not self.schema.names:
            yield base.rows_without_columns(len(rows))
            return
        one = base.rows_without_columns(1)
        columns = []
        for j, f in enumerate(self.schema):
            parts = [base.cast(_as_array(base.evaluate(row[j], one)), f.type) for row in rows]
            columns.append(pa.concat_arrays(parts) if len(parts) > 1 else parts[0])
        yield pa.RecordBatch.from_arrays(columns, schema=self.schema)


def _as_array(v) -> pa.Array:
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks()
    if isinstance(v, pa.Scalar):
        return pa.array([v.as_py()], v.type)
    return v


@base.register(plan.Values)
def _build(node: plan.Values, build_child) -> ValuesOp:
    return ValuesOp(node)
