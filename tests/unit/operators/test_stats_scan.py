"""stats_scan: per-chunk rows, non-null counts and bounds from a real ShardStore's
statistics, equal to what reading the rows gives, reading only chunks whose statistics
leave a bound unknown."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import opkit as k
from planner import plan
from planner import types as T
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef
from planner.rules.stats_aggregate import _stat_field, from_statistics
from segment.operators import base
from segment.storage.shard_store import ShardStore
from test_scan import COLUMNS, TABLE, _SpyStore, _data, store  # noqa: F401 - fixture

S = plan.ChunkStat


def _stats_scan(table, wanted) -> plan.StatsScan:
    fields = tuple(_stat_field(table, kind, c) for kind, c in wanted)
    return plan.StatsScan(table, tuple(wanted), fields)


def test_every_type_matches_the_rows_and_reads_nothing(store):  # noqa: F811
    spy = _SpyStore(store)
    wanted = [(S.ROWS, None)]
    for i in range(len(COLUMNS)):
        wanted += [(S.NON_NULL, i), (S.MIN, i), (S.MAX, i)]
    out = k.run(_stats_scan(TABLE, wanted), k.ctx(store=spy))
    assert spy.reads == []
    assert out.num_rows == 1 + 10  # the neutral row, then one per chunk
    assert out.column(0).to_pylist()[0] == 0
    assert pc.sum(out.column(0)).as_py() == 10_000
    data = _data()
    for j, (kind, i) in enumerate(wanted[1:], start=1):
        col = out.column(j)
        name = COLUMNS[i].name
        if kind is S.NON_NULL:
            assert pc.sum(col).as_py() == len(data) - data.column(name).null_count, name
            continue
        got = (pc.min if kind is S.MIN else pc.max)(col)
        want = (pc.min if kind is S.MIN else pc.max)(data.column(name))
        assert col.type == data.schema.field(name).type
        if name == "f" and kind is S.MAX:
            # PostgreSQL sorts NaN above every number: the chunk holding one has max NaN.
            assert any(isinstance(v, float) and math.isnan(v) for v in col.to_pylist())
            continue
        assert got.equals(want), (name, kind, got, want)


def test_long_strings_are_read_once_per_chunk(tmp_path):
    cols = (ColumnDef("id", T.INT8), ColumnDef("s", T.TEXT))
    table = TableDef(3, "long", cols, DistPolicy(DistKind.RANDOM))
    st = ShardStore(str(tmp_path), chunk_rows=4, sync=False)
    st.create_table(table.id, table.arrow_schema())
    values = ["b", None, "a" + "z" * 400 + "x", "c", None, None, None, None, "d" * 300 + "e"]
    st.write(1, table.id, [pa.record_batch([pa.array(np.arange(9)), pa.array(values)],
                                           schema=table.arrow_schema())])
    st.commit(1)
    spy = _SpyStore(st)
    out = k.run(_stats_scan(table, [(S.NON_NULL, 1), (S.MIN, 1), (S.MAX, 1)]),
                k.ctx(store=spy))
    # Chunk 1's min is truncated, chunk 2 is all NULL, chunk 3's bounds are over the
    # limit: two chunks are read, each once for both bounds.
    assert len(spy.reads) == 2 and all(cols == ("s",) for _, cols in spy.reads)
    assert out.column(0).to_pylist() == [0, 3, 0, 1]
    assert out.column(1).to_pylist() == [None, values[2], None, values[8]]
    assert out.column(2).to_pylist() == [None, "c", None, values[8]]


def test_empty_shard_gives_the_neutral_row(tmp_path):
    st = ShardStore(str(tmp_path), sync=False)
    st.create_table(TABLE.id, TABLE.arrow_schema())
    out = k.run(_stats_scan(TABLE, [(S.ROWS, None), (S.NON_NULL, 3), (S.MIN, 3)]),
                k.ctx(store=st))
    assert out.to_pylist() == [{"rows": 0, "non_null(s)": 0, "min(s)": None}]


@pytest.mark.parametrize(("agg", "ok"), [("count_star", True), ("count", True), ("min", True),
                                         ("sum", False), ("distinct", False), ("expr", False)])
def test_rule_takes_only_what_statistics_answer(agg, ok):
    from planner import expr as ex

    A = ex.AggFunc
    scan = plan.Scan(TABLE, (0, 3), plan.fields_of([("id", T.INT8), ("s", T.TEXT)]))
    ref = k.col(1, T.TEXT)
    call = {"count_star": ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
            "count": ex.AggCall(A.COUNT, ref, False, T.INT8),
            "min": ex.AggCall(A.MIN, ref, False, T.TEXT),
            "sum": ex.AggCall(A.SUM, k.col(0, T.INT8), False, T.numeric(38, 0)),
            "distinct": ex.AggCall(A.COUNT, ref, True, T.INT8),
            "expr": ex.AggCall(A.MIN, k.call(ex.Func.ADD, k.col(0, T.INT8),
                                             k.lit(1, T.INT8)), False, T.INT8)}[agg]
    partial = plan.Aggregate(scan, (), (call,), plan.AggMode.PARTIAL,
                             plan.fields_of([("a", call.type)]))
    got = from_statistics(partial)
    assert (got is not None) == ok
    if ok:
        assert isinstance(got.child, plan.StatsScan)
        assert base.schema_of(got.fields) == base.schema_of(partial.fields)
    # A WHERE (a filtered scan) always reads rows.
    filtered = plan.Aggregate(plan.Filter(scan, k.lit(True, T.BOOL), scan.fields), (),
                              (call,), plan.AggMode.PARTIAL, partial.fields)
    assert from_statistics(filtered) is None
