"""ClickBench end to end: `raympp clickbench load` of a small synthetic `hits` into a
2-segment raympp, the same rows into DuckDB, and the 43 queries on both.

Answers are compared with workloads/clickbench/compare.py, which accepts every answer
the query's ORDER BY / LIMIT / OFFSET allows (ties at the window's edges, multisets when
nothing orders the rows) and compares numerics to 9 significant digits. At 20k rows some
queries select nothing (HAVING COUNT(*) > 100000, OFFSET 10000), so each of those also
runs in a scaled variant with smaller constants that does select rows.

The load goes through `clickbench_hits()`, generated on the segments; a test checks that
function's rows and errors. Also here, without a server: the generator is deterministic and independent of the number
of processes, the converter of the published Parquet's raw types, the comparison rejects
wrong answers, and a PARTIAL aggregation that stops merging (GROUP BY WatchID, ClientIP
finds a group per row) still gives the FINAL stage what it needs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from coordinator import cli
from planner import table_functions
from segment.table_functions import clickbench_hits
from workloads.clickbench import compare, load, sql

ROWS = 20_000
SEED = 3

# Queries failing for reasons outside the ClickBench code (reported to the lead).
XFAIL: dict[int, str] = {}

# (query, original text, replacement): constants scaled to 20k rows.
SCALED = {
    28: ("HAVING COUNT(*) > 100000", "HAVING COUNT(*) > 100"),
    29: ("HAVING COUNT(*) > 100000", "HAVING COUNT(*) > 100"),
    39: ("OFFSET 1000", "OFFSET 10"),
    40: ("OFFSET 1000", "OFFSET 100"),
    41: ("OFFSET 100", "OFFSET 0"),
    42: ("OFFSET 10000", "OFFSET 5"),
    43: ("OFFSET 1000", "OFFSET 100"),
}


def _cases() -> list:
    return list(_each_case())


def _each_case():
    for n, text in enumerate(sql.QUERIES, 1):
        marks = [pytest.mark.xfail(reason=XFAIL[n], strict=False)] if n in XFAIL else []
        yield pytest.param(text, id=f"Q{n}", marks=marks)
    for n, (old, new) in SCALED.items():
        text = sql.QUERIES[n - 1]
        assert old in text, (n, old)
        yield pytest.param(text.replace(old, new), id=f"Q{n}-scaled")


@pytest.fixture(scope="module")
def hits(server, tmp_path_factory):
    """`hits` loaded into raympp through the CLI, and the same rows in DuckDB."""
    duckdb = pytest.importorskip("duckdb")
    code = cli.main(["clickbench", "load", "--host", server.host, "--port", str(server.port),
                     "--rows", str(ROWS), "--seed", str(SEED), "--jobs", "1"])
    assert code == 0
    parts = tmp_path_factory.mktemp("clickbench-parts")
    list(load.synthetic_parts(SEED, ROWS, str(parts), jobs=1))
    db = duckdb.connect()
    db.execute("SET threads = 1")
    db.execute(f"CREATE TABLE hits AS SELECT * FROM read_parquet('{parts}/*.parquet')")
    conn = server.connect()
    yield conn, db
    conn.execute("DROP TABLE IF EXISTS hits")
    conn.close()
    db.close()


def test_loaded_rows(hits):
    conn, db = hits
    got = conn.execute("SELECT COUNT(*), SUM(CounterID), MIN(EventTime), MAX(EventDate), "
                       "SUM(length(URL)) FROM hits").fetchone()
    want = db.execute("SELECT COUNT(*), SUM(CounterID), MIN(EventTime), MAX(EventDate), "
                      "SUM(length(URL)) FROM hits").fetchone()
    assert [compare.normalise(v) for v in got] == [compare.normalise(v) for v in want]
    assert got[0] == ROWS


@pytest.mark.parametrize("query", _cases())
def test_query(hits, query):
    conn, db = hits
    oq = compare.oracle_query(query)
    got = conn.execute(query).fetchall()
    want = db.execute(oq.sql).fetchall()
    problem = compare.check(oq, got, want)
    assert problem is None, f"{problem}\n{query}"


def test_run_command(hits, server, capsys):
    code = cli.main(["clickbench", "run", "--host", server.host, "--port", str(server.port),
                     "--queries", "1,2,7-8", "--tries", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "4 of 4 queries ran" in out


def test_segments_generate_their_share(server):
    """clickbench_hits() runs on the segments, each making every n-th block; the rows are
    the generator's, whichever segment made them."""
    import psycopg

    rows = 2 * clickbench_hits.BLOCK_ROWS + 1_000  # three blocks over two segments
    blocks = [clickbench_hits.block(5, rows, i) for i in range(3)]
    table = pa.Table.from_batches(blocks)
    conn = server.connect(autocommit=True)
    try:
        got = conn.execute(f"SELECT count(*), sum(counterid), max(length(url)), "
                           f"min(eventtime) FROM clickbench_hits(5, {rows}) AS h").fetchone()
        assert got[0] == rows
        assert got[1] == pc.sum(table.column("counterid")).as_py()
        assert got[2] == pc.max(pc.utf8_length(table.column("url"))).as_py()
        assert got[3] == pc.min(table.column("eventtime")).as_py()
        # Only blocks 1..2: the last block is short.
        n = conn.execute(f"SELECT count(*) FROM clickbench_hits(5, {rows}, 1, 5)").fetchone()
        assert n[0] == clickbench_hits.BLOCK_ROWS + 1_000
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT count(*) FROM clickbench_hits(5, {rows})").fetchall())
        assert f"Function Scan: clickbench_hits(5, {rows}, 0, 3)" in plan
        assert "locus=strewn" in plan and "Gather Motion 2:1" in plan
        for bad, state in [("clickbench_hits(1)", "42883"), ("clickbench_hits(-1, 5)", "22023"),
                           ("no_such_function(1)", "42883")]:
            with pytest.raises(psycopg.Error) as err:
                conn.execute(f"SELECT count(*) FROM {bad}").fetchall()
            assert err.value.sqlstate == state, bad
    finally:
        conn.close()


# --------------------------------------------------------------------------- no server

def test_generator_is_deterministic(tmp_path):
    rows, size = 25_000, 10_000  # three blocks
    a = [clickbench_hits.block(7, rows, i, size) for i in range(table_functions.n_blocks(rows, size))]
    assert [b.num_rows for b in a] == [10_000, 10_000, 5_000]
    assert a[0].schema == clickbench_hits.arrow_schema() and a[0].num_columns == 105
    clickbench_hits.vocabulary.cache_clear()
    assert clickbench_hits.block(7, rows, 1, size).equals(a[1])
    assert not clickbench_hits.block(8, rows, 1, size).equals(a[1])
    # Parts written by two processes hold the same rows as the blocks.
    parts = sorted(load.synthetic_parts(7, rows, str(tmp_path), jobs=2, size=size))
    assert [p for p, _ in parts] == sorted(str(p) for p in tmp_path.glob("*.parquet"))
    for (path, n), b in zip(parts, a):
        assert n == b.num_rows
        assert pq.read_table(path).equals(pa.Table.from_batches([b]))


def test_generator_shapes():
    b = clickbench_hits.block(1, 50_000, 0)
    phrase = b.column("searchphrase")
    empty = pc.sum(pc.equal(phrase, "")).as_py() / b.num_rows
    assert 0.8 < empty < 0.95
    assert pc.sum(pc.equal(b.column("counterid"), clickbench_hits.TOP_COUNTER)).as_py() > 1_000
    assert pc.sum(pc.equal(b.column("advengineid"), 0)).as_py() / b.num_rows > 0.95
    assert pc.all(pc.starts_with(b.column("url"), "http")).as_py()
    days = pc.unique(b.column("eventdate"))
    assert len(days) == clickbench_hits.MONTH_DAYS
    assert len(pc.unique(b.column("userid"))) < b.num_rows / 2  # users come back


def _as_published(b: pa.RecordBatch) -> pa.Table:
    """Rows in the published hits.parquet's raw types: strings as BINARY, times as Unix
    seconds, EventDate a day number, some integers of other widths, CamelCase names."""
    raw = []
    for f in b.schema:
        col = b.column(f.name)
        if pa.types.is_string(f.type):
            col = col.cast(pa.binary())
        elif pa.types.is_timestamp(f.type):
            col = pc.divide(col.cast(pa.int64()), 1_000_000)
        elif pa.types.is_date(f.type):
            col = col.cast(pa.int32()).cast(pa.uint16())
        elif f.type == pa.int16():
            col = col.cast(pa.int32())
        raw.append(col)
    names = [n.replace("id", "ID") for n in b.schema.names]  # CamelCase-ish: case-blind
    return pa.Table.from_arrays(raw, names=names)


def test_convert_real_parquet_types():
    """Converted back from the published Parquet's raw types, rows equal the source."""
    b = clickbench_hits.block(1, 2_000, 0)
    assert load.convert_real(_as_published(b)).equals(b)


def test_load_the_published_formats(raympp_cluster, tmp_path):
    """`raympp clickbench load hits.parquet` (raw published types) and `... hits.tsv.gz`
    (PostgreSQL text format, here written by COPY TO) load the same rows."""
    import gzip

    srv = raympp_cluster(1)
    rows = 3_000
    b = clickbench_hits.block(2, rows, 0)
    pq.write_table(_as_published(b), tmp_path / "hits.parquet", row_group_size=1_000)
    probe = ("SELECT count(*), sum(counterid), sum(length(url)), min(eventtime), "
             "max(eventdate), count(DISTINCT title) FROM hits")
    t = pa.Table.from_batches([b])
    want = (rows, pc.sum(t.column("counterid")).as_py(),
            pc.sum(pc.utf8_length(t.column("url"))).as_py(),
            pc.min(t.column("eventtime")).as_py(), pc.max(t.column("eventdate")).as_py(),
            len(pc.unique(t.column("title"))))
    args = ["clickbench", "load", "--host", srv.host, "--port", str(srv.port), "--jobs", "1"]
    conn = srv.connect(autocommit=True)
    try:
        assert cli.main(args + [str(tmp_path / "hits.parquet")]) == 0
        assert conn.execute(probe).fetchone() == want
        with conn.cursor().copy("COPY hits TO STDOUT") as copy, \
                gzip.open(tmp_path / "hits.tsv.gz", "wb") as out:
            for data in copy:
                out.write(data)
        assert cli.main(args + ["--no-analyze", str(tmp_path / "hits.tsv.gz")]) == 0
        assert conn.execute(probe).fetchone() == want
    finally:
        conn.execute("DROP TABLE IF EXISTS hits")
        conn.close()


def test_compare_rejects_wrong_answers():
    q = compare.oracle_query("SELECT k, COUNT(*) AS c FROM t GROUP BY k ORDER BY c DESC LIMIT 2")
    assert q.shown == (1,) and q.limit == 2 and "LIMIT" not in q.sql
    full = [("a", 5, 5), ("b", 3, 3), ("c", 3, 3), ("d", 1, 1)]
    assert compare.check(q, [("a", 5), ("b", 3)], full) is None
    assert compare.check(q, [("a", 5), ("c", 3)], full) is None      # a tie at the edge
    assert compare.check(q, [("b", 3), ("a", 5)], full) is not None  # out of order
    assert compare.check(q, [("a", 5), ("d", 1)], full) is not None  # not in the window
    assert compare.check(q, [("a", 5)], full) is not None            # too few rows
    assert compare.check(q, [("a", 5), ("b", 4)], full) is not None  # wrong count
    unordered = compare.oracle_query("SELECT k, SUM(x) FROM t GROUP BY k")
    from decimal import Decimal
    assert compare.check(unordered, [(2, Decimal("1.5000000001")), (1, 2.0)],
                         [(1, 2), (2, 1.5)]) is None
    assert compare.check(unordered, [(1, 2.0)], [(1, 2), (2, 1.5)]) is not None


@pytest.mark.parametrize("raw_min_rows", [1 << 30, 100])
def test_partial_aggregation_that_stops_merging(monkeypatch, raw_min_rows):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "operators"))
    import opkit  # the operator tests' Source node and helpers

    from planner import expr as ex
    from planner import plan
    from planner import types as T
    from segment.operators import hash_agg

    monkeypatch.setattr(hash_agg, "SKIP_PROBE_ROWS", 1_000)
    # With raw_min_rows 100, batches also go into group tables ungrouped (raw state rows),
    # merged every 1,200 rows.
    monkeypatch.setattr(hash_agg, "RAW_MIN_ROWS", raw_min_rows)
    monkeypatch.setattr(hash_agg, "RAW_MERGE_ROWS", 1_200)
    monkeypatch.setattr(hash_agg.base, "BATCH_ROWS", 1_200)
    rng = np.random.default_rng(5)
    n = 6_000
    table = pa.table({"k": rng.integers(0, 5_000, n), "x": rng.integers(-9, 9, n)})
    src = opkit.source(table, [T.INT8, T.INT8], batch_rows=500)
    A = ex.AggFunc
    aggs = (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
            ex.AggCall(A.SUM, opkit.col(1, T.INT8), False, T.numeric(38, 0)),
            ex.AggCall(A.MIN, opkit.col(1, T.INT8), False, T.INT8))
    fields = plan.fields_of([("k", T.INT8), ("c", T.INT8), ("s", T.numeric(38, 0)),
                             ("m", T.INT8)])
    keys = (opkit.col(0, T.INT8),)
    partial = opkit.run(plan.Aggregate(src, keys, aggs, plan.AggMode.PARTIAL, fields))
    groups = len(pc.unique(table.column("k")))
    assert partial.num_rows > groups  # it stopped merging: groups repeat across batches
    merge = (ex.AggCall(A.SUM, opkit.col(1, T.INT8), False, T.INT8),
             ex.AggCall(A.SUM, opkit.col(2, T.numeric(38, 0)), False, T.numeric(38, 0)),
             ex.AggCall(A.MIN, opkit.col(3, T.INT8), False, T.INT8))
    final = opkit.run(plan.Aggregate(opkit.source(partial, [f.type for f in fields]), keys,
                                     merge, plan.AggMode.FINAL, fields))
    single = opkit.run(plan.Aggregate(src, keys, aggs, plan.AggMode.SINGLE, fields))
    assert final.num_rows == groups
    assert final.sort_by("k").equals(single.sort_by("k"))
    # Keys unique within each batch but repeating across batches: raw batches, then
    # grouped again once a merge shows the repetition.
    repeat = pa.table({"k": np.tile(np.arange(500), 12), "x": rng.integers(-9, 9, n)})
    src = opkit.source(repeat, [T.INT8, T.INT8], batch_rows=500)
    got = opkit.run(plan.Aggregate(src, keys, aggs, plan.AggMode.SINGLE, fields))
    want = repeat.group_by("k").aggregate([("x", "count"), ("x", "sum"), ("x", "min")])
    assert got.num_rows == 500
    got = got.sort_by("k")
    want = want.sort_by("k")
    assert got.column("c").to_pylist() == want.column("x_count").to_pylist()
    assert [int(v) for v in got.column("s").to_pylist()] == want.column("x_sum").to_pylist()
    assert got.column("m").to_pylist() == want.column("x_min").to_pylist()
