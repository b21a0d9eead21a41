"""A segment's work, as plain methods: storage writes, two-phase commit, running slices.

`SegmentWorker` holds no Ray state; segment/actor.py wraps it in a thin Ray actor. Tests can
drive a worker directly, without Ray.
"""

from __future__ import annotations

import collections
import logging
import os
import queue
import threading
import time
import numpy as np
import pyarrow as pa

from motion import hashing
from segment import sketch as kmv
from motion.errors import MotionError
from motion.service import MotionService
from planner import errors
from planner import plan as pl
from planner.copy_options import CopyOptions
from planner.schema import DistKind, TableDef
from segment import check_constraints, column_defaults, common_values, executor, heap, memory
from segment.messages import (CHECKED_METHODS, UNCHECKED_METHODS, ColumnSample, MethodCall,
                              ShardSample, SliceResult, SliceTask)
from segment.operators import base, motion_send
from segment.storage.shard_store import ShardStore
from segment.task_server import TaskEndpoint, TaskServer
from segment.ingest import convert, file_source
from segment.jit import warmup

log = logging.getLogger(__name__)

# Bytes of Motion frames a segment keeps in memory before spilling to its data dir for
# queries whose memory budget has not reached it yet (frames that arrive before the
# query's first slice starts here); after that the query's budget bounds them.
MOTION_MEMORY_BYTES = 256 << 20
CANCELLED_REMEMBERED = 4096  # cancelled query ids kept, for slices that start late


class SegmentWorker:
    def __init__(self, segment_id: int, n_segments: int, data_dir: str,
                 motion_host: str = "127.0.0.1"):
        self.segment_id = segment_id
        self.n_segments = n_segments
        self.data_dir = data_dir
        os.makedirs(data_dir, exist_ok=True)
        self.incarnation = next_incarnation(data_dir)
        self.store = ShardStore(data_dir)
        # What an earlier process of this segment was writing when it died is garbage now:
        # unreferenced chunk files go at once (prepared deltas wait for `recover`).
        self.store.vacuum()
        self.motion = MotionService(motion_host, os.path.join(data_dir, "spill"),
                                    MOTION_MEMORY_BYTES)
        # The coordinator hands this process its slices here (and through Ray if not).
        self.tasks = TaskServer(motion_host, self.motion.endpoint().node_id, self._request)
        self._lock = threading.Lock()
        self._running = 0
        self._vacuuming = False
        # What the slices of one query running here share (cancel event, memory budget),
        # until the last of them ends; and the queries cancelled lately, so that a slice
        # that starts after its query's cancel stops at once.
        self._queries: dict[int, _Query] = {}
        self._cancelled: collections.OrderedDict[int, str | None] = collections.OrderedDict()
        warmup.start()  # compiled code loaded before the first query needs it

    # --- incarnations ----------------------------------------------------------------------
    def _request(self, request):
        """What the task socket hands over: a query's slices, or a method call."""
        if isinstance(request, MethodCall):
            return self.call(request)
        return self.run_slices(request)

    def call(self, c: MethodCall):
        """A method of the coordinator's (segment/messages.py lists those it may name):
        checked, only on the process `c.incarnation` names (work meant for a process that
        died never runs on its successor)."""
        if c.checked:
            self.check(c.incarnation)
        if c.method not in (CHECKED_METHODS if c.checked else UNCHECKED_METHODS):
            raise ValueError(f"{c.method} is not a segment method")
        return getattr(self, c.method)(*c.args)

    def check(self, incarnation: int | None) -> None:
        """Refuse work meant for another process of this segment (one that died): its
        pending writes and Motion addresses are not here."""
        if incarnation is not None and incarnation != self.incarnation:
            raise errors.SegmentRestarted(
                f"segment {self.segment_id} restarted (incarnation {incarnation} is gone, "
                f"this is {self.incarnation})")

    def _check_txn(self, txn_id: int) -> None:
        if not self.store.knows(txn_id):
            raise errors.TransactionLost(
                f"segment {self.segment_id}: transaction {txn_id} is not known here (the "
                f"segment restarted since the transaction began)")

    # --- DDL and storage -----------------------------------------------------------------
    def recover(self, committed: set[int], undecided: set[int] = frozenset()) -> None:
        self.store.recover(set(committed), set(undecided))

    def begin(self, txn_id: int) -> None:
        self.store.begin(txn_id)

    def create_table(self, table: TableDef) -> None:
        if not self.store.has_table(table.id):
            self.store.create_table(table.id, table.arrow_schema(), tuple(
                (k.name, tuple(table.columns[i].name for i in k.columns))
                for k in table.unique), table.numsegments)

    def set_placement(self, txn_id: int, table_id: int, n_segments: int) -> None:
        self._check_txn(txn_id)
        self.store.set_placement(txn_id, table_id, n_segments)

    def drop_table(self, table_id: int) -> None:
        if self.store.has_table(table_id):
            self.store.drop_table(table_id)

    def write(self, txn_id: int, table_id: int, batches: list[pa.RecordBatch]) -> int:
        self._check_txn(txn_id)
        return self.store.write(txn_id, table_id, batches)

    def truncate(self, txn_id: int, table_id: int) -> None:
        self._check_txn(txn_id)
        self.store.truncate(txn_id, table_id)

    def mark(self, txn_id: int, mark_id: int) -> None:
        self._check_txn(txn_id)
        self.store.mark(txn_id, mark_id)

    def rollback_to(self, txn_id: int, mark_id: int | None) -> None:
        self._check_txn(txn_id)
        self.store.rollback_to(txn_id, mark_id)

    def prepare(self, txn_id: int) -> None:
        self.store.prepare(txn_id)

    def commit(self, txn_id: int) -> None:
        self.store.commit(txn_id)
        self._vacuum_when_idle()

    def rewrite_table(self, txn_id: int, old: TableDef, new: TableDef, exprs: tuple,
                      now) -> int:
        """ALTER TABLE's rewrite of this shard: each live row of `old` as `exprs` make it
        (expressions over the old row), in the layout of `new`."""
        self._check_txn(txn_id)
        old_schema = base.schema_of(tuple(pl.Field(c.name, c.type) for c in old.columns))
        new_schema = new.arrow_schema()

        def convert(batch: pa.RecordBatch) -> pa.RecordBatch:
            arrays = base.evaluate_columns(exprs, base.conform(batch, old_schema), now)
            return pa.RecordBatch.from_arrays(arrays, names=new_schema.names)
        return self.store.rewrite(txn_id, old.id, new_schema, convert)

    def compact(self, txn_id: int, table_id: int, min_dead_fraction: float,
                merge_small: bool = False) -> int:
        self._check_txn(txn_id)
        return self.store.compact(txn_id, table_id, min_dead_fraction, merge_small)

    def compactable(self, table_id: int, min_dead_fraction: float,
                    merge_small: bool = False) -> tuple[int, int]:
        return self.store.compactable(table_id, min_dead_fraction, merge_small)

    def _vacuum_when_idle(self) -> None:
        """Delete the files commits removed (TRUNCATE, compaction, replaced deletion
        files) while no slice runs here: only a query running now can hold a snapshot
        that still names them. In a thread: the caller is a query's or commit's reply."""
        with self._lock:
            if self._running or self._vacuuming or not self.store.has_garbage:
                return
            self._vacuuming = True

        def run():
            try:
                self.store.vacuum()
            except Exception as e:  # noqa: BLE001 - garbage stays for the next try
                log.warning("segment %s: vacuum: %s", self.segment_id, e)
            finally:
                with self._lock:
                    self._vacuuming = False
        threading.Thread(target=run, name="vacuum", daemon=True).start()

    def abort(self, txn_id: int) -> None:
        self.store.abort(txn_id)

    def table_rows(self, table_id: int, txn_id: int | None = None) -> int:
        return sum(c.live_rows for c in self.store.snapshot(table_id, txn_id))

    def table_bytes(self, table_ids, txn_id: int | None = None) -> dict[int, int]:
        """The bytes of the chunk files of each table (pg_table_size) as `txn_id` sees
        them; a table without storage here (dropped meanwhile) has none."""
        return {t: sum(c.nbytes for c in self.store.snapshot(t, txn_id))
                for t in table_ids if self.store.has_table(t)}

    def analyze(self, table: TableDef) -> ShardSample:
        """This shard's statistics for ANALYZE: rows, and per column nulls, a KMV sketch
        (the smallest distinct hash values), which the coordinator merges into a
        distinct-count estimate across segments, and the most common values of a random
        sample of the rows."""
        chunks = self.store.snapshot(table.id)
        # One random sample of rows for every column's most common values.
        positions = common_values.sample_positions([c.live_rows for c in chunks], table.id)
        sampled = sum(len(p) for p in positions)
        columns = {}
        for col in table.columns:
            scale = [col.type.scale] if col.type.is_scaled_int else None
            sketch = np.empty(0, np.uint64)
            nulls = 0
            sample = []
            for chunk, at in zip(chunks, positions):
                arr = self.store.read_live(chunk, [col.name]).column(0).combine_chunks()
                nulls += arr.null_count
                sketch = kmv.update(sketch, arr, kmv.KMV_SIZE, scale)
                sample.append(arr.take(pa.array(at)))
            lows = [c.stats[col.name].min for c in chunks
                    if col.name in c.stats and c.stats[col.name].min is not None]
            highs = [c.stats[col.name].max for c in chunks
                     if col.name in c.stats and c.stats[col.name].max is not None]
            columns[col.name] = ColumnSample(nulls, sketch, min(lows) if lows else None,
                                             max(highs) if highs else None,
                                             common_values.most_common(sample), sampled)
        return ShardSample(sum(c.live_rows for c in chunks), columns)

    # --- queries -------------------------------------------------------------------------
    def motion_endpoint(self):
        """Where senders reach this segment's Motion receivers."""
        return self.motion.endpoint()

    def task_endpoint(self) -> TaskEndpoint:
        """Where the coordinator hands this process slices (segment/task_server.py)."""
        return self.tasks.endpoint

    def run_slice(self, task: SliceTask) -> SliceResult:
        """Run one slice of a query on this segment: its plan pulls batches (receiving
        from the slices below through this segment's MotionService) and the Motion above
        sends them on. Returns EXPLAIN ANALYZE statistics of this slice here."""
        self.check(task.incarnation)
        with self._lock:
            self._running += 1
        try:
            return self._run_slice(task)
        finally:
            with self._lock:
                self._running -= 1
                idle = self._running == 0
            if idle:
                heap.at_idle()
                self._vacuum_when_idle()

    def run_slices(self, tasks: tuple[SliceTask, ...]) -> tuple[SliceResult, ...]:
        """Run the slices of one query that this segment has a part in, all at once (one
        actor call for all of them: each call costs the coordinator about a millisecond).
        They pass rows to each other through Motions, so each runs in a thread of its
        own. Returns their results in order; the first failure is raised as soon as it
        happens, without waiting for the others: the coordinator then cancels the query,
        which ends them."""
        if len(tasks) == 1:
            return (self.run_slice(tasks[0]),)
        results: list[SliceResult | None] = [None] * len(tasks)
        done: queue.SimpleQueue = queue.SimpleQueue()

        def run(i: int, task: SliceTask) -> None:
            try:
                results[i] = self.run_slice(task)
                done.put(None)
            except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                done.put(e)

        # The coordinator lists a query's slices top first (pre-order), so in reverse
        # every slice starts before the slice it sends to: a new thread waits for the
        # GIL while the one before it sets up, and a join's build side, which the probe
        # side waits for, thus starts about a millisecond sooner.
        for i, task in reversed(list(enumerate(tasks))):
            threading.Thread(target=run, args=(i, task), daemon=True,
                             name=f"slice-{task.query_id}-{i}").start()
        for _ in tasks:
            error = done.get()
            if error is not None:
                raise error
        return tuple(results)

    def running(self) -> int:
        """How many slices run here now (0: the segment is idle)."""
        with self._lock:
            return self._running

    def _run_slice(self, task: SliceTask) -> SliceResult:
        if task.txn_id is not None and any(isinstance(n, (pl.Insert, pl.DeleteRows))
                                           for n in pl.walk(task.motion)):
            self._check_txn(task.txn_id)
        ctx = self._context(task.query_id, task.txn_id, task.analyze, task.work_mem)
        ctx.now = task.now
        ctx.jit = task.jit
        ctx.jit_above_rows = task.jit_above_rows
        timer = self._arm_deadline(task.query_id, task.deadline)
        receivers = []

        def open_receiver(m: pl.Motion):
            r = self.motion.open_receiver((task.query_id, m.slice_id, self.segment_id),
                                          task.n_senders[m.slice_id])
            receivers.append((m.slice_id, r))
            return r

        ctx.receive = lambda m: open_receiver(m).batches()
        ctx.receive_sorted = lambda m: open_receiver(m).streams()
        motion = task.motion
        schema = base.schema_of(motion.child.fields)
        senders = []
        try:
            for i, ep in enumerate(task.receivers):
                senders.append(self.motion.connect(
                    ep, (task.query_id, motion.slice_id, i), task.sender_index, schema=schema))
            node = self._localize(motion.child, task.segments)
            motion_send.send(executor.run(node, ctx), motion, senders)
        except BaseException as e:
            sqlstate = getattr(e, "sqlstate", "XX000")
            message = f"segment {self.segment_id}: {getattr(e, 'message', None) or e}"
            for sender in senders:
                try:
                    sender.fail(message, sqlstate, errors.kind_of(e))
                except Exception:  # the receiver may be gone already: nothing to tell
                    pass
            if isinstance(e, errors.QueryError):
                raise e.with_context(f"segment {self.segment_id}") from None
            if isinstance(e, MotionError):
                raise errors.relayed(message, e.sqlstate, e.kind) from None
            raise
        finally:
            if timer is not None:
                timer.cancel()
            for _, r in receivers:
                r.close()
            self._release(task.query_id)
        return SliceResult(self.segment_id, motion.slice_id,
                           dict(ctx.node_stats) if task.analyze else {},
                           tuple(s.stats() for s in senders),
                           {sid: tuple(r.stats()) for sid, r in receivers})

    def insert_select(self, query_id: int, node: pl.Node, txn_id: int,
                      table: TableDef, segments: int) -> int:
        """Evaluate a plan whose rows every segment can compute (a GENERAL locus: constants,
        generate_series, a file visible to all) and keep this segment's share of them, as
        the target's distribution says. `segments` is how many segments run it (a split
        series gives each its part). Returns rows kept."""
        self._check_txn(txn_id)
        ctx = self._context(query_id, txn_id, False)
        node = self._localize(node, segments)
        # The coordinator split the work for a random target (each segment made a
        # different part), so then every row made here stays here.
        keep_all = table.policy.kind is DistKind.RANDOM
        try:
            return self.store.write(txn_id, table.id,
                                    self._shares(executor.run(node, ctx), table, keep_all))
        except errors.QueryError as e:
            raise e.with_context(f"segment {self.segment_id}")
        finally:
            self._release(query_id)

    def _shares(self, batches, table: TableDef, keep_all: bool = False):
        """This segment's rows of a stream every segment computes alike (its constraints
        checked over all of them, so every segment fails alike)."""
        counter = 0
        for batch in batches:
            check_constraints.check(table, batch)
            mine = batch
            if not keep_all:
                mine, counter = self._my_share(batch, table, counter)
            if mine.num_rows:
                yield mine

    def copy_from_file(self, query_id: int, txn_id: int, table: TableDef, path: str,
                       options: CopyOptions, positions: list[int], defaults=None,
                       now=None) -> int:
        """COPY t [(cols)] FROM 'file': every segment reads the file, keeps its own rows;
        `defaults` (bound, per column; none calls a sequence) fill the columns the list
        leaves out, with the statement's `now`."""
        self._check_txn(txn_id)
        try:
            cols = [table.columns[i] for i in positions]
            batches = file_source.read_file(path, options, cols, table=table.name)
            if positions != list(range(len(table.columns))):
                batches = (convert.widen(b, table, positions) for b in batches)
            if defaults is not None:
                batches = (column_defaults.fill(b, positions, defaults, now) for b in batches)
            return self.store.write(txn_id, table.id, self._shares(batches, table))
        except errors.QueryError as e:
            raise e.with_context(f"segment {self.segment_id}")

    def _my_share(self, batch: pa.RecordBatch, table: TableDef, counter: int):
        kind = table.policy.kind
        # The table is on its first `numsegments` segments (an expansion moves it later).
        # numsegments, not segment_count: this process's n_segments is the one it was
        # started with, and an expansion may have grown the cluster since.
        width = table.numsegments or self.n_segments
        if kind is DistKind.REPLICATED:
            return (batch if self.segment_id < width else batch.slice(0, 0)), counter
        n = batch.num_rows
        if kind is DistKind.RANDOM:
            # Round-robin by row number: deterministic, so every segment agrees on who
            # keeps which row without talking.
            idx = (np.arange(counter, counter + n) % width) == self.segment_id
            return batch.filter(pa.array(idx)), counter + n
        ids = hashing.segment_ids([batch.column(k) for k in table.policy.keys],
                                  width, table.key_scales())
        return batch.filter(pa.array(ids == self.segment_id)), counter + n

    def cancel(self, query_id: int, reason: str | None = None) -> None:
        with self._lock:
            self._cancelled[query_id] = reason
            while len(self._cancelled) > CANCELLED_REMEMBERED:
                self._cancelled.popitem(last=False)
            q = self._queries.get(query_id)
            if q is not None:
                q.cancel_with(reason)
        self.motion.cancel(query_id)

    def _acquire(self, query_id: int, work_mem: int | None) -> "_Query":
        with self._lock:
            q = self._queries.get(query_id)
            if q is None:
                q = self._queries[query_id] = _Query(memory.MemoryBudget(
                    work_mem or memory.DEFAULT_LIMIT, self.motion.spill_dir))
                # Motion receive buffers of the query draw from its budget too.
                self.motion.use_memory(query_id, q.budget)
                if query_id in self._cancelled:
                    q.cancel_with(self._cancelled[query_id])
            q.users += 1
            return q

    def _release(self, query_id: int) -> None:
        with self._lock:
            q = self._queries.get(query_id)
            if q is None:
                return
            q.users -= 1
            if q.users > 0:
                return
            del self._queries[query_id]
            self.motion.forget_memory(query_id)  # under the lock, as use_memory in _acquire
            idle = not self._queries
        q.budget.close()
        if idle:
            # Give what the query's operators freed back to the system (mimalloc keeps
            # freed pages otherwise): a segment's resident size falls back after a query.
            pa.default_memory_pool().release_unused()

    def _arm_deadline(self, query_id: int, deadline: float | None):
        """statement_timeout, enforced here too: a segment stops its slices at the deadline
        even if the coordinator's cancel never arrives."""
        if deadline is None:
            return None
        timer = threading.Timer(max(0.0, deadline - time.time()), self.cancel,
                                (query_id, errors.STATEMENT_TIMEOUT))
        timer.daemon = True
        timer.start()
        return timer

    def close(self) -> None:
        self.motion.close()

    def _context(self, query_id: int, txn_id, analyze: bool,
                 work_mem: int | None = None) -> base.ExecContext:
        """A slice's context; the caller must `_release(query_id)` when the slice ends."""
        q = self._acquire(query_id, work_mem)
        return base.ExecContext(store=self.store, txn_id=txn_id, segment_id=self.segment_id,
                                n_segments=self.n_segments, cancel_event=q.event,
                                analyze=analyze, memory=q.budget)

    def _localize(self, node: pl.Node, segments: int) -> pl.Node:
        """Give a split generate_series or table function this segment's part of the
        `segments` parts."""
        from dataclasses import replace

        def part(n):
            if isinstance(n, (pl.GenerateSeries, pl.TableFunction)) and \
                    n.locus is not None and n.locus.is_partitioned:
                return replace(n, part=(self.segment_id, segments or self.n_segments))
            return n
        return pl.transform(node, part)

    def ping(self) -> float:
        return time.time()


class _Query:
    """What the slices of one query on this segment share."""

    def __init__(self, budget: memory.MemoryBudget):
        self.budget = budget
        self.event = threading.Event()
        self.users = 0

    def cancel_with(self, reason: str | None) -> None:
        if not self.event.is_set():
            self.event.reason = reason  # read by ExecContext.check_cancel
        self.event.set()


def next_incarnation(data_dir: str) -> int:
    """A number this segment's data directory has never handed out before: every process
    of the segment gets a new one, so calls meant for a dead process are recognised."""
    path = os.path.join(data_dir, "incarnation")
    try:
        with open(path) as f:
            last = int(f.read().strip() or 0)
    except FileNotFoundError:
        last = 0
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(last + 1))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return last + 1
