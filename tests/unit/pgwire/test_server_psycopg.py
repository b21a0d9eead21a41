"""End to end with psycopg 3: PgServer in a thread over the fake engine."""

import datetime as dt
import logging
import subprocess
import sys
import threading
import time
from decimal import Decimal

import psycopg
import pytest
from psycopg import pq

from .fake_engine import TYPES_ROWS

UTC = dt.timezone.utc


def connect(pg, **kw):
    return psycopg.connect(**pg.conninfo(**kw))


def eventually(predicate, timeout=5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_select_every_type_in_text(pg):
    with connect(pg, autocommit=True) as conn:
        cur = conn.execute("select types")
        assert cur.fetchall() == [tuple(r) for r in TYPES_ROWS]
        assert [d.type_code for d in cur.description] == [
            16, 21, 23, 20, 700, 701, 1700, 1700, 25, 1043, 1042, 1082, 1114, 1184, 1186]
        assert cur.description[6].precision == 15 and cur.description[6].scale == 2
        assert cur.rowcount == 3 and cur.statusmessage == "SELECT 3"


def test_select_every_type_in_binary(pg):
    with connect(pg, autocommit=True) as conn:
        cur = conn.cursor(binary=True)
        cur.execute("select types")
        assert cur.pgresult.fformat(0) == pq.Format.BINARY
        expected = [list(r) for r in TYPES_ROWS]
        expected[0][9] = expected[2][9] = None  # varchar compared below
        got = [list(r) for r in cur.fetchall()]
        assert [r[9] for r in got] == ["abc", None, ""]
        for r in got:
            r[9] = None
        assert got == expected


def test_parameters_text_and_binary(pg):
    values = (1, 2**40, 2.5, Decimal("12.30"), "héllo", True, dt.date(2024, 2, 29),
              dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
              None)
    expected = ["int:1", f"int:{2**40}", "float:2.5", "Decimal:Decimal('12.30')",
                "str:'héllo'", "bool:True", "date:datetime.date(2024, 2, 29)",
                "datetime:datetime.datetime(2024, 1, 2, 3, 4, 5)",
                "datetime:datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)",
                "NoneType:None"]
    with connect(pg, autocommit=True) as conn:
        for marker in ("%s", "%t", "%b"):
            sql = "select echo " + ", ".join([marker] * len(values))
            assert list(conn.execute(sql, values).fetchone()) == expected, marker
        cur = conn.cursor(binary=True)
        assert cur.execute("select echo %s", ("x",)).fetchone() == ("str:'x'",)


def test_prepared_statement_reused(pg):
    with connect(pg, autocommit=True, prepare_threshold=0) as conn:
        for i in range(3):
            assert conn.execute("select echo %s", (i,)).fetchone() == (f"int:{i}",)
        assert conn.execute("select series 5").fetchall() == [(i,) for i in range(5)]


def test_pipeline_and_executemany(pg):
    with connect(pg, autocommit=True) as conn:
        with conn.pipeline():
            first = conn.execute("select echo %s", ("a",))
            second = conn.execute("select series 3")
            conn.cursor().executemany("insert into t values (%s)", [(1,), (2,), (3,)])
        assert first.fetchone() == ("str:'a'",)
        assert second.fetchall() == [(0,), (1,), (2,)]
    assert pg.engine.executed.count("insert into t values ($1)") == 3


def test_commands_and_transactions(pg):
    with connect(pg) as conn:  # not autocommit: psycopg sends BEGIN first
        conn.execute("create table t (a int)")
        assert conn.info.transaction_status == pq.TransactionStatus.INTRANS
        assert conn.execute("insert into t values (1)").statusmessage == "INSERT 0 1"
        conn.commit()
        assert conn.info.transaction_status == pq.TransactionStatus.IDLE
        conn.execute("create table u (a int)")
        conn.rollback()
        assert conn.info.transaction_status == pq.TransactionStatus.IDLE
    assert pg.engine.executed[:4] == ["begin", "create table t (a int)",
                                      "insert into t values (1)", "commit"]
    assert pg.engine.executed[-1] == "rollback"
    assert eventually(lambda: pg.engine.sessions[0].closed)  # Terminate closes the session


def test_error_fields_and_session_goes_on(pg):
    with connect(pg, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero) as e:
            conn.execute("select error")
        diag = e.value.diag
        assert (diag.sqlstate, diag.message_primary, diag.message_detail, diag.message_hint,
                diag.severity, diag.severity_nonlocalized) == (
            "22012", "division by zero", "dividing 1 by 0", "do not do that", "ERROR", "ERROR")
        with pytest.raises(psycopg.errors.SyntaxError, match='syntax error at or near "bogus"'):
            conn.execute("bogus statement")
        assert conn.execute("select 1").fetchone() == (1,)


def test_error_in_transaction_needs_rollback(pg):
    with connect(pg) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("select error")
        assert conn.info.transaction_status == pq.TransactionStatus.INERROR
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("select 1")
        conn.rollback()
        assert conn.execute("select 1").fetchone() == (1,)


def test_internal_error_is_one_line_and_logged(pg, caplog):
    with caplog.at_level(logging.ERROR, logger="coordinator.pgwire"):
        with connect(pg, autocommit=True) as conn:
            with pytest.raises(psycopg.errors.InternalError_) as e:
                conn.execute("select crash")
            assert e.value.diag.sqlstate == "XX000"
            assert e.value.diag.message_primary == "internal error: RuntimeError: boom"
            assert conn.execute("select 1").fetchone() == (1,)
    logged = [r.exc_info[1] for r in caplog.records if r.exc_info]
    assert any(isinstance(e, RuntimeError) and str(e) == "boom\nsecond line" for e in logged)


def test_simple_query_with_many_statements(pg):
    with connect(pg, autocommit=True) as conn:
        cur = conn.execute("create table a (x int); select series 3; select 1")
        assert cur.statusmessage == "CREATE TABLE"
        assert cur.nextset() and cur.fetchall() == [(0,), (1,), (2,)]
        assert cur.nextset() and cur.fetchall() == [(1,)]
        assert not cur.nextset()
        pg.engine.executed.clear()
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("create table b (x int); select error; create table c (x int)")
        assert pg.engine.executed == ["create table b (x int)", "select error"]


def test_parse_of_many_statements_is_rejected(pg):
    with connect(pg, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.SyntaxError,
                           match="cannot insert multiple commands into a prepared statement"):
            conn.execute("select echo %s; select 1", (1,))
        assert conn.execute("select echo %s", (2,)).fetchone() == ("int:2",)


def test_large_result_streams_in_text_and_binary(pg):
    with connect(pg, autocommit=True) as conn:
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            cur.execute("select series 100000")
            rows = cur.fetchall()
            assert len(rows) == 100000 and rows[-1] == (99999,) and cur.rowcount == 100000


def test_set_sends_parameter_status(pg):
    with connect(pg, autocommit=True) as conn:
        assert conn.info.parameter_status("application_name") == ""
        conn.execute("set application_name = 'reporting'")
        assert conn.info.parameter_status("application_name") == "reporting"
        assert conn.info.parameter_status("server_version") == "15.4"
        assert conn.info.backend_pid >= 1000


def test_copy_in_text_and_binary(pg):
    with connect(pg, autocommit=True) as conn:
        cur = conn.cursor()
        with cur.copy("copy t from stdin") as copy:
            copy.write(b"1\tone\n")
            copy.write(b"2\ttwo\n3\tthree\n")
        assert cur.rowcount == 3 and cur.statusmessage == "COPY 3"
        assert pg.engine.copied["t"] == b"1\tone\n2\ttwo\n3\tthree\n"
        with cur.copy("copy b from stdin binary") as copy:
            copy.write(b"x\n")
        assert pg.engine.copied["b"] == b"x\n"


def test_copy_in_failure_aborts_the_sink(pg):
    with connect(pg, autocommit=True) as conn:
        cur = conn.cursor()
        with pytest.raises(ZeroDivisionError):
            with cur.copy("copy t from stdin") as copy:
                copy.write(b"1\tone\n")
                1 / 0
        assert "t" not in pg.engine.copied
        assert len(pg.engine.aborted) == 1 and "ZeroDivisionError" in pg.engine.aborted[0]
        assert conn.execute("select 1").fetchone() == (1,)


def test_copy_out(pg):
    with connect(pg, autocommit=True) as conn:
        cur = conn.cursor()
        with cur.copy("copy t to stdout") as copy:
            data = b"".join(bytes(chunk) for chunk in copy)
        assert data == b"1\tone\n2\ttwo\n"
        assert cur.rowcount == 2  # from the tag "COPY 2"
        with cur.copy("copy t to stdout") as copy:
            assert list(copy.rows()) == [("1", "one"), ("2", "two")]


def _run_slow(conn, outcome):
    try:
        conn.execute("select slow").fetchall()
        outcome.append("finished")
    except psycopg.Error as e:
        outcome.append(e)


def test_cancel_a_running_query(pg):
    # cancel_safe(): psycopg's blocking cancel() holds the GIL, which would starve a server
    # running in this process; the next test sends it from another process.
    with connect(pg, autocommit=True) as conn:
        outcome = []
        worker = threading.Thread(target=_run_slow, args=(conn, outcome))
        worker.start()
        time.sleep(0.3)
        conn.cancel_safe()
        worker.join(10)
        assert not worker.is_alive()
        assert isinstance(outcome[0], psycopg.errors.QueryCanceled)
        assert outcome[0].diag.message_primary == "canceling statement due to user request"
        assert pg.engine.canceled.is_set()
        assert conn.execute("select 1").fetchone() == (1,)


CANCEL_CLIENT = """
import sys, threading, time, psycopg
conn = psycopg.connect(host=sys.argv[1], port=sys.argv[2], user="bob", dbname="db",
                       autocommit=True)
out = []
def run():
    try:
        conn.execute("select slow").fetchall()
    except psycopg.Error as e:
        out.append(e.diag.sqlstate)
t = threading.Thread(target=run)
t.start()
time.sleep(0.3)
conn.cancel()
t.join(10)
print(out[0], conn.execute("select 1").fetchone()[0])
"""


def test_cancel_from_another_process(pg):
    done = subprocess.run([sys.executable, "-c", CANCEL_CLIENT, pg.host, str(pg.port)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["57014", "1"]


def test_connections_progress_independently(pg):
    slow = connect(pg, autocommit=True)
    outcome = []
    worker = threading.Thread(target=_run_slow, args=(slow, outcome))
    worker.start()
    time.sleep(0.2)
    results = []

    def client(i):
        with connect(pg, autocommit=True) as conn:
            results.append(conn.execute("select series 3000").fetchall()[-1][0] + i)
    started = time.monotonic()
    clients = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for c in clients:
        c.start()
    for c in clients:
        c.join(20)
    assert sorted(results) == [2999 + i for i in range(8)]
    assert time.monotonic() - started < 10
    assert worker.is_alive()  # the slow query is still running meanwhile
    slow.cancel_safe()
    worker.join(10)
    assert isinstance(outcome[0], psycopg.errors.QueryCanceled)
    slow.close()


def test_unknown_database_is_fatal(pg):
    with pytest.raises(psycopg.OperationalError, match='database "nosuchdb" does not exist'):
        psycopg.connect(host=pg.host, port=pg.port, user="alice", dbname="nosuchdb")


def test_scram_password(pg_password):
    with psycopg.connect(**pg_password.conninfo(password="s3cret")) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        assert conn.pgconn.used_password
    with pytest.raises(psycopg.OperationalError, match='password authentication failed for '
                                                       'user "alice"'):
        psycopg.connect(**pg_password.conninfo(password="wrong"))
    with pytest.raises(psycopg.OperationalError, match="no password supplied"):
        psycopg.connect(**pg_password.conninfo())
    assert len(pg_password.engine.sessions) == 1
