"""Motion receive: the end of a Motion inside the receiving slice.

Batches arrive through `ExecContext.receive(motion)`, which the dispatcher wires to the
transport; this operator never touches sockets. For a Gather Merge every sender's stream is
already sorted: `ExecContext.receive_sorted(motion)` hands them over one per sender and
`merge_sorted` merges them as they stream in. Without `receive_sorted` the gathered rows
are sorted here again, which is correct but holds them all.

The frames waiting at the receiving end are held under the query's memory budget and
spill to disk when it refuses them (motion/inbox.py); the receiver's `memory` (its peak and
spilled bytes) is this operator's, so EXPLAIN ANALYZE shows them on the Motion node. A
receive function that gives plain iterators (tests) has none.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from planner import errors
from planner import plan
from segment.operators import base
from segment.kernels import sort_order
from segment.operators import ordering


class MotionRecvOp:
    def __init__(self, node: plan.Motion):
        self.node = node
        self.schema = base.schema_of(node.fields)
        self.memory = None  # the receiver's motion.inbox.InboxMemory (EXPLAIN ANALYZE)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        node = self.node
        if node.kind is plan.MotionKind.GATHER_MERGE and node.sort_keys:
            if ctx.receive_sorted is not None:
                streams = ctx.receive_sorted(node)
                if streams:
                    self.memory = getattr(streams[0], "memory", None)  # one inbox for all
                batches = merge_sorted(streams, node.sort_keys, self.schema)
            else:
                batches = _sort_all(self._receive(ctx), node.sort_keys, self.schema)
        else:
            batches = self._receive(ctx)
        for b in batches:
            if b.num_rows:
                yield base.conform(b, self.schema)

    def _receive(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        if ctx.receive is None:
            raise errors.InternalError("no motion receiver in the execution context")
        batches = ctx.receive(self.node)
        self.memory = getattr(batches, "memory", None)
        return iter(batches)


def merge_sorted(streams: Sequence[Iterable[pa.RecordBatch]], sort_keys: Sequence[plan.SortKey],
                 schema: pa.Schema | None = None) -> Iterator[pa.RecordBatch]:
    """Merge batch streams, each sorted by `sort_keys`, into one sorted batch stream.

    Each round holds the unconsumed rows of every stream (topped up to about a batch). The
    smallest of the streams' last held rows is a bound no later row can undercut (each
    stream only grows from there), so everything up to it in the sorted union goes out;
    that includes all rows held from the stream that supplied the bound.
    """
    its = [iter(s) for s in streams]
    bufs: list[pa.RecordBatch | None] = [None] * len(its)
    keys: list[list[pa.Array]] = [[] for _ in its]
    live = [True] * len(its)
    want = [1] * len(its)

    def refill(j: int) -> None:
        # Top up a stream that holds less than its last batch's worth: rounds that hold
        # more rows emit more rows, and each round costs a sort of everything held.
        while live[j] and (bufs[j] is None or bufs[j].num_rows < want[j]):
            try:
                b = next(its[j])
            except StopIteration:
                live[j] = False
                return
            if not b.num_rows:
                continue
            b = b if schema is None else base.conform(b, schema)
            k = ordering.key_arrays(b, sort_keys)
            want[j] = max(want[j], b.num_rows)
            if bufs[j] is None or bufs[j].num_rows == 0:
                bufs[j], keys[j] = b, k
            else:
                bufs[j] = base.concat_batches([bufs[j], b], b.schema)
                keys[j] = [pa.concat_arrays([x, y]) for x, y in zip(keys[j], k)]

    for j in range(len(its)):
        refill(j)
    while True:
        holders = [j for j in range(len(its)) if bufs[j] is not None and bufs[j].num_rows]
        if not holders:
            return
        if len(holders) == 1:
            # One stream left with rows (the others ended): it is sorted already.
            j = holders[0]
            yield bufs[j]
            bufs[j] = None
            refill(j)
            continue
        out_schema = schema if schema is not None else bufs[holders[0]].schema
        payload = base.concat_batches([bufs[j] for j in holders], out_schema)
        arrays = [pa.concat_arrays([keys[j][i] for j in holders]) for i in range(len(sort_keys))]
        order = sort_order.sort_indices(arrays, sort_keys).to_numpy()
        starts = np.cumsum([0] + [bufs[j].num_rows for j in holders])
        active = [n for n, j in enumerate(holders) if live[j]]
        if not active:  # every stream ended: the rest, sorted, is the tail
            yield payload.take(pa.array(order))
            return
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        bound = min(rank[starts[n + 1] - 1] for n in active)
        emitted = order[:bound + 1]
        yield payload.take(pa.array(emitted))
        gone = np.zeros(len(order), dtype=bool)
        gone[emitted] = True
        for n, j in enumerate(holders):
            keep = pa.array(~gone[starts[n]:starts[n + 1]])
            bufs[j] = bufs[j].filter(keep)
            keys[j] = [a.filter(keep) for a in keys[j]]
            refill(j)


def _sort_all(batches: Iterable[pa.RecordBatch], sort_keys: Sequence[plan.SortKey],
              schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    held = [base.conform(b, schema) for b in batches if b.num_rows]
    if not held:
        return
    arrays = [pa.concat_arrays(list(a)) for a in zip(*(ordering.key_arrays(b, sort_keys)
                                                       for b in held))]
    yield base.concat_batches(held, schema).take(sort_order.sort_indices(arrays, sort_keys))


@base.register(plan.Motion)
def _build(node: plan.Motion, build_child) -> MotionRecvOp:
    return MotionRecvOp(node)
