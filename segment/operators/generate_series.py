"""GenerateSeries: generate_series(start, stop, step) over integers, in batches of
BATCH_ROWS. With `part=(i, n)` only the elements whose index is i modulo n are produced,
so n segments each generate a disjoint share of the series."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

from planner import errors
from planner import plan
from segment.operators import base


class GenerateSeriesOp:
    def __init__(self, node: plan.GenerateSeries):
        if node.step == 0:
            raise errors.InvalidParameterValue("step size cannot equal zero")
        self.node = node
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        n = self.node
        first, count, stride = _plan(n.start, n.stop, n.step, n.part)
        arrow_type = self.schema.field(0).type
        done = 0
        while done < count:
            m = min(base.BATCH_ROWS, count - done)
            v0 = first + done * stride  # a Python int: exact even where int64 would wrap
            values = np.arange(m, dtype=np.int64) * np.int64(stride) + np.int64(v0)
            arr = pa.array(values, pa.int64())
            yield pa.RecordBatch.from_arrays([base.cast(arr, arrow_type)], schema=self.schema)
            done += m


def _plan(start: int, stop: int, step: int, part: tuple[int, int] | None):
    """(first value, number of values, stride between values) of this part."""
    total = (stop - start) // step + 1 if (stop - start) * step >= 0 else 0
    if part is None:
        return start, total, step
    i, n = part
    count = max(0, (total - i + n - 1) // n) if i < total else 0
    return start + i * step, count, step * n


@base.register(plan.GenerateSeries)
def _build(node: plan.GenerateSeries, build_child) -> GenerateSeriesOp:
    return GenerateSeriesOp(node)
