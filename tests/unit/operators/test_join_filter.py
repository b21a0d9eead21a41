"""Join-key filters (segment/operators/join_filter.py): a hash join's build keys dropped
into the scan of its probe side, on a real ShardStore. The join's rows are exactly those
without the filter (nothing a NULL or absent key could have joined is lost; outer and
anti joins are left alone); chunks outside the keys' range are not read; a filter that
keeps most rows stops testing."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import locus as lc
from planner import plan
from planner import types as T
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef
from segment.operators import base, join_filter
from segment.storage.shard_store import ShardStore

J = plan.JoinType
COLUMNS = (ColumnDef("id", T.INT8), ColumnDef("part", T.INT4), ColumnDef("q", T.INT8))
TABLE = TableDef(5, "items", COLUMNS, DistPolicy(DistKind.RANDOM))
ROWS, CHUNK = 20_000, 2_000
FIELDS = plan.fields_of((c.name, c.type) for c in COLUMNS)


@pytest.fixture()
def store(tmp_path):
    s = ShardStore(str(tmp_path), chunk_rows=CHUNK, sync=False)
    s.create_table(TABLE.id, TABLE.arrow_schema())
    i = np.arange(ROWS)
    part = pa.array((i // 4).astype(np.int32), mask=i % 97 == 0)  # sorted: chunk ranges
    s.write(1, TABLE.id, pa.table({"id": i, "part": part, "q": i % 50},
                                 schema=TABLE.arrow_schema()).to_batches(max_chunksize=CHUNK))
    s.commit(1)
    return s


def _join(join_type, build_keys, residual=None, project=True):
    scan = plan.Scan(TABLE, (0, 1, 2), FIELDS, ex.Call(ex.Func.LT, (k.col(2, T.INT8),
                     ex.Literal(40, T.INT8)), T.BOOL), locus=lc.STREWN)
    left = plan.Project(scan, (k.col(1, T.INT4, "part"), k.col(0, T.INT8, "id")),
                        plan.fields_of([("part", T.INT4), ("id", T.INT8)]),
                        locus=lc.STREWN) if project else scan
    build = pa.table({"key": pa.array(build_keys, pa.int64())})
    right = k.source(build, [T.INT8])
    key = 0 if project else 1
    fields = left.fields + (right.fields if join_type not in (J.SEMI, J.ANTI) else ())
    return plan.HashJoin(left, right, join_type, (key,), (0,), residual, fields)


def _rows(table: pa.Table) -> list:
    return sorted(table.to_pylist(), key=lambda r: tuple((v is None, v) for v in r.values()))


@pytest.mark.parametrize("join_type", [J.INNER, J.SEMI, J.RIGHT, J.LEFT, J.ANTI])
def test_the_join_answers_as_without_the_filter(store, join_type, monkeypatch):
    keys = [7, 7, 1200, -5, None]  # -5 and NULL join nothing
    node = _join(join_type, keys)
    ctx = base.ExecContext(store=store, analyze=True)
    got = _rows(k.run(node, ctx))
    scan = next(s for s in ctx.node_stats.values() if s.name == "Scan")
    monkeypatch.setattr(join_filter, "for_build", lambda *a: None)
    want = _rows(k.run(node, base.ExecContext(store=store)))
    assert got == want and got
    filtered = join_type in (J.INNER, J.SEMI, J.RIGHT)
    assert (scan.counters.get("key_filtered", 0) > 0) == filtered
    # parts are stored in order, 500 a chunk: those above part 1200 hold none of the keys
    assert (scan.counters["chunks_skipped"] > 0) == filtered


def test_scan_below_a_filter_and_without_a_project(store):
    node = _join(J.INNER, [10, 11], project=False)
    got = k.run(node, base.ExecContext(store=store))
    assert sorted(got.column("id").to_pylist()) == [i for i in range(40, 48) if i % 50 < 40
                                                   and i % 97 != 0]


def test_a_filter_that_keeps_most_rows_stops_testing():
    f = join_filter.KeyFilter(np.arange(0, 1000, dtype=np.int64))
    for _ in range(join_filter.MISSES_MAX):
        assert f.active
        assert f.positions(pa.array(np.arange(900, dtype=np.int32))) is None
    assert not f.active
    g = join_filter.KeyFilter(np.array([5, 9, -3], np.int64))
    kept = g.positions(pa.array([5, None, -3, 9, 10, -4, 5, 11, 12, 13], pa.int64()))
    assert kept.tolist() == [0, 2, 3, 6]
    assert g.disjoint(10, 20) and g.disjoint(-10, -4) and not g.disjoint(6, 8) \
        and not g.disjoint(None, 0)


def test_no_filter_for_wide_ranges_big_builds_or_other_types():
    node = _join(J.INNER, [1])
    wide = pa.record_batch([pa.array([0, join_filter.BITMAP_MAX], pa.int64())], names=["key"])
    assert join_filter.for_build(node, wide) is None
    assert join_filter.for_build(node, pa.record_batch([pa.array([None], pa.int64())],
                                                       names=["key"])) is None
    assert join_filter.for_build(node, pa.record_batch([pa.array([3], pa.int64())],
                                                       names=["key"])) is not None
