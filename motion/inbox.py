"""The receiving state of one channel key: per-sender queues of frames, bounded in memory.

An Inbox exists from the moment either its Receiver is opened or its first sender says
HELLO, whichever comes first, so senders may start before the receiving slice does. The
service's I/O thread pushes frames in; the consumer (Receiver) pops batches out.

Memory: frames waiting in the queues are charged to the inbox's `InboxMemory`, which draws
from a pool: the query's memory budget on this process (segment/memory.py MemoryBudget,
which the service is given per query id: `MotionService.use_memory`), so that a receive
buffer and the query's sorts and hash tables share one limit; or, until the query's budget
is known here (a sender may say HELLO before the receiving slice starts), the service's
own small Budget, and the frames held then move to the query's budget when it arrives. A
frame that does not fit goes to the inbox's SpillFile instead, so the I/O thread never
stops reading and a sender never waits on a consumer that reads another input first (a
hash join reads its build side before its probe side). Frames keep their order either way:
the queues hold both kinds of entries. A frame popped by the consumer is no longer
charged: from then on it is the consumer's memory. `InboxMemory` keeps the inbox's peak
and spilled bytes, which EXPLAIN ANALYZE shows on the Motion's receive node.

Failure: an ERROR frame, a sender lost before END, a protocol violation or a cancel fails
the inbox once; queued frames are dropped and every waiting consumer gets the MotionError.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Protocol

import pyarrow as pa

from motion import frames
from motion.channel import ChannelStats
from motion.errors import INTERNAL, IO_ERROR, MotionError, QUERY_CANCELED
from motion.spill import SpillFile

_SPILL_CHUNK = 1 << 20


class MemoryPool(Protocol):
    """What an inbox's memory is drawn from (segment/memory.py MemoryBudget is one; motion
    imports nothing of the segment, so it is named by its methods)."""

    def reserve(self, n: int) -> bool: ...
    def force(self, n: int) -> None: ...
    def release(self, n: int) -> None: ...
    def add_spilled(self, n: int) -> None: ...


class Budget:
    """Bytes of queued frames a service holds in memory, under one limit: the pool of
    inboxes whose query has not given the service its own budget (yet)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def reserve(self, n: int) -> bool:
        with self._lock:
            if self.used + n > self.limit:
                return False
            self.used += n
            return True

    def force(self, n: int) -> None:
        """Charge n bytes even beyond the limit (a frame a consumer is waiting for)."""
        with self._lock:
            self.used += n

    def release(self, n: int) -> None:
        if n:
            with self._lock:
                self.used -= n

    def add_spilled(self, n: int) -> None:
        """Nothing to count: spills are reported per inbox (InboxMemory), and this pool
        belongs to no query whose EXPLAIN could show them."""


class InboxMemory:
    """One inbox's frames in memory, charged to a pool that can change (`move_to`): what it
    holds, its peak and the bytes it spilled (read as a Reservation by EXPLAIN ANALYZE).
    One lock and the pool's per frame, nothing more."""

    def __init__(self, pool: MemoryPool):
        self.pool = pool
        self.held = 0
        self.peak = 0
        self.spilled_bytes = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        """Charge n bytes if the pool grants them."""
        with self._lock:
            if not self.pool.reserve(n):
                return False
            self._held(n)
            return True

    def force(self, n: int) -> None:
        with self._lock:
            self.pool.force(n)
            self._held(n)

    def give(self, n: int) -> None:
        if n:
            with self._lock:
                self.pool.release(n)
                self.held -= n

    def spilled(self, n: int) -> None:
        with self._lock:
            self.spilled_bytes += n
            self.pool.add_spilled(n)

    def move_to(self, pool: MemoryPool) -> None:
        """Charge what is held to `pool` from now on (the query's budget has arrived)."""
        with self._lock:
            if pool is self.pool:
                return
            pool.force(self.held)
            self.pool.release(self.held)
            self.pool = pool

    def _held(self, n: int) -> None:
        self.held += n
        if self.held > self.peak:
            self.peak = self.held


class Slot:
    """Where the body of a BATCH frame read from a byte stream goes: memory or spill file.

    The reader fills `view()` and calls `advance(n)` until `remaining` is 0."""

    def __init__(self, length: int, buffer: pa.Buffer | None = None,
                 spill: SpillFile | None = None, offset: int = 0):
        self.length, self.buffer, self.spill, self.offset = length, buffer, spill, offset
        self.pos = 0
        self._scratch = None if spill is None else bytearray(min(length, _SPILL_CHUNK) or 1)

    @property
    def remaining(self) -> int:
        return self.length - self.pos

    def view(self) -> memoryview:
        if self.buffer is not None:
            return memoryview(self.buffer)[self.pos:]
        return memoryview(self._scratch)[:min(self.remaining, len(self._scratch))]

    def advance(self, n: int) -> None:
        if self.spill is not None:
            self.spill.write(self.offset + self.pos, memoryview(self._scratch)[:n])
        self.pos += n


@dataclasses.dataclass(slots=True)
class _Entry:
    seq: int
    length: int
    buffer: pa.Buffer | None  # None: spilled at `offset`
    offset: int = 0
    held: int = 0  # bytes charged to the budget


@dataclasses.dataclass(slots=True)
class _Counters:
    transport: str | None = None
    frames: int = 0
    rows: int = 0
    bytes: int = 0
    spilled_frames: int = 0
    spilled_bytes: int = 0


class Inbox:
    """Queues of one channel key (query_id, ...); thread-safe."""

    def __init__(self, key: tuple, pool: MemoryPool, spill_dir: str):
        self.key = key
        self.n_senders: int | None = None
        self.conns: set = set()  # owned by the service's I/O thread
        self.memory = InboxMemory(pool)
        self._spill = SpillFile(spill_dir)
        self._cond = threading.Condition()
        self._queues: dict[int, collections.deque[_Entry]] = {}
        self._counters: dict[int, _Counters] = {}
        self._schemas: dict[int, pa.Schema] = {}
        self._ended: set[int] = set()
        self._seq = 0
        self._waiting: collections.Counter = collections.Counter()  # index or None -> count
        self.schema: pa.Schema | None = None
        self.error: MotionError | None = None
        self.closed = False

    # --- I/O thread side ------------------------------------------------------------------
    def attach(self, index: int, transport: str) -> None:
        """A sender said HELLO; raises MotionError if it may not join."""
        with self._cond:
            if self.error is not None:
                raise self.error
            if self.closed:
                raise MotionError(f"receiver of channel {self.key} is closed", QUERY_CANCELED)
            if self.n_senders is not None and index >= self.n_senders:
                self._fail(MotionError(f"sender index {index} out of range for channel "
                                       f"{self.key} of {self.n_senders} senders", INTERNAL))
                raise self.error
            if index in self._counters:
                self._fail(MotionError(f"two senders with index {index} on channel {self.key}",
                                       INTERNAL))
                raise self.error
            self._counters[index] = _Counters(transport=transport)
            self._queues[index] = collections.deque()

    def on_schema(self, index: int, buf: pa.Buffer) -> None:
        schema = frames.read_schema(buf)
        with self._cond:
            self._count(index, len(buf))
            if index in self._schemas:
                self._fail(MotionError(f"sender {index} of channel {self.key} sent its schema "
                                       "twice", INTERNAL))
            elif self.schema is not None and not self.schema.equals(schema):
                self._fail(MotionError(f"sender {index} of channel {self.key} sends {schema}, "
                                       f"others {self.schema}", INTERNAL))
            else:
                self.schema = schema
                self._schemas[index] = schema

    def reserve(self, index: int, length: int) -> Slot:
        """A place for a BATCH body of sender `index` about to be read from a stream."""
        if self._admit(index, length):
            return Slot(length, buffer=pa.allocate_buffer(length))
        slot = Slot(length, spill=self._spill, offset=self._spill.reserve(length))
        self.memory.spilled(length)
        return slot

    def commit(self, index: int, slot: Slot) -> None:
        """Queue a filled Slot."""
        if slot.buffer is not None:
            entry = _Entry(0, slot.length, slot.buffer, held=slot.length)
        else:
            entry = _Entry(0, slot.length, None, offset=slot.offset)
        self._enqueue(index, entry)

    def drop(self, slot: Slot) -> None:
        """Give back a Slot that will not be committed (its stream broke)."""
        if slot.buffer is not None:
            self.memory.give(slot.length)
        else:
            self._spill.discard(slot.offset, slot.length)

    def push(self, index: int, buf: pa.Buffer) -> None:
        """Queue a BATCH body already in memory (shared memory or a small message); when
        over budget it is copied to the spill file and `buf` let go at once."""
        n = len(buf)
        if self._admit(index, n):
            self._enqueue(index, _Entry(0, n, buf, held=n))
            return
        if self.error is not None or self.closed:
            return
        offset = self._spill.reserve(n)
        try:
            self._spill.write(offset, buf)
        except MotionError as exc:
            self._spill.discard(offset, n)
            self.fail(exc)
            return
        self.memory.spilled(n)
        self._enqueue(index, _Entry(0, n, None, offset=offset))

    def on_end(self, index: int) -> None:
        with self._cond:
            self._count(index, 0)
            self._ended.add(index)  # an empty stream may end without a schema
            self._cond.notify_all()

    def on_error(self, index: int, buf: pa.Buffer) -> None:
        error = frames.read_error(buf)
        with self._cond:
            self._count(index, len(buf))
            self._fail(MotionError(f"sender {index} of channel {self.key} failed: "
                                   f"{error.message}", error.sqlstate, error.kind))

    def on_lost(self, index: int) -> None:
        """The connection of sender `index` ended; an error unless it sent END first."""
        with self._cond:
            if index not in self._ended:
                self._fail(MotionError(f"sender {index} of channel {self.key} lost its "
                                       "connection before end of stream", IO_ERROR))

    def fail(self, error: MotionError) -> None:
        with self._cond:
            self._fail(error)

    def ended(self, index: int) -> bool:
        with self._cond:
            return index in self._ended

    # --- consumer side --------------------------------------------------------------------
    def set_senders(self, n: int) -> None:
        with self._cond:
            self.n_senders = n
            bad = [i for i in self._counters if i >= n]
            if bad:
                self._fail(MotionError(f"sender index {bad[0]} out of range for channel "
                                       f"{self.key} of {n} senders", INTERNAL))

    def next_batch(self, index: int | None = None) -> pa.RecordBatch | None:
        """The next batch of sender `index` (None: of any sender, in arrival order); None
        once the sender(s) ended. Blocks; raises the inbox's MotionError."""
        with self._cond:
            while True:
                if self.error is not None:
                    raise self.error
                if self.closed:
                    raise MotionError(f"receiver of channel {self.key} is closed",
                                      QUERY_CANCELED)
                entry, src = self._take(index)
                if entry is not None:
                    schema = self.schema
                    break
                if self._done(index):
                    return None
                self._waiting[index] += 1
                try:
                    self._cond.wait(0.5)
                finally:
                    self._waiting[index] -= 1
        self.memory.give(entry.held)
        buf = entry.buffer
        if buf is None:
            try:
                buf = self._spill.read(entry.offset, entry.length)
            except MotionError as exc:
                self.fail(exc)
                raise
        batch = frames.read_batch(buf, schema)
        with self._cond:
            self._counters[src].rows += batch.num_rows
        return batch

    def stats(self) -> list[ChannelStats]:
        with self._cond:
            n = self.n_senders if self.n_senders is not None else (
                max(self._counters, default=-1) + 1)
            return [ChannelStats(**dataclasses.asdict(self._counters.get(i, _Counters())))
                    for i in range(n)]

    def spill_bytes_on_disk(self) -> int:
        return self._spill.size_on_disk()

    def close(self) -> None:
        """Drop everything queued and the spill file; later frames are ignored."""
        with self._cond:
            self.closed = True
            self._drop_all()
            self._cond.notify_all()
        self._spill.close()

    # --- internals ------------------------------------------------------------------------
    def _admit(self, index: int, n: int) -> bool:
        """Charge a frame of sender `index` to memory: within the budget, or beyond it when
        a consumer already waits for exactly this frame (spilling it would only slow the
        consumer down). False: spill it."""
        if self.memory.take(n):
            return True
        with self._cond:
            if self._waiting[index] and not self._queues.get(index) or (
                    self._waiting[None] and not any(self._queues.values())):
                self.memory.force(n)
                return True
        return False

    # The rest hold self._cond.
    def _count(self, index: int, nbytes: int) -> None:
        c = self._counters[index]
        c.frames += 1
        c.bytes += nbytes

    def _enqueue(self, index: int, entry: _Entry) -> None:
        with self._cond:
            if self.error is not None or self.closed:
                self._release(entry)
                return
            if index not in self._schemas:
                self._release(entry)
                self._fail(MotionError(f"sender {index} of channel {self.key} sent a batch "
                                       "before its schema", INTERNAL))
                return
            self._count(index, entry.length)
            if entry.buffer is None:
                self._counters[index].spilled_frames += 1
                self._counters[index].spilled_bytes += entry.length
            entry.seq = self._seq
            self._seq += 1
            self._queues[index].append(entry)
            self._cond.notify_all()

    def _take(self, index: int | None):
        if index is not None:
            q = self._queues.get(index)
            return (q.popleft(), index) if q else (None, index)
        best = None
        for i, q in self._queues.items():
            if q and (best is None or q[0].seq < self._queues[best][0].seq):
                best = i
        return (None, None) if best is None else (self._queues[best].popleft(), best)

    def _done(self, index: int | None) -> bool:
        if index is not None:
            return index in self._ended and not self._queues.get(index)
        return (self.n_senders is not None and len(self._ended) >= self.n_senders
                and not any(self._queues.values()))

    def _fail(self, error: MotionError) -> None:
        if self.error is None and not self.closed:
            self.error = error
            self._drop_all()
        self._cond.notify_all()

    def _drop_all(self) -> None:
        for q in self._queues.values():
            while q:
                self._release(q.popleft())

    def _release(self, entry: _Entry) -> None:
        self.memory.give(entry.held)
        if entry.buffer is None:
            self._spill.discard(entry.offset, entry.length)
        entry.buffer = None
