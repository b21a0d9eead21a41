"""Rehome: the rows of a table shard that an expansion moves to another segment, each
with the segment it goes to (planner/plan.py `Rehome`; planner/expansion.py plans it).

Placement is the one hash function's jump-consistent bucket (motion/hashing.py), so going
from `old` to `new` segments changes the bucket of about 1 - old/new of the keys, always
to one of the new segments; those rows, and only those, leave this segment.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from motion import hashing
from planner import plan
from segment.operators import base


class RehomeOp:
    def __init__(self, node: plan.Rehome, child):
        self.node = node
        self.child = child
        self.names = [f.name for f in node.fields]

    def execute(self, ctx: base.ExecContext):
        node = self.node
        for batch in self.child.execute(ctx):
            if not batch.num_rows:
                continue
            ctx.check_cancel()
            if node.mode is plan.RehomeMode.REPLICATED:
                # A whole copy for each new segment (the child reads one copy).
                for seg in range(node.old, node.new):
                    yield self._with_target(batch, np.full(batch.num_rows, seg, np.int32))
                continue
            target = hashing.segment_ids([batch.column(k) for k in node.keys], node.new,
                                         list(node.scales))
            if node.mode is plan.RehomeMode.HASHED:
                moving = target != ctx.segment_id
            else:  # a random table keeps its rows but gives the new segments their share
                moving = target >= node.old
            if moving.any():
                yield self._with_target(batch.filter(pa.array(moving)), target[moving])

    def _with_target(self, batch: pa.RecordBatch, target: np.ndarray) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays(
            list(batch.columns) + [pa.array(target.astype(np.int32, copy=False))],
            names=self.names)


base.register(plan.Rehome)(
    lambda node, build_child: RehomeOp(node, build_child(node.child)))
