"""Cancelling a running query from another thread (a CancelRequest on a new connection)
ends it with SQLSTATE 57014, and the connection goes on working. A client that disconnects
while its query runs gets the query stopped too."""

from __future__ import annotations

import socket
import struct
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


def _segments_running(server) -> int:
    import ray

    return sum(ray.get([a.running.remote() for a in server.engine.cluster.actors]))


def _raw_session(server) -> socket.socket:
    """A protocol-level connection after start-up (ReadyForQuery read)."""
    from coordinator.pgwire import codec

    sock = socket.create_connection((server.host, server.port), timeout=30)
    sock.sendall(codec.StartupMessage({"user": "raympp", "database": "raympp"}).encode())
    buf = b""
    while True:
        while len(buf) < 5 or len(buf) < 1 + struct.unpack("!i", buf[1:5])[0]:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection during start-up"
            buf += chunk
        n = 1 + struct.unpack("!i", buf[1:5])[0]
        kind, buf = buf[:1], buf[n:]
        assert kind != b"E", "start-up failed"
        if kind == b"Z":
            return sock


@pytest.mark.parametrize("how", ["close", "terminate-then-close"])
def test_client_disconnect_stops_its_query(server, how):
    """A client that goes away while its query runs (no CancelRequest) gets the query
    cancelled: the segments stop running its slices and its session ends."""
    from coordinator.pgwire import codec

    deadline = time.monotonic() + 30
    while _segments_running(server) and time.monotonic() < deadline:
        time.sleep(0.1)  # what an earlier test left running is stopping
    assert _segments_running(server) == 0
    before = server.server.connection_count
    sock = _raw_session(server)
    sock.sendall(codec.Query(LONG_QUERY).encode())
    deadline = time.monotonic() + 30
    while not _segments_running(server):
        assert time.monotonic() < deadline, "the query did not start on the segments"
        time.sleep(0.05)
    time.sleep(1.0)
    assert _segments_running(server) > 0, "the query ended by itself"
    if how == "terminate-then-close":
        sock.sendall(codec.Terminate().encode())  # unread by the server while the query runs
    closed = time.monotonic()
    sock.close()
    while _segments_running(server) or server.server.connection_count > before:
        assert time.monotonic() - closed < 10, (
            f"still running {time.monotonic() - closed:.1f} s after the client left: "
            f"{_segments_running(server)} slices, {server.server.connection_count} connections")
        time.sleep(0.05)
    took = time.monotonic() - closed
    assert took < 3.0, f"the query stopped {took:.2f} s after the client left"
    with server.connect() as c:
        assert c.execute("SELECT 1").fetchone() == (1,)
