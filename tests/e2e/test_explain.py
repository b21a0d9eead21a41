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
