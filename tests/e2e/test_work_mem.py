"""work_mem through SQL: with a budget far below the working set, grouping, sorting and
joining spill on the segments, answer exactly as without, and EXPLAIN ANALYZE shows it."""

from __future__ import annotations

import re

import pytest

ROWS = 400_000


@pytest.fixture(scope="module")
def spill_table(server):
    with server.connect() as c:
        c.execute("DROP TABLE IF EXISTS sp_t")
        c.execute("CREATE TABLE sp_t (k bigint, s text, v bigint) DISTRIBUTED BY (k)")
        c.execute(f"INSERT INTO sp_t SELECT g, 'key-' || (g::bigint * 7919 % {ROWS}), g % 1000 "
                  f"FROM generate_series(1, {ROWS}) AS g")
        c.execute("ANALYZE sp_t")
    yield "sp_t"
    with server.connect() as c:
        c.execute("DROP TABLE IF EXISTS sp_t")


QUERIES = [
    # many distinct text keys, grouped away from the distribution key
    "SELECT s, count(*), sum(v) FROM sp_t GROUP BY s ORDER BY s",
    # a full sort of many batches (an operator may always hold one, however small the
    # budget, so one batch per segment would not spill)
    "SELECT a.k, a.s, g FROM sp_t a CROSS JOIN generate_series(1, 6) g "
    "ORDER BY a.s DESC, g, a.k",
    # a join whose build side is far larger than the budget
    "SELECT count(*), sum(a.v + b.v) FROM sp_t a JOIN sp_t b ON a.s = b.s",
]


def plan(conn, sql):
    return "\n".join(r[0] for r in conn.execute("EXPLAIN ANALYZE " + sql).fetchall())


@pytest.mark.parametrize("sql", QUERIES)
def test_small_work_mem_spills_and_answers_the_same(server, spill_table, sql):
    with server.connect() as c:
        want = c.execute(sql).fetchall()
        c.execute("SET work_mem = '1MB'")
        assert c.execute("SHOW work_mem").fetchone() == ("1MB",)
        got = c.execute(sql).fetchall()
        text = plan(c, sql)
    assert got == want
    assert len(got) > 0
    spilled = [int(m) for m in re.findall(r"spilled=(\d+)kB", text)]
    assert spilled and sum(spilled) > 1024, text
