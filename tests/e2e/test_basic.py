"""Connecting with psycopg, simple queries, session functions and settings, and queries
with parameters in text and binary format (extended protocol, prepared statements)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import psycopg
import pytest


def test_connect_and_simple_query(conn):
    assert conn.execute("SELECT 1").fetchone() == (1,)
    cur = conn.execute("SELECT 1 AS a, 'x' AS b, NULL::int4 AS c, 2.50::numeric(4,2) AS d")
    assert [d.name for d in cur.description] == ["a", "b", "c", "d"]
    assert cur.fetchall() == [(1, "x", None, Decimal("2.50"))]
    assert conn.info.parameter_status("server_encoding") == "UTF8"
    assert conn.info.parameter_status("integer_datetimes") == "on"
    assert conn.info.server_version >= 150000


def test_session_functions(conn):
    version, schema, database, user = conn.execute(
        "SELECT version(), current_schema(), current_database(), current_user").fetchone()
    assert version.startswith("PostgreSQL ") and "raympp" in version
    assert (schema, database, user) == ("public", "raympp", "raympp")


def test_set_show_reset(conn):
    conn.execute("SET application_name = 'e2e'")
    assert conn.execute("SHOW application_name").fetchone() == ("e2e",)
    assert conn.info.parameter_status("application_name") == "e2e"
    conn.execute("RESET application_name")
    assert conn.execute("SHOW application_name").fetchone() == ("",)


def test_simple_query_protocol_multiple_statements(conn, table):
    t = table()
    cur = psycopg.ClientCursor(conn)
    cur.execute(f"CREATE TABLE {t} (k int8, v text) DISTRIBUTED BY (k); "
                f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'); "
                f"SELECT v FROM {t} ORDER BY k")
    # psycopg 3 keeps every result; the SELECT's is the last one.
    while cur.nextset():
        pass
    assert cur.fetchall() == [("a",), ("b",)]


def test_empty_query(conn):
    cur = conn.cursor()
    cur.execute("")
    assert cur.description is None


def test_comments_after_the_statement_are_no_statement(conn):
    # as in PostgreSQL: a comment after the last semicolon adds no statement, in the
    # simple and the extended protocol; a text of comments alone is an empty query
    assert conn.execute("SELECT 1; -- done").fetchall() == [(1,)]
    assert conn.execute("SELECT 2;\n/* done */\n", prepare=True).fetchall() == [(2,)]
    cur = conn.cursor()
    cur.execute("-- nothing but a comment")
    assert cur.description is None


ROWS = [
    (1, True, 7, -2**40, 1.25, Decimal("12345.67"), "héllo 'q' \\ x", dt.date(2024, 2, 29),
     dt.datetime(2024, 2, 29, 13, 14, 15, 123456)),
    (2, False, -2**31, 2**62, -1e-300, Decimal("-0.01"), "", dt.date(1970, 1, 1),
     dt.datetime(1969, 12, 31, 23, 59, 59)),
    (3, None, None, None, None, None, None, None, None),
]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_parameters_round_trip(conn, table, binary):
    t = table()
    conn.execute(f"CREATE TABLE {t} (id int8, b bool, i4 int4, i8 int8, f8 float8, "
                 f"n numeric(12,2), s text, d date, ts timestamp) DISTRIBUTED BY (id)")
    cur = conn.cursor(binary=binary)
    cur.execute(f"INSERT INTO {t} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", ROWS[0])
    cur.executemany(f"INSERT INTO {t} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", ROWS[1:])
    cur.execute(f"SELECT * FROM {t} ORDER BY id")
    assert cur.fetchall() == ROWS
    for id_, *values in ROWS[:2]:
        for col, v in zip(["b", "i4", "i8", "f8", "n", "s", "d", "ts"], values):
            cur.execute(f"SELECT id FROM {t} WHERE {col} = %s", (v,))
            assert cur.fetchall() == [(id_,)], (col, v)
    cur.execute(f"SELECT count(*) FROM {t} WHERE i4 = %s", (None,))
    assert cur.fetchone() == (0,)
    cur.execute(f"SELECT id FROM {t} WHERE i8 > %s AND d >= %s ORDER BY id",
                (0, dt.date(1960, 1, 1)))
    assert cur.fetchall() == [(2,)]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_parameters_in_expressions(conn, binary):
    cur = conn.cursor(binary=binary)
    cur.execute("SELECT %s + 1, %s * 2, %s || 'x', %s + 1, %s IS NULL",
                (41, 1.5, "ab", dt.date(2024, 12, 31), None))
    assert cur.fetchone() == (42, 3.0, "abx", dt.date(2025, 1, 1), True)
    cur.execute("SELECT %s::numeric(6,2) + %s", (Decimal("1.10"), Decimal("2.205")))
    assert cur.fetchone() == (Decimal("3.305"),)
    cur.execute("SELECT count(*) FROM generate_series(1, 100) AS g(i) WHERE i <= %s", (10,))
    assert cur.fetchone() == (10,)


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_prepared_statement_reuse(conn, table, binary):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8, v int4) DISTRIBUTED BY (k)")
    conn.execute(f"INSERT INTO {t} SELECT i, i % 10 FROM generate_series(1, 1000) AS g(i)")
    cur = conn.cursor(binary=binary)
    for v in range(10):
        cur.execute(f"SELECT count(*), sum(k) FROM {t} WHERE v = %s", (v,), prepare=True)
        expected = [k for k in range(1, 1001) if k % 10 == v]
        assert cur.fetchone() == (len(expected), sum(expected))


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_result_types(conn, binary):
    cur = conn.cursor(binary=binary)
    cur.execute("SELECT true, 1::int2, 2::int4, 3::int8, 1.5::float4, 2.5::float8, "
                "1.25::numeric(5,2), 'x'::text, 'y'::varchar(3), date '2024-01-02', "
                "timestamp '2024-01-02 03:04:05.5'")
    assert cur.fetchone() == (True, 1, 2, 3, 1.5, 2.5, Decimal("1.25"), "x", "y",
                              dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5, 500000))
    oids = [d.type_code for d in cur.description]
    assert oids == [16, 21, 23, 20, 700, 701, 1700, 25, 1043, 1082, 1114]


def test_large_result_streams(conn):
    cur = conn.cursor()
    cur.execute("SELECT i, i * 2 FROM generate_series(1, 200000) AS g(i)")
    n = total = 0
    for i, twice in cur:
        n += 1
        total += twice
    assert (n, total) == (200000, 200000 * 200001)
