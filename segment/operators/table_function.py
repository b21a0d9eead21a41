"""TableFunction: a built-in generator of rows (planner/table_functions.py), made by the
generators of segment/table_functions/.

With `part = (i, n)` (each of n segments running it) this instance makes only the blocks
whose number is i modulo n, so the segments generate disjoint shares in parallel.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import errors
from planner import plan
from segment.operators import base
from segment.table_functions import clickbench_hits


class TableFunctionOp:
    def __init__(self, node: plan.TableFunction):
        if node.name != "clickbench_hits":
            raise errors.UndefinedFunction(f"function {node.name} does not exist")
        self.node = node
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        seed, rows, first, count = self.node.args
        i, n = self.node.part or (0, 1)
        for block in range(first, first + count):
            if block % n != i:
                continue
            ctx.check_cancel()
            batch = clickbench_hits.block(seed, rows, block)
            yield base.conform(pa.RecordBatch.from_arrays(batch.columns,
                                                          names=self.schema.names), self.schema)


@base.register(plan.TableFunction)
def _build(node: plan.TableFunction, build_child) -> TableFunctionOp:
    return TableFunctionOp(node)
