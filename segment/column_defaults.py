"""Columns a COPY's column list leaves out, filled with their defaults, row by row.

The coordinator binds the defaults (coordinator/defaults.py); COPY FROM STDIN fills them on
the coordinator, COPY FROM a server file on each segment, with the statement's now().
"""

from __future__ import annotations

import pyarrow as pa

from planner import expr as ex
from segment.expr import evaluate


def fill(batch: pa.RecordBatch, positions: list[int], defaults: list[ex.Expr | None],
         now=None) -> pa.RecordBatch:
    """A batch in table order whose columns outside `positions` hold their defaults."""
    arrays = list(batch.columns)
    for i, d in enumerate(defaults):
        if d is not None and i not in positions:
            v = evaluate(d, batch, now)
            if isinstance(v, pa.ChunkedArray):
                v = v.combine_chunks()
            arrays[i] = v.cast(batch.schema.field(i).type)
    return pa.RecordBatch.from_arrays(arrays, schema=batch.schema)
