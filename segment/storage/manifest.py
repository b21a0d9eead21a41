"""A table shard's manifest and a transaction's prepared delta, both as JSON files.

The manifest lists the committed chunk files of one table shard with their statistics, and
the table's Arrow schema. It is never edited in place: a new version is written to a
temporary file, fsync'd, and renamed over the old one (then the directory is fsync'd), so a
reader or a crash sees either the old or the new manifest, never a mix.

A delta is what one transaction changes in one table: chunk files it added, committed
chunk files it removed (TRUNCATE, compaction), and committed chunks it deleted rows from
(each with its new deletion file: `deletes`). `prepare` writes it durably; `commit` applies it to the
current manifest. Applying is a set operation (add what is missing, drop what is listed),
so deltas of concurrent transactions merge (the coordinator lets one transaction at a time
delete from a table, so two deltas never switch one chunk's deletions), and applying one twice (roll-forward after a
crash during commit) changes nothing. Non-finite floats in statistics use Python's JSON
extension (NaN, Infinity).
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from dataclasses import dataclass, replace

import pyarrow as pa

from planner import errors
from segment.storage import chunk as chunk_mod

FORMAT = 1
MANIFEST = "manifest.json"
TMP_MARK = ".tmp-"  # files with this in their name are unfinished writes
_DELTA_PREFIX, _DELTA_SUFFIX = "txn-", ".delta.json"


@dataclass(frozen=True, slots=True)
class Manifest:
    table_id: int
    schema: pa.Schema
    version: int
    chunks: tuple[chunk_mod.ChunkInfo, ...]
    # PRIMARY KEY and UNIQUE constraints: (name, column names), checked at every write.
    unique: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The number of segments the table is on as of this version (0: not recorded), so a
    # scan can tell that an expansion moved the table after its query was planned.
    placement: int = 0

    @property
    def files(self) -> frozenset[str]:
        return frozenset(c.file for c in self.chunks)


@dataclass(frozen=True, slots=True)
class Delta:
    txn_id: int
    table_id: int
    add: tuple[chunk_mod.ChunkInfo, ...]
    remove: frozenset[str]  # file names of committed chunks
    deletes: tuple[chunk_mod.ChunkInfo, ...] = ()  # committed chunks with new deletions
    schema: pa.Schema | None = None  # the table's new schema (ALTER TABLE rewrote it)
    placement: int | None = None  # the table's new number of segments (an expansion)


def apply(m: Manifest, delta: Delta) -> Manifest:
    """The manifest after `delta` (idempotent; merges with other transactions' deltas)."""
    present = m.files
    changed = {c.file: c for c in delta.deletes}
    kept = tuple(changed.get(c.file, c) for c in m.chunks if c.file not in delta.remove)
    added = tuple(c for c in delta.add if c.file not in present)
    schema = delta.schema if delta.schema is not None else m.schema
    placement = delta.placement if delta.placement is not None else m.placement
    return replace(m, version=m.version + 1, chunks=kept + added, schema=schema,
                   placement=placement)


# --- files -------------------------------------------------------------------------------
def delta_name(txn_id: int) -> str:
    return f"{_DELTA_PREFIX}{txn_id}{_DELTA_SUFFIX}"


def delta_txn_id(file_name: str) -> int | None:
    """The transaction of a delta file name, or None when it is not one."""
    if file_name.startswith(_DELTA_PREFIX) and file_name.endswith(_DELTA_SUFFIX):
        core = file_name[len(_DELTA_PREFIX):-len(_DELTA_SUFFIX)]
        if core.lstrip("-").isdigit():
            return int(core)
    return None


def write_manifest(directory: str, m: Manifest, sync: bool = True) -> None:
    obj = {"format": FORMAT, "table_id": m.table_id, "version": m.version,
           "schema": _schema_text(m.schema),
           "chunks": [c.to_json() for c in m.chunks],
           "unique": [[name, list(cols)] for name, cols in m.unique],
           "placement": m.placement}
    write_json_atomic(os.path.join(directory, MANIFEST), obj, sync)


def read_manifest(directory: str) -> Manifest:
    obj = _read_json(os.path.join(directory, MANIFEST))
    schema = _schema_of(obj["schema"])
    chunks = tuple(chunk_mod.ChunkInfo.from_json(c, directory) for c in obj["chunks"])
    unique = tuple((name, tuple(cols)) for name, cols in obj.get("unique", ()))
    return Manifest(int(obj["table_id"]), schema, int(obj["version"]), chunks, unique,
                    int(obj.get("placement", 0)))


def write_delta(directory: str, delta: Delta, sync: bool = True) -> None:
    obj = {"format": FORMAT, "txn_id": delta.txn_id, "table_id": delta.table_id,
           "add": [c.to_json() for c in delta.add], "remove": sorted(delta.remove),
           "deletes": [c.to_json() for c in delta.deletes]}
    if delta.schema is not None:
        obj["schema"] = _schema_text(delta.schema)
    if delta.placement is not None:
        obj["placement"] = delta.placement
    write_json_atomic(os.path.join(directory, delta_name(delta.txn_id)), obj, sync)


def read_delta(path: str) -> Delta:
    obj = _read_json(path)
    directory = os.path.dirname(path)
    add = tuple(chunk_mod.ChunkInfo.from_json(c, directory) for c in obj["add"])
    deletes = tuple(chunk_mod.ChunkInfo.from_json(c, directory) for c in obj.get("deletes", ()))
    schema = _schema_of(obj["schema"]) if "schema" in obj else None
    return Delta(int(obj["txn_id"]), int(obj["table_id"]), add, frozenset(obj["remove"]),
                 deletes, schema, obj.get("placement"))


def _schema_text(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def _schema_of(text: str) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


def write_json_atomic(path: str, obj: dict, sync: bool = True) -> None:
    """Replace `path` with `obj` as JSON: readers and crashes see the old or the new file."""
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, f"{os.path.basename(path)}{TMP_MARK}{uuid.uuid4().hex}")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            json.dump(obj, f, separators=(",", ":"))
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    if sync:
        fsync_dir(directory)


def remove_durably(path: str, sync: bool = True) -> None:
    """Delete a file (if present) and make the deletion survive a crash."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    if sync:
        fsync_dir(os.path.dirname(path))


def fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        obj = json.load(f)
    if obj.get("format") != FORMAT:
        raise errors.InternalError(f"{path}: unknown storage format {obj.get('format')!r}")
    return obj


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
