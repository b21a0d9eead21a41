"""time, timetz, interval and infinite dates over the wire (issue 14), byte for byte
against PostgreSQL 15 (the pg_oracle fixture): COPY TO in text, CSV and binary, COPY FROM
of PostgreSQL's own output back to the same bytes, binary result values, and parameters
in text and binary."""

from __future__ import annotations

import datetime as dt

import pytest
from psycopg.adapt import Loader
from psycopg.pq import Format

COLUMNS = "k int, d date, ts timestamp, tz timestamptz, t time, ttz timetz, iv interval"
ROWS = """(1, 'infinity', '-infinity', 'infinity', '12:34:56.5', '12:34:56.5+05:30',
           '1 year 2 mons -3 days 04:05:06.5'),
          (2, '-infinity', 'infinity', '-infinity', NULL, '00:00-08', NULL),
          (3, '2020-02-29', '2020-02-29 12:00:00.25', '1999-12-31 23:59:59+00', '00:00',
           '23:59:59.999999+15:59:59', '-00:00:01'),
          (4, NULL, NULL, NULL, '23:59:59.999999', NULL, '30 days')"""
OIDS = (1082, 1114, 1184, 1083, 1266, 1186)


class _Raw(Loader):
    format = Format.BINARY

    def load(self, data):
        return bytes(data)


@pytest.fixture
def both(conn, table, pg_oracle):
    """(raympp connection, PostgreSQL connection, table name), the same rows in both."""
    t = table()
    pg = pg_oracle.connect("postgres")
    pg.execute("SET TimeZone = 'UTC'")
    for c in (conn, pg):
        c.execute(f"DROP TABLE IF EXISTS {t}")
        c.execute(f"CREATE TABLE {t} ({COLUMNS})")
        c.execute(f"INSERT INTO {t} VALUES {ROWS}")
    yield conn, pg, t
    pg.execute(f"DROP TABLE IF EXISTS {t}")
    pg.close()


def _copy_out(c, sql: str) -> bytes:
    with c.cursor().copy(sql) as cp:
        return b"".join(bytes(x) for x in cp)


@pytest.mark.parametrize("fmt", ["text", "csv", "binary"])
def test_copy_bytes_as_postgres(both, table, fmt):
    conn, pg, t = both
    out = f"COPY (SELECT * FROM {{}} ORDER BY k) TO STDOUT (FORMAT {fmt})"
    theirs = _copy_out(pg, out.format(t))
    assert _copy_out(conn, out.format(t)) == theirs
    back = table()
    conn.execute(f"CREATE TABLE {back} ({COLUMNS})")
    with conn.cursor().copy(f"COPY {back} FROM STDIN (FORMAT {fmt})") as cp:
        cp.write(theirs)
    assert _copy_out(conn, out.format(back)) == theirs


def test_binary_results_as_postgres(both):
    conn, pg, t = both
    got = []
    for c in (conn, pg):
        cur = c.cursor(binary=True)
        for oid in OIDS:
            cur.adapters.register_loader(oid, _Raw)
        got.append(cur.execute(f"SELECT d, ts, tz, t, ttz, iv FROM {t} ORDER BY k").fetchall())
    assert got[0] == got[1]


@pytest.mark.parametrize("binary", [False, True])
def test_parameters(both, binary):
    conn, pg, t = both
    params = (dt.time(12, 34, 56, 500000), dt.time(0, 0, tzinfo=dt.timezone(dt.timedelta(hours=-8))),
              dt.timedelta(days=30))
    sql = f"SELECT k FROM {t} WHERE t = %s OR ttz = %s OR iv = %s ORDER BY k"
    got = [c.cursor(binary=binary).execute(sql, params).fetchall() for c in (conn, pg)]
    assert got[0] == got[1] == [(1,), (2,), (4,)]
    inf = f"SELECT k FROM {t} WHERE d = %s::date OR ts = %s::timestamp ORDER BY k"
    got = [c.cursor(binary=binary).execute(inf, ("infinity", "infinity")).fetchall()
           for c in (conn, pg)]
    assert got[0] == got[1] == [(1,), (2,)]
