"""ShardStore: transactional writes, snapshots, two-phase commit, recovery, concurrency."""

from __future__ import annotations

import os
import threading

import pyarrow as pa
import pytest

from planner import errors
from segment.storage import manifest, shard_store

ShardStore = shard_store.ShardStore

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


def batch(start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch([pa.array(range(start, start + n), pa.int64()),
                            pa.array([f"v{i}" for i in range(start, start + n)])], schema=SCHEMA)


def keys(store: ShardStore, table_id: int = 1, txn_id: int | None = None) -> list[int]:
    return sorted(k for c in store.snapshot(table_id, txn_id)
                  for k in store.read(c, ["k"]).column("k").to_pylist())


def files(store: ShardStore, table_id: int = 1) -> list[str]:
    return sorted(os.listdir(os.path.join(store.root, "tables", str(table_id))))


@pytest.fixture
def store(tmp_path):
    s = ShardStore(str(tmp_path / "seg0"))
    s.create_table(1, SCHEMA)
    return s


def test_round_trip_of_every_column_type(tmp_path, all_types_table):
    store = ShardStore(str(tmp_path))
    store.create_table(5, all_types_table.schema)
    assert store.write(1, 5, all_types_table.to_batches()) == 4
    store.prepare(1)
    store.commit(1)
    [c] = store.snapshot(5)
    assert store.read(c).equals(all_types_table)
    assert store.read(c, ["ts", "dec"]).equals(all_types_table.select(["ts", "dec"]))
    assert c.stats["i16"].min == -7 and c.stats["s"].max == "ü" and c.stats["b"].null_count == 1
    assert store.schema(5) == all_types_table.schema


def test_pending_writes_are_visible_only_to_their_txn(store):
    store.write(10, 1, [batch(0, 3)])
    assert keys(store) == [] and keys(store, txn_id=11) == []
    assert keys(store, txn_id=10) == [0, 1, 2]
    store.commit(10)  # one-phase: commit prepares first
    assert keys(store) == keys(store, txn_id=11) == [0, 1, 2]


def test_abort_leaves_nothing(store):
    store.write(10, 1, [batch(0, 5)])
    store.write(10, 1, [batch(5, 5)])
    store.abort(10)
    assert files(store) == [manifest.MANIFEST] and keys(store) == []
    store.write(11, 1, [batch(0, 5)])
    store.prepare(11)
    assert manifest.delta_name(11) in files(store)
    store.abort(11)
    store.abort(11)  # idempotent
    assert files(store) == [manifest.MANIFEST] and keys(store) == []


def test_commit_and_abort_are_idempotent(store):
    store.write(10, 1, [batch(0, 2)])
    store.prepare(10)
    store.prepare(10)
    store.commit(10)
    store.commit(10)
    store.abort(10)  # after commit: nothing to undo
    store.commit(99)  # a txn that never wrote here
    store.abort(99)
    assert keys(store) == [0, 1] and len(store.snapshot(1)) == 1


def test_prepared_txn_cannot_write(store):
    store.write(10, 1, [batch(0, 1)])
    store.prepare(10)
    with pytest.raises(errors.InvalidTransactionState):
        store.write(10, 1, [batch(1, 1)])
    with pytest.raises(errors.InvalidTransactionState):
        store.truncate(10, 1)


@pytest.mark.parametrize("committed", [True, False])
def test_crash_after_prepare_then_recover(tmp_path, committed):
    root = str(tmp_path / "seg")
    before = ShardStore(root)
    before.create_table(1, SCHEMA)
    before.write(1, 1, [batch(0, 2)])
    before.commit(1)
    before.write(5, 1, [batch(100, 3)])
    before.prepare(5)
    before.write(6, 1, [batch(200, 3)])  # active, never prepared
    del before  # the process dies: nothing more happens

    after = ShardStore(root)
    assert keys(after) == [0, 1]  # prepared but undecided changes are not visible
    after.recover({5} if committed else set())
    assert keys(after) == ([0, 1, 100, 101, 102] if committed else [0, 1])
    chunk_files = [f for f in files(after) if f.startswith("chunk-")]
    assert len(chunk_files) == (2 if committed else 1)  # txn 6's chunk swept
    assert not [f for f in files(after) if manifest.delta_txn_id(f) is not None]
    after.recover({5})  # recovering again changes nothing
    assert keys(after) == ([0, 1, 100, 101, 102] if committed else [0, 1])


def test_commit_from_disk_after_restart_without_recover(tmp_path):
    root = str(tmp_path)
    a = ShardStore(root)
    a.create_table(1, SCHEMA)
    a.write(7, 1, [batch(0, 4)])
    a.prepare(7)
    b = ShardStore(root)
    b.commit(7)
    assert keys(b) == [0, 1, 2, 3] and manifest.delta_name(7) not in files(b)


def test_crash_between_manifest_replace_and_delta_removal(tmp_path, monkeypatch):
    root = str(tmp_path)
    a = ShardStore(root)
    a.create_table(1, SCHEMA)
    a.write(7, 1, [batch(0, 4)])
    a.prepare(7)

    def crash(path, sync=True):
        raise OSError("simulated crash")

    monkeypatch.setattr(manifest, "remove_durably", crash)
    with pytest.raises(OSError):
        a.commit(7)
    monkeypatch.undo()
    b = ShardStore(root)
    assert keys(b) == [0, 1, 2, 3]
    b.recover({7})  # rolls the delta forward again: no duplicate rows
    assert keys(b) == [0, 1, 2, 3] and len(b.snapshot(1)) == 1


def test_crash_before_manifest_replace(tmp_path, monkeypatch):
    root = str(tmp_path)
    a = ShardStore(root)
    a.create_table(1, SCHEMA)
    a.write(1, 1, [batch(0, 1)])
    a.commit(1)
    a.write(2, 1, [batch(1, 1)])
    a.prepare(2)

    def crash(src, dst):
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(manifest.os, "replace", crash)
    with pytest.raises(OSError):
        a.commit(2)
    monkeypatch.undo()
    with open(os.path.join(root, "tables", "1", "manifest.json.tmp-x"), "w") as f:
        f.write("{partial")  # what a real crash mid-write leaves
    b = ShardStore(root)
    assert keys(b) == [0]  # the old manifest, whole
    b.recover({2})
    assert keys(b) == [0, 1]
    assert not [f for f in files(b) if manifest.TMP_MARK in f]


def test_concurrent_commits_from_threads(store):
    n_threads, per_thread, rows = 8, 6, 50
    errors_seen = []

    def worker(t):
        try:
            for i in range(per_thread):
                txn = 1000 + t * per_thread + i
                store.write(txn, 1, [batch(txn * rows, rows)])
                assert len(keys(store, txn_id=txn)) >= rows
                store.prepare(txn)
                store.commit(txn)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors_seen.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors_seen
    total = n_threads * per_thread
    assert store.stats(1)["rows"] == total * rows and store.stats(1)["chunks"] == total
    assert len(set(keys(store))) == total * rows
    reopened = ShardStore(store.root)
    assert reopened.stats(1) == store.stats(1)
    assert manifest.read_manifest(os.path.join(store.root, "tables", "1")).version == total


def test_chunks_split_at_chunk_rows(tmp_path):
    store = ShardStore(str(tmp_path), chunk_rows=10)
    store.create_table(1, SCHEMA)
    assert store.write(1, 1, [batch(0, 7), batch(7, 7), batch(14, 0), batch(14, 11)]) == 25
    store.commit(1)
    chunks = store.snapshot(1)
    assert [c.rows for c in chunks] == [10, 10, 5]
    assert [k for c in chunks for k in store.read(c, ["k"]).column("k").to_pylist()] == list(range(25))
    assert [(c.stats["k"].min, c.stats["k"].max) for c in chunks] == [(0, 9), (10, 19), (20, 24)]
    store.write(2, 1, [batch(100, 20)])
    store.commit(2)
    assert [c.rows for c in store.snapshot(1)] == [10, 10, 5, 10, 10]


def test_stats(store):
    assert store.stats(1) == {"rows": 0, "chunks": 0, "bytes": 0}
    store.write(1, 1, [batch(0, 3)])
    store.write(1, 1, [batch(3, 4)])
    store.commit(1)
    st = store.stats(1)
    assert st["rows"] == 7 and st["chunks"] == 2 and st["bytes"] > 0
    [a, b] = sorted(store.snapshot(1), key=lambda c: c.stats["k"].min)
    assert (a.stats["v"].min, a.stats["v"].max, a.stats["v"].null_count) == ("v0", "v2", 0)
    assert (b.stats["k"].min, b.stats["k"].max) == (3, 6)


def test_truncate(store):
    store.write(1, 1, [batch(0, 3)])
    store.commit(1)
    store.write(2, 1, [batch(10, 2)])
    store.truncate(2, 1)  # also drops txn 2's own earlier write
    store.write(2, 1, [batch(20, 1)])
    assert keys(store, txn_id=2) == [20]
    assert keys(store) == [0, 1, 2]
    store.write(3, 1, [batch(30, 1)])  # commits after the truncate: survives it
    store.commit(3)
    store.commit(2)
    assert keys(store) == [20, 30]
    old = [f for f in files(store) if f.startswith("chunk-1-")]
    assert old  # kept for snapshots taken before the truncate committed ...
    store.vacuum()  # ... until vacuum
    on_disk = {f for f in files(store) if f.startswith("chunk-")}
    assert on_disk == {c.file for c in store.snapshot(1)} and not on_disk & set(old)
    assert keys(store) == [20, 30]


def test_write_is_all_or_nothing(tmp_path):
    store = ShardStore(str(tmp_path), chunk_rows=5)
    store.create_table(1, SCHEMA)

    def batches():
        yield batch(0, 12)  # two chunks get written before the bad batch
        yield pa.record_batch({"x": [1]})

    with pytest.raises(errors.DatatypeMismatch):
        store.write(1, 1, batches())
    assert files(store) == [manifest.MANIFEST] and keys(store, txn_id=1) == []


def test_schema_checks_and_casts(store):
    narrow = pa.record_batch([pa.array([1, 2], pa.int32()), pa.array(["a", None])],
                             names=["k", "v"])
    assert store.write(1, 1, [narrow]) == 2
    assert store.snapshot(1, 1)[0].stats["k"].max == 2
    assert store.read(store.snapshot(1, 1)[0]).schema == SCHEMA
    assert store.write(1, 1, [pa.table({"k": [5], "v": ["t"]})]) == 1  # tables are fine too
    with pytest.raises(errors.DatatypeMismatch):
        store.write(1, 1, [pa.record_batch({"v": ["a"], "k": [1]})])  # column order matters
    with pytest.raises(errors.DatatypeMismatch):
        store.write(1, 1, [pa.record_batch({"k": ["x"], "v": ["a"]})])
    small = ShardStore(os.path.join(store.root, "..", "other"))
    small.create_table(2, pa.schema([pa.field("s", pa.int16(), nullable=False)]))
    with pytest.raises(errors.NumericOutOfRange):
        small.write(1, 2, [pa.record_batch({"s": pa.array([70000])})])
    with pytest.raises(errors.NotNullViolation):
        small.write(1, 2, [pa.record_batch({"s": pa.array([1, None], pa.int16())})])
    with pytest.raises(TypeError):
        store.write(1, 1, [[1, 2]])


def test_table_errors(store):
    with pytest.raises(errors.DuplicateTable):
        store.create_table(1, SCHEMA)
    with pytest.raises(errors.QueryError) as exc:
        store.create_table(2, pa.schema([("a", pa.int64()), ("a", pa.int64())]))
    assert exc.value.sqlstate == "42701"
    for call in (lambda: store.write(1, 9, [batch(0, 1)]), lambda: store.snapshot(9),
                 lambda: store.stats(9), lambda: store.truncate(1, 9), lambda: store.drop_table(9)):
        with pytest.raises(errors.UndefinedTable):
            call()
    with pytest.raises(ValueError):
        ShardStore(store.root, chunk_rows=0)


def test_drop_table_removes_files(store):
    store.write(1, 1, [batch(0, 3)])
    store.commit(1)
    store.write(2, 1, [batch(3, 3)])  # pending in a txn when the table goes
    store.drop_table(1)
    assert not store.has_table(1) and os.listdir(os.path.join(store.root, "tables")) == []
    store.commit(2)  # nothing left to publish: no error, no resurrection
    assert not store.has_table(1) and store.tables() == []
    store.create_table(1, SCHEMA)  # the id can be reused
    assert keys(store) == []


def test_persistence_across_stores(tmp_path, all_types_table):
    root = str(tmp_path)
    a = ShardStore(root)
    a.create_table(1, SCHEMA)
    a.create_table(2, all_types_table.schema)
    a.write(1, 1, [batch(0, 10)])
    a.write(1, 2, [all_types_table])
    a.prepare(1)
    a.commit(1)
    b = ShardStore(root)
    assert b.tables() == [1, 2] and b.has_table(2)
    assert keys(b) == list(range(10))
    assert b.read(b.snapshot(2)[0]).equals(all_types_table)
    assert b.snapshot(2)[0] == a.snapshot(2)[0]
    assert b.schema(1) == SCHEMA and b.stats(1) == a.stats(1)


def test_recover_cleans_create_and_drop_leftovers(tmp_path):
    root = str(tmp_path)
    a = ShardStore(root)
    a.create_table(1, SCHEMA)
    os.mkdir(os.path.join(root, "tables", ".tmp-5-abc"))
    os.mkdir(os.path.join(root, "tables", ".drop-6-abc"))
    stray = os.path.join(root, "tables", "1", "chunk-9-dead.arrow")
    open(stray, "w").close()
    b = ShardStore(root)
    b.recover(set())
    assert os.listdir(os.path.join(root, "tables")) == ["1"] and not os.path.exists(stray)


def test_vacuum_keeps_live_transactions_files(store):
    store.write(1, 1, [batch(0, 2)])
    store.write(2, 1, [batch(2, 2)])
    store.prepare(2)
    store.vacuum()
    assert keys(store, txn_id=1) == [0, 1] and keys(store, txn_id=2) == [2, 3]
    store.commit(1)
    store.commit(2)
    assert keys(store) == [0, 1, 2, 3]


def test_compressed_store(tmp_path):
    store = ShardStore(str(tmp_path), compression="zstd")
    store.create_table(1, SCHEMA)
    store.write(1, 1, [batch(0, 1000)])
    store.commit(1)
    [c] = ShardStore(str(tmp_path)).snapshot(1)
    assert c.compression == "zstd"
    assert store.read(c, ["v"]).column("v").to_pylist()[-1] == "v999"


def test_concurrent_writes_in_one_txn_and_reads(store):
    threads = [threading.Thread(target=store.write, args=(1, 1, [batch(i * 100, 100)]))
               for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(keys(store, txn_id=1)) == 600 and keys(store) == []
    store.commit(1)
    assert keys(store) == sorted(k for i in range(6) for k in range(i * 100, i * 100 + 100))


def test_chunk_rows_default():
    assert shard_store.CHUNK_ROWS == 1_048_576


def test_rollback_to_a_mark_drops_the_chunks_written_since(store):
    store.create_table(2, SCHEMA)
    store.write(10, 1, [batch(0, 3)])
    store.mark(10, 1)
    store.write(10, 1, [batch(3, 3)])
    store.write(10, 2, [batch(100, 2)])
    store.mark(10, 2)
    store.write(10, 1, [batch(6, 1)])
    store.rollback_to(10, 2)
    assert keys(store, txn_id=10) == list(range(6)) and keys(store, 2, 10) == [100, 101]
    store.rollback_to(10, 1)  # again, further back: table 2 was not written before mark 1
    assert keys(store, txn_id=10) == [0, 1, 2] and keys(store, 2, 10) == []
    store.rollback_to(10, 1)  # idempotent; later marks are gone
    with pytest.raises(errors.InvalidTransactionState):
        store.rollback_to(10, 2)
    assert len(files(store)) == 2  # the manifest and the first chunk: the rest unlinked
    store.write(10, 1, [batch(9, 1)])
    store.commit(10)
    assert keys(store) == [0, 1, 2, 9] and keys(store, 2) == []


def test_rollback_to_before_the_first_write_drops_everything(store):
    store.begin(10)
    store.write(10, 1, [batch(0, 3)])
    store.rollback_to(10, None)
    assert keys(store, txn_id=10) == [] and files(store) == [manifest.MANIFEST]
    store.commit(10)
    assert keys(store) == []


# --- chunks kept mapped between reads (mapped_chunks.py) ------------------------------------
def _mapped(store: ShardStore) -> list[str]:
    return list(store._mapped._tables)


def test_a_read_chunk_stays_mapped_and_serves_the_next_read(store):
    store.write(1, 1, [batch(0, 3)])
    store.commit(1)
    [c] = store.snapshot(1)
    first = store.read(c, ["v"])
    assert _mapped(store) == [c.path]
    assert store.read(c, ["v"]).column(0).chunk(0).buffers()[2].address == \
        first.column(0).chunk(0).buffers()[2].address  # the same map, not a new one
    with pytest.raises(errors.UndefinedColumn):
        store.read(c, ["nope"])


def test_deleted_chunks_are_unmapped(store):
    store.write(1, 1, [batch(0, 3)])
    store.commit(1)
    [c] = store.snapshot(1)
    keys(store)
    store.truncate(2, 1)
    store.commit(2)
    store.vacuum()  # the truncated chunk's file goes, and its map with it
    assert not os.path.exists(c.path) and _mapped(store) == []
    store.write(3, 1, [batch(5, 2)])
    assert keys(store, txn_id=3) == [5, 6] and len(_mapped(store)) == 1
    store.abort(3)  # the pending chunk's file goes
    assert _mapped(store) == []


def test_a_dropped_table_is_unmapped(store):
    store.write(1, 1, [batch(0, 3)])
    store.commit(1)
    keys(store)
    store.drop_table(1)
    assert _mapped(store) == []


def test_at_most_limit_chunks_stay_mapped(store):
    store._mapped.limit = 2
    for t in range(1, 5):
        store.write(t, 1, [batch(10 * t, 1)])
        store.commit(t)
    assert keys(store) == [10, 20, 30, 40]
    assert len(_mapped(store)) == 2


def test_compressed_chunks_are_not_kept(tmp_path):
    s = ShardStore(str(tmp_path / "z"), compression="zstd")
    s.create_table(1, SCHEMA)
    s.write(1, 1, [batch(0, 3)])
    s.commit(1)
    assert keys(s) == [0, 1, 2] and _mapped(s) == []


def test_placement_is_published_with_the_transaction(tmp_path):
    """An expansion's move records the table's new number of segments in the same
    transaction as its rows: seen by the mover at once, by others at the commit, kept
    across a restart, and gone with an abort."""
    root = str(tmp_path / "seg")
    s = ShardStore(root)
    s.create_table(1, SCHEMA, placement=2)
    s.write(1, 1, [batch(0, 3)])
    s.commit(1)
    assert s.snapshot_placed(1)[1] == 2
    s.set_placement(7, 1, 4)
    assert s.snapshot_placed(1, 7)[1] == 4
    assert s.snapshot_placed(1)[1] == 2
    s.abort(7)
    assert s.snapshot_placed(1)[1] == 2
    s.write(8, 1, [batch(10, 2)])
    s.set_placement(8, 1, 4)
    s.prepare(8)
    del s  # crash after prepare: recovery rolls it forward with the rows
    again = ShardStore(root)
    again.recover({8})
    chunks, placement = again.snapshot_placed(1)
    assert placement == 4 and keys(again) == [0, 1, 2, 10, 11]


def test_placement_alone_is_a_change_to_commit(store):
    store.set_placement(3, 1, 6)
    store.commit(3)
    assert store.snapshot_placed(1) == ([], 6)
