"""Errors reach the client with PostgreSQL's SQLSTATE, and the session stays usable."""

from __future__ import annotations

import pytest
from psycopg import errors


@pytest.fixture(scope="module")
def err_table(server):
    with server.connect() as c:
        c.execute("DROP TABLE IF EXISTS e2e_errors")
        c.execute("CREATE TABLE e2e_errors (k int8 NOT NULL, s int2, d date) DISTRIBUTED BY (k)")
        c.execute("INSERT INTO e2e_errors VALUES (1, 1, date '2024-01-01'), (2, 2, NULL)")
    yield "e2e_errors"
    with server.connect() as c:
        c.execute("DROP TABLE IF EXISTS e2e_errors")


CASES = [
    ("42601", "SELEC 1"),
    ("42601", "SELECT k FROM e2e_errors WHERE"),
    ("42P01", "SELECT * FROM e2e_no_such_table"),
    ("42703", "SELECT no_such_column FROM e2e_errors"),
    ("42804", "SELECT k FROM e2e_errors WHERE k"),
    ("22012", "SELECT 1 / 0"),
    ("22012", "SELECT k / (s - s) FROM e2e_errors"),
    ("22003", "SELECT 2147483647::int4 + 1"),
    ("22003", "SELECT s * 2000000000 FROM e2e_errors"),
    ("22P02", "SELECT 'abc'::int4"),
    ("22P02", "INSERT INTO e2e_errors (k) VALUES ('abc')"),
    ("0A000", "SELECT k, count(DISTINCT k) OVER (ORDER BY k) FROM e2e_errors"),
    ("23502", "INSERT INTO e2e_errors (s) VALUES (1)"),
    ("42P07", "CREATE TABLE e2e_errors (k int8)"),
]


@pytest.mark.parametrize(("sqlstate", "sql"), CASES, ids=[f"{s}-{q[:30]}" for s, q in CASES])
@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_error_sqlstate_then_session_usable(conn, err_table, sqlstate, sql, binary):
    cur = conn.cursor(binary=binary)
    with pytest.raises(errors.Error) as e:
        cur.execute(sql)
    assert e.value.sqlstate == sqlstate, e.value
    assert e.value.diag.severity == "ERROR"
    assert e.value.diag.message_primary
    assert cur.execute("SELECT count(*) FROM e2e_errors").fetchone() == (2,)


def test_error_in_simple_query_protocol(conn, err_table):
    import psycopg

    cur = psycopg.ClientCursor(conn)
    with pytest.raises(errors.DivisionByZero):
        cur.execute("SELECT 1; SELECT 1 / 0; SELECT 3")
    assert cur.execute("SELECT 4").fetchone() == (4,)


def test_error_while_streaming_rows(conn):
    with pytest.raises(errors.DivisionByZero):
        conn.execute("SELECT 100 / (i - 150000) FROM generate_series(1, 200000) AS g(i)"
                     ).fetchall()
    assert conn.execute("SELECT 1").fetchone() == (1,)


def test_error_with_parameters(conn, err_table):
    with pytest.raises(errors.InvalidTextRepresentation):
        conn.execute("SELECT k FROM e2e_errors WHERE k = %s::int8", ("nope",))
    assert conn.execute("SELECT k FROM e2e_errors WHERE k = %s", (2,)).fetchall() == [(2,)]


def test_cause_not_its_echo_at_three_segments(raympp_cluster):
    """One segment's slice fails; the others then fail with "query cancelled" as their
    channels are torn down. Whichever Ray reports first, the client gets the cause."""
    srv = raympp_cluster(3)
    with srv.connect() as c:
        c.execute("DROP TABLE IF EXISTS e2e_echo")
        c.execute("CREATE TABLE e2e_echo (k int8, v int8) DISTRIBUTED BY (k)")
        c.execute("INSERT INTO e2e_echo SELECT g, g % 1000 FROM generate_series(1, 30000) g")
        try:
            for _ in range(6):
                with pytest.raises(errors.DivisionByZero):
                    # A join on v redistributes both sides; one row divides by zero.
                    c.execute("SELECT count(*) FROM e2e_echo a JOIN e2e_echo b ON a.v = b.v "
                              "WHERE 1 / (b.k - 777) IS NOT NULL").fetchall()
                assert c.execute("SELECT 1").fetchone() == (1,)
        finally:
            c.execute("DROP TABLE IF EXISTS e2e_echo")
