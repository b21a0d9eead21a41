"""psycopg 3 against raympp, the features issue 11 names: named (server-side) cursors
(DECLARE / FETCH FORWARD itersize / CLOSE, WITH HOLD too), nested transactions
(conn.transaction() inside one: SAVEPOINT / RELEASE / ROLLBACK TO), executemany with
`%s,%s` placeholders (sent as `$1,$2`), and INSERT ... RETURNING, also through
executemany(..., returning=True) (a pipeline of Bind/Describe/Execute per row). The
expected values are PostgreSQL 15's."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal

import pytest
from psycopg import errors

_serial = itertools.count(1)


@pytest.fixture
def name(server):
    n = f"e2e_psycopg_t{next(_serial)}"
    yield n
    with server.connect() as c:
        c.execute(f"DROP TABLE IF EXISTS {n}")


@pytest.fixture
def filled(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int, name text)")
    conn.execute(f"INSERT INTO {name} SELECT g, 'n' || g FROM generate_series(1, 1000) g")
    return name


# --- named (server-side) cursors ----------------------------------------------------------
def test_named_cursor_iteration(conn, filled):
    with conn.transaction():
        with conn.cursor(name="e2e_named") as cur:
            cur.itersize = 64  # FETCH FORWARD 64 until it comes back short
            cur.execute(f"SELECT id, name FROM {filled} WHERE id > %s ORDER BY id", (10,))
            assert [d.name for d in cur.description] == ["id", "name"]
            got = list(cur)
    assert len(got) == 990
    assert got[0] == (11, "n11") and got[-1] == (1000, "n1000")
    assert [r[0] for r in got] == list(range(11, 1001))


def test_named_cursor_fetch_and_scroll_forward(conn, filled):
    with conn.transaction():
        with conn.cursor(name="e2e_named_fetch") as cur:
            cur.execute(f"SELECT id FROM {filled} ORDER BY id")
            assert cur.fetchone() == (1,)
            assert cur.fetchmany(3) == [(2,), (3,), (4,)]
            cur.scroll(5)  # MOVE FORWARD 5
            assert cur.fetchone() == (10,)
            cur.scroll(100, mode="absolute")
            assert cur.fetchone() == (101,)
            assert len(cur.fetchall()) == 899


def test_named_cursor_with_hold_outlives_the_transaction(server, filled):
    with server.connect(autocommit=False) as c:
        cur = c.cursor(name="e2e_held", withhold=True)
        cur.execute(f"SELECT id FROM {filled} WHERE id <= %s ORDER BY id", (5,))
        c.commit()
        assert cur.fetchmany(2) == [(1,), (2,)]
        assert cur.fetchall() == [(3,), (4,), (5,)]
        cur.close()


# --- nested transactions (savepoints) -----------------------------------------------------
def test_nested_transaction_inner_error_rolls_back_to_savepoint(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int, name text)")
    with conn.transaction():
        conn.execute(f"INSERT INTO {name} VALUES (%s,%s)", (1, "outer"))
        with pytest.raises(errors.UndefinedColumn):
            with conn.transaction():  # SAVEPOINT; the error: ROLLBACK TO SAVEPOINT
                conn.execute(f"SELECT nosuch FROM {name}")
        with conn.transaction():  # SAVEPOINT ... RELEASE
            assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (1,)
    assert conn.execute(f"SELECT id, name FROM {name}").fetchall() == [(1, "outer")]


def test_nested_transaction_commits_inner_writes(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int)")
    with conn.transaction():
        with conn.transaction():
            conn.execute(f"INSERT INTO {name} VALUES (1)")
        with conn.transaction() as inner:
            conn.execute(f"INSERT INTO {name} VALUES (2)")
            assert inner.savepoint_name is not None
    assert conn.execute(f"SELECT id FROM {name} ORDER BY id").fetchall() == [(1,), (2,)]


def test_nested_transaction_rollback_of_inner_writes(conn, name):
    # ROLLBACK TO SAVEPOINT drops the rows written since the savepoint, as PostgreSQL.
    conn.execute(f"CREATE TABLE {name} (id int)")
    with conn.transaction():
        conn.execute(f"INSERT INTO {name} VALUES (1)")
        with conn.transaction(force_rollback=True):
            conn.execute(f"INSERT INTO {name} VALUES (2)")
        with pytest.raises(errors.DivisionByZero):
            with conn.transaction():
                conn.execute(f"INSERT INTO {name} VALUES (3)")
                conn.execute("SELECT 1 / 0")
        conn.execute(f"INSERT INTO {name} VALUES (4)")
    assert conn.execute(f"SELECT id FROM {name} ORDER BY id").fetchall() == [(1,), (4,)]


# --- executemany and %s,%s ----------------------------------------------------------------
def test_executemany_without_spaces(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int, name text, amount numeric(10,2), day date)")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {name} VALUES (%s,%s,%s,%s)",
                        [(1, "a", Decimal("1.50"), dt.date(2024, 1, 1)),
                         (2, "b,c", None, dt.date(2024, 2, 29)), (3, None, Decimal("-3"), None)])
        assert cur.rowcount == 3
        cur.execute(f"SELECT * FROM {name} WHERE id IN (%s,%s) ORDER BY id", (1, 2))
        assert cur.fetchall() == [(1, "a", Decimal("1.50"), dt.date(2024, 1, 1)),
                                  (2, "b,c", None, dt.date(2024, 2, 29))]
        cur.execute(f"SELECT count(*) FROM {name} WHERE id BETWEEN %s AND %s", (2, 3))
        assert cur.fetchone() == (2,)


# --- INSERT ... RETURNING -----------------------------------------------------------------
def test_insert_returning(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int, name text, amount numeric(10,2), day date)")
    cur = conn.execute(f"INSERT INTO {name} VALUES (1, 'a', 1.5, '2024-01-01'), "
                       "(2, NULL, NULL, NULL) RETURNING *")
    assert cur.statusmessage == "INSERT 0 2" and cur.rowcount == 2
    assert [(d.name, d.type_code) for d in cur.description] == [
        ("id", 23), ("name", 25), ("amount", 1700), ("day", 1082)]
    assert sorted(cur.fetchall(), key=lambda r: r[0]) == [
        (1, "a", Decimal("1.50"), dt.date(2024, 1, 1)), (2, None, None, None)]
    cur = conn.execute(f"INSERT INTO {name} AS x (id, name) VALUES (%s, %s) "
                       "RETURNING x.id * 2 AS twice, upper(name), amount IS NULL, id + 0.5",
                       (3, "c"))
    assert [d.name for d in cur.description] == ["twice", "upper", "?column?", "?column?"]
    assert cur.fetchall() == [(6, "C", True, Decimal("3.5"))]
    assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (3,)


def test_insert_select_returning_is_the_inserted_rows(conn, filled, name):
    target = f"{name}_copy"
    try:
        conn.execute(f"CREATE TABLE {target} (id int, name text) DISTRIBUTED BY (name)"
                     if not _is_postgres(conn) else f"CREATE TABLE {target} (id int, name text)")
        cur = conn.execute(f"INSERT INTO {target} SELECT id + 1000, name FROM {filled} "
                           "WHERE id % 100 = 0 RETURNING id, name, "
                           f"(SELECT count(*) FROM {filled}) AS source_rows")
        assert cur.statusmessage == "INSERT 0 10"
        got = sorted(cur.fetchall())
        assert got == [(1000 + i, f"n{i}", 1000) for i in range(100, 1001, 100)]
        assert sorted(conn.execute(f"SELECT id, name FROM {target}").fetchall()) == \
            [g[:2] for g in got]
        cur = conn.execute(f"INSERT INTO {target} SELECT * FROM {filled} WHERE id < 0 "
                           "RETURNING id")
        assert cur.statusmessage == "INSERT 0 0" and cur.fetchall() == []
    finally:
        conn.execute(f"DROP TABLE IF EXISTS {target}")


def test_insert_returning_in_a_rolled_back_block(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int)")
    with conn.transaction(force_rollback=True):
        assert conn.execute(f"INSERT INTO {name} VALUES (1), (2) RETURNING id") \
            .fetchall() in ([(1,), (2,)], [(2,), (1,)])
        assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (2,)
    assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,)


def test_insert_returning_errors(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int)")
    with pytest.raises(errors.GroupingError):  # 42803, as PostgreSQL
        conn.execute(f"INSERT INTO {name} VALUES (1) RETURNING count(*)")
    with pytest.raises(errors.UndefinedColumn):
        conn.execute(f"INSERT INTO {name} VALUES (1) RETURNING nosuch")
    assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,)


def test_insert_on_conflict_tags_and_returning(conn, name):
    """INSERT 0 n counts the rows inserted and updated (DO NOTHING: inserted only), with
    RETURNING or without; parameters take their columns' types; 21000 writes nothing."""
    conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, v text)")
    conn.execute(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
    cur = conn.execute(f"INSERT INTO {name} VALUES (%s, %s), (3, 'c') ON CONFLICT (id) "
                       "DO UPDATE SET v = EXCLUDED.v || '!' RETURNING id, v", (1, "x"))
    assert cur.statusmessage == "INSERT 0 2"
    assert [(d.name, d.type_code) for d in cur.description] == [("id", 23), ("v", 25)]
    assert sorted(cur.fetchall()) == [(1, "x!"), (3, "c")]
    cur = conn.execute(f"INSERT INTO {name} VALUES (2, 'y'), (4, 'd') ON CONFLICT DO NOTHING")
    assert cur.statusmessage == "INSERT 0 1" and cur.rowcount == 1
    cur = conn.execute(f"INSERT INTO {name} VALUES (2, 'y'), (4, 'z') ON CONFLICT (id) "
                       "DO UPDATE SET v = EXCLUDED.v WHERE EXCLUDED.v = 'z'")
    assert cur.statusmessage == "INSERT 0 1"
    with pytest.raises(errors.CardinalityViolation):  # 21000
        conn.execute(f"INSERT INTO {name} VALUES (5, 'e'), (5, 'f') ON CONFLICT (id) "
                     "DO UPDATE SET v = EXCLUDED.v")
    assert sorted(conn.execute(f"SELECT * FROM {name}").fetchall()) == [
        (1, "x!"), (2, "b"), (3, "c"), (4, "z")]


def test_executemany_returning(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int, name text)")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {name} VALUES (%s,%s) RETURNING id, name || '!'",
                        [(1, "a"), (2, "b"), (3, "c")], returning=True)
        got = []
        while True:
            got.append(cur.fetchall())
            if not cur.nextset():
                break
    assert got == [[(1, "a!")], [(2, "b!")], [(3, "c!")]]
    assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (3,)


def test_prepare_insert_returning(conn, name):
    conn.execute(f"CREATE TABLE {name} (id int, day date)")
    conn.execute(f"PREPARE e2e_ins (int, date) AS INSERT INTO {name} VALUES ($1, $2) "
                 "RETURNING id, day + 1")
    try:
        assert conn.execute("EXECUTE e2e_ins (7, '2024-02-28')").fetchall() == [
            (7, dt.date(2024, 2, 29))]
    finally:
        conn.execute("DEALLOCATE e2e_ins")


def _is_postgres(conn) -> bool:
    return "raympp" not in conn.execute("SELECT version()").fetchone()[0].lower()
