"""Hash partitions on disk, for the aggregate and the hash join that outgrow the budget.

Rows are split by a hash of their key columns into FANOUT partitions, each a `Partition`
of spill files, so that every partition can be processed on its own (a group, or a join
key, lies in one partition only). The hash is motion.hashing's (numba, over the Arrow
buffers; equal keys of comparable types hash alike, NULLs to one value), remixed with a
seed per recursion level: the rows of one segment already share what the segment
placement took from the hash, and the rows of one partition share the bits the level
above used, so each level must look at the hash afresh. A partition that is still too big
is split again one level down, up to MAX_DEPTH levels (FANOUT**MAX_DEPTH ways).
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa

from motion import hashing
from segment import memory

FANOUT = 16
MAX_DEPTH = 4
_LEVEL_SEED = np.uint64(0xD6E8FEB86659FD93)
_M1, _M2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_SHIFT = np.uint64(64 - (FANOUT.bit_length() - 1))  # the high bits pick the partition


def hashable(types: Sequence[pa.DataType]) -> bool:
    """Whether motion.hashing hashes every key type (else there is no partitioning)."""
    try:
        hashing.hash_arrays([pa.nulls(1, t) for t in types])
        for t in types:
            hashing.hash_arrays([pa.array([], t)])
        return True
    except (TypeError, ValueError, pa.ArrowException):
        return False


def partition_ids(keys: Sequence[pa.Array], level: int) -> np.ndarray:
    """The partition (0 .. FANOUT-1) of each row's key at a recursion level, as uint8."""
    h = hashing.hash_arrays(list(keys))
    with np.errstate(over="ignore"):
        h ^= _LEVEL_SEED * np.uint64(level + 1)
        h ^= h >> _S33
        h *= _M1
        h ^= h >> _S33
        h *= _M2
        h ^= h >> _S33
    return (h >> _SHIFT).astype(np.uint8)


def split(table: pa.Table | pa.RecordBatch, pids: np.ndarray) -> Iterator[tuple[int, pa.Table]]:
    """(partition, its rows) for every non-empty partition; rows keep their order."""
    order = np.argsort(pids, kind="stable")  # a radix sort of bytes
    counts = np.bincount(pids, minlength=FANOUT)
    ordered = table.take(pa.array(order))
    start = 0
    for p, c in enumerate(counts):
        if c:
            yield p, ordered.slice(start, int(c))
        start += int(c)


class Partition:
    """The spilled batches of one partition of one stream. Batches of another schema than
    the last (a sum state that went decimal) start a new file. Each batch carries a tag
    (the aggregate's multiplicity of its groups)."""

    def __init__(self, res: memory.Reservation):
        self.res = res
        self.files: list[memory.SpillFile] = []
        self.tags: list[int] = []
        self.rows = 0
        self.nbytes = 0

    def write(self, data: pa.Table | pa.RecordBatch, tag: int = 0) -> None:
        batches = data.to_batches() if isinstance(data, pa.Table) else [data]
        for b in batches:
            if not b.num_rows:
                continue
            if not self.files or not self.files[-1].schema.equals(b.schema):
                self.files.append(self.res.spill_file())
            self.files[-1].write(b)
            self.tags.append(tag)
            self.rows += b.num_rows
            self.nbytes += b.nbytes

    def batches(self) -> Iterator[tuple[pa.RecordBatch, int]]:
        """(batch, tag) in the order written; each file is closed once read."""
        tags = iter(self.tags)
        for f in self.files:
            for b in f.batches():
                yield b, next(tags)
            f.close()

    def close(self) -> None:
        memory.close_all(self.files)


class Partitioned:
    """FANOUT partitions of each of several streams (an aggregate's states and its
    DISTINCT pairs; a join's build and probe sides), split by one key hash.

    `keys[stream]` are the key column positions of a stream. Rows are buffered per stream
    up to `buffer_bytes` and split together, so that partitions get batches of useful
    size however small the batches added are; `finish` writes what is buffered. (The
    buffers, an eighth of the budget over all streams, are not counted in it.)"""

    def __init__(self, res: memory.Reservation, keys: Sequence[Sequence[int]], level: int):
        self.level = level
        self.keys = [list(k) for k in keys]
        n = len(self.keys)
        self.parts = [[Partition(res) for _ in range(n)] for _ in range(FANOUT)]
        self.buffer_bytes = min(max(res.budget.limit // (8 * n), 32 << 10), 4 << 20)
        self._pending: list[list[pa.Table]] = [[] for _ in range(n)]
        self._pending_bytes = [0] * n
        self._pending_tag = [0] * n

    def add(self, stream: int, data: pa.Table | pa.RecordBatch, tag: int = 0) -> None:
        """Add rows; `tag` (an aggregate's multiplicity) adds up over buffered tables."""
        if not data.num_rows:
            return
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        pending = self._pending[stream]
        if pending and not pending[0].schema.equals(data.schema):
            self._flush(stream)
        pending.append(data)
        self._pending_bytes[stream] += data.nbytes
        self._pending_tag[stream] += tag
        if self._pending_bytes[stream] >= self.buffer_bytes:
            self._flush(stream)

    def _flush(self, stream: int) -> None:
        pending = self._pending[stream]
        if not pending:
            return
        table = pending[0] if len(pending) == 1 else pa.concat_tables(pending)
        tag = self._pending_tag[stream]
        self._pending[stream], self._pending_bytes[stream], self._pending_tag[stream] = [], 0, 0
        pids = partition_ids([table.column(i) for i in self.keys[stream]], self.level)
        for p, rows in split(table, pids):
            self.parts[p][stream].write(rows, tag)

    def finish(self) -> None:
        for stream in range(len(self.keys)):
            self._flush(stream)

    def close(self) -> None:
        self._pending = [[] for _ in self.keys]
        for streams in self.parts:
            for part in streams:
                part.close()
