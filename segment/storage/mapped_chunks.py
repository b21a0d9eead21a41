"""Chunk files kept memory-mapped between queries.

Opening a chunk (map the file, read the IPC footer and schema) costs about 0.3 ms, and
the first touch of each page of a fresh map faults it in again, though the file is in the
page cache: a scan of 48 chunks (50M float8 values on one segment) spent 13 ms opening
them and about 6 ms more in faults, per query. Chunks are immutable, so an uncompressed
chunk's whole table, zero-copy views into its map, can serve every later query as it is.

The maps are file-backed: their pages are the page cache's, reclaimable, not the
process's own memory. The store forgets a chunk when it deletes the file (a map would keep
the disk space in use) and when a whole table goes; at most `limit` chunks stay mapped,
the least recently read going first. Compressed chunks are not kept: their columns are
decompressed into memory, one query's worth.
"""

from __future__ import annotations

import collections
import os
import threading

import pyarrow as pa

from segment.storage import chunk as chunk_mod

MAPPED_CHUNKS_MAX = 4096  # each costs address space and a map entry (vm.max_map_count)


class MappedChunks:
    """The tables of recently read uncompressed chunk files, by path."""

    def __init__(self, limit: int = MAPPED_CHUNKS_MAX):
        self.limit = limit
        self._tables: collections.OrderedDict[str, pa.Table] = collections.OrderedDict()
        self._lock = threading.Lock()

    def read(self, path: str) -> pa.Table:
        """All columns of the chunk at `path`, mapped once and kept."""
        with self._lock:
            table = self._tables.get(path)
            if table is not None:
                self._tables.move_to_end(path)
                return table
        table = chunk_mod.read(path)
        with self._lock:
            self._tables[path] = table
            while len(self._tables) > self.limit:
                self._tables.popitem(last=False)
        return table

    def forget(self, path: str) -> None:
        """Unmap a chunk (its file is being deleted)."""
        with self._lock:
            self._tables.pop(path, None)

    def forget_under(self, directory: str) -> None:
        """Unmap every chunk in `directory` (a table being dropped)."""
        prefix = os.path.join(directory, "")
        with self._lock:
            for path in [p for p in self._tables if p.startswith(prefix)]:
                del self._tables[path]
