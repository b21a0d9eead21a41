"""Limit: skip `offset` rows, then pass at most `limit` rows (None: no limit).

The child is not pulled once the limit is reached: its generator is closed, so work below
(scans, motions) stops early.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import plan
from segment.operators import base


class LimitOp:
    def __init__(self, node: plan.Limit, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        limit, skip = self.node.limit, max(0, self.node.offset)
        if limit is not None and limit <= 0:
            return
        it = self.child.execute(ctx)
        try:
            for batch in it:
                n = batch.num_rows
                if skip >= n:
                    skip -= n
                    continue
                if skip:
                    batch, skip = batch.slice(skip), 0
                    n = batch.num_rows
                if limit is not None and n >= limit:
                    yield base.conform(batch.slice(0, limit), self.schema)
                    return
                if limit is not None:
                    limit -= n
                yield base.conform(batch, self.schema)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()


@base.register(plan.Limit)
def _build(node: plan.Limit, build_child) -> LimitOp:
    return LimitOp(node, build_child(node.child))
