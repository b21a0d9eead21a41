"""The plan cache (coordinator/plan_cache.py): a query is planned once per text, parameter
values and catalog state, and never run with a plan whose meaning could differ.

`engine.plans.made` counts the plans made for queries (describe and execute alike); the
tests run in one process with the server, one statement at a time, so its differences
are this test's plans.
"""

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import psycopg
import pytest


@pytest.fixture
def plans(server):
    """plans() -> plans made since the previous call."""
    cache = server.engine.plans
    last = [cache.made]

    def made() -> int:
        now = cache.made
        n, last[0] = now - last[0], now
        return n
    return made


def _filled(conn, name: str, n: int = 100) -> str:
    conn.execute(f"CREATE TABLE {name} (id int, v float8)")
    conn.execute(f"INSERT INTO {name} SELECT g, g * 0.5 FROM generate_series(1, {n}) g")
    return name


def test_plan_made_once_for_describe_and_execute_and_reused(server, conn, table, plans):
    t = _filled(conn, table())
    sql = f"SELECT count(*), sum(v) FROM {t}"
    plans()
    # Parse (which describes the query), then Bind and Execute: planned once.
    assert conn.execute(sql, prepare=True).fetchall() == [(100, 2525.0)]
    assert plans() == 1
    # The named statement again, the text as a simple Query and as unnamed Parse/Execute.
    assert conn.execute(sql, prepare=True).fetchall() == [(100, 2525.0)]
    assert conn.execute(sql, prepare=False).fetchall() == [(100, 2525.0)]
    with conn.cursor(binary=True) as cur:  # binary results: the extended protocol
        assert cur.execute(sql, prepare=False).fetchall() == [(100, 2525.0)]
    assert plans() == 0
    # Another session shares the plan.
    with server.connect() as other:
        assert other.execute(sql).fetchall() == [(100, 2525.0)]
    assert plans() == 0


def test_parameters_give_their_own_answers(conn, table, plans):
    t = _filled(conn, table())
    sql = f"SELECT count(*) FROM {t} WHERE id <= %s"
    counts = [conn.execute(sql, (n,), prepare=True).fetchone()[0] for n in (10, 50, 10, 0)]
    assert counts == [10, 50, 10, 0]
    plans()
    assert conn.execute(sql, (50,), prepare=True).fetchone()[0] == 50  # values seen: reused
    assert plans() == 0
    # Values equal to Python but not to SQL are told apart.
    got = [conn.execute("SELECT %s::numeric::text", (d,), prepare=True).fetchone()[0]
           for d in (Decimal("1.0"), Decimal("1.00"), Decimal("1.0"))]
    assert got == ["1.0", "1.00", "1.0"]
    got = [conn.execute("SELECT %s::text", (v,)).fetchone()[0] for v in ("1", "01", "1")]
    assert got == ["1", "01", "1"]


def test_any_ddl_and_analyze_invalidate(conn, table, plans):
    t = _filled(conn, table())
    sql = f"SELECT * FROM {t} WHERE id = 3"
    assert conn.execute(sql).fetchall() == [(3, 1.5)]
    plans()
    conn.execute(sql).fetchall()
    assert plans() == 0
    conn.execute(f"CREATE TABLE {table()} (x int)")  # any table: the catalog changed
    conn.execute(sql).fetchall()
    assert plans() == 1
    conn.execute(f"ANALYZE {t}")
    conn.execute(sql).fetchall()
    assert plans() == 1
    conn.execute(sql).fetchall()
    assert plans() == 0
    conn.execute(f"DROP TABLE {t}")
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute(sql)
    conn.execute(f"CREATE TABLE {t} (id int, label text)")
    conn.execute(f"INSERT INTO {t} VALUES (3, 'three')")
    assert conn.execute(sql).fetchall() == [(3, "three")]


def test_search_path_is_part_of_the_key(conn, table):
    t = _filled(conn, table(), 5)
    sql = f"SELECT count(*) FROM {t}"
    assert conn.execute(sql).fetchone()[0] == 5
    conn.execute("SET search_path = pg_catalog")
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute(sql)
    conn.execute("RESET search_path")
    assert conn.execute(sql).fetchone()[0] == 5


def test_plans_that_read_the_session_or_data_are_not_kept(conn, table, plans):
    t = _filled(conn, table(), 3)
    sql = "SELECT current_setting('work_mem')"
    assert conn.execute(sql).fetchone()[0] == "64MB"
    conn.execute("SET work_mem = '32MB'")
    assert conn.execute(sql).fetchone()[0] == "32MB"
    conn.execute("RESET work_mem")
    # An InitPlan's result is part of its plan: such plans are made at every execution.
    # The rows change inside a block, where the catalog (the statistics) does not.
    initplan = f"SELECT (SELECT count(*) FROM {t}) AS n"
    plain = f"SELECT count(*) FROM {t}"
    assert conn.execute(initplan).fetchone()[0] == 3
    assert conn.execute(plain).fetchone()[0] == 3
    conn.execute("BEGIN")
    conn.execute(f"INSERT INTO {t} VALUES (4, 2.0)")
    plans()
    assert conn.execute(initplan).fetchone()[0] == 4
    assert plans() == 1  # described from the cache, planned again to run
    assert conn.execute(plain).fetchone()[0] == 4
    assert plans() == 0
    conn.execute("COMMIT")


def test_a_transactions_ddl_is_not_shared(server, conn, table, plans):
    t = _filled(conn, table(), 4)
    sql = f"SELECT * FROM {t} ORDER BY 1 LIMIT 1"
    assert conn.execute(sql).fetchall() == [(1, 0.5)]
    with server.connect() as other:
        other.execute("BEGIN")
        other.execute(f"DROP TABLE {t}")
        other.execute(f"CREATE TABLE {t} (name text)")
        other.execute(f"INSERT INTO {t} VALUES ('new')")
        # The transaction sees its own table, not the plan cached for the committed one...
        assert other.execute(sql).fetchall() == [("new",)]
        assert other.execute(sql, prepare=True).fetchall() == [("new",)]
        # ... and the others see the committed table, with the plan cached for it.
        plans()
        assert conn.execute(sql).fetchall() == [(1, 0.5)]
        assert plans() == 0
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == 4
        other.execute("ROLLBACK")
        assert conn.execute(sql).fetchall() == [(1, 0.5)]
        other.execute("BEGIN")
        other.execute(f"DROP TABLE {t}")
        other.execute(f"CREATE TABLE {t} (name text)")
        other.execute(f"INSERT INTO {t} VALUES ('committed')")
        other.execute("COMMIT")
    assert conn.execute(sql).fetchall() == [("committed",)]


def test_sql_execute_arguments_are_not_keyed_by_the_text(conn):
    """EXECUTE name (args) runs the prepared text with its arguments in the tree: each
    gets its own answer, never another's plan."""
    conn.execute("PREPARE plus_one (int) AS SELECT $1 + 1")
    try:
        got = [conn.execute(f"EXECUTE plus_one ({n})").fetchone()[0] for n in (1, 2, 1, 5)]
        assert got == [2, 3, 2, 6]
    finally:
        conn.execute("DEALLOCATE plus_one")


def test_sessions_share_a_plan_at_once(server, conn, table):
    t = _filled(conn, table(), 50)
    sql = f"SELECT count(*), min(id), max(id) FROM {t} WHERE id > 10"
    assert conn.execute(sql).fetchone() == (40, 11, 50)

    def run(i):
        with server.connect() as c:
            return {c.execute(sql, prepare=bool(i % 2)).fetchone() for _ in range(10)}
    with ThreadPoolExecutor(4) as pool:
        answers = set().union(*pool.map(run, range(4)))
    assert answers == {(40, 11, 50)}


def test_plans_made_from_initplans_are_reused_while_they_return_the_same(conn, table, plans):
    t = _filled(conn, table(), 10)
    sql = f"SELECT id FROM {t} WHERE v > (SELECT avg(v) FROM {t}) ORDER BY id"
    assert conn.execute(sql).fetchall() == [(i,) for i in range(6, 11)]
    plans()
    # the subquery runs again and returns what it did: the plan is not made again
    assert conn.execute(sql).fetchall() == [(i,) for i in range(6, 11)]
    assert conn.execute(sql, prepare=True).fetchall() == [(i,) for i in range(6, 11)]
    assert plans() == 0
    # inside a block the rows change (the catalog does not): the subquery's answer
    # differs, so the plan is made anew, from it
    conn.execute("BEGIN")
    conn.execute(f"INSERT INTO {t} VALUES (11, 100.0)")
    assert conn.execute(sql).fetchall() == [(11,)]
    assert plans() == 1
    conn.execute("ROLLBACK")
    assert conn.execute(sql).fetchall() == [(i,) for i in range(6, 11)]
    # a subquery whose value moves gives the new value at every execution
    now = "SELECT (SELECT now())"
    values = {conn.execute(now).fetchone()[0] for _ in range(3)}
    assert len(values) == 3
