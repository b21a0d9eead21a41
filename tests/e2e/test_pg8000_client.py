"""pg8000 (pure Python; extended protocol with typed parameters, its own type OIDs) against
raympp, through both of its interfaces: pg8000.native (named :parameters, prepared
statements) and pg8000.dbapi (%s parameters, executemany, commit/rollback, errors). The
expected values are PostgreSQL 15's."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal

import pytest

pg8000 = pytest.importorskip("pg8000")
pg8000_native = pytest.importorskip("pg8000.native")
pg8000_dbapi = pytest.importorskip("pg8000.dbapi")

_serial = itertools.count(1)


@pytest.fixture
def native(server):
    c = pg8000_native.Connection("raympp", host=server.host, port=server.port,
                                 database="raympp", timeout=60)
    yield c
    c.close()


@pytest.fixture
def dbapi(server):
    c = pg8000_dbapi.connect(user="raympp", host=server.host, port=server.port,
                             database="raympp", timeout=60)
    yield c
    c.close()


@pytest.fixture
def name(server):
    n = f"e2e_pg8000_t{next(_serial)}"
    yield n
    with server.connect() as c:
        c.execute(f"DROP TABLE IF EXISTS {n}")


def test_native_query_types(native):
    got = native.run("SELECT 1 AS a, 'x' AS b, 1.50::numeric(5,2) AS c, DATE '2024-01-02' AS d, "
                     "1.5::float8 AS e, true AS f, NULL::int AS g, "
                     "TIMESTAMP '2024-01-02 03:04:05' AS h, INTERVAL '1 day 2 hours' AS i, "
                     "TIMESTAMPTZ '2024-01-02 03:04:05+00' AS j, 2::int8 AS k")
    assert got == [[1, "x", Decimal("1.50"), dt.date(2024, 1, 2), 1.5, True, None,
                    dt.datetime(2024, 1, 2, 3, 4, 5), dt.timedelta(days=1, hours=2),
                    dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc), 2]]
    assert [c["name"] for c in native.columns] == list("abcdefghijk")
    assert [c["type_oid"] for c in native.columns] == [23, 25, 1700, 1082, 701, 16, 23, 1114,
                                                       1186, 1184, 20]


def test_native_parameters(native, name):
    native.run(f"CREATE TABLE {name} (id int, name text, amount numeric(10,2), day date, "
               "ts timestamp, flag bool, f float8)")
    native.run(f"INSERT INTO {name} VALUES (:id, :name, :amount, :day, :ts, :flag, :f)",
               id=1, name="one", amount=Decimal("1.25"), day=dt.date(2024, 1, 1),
               ts=dt.datetime(2024, 1, 1, 12, 0), flag=True, f=0.5)
    assert native.row_count == 1
    assert native.run(f"SELECT * FROM {name} WHERE id = :id", id=1) == [
        [1, "one", Decimal("1.25"), dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 12, 0), True,
         0.5]]
    assert native.run(f"SELECT count(*) FROM {name} WHERE amount > :a AND day <= :d",
                      a=Decimal("1"), d=dt.date(2024, 1, 1)) == [[1]]
    assert native.run("SELECT :v::text || 'x', :n + 1", v="a", n=41) == [["ax", 42]]
    assert native.run(f"SELECT count(*) FROM {name} WHERE name IS NOT DISTINCT FROM :n",
                      n=None) == [[0]]


def test_native_prepared_statement(native, name):
    native.run(f"CREATE TABLE {name} (id int, name text)")
    native.run(f"INSERT INTO {name} VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    ps = native.prepare(f"SELECT name FROM {name} WHERE id = :v")
    try:
        assert [ps.run(v=i) for i in (1, 3, 4)] == [[["one"]], [["three"]], []]
    finally:
        ps.close()


def test_dbapi_transactions(dbapi, name):
    cur = dbapi.cursor()
    cur.execute(f"CREATE TABLE {name} (id int, name text, day date)")
    dbapi.commit()
    cur.execute(f"INSERT INTO {name} VALUES (%s, %s, %s)", (1, "one", dt.date(2024, 2, 29)))
    dbapi.rollback()
    cur.execute(f"SELECT count(*) FROM {name}")
    assert cur.fetchall() == ([0],)
    cur.executemany(f"INSERT INTO {name} (id, name) VALUES (%s, %s)",
                    [(2, "two"), (3, "three")])
    assert cur.rowcount == 2
    dbapi.commit()
    cur.execute(f"SELECT id, name FROM {name} ORDER BY id")
    assert cur.fetchall() == ([2, "two"], [3, "three"])
    assert [(d[0], d[1]) for d in cur.description] == [("id", 23), ("name", 25)]
    dbapi.commit()


def test_dbapi_error_then_rollback(dbapi, name):
    cur = dbapi.cursor()
    cur.execute(f"CREATE TABLE {name} (id int)")
    dbapi.commit()
    cur.execute(f"INSERT INTO {name} VALUES (1)")
    with pytest.raises(pg8000_dbapi.DatabaseError) as info:
        cur.execute(f"SELECT nosuch FROM {name}")
    assert info.value.args[0]["C"] == "42703"
    with pytest.raises(pg8000_dbapi.DatabaseError) as info:  # the block has failed
        cur.execute("SELECT 1")
    assert info.value.args[0]["C"] == "25P02"
    dbapi.rollback()
    cur.execute(f"SELECT count(*) FROM {name}")  # the insert went with the block
    assert cur.fetchall() == ([0],)
    dbapi.commit()


def test_dbapi_autocommit(dbapi, name):
    dbapi.autocommit = True
    cur = dbapi.cursor()
    cur.execute(f"CREATE TABLE {name} (id int, day date)")
    cur.execute(f"INSERT INTO {name} VALUES (%s, %s)", (1, dt.date(2024, 1, 1)))
    cur.execute(f"SELECT count(*) FROM {name} WHERE day > %s", (dt.date(2023, 1, 1),))
    assert cur.fetchall() == ([1],)
    cur.execute(f"INSERT INTO {name} VALUES (%s, %s) RETURNING id + 1, day",
                (5, dt.date(2025, 5, 5)))
    assert cur.fetchall() == ([6, dt.date(2025, 5, 5)],)
