"""Run a distributed plan: dispatch each slice to its gang, run the top slice here.

The top slice (locus ENTRY or GENERAL) runs in the coordinator process with the same
operators as segments. Its Motion receive ends pull from the sending slice, which runs on
every segment (or on one, for replicated and single-segment loci) as a Ray streaming call.
Cancellation sets a flag on every segment of the query; errors keep their SQLSTATE.
"""

from __future__ import annotations

import datetime
import itertools
import queue
import threading
import time
from typing import Iterator

import pyarrow as pa

from coordinator import cluster as cl
from planner import errors
from planner import plan as pl
from planner.explain import NodeActual
from planner.locus import LocusKind
from segment import executor
from segment.operators import base

_query_ids = itertools.count(1)
_DONE = object()


class QueryRun:
    """One execution of a plan. Iterate `batches()`; `actuals` fills in with ANALYZE."""

    def __init__(self, cluster: cl.Cluster, root: pl.Node, txn_id: int | None,
                 cancel_event: threading.Event, analyze: bool = False):
        self.cluster = cluster
        self.root = root
        self.txn_id = txn_id
        self.cancel_event = cancel_event
        self.analyze = analyze
        self.query_id = next(_query_ids) * 1000 + (time.time_ns() % 1000)
        self.actuals: dict[tuple[int, int], NodeActual] = {}
        self._streams: list = []
        # now() is the statement's start time, the same on every segment.
        self.now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)

    def batches(self) -> Iterator[pa.RecordBatch]:
        ctx = base.ExecContext(store=None, txn_id=self.txn_id, segment_id=-1,
                               n_segments=self.cluster.n_segments,
                               cancel_event=self.cancel_event, analyze=self.analyze,
                               receive=self._receive, receive_sorted=self._receive_sorted,
                               now=self.now)
        try:
            yield from executor.run(self.root, ctx)
        finally:
            self.cancel_segments()
            if self.analyze:
                for pos, st in ctx.node_stats.items():
                    self.actuals[(0, pos)] = NodeActual(rows=st.rows, ms=st.seconds * 1000)

    def cancel_segments(self):
        if not self._streams:
            return
        for a in self.cluster.actors:
            a.cancel.remote(self.query_id)
        self._streams = []

    # --- motion receive ------------------------------------------------------------------
    def _gang(self, motion: pl.Motion) -> list[int]:
        if motion.child.locus.kind in (LocusKind.REPLICATED, LocusKind.SINGLE_QE):
            return [0]
        return list(range(self.cluster.n_segments))

    def _receive(self, motion: pl.Motion) -> Iterator[pa.RecordBatch]:
        """The sending slice's batches, in arrival order."""
        return _interleave(self._streams_of(motion), self.cancel_event)

    def _receive_sorted(self, motion: pl.Motion) -> list[Iterator[pa.RecordBatch]]:
        """One sorted stream per sender, for a Gather Merge."""
        return self._streams_of(motion)

    def _streams_of(self, motion: pl.Motion) -> list[Iterator[pa.RecordBatch]]:
        streams = []
        for seg in self._gang(motion):
            gen = self.cluster.actors[seg].run_slice.options(num_returns="streaming").remote(
                self.query_id, motion.child, self.txn_id, self.analyze, self.now)
            self._streams.append(gen)
            streams.append(self._consume(gen, motion.slice_id, seg))
        return streams

    def _consume(self, gen, slice_id: int, seg: int) -> Iterator[pa.RecordBatch]:
        for ref in gen:
            if self.cancel_event.is_set():
                raise errors.QueryCanceled("canceling statement due to user request")
            item = cl.get(ref)
            if isinstance(item, dict):
                self._record(slice_id, item)
                continue
            yield item

    def _record(self, slice_id: int, stats: dict):
        for pos, st in stats["nodes"].items():
            a = self.actuals.setdefault((slice_id, pos), NodeActual())
            a.rows += st.rows
            a.ms = max(a.ms, st.seconds * 1000)
            a.segments += 1


def _interleave(streams: list[Iterator], cancel_event: threading.Event) -> Iterator:
    """Merge several streams as batches arrive (each stream drained by its own thread)."""
    if len(streams) == 1:
        yield from streams[0]
        return
    q: queue.Queue = queue.Queue(maxsize=8)
    stop = threading.Event()

    def pump(stream):
        try:
            for item in stream:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(_DONE)
        except BaseException as e:  # forwarded to the consumer, which raises it
            q.put(e)

    threads = [threading.Thread(target=pump, args=(s,), daemon=True) for s in streams]
    for t in threads:
        t.start()
    remaining = len(threads)
    try:
        while remaining:
            try:
                item = q.get(timeout=0.2)
            except queue.Empty:
                if cancel_event.is_set():
                    raise errors.QueryCanceled("canceling statement due to user request")
                continue
            if item is _DONE:
                remaining -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        stop.set()
