"""The sort key values of a batch, shared by Sort (sort.py), Sort merges (sort_merge.py)
and Gather Merge (motion_recv.py): each key expression evaluated by segment.expr and
prepared as it sorts; segment/kernels/sort_order.py orders rows by them."""

from __future__ import annotations

import datetime
from typing import Sequence

import pyarrow as pa

from planner import plan
from segment.kernels import sort_order
from segment.operators import base


def key_arrays(batch: pa.RecordBatch, keys: Sequence[plan.SortKey],
               now: datetime.datetime | None = None) -> list[pa.Array]:
    """The sort key values of a batch."""
    out = []
    for k in keys:
        v = base.evaluate(k.expr, batch, now)
        if isinstance(v, pa.ChunkedArray):
            v = v.combine_chunks()
        elif isinstance(v, pa.Scalar):
            v = pa.repeat(v, batch.num_rows)
        out.append(sort_order.prepared(v, k.expr.type))
    return out
