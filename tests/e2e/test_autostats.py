"""Statistics without being asked (coordinator/autostats.py, Greenplum's gp_autostats_mode):
INSERT, COPY FROM and CREATE TABLE AS into a table without statistics leave it analyzed
once their transaction commits; never after a ROLLBACK, never with gp_autostats_mode =
none, and (on_no_stats) not again once it has statistics.

What ANALYZE recorded is read from the coordinator's catalog (the committed table) and,
as a user sees it, from EXPLAIN: a GROUP BY on a column ANALYZE described is estimated at
its distinct count, else at 10 * sqrt(rows)."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from psycopg import errors

from coordinator import table_stats

N = 1000
GROUPS = 7
GUESS = 316  # groups guessed for N rows without statistics: 10 * sqrt(N)


def stats(server, t):
    """The committed table's statistics (None when no committed table has that name)."""
    table = server.engine.catalog.get_table(t)
    return None if table is None else table.stats


def analyzed(server, t) -> bool:
    return table_stats.has_statistics(stats(server, t))


def group_estimate(conn, t) -> int:
    """The groups EXPLAIN estimates the first aggregation over the scan makes."""
    lines = [r[0] for r in conn.execute(f"EXPLAIN SELECT k, count(*) FROM {t} GROUP BY k")]
    first = [line for line in lines if "Aggregate:" in line][-1]
    return int(re.search(r"rows=(\d+)", first).group(1))


def create(conn, t):
    conn.execute(f"CREATE TABLE {t} (id int8, k int4) DISTRIBUTED BY (id)")


def fill(conn, t, first=1, n=N, groups=GROUPS):
    conn.execute(f"INSERT INTO {t} SELECT i, i % {groups} "
                 f"FROM generate_series({first}, {first + n - 1}) AS g(i)")


def test_setting_set_show_reset(conn):
    assert conn.execute("SHOW gp_autostats_mode").fetchone() == ("on_no_stats",)
    conn.execute("SET gp_autostats_mode = NONE")
    assert conn.execute("SHOW gp_autostats_mode").fetchone() == ("none",)
    conn.execute("SET gp_autostats_mode TO 'on_change'")
    assert conn.execute("SHOW gp_autostats_mode").fetchone() == ("on_change",)
    conn.execute("RESET gp_autostats_mode")
    assert conn.execute("SHOW gp_autostats_mode").fetchone() == ("on_no_stats",)
    with pytest.raises(errors.InvalidParameterValue) as e:
        conn.execute("SET gp_autostats_mode = always")
    assert "Available values: none, on_change, on_no_stats." in (e.value.diag.message_hint or "")
    assert conn.execute("SHOW gp_autostats_on_change_threshold").fetchone() == ("2147483647",)
    conn.execute("SET gp_autostats_on_change_threshold = 10")
    assert conn.execute("SHOW gp_autostats_on_change_threshold").fetchone() == ("10",)
    with pytest.raises(errors.InvalidParameterValue):
        conn.execute("SET gp_autostats_on_change_threshold = -1")
    conn.execute("RESET ALL")
    assert conn.execute("SHOW gp_autostats_on_change_threshold").fetchone() == ("2147483647",)


@pytest.mark.parametrize("source", [
    "SELECT i, i % 7 FROM generate_series(1, 1000) AS g(i)",              # on the segments
    "SELECT id, k FROM {src}",                                             # table to table
    "VALUES " + ", ".join(f"({i}, {i % 7})" for i in range(1, 1001)),     # via the coordinator
], ids=["series", "table", "values"])
def test_insert_into_a_table_without_statistics_analyzes_it(server, conn, table, source):
    src, t = table(), table()
    with conn.transaction():  # one transaction: src is loaded without being analyzed
        create(conn, src)
        conn.execute("SET LOCAL gp_autostats_mode = none")
        fill(conn, src)
    assert not analyzed(server, src) and stats(server, src).rows == N
    create(conn, t)
    assert group_estimate(conn, t) == 1  # no rows, no statistics
    conn.execute(f"INSERT INTO {t} {source.format(src=src)}")
    s = stats(server, t)
    assert analyzed(server, t) and s.rows == N
    assert s.columns["k"].distinct == GROUPS and s.columns["id"].distinct == N
    assert group_estimate(conn, t) == GROUPS


def test_copy_from_stdin_analyzes(server, conn, table):
    t = table()
    create(conn, t)
    with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
        for i in range(1, N + 1):
            cp.write(f"{i}\t{i % GROUPS}\n")
    assert analyzed(server, t) and stats(server, t).rows == N
    assert group_estimate(conn, t) == GROUPS


def test_copy_from_file_analyzes(server, conn, table, tmp_path):
    t = table()
    create(conn, t)
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"id": pa.array(range(1, N + 1), pa.int64()),
                             "k": pa.array([i % GROUPS for i in range(1, N + 1)], pa.int32())}),
                   path)
    assert conn.execute(f"COPY {t} FROM '{path}' (FORMAT parquet)").rowcount == N
    assert analyzed(server, t) and stats(server, t).columns["k"].distinct == GROUPS


def test_create_table_as_analyzes(server, conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} AS SELECT i AS id, i % 7 AS k "
                 f"FROM generate_series(1, {N}) AS g(i) DISTRIBUTED BY (id)")
    assert analyzed(server, t) and stats(server, t).rows == N
    assert group_estimate(conn, t) == GROUPS


def test_in_a_block_statistics_come_with_commit(server, conn, table):
    t = table()
    with server.connect() as other:
        conn.execute("BEGIN")
        create(conn, t)
        fill(conn, t)
        assert stats(server, t) is None  # nothing committed yet
        # Inside the block the planner has the load's row estimate, no ANALYZE yet.
        assert group_estimate(conn, t) == GUESS
        conn.execute("COMMIT")
        assert analyzed(server, t) and stats(server, t).rows == N
        assert group_estimate(other, t) == GROUPS


def test_no_statistics_from_rolled_back_rows(server, conn, table):
    t = table()
    create(conn, t)
    conn.execute("BEGIN")
    fill(conn, t)
    conn.execute("ROLLBACK")
    s = stats(server, t)
    assert not analyzed(server, t) and s.rows == 0 and not s.columns
    # A block that fails rolls back too (COMMIT answers ROLLBACK).
    conn.execute("BEGIN")
    fill(conn, t)
    with pytest.raises(errors.DivisionByZero):
        conn.execute("SELECT 1 / 0")
    conn.execute("COMMIT")
    assert stats(server, t).rows == 0 and not analyzed(server, t)
    # A created table and its rows rolled back leave nothing to analyze.
    u = table()
    conn.execute("BEGIN")
    conn.execute(f"CREATE TABLE {u} AS SELECT i AS id FROM generate_series(1, 10) AS g(i)")
    conn.execute("ROLLBACK")
    assert stats(server, u) is None
    # The next committed load analyzes exactly the committed rows.
    fill(conn, t, n=100)
    assert analyzed(server, t) and stats(server, t).rows == 100


def test_mode_none_leaves_the_table_unanalyzed(server, conn, table):
    t = table()
    conn.execute("SET gp_autostats_mode = none")
    create(conn, t)
    fill(conn, t)
    conn.execute(f"CREATE TABLE {t}_ctas AS SELECT * FROM {t}")
    try:
        assert not analyzed(server, t) and not analyzed(server, f"{t}_ctas")
        assert stats(server, t).rows == N  # the load's row estimate still counts
        assert group_estimate(conn, t) == GUESS
        conn.execute("RESET gp_autostats_mode")
        fill(conn, t, first=N + 1, n=10)
        assert analyzed(server, t) and stats(server, t).rows == N + 10
    finally:
        conn.execute(f"DROP TABLE {t}_ctas")


def test_a_table_with_statistics_is_not_analyzed_again(server, conn, table):
    t = table()
    create(conn, t)
    fill(conn, t)
    before = stats(server, t)
    assert before.columns["k"].distinct == GROUPS
    fill(conn, t, first=N + 1, groups=100)
    after = stats(server, t)
    assert after.columns == before.columns  # on_no_stats: the old statistics stay
    assert after.rows == 2 * N              # and the row estimate grows
    conn.execute(f"ANALYZE {t}")
    assert stats(server, t).columns["k"].distinct == 100


def test_a_table_analyzed_while_empty_has_no_statistics(server, conn, table):
    """Greenplum's on_no_stats counts a table analyzed while empty (reltuples < 1) as one
    without statistics."""
    t = table()
    create(conn, t)
    conn.execute(f"ANALYZE {t}")
    assert stats(server, t).columns and not analyzed(server, t)
    fill(conn, t)
    assert analyzed(server, t) and stats(server, t).columns["k"].distinct == GROUPS


def test_loads_of_no_rows_analyze_nothing(server, conn, table):
    t = table()
    create(conn, t)
    conn.execute(f"INSERT INTO {t} SELECT 1, 1 WHERE false")
    assert not stats(server, t).columns


def test_on_change_threshold(server, conn, table):
    t = table()
    create(conn, t)
    fill(conn, t)
    assert stats(server, t).columns["k"].distinct == GROUPS
    conn.execute("SET gp_autostats_mode = on_change")
    conn.execute("SET gp_autostats_on_change_threshold = 100")
    fill(conn, t, first=N + 1, n=100, groups=50)   # not more than the threshold
    assert stats(server, t).columns["k"].distinct == GROUPS
    fill(conn, t, first=N + 101, n=101, groups=50)
    s = stats(server, t)
    assert s.columns["k"].distinct == 50 and s.rows == N + 201


def test_a_failed_analyze_does_not_fail_the_load(server, conn, table, monkeypatch, caplog):
    def broken(session, table):
        raise RuntimeError("analyze broke")

    monkeypatch.setattr(table_stats, "analyze_table", broken)
    t = table()
    create(conn, t)
    fill(conn, t)
    conn.execute("BEGIN")
    fill(conn, t, first=N + 1)
    conn.execute("COMMIT")
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (2 * N,)
    assert not analyzed(server, t) and stats(server, t).rows == 2 * N
    assert "analyze broke" in caplog.text


def test_a_table_dropped_in_the_loading_block_is_not_analyzed(server, conn, table):
    t = table()
    conn.execute("BEGIN")
    create(conn, t)
    fill(conn, t)
    conn.execute(f"DROP TABLE {t}")
    conn.execute("COMMIT")
    assert stats(server, t) is None


def reltuples(conn, t) -> float:
    return conn.execute("SELECT reltuples FROM pg_class WHERE relname = %s", (t,)).fetchone()[0]


def test_truncate_leaves_no_statistics_until_the_next_load(server, conn, table):
    """TRUNCATE resets the row estimate at its commit (PostgreSQL resets reltuples), so the
    next load analyzes the table again rather than counting rows that are gone."""
    t = table()
    create(conn, t)
    fill(conn, t)
    assert reltuples(conn, t) == N and analyzed(server, t)
    conn.execute("BEGIN")
    conn.execute(f"TRUNCATE {t}")
    conn.execute("ROLLBACK")
    assert reltuples(conn, t) == N and analyzed(server, t)
    conn.execute(f"TRUNCATE {t}")
    assert reltuples(conn, t) == 0 and not analyzed(server, t)
    fill(conn, t, n=500, groups=50)
    assert reltuples(conn, t) == 500 and stats(server, t).columns["k"].distinct == 50
    # In one block: the rows loaded before the TRUNCATE do not count, those after do.
    conn.execute("BEGIN")
    fill(conn, t, first=1001, n=300)
    conn.execute(f"TRUNCATE {t}")
    fill(conn, t, first=2001, n=200, groups=20)
    conn.execute("COMMIT")
    assert reltuples(conn, t) == 200 and stats(server, t).columns["k"].distinct == 20


def test_truncate_of_a_table_created_in_the_block(server, conn, table):
    t = table()
    conn.execute("SET gp_autostats_mode = none")
    conn.execute("BEGIN")
    create(conn, t)
    fill(conn, t)
    conn.execute(f"TRUNCATE {t}")
    fill(conn, t, n=100)
    conn.execute("COMMIT")
    assert reltuples(conn, t) == 100 and not analyzed(server, t)
