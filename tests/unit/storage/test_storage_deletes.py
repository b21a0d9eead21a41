"""ShardStore deletes: row ids, deletion files published with the commit, savepoints,
recovery, compaction and vacuum."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from segment.storage import deletions, shard_store

ShardStore = shard_store.ShardStore
SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


def batch(start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch([pa.array(range(start, start + n), pa.int64()),
                            pa.array([f"v{i}" for i in range(start, start + n)])], schema=SCHEMA)


def live_keys(store: ShardStore, txn_id: int | None = None) -> list[int]:
    return sorted(k for c in store.snapshot(1, txn_id)
                  for k in store.read_live(c, ["k"]).column("k").to_pylist())


def row_ids(store: ShardStore, wanted, txn_id: int | None = None) -> np.ndarray:
    """The row ids of the rows whose k is in `wanted`, as a scan hands them out."""
    out = []
    for c in store.snapshot(1, txn_id):
        ks = np.asarray(store.read(c, ["k"]).column("k").to_pylist())
        pos = np.flatnonzero(np.isin(ks, list(wanted)))
        out.append((np.int64(c.number) << 32) + pos)
    return np.concatenate(out) if out else np.empty(0, np.int64)


def commit(store: ShardStore, txn_id: int) -> None:
    store.prepare(txn_id)
    store.commit(txn_id)


@pytest.fixture
def store(tmp_path):
    s = ShardStore(str(tmp_path / "seg0"), chunk_rows=100)
    s.create_table(1, SCHEMA)
    s.write(1, 1, [batch(0, 250)])  # three chunks: 100, 100, 50 rows
    commit(s, 1)
    return s


def test_chunks_are_numbered_once(store):
    numbers = [c.number for c in store.snapshot(1)]
    assert len(set(numbers)) == 3 and min(numbers) >= 0
    store.write(2, 1, [batch(1000, 10)])
    assert store.snapshot(1, 2)[-1].number not in numbers


def test_delete_is_visible_to_its_transaction_only_until_commit(store):
    fresh = store.delete_rows(2, 1, row_ids(store, range(10, 20)))
    assert fresh.all()
    assert live_keys(store, 2) == [k for k in range(250) if not 10 <= k < 20]
    assert live_keys(store) == list(range(250))
    assert store.stats(1)["rows"] == 250
    commit(store, 2)
    assert live_keys(store) == [k for k in range(250) if not 10 <= k < 20]
    assert store.stats(1)["rows"] == 240


def test_a_row_is_deleted_once(store):
    ids = row_ids(store, [5, 6])
    fresh = store.delete_rows(2, 1, np.concatenate([ids, ids[:1]]))
    assert fresh.tolist() == [True, True, False]
    assert not store.delete_rows(2, 1, ids).any()  # already deleted by this transaction


def test_deletes_of_own_pending_rows(store):
    store.write(2, 1, [batch(1000, 10)])
    store.delete_rows(2, 1, row_ids(store, [1003, 7], txn_id=2))
    commit(store, 2)
    assert 1003 not in live_keys(store) and 7 not in live_keys(store)
    assert 1004 in live_keys(store)


def test_abort_leaves_no_deletion_files(store):
    store.delete_rows(2, 1, row_ids(store, range(0, 200, 3)))
    store.prepare(2)
    store.abort(2)
    assert live_keys(store) == list(range(250))
    store.vacuum()
    assert not [f for f in os.listdir(os.path.join(store.root, "tables", "1"))
                if f.startswith("del-")]


def test_rollback_to_a_mark_undoes_later_deletes(store):
    store.delete_rows(2, 1, row_ids(store, [1]))
    store.mark(2, 1)
    store.delete_rows(2, 1, row_ids(store, [2, 150]))
    store.write(2, 1, [batch(500, 5)])
    store.rollback_to(2, 1)
    commit(store, 2)
    assert live_keys(store) == [k for k in range(250) if k != 1]


def test_prepared_deletes_roll_forward_after_a_crash(tmp_path, store):
    store.delete_rows(2, 1, row_ids(store, range(100, 120)))
    store.prepare(2)
    again = ShardStore(store.root, chunk_rows=100)  # the process died after prepare
    again.recover({1, 2})
    assert live_keys(again) == [k for k in range(250) if not 100 <= k < 120]
    third = ShardStore(store.root, chunk_rows=100)
    third.recover({1, 2})  # rolling forward twice changes nothing
    assert live_keys(third) == live_keys(again)


def test_undecided_deletes_are_discarded_when_not_committed(store):
    store.delete_rows(2, 1, row_ids(store, range(100, 120)))
    store.prepare(2)
    again = ShardStore(store.root, chunk_rows=100)
    again.recover({1})
    assert live_keys(again) == list(range(250))


def test_later_deletes_from_a_chunk_keep_earlier_ones(store):
    store.delete_rows(2, 1, row_ids(store, [3]))
    commit(store, 2)
    store.delete_rows(3, 1, row_ids(store, [4]))
    commit(store, 3)
    [first] = [c for c in store.snapshot(1) if c.deleted]
    assert first.deleted == 2
    assert sorted(deletions.read(first.deletes_path).tolist()) == [3, 4]


def test_compaction_rewrites_dead_chunks_only(store):
    assert store.compactable(1, 0.5) == (0, 0)
    store.delete_rows(2, 1, row_ids(store, range(0, 80)))   # 80% of the first chunk
    store.delete_rows(2, 1, row_ids(store, range(100, 110)))  # 10% of the second
    assert store.compactable(1, 0.5) == (0, 0)  # not committed yet
    commit(store, 2)
    assert store.compactable(1, 0.5) == (1, 80)  # what compact will rewrite, asked first
    assert store.compactable(1, 0.05) == (2, 90)
    assert store.compact(3, 1, 0.5) == 1
    commit(store, 3)
    assert store.compactable(1, 0.5) == (0, 0)
    chunks = store.snapshot(1)
    assert sorted(c.live_rows for c in chunks) == [20, 50, 90]
    assert live_keys(store) == [k for k in range(250) if not (k < 80 or 100 <= k < 110)]
    assert store.has_garbage
    store.vacuum()
    names = os.listdir(os.path.join(store.root, "tables", "1"))
    assert len([n for n in names if n.startswith("chunk-")]) == 3
    assert len([n for n in names if n.startswith("del-")]) == 1  # the second chunk's


def test_compaction_of_a_wholly_deleted_chunk_writes_nothing(store):
    store.delete_rows(2, 1, row_ids(store, range(200, 250)))
    commit(store, 2)
    assert store.compact(3, 1, 0.0) == 1
    commit(store, 3)
    assert [c.rows for c in store.snapshot(1)] == [100, 100]
    assert live_keys(store) == list(range(200))


SCHEMA2 = pa.schema([("k", pa.int64()), ("v", pa.string()), ("w", pa.int32())])


def widen(b: pa.RecordBatch) -> pa.RecordBatch:
    return pa.record_batch([b.column(0), b.column(1).cast(pa.string()),
                            pa.nulls(b.num_rows, pa.int32())], schema=SCHEMA2)


def test_rewrite_replaces_rows_and_schema_at_commit(store):
    store.delete_rows(2, 1, row_ids(store, [0]))
    commit(store, 2)
    store.write(3, 1, [batch(900, 5)])
    assert store.rewrite(3, 1, SCHEMA2, widen) == 254
    assert store.schema(1) == SCHEMA  # until the commit
    store.write(3, 1, [pa.record_batch([pa.array([7000], pa.int64()), pa.array(["x"]),
                                        pa.array([1], pa.int32())], schema=SCHEMA2)])
    commit(store, 3)
    assert store.schema(1) == SCHEMA2
    assert live_keys(store) == list(range(1, 250)) + list(range(900, 905)) + [7000]
    assert all(c.deleted == 0 for c in store.snapshot(1))


def test_rewrite_dooms_other_writers(store):
    store.write(5, 1, [batch(500, 3)])       # another transaction, not prepared yet
    store.rewrite(6, 1, SCHEMA2, widen)
    with pytest.raises(Exception) as e:
        store.prepare(5)
    assert getattr(e.value, "sqlstate", None) == "40001"
    with pytest.raises(Exception) as e:
        store.write(7, 1, [batch(600, 1)])   # a new writer while the rewrite is pending
    assert getattr(e.value, "sqlstate", None) == "40001"
    store.abort(5)
    commit(store, 6)
    store.write(7, 1, [pa.record_batch([pa.array([1], pa.int64()), pa.array(["a"]),
                                        pa.array([2], pa.int32())], schema=SCHEMA2)])
    commit(store, 7)
    assert 500 not in live_keys(store) and 1 in live_keys(store)


def test_rewrite_waits_for_no_prepared_writer(store):
    store.write(5, 1, [batch(500, 3)])
    store.prepare(5)
    with pytest.raises(Exception) as e:
        store.rewrite(6, 1, SCHEMA2, widen)
    assert getattr(e.value, "sqlstate", None) == "40001"
    store.commit(5)
    assert 500 in live_keys(store)


def test_compaction_merges_many_small_chunks_when_asked(store, monkeypatch):
    monkeypatch.setattr(shard_store, "MERGE_MIN_CHUNKS", 4)
    before = len(store.snapshot(1))
    assert store.compactable(1, 0.5, merge_small=True) == (0, 0)  # too few small ones
    for txn in range(10, 14):  # four more small chunks: enough
        store.write(txn, 1, [pa.record_batch([pa.array([1000 + txn]), pa.array([f"v{txn}"])],
                                             schema=SCHEMA)])
        commit(store, txn)
    small = before + 4
    assert store.compactable(1, 0.5) == (0, 0)  # dead chunks only: none
    assert store.compactable(1, 0.5, merge_small=True) == (small, 0)
    keys = live_keys(store)
    assert store.compact(20, 1, 0.5, merge_small=True) == small
    commit(store, 20)
    # 254 rows in chunks of at most 100 (the fixture's chunk_rows), not 7 chunks
    assert sorted(c.rows for c in store.snapshot(1)) == [54, 100, 100]
    assert live_keys(store) == keys
