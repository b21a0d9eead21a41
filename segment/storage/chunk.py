"""One immutable chunk file: an Arrow IPC file, written once, memory-mapped on read.

A chunk holds up to a few million rows of one table shard, normally as a single record
batch so that scans get large batches. Its file never changes: rows a DELETE or UPDATE
removes are listed in a deletion file beside it (deletions.py), which the manifest names
with the chunk. Uncompressed chunks are read zero-copy: the arrays
point into the page cache through the memory map. Compression (lz4 or zstd) trades that for
smaller files. `ChunkInfo` describes a chunk for readers (path, rows, statistics); which
chunks belong to a table, and when they become visible, is manifest.py's and
shard_store.py's business.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from segment.storage import stats as stats_mod

COMPRESSIONS = (None, "lz4", "zstd")
# String columns with at most this share of distinct values are stored dictionary-encoded
# (in chunks of at least DICTIONARY_MIN_ROWS rows: smaller ones are not worth it).
# RAYMPP_DICTIONARY_FRACTION=0 turns encoding off (how bench/RESULTS.md measured its gain).
DICTIONARY_FRACTION = float(os.environ.get("RAYMPP_DICTIONARY_FRACTION", "0.5"))
DICTIONARY_MIN_ROWS = 1024


@dataclass(frozen=True, slots=True)
class ChunkInfo:
    """An immutable chunk: where it is, its rows and per-column statistics (by name).

    `number` names the chunk within its table shard (row ids of DELETE and UPDATE say
    chunk number and position); `deletes` is the file listing its deleted rows (None
    when none are), `deleted` how many. `rows` counts the stored rows, deleted or not,
    and the statistics describe them all: bounds stay true (if loose) after deletes."""

    path: str
    rows: int
    stats: dict[str, stats_mod.ColumnStats] = field(default_factory=dict)
    nbytes: int = 0  # file size
    compression: str | None = None
    number: int = -1
    deletes: str | None = None
    deleted: int = 0

    @property
    def file(self) -> str:
        return os.path.basename(self.path)

    @property
    def live_rows(self) -> int:
        return self.rows - self.deleted

    @property
    def deletes_path(self) -> str | None:
        return None if self.deletes is None else os.path.join(os.path.dirname(self.path),
                                                              self.deletes)

    def to_json(self) -> dict:
        obj = {"file": self.file, "rows": self.rows, "bytes": self.nbytes,
               "stats": {name: s.to_json() for name, s in self.stats.items()},
               "number": self.number}
        if self.compression is not None:
            obj["compression"] = self.compression
        if self.deletes is not None:
            obj["deletes"], obj["deleted"] = self.deletes, self.deleted
        return obj

    @staticmethod
    def from_json(obj: dict, directory: str) -> "ChunkInfo":
        for key in ("file", "deletes"):
            name = obj.get(key)
            if name is not None and os.path.basename(name) != name:
                raise errors.InternalError(f"bad {key} file name in manifest: {name!r}")
        stats = {name: stats_mod.ColumnStats.from_json(s) for name, s in obj["stats"].items()}
        return ChunkInfo(os.path.join(directory, obj["file"]), int(obj["rows"]), stats,
                         int(obj.get("bytes", 0)), obj.get("compression"),
                         int(obj.get("number", -1)), obj.get("deletes"),
                         int(obj.get("deleted", 0)))


def write(path: str, table: pa.Table, compression: str | None = None) -> ChunkInfo:
    """Write `table` as a new chunk file at `path` (which must not exist) and describe it.

    The file is not fsync'd here: the store syncs all chunks of a transaction at prepare.
    """
    if compression not in COMPRESSIONS:
        raise ValueError(f"compression must be one of {COMPRESSIONS}, got {compression!r}")
    try:
        table = table.combine_chunks()  # one batch per chunk: scans want large batches
    except pa.ArrowInvalid:
        pass  # e.g. more than 2 GiB of strings in one array: keep the batches as they are
    stats = stats_mod.table_stats(table)
    stored = encode_repeated_strings(table)
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with open(path, "xb") as sink:  # "x": never overwrite an existing chunk
        with pa.ipc.new_file(sink, stored.schema, options=options) as writer:
            writer.write_table(stored)
    return ChunkInfo(path, table.num_rows, stats, os.path.getsize(path), compression)


def encode_repeated_strings(table: pa.Table) -> pa.Table:
    """The table with each string column whose distinct values are at most
    DICTIONARY_FRACTION of its rows stored dictionary-encoded (values once, int32 indices).

    Scans hand such columns on encoded, so a filter evaluates its predicate once per
    distinct value and an aggregate groups by the indices (segment/operators/base.py
    `register`); bench/RESULTS.md has the measurements. A chunk of unique strings (URLs,
    say) stays plain: indices would only add to it.
    """
    if table.num_rows < DICTIONARY_MIN_ROWS:
        return table
    for i, f in enumerate(table.schema):
        if not pa.types.is_string(f.type):
            continue
        encoded = pc.dictionary_encode(table.column(i)).combine_chunks()
        if len(encoded.dictionary) <= DICTIONARY_FRACTION * table.num_rows:
            table = table.set_column(i, pa.field(f.name, encoded.type, f.nullable), encoded)
    return table


def read(path: str, columns: list[str] | None = None, compressed: bool = False) -> pa.Table:
    """The chunk's rows (all columns, or `columns` in that order), memory-mapped."""
    try:
        source = pa.memory_map(path, "r")
    except FileNotFoundError as exc:
        raise errors.UndefinedFile(f"chunk file {path} does not exist (table dropped or "
                                   f"chunk vacuumed after the snapshot)") from exc
    reader = pa.ipc.open_file(source)
    names = reader.schema.names
    if columns is None or not compressed or not names:
        # Uncompressed: every column is a zero-copy view, so reading all costs nothing.
        # (Arrow's included_fields path copies the buffers it reads, even from a map.)
        return select(reader.read_all(), columns, path)
    _check_columns(names, columns, path)
    # Compressed: decompress only the wanted columns.
    wanted = sorted({names.index(c) for c in columns}) or [0]
    options = pa.ipc.IpcReadOptions(included_fields=wanted)
    return pa.ipc.open_file(source, options=options).read_all().select(columns)


def select(table: pa.Table, columns: list[str] | None, path: str) -> pa.Table:
    """`columns` of a chunk's table, in that order (all for None)."""
    if columns is None:
        return table
    _check_columns(table.schema.names, columns, path)
    return table.select(columns)


def _check_columns(names: list[str], columns: list[str], path: str) -> None:
    missing = [c for c in columns if c not in names]
    if missing:
        raise errors.UndefinedColumn(f"column {missing[0]!r} does not exist in chunk {path}")


def fsync(path: str) -> None:
    """Flush one file's data to stable storage."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
