"""A segment's shard store: the table shards in one data directory, changed by transactions.

Layout under `root`:
    tables/<table_id>/manifest.json             committed chunks and schema (manifest.py)
    tables/<table_id>/chunk-<txn>-<uuid>.arrow  immutable chunk files (chunk.py)
    tables/<table_id>/del-<txn>-<uuid>.npy      deleted rows of one chunk (deletions.py)
    tables/<table_id>/txn-<txn>.delta.json      a prepared transaction's changes

A transaction writes new chunk files, visible only to itself until commit. `prepare` syncs
its chunks and writes one delta per table (the first phase of the coordinator's two-phase
commit: after it, commit needs no data that could be missing); `commit` applies each delta
to the table's manifest under the table's lock and replaces the manifest atomically; `abort`
deletes the transaction's chunks and deltas. After a crash, `recover` rolls forward the
deltas of transactions the coordinator committed and drops the rest.

Isolation is per call: `snapshot` returns the chunks committed when it runs (plus the
caller's own pending changes); a query takes its snapshots at start. TRUNCATE removes the
chunks committed when it ran; chunks another transaction commits later survive it.
`delete_rows` marks rows deleted by row id (chunk number and position, which a scan of the
snapshot hands out): the chunk gets a new deletion file, published with the commit. The
coordinator lets one transaction at a time delete from a table (its lock on the name), so
a commit never loses another transaction's deletions from the same chunk. Chunk
files that a commit removed stay on disk until `vacuum` or `recover`, so that snapshots
taken earlier can still be read.

One ShardStore object owns a data directory; it is thread-safe (a Ray actor may serve
several calls at once), but two processes must not open the same root.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from planner import errors
from segment.storage import chunk as chunk_mod
from segment.storage import conform, deletions, manifest, unique_check
from segment.storage.mapped_chunks import MappedChunks

CHUNK_ROWS = 1_048_576
# A compaction with merge_small rewrites the chunks of fewer live rows than this into
# full ones, once a segment has this many of them (ShardStore._doomed).
SMALL_CHUNK_ROWS = 1 << 16
MERGE_MIN_CHUNKS = 16
ChunkInfo = chunk_mod.ChunkInfo


@dataclass
class _TableChanges:
    added: list[ChunkInfo] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)  # committed chunk files truncated away
    # Committed chunks this transaction deleted rows from, with their new deletion files.
    deletes: dict[str, ChunkInfo] = field(default_factory=dict)
    schema: pa.Schema | None = None  # the table's new schema (ALTER TABLE's rewrite)
    placement: int | None = None  # the table's new number of segments (an expansion)

    def copy(self) -> "_TableChanges":
        return _TableChanges(list(self.added), set(self.removed), dict(self.deletes),
                             self.schema, self.placement)


@dataclass
class _Txn:
    txn_id: int
    tables: dict[int, _TableChanges] = field(default_factory=dict)
    sealed: bool = False  # prepare started: no more writes
    prepared: bool = False  # deltas are durable
    done: bool = False  # committed or aborted
    # A rewrite of a table it wrote to began in another transaction: it cannot commit.
    doomed: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    # SAVEPOINT marks: mark id -> {table id: its pending changes then}.
    marks: dict[int, dict[int, _TableChanges]] = field(default_factory=dict)


class ShardStore:
    """The shards of all tables on one segment. See the module docstring for the protocol."""

    def __init__(self, root: str, chunk_rows: int = CHUNK_ROWS, compression: str | None = None,
                 sync: bool = True):
        if chunk_rows < 1:
            raise ValueError(f"chunk_rows must be positive, got {chunk_rows}")
        if compression not in chunk_mod.COMPRESSIONS:
            raise ValueError(f"compression must be one of {chunk_mod.COMPRESSIONS}")
        self.root = os.path.abspath(root)
        self.chunk_rows = chunk_rows
        self.compression = compression
        self.sync = sync  # False only for tests and benchmarks: no fsync, no crash safety
        self._tables_dir = os.path.join(self.root, "tables")
        os.makedirs(self._tables_dir, exist_ok=True)
        # Lock order: a table lock (or a txn lock, then a table lock) before self._lock.
        self._lock = threading.RLock()
        self._table_locks: dict[int, threading.Lock] = {}
        self._manifests: dict[int, manifest.Manifest] = {}
        self._txns: dict[int, _Txn] = {}
        self._inflight: set[str] = set()  # chunk paths being written, not yet registered
        self._next_number: dict[int, int] = {}  # per table: the next chunk number
        self._garbage = False  # files only older snapshots still refer to are on disk
        self._fences: dict[int, int] = {}  # table id -> the transaction rewriting it
        self._mapped = MappedChunks()  # chunks read lately, kept mapped for the next query

    # --- tables --------------------------------------------------------------------------
    def create_table(self, table_id: int, schema: pa.Schema,
                     unique: tuple[tuple[str, tuple[str, ...]], ...] = (),
                     placement: int = 0) -> None:
        if len(set(schema.names)) != len(schema.names):
            raise errors.QueryError(f"table {table_id} has duplicate column names", "42701")
        with self._table_lock(table_id):
            if self.has_table(table_id):
                raise errors.DuplicateTable(f"table {table_id} already exists on this segment")
            # Built aside and renamed into place, so a table dir always has a manifest.
            tmp = os.path.join(self._tables_dir, f".tmp-{table_id}-{uuid.uuid4().hex}")
            os.mkdir(tmp)
            m = manifest.Manifest(table_id, schema, 0, (), tuple(unique), placement)
            manifest.write_manifest(tmp, m, self.sync)
            os.rename(tmp, self._dir(table_id))
            self._sync_dir(self._tables_dir)
            with self._lock:
                self._manifests[table_id] = m

    def drop_table(self, table_id: int) -> None:
        """Remove the table and all its files now (not transactional)."""
        with self._table_lock(table_id):
            if not self.has_table(table_id):
                raise errors.UndefinedTable(f"table {table_id} does not exist on this segment")
            grave = os.path.join(self._tables_dir, f".drop-{table_id}-{uuid.uuid4().hex}")
            self._mapped.forget_under(self._dir(table_id))
            os.rename(self._dir(table_id), grave)
            self._sync_dir(self._tables_dir)
            with self._lock:
                self._manifests.pop(table_id, None)
                for txn in self._txns.values():
                    txn.tables.pop(table_id, None)
        shutil.rmtree(grave, ignore_errors=True)  # a crash here leaves .drop-*: recover ends it

    def has_table(self, table_id: int) -> bool:
        return os.path.isdir(self._dir(table_id))

    def tables(self) -> list[int]:
        return sorted(int(n) for n in os.listdir(self._tables_dir) if _is_table_dir(n))

    def schema(self, table_id: int) -> pa.Schema:
        return self._manifest(table_id).schema

    def stats(self, table_id: int) -> dict:
        """Committed totals: rows, chunks and bytes of chunk files."""
        chunks = self._manifest(table_id).chunks
        return {"rows": sum(c.live_rows for c in chunks), "chunks": len(chunks),
                "bytes": sum(c.nbytes for c in chunks)}

    # --- reading ---------------------------------------------------------------------------
    def snapshot(self, table_id: int, txn_id: int | None = None) -> list[ChunkInfo]:
        """Committed chunks now, plus txn_id's own pending changes when given."""
        return self.snapshot_placed(table_id, txn_id)[0]

    def snapshot_placed(self, table_id: int, txn_id: int | None = None
                        ) -> tuple[list[ChunkInfo], int]:
        """`snapshot`, and the number of segments the table is on in it (0: unknown)."""
        m = self._manifest(table_id)
        chunks, placement = list(m.chunks), m.placement
        if txn_id is not None:
            with self._lock:
                txn = self._txns.get(txn_id)
                changes = txn.tables.get(table_id) if txn is not None else None
                if changes is not None:
                    chunks = [changes.deletes.get(c.file, c) for c in chunks
                              if c.file not in changes.removed]
                    chunks.extend(changes.added)
                    if changes.placement is not None:
                        placement = changes.placement
        return chunks, placement

    def deleted_positions(self, chunk: ChunkInfo) -> np.ndarray | None:
        """The positions of `chunk`'s deleted rows (None when it has none)."""
        return None if chunk.deletes is None else deletions.read(chunk.deletes_path)

    def read(self, chunk: ChunkInfo, columns: list[str] | None = None) -> pa.Table:
        """A chunk's rows, memory-mapped (zero-copy unless compressed; an uncompressed
        chunk stays mapped for later reads, mapped_chunks.py)."""
        if chunk.compression is not None:
            return chunk_mod.read(chunk.path, columns, True)
        return chunk_mod.select(self._mapped.read(chunk.path), columns, chunk.path)

    def read_live(self, chunk: ChunkInfo, columns: list[str] | None = None) -> pa.Table:
        """A chunk's rows without the deleted ones."""
        table = self.read(chunk, columns)
        positions = self.deleted_positions(chunk)
        if positions is None:
            return table
        return table.filter(pa.array(deletions.keep_mask(chunk.rows, positions)))

    # --- writing -------------------------------------------------------------------------
    def write(self, txn_id: int, table_id: int, batches: Iterable[pa.RecordBatch]) -> int:
        """Append rows as new chunks pending under txn_id; all or nothing. Returns rows."""
        return sum(c.rows for c in self._write(txn_id, table_id, batches, True))

    def _write(self, txn_id: int, table_id: int, batches, register: bool,
               check: bool = True) -> list[ChunkInfo]:
        m = self._manifest(table_id)
        manifest_schema = m.schema
        with self._lock:
            txn = self._active_txn(txn_id)
            self._check_fence(txn, table_id)
            changes = txn.tables.get(table_id)
            schema = changes.schema if changes is not None and changes.schema else \
                manifest_schema
        written: list[ChunkInfo] = []
        try:
            for table in conform.chunked(batches, schema, self.chunk_rows):
                written.append(self._write_chunk(txn_id, table_id, table))
            if check and m.unique and written:
                self._check_unique(txn_id, table_id, m.unique, written)
            with self._lock:
                txn = self._txns.get(txn_id)
                if txn is None or txn.sealed:
                    raise errors.InvalidTransactionState(
                        f"transaction {txn_id} ended while it was writing")
                if register:
                    self._check_fence(txn, table_id)  # a rewrite began while it wrote
                    txn.tables.setdefault(table_id, _TableChanges()).added.extend(written)
                    self._inflight.difference_update(c.path for c in written)
        except BaseException:
            for c in written:
                self._remove(c.path)
            with self._lock:
                self._inflight.difference_update(c.path for c in written)
            raise
        return written

    def rewrite(self, txn_id: int, table_id: int, schema: pa.Schema,
                convert: Callable[[pa.RecordBatch], pa.RecordBatch]) -> int:
        """Within txn_id, replace every live row of the table (committed, and its own
        pending ones) by `convert(batch)` of `schema`, the table's schema from the commit
        (ALTER TABLE). Other transactions' pending writes to the table are doomed (their
        commit fails with 40001) and their new writes refused until this one ends; one
        already prepared makes this call fail with 40001 (the coordinator may retry).
        Returns the rows written."""
        with self._lock:
            txn = self._active_txn(txn_id)
            self._fence(txn, table_id)
        old = self.snapshot(table_id, txn_id)
        batches = (convert(b) for c in old if c.live_rows
                   for b in self.read_live(c).to_batches())
        with self._lock:
            changes = txn.tables.setdefault(table_id, _TableChanges())
            changes.schema = schema
        try:
            written = self._write(txn_id, table_id, batches, False, False)
        except BaseException:
            with self._lock:
                changes.schema = None
            raise
        files = {c.file for c in old}
        with self._lock:
            mine = [c for c in changes.added if c.file in files]
            changes.added = [c for c in changes.added if c.file not in files] + written
            changes.removed |= files - {c.file for c in mine}
            changes.deletes = {}
            self._inflight.difference_update(c.path for c in written)
        for c in mine:
            self._remove(c.path)
        return sum(c.rows for c in written)

    def _check_unique(self, txn_id: int, table_id: int, keys, written: list[ChunkInfo]):
        """23505 when `written` (not yet the transaction's) breaks a key against the live
        rows its transaction sees (the rows it deleted are gone) or itself."""
        snapshot = self.snapshot(table_id, txn_id)
        for name, cols in keys:
            unique_check.check(name, list(cols), [self.read_live(c, list(cols)) for c in snapshot],
                               [self.read(c, list(cols)) for c in written])

    def _fence(self, txn: _Txn, table_id: int) -> None:
        """Make `txn` the only writer of the table until it ends (the caller holds
        self._lock)."""
        owner = self._fences.get(table_id)
        if owner is not None and owner != txn.txn_id:
            raise errors.TransactionLost(
                "could not serialize access due to a concurrent ALTER TABLE")
        for other in self._txns.values():
            if other is txn or other.done or table_id not in other.tables:
                continue
            if other.sealed:
                raise errors.TransactionLost(
                    "could not serialize access: a transaction that wrote to the table "
                    "is committing")
            other.doomed = "could not serialize access due to a concurrent ALTER TABLE"
        self._fences[table_id] = txn.txn_id

    def _check_fence(self, txn: _Txn, table_id: int) -> None:
        owner = self._fences.get(table_id)
        if owner is not None and owner != txn.txn_id:
            raise errors.TransactionLost(
                "could not serialize access due to a concurrent ALTER TABLE")

    def set_placement(self, txn_id: int, table_id: int, n_segments: int) -> None:
        """Within txn_id, record that the table is on `n_segments` segments (published
        with the transaction's other changes: an expansion's move of the table)."""
        self._manifest(table_id)  # the table exists here
        with self._lock:
            changes = self._active_txn(txn_id).tables.setdefault(table_id, _TableChanges())
            changes.placement = n_segments

    def truncate(self, txn_id: int, table_id: int) -> None:
        """Within txn_id, remove every committed chunk and the txn's own pending ones."""
        committed = self._manifest(table_id).files
        with self._lock:
            changes = self._active_txn(txn_id).tables.setdefault(table_id, _TableChanges())
            changes.removed |= committed
            doomed, changes.added = changes.added, []
            changes.deletes = {}
        for c in doomed:
            self._remove(c.path)

    def delete_rows(self, txn_id: int, table_id: int, row_ids: np.ndarray) -> np.ndarray:
        """Within txn_id, delete the rows `row_ids` name (chunk number << 32 | position,
        as scans of this transaction's snapshots give them). Returns, per row id, whether
        this call deleted it: False for a row deleted before (by this transaction, or twice
        in `row_ids`), so a statement counts and passes on each row once."""
        row_ids = np.asarray(row_ids, dtype=np.int64)
        fresh = np.zeros(len(row_ids), dtype=np.bool_)
        if not len(row_ids):
            return fresh
        numbers = row_ids >> 32
        positions = (row_ids & 0xFFFFFFFF).astype(np.uint32)
        by_number = {c.number: c for c in self.snapshot(table_id, txn_id)}
        self._active_txn(txn_id)
        for number in np.unique(numbers):
            chunk = by_number.get(int(number))
            if chunk is None:
                raise errors.InternalError(
                    f"row id names chunk {int(number)} of table {table_id}, which this "
                    f"transaction's snapshot does not hold")
            at = np.flatnonzero(numbers == number)
            wanted = positions[at]
            if len(wanted) and int(wanted.max()) >= chunk.rows:
                raise errors.InternalError(f"row id past the end of chunk {chunk.file}")
            merged, newly = deletions.union(self.deleted_positions(chunk), wanted)
            if not len(newly):
                continue
            # The first row id of each newly deleted position is the one that deletes it.
            first = at[np.unique(wanted, return_index=True)[1]]
            fresh[first[np.isin(positions[first], newly)]] = True
            self._switch_deletions(txn_id, table_id, chunk, merged)
        return fresh

    def compact(self, txn_id: int, table_id: int, min_dead_fraction: float,
                merge_small: bool = False) -> int:
        """Within txn_id, rewrite the committed chunks of which at least
        `min_dead_fraction` (and at least one row) is deleted, and with `merge_small` the
        small ones when there are many (`_doomed`): their live rows become new chunks and
        the old ones are removed at commit (as TRUNCATE removes them). The coordinator
        holds the table's lock, so no other transaction deletes from them meanwhile.
        Returns the number of chunks rewritten."""
        with self._lock:
            changes = self._active_txn(txn_id).tables.get(table_id)
            mine = set(changes.deletes) | changes.removed if changes else set()
        doomed = self._doomed(table_id, min_dead_fraction, merge_small, mine)
        if not doomed:
            return 0
        # The rows move, their keys stay: no constraint to check against themselves.
        self._write(txn_id, table_id, (b for c in doomed if c.live_rows
                                       for b in self.read_live(c).to_batches()), True, False)
        with self._lock:
            changes = self._active_txn(txn_id).tables.setdefault(table_id, _TableChanges())
            changes.removed |= {c.file for c in doomed}
        return len(doomed)

    def compactable(self, table_id: int, min_dead_fraction: float,
                    merge_small: bool = False) -> tuple[int, int]:
        """The committed chunks `compact` would rewrite now and their deleted rows (a read
        of the manifest: the coordinator asks before it takes the table's lock)."""
        doomed = self._doomed(table_id, min_dead_fraction, merge_small)
        return len(doomed), sum(c.deleted for c in doomed)

    def _doomed(self, table_id: int, min_dead_fraction: float, merge_small: bool,
                mine: set = frozenset()) -> list[ChunkInfo]:
        """The chunks a compaction rewrites: those `min_dead_fraction` dead, and with
        `merge_small` every chunk of fewer than SMALL_CHUNK_ROWS live rows once there are
        MERGE_MIN_CHUNKS of them. Each INSERT or COPY commits chunks of its own, so a run
        of small ones leaves many tiny chunks: a commit rewrites the table's manifest (a
        3-row INSERT took 8 ms into a new table, 16 ms once it had 1,200 chunks) and a
        scan opens each (count(*) over 1,200 of 3 rows: 8.5 ms)."""
        chunks = [c for c in self._manifest(table_id).chunks if c.file not in mine]
        doomed = [c for c in chunks if c.deleted and c.deleted >= min_dead_fraction * c.rows]
        if merge_small:
            dead = {c.file for c in doomed}
            small = [c for c in chunks if c.live_rows < SMALL_CHUNK_ROWS and c.file not in dead]
            if len(small) >= MERGE_MIN_CHUNKS:
                doomed += small
        return doomed

    @property
    def has_garbage(self) -> bool:
        """Whether commits removed chunks whose files are still on disk (`vacuum` ends
        them once no query reads an older snapshot)."""
        return self._garbage

    def _unfence(self, txn_id: int) -> None:
        for table_id in [t for t, owner in self._fences.items() if owner == txn_id]:
            del self._fences[table_id]

    def _switch_deletions(self, txn_id: int, table_id: int, chunk: ChunkInfo,
                          merged: np.ndarray) -> None:
        """Give `chunk` (committed, or pending in txn_id) the deletion file `merged`."""
        path = os.path.join(self._dir(table_id), f"del-{txn_id}-{uuid.uuid4().hex}.npy")
        with self._lock:
            self._inflight.add(path)
        try:
            deletions.write(path, merged)
            updated = replace(chunk, deletes=os.path.basename(path), deleted=len(merged))
            with self._lock:
                txn = self._active_txn(txn_id)
                changes = txn.tables.setdefault(table_id, _TableChanges())
                mine = [i for i, c in enumerate(changes.added) if c.file == chunk.file]
                if mine:
                    changes.added[mine[0]] = updated
                else:
                    changes.deletes[chunk.file] = updated
                self._inflight.discard(path)
        except BaseException:
            self._remove(path)
            with self._lock:
                self._inflight.discard(path)
            raise

    # --- savepoints --------------------------------------------------------------------------
    def mark(self, txn_id: int, mark_id: int) -> None:
        """Remember txn_id's pending chunks now, for a later rollback_to(mark_id)."""
        with self._lock:
            txn = self._active_txn(txn_id)
            txn.marks[mark_id] = {t: ch.copy() for t, ch in txn.tables.items()}

    def rollback_to(self, txn_id: int, mark_id: int | None) -> None:
        """Undo the rows txn_id wrote and deleted after mark `mark_id` (all of its pending
        changes for None: the savepoint came before its first write). The coordinator
        refuses this after a TRUNCATE or DDL since the savepoint."""
        with self._lock:
            txn = self._active_txn(txn_id)
            if mark_id is not None and mark_id not in txn.marks:
                raise errors.InvalidTransactionState(
                    f"transaction {txn_id} has no savepoint mark {mark_id} here")
            kept = txn.marks.get(mark_id, {}) if mark_id is not None else {}
            doomed = []
            for table_id, ch in list(txn.tables.items()):
                then = kept.get(table_id, _TableChanges())
                files = {c.file for c in then.added}
                doomed += [c.path for c in ch.added if c.file not in files]
                # Deletion files made since the mark are referenced no more (vacuum ends them).
                txn.tables[table_id] = then.copy()
            txn.marks = {m: v for m, v in txn.marks.items()
                         if mark_id is not None and m <= mark_id}
        for path in doomed:
            self._remove(path)

    # --- transaction outcome ---------------------------------------------------------------
    def begin(self, txn_id: int) -> None:
        """Know txn_id from now on, before it writes anything: a prepare of a transaction
        this store never heard of is then an error, not a silent success."""
        self._active_txn(txn_id)

    def knows(self, txn_id: int) -> bool:
        with self._lock:
            return txn_id in self._txns

    def prepare(self, txn_id: int) -> None:
        """Make txn_id's changes durable, so that commit cannot fail for lack of data.

        A transaction that is not in memory (never begun here, or begun in a process that
        has died since) cannot be prepared: its writes, if any, are lost."""
        with self._lock:
            txn = self._txns.get(txn_id)
        if txn is None:
            raise errors.TransactionLost(
                f"transaction {txn_id} is not known here (the segment restarted since it "
                f"wrote): it cannot commit")
        with txn.lock:
            if txn.done:
                raise errors.InvalidTransactionState(f"transaction {txn_id} has ended")
            self._prepare_locked(txn)

    def commit(self, txn_id: int) -> None:
        """Publish txn_id's changes (preparing first if needed). Idempotent."""
        with self._lock:
            txn = self._txns.get(txn_id)
        if txn is None:  # e.g. prepared before a restart: the deltas are on disk
            for table_id, path in self._delta_files(txn_id):
                self._apply(table_id, manifest.read_delta(path))
            return
        with txn.lock:
            if txn.done:
                return
            self._prepare_locked(txn)
            for delta in self._deltas(txn):
                self._apply(delta.table_id, delta)
            txn.done = True
            with self._lock:
                self._txns.pop(txn_id, None)
                self._unfence(txn_id)

    def abort(self, txn_id: int) -> None:
        """Drop txn_id's pending chunks and prepared deltas. Idempotent."""
        with self._lock:
            txn = self._txns.pop(txn_id, None)
        if txn is None:
            for table_id, path in self._delta_files(txn_id):
                self._discard(table_id, manifest.read_delta(path))
            return
        with txn.lock:
            if txn.done:
                return
            txn.sealed = txn.done = True
            for delta in self._deltas(txn):
                self._discard(delta.table_id, delta)
        with self._lock:
            self._unfence(txn_id)

    def recover(self, committed_txn_ids: set[int], undecided: set[int] = frozenset()) -> None:
        """At start-up: finish committed transactions, abort the others, delete leftovers.

        Prepared deltas of `undecided` transactions (ones the coordinator is still
        committing or aborting while this segment restarted) are left for its decision."""
        with self._lock:
            in_memory = [t for t in self._txns.values()
                         if not t.done and t.txn_id not in undecided]
        for txn in in_memory:
            if txn.prepared and txn.txn_id in committed_txn_ids:
                self.commit(txn.txn_id)
            else:
                self.abort(txn.txn_id)
        for name in os.listdir(self._tables_dir):
            if name.startswith((".tmp-", ".drop-")):  # a create or drop cut short
                shutil.rmtree(os.path.join(self._tables_dir, name), ignore_errors=True)
        for table_id in self.tables():
            directory = self._dir(table_id)
            for name in sorted(os.listdir(directory)):
                txn_id = manifest.delta_txn_id(name)
                if txn_id is None:
                    continue
                delta = manifest.read_delta(os.path.join(directory, name))
                if txn_id in committed_txn_ids:
                    self._apply(table_id, delta)
                elif txn_id not in undecided:
                    self._discard(table_id, delta)
        self.vacuum()

    def vacuum(self) -> None:
        """Delete files no manifest, delta or live transaction references.

        This includes chunks that committed TRUNCATEs and compactions removed, and
        deletion files later deletes replaced: call it when no reader still needs a
        snapshot older than the current manifests (memory-mapped reads in progress are
        safe: an unlinked file lives on until unmapped).
        """
        with self._lock:
            self._garbage = False
        for table_id in self.tables():
            with self._table_lock(table_id):
                directory = self._dir(table_id)
                keep = _files_of(self._load_locked(table_id).chunks)
                names = os.listdir(directory)
                for name in names:
                    if manifest.delta_txn_id(name) is not None:
                        d = manifest.read_delta(os.path.join(directory, name))
                        keep |= _files_of(d.add + d.deletes)
                with self._lock:
                    keep |= {os.path.basename(p) for p in self._inflight}
                    for txn in self._txns.values():
                        for changes in [txn.tables.get(table_id)] + [
                                m.get(table_id) for m in txn.marks.values()]:
                            if changes is not None:
                                keep |= _files_of(changes.added + list(changes.deletes.values()))
                for name in names:
                    if manifest.TMP_MARK in name or (name.startswith(("chunk-", "del-"))
                                                     and name not in keep):
                        self._remove(os.path.join(directory, name))

    # --- internals -------------------------------------------------------------------------
    def _dir(self, table_id: int) -> str:
        if not isinstance(table_id, int) or isinstance(table_id, bool):
            raise TypeError(f"table_id must be an int, got {table_id!r}")
        return os.path.join(self._tables_dir, str(table_id))

    def _table_lock(self, table_id: int) -> threading.Lock:
        with self._lock:
            return self._table_locks.setdefault(table_id, threading.Lock())

    def _manifest(self, table_id: int) -> manifest.Manifest:
        with self._lock:
            m = self._manifests.get(table_id)
        if m is not None:
            return m
        with self._table_lock(table_id):
            return self._load_locked(table_id)

    def _load_locked(self, table_id: int) -> manifest.Manifest:
        """The current manifest; the caller holds the table lock (so no commit races it)."""
        with self._lock:
            m = self._manifests.get(table_id)
        if m is None:
            try:
                m = manifest.read_manifest(self._dir(table_id))
            except FileNotFoundError:
                raise errors.UndefinedTable(
                    f"table {table_id} does not exist on this segment") from None
            m = self._numbered(table_id, m)
            with self._lock:
                self._manifests[table_id] = m
        return m

    def _active_txn(self, txn_id: int) -> _Txn:
        with self._lock:
            txn = self._txns.get(txn_id)
            if txn is None:
                txn = self._txns[txn_id] = _Txn(txn_id)
            if txn.sealed:
                raise errors.InvalidTransactionState(
                    f"transaction {txn_id} is prepared and cannot change")
            return txn

    def _write_chunk(self, txn_id: int, table_id: int, table: pa.Table) -> ChunkInfo:
        path = os.path.join(self._dir(table_id), f"chunk-{txn_id}-{uuid.uuid4().hex}.arrow")
        number = self._new_number(table_id)
        with self._lock:
            self._inflight.add(path)
        try:
            return replace(chunk_mod.write(path, table, self.compression), number=number)
        except BaseException as exc:
            _unlink(path)
            with self._lock:
                self._inflight.discard(path)
            if isinstance(exc, FileNotFoundError) and not self.has_table(table_id):
                raise errors.UndefinedTable(f"table {table_id} was dropped during a write") from None
            raise

    def _new_number(self, table_id: int) -> int:
        """A chunk number no chunk of the table has: one past the largest in its manifest,
        its prepared deltas and live transactions, counted from there on."""
        if table_id not in self._next_number:
            with self._table_lock(table_id):
                seen = [c.number for c in self._load_locked(table_id).chunks]
                directory = self._dir(table_id)
                for name in os.listdir(directory):
                    if manifest.delta_txn_id(name) is not None:
                        seen += [c.number for c in manifest.read_delta(
                            os.path.join(directory, name)).add]
        with self._lock:
            if table_id not in self._next_number:
                for txn in self._txns.values():
                    changes = txn.tables.get(table_id)
                    seen += [c.number for c in changes.added] if changes else []
                self._next_number[table_id] = max(seen, default=-1) + 1
            number = self._next_number[table_id]
            self._next_number[table_id] = number + 1
            return number

    def _numbered(self, table_id: int, m: manifest.Manifest) -> manifest.Manifest:
        """`m` with a number for each chunk written before chunks had numbers."""
        if all(c.number >= 0 for c in m.chunks):
            return m
        with self._lock:  # the caller holds the table lock: no _new_number here
            start = max([c.number for c in m.chunks] +
                        [self._next_number.get(table_id, 0) - 1]) + 1
            fresh = iter(range(start, start + len(m.chunks)))
            chunks = tuple(c if c.number >= 0 else replace(c, number=next(fresh))
                           for c in m.chunks)
            if table_id in self._next_number:
                self._next_number[table_id] = start + len(m.chunks)
        return replace(m, chunks=chunks)

    def _deltas(self, txn: _Txn) -> list[manifest.Delta]:
        with self._lock:
            return [manifest.Delta(txn.txn_id, tid, tuple(ch.added), frozenset(ch.removed),
                                   tuple(ch.deletes.values()), ch.schema, ch.placement)
                    for tid, ch in sorted(txn.tables.items())
                    if ch.added or ch.removed or ch.deletes or ch.schema is not None
                    or ch.placement is not None]

    def _prepare_locked(self, txn: _Txn) -> None:
        with self._lock:  # against a rewrite's fence: it sees this sealed, or this doomed
            if txn.doomed is not None and not txn.prepared:
                raise errors.TransactionLost(txn.doomed)
            txn.sealed = True
        if txn.prepared:
            return
        for delta in self._deltas(txn):
            with self._table_lock(delta.table_id):
                directory = self._dir(delta.table_id)
                if not os.path.isdir(directory):
                    continue  # dropped meanwhile
                if self.sync:
                    for c in delta.add:
                        chunk_mod.fsync(c.path)
                    for c in delta.add + delta.deletes:
                        if c.deletes is not None:
                            chunk_mod.fsync(c.deletes_path)
                    manifest.fsync_dir(directory)
                manifest.write_delta(directory, delta, self.sync)
        txn.prepared = True

    def _apply(self, table_id: int, delta: manifest.Delta) -> None:
        with self._table_lock(table_id):
            directory = self._dir(table_id)
            if not os.path.isdir(directory):
                return  # dropped: nothing to publish
            new = self._numbered(table_id, manifest.apply(self._load_locked(table_id), delta))
            manifest.write_manifest(directory, new, self.sync)
            with self._lock:
                self._manifests[table_id] = new
                self._garbage = self._garbage or bool(delta.remove or delta.deletes)
            # Still under the table lock: no later commit can precede the delta's removal,
            # so a roll-forward after a crash never re-adds chunks a later TRUNCATE removed.
            manifest.remove_durably(os.path.join(directory, manifest.delta_name(delta.txn_id)),
                                    self.sync)

    def _discard(self, table_id: int, delta: manifest.Delta) -> None:
        with self._table_lock(table_id):
            directory = self._dir(table_id)
            if not os.path.isdir(directory):
                return
            # The delta goes first: a crash then leaves orphan chunks (vacuumed), never a
            # delta naming missing chunks.
            manifest.remove_durably(os.path.join(directory, manifest.delta_name(delta.txn_id)),
                                    self.sync)
            current = self._load_locked(table_id).chunks
            published = _files_of(current)
            for c in delta.add:
                if c.file not in published:
                    self._remove(c.path)
            for c in delta.add + delta.deletes:
                if c.deletes is not None and c.deletes not in published:
                    self._remove(c.deletes_path)

    def _delta_files(self, txn_id: int) -> list[tuple[int, str]]:
        found = []
        for table_id in self.tables():
            path = os.path.join(self._dir(table_id), manifest.delta_name(txn_id))
            if os.path.exists(path):
                found.append((table_id, path))
        return found

    def _remove(self, path: str) -> None:
        """Delete a chunk or deletion file, unmapping it first (a map would hold its disk
        space)."""
        self._mapped.forget(path)
        deletions.forget(path)
        _unlink(path)

    def _sync_dir(self, directory: str) -> None:
        if self.sync:
            manifest.fsync_dir(directory)


def _files_of(chunks) -> set[str]:
    """The file names chunk infos refer to: chunk files and their deletion files."""
    out = set()
    for c in chunks:
        out.add(c.file)
        if c.deletes is not None:
            out.add(c.deletes)
    return out


def _is_table_dir(name: str) -> bool:
    return name.lstrip("-").isdigit()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
