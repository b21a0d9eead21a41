"""fetch (late materialization) on a real ShardStore: a top-K over a narrow scan with row
ids, then the other columns read for its rows alone, chunk by chunk; the plans
planner/rules/late_fetch.py makes give the rows the plain top-K gives."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import locus as lc
from planner import plan
from planner import rules
from planner import types as T
from planner.schema import ROW_ID, ColumnDef, DistKind, DistPolicy, TableDef
from segment.operators import base, fetch
from segment.storage.shard_store import ShardStore

F = ex.Func
COLUMNS = (ColumnDef("id", T.INT8), ColumnDef("k", T.INT4), ColumnDef("s", T.TEXT),
           ColumnDef("tag", T.TEXT), ColumnDef("f", T.FLOAT8))
TABLE = TableDef(9, "w", COLUMNS, DistPolicy(DistKind.RANDOM))
ROWS, CHUNK = 5_000, 1_000
FIELDS = plan.fields_of((c.name, c.type) for c in COLUMNS)
ID, KEY, S, TAG, FL = (k.col(i, c.type, c.name) for i, c in enumerate(COLUMNS))


def _data() -> pa.Table:
    i = np.arange(ROWS)
    key = pa.array((i * 7919 % 1000).astype(np.int32), mask=i % 97 == 0)  # ties and NULLs
    return pa.table({
        "id": pa.array(i, pa.int64()), "k": key,
        "s": pa.array([f"row {x} " + "x" * (x % 50) for x in i]),
        "tag": pa.array([("red", "green", "blue")[x % 3] for x in i]),  # stored encoded
        "f": pa.array(i * 0.25),
    }, schema=TABLE.arrow_schema())


@pytest.fixture()
def store(tmp_path):
    s = ShardStore(str(tmp_path), chunk_rows=CHUNK, sync=False)
    s.create_table(TABLE.id, TABLE.arrow_schema())
    s.write(1, TABLE.id, _data().to_batches(max_chunksize=CHUNK))
    s.commit(1)
    return s


def _top_k(keys, limit, pred=None, cols=(0, 1, 2, 3, 4)) -> plan.Sort:
    scan = plan.Scan(TABLE, tuple(cols), tuple(FIELDS[c] for c in cols), pred,
                     locus=lc.STREWN)
    proj = plan.Project(scan, tuple(k.col(i, f.type, f.name) for i, f in enumerate(scan.fields)),
                        scan.fields, locus=lc.STREWN)
    return plan.Sort(proj, tuple(keys), proj.fields, limit, locus=lc.STREWN)


def _run(node, store, txn_id=None) -> pa.Table:
    return k.run(node, base.ExecContext(store=store, txn_id=txn_id))


def _expected(store, keys, limit, keep=lambda r: True, txn_id=None) -> list[tuple]:
    """The first `limit` live rows by the keys, then by row place: a Python sort."""
    rows = []
    for chunk in store.snapshot(TABLE.id, txn_id):
        got = store.read(chunk).to_pylist()
        positions = store.deleted_positions(chunk)
        deleted = set() if positions is None else set(positions.tolist())
        rows += [(r, (chunk.number, p)) for p, r in enumerate(got) if p not in deleted]
    rows = [(r, place) for r, place in rows if keep(r)]

    def order(item):
        r, place = item
        out = []
        for key in keys:
            v = r[key.expr.name]
            null_rank = (0 if key.nulls_first else 1) if v is None else (
                1 if key.nulls_first else 0)
            out.append((null_rank, 0 if v is None else (-v if key.descending else v)))
        return out + [place]
    rows.sort(key=order)
    return [tuple(r.values()) for r, _ in rows[:limit]]


def _rows(table: pa.Table) -> list[tuple]:
    return [tuple(r.values()) for r in table.to_pylist()]


def _late(sort: plan.Sort) -> plan.Node:
    out = rules.late_fetch(sort)
    assert isinstance(out, plan.Project) and isinstance(out.child, plan.Fetch)
    return out


@pytest.mark.parametrize("desc,nulls_first", [(False, False), (False, True), (True, True),
                                               (True, False)])
def test_rows_as_the_plain_top_k_gives_them(store, desc, nulls_first):
    keys = (plan.SortKey(KEY, desc, nulls_first), plan.SortKey(ID, True))
    sort = _top_k(keys, 25)
    assert _rows(_run(_late(sort), store)) == _expected(store, keys, 25)
    assert _rows(_run(sort, store)) == _expected(store, keys, 25)


def test_ties_are_broken_by_row_place(store):
    keys = (plan.SortKey(KEY),)  # key values repeat: five rows each
    got = _rows(_run(_late(_top_k(keys, 12)), store))
    assert got == _expected(store, keys, 12)


def test_filter_columns_are_read_early_and_the_rest_only_for_the_rows_kept(store):
    pred = k.call(F.GT, FL, k.lit(500.0, T.FLOAT8))
    keys = (plan.SortKey(KEY, True),)
    node = _late(_top_k(keys, 7, pred))
    fetch = node.child
    names = [TABLE.columns[c].name for c in fetch.columns]
    assert names == ["id", "s", "tag"]
    scan = fetch.child.child.child
    assert scan.columns == (1, 4, ROW_ID)
    context = base.ExecContext(store=store, analyze=True)
    got = _rows(k.run(node, context))
    assert got == _expected(store, keys, 7, lambda r: r["f"] > 500.0)
    fetch_stats = context.node_stats[1]
    assert fetch_stats.counters["fetched_rows"] == 7
    assert 1 <= fetch_stats.counters["fetched_chunks"] <= 4


def test_limit_past_the_rows(store):
    pred = k.call(F.LT, ID, k.lit(30, T.INT8))
    keys = (plan.SortKey(KEY, False, True),)
    got = _rows(_run(_late(_top_k(keys, 1000, pred)), store))
    assert got == _expected(store, keys, 1000, lambda r: r["id"] < 30)
    assert len(got) == 30


def test_deleted_rows_do_not_come_back(store):
    keys = (plan.SortKey(KEY),)
    before = _rows(_run(_late(_top_k(keys, 10)), store))
    gone = np.array([(c.number << 32) | p for c in store.snapshot(TABLE.id)
                     for p in range(0, c.rows, 3)], dtype=np.int64)
    store.delete_rows(2, TABLE.id, gone)
    # Within the deleting transaction, and after its commit, the deleted rows are gone.
    mid = _rows(_run(_late(_top_k(keys, 10)), store, txn_id=2))
    assert mid == _expected(store, keys, 10, txn_id=2)
    assert _rows(_run(_late(_top_k(keys, 10)), store)) == before  # not committed yet
    store.prepare(2)
    store.commit(2)
    after = _rows(_run(_late(_top_k(keys, 10)), store))
    assert after == mid and after != before


def test_fetch_of_a_chunk_no_scan_read_is_an_error(store):
    node = _late(_top_k((plan.SortKey(KEY),), 3))
    fetch = node.child
    ids = pa.array([(99 << 32) | 1], pa.int64())
    src = k.Source((pa.record_batch([pa.array([1], pa.int32()), ids],
                                    names=[f.name for f in fetch.child.fields]),),
                   fetch.child.fields)
    with pytest.raises(Exception, match="chunk 99 was not scanned"):
        _run(plan.Fetch(src, TABLE, 1, fetch.columns, fetch.fields), store)


def test_empty_input_fetches_nothing(store):
    pred = k.call(F.LT, ID, k.lit(-1, T.INT8))
    assert _run(_late(_top_k((plan.SortKey(KEY),), 5, pred)), store).num_rows == 0


def test_fetched_rows_do_not_carry_their_chunks_whole_dictionaries():
    encoded = pa.array([f"v{i}" for i in range(100)]).dictionary_encode()
    few = fetch._decoded(encoded.take(pa.array([3, 50])))
    assert few.type == pa.string() and few.to_pylist() == ["v3", "v50"]
    repeated = pa.array(["a", "b"] * 10).dictionary_encode()
    assert fetch._decoded(repeated).type == repeated.type  # fewer values than rows: kept
