"""The memory budget of a query on a segment, and the spill files operators write under it.

Why one budget per query per segment, not PostgreSQL's work_mem per operator: a plan with
five sorts and hash tables would otherwise be allowed five times the setting, and what a
segment can actually give a query is one amount. Here `MemoryBudget(limit_bytes,
spill_dir)` is that amount (the session's `work_mem`, carried by the segment's task; 256
MiB by default), shared by every slice of the query that runs on the segment. Each
memory-hungry operator (Sort, Aggregate, HashJoin) takes a `Reservation` from it and
grows it as it holds more; when a grow is refused the operator spills what *it* holds and
goes on. Nobody is asked to spill on another's behalf (no cross-operator eviction): an
operator that holds a hash table keeps it while a sort above it gets what is left, and
every operator may always hold one input batch however small the budget (`grow`), so a
tiny budget makes a query slow, never stuck. The accounting is of the batches and tables
an operator keeps between input batches, not of a kernel's transient scratch space.

Spill files are unnamed temporary files (tempfile.TemporaryFile: O_TMPFILE, or created
and unlinked at once) in the budget's spill directory, so nothing is visible on disk and a
killed process leaves nothing behind; closing one (operators do in `finally`, so also on
error and cancel, and the budget closes any left over in `close`) frees its space. Each
holds Arrow IPC file-format batches of one schema, read back memory-mapped.

Motion receive buffers draw from the same budget: the segment gives it to its
MotionService for the query (`use_memory`), whose inboxes charge the frames they hold
through `reserve`/`force`/`release` and spill frames to their own files when refused
(motion/inbox.py); a frame's bytes return when the consumer takes it.

An operator that cannot go on even spilling (a hash table partition that still does not
fit at the deepest partitioning level) raises `OutOfMemory` (53200), never takes memory
without bound.

`peak` and `spilled_bytes` are kept both on the budget (the query on this segment) and on
each reservation (one operator: what EXPLAIN ANALYZE shows per node).
"""

from __future__ import annotations

import errno
import os
import tempfile
import threading
import time
from typing import Iterator

import pyarrow as pa

from planner import errors

DEFAULT_LIMIT = 256 << 20
# Memory pressure from anywhere on the node degrades to spilling: below this fraction of
# the node's memory available, budgets stop granting (Ray's memory monitor, which kills
# workers, is set to act only above 97% used: deploy/ray_local.py).
NODE_AVAILABLE_FLOOR = 0.10
PRESSURE_CHECK_BYTES = 1 << 20   # smaller grows are not worth a look
_PRESSURE_SECONDS = 0.25         # how long one reading of /proc/meminfo is trusted
_pressure = {"at": 0.0, "value": False}
_WRITE_BUFFER = 1 << 16  # the IPC writer writes buffer by buffer: fewer, larger writes


class OutOfMemory(errors.QueryError):
    """53200, PostgreSQL's "out of memory"; the detail names the budget (work_mem)."""

    sqlstate = "53200"

    @classmethod
    def of(cls, what: str, nbytes: int, budget: "MemoryBudget") -> "OutOfMemory":
        return cls("out of memory",
                   detail=f"Failed on request of size {nbytes} bytes: {what} does not fit "
                          f"the query's memory budget (work_mem = {budget.limit // 1024}kB).",
                   hint="Increase work_mem.")


class MemoryBudget:
    """Thread-safe accounting of the bytes a query holds on one segment."""

    def __init__(self, limit_bytes: int = DEFAULT_LIMIT, spill_dir: str | None = None):
        if limit_bytes <= 0:
            raise ValueError(f"a memory budget needs a positive limit, got {limit_bytes}")
        self.limit = int(limit_bytes)
        self.spill_dir = spill_dir if spill_dir is not None else tempfile.gettempdir()
        self.used = 0
        self.peak = 0
        self.spilled_bytes = 0
        self._lock = threading.Lock()
        self._files: set[SpillFile] = set()

    def reserve(self, nbytes: int) -> bool:
        """Take nbytes if they fit under the limit and the node has memory to spare; False
        (and nothing taken) if not: the operator spills instead of growing."""
        if nbytes >= PRESSURE_CHECK_BYTES and node_under_pressure():
            return False
        with self._lock:
            if self.used + nbytes > self.limit:
                return False
            self._take(nbytes)
            return True

    def force(self, nbytes: int) -> None:
        """Take nbytes even beyond the limit (the one batch an operator must hold)."""
        with self._lock:
            self._take(nbytes)

    def _take(self, nbytes: int) -> None:
        self.used += nbytes
        if self.used > self.peak:
            self.peak = self.used

    def release(self, nbytes: int) -> None:
        with self._lock:
            self.used = max(0, self.used - nbytes)

    @property
    def available(self) -> int:
        with self._lock:
            return max(0, self.limit - self.used)

    def reservation(self) -> "Reservation":
        return Reservation(self)

    def spill_file(self, owner: "Reservation | None" = None) -> "SpillFile":
        """A new, empty spill file; bytes written to it count as spilled (also on owner)."""
        f = SpillFile(self, owner)
        with self._lock:
            self._files.add(f)
        return f

    def add_spilled(self, nbytes: int) -> None:
        """Count bytes written to spill files of the query's own (Motion receivers')."""
        with self._lock:
            self.spilled_bytes += nbytes

    def _forget(self, f: "SpillFile") -> None:
        with self._lock:
            self._files.discard(f)

    @property
    def open_files(self) -> int:
        """Spill files not closed yet (0 once every operator is done)."""
        with self._lock:
            return len(self._files)

    def close(self) -> None:
        """Close every spill file left open (the owner of the query calls this at its end,
        in case an operator was abandoned without being closed)."""
        with self._lock:
            files = list(self._files)
        for f in files:
            f.close()


class Reservation:
    """One operator's share of a budget: what it holds now, its peak and its spills."""

    def __init__(self, budget: MemoryBudget):
        self.budget = budget
        self.size = 0
        self.peak = 0
        self.spilled_bytes = 0

    def try_grow(self, nbytes: int) -> bool:
        if nbytes <= 0:
            return True
        if not self.budget.reserve(nbytes):
            return False
        self._grown(nbytes)
        return True

    def grow(self, nbytes: int) -> None:
        if nbytes > 0:
            self.budget.force(nbytes)
            self._grown(nbytes)

    def _grown(self, nbytes: int) -> None:
        self.size += nbytes
        self.peak = max(self.peak, self.size)

    def shrink(self, nbytes: int) -> None:
        nbytes = min(nbytes, self.size)
        if nbytes > 0:
            self.size -= nbytes
            self.budget.release(nbytes)

    def try_resize(self, nbytes: int) -> bool:
        """Hold exactly nbytes if that fits; False (size unchanged) if it does not."""
        if nbytes <= self.size:
            self.shrink(self.size - nbytes)
            return True
        return self.try_grow(nbytes - self.size)

    def resize(self, nbytes: int) -> None:
        if nbytes <= self.size:
            self.shrink(self.size - nbytes)
        else:
            self.grow(nbytes - self.size)

    def free(self) -> None:
        self.shrink(self.size)

    def spill_file(self) -> "SpillFile":
        return self.budget.spill_file(self)


class SpillFile:
    """Arrow IPC batches of one schema in an unnamed temporary file: write, then read."""

    def __init__(self, budget: MemoryBudget, owner: Reservation | None):
        self.budget = budget
        self.owner = owner
        self.rows = 0
        self.nbytes = 0   # bytes of the batches written (their in-memory size)
        self.num_batches = 0
        self.schema: pa.Schema | None = None
        self._file = None
        self._writer = None
        self._reader = None
        self.closed = False

    def write(self, batch: pa.RecordBatch) -> None:
        if self.closed or self._reader is not None:
            raise ValueError("spill file is closed for writing")
        try:
            if self._writer is None:
                os.makedirs(self.budget.spill_dir, exist_ok=True)
                self._file = tempfile.TemporaryFile(dir=self.budget.spill_dir,
                                                    prefix="raympp-spill-",
                                                    buffering=_WRITE_BUFFER)
                self.schema = batch.schema
                self._writer = pa.ipc.new_file(pa.PythonFile(self._file, mode="w"),
                                               batch.schema)
            self._writer.write_batch(batch)
        except OSError as e:
            raise _disk_error(e, self.budget.spill_dir) from e
        size = batch.nbytes
        self.rows += batch.num_rows
        self.nbytes += size
        self.num_batches += 1
        self.budget.add_spilled(size)
        if self.owner is not None:
            self.owner.spilled_bytes += size

    def _open(self) -> pa.ipc.RecordBatchFileReader | None:
        if self._reader is None:
            if self._writer is None:
                return None
            try:
                self._writer.close()
                self._writer = None
                self._file.flush()
            except OSError as e:
                raise _disk_error(e, self.budget.spill_dir) from e
            try:
                source = pa.memory_map(f"/proc/self/fd/{self._file.fileno()}")
            except (OSError, pa.ArrowException):  # no /proc: read through the file object
                self._file.seek(0)
                source = pa.PythonFile(self._file, mode="r")
            self._reader = pa.ipc.open_file(source)
        return self._reader

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The batches written, in order (writing ends at the first read)."""
        reader = self._open()
        if reader is None:
            return
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._writer = self._reader = None
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass  # an unnamed file: closing frees its space whatever close reports
            self._file = None
        self.budget._forget(self)


def _disk_error(e: OSError, spill_dir: str) -> errors.QueryError:
    """PostgreSQL's words for a temporary file that cannot be written."""
    state = "53100" if e.errno in (errno.ENOSPC, errno.EDQUOT) else "58030"
    return errors.QueryError(f"could not write to temporary file in {spill_dir}: "
                             f"{e.strerror or e}", state)


def close_all(files) -> None:
    """Close every spill file of an iterable (None entries skipped)."""
    for f in files:
        if f is not None:
            f.close()


def node_under_pressure() -> bool:
    """Whether the node has less than NODE_AVAILABLE_FLOOR of its memory available (Linux
    MemAvailable; elsewhere never). Read at most every _PRESSURE_SECONDS."""
    now = time.monotonic()
    if now - _pressure["at"] < _PRESSURE_SECONDS:
        return _pressure["value"]
    value = False
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        total = int(info["MemTotal"].split()[0])
        available = int(info["MemAvailable"].split()[0])
        value = available < NODE_AVAILABLE_FLOOR * total
    except (OSError, KeyError, ValueError):
        pass  # no /proc/meminfo (not Linux): never under pressure, as the docstring says
    _pressure.update(at=now, value=value)
    return value
