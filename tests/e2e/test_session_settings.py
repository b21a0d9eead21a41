"""Settings through a real client: SET errors with PostgreSQL's SQLSTATEs, SHOW formatting,
ParameterStatus, SET LOCAL bounded by the transaction block, and
idle_in_transaction_session_timeout ending the connection (and its transaction)."""

from __future__ import annotations

import time

import psycopg
import pytest
from psycopg import errors

SET_ERRORS = [
    ("42704", "SET no_such_setting = 1", 'unrecognized configuration parameter "no_such_setting"'),
    ("22023", "SET statement_timeout = 'abc'",
     'invalid value for parameter "statement_timeout": "abc"'),
    ("22023", "SET statement_timeout = '-1'",
     '-1 ms is outside the valid range for parameter "statement_timeout" (0 .. 2147483647)'),
    ("22023", "SET work_mem = '1kB'",
     '1 kB is outside the valid range for parameter "work_mem" (64 .. 2147483647)'),
    ("22023", "SET standard_conforming_strings = maybe",
     'parameter "standard_conforming_strings" requires a Boolean value'),
    ("22023", "SET client_min_messages = loud",
     'invalid value for parameter "client_min_messages": "loud"'),
    ("22023", "SET extra_float_digits = 4",
     '4 is outside the valid range for parameter "extra_float_digits" (-15 .. 3)'),
    ("55P02", "SET server_version = '16'", 'parameter "server_version" cannot be changed'),
    ("55P02", "SET max_identifier_length = 100",
     'parameter "max_identifier_length" cannot be changed'),
    ("0A000", "SET TIME ZONE 'XST5XDT4,M3.2.0,M11.1.0'", None),
    ("22023", "SET TIME ZONE 'no/such_zone'",
     'invalid value for parameter "TimeZone": "no/such_zone"'),
    ("0A000", "SET datestyle = 'SQL, DMY'", None),
    ("0A000", "SET default_transaction_isolation = 'serializable'", None),
    ("0A000", "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ", None),
    ("42602", "SET raympp.no_such = 1", 'invalid configuration parameter name "raympp.no_such"'),
    ("42601", "SET statement_timeout = 1, 2", "SET statement_timeout takes only one argument"),
]


@pytest.mark.parametrize(("sqlstate", "sql", "message"), SET_ERRORS,
                         ids=[f"{s}-{q[4:34]}" for s, q, _ in SET_ERRORS])
def test_set_errors(conn, sqlstate, sql, message):
    with pytest.raises(errors.Error) as e:
        conn.execute(sql)
    assert e.value.sqlstate == sqlstate, e.value
    assert e.value.diag.severity == "ERROR"
    if message is not None:
        assert e.value.diag.message_primary == message
    if "TIME ZONE" in sql and sqlstate == "0A000":  # names the zone as written
        assert sql.split("'")[1] in e.value.diag.message_primary
    assert conn.execute("SHOW TimeZone").fetchone() == ("UTC",)  # nothing changed


def test_show_formats_like_postgresql(conn):
    assert conn.execute("SHOW work_mem").fetchone() == ("64MB",)
    conn.execute("SET statement_timeout = 1000")
    assert conn.execute("SHOW statement_timeout").fetchone() == ("1s",)
    conn.execute("SET statement_timeout = '1.5min'")
    assert conn.execute("SHOW statement_timeout").fetchone() == ("90s",)
    conn.execute("SET statement_timeout TO DEFAULT")
    assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)
    conn.execute("SET work_mem = '4MB'")
    assert conn.execute("SHOW work_mem").fetchone() == ("4MB",)
    conn.execute("RESET work_mem")
    assert conn.execute("SHOW work_mem").fetchone() == ("64MB",)
    cur = conn.execute("SHOW DateStyle")
    assert cur.description[0].name == "DateStyle" and cur.fetchone() == ("ISO, MDY",)
    assert conn.execute("SHOW raympp.segment_wait_timeout").fetchone() == ("30s",)
    assert conn.execute("SHOW TRANSACTION ISOLATION LEVEL").fetchone() == ("read committed",)


def test_show_all(conn):
    cur = conn.execute("SHOW ALL")
    assert [d.name for d in cur.description] == ["name", "setting", "description"]
    rows = {r[0]: r for r in cur.fetchall()}
    assert rows["work_mem"][1] == "64MB" and rows["TimeZone"][1] == "UTC"
    assert rows["statement_timeout"][2]


def test_custom_setting(conn):
    with pytest.raises(errors.UndefinedObject):
        conn.execute("SHOW myapp.tenant")
    conn.execute("SET myapp.tenant = 'acme'")
    assert conn.execute("SHOW myapp.tenant").fetchone() == ("acme",)
    conn.execute("RESET myapp.tenant")
    assert conn.execute("SHOW myapp.tenant").fetchone() == ("",)


def test_utc_time_zones_and_parameter_status(conn):
    conn.execute("SET TIME ZONE 'Etc/UTC'")
    assert conn.info.parameter_status("TimeZone") == "Etc/UTC"
    assert conn.execute("SHOW TimeZone").fetchone() == ("Etc/UTC",)
    conn.execute("SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE")
    assert conn.execute("SHOW TimeZone").fetchone() == ("<+00>-00",)
    conn.execute("SET TIME ZONE LOCAL")
    assert conn.info.parameter_status("TimeZone") == "UTC"


def test_set_local_ends_with_the_transaction(server):
    with server.connect(autocommit=False) as c:
        c.execute("SET LOCAL statement_timeout = '7s'")
        assert c.execute("SHOW statement_timeout").fetchone() == ("7s",)
        c.commit()
        assert c.execute("SHOW statement_timeout").fetchone() == ("0",)
        c.execute("SET LOCAL work_mem = '8MB'")
        c.rollback()
        assert c.execute("SHOW work_mem").fetchone() == ("64MB",)
        c.rollback()
    with server.connect() as c:  # autocommit: no transaction block, no effect
        c.execute("SET LOCAL statement_timeout = '7s'")
        assert c.execute("SHOW statement_timeout").fetchone() == ("0",)


def test_startup_options(server):
    with server.connect(options="-c statement_timeout=5s -c work_mem=8MB",
                        application_name="e2e-app") as c:
        assert c.execute("SHOW statement_timeout").fetchone() == ("5s",)
        assert c.execute("SHOW work_mem").fetchone() == ("8MB",)
        assert c.info.parameter_status("application_name") == "e2e-app"
        c.execute("SET statement_timeout = 0")
        c.execute("RESET statement_timeout")  # back to the value the session started with
        assert c.execute("SHOW statement_timeout").fetchone() == ("5s",)
    with server.connect(options="-c TimeZone=Asia/Tokyo") as c:
        assert c.info.parameter_status("TimeZone") == "Asia/Tokyo"
        assert c.execute("SELECT '2024-01-01 09:00+09'::timestamptz::text").fetchone() == (
            "2024-01-01 09:00:00+09",)
    with pytest.raises(psycopg.OperationalError) as e:
        server.connect(options="-c TimeZone=Mars/Olympus")
    assert "TimeZone" in str(e.value)


def test_idle_in_transaction_session_timeout(server, table):
    t = table()
    with server.connect() as c:
        c.execute(f"CREATE TABLE {t} (k int8) DISTRIBUTED BY (k)")
    c = server.connect(autocommit=False)
    c.execute("SET idle_in_transaction_session_timeout = '500ms'")
    assert c.execute("SHOW idle_in_transaction_session_timeout").fetchone() == ("500ms",)
    c.execute(f"INSERT INTO {t} VALUES (1)")  # inside the transaction block psycopg opened
    time.sleep(1.5)
    with pytest.raises(psycopg.Error) as e:
        c.execute("SELECT 1")
    assert isinstance(e.value, (psycopg.OperationalError, errors.IdleInTransactionSessionTimeout))
    assert "idle-in-transaction timeout" in str(e.value) or c.broken, e.value
    assert c.closed
    with server.connect() as fresh:
        assert fresh.execute("SELECT 1").fetchone() == (1,)
        assert fresh.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)  # aborted


def test_idle_outside_a_transaction_is_not_limited(server):
    with server.connect() as c:
        c.execute("SET idle_in_transaction_session_timeout = '200ms'")
        time.sleep(0.6)
        assert c.execute("SELECT 1").fetchone() == (1,)


def test_lock_timeout_bounds_the_wait_for_the_catalog_lock(server, table):
    """DDL waits for the lock on its table name (held by another transaction's DDL) at
    most lock_timeout, then fails with 55P03."""
    import time

    from psycopg import errors as pgerrors

    name = table()
    with server.connect(autocommit=False) as holder:
        holder.execute(f"CREATE TABLE {name} (other text)")  # uncommitted: holds the name
        with server.connect() as c:
            c.execute("SET lock_timeout = '200ms'")
            started = time.monotonic()
            with pytest.raises(pgerrors.LockNotAvailable) as failed:
                c.execute(f"CREATE TABLE {name} (k int8)")
            assert 0.15 < time.monotonic() - started < 5
            assert failed.value.sqlstate == "55P03"
            assert "lock timeout" in str(failed.value)
        holder.rollback()
    with server.connect() as c:
        c.execute(f"CREATE TABLE {name} (k int8)")  # without the wait, it goes through
        assert c.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,)
