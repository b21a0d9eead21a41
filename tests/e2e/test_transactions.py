"""Transactions as psycopg uses them by default (autocommit off: BEGIN before the first
statement, then COMMIT or ROLLBACK): writes become visible to others at COMMIT only, and
vanish at ROLLBACK; an error aborts the transaction until ROLLBACK."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors


def count(conn, t) -> int:
    return conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]


@pytest.fixture
def tx_table(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8, v text) DISTRIBUTED BY (k)")
    return t


def test_rollback_leaves_nothing(server, conn, tx_table):
    t = tx_table
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
        tx.execute(f"INSERT INTO {t} SELECT i, 'g' FROM generate_series(10, 1009) AS g(i)")
        assert tx.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        tx.rollback()
        assert count(tx, t) == 0
    assert count(conn, t) == 0


def test_commit_persists(server, conn, tx_table):
    t = tx_table
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
        tx.execute(f"INSERT INTO {t} SELECT i, 'g' FROM generate_series(10, 1009) AS g(i)")
        tx.commit()
    assert count(conn, t) == 1002
    with server.connect() as other:
        assert other.execute(f"SELECT v FROM {t} WHERE k = 2").fetchall() == [("b",)]


def test_uncommitted_rows_are_invisible_to_others(server, conn, tx_table):
    t = tx_table
    conn.execute(f"INSERT INTO {t} VALUES (0, 'before')")
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} SELECT i, 'new' FROM generate_series(1, 500) AS g(i)")
        assert count(conn, t) == 1
        assert conn.execute(f"SELECT count(*) FROM {t} WHERE v = 'new'").fetchone() == (0,)
        tx.commit()
    assert count(conn, t) == 501


def test_transaction_sees_its_own_writes(server, tx_table):
    t = tx_table
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} VALUES (1, 'mine')")
        assert tx.execute(f"SELECT v FROM {t}").fetchall() == [("mine",)]
        tx.rollback()


def test_copy_in_transaction_rolls_back(server, conn, tx_table):
    t = tx_table
    with server.connect(autocommit=False) as tx:
        with tx.cursor().copy(f"COPY {t} FROM STDIN") as cp:
            for i in range(1000):
                cp.write_row((i, f"r{i}"))
        tx.rollback()
    assert count(conn, t) == 0


def test_explicit_begin_commit_rollback_statements(conn, tx_table):
    t = tx_table
    conn.execute("BEGIN")
    conn.execute(f"INSERT INTO {t} VALUES (1, 'x')")
    conn.execute("ROLLBACK")
    assert count(conn, t) == 0
    conn.execute("BEGIN")
    conn.execute(f"INSERT INTO {t} VALUES (2, 'y')")
    conn.execute("COMMIT")
    assert conn.execute(f"SELECT k, v FROM {t}").fetchall() == [(2, "y")]


def test_transaction_context_manager(server, conn, tx_table):
    t = tx_table
    with server.connect(autocommit=True) as c:
        with c.transaction():
            c.execute(f"INSERT INTO {t} VALUES (1, 'kept')")
        with pytest.raises(RuntimeError):
            with c.transaction():
                c.execute(f"INSERT INTO {t} VALUES (2, 'dropped')")
                raise RuntimeError("leave the block")
    assert conn.execute(f"SELECT k FROM {t}").fetchall() == [(1,)]


def test_error_aborts_transaction_until_rollback(server, conn, tx_table):
    t = tx_table
    conn.execute(f"INSERT INTO {t} VALUES (1, 'committed')")
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} VALUES (2, 'lost')")
        with pytest.raises(errors.DivisionByZero):
            tx.execute("SELECT 1 / 0")
        assert tx.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(errors.InFailedSqlTransaction) as e:
            tx.execute("SELECT 1")
        assert e.value.sqlstate == "25P02"
        tx.rollback()
        assert tx.execute("SELECT 1").fetchone() == (1,)
        tx.commit()
    assert conn.execute(f"SELECT k FROM {t}").fetchall() == [(1,)]


def test_commit_of_failed_transaction_rolls_back(server, conn, tx_table):
    t = tx_table
    with server.connect(autocommit=True) as c:
        c.execute("BEGIN")
        c.execute(f"INSERT INTO {t} VALUES (1, 'lost')")
        with pytest.raises(errors.UndefinedTable):
            c.execute("SELECT * FROM e2e_no_such_table")
        cur = c.execute("COMMIT")
        assert cur.statusmessage == "ROLLBACK"
    assert count(conn, t) == 0
