"""The slice executor: build a slice's operator tree from its plan and drive it.

`run(node, ctx)` yields the root's batches. Every operator is wrapped so that between
batches the query's cancel flag is checked, batches carry exactly the node's field names
and Arrow types, Arrow's own exceptions become QueryErrors with a SQLSTATE, and, with
`ctx.analyze`, rows, batches and inclusive wall time are recorded in `ctx.node_stats[i]`,
where i is the node's pre-order index in the slice (`base.slice_nodes(node)[i]`; a Motion
is a leaf there), and so are the peak memory and spilled bytes of an operator that holds a
`memory` reservation (segment/memory.py). Dispatch, transports and the
top slice's result streaming are the coordinator's and motion's business.
"""

from __future__ import annotations

import time
from typing import Iterator

import pyarrow as pa

from planner import errors
from planner import plan
from segment.operators import base


class _Instrumented:
    """An operator seen through the executor: conform, cancel checks, optional stats."""

    def __init__(self, index: int, node: plan.Node, op: base.Operator, dictionaries: bool):
        self.index = index
        self.node = node
        self.op = op
        self.schema = base.schema_of(node.fields)
        self.dictionaries = dictionaries  # the parent takes dictionary-encoded strings

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        try:
            if ctx.analyze:
                yield from self._analyzed(ctx)
            else:
                for batch in self.op.execute(ctx):
                    ctx.check_cancel()
                    yield base.conform(batch, self.schema, self.dictionaries)
        except pa.ArrowNotImplementedError as e:
            # An Arrow kernel missing for some type: tell the client, with a SQLSTATE.
            raise errors.FeatureNotSupported(f"{type(self.node).__name__}: {e}") from e
        except pa.ArrowException as e:
            raise errors.InternalError(f"{type(self.node).__name__}: {e}") from e

    def _analyzed(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        stats = ctx.node_stats.setdefault(self.index, base.NodeStats(type(self.node).__name__))
        it = iter(self.op.execute(ctx))
        try:
            while True:
                t0 = time.perf_counter()
                try:
                    batch = next(it)
                except StopIteration:
                    stats.seconds += time.perf_counter() - t0
                    break
                batch = base.conform(batch, self.schema, self.dictionaries)
                stats.seconds += time.perf_counter() - t0
                stats.rows += batch.num_rows
                stats.batches += 1
                ctx.check_cancel()
                yield batch
        finally:
            counters = getattr(self.op, "counters", None)
            if counters:
                stats.counters = dict(counters)
            reservation = getattr(self.op, "memory", None)  # a memory.Reservation
            if reservation is not None:
                stats.peak_memory = max(stats.peak_memory, reservation.peak)
                stats.spilled_bytes = max(stats.spilled_bytes, reservation.spilled_bytes)
            close = getattr(it, "close", None)
            if close is not None:
                close()


def build(node: plan.Node) -> base.Operator:
    """The instrumented operator tree of a slice rooted at `node`."""
    return base.build(node, wrap=_Instrumented)


def run(node: plan.Node, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
    """Execute the slice rooted at `node`, yielding its output batches."""
    ctx.check_cancel()
    yield from build(node).execute(ctx)


def collect(node: plan.Node, ctx: base.ExecContext) -> pa.Table:
    """All output of `run` as one table (tests, small results)."""
    schema = base.schema_of(node.fields)
    batches = list(run(node, ctx))
    if not schema.names:
        return pa.Table.from_batches(batches) if batches else pa.table({})
    return pa.Table.from_batches(batches, schema=schema)
