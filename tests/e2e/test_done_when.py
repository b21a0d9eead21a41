"""The Foundation issue's done-when scenario: a 1M-row CSV loaded with psql's \\copy into a
hash-distributed table, a grouped aggregate equal to DuckDB's answer, and an EXPLAIN that
shows the Gather Motion and the two aggregation phases."""

from __future__ import annotations

import shutil

import duckdb
import pytest

pytestmark = pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")

N_ROWS = 1_000_000
QUERY = "SELECT k % 10, count(*), sum(x) FROM {t} GROUP BY 1 ORDER BY 1"


def test_copy_1m_rows_group_by_matches_duckdb(conn, psql, table, tmp_path):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k bigint, x bigint) DISTRIBUTED BY (k)")
    csv = tmp_path / "t.csv"
    duck = duckdb.connect()
    duck.execute(f"COPY (SELECT i AS k, (i * 7919) % 100003 - 50000 AS x "
                 f"FROM range(1, {N_ROWS + 1}) r(i)) TO '{csv}' (FORMAT csv, HEADER false)")
    psql("-c", f"\\copy {t} from '{csv}' csv")

    got = conn.execute(QUERY.format(t=t)).fetchall()
    duck.execute(f"CREATE TABLE {t} AS SELECT * FROM read_csv('{csv}', header = false, "
                 f"columns = {{'k': 'BIGINT', 'x': 'BIGINT'}})")
    want = duck.execute(QUERY.format(t=t)).fetchall()
    assert len(want) == 10
    assert [tuple(int(v) for v in r) for r in got] == [tuple(r) for r in want]

    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + QUERY.format(t=t)).fetchall())
    assert "Gather" in plan, plan
    assert "mode=partial" in plan, plan
    assert "mode=final" in plan, plan
