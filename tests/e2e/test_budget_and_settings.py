"""Issue 9's last parts through a real client.

- Motion receive buffers draw from the query's work_mem: under a small budget the frames
  waiting at a redistributing join's receivers spill, the answer is the same, and EXPLAIN
  ANALYZE shows the Motion node's memory= and spilled=.
- A scalar count(DISTINCT x) spills its distinct values under the budget and answers right.
- Settings and transaction blocks as PostgreSQL 15: the same scripts run on raympp and on
  a real PostgreSQL 15 (the pg_oracle fixture) give the same SHOW values, command tags and
  SQLSTATEs; a SET, RESET or SET LOCAL inside a block that rolls back (ROLLBACK, ROLLBACK
  TO SAVEPOINT, a failed block) is undone, and ParameterStatus says so.
"""

from __future__ import annotations

import re

import psycopg
import pytest

ROWS = 300_000


@pytest.fixture(scope="module")
def join_table(server):
    name = "e2e_budget_join"
    with server.connect() as c:
        c.execute(f"DROP TABLE IF EXISTS {name}")
        c.execute(f"CREATE TABLE {name} (k bigint, s text, v bigint) DISTRIBUTED BY (k)")
        c.execute(f"INSERT INTO {name} SELECT g, 'key-' || (g::bigint * 7919 % {ROWS}), g % 1000 "
                  f"FROM generate_series(1, {ROWS}) AS g")
        c.execute(f"ANALYZE {name}")
    yield name
    with server.connect() as c:
        c.execute(f"DROP TABLE IF EXISTS {name}")


def explain_analyze(conn, sql: str) -> list[str]:
    return [r[0] for r in conn.execute("EXPLAIN ANALYZE " + sql).fetchall()]


def kb(line: str, what: str) -> int:
    m = re.search(rf"\b{what}=(\d+)kB", line)
    return int(m.group(1)) if m else 0


# --- Motion receive buffers under the query's budget -----------------------------------------
def test_motion_receivers_spill_under_work_mem(server, join_table):
    sql = (f"SELECT count(*), sum(a.v + b.v) FROM {join_table} a JOIN {join_table} b "
           "ON a.s = b.s")
    with server.connect() as c:
        want = c.execute(sql).fetchall()
        c.execute("SET work_mem = '1MB'")
        got = c.execute(sql).fetchall()
        lines = explain_analyze(c, sql)
    assert got == want == [(ROWS, 2 * sum(g % 1000 for g in range(1, ROWS + 1)))]
    motions = [line for line in lines if "Redistribute Motion" in line]
    assert motions, lines
    # The receivers held frames under the budget and spilled the rest to disk.
    assert any(kb(line, "memory") > 0 for line in motions), lines
    assert sum(kb(line, "spilled") for line in motions) > 1024, lines


def test_motion_receivers_under_the_default_budget_do_not_spill(server, join_table):
    sql = f"SELECT count(*) FROM {join_table} a JOIN {join_table} b ON a.s = b.s"
    with server.connect() as c:
        c.execute("SET work_mem = '512MB'")
        lines = explain_analyze(c, sql)
    motions = [line for line in lines if "Redistribute Motion" in line]
    assert motions and all(kb(line, "spilled") == 0 for line in motions), lines


# --- a scalar aggregate's DISTINCT values ------------------------------------------------------
def test_scalar_count_distinct_spills_its_values(server):
    sql = "SELECT count(DISTINCT g % 400000), sum(DISTINCT g % 400000) " \
          "FROM generate_series(1, 900000) AS g"
    with server.connect() as c:
        c.execute("SET work_mem = '64kB'")
        got = c.execute(sql).fetchall()
        lines = explain_analyze(c, sql)
    assert got == [(400_000, sum(range(400_000)))]
    aggregates = [line for line in lines if line.lstrip().startswith("Aggregate")]
    assert any(kb(line, "spilled") > 0 for line in aggregates), lines


# --- settings and transaction blocks, against PostgreSQL 15 -----------------------------------
SCRIPTS = {
    "rollback_undoes_set": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '2MB'", "SHOW work_mem",
        "ROLLBACK", "SHOW work_mem"],
    "commit_keeps_set": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '2MB'", "COMMIT", "SHOW work_mem"],
    "set_local_ends_with_the_block": [
        "SET work_mem = '8MB'", "BEGIN", "SET LOCAL work_mem = '2MB'", "SHOW work_mem",
        "COMMIT", "SHOW work_mem"],
    "set_after_set_local": [
        "SET work_mem = '8MB'", "BEGIN", "SET LOCAL work_mem = '2MB'",
        "SET work_mem = '3MB'", "SHOW work_mem", "COMMIT", "SHOW work_mem"],
    "set_local_after_set": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '3MB'",
        "SET LOCAL work_mem = '2MB'", "SHOW work_mem", "COMMIT", "SHOW work_mem"],
    "set_and_set_local_rolled_back": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '3MB'",
        "SET LOCAL work_mem = '2MB'", "ROLLBACK", "SHOW work_mem"],
    "reset_rolled_back": [
        "SET work_mem = '8MB'", "BEGIN", "RESET work_mem", "ROLLBACK", "SHOW work_mem"],
    "reset_all_rolled_back": [
        "SET work_mem = '8MB'", "SET statement_timeout = '7s'", "BEGIN", "RESET ALL",
        "ROLLBACK", "SHOW work_mem", "SHOW statement_timeout"],
    "rollback_to_savepoint_undoes_a_later_set": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '2MB'", "SAVEPOINT a",
        "SET work_mem = '3MB'", "ROLLBACK TO SAVEPOINT a", "SHOW work_mem", "COMMIT",
        "SHOW work_mem"],
    "rollback_to_savepoint_undoes_a_later_reset": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '2MB'", "SAVEPOINT a",
        "RESET work_mem", "ROLLBACK TO a", "SHOW work_mem", "ROLLBACK", "SHOW work_mem"],
    "released_savepoint_then_rollback": [
        "SET work_mem = '8MB'", "BEGIN", "SAVEPOINT a", "SET work_mem = '3MB'",
        "RELEASE a", "ROLLBACK", "SHOW work_mem"],
    "set_local_survives_release": [
        "SET work_mem = '8MB'", "BEGIN", "SAVEPOINT a", "SET LOCAL work_mem = '3MB'",
        "RELEASE a", "SHOW work_mem", "COMMIT", "SHOW work_mem"],
    "failed_block_rolled_back": [
        "SET statement_timeout = '9s'", "BEGIN", "SET statement_timeout = '2s'",
        "SELECT 1/0", "SHOW statement_timeout", "ROLLBACK", "SHOW statement_timeout"],
    "failed_block_committed": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '2MB'", "SELECT 1/0", "COMMIT",
        "SHOW work_mem"],
    "failed_after_savepoint_rolled_back_to": [
        "SET work_mem = '8MB'", "BEGIN", "SET work_mem = '2MB'", "SAVEPOINT a",
        "SET work_mem = '3MB'", "SELECT 1/0", "ROLLBACK TO a", "SHOW work_mem", "COMMIT",
        "SHOW work_mem"],
    "placeholders": [
        "SET myapp.w = 'y'", "BEGIN", "SET myapp.w = 'z'", "SET myapp.v = 'x'", "ROLLBACK",
        "SHOW myapp.w", "SHOW myapp.v"],
    "session_characteristics_rolled_back": [
        "BEGIN", "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", "ROLLBACK",
        "SHOW default_transaction_read_only"],
    "set_config_rolled_back": [
        "SET work_mem = '8MB'", "BEGIN", "SELECT set_config('work_mem', '7MB', false)",
        "SHOW work_mem", "ROLLBACK", "SHOW work_mem"],
    "set_local_outside_a_block": [
        "SET work_mem = '8MB'", "SET LOCAL work_mem = '2MB'", "SHOW work_mem"],
}


def run_script(conn, script: list[str]) -> list:
    """What a client sees of each statement: its rows or command tag, or its SQLSTATE."""
    out = []
    for sql in script:
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                out.append(cur.fetchall() if cur.description else cur.statusmessage)
        except psycopg.Error as e:
            out.append(e.sqlstate)
    return out


@pytest.mark.parametrize("script", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_settings_in_transactions_as_postgresql(server, pg_oracle, script):
    with pg_oracle.connect() as pg, server.connect() as ours:
        want = run_script(pg, script)
        got = run_script(ours, script)
    assert got == want, list(zip(script, got, want))


def test_set_undone_by_rollback_keeps_the_value_of_before(server):
    with server.connect() as c:
        before = c.execute("SHOW statement_timeout").fetchone()
        c.execute("BEGIN")
        c.execute("SET statement_timeout = '1ms'")
        c.execute("ROLLBACK")
        assert c.execute("SHOW statement_timeout").fetchone() == before
        # ... and it is the value in force: a query that takes longer than 1 ms runs
        assert c.execute("SELECT count(*) FROM generate_series(1, 2000000)").fetchone() \
            == (2_000_000,)


def test_rollback_reports_parameter_status(server, pg_oracle):
    for conn in (pg_oracle.connect(), server.connect()):
        with conn:
            conn.execute("SET application_name = 'before'")
            conn.execute("BEGIN")
            conn.execute("SET application_name = 'inside'")
            assert conn.info.parameter_status("application_name") == "inside"
            conn.execute("ROLLBACK")
            assert conn.info.parameter_status("application_name") == "before"
            assert conn.execute("SHOW application_name").fetchone() == ("before",)
