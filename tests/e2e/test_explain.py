"""EXPLAIN and EXPLAIN ANALYZE through the wire: one text column named QUERY PLAN, the
distributed plan at the server's segment count, and measured rows with ANALYZE."""

from __future__ import annotations

import re

import pytest


@pytest.fixture
def explained_table(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8, x int8) DISTRIBUTED BY (k)")
    conn.execute(f"INSERT INTO {t} SELECT i, i % 100 FROM generate_series(1, 5000) AS g(i)")
    return t


def test_explain(conn, explained_table):
    cur = conn.execute(f"EXPLAIN SELECT x, count(*) FROM {explained_table} GROUP BY x")
    assert [d.name for d in cur.description] == ["QUERY PLAN"]
    lines = [r[0] for r in cur.fetchall()]
    text = "\n".join(lines)
    gather = next(i for i, line in enumerate(lines) if "Gather Motion 2:1" in line)
    final = next(i for i, line in enumerate(lines) if "mode=final" in line)
    partial = next(i for i, line in enumerate(lines) if "mode=partial" in line)
    scan = next(i for i, line in enumerate(lines) if f"Scan: {explained_table}" in line)
    assert final < gather < partial < scan, text   # top-down: coordinator, then segments
    assert lines[-1] == "Segments: 2", text
    assert "actual rows" not in text


def test_explain_analyze(conn, explained_table):
    lines = [r[0] for r in conn.execute(
        f"EXPLAIN ANALYZE SELECT x, count(*) FROM {explained_table} GROUP BY x").fetchall()]
    text = "\n".join(lines)
    assert re.search(r"actual rows=100\b", lines[0]), text
    gather = next(line for line in lines if "Gather Motion 2:1" in line)
    assert re.search(r"actual rows=\d+", gather), text
    scan = next(line for line in lines if f"Scan: {explained_table}" in line)
    assert re.search(r"actual rows=5000\b", scan), text
    assert any(line.startswith("Execution Time:") for line in lines), text
    # ANALYZE ran the query but changed nothing
    assert conn.execute(f"SELECT count(*) FROM {explained_table}").fetchone() == (5000,)


def test_explain_with_parameters(conn, explained_table):
    lines = [r[0] for r in conn.execute(
        f"EXPLAIN SELECT k FROM {explained_table} WHERE x = %s", (7,)).fetchall()]
    assert any("filter" in line.lower() for line in lines), lines


def test_explain_analyze_shows_compiled_paths(conn, explained_table):
    """With jit_above_cost 0 every batch compiles: the Filter's and Project's loops and
    the aggregate's group table show in EXPLAIN ANALYZE, with their compile time, which
    is 0 the second time (the kernel is in memory already). SET jit = off shows none."""
    sql = (f"EXPLAIN ANALYZE SELECT x, sum(k * 2) FROM {explained_table} "
           f"WHERE k * 3 > 10 AND x < 90 GROUP BY x")
    conn.execute("SET jit_above_cost = 0")
    try:
        conn.execute("SET jit_above_cost = 0")
        first = "\n".join(r[0] for r in conn.execute(sql).fetchall())
        again = "\n".join(r[0] for r in conn.execute(sql).fetchall())
        assert re.search(r"jit=\(batches=[1-9]\d* fallbacks=0 compile=\d+ ms\)", first), first
        assert "group_table=" in first, first
        compiles = re.findall(r"compile=(\d+) ms", again)
        assert compiles and all(c == "0" for c in compiles), again
        conn.execute("SET jit = off")
        off = "\n".join(r[0] for r in conn.execute(sql).fetchall())
        assert "jit=" not in off and "group_table" not in off, off
    finally:
        conn.execute("RESET jit")
        conn.execute("RESET jit_above_cost")


def test_estimates_of_common_values_after_analyze(conn, table):
    """ANALYZE keeps each column's most common values: `c = 62` where 62 is 40% of
    20,000 rows is estimated near 8,000 (1/distinct would say about 33), a rare value
    near its share of what the common values leave, a common string likewise."""
    t = table()
    conn.execute(f"CREATE TABLE {t} (id int8, c int4, s text) DISTRIBUTED BY (id)")
    conn.execute(f"INSERT INTO {t} SELECT i, CASE WHEN i % 5 < 2 THEN 62 ELSE i % 601 END, "
                 f"CASE WHEN i % 4 = 0 THEN 'common' ELSE 'v' || i END "
                 f"FROM generate_series(1, 20000) AS g(i)")
    conn.execute(f"ANALYZE {t}")

    def estimate(where):
        line = next(r[0] for r in conn.execute(f"EXPLAIN SELECT id FROM {t} WHERE {where}")
                    if f"Scan: {t}" in r[0])
        return int(re.search(r"rows=(\d+)", line).group(1))
    assert 6_000 <= estimate("c = 62") <= 10_000
    assert estimate("c = 17") <= 100
    assert 4_000 <= estimate("s = 'common'") <= 6_000
    assert estimate("c <> 62") <= 14_000
