"""scan: projection pushdown, per-chunk filtering, and chunk skipping on a real ShardStore
(skipped chunks are never read)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef
from segment.operators import base
from segment.storage.shard_store import ShardStore

F = ex.Func
N152 = T.numeric(15, 2)
WIDE = T.numeric(38, 3)
COLUMNS = (ColumnDef("id", T.INT8), ColumnDef("d", T.DATE), ColumnDef("n", N152),
           ColumnDef("s", T.TEXT), ColumnDef("ts", T.TIMESTAMP), ColumnDef("f", T.FLOAT8),
           ColumnDef("g", T.INT4), ColumnDef("i4", T.INT4), ColumnDef("w", WIDE))
TABLE = TableDef(7, "t", COLUMNS, DistPolicy(DistKind.RANDOM))
ROWS, CHUNK = 10_000, 1_000
D0 = dt.date(2000, 1, 1)
TS0 = dt.datetime(2020, 1, 1)


def _data() -> pa.Table:
    i = np.arange(ROWS)
    f = i * 0.5
    f[3500] = np.nan  # chunk 3 has a NaN: its max is NaN, so it proves nothing
    g = pa.array(i.astype(np.int32), mask=i < 5 * CHUNK)  # chunks 0-4 all NULL
    return pa.table({
        "id": pa.array(i, pa.int64()),
        "d": pa.array(i.astype(np.int32) + (D0 - dt.date(1970, 1, 1)).days).cast(pa.date32()),
        "n": pa.array(i * 100 + 5, pa.int64()),
        "s": pa.array([f"s{x:05d}" for x in i]),
        "ts": pa.array((i * 1_000_000 + int((TS0 - dt.datetime(1970, 1, 1)).total_seconds()
                                           * 1_000_000)).astype(np.int64)).cast(pa.timestamp("us")),
        "f": pa.array(f),
        "g": g,
        "i4": pa.array(i.astype(np.int32)),
        "w": pa.array([Decimal(int(x)) / 1000 for x in i], pa.decimal128(38, 3)),
    }, schema=TABLE.arrow_schema())


class _SpyStore:
    """A ShardStore that records every read: (chunk file, columns)."""

    def __init__(self, store: ShardStore):
        self.store = store
        self.reads: list[tuple[str, tuple]] = []

    def snapshot_placed(self, table_id, txn_id=None):
        return self.store.snapshot_placed(table_id, txn_id)

    def read(self, chunk, columns=None):
        self.reads.append((chunk.file, tuple(columns or ())))
        return self.store.read(chunk, columns)

    def read_live(self, chunk, columns=None):
        self.reads.append((chunk.file, tuple(columns or ())))
        return self.store.read_live(chunk, columns)

    def deleted_positions(self, chunk):
        return self.store.deleted_positions(chunk)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = ShardStore(str(tmp_path_factory.mktemp("seg")), chunk_rows=CHUNK, sync=False)
    s.create_table(TABLE.id, TABLE.arrow_schema())
    s.write(1, TABLE.id, _data().to_batches(max_chunksize=3333))
    s.commit(1)
    return s


def _scan(cols: list[int], pred=None) -> plan.Scan:
    fields = plan.fields_of((COLUMNS[c].name, COLUMNS[c].type) for c in cols)
    return plan.Scan(TABLE, tuple(cols), fields, pred)


ALL = list(range(len(COLUMNS)))


def _ref(name: str) -> ex.ColumnRef:
    i = [c.name for c in COLUMNS].index(name)
    return k.col(i, COLUMNS[i].type, name)


def _cmp(f, name, value, t=None):
    return k.call(f, _ref(name), k.lit(value, t or _ref(name).type))


CASES = {
    "int_ge": (_cmp(F.GE, "id", 9500), 1, lambda r: r["id"] >= 9500),
    "literal_first": (k.call(F.LE, k.lit(9500, T.INT8), _ref("id")), 1, lambda r: r["id"] >= 9500),
    "between": (k.call(F.AND, _cmp(F.GE, "id", 2500), _cmp(F.LE, "id", 3499)), 2,
                lambda r: 2500 <= r["id"] <= 3499),
    "date_lt": (_cmp(F.LT, "d", D0 + dt.timedelta(days=1500)), 2,
                lambda r: r["d"] < D0 + dt.timedelta(days=1500)),
    "numeric_eq": (_cmp(F.EQ, "n", Decimal("1234.05")), 1, lambda r: r["n"] == 123405),
    "numeric_gt_max": (_cmp(F.GT, "n", Decimal("9999.05")), 0, lambda r: False),
    "numeric_ge": (_cmp(F.GE, "n", Decimal("9000.06")), 1, lambda r: r["n"] >= 900006),
    "text_in": (ex.InList(_ref("s"), (k.lit("s00005", T.TEXT), k.lit("s07000", T.TEXT)), False),
                2, lambda r: r["s"] in ("s00005", "s07000")),
    "timestamp_ge": (_cmp(F.GE, "ts", TS0 + dt.timedelta(seconds=9000)), 1,
                     lambda r: r["ts"] >= TS0 + dt.timedelta(seconds=9000)),
    "is_null": (ex.IsNull(_ref("g"), False), 5, lambda r: r["g"] is None),
    "is_not_null": (ex.IsNull(_ref("g"), True), 5, lambda r: r["g"] is not None),
    "null_compare": (k.call(F.GT, _ref("g"), k.lit(7000, T.INT4)), 3,
                     lambda r: r["g"] is not None and r["g"] > 7000),
    "or": (k.call(F.OR, _cmp(F.LT, "id", 100), _cmp(F.GT, "id", 9900)), 2,
           lambda r: r["id"] < 100 or r["id"] > 9900),
    "eq_null_literal": (_cmp(F.EQ, "id", None), 0, lambda r: False),
    "cast_int4_to_int8": (k.call(F.LT, ex.Cast(_ref("i4"), T.INT8), k.lit(1000, T.INT8)), 1,
                          lambda r: r["i4"] < 1000),
    "cast_date_to_timestamp": (k.call(F.GE, ex.Cast(_ref("d"), T.TIMESTAMP),
                                      k.lit(dt.datetime(2000, 1, 1) + dt.timedelta(days=8999,
                                            hours=1), T.TIMESTAMP)), 1,
                               lambda r: r["d"] > D0 + dt.timedelta(days=8999)),
    "float_gt_nan_chunk_kept": (_cmp(F.GT, "f", 4990.0), 2,
                                lambda r: r["f"] is not None and r["f"] == r["f"] and r["f"] > 4990),
    "wide_decimal_le": (_cmp(F.LE, "w", Decimal("0.999")), 1, lambda r: r["w"] <= Decimal("0.999")),
    "ne_not_provable": (_cmp(F.NE, "id", 5), 10, lambda r: r["id"] != 5),
    "false_literal": (k.lit(False, T.BOOL), 0, lambda r: False),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_chunk_skipping_and_filtering(store, case):
    pred, chunks_read, keep = CASES[case]
    spy = _SpyStore(store)
    node = _scan(ALL, pred)
    if case == "float_gt_nan_chunk_kept":
        # NaN > 4990 in SQL; the evaluator's NaN semantics are its own, so only the
        # rows that are plain numbers are compared here.
        got = [r for r in k.run(node, k.ctx(store=spy)).to_pylist() if r["f"] == r["f"]]
    else:
        got = k.run(node, k.ctx(store=spy)).to_pylist()
    assert len({f for f, _ in spy.reads}) == chunks_read
    want = [r for r in store_rows(store) if keep(r)]
    assert sorted(r["id"] for r in got) == sorted(r["id"] for r in want)


_ROWS_CACHE: list = []


def store_rows(store) -> list[dict]:
    if not _ROWS_CACHE:
        _ROWS_CACHE.extend(_data().to_pylist())
    return _ROWS_CACHE


def test_projection_pushdown_reads_only_output_columns(store):
    spy = _SpyStore(store)
    pred = k.call(F.LT, k.col(1, T.INT8), k.lit(10, T.INT8))  # id, output column 1
    out = k.run(_scan([3, 0, 3], pred), k.ctx(store=spy))
    assert {cols for _, cols in spy.reads} == {("s", "id")}
    assert out.schema.names == ["s", "id", "s"]
    assert out.column(1).to_pylist() == list(range(10))
    assert out.column(0).to_pylist() == out.column(2).to_pylist()


def test_scan_without_columns_reads_nothing_and_counts_rows(store):
    spy = _SpyStore(store)
    batches = list(_run_batches(_scan([]), k.ctx(store=spy)))
    assert spy.reads == []
    assert sum(b.num_rows for b in batches) == ROWS


def test_small_chunks_become_big_batches(store):
    batches = list(_run_batches(_scan([0, 1]), k.ctx(store=store)))
    assert len(batches) == 1 and batches[0].num_rows == ROWS
    assert batches[0].schema == pa.schema([("id", pa.int64()), ("d", pa.date32())])


def test_chunks_at_least_min_batch_pass_through_whole(store, monkeypatch):
    monkeypatch.setattr(base, "MIN_BATCH_ROWS", CHUNK)
    batches = list(_run_batches(_scan([0]), k.ctx(store=store)))
    assert [b.num_rows for b in batches] == [CHUNK] * (ROWS // CHUNK)


def test_empty_table_and_analyze_counters(tmp_path):
    s = ShardStore(str(tmp_path), sync=False)
    s.create_table(TABLE.id, TABLE.arrow_schema())
    assert k.run(_scan([0]), k.ctx(store=s)).num_rows == 0


def test_analyze_reports_chunks_skipped(store):
    c = k.ctx(store=store, analyze=True)
    k.run(_scan(ALL, _cmp(F.GE, "id", 9500)), c)
    counters = c.node_stats[0].counters
    assert {k: counters[k] for k in ("chunks_read", "chunks_skipped")} == {
        "chunks_read": 1, "chunks_skipped": 9}
    assert c.node_stats[0].rows == 500


def _run_batches(node, context):
    from segment import executor

    return executor.run(node, context)
