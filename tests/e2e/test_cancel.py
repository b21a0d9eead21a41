"""Cancelling a running query from another thread (a CancelRequest on a new connection)
ends it with SQLSTATE 57014, and the connection goes on working."""

from __future__ import annotations

import threading
import time

import pytest
from psycopg import errors

LONG_QUERY = "SELECT sum(g % 7) FROM generate_series(1, 100000000000) AS g"


def run_and_cancel(conn, sql, first_wait=1.5, limit=90.0):
    outcome = {}

    def run():
        try:
            outcome["rows"] = conn.execute(sql).fetchall()
        except Exception as e:  # reported to the test below
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(first_wait)
    started = time.monotonic()
    # A cancel that arrives before the query starts is ignored, as in PostgreSQL: repeat.
    while thread.is_alive() and time.monotonic() - started < limit:
        conn.cancel_safe()
        thread.join(10)
    assert not thread.is_alive(), "the query did not stop after cancel"
    return outcome, time.monotonic() - started


def test_cancel_long_query(conn):
    outcome, took = run_and_cancel(conn, LONG_QUERY)
    assert "rows" not in outcome, "the query finished instead of being cancelled"
    assert isinstance(outcome["error"], errors.QueryCanceled), outcome["error"]
    assert outcome["error"].sqlstate == "57014"
    assert took < 30
    assert conn.execute("SELECT 1").fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM generate_series(1, 10)").fetchone() == (10,)


def test_cancel_long_grouped_query(conn):
    outcome, _ = run_and_cancel(
        conn, "SELECT i % 7, count(*) FROM generate_series(1, 2000000000) AS g(i) "
              "WHERE i % 1000 = 7 GROUP BY 1")
    assert isinstance(outcome.get("error"), errors.QueryCanceled), outcome
    assert conn.execute("SELECT 2").fetchone() == (2,)


def test_cancel_in_transaction_aborts_it(server, table):
    t = table()
    with server.connect() as c:
        c.execute(f"CREATE TABLE {t} (k int8) DISTRIBUTED BY (k)")
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} VALUES (1)")
        outcome, _ = run_and_cancel(tx, LONG_QUERY)
        assert isinstance(outcome.get("error"), errors.QueryCanceled), outcome
        with pytest.raises(errors.InFailedSqlTransaction):
            tx.execute("SELECT 1")
        tx.rollback()
        assert tx.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
