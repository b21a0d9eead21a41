"""Run a distributed plan: dispatch each slice to its gang, run the top slice here.

Every slice below the top runs on its gang (all segments, or one); each segment gets the
slices it runs in one request over its task socket (segment/task_server.py; a Ray actor
call where there is none), their plans pickled once (SlicePlan);
slices exchange rows through Motion channels (motion/: shared memory on one node, TCP
across nodes), not through Ray. The top slice runs in the coordinator with the same
operators, its Gather receivers on the coordinator's MotionService. A failing slice fails
the query: the first error (with its SQLSTATE) is raised to the client and every channel
of the query is torn down on every process.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import itertools
import logging
import threading
import time
from typing import Iterator

import pyarrow as pa

from coordinator import cluster as cl
from motion.channel import ChannelStats
from motion.errors import MotionError
from planner import errors
from planner import plan as pl
from planner import slices as sl
from planner.explain import SHOWN_COUNTERS, NodeActual
from segment import executor, memory
from segment.operators import base
from segment.messages import SlicePlan, SliceResult, SliceTask

_query_ids = itertools.count(1)
log = logging.getLogger(__name__)

RETRIES = 2  # runs again of a read-only query that failed because a segment restarted


def _message(error: BaseException) -> str:
    return str(getattr(error, "message", error))


def new_query_id() -> int:
    # Unique across coordinator restarts too: channel keys of an old query must not match.
    return (int(time.time()) % 1_000_000) * 1_000_000 + next(_query_ids) % 1_000_000


class QueryRun:
    """One execution of a plan. Iterate `batches()`; `actuals` fills in with ANALYZE.

    `incarnations` pins the run to the segment processes of a transaction that has
    written (it reads its own pending rows there); without it the run uses whatever
    processes are up, and a run that failed because a segment restarted, before any row
    reached the caller, is run again once the cluster has healed."""

    def __init__(self, cluster: cl.Cluster, root: pl.Node, txn_id: int | None,
                 cancel_event: threading.Event, analyze: bool = False,
                 incarnations: list[int] | None = None, deadline: float | None = None,
                 work_mem: int | None = None, segment_wait: float = cl.SEGMENT_WAIT_SECONDS,
                 jit: bool = True, jit_above_rows: int = 0,
                 now: datetime.datetime | None = None):
        self.cluster = cluster
        self.root = root
        self.txn_id = txn_id
        self.cancel_event = cancel_event
        self.analyze = analyze
        self.incarnations = incarnations
        self.deadline = deadline
        self.work_mem = work_mem
        self.jit = jit  # the session's `jit`: compiled operator paths where they apply
        self.jit_above_rows = jit_above_rows  # its jit_above_cost: batches this big compile
        self.segment_wait = segment_wait  # how long to wait for a restarting segment
        self.actuals: dict[tuple[int, int], NodeActual] = {}
        # now() is the statement's start time, the same on every segment (`now`: the time
        # the session bound the statement at, which 'now' and 'today' in its text read).
        self.now = (now or datetime.datetime.now(datetime.timezone.utc)).astimezone(
            datetime.timezone.utc).replace(tzinfo=None)
        self._start()

    def _start(self) -> None:
        self.query_id = new_query_id()
        self._refs: list = []
        self._error: BaseException | None = None
        self._watching = False  # the watch thread still has slices to hear from
        # Notified when the watch thread notes an error or stops watching (_first_error).
        self._heard = threading.Condition()
        self._ended = threading.Event()  # this run's top slice has finished
        self._receivers: list = []
        self._sent: dict[int, list[ChannelStats]] = {}  # slice id -> its senders' counters
        self._slots = 0

    def batches(self) -> Iterator[pa.RecordBatch]:
        attempt = 0
        while True:
            started = False
            try:
                for batch in self._run():
                    started = True
                    yield batch
                return
            except errors.QueryError as e:
                if self.incarnations is not None and self._pinned_segment_gone(e):
                    # Pinned to a writing transaction's processes: one of them is gone, and
                    # its pending writes with it.
                    raise errors.lost_transaction(e) from None
                if (started or self.incarnations is not None or attempt >= RETRIES
                        or self.cancel_event.is_set() or not self._restarted(e)):
                    raise
                attempt += 1
                log.warning("query %d failed because a segment restarted (%s); running it "
                            "again", self.query_id, e.message)
                self._start()

    def _pinned_segment_gone(self, e: errors.QueryError) -> bool:
        """Whether a run pinned to a transaction's processes failed because one of them
        died. The first error to arrive need not say so: a Motion peer of the dead process
        may report its lost connection (58030) before the dispatch learns of the death, so
        a system error is checked against the processes that are up once healed."""
        if isinstance(e, errors.SegmentFailure):
            return True
        if not e.sqlstate.startswith(("58", "08", "XX")):
            return False  # the statement's own error (data, constraint, cancel)
        try:
            self.cluster.heal(self.segment_wait)
        except errors.SegmentFailure:
            return True  # still not back: the pinned process is certainly gone
        current = self.cluster.incarnations
        return any(current[i] != inc for i, inc in enumerate(self.incarnations)
                   if i < len(current) and inc is not None)

    def _restarted(self, e: errors.QueryError) -> bool:
        """Whether `e` came from a segment restart (the cluster has healed since)."""
        try:
            healed = self.cluster.heal(self.segment_wait)
        except errors.SegmentFailure:
            return False  # not back in time: the error stands
        return bool(healed) or isinstance(e, errors.SegmentFailure)

    def _run(self) -> Iterator[pa.RecordBatch]:
        ctx = base.ExecContext(store=None, txn_id=self.txn_id, segment_id=-1,
                               n_segments=self.cluster.n_segments,
                               cancel_event=self.cancel_event, analyze=self.analyze,
                               receive=self._receive, receive_sorted=self._receive_sorted,
                               now=self.now, jit=self.jit,
                               jit_above_rows=self.jit_above_rows,
                               memory=memory.MemoryBudget(self.work_mem or memory.DEFAULT_LIMIT,
                                                          self.cluster.motion.spill_dir))
        # The top slice's Motion receive buffers draw from its budget.
        self.cluster.motion.use_memory(self.query_id, ctx.memory)
        done = False
        try:
            self._dispatch()
            try:
                yield from executor.run(self.root, ctx)
            except MotionError as e:
                raise self._first_error(errors.relayed(e.message, e.sqlstate, e.kind)) from None
            except errors.QueryCanceled:
                raise self._first_error(None) or self._canceled() from None
            self._wait_slices()
            done = True
        finally:
            self._ended.set()
            if not done:
                self._abort()
            for r in self._receivers:
                r.close()
            self.cluster.motion.forget_memory(self.query_id)
            ctx.memory.close()
            if self._slots:
                self.cluster.slots.release(self._slots)
                self._slots = 0
            if self.analyze:
                for pos, st in ctx.node_stats.items():
                    self.actuals[(0, pos)] = a = NodeActual(
                        rows=st.rows, ms=st.seconds * 1000, peak_memory=st.peak_memory,
                        spilled_bytes=st.spilled_bytes)
                    _add_counters(a, st.counters)
                self._motion_actuals()

    def _canceled(self) -> errors.QueryCanceled:
        return errors.QueryCanceled(base.cancel_reason(self.cancel_event))

    # --- dispatch ------------------------------------------------------------------------
    def _dispatch(self) -> None:
        n = self.cluster.n_segments
        all_slices = sl.slices(self.root)
        n_senders = {s.id: sl.gang_size(s.gang, n) for s in all_slices if s.id}
        coordinator_ep = self.cluster.motion.endpoint()
        if len(all_slices) > 1:
            self._slots = self.cluster.slots.acquire(len(all_slices) - 1, self.cancel_event)
        incarnations = self.incarnations or list(self.cluster.incarnations)
        by_segment: dict[int, list[SliceTask]] = {}
        for s in all_slices[1:]:
            m = s.motion
            if sl.receiver_gang(m) is sl.Gang.COORDINATOR:
                receivers = (coordinator_ep,)
            else:
                receivers = tuple(self.cluster.endpoints[:n])
            plan = SlicePlan.of(m)
            members = range(n) if s.gang is sl.Gang.ALL else [0]
            for index, seg in enumerate(members):
                by_segment.setdefault(seg, []).append(SliceTask(
                    self.query_id, plan, receivers, index, n_senders, self.txn_id,
                    self.analyze, self.now, incarnation=incarnations[seg],
                    deadline=self.deadline, work_mem=self.work_mem, jit=self.jit,
                    jit_above_rows=self.jit_above_rows, segments=n))
        # One request per segment for all its slices, over its task socket.
        for seg, tasks in by_segment.items():
            self._refs.append((seg, self.cluster.submit_slices(seg, tuple(tasks))))
        self._n_senders = n_senders
        if self._refs:
            self._watching = True
            threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        """Fail the query as soon as any slice fails (its receivers may wait forever)."""
        pending = {ref: seg for seg, ref in self._refs}
        ended = self._ended
        try:
            while pending:
                ready, _ = concurrent.futures.wait(
                    list(pending), timeout=1.0, return_when=concurrent.futures.FIRST_COMPLETED)
                if self.cancel_event.is_set() and self._error is None:
                    self._error = self._canceled()
                    self._abort()
                for ref in ready:
                    pending.pop(ref)
                    error = ref.exception()
                    if error is not None:  # any failure fails the query
                        self._note_error(cl.unwrap(error))
                with self._heard:
                    self._heard.notify_all()
        finally:
            with self._heard:
                self._watching = False
                self._heard.notify_all()
        # Every slice has ended, and the top slice may still wait for rows that no slice
        # sends any more: a cancel or statement_timeout must still end it.
        while not ended.wait(0.2):
            if self.cancel_event.is_set():
                if self._error is None:
                    self._error = self._canceled()
                self._abort()
                return

    def _note_error(self, error: BaseException) -> None:
        """Keep the error that started the failure. A slice that fails tears down its
        query's channels, so other slices fail too, with "query cancelled"; which of them
        Ray reports first is a race, and the echo must not hide the cause."""
        if self._error is None:
            self._error = error
            self._abort()
        elif self._is_echo(self._error) and not self._is_echo(error):
            self._error = error

    def _is_echo(self, error: BaseException | None) -> bool:
        """Whether `error` is a cancellation caused by another slice's failure (not by the
        client's cancel or a statement_timeout, which are causes in their own right)."""
        return (isinstance(error, (errors.QueryError, MotionError))
                and getattr(error, "sqlstate", None) == errors.QueryCanceled.sqlstate
                and not self.cancel_event.is_set()
                and errors.STATEMENT_TIMEOUT not in _message(error))

    def _wait_slices(self) -> None:
        for seg, ref in self._refs:
            try:
                results = ref.result()
            except BaseException as e:  # noqa: BLE001
                raise self._first_error(cl.unwrap(e)) from None
            for result in results:
                self._record(result)

    def _first_error(self, fallback):
        """The error that started a failure (a segment's), rather than its echo here."""
        if self._watching:  # woken as soon as the watch thread hears (it polled 20 ms)
            with self._heard:
                self._heard.wait_for(lambda: not (
                    (self._error is None or self._is_echo(self._error)) and self._watching),
                    timeout=2.0)
        error = self._error or fallback
        if self._is_echo(error) and fallback is not None and not self._is_echo(fallback):
            error = fallback
        if isinstance(error, errors.QueryCanceled) or self._is_echo(error):
            # A segment's own statement_timeout, or the coordinator's cancel: said once, as
            # PostgreSQL says it, not prefixed with the segment that noticed first.
            reason = errors.STATEMENT_TIMEOUT if errors.STATEMENT_TIMEOUT in _message(error) \
                else base.cancel_reason(self.cancel_event)
            return errors.QueryCanceled(reason)
        return error

    def _abort(self) -> None:
        self.cluster.motion.cancel(self.query_id)
        reason = getattr(self.cancel_event, "reason", None)
        for seg, _ in self._refs:
            self.cluster.actors[seg].cancel.remote(self.query_id, reason)

    # --- motion receive ------------------------------------------------------------------
    def _open(self, motion: pl.Motion):
        r = self.cluster.motion.open_receiver((self.query_id, motion.slice_id, 0),
                                              self._n_senders[motion.slice_id])
        self._receivers.append(r)
        return r

    def _receive(self, motion: pl.Motion) -> Iterator[pa.RecordBatch]:
        return self._open(motion).batches()

    def _receive_sorted(self, motion: pl.Motion) -> list[Iterator[pa.RecordBatch]]:
        return self._open(motion).streams()

    # --- EXPLAIN ANALYZE -----------------------------------------------------------------
    def _record(self, result: SliceResult) -> None:
        sid = result.slice_id
        for pos, st in result.nodes.items():
            a = self.actuals.setdefault((sid, pos), NodeActual())
            a.rows += st.rows
            a.ms = max(a.ms, st.seconds * 1000)
            a.segments += 1
            a.peak_memory = max(a.peak_memory, st.peak_memory)
            a.spilled_bytes += st.spilled_bytes
            _add_counters(a, st.counters)
        self._sent.setdefault(sid, []).extend(result.sent)

    def sent_bytes(self, slice_id: int) -> int:
        """Bytes the senders of slice `slice_id` sent (once the run has ended)."""
        return sum(s.bytes for s in self._sent.get(slice_id, ()))

    def _motion_actuals(self) -> None:
        """Frames, rows, bytes and transport of every Motion, from its senders' counters."""
        sent = self._sent
        positions = _motion_positions(self.root)
        for sid, stats in sent.items():
            key = positions.get(sid)
            if key is None:
                continue
            frames = sum(s.frames for s in stats)
            rows = sum(s.rows for s in stats)
            nbytes = sum(s.bytes for s in stats)
            transports = sorted({s.transport for s in stats if s.transport})
            a = self.actuals.setdefault(key, NodeActual())
            a.extra = (f"frames={frames} sent_rows={rows} bytes={nbytes} "
                       f"transport={'+'.join(transports) or 'none'}")


def _motion_positions(root: pl.Node) -> dict[int, tuple[int, int]]:
    """slice id of each Motion -> (slice it sits in, its position there), as EXPLAIN counts."""
    out = {}
    for s in sl.slices(root):
        for pos, node in enumerate(base.slice_nodes(s.root)):
            if isinstance(node, pl.Motion) and (node is not s.root or s.id == 0):
                out[node.slice_id] = (s.id, pos)
    return out


def _add_counters(a: NodeActual, counters: dict) -> None:
    """A gang member's compiled-path counters (segment/jit OperatorKernel, agg_table) and
    the operator counters EXPLAIN ANALYZE shows (explain.SHOWN_COUNTERS)."""
    a.jit_batches += counters.get("jit_batches", 0)
    a.jit_fallbacks += counters.get("jit_fallbacks", 0)
    a.jit_compile_ms = max(a.jit_compile_ms, counters.get("jit_compile_ms", 0))
    a.table_batches += counters.get("table_batches", 0)
    for name in SHOWN_COUNTERS:
        if counters.get(name):
            a.counts[name] = a.counts.get(name, 0) + counters[name]
