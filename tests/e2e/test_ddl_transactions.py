"""Transactional DDL, schema-qualified names, search_path, TEMP refusal and read-only
transactions, as PostgreSQL 15 behaves (the messages below are PostgreSQL's).

CREATE / DROP / TRUNCATE / CREATE TABLE AS take effect at COMMIT: ROLLBACK gives back the
table and every row of it; a table created by a rolled-back transaction does not exist
and its storage is gone from the segments. Other sessions see the committed state (they
do not wait); DDL of two transactions on one table name waits for the first to end.
The last tests kill a segment or cut the coordinator short between the catalog change
and the storage change, on a cluster of their own.
"""

from __future__ import annotations

import os
import threading
import time

import pytest
from psycopg import errors

from tests.conftest import kill_segment, start_server, wait_restarted


def rows_of(conn, t):
    return conn.execute(f"SELECT count(*), sum(k), sum(v) FROM {t}").fetchone()


def fails(conn, sql, sqlstate, message=None):
    with pytest.raises(errors.Error) as e:
        conn.execute(sql)
    assert e.value.sqlstate == sqlstate, (sql, e.value)
    if message is not None:
        assert e.value.diag.message_primary == message, sql
    return e.value


def storage_dirs(server, table_id: int) -> list[str]:
    """The table's directories that exist on the segments."""
    dirs = [os.path.join(server.data_dir, f"seg{i}", "tables", str(table_id))
            for i in range(server.n_segments)]
    return [d for d in dirs if os.path.isdir(d)]


def wait_storage_gone(server, table_id: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while storage_dirs(server, table_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert storage_dirs(server, table_id) == []


def created_id(server, name: str) -> int:
    """The id a table got (uncommitted: from the open transactions' DDL)."""
    cat = server.engine.catalog.get_table(name)
    if cat is not None:
        return cat.id
    return max(i for i, _ in server.engine.catalog.storage_rows())


@pytest.fixture
def loaded(conn, table):
    """A table of 10,004 rows on both segments, and its (count, sum(k), sum(v))."""
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8, v int8, s text) DISTRIBUTED BY (k)")
    conn.execute(f"INSERT INTO {t} SELECT g, g * 3, 's' || g FROM generate_series(1, 10000) g")
    conn.execute(f"INSERT INTO {t} VALUES (-1, 7, 'a'), (-2, 8, NULL), (20000, NULL, 'z'), "
                 f"(0, 0, '')")
    before = rows_of(conn, t)
    assert before[0] == 10004
    return t, before


# --- DROP ----------------------------------------------------------------------------------
def test_rollback_of_drop_keeps_every_row(server, conn, loaded):
    t, before = loaded
    table_id = server.engine.catalog.get_table(t).id
    with server.connect(autocommit=False) as tx:
        tx.execute(f"DROP TABLE {t}")
        fails(tx, f"SELECT * FROM {t}", "42P01", f'relation "{t}" does not exist')
        tx.rollback()
        # The other session saw the table all along (and did not wait).
        assert rows_of(conn, t) == before
        assert rows_of(tx, t) == before
    assert rows_of(conn, t) == before
    assert len(storage_dirs(server, table_id)) == server.n_segments
    conn.execute(f"INSERT INTO {t} VALUES (1, 1, 'again')")
    assert rows_of(conn, t)[0] == before[0] + 1


def test_drop_in_a_failed_block_keeps_the_table(server, conn, loaded):
    t, before = loaded
    with server.connect(autocommit=False) as tx:
        tx.execute(f"DROP TABLE {t}")
        fails(tx, "SELECT 1 / 0", "22012")
        tx.commit()  # a failed block commits as ROLLBACK
    assert rows_of(conn, t) == before


def test_commit_of_drop(server, conn, loaded):
    t, before = loaded
    table_id = server.engine.catalog.get_table(t).id
    with server.connect(autocommit=False) as tx:
        tx.execute(f"DROP TABLE {t}")
        assert rows_of(conn, t) == before  # not committed: still there for others
        tx.commit()
    fails(conn, f"SELECT * FROM {t}", "42P01", f'relation "{t}" does not exist')
    fails(conn, f"DROP TABLE {t}", "42P01", f'table "{t}" does not exist')
    wait_storage_gone(server, table_id)
    assert server.engine.catalog.storage_rows() == []


def test_drop_several_tables_is_all_or_nothing(conn, loaded, table):
    t, before = loaded
    fails(conn, f"DROP TABLE {t}, no_such_table_here", "42P01",
          'table "no_such_table_here" does not exist')
    assert rows_of(conn, t) == before
    conn.execute(f"DROP TABLE IF EXISTS {t}, no_such_table_here, nosuchschema.x")
    fails(conn, f"SELECT 1 FROM {t}", "42P01")


# --- CREATE, CREATE TABLE AS, TRUNCATE ------------------------------------------------------------
def test_rollback_of_create(server, conn, table):
    t = table()
    with server.connect(autocommit=False) as tx:
        tx.execute(f"CREATE TABLE {t} (k int8, v int8) DISTRIBUTED BY (k)")
        tx.execute(f"INSERT INTO {t} SELECT g, g FROM generate_series(1, 5000) g")
        assert rows_of(tx, t) == (5000, 12502500, 12502500)
        table_id = created_id(server, t)
        assert len(storage_dirs(server, table_id)) == server.n_segments
        fails(conn, f"SELECT * FROM {t}", "42P01", f'relation "{t}" does not exist')
        fails(conn, f"INSERT INTO {t} VALUES (1, 1)", "42P01")
        tx.rollback()
        fails(tx, f"SELECT * FROM {t}", "42P01")
    fails(conn, f"SELECT * FROM {t}", "42P01", f'relation "{t}" does not exist')
    assert server.engine.catalog.get_table(t) is None
    wait_storage_gone(server, table_id)
    assert server.engine.catalog.storage_rows() == []


def test_commit_of_create(server, conn, table):
    t = table()
    with server.connect(autocommit=False) as tx:
        tx.execute(f"CREATE TABLE {t} (k int8, v int8) DISTRIBUTED BY (k)")
        tx.execute(f"INSERT INTO {t} SELECT g, -g FROM generate_series(1, 3000) g")
        fails(conn, f"SELECT * FROM {t}", "42P01")
        tx.commit()
    assert rows_of(conn, t) == (3000, 4501500, -4501500)
    with server.connect() as other:
        assert rows_of(other, t) == (3000, 4501500, -4501500)
    assert server.engine.catalog.storage_rows() == []


def test_create_table_as_in_a_transaction(server, conn, loaded, table):
    src, before = loaded
    kept, gone = table(), table()
    with server.connect(autocommit=False) as tx:
        tx.execute(f"CREATE TABLE {gone} AS SELECT k, v FROM {src} DISTRIBUTED BY (k)")
        assert rows_of(tx, gone) == before
        table_id = created_id(server, gone)
        tx.rollback()
    fails(conn, f"SELECT * FROM {gone}", "42P01")
    wait_storage_gone(server, table_id)
    with server.connect(autocommit=False) as tx:
        cur = tx.execute(f"CREATE TABLE {kept} AS SELECT k, v FROM {src} WHERE k > 0")
        assert cur.statusmessage == "SELECT 10001"
        fails(conn, f"SELECT * FROM {kept}", "42P01")
        tx.commit()
    assert rows_of(conn, kept)[0] == 10001
    cur = conn.execute(f"CREATE TABLE IF NOT EXISTS {kept} AS SELECT 1 AS k")
    assert cur.statusmessage == "CREATE TABLE AS"


def test_failing_create_table_as_leaves_nothing(server, conn, table):
    t = table()
    fails(conn, f"CREATE TABLE {t} AS SELECT 1 / (g - 900) AS x FROM generate_series(1, 1000) g",
          "22012")
    fails(conn, f"SELECT * FROM {t}", "42P01")
    assert server.engine.catalog.get_table(t) is None
    deadline = time.monotonic() + 30
    while server.engine.catalog.storage_rows() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert server.engine.catalog.storage_rows() == []


def test_drop_and_create_again_in_one_transaction(server, conn, loaded):
    t, before = loaded
    with server.connect(autocommit=False) as tx:
        tx.execute(f"DROP TABLE {t}")
        tx.execute(f"CREATE TABLE {t} (other text)")
        tx.execute(f"INSERT INTO {t} VALUES ('new')")
        assert tx.execute(f"SELECT * FROM {t}").fetchall() == [("new",)]
        assert rows_of(conn, t) == before
        tx.rollback()
    assert rows_of(conn, t) == before
    with server.connect(autocommit=False) as tx:
        tx.execute(f"DROP TABLE {t}")
        tx.execute(f"CREATE TABLE {t} (other text)")
        tx.execute(f"INSERT INTO {t} VALUES ('new')")
        tx.commit()
    assert conn.execute(f"SELECT * FROM {t}").fetchall() == [("new",)]


def test_writes_then_drop_in_one_transaction(server, conn, loaded):
    t, before = loaded
    table_id = server.engine.catalog.get_table(t).id
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} SELECT g, 1, 'x' FROM generate_series(1, 500) g")
        tx.execute(f"TRUNCATE {t}")
        tx.execute(f"INSERT INTO {t} VALUES (1, 1, 'y')")
        tx.execute(f"DROP TABLE {t}")
        tx.rollback()
    assert rows_of(conn, t) == before  # neither the writes nor the truncate nor the drop
    with server.connect(autocommit=False) as tx:
        tx.execute(f"INSERT INTO {t} SELECT g, 1, 'x' FROM generate_series(1, 500) g")
        tx.execute(f"DROP TABLE {t}")
        tx.commit()
    fails(conn, f"SELECT * FROM {t}", "42P01")
    wait_storage_gone(server, table_id)


def test_create_then_drop_in_one_transaction(server, conn, table):
    t = table()
    with server.connect(autocommit=False) as tx:
        tx.execute(f"CREATE TABLE {t} (a int)")
        table_id = created_id(server, t)
        tx.execute(f"DROP TABLE {t}")
        fails(tx, f"SELECT * FROM {t}", "42P01")
        tx.commit()
    fails(conn, f"SELECT * FROM {t}", "42P01")
    wait_storage_gone(server, table_id)


def test_truncate_in_a_transaction(server, conn, loaded):
    t, before = loaded
    with server.connect(autocommit=False) as tx:
        tx.execute(f"TRUNCATE {t}")
        assert rows_of(tx, t)[0] == 0
        assert rows_of(conn, t) == before
        tx.rollback()
    assert rows_of(conn, t) == before
    with server.connect(autocommit=False) as tx:
        tx.execute(f"TRUNCATE TABLE public.{t}")
        tx.commit()
    assert rows_of(conn, t)[0] == 0


# --- other sessions: DDL on one name waits; queries do not ------------------------------------
def test_second_drop_waits_for_the_first(server, conn, loaded):
    t, before = loaded
    with server.connect(autocommit=False) as tx:
        tx.execute(f"DROP TABLE {t}")
        conn.execute("SET lock_timeout = '200ms'")
        fails(conn, f"DROP TABLE {t}", "55P03", "canceling statement due to lock timeout")
        fails(conn, f"TRUNCATE {t}", "55P03")
        conn.execute("RESET lock_timeout")
        assert rows_of(conn, t) == before  # reads do not wait
        outcome = []

        def drop():
            with server.connect() as other:
                try:
                    other.execute(f"DROP TABLE {t}")
                    outcome.append("dropped")
                except errors.Error as e:
                    outcome.append((e.sqlstate, e.diag.message_primary))
        th = threading.Thread(target=drop)
        th.start()
        time.sleep(0.5)
        assert outcome == []  # waiting for the lock
        tx.commit()
        th.join(30)
    assert outcome == [("42P01", f'table "{t}" does not exist')]


def test_create_waits_for_an_uncommitted_create_of_the_name(server, conn, table):
    t = table()
    with server.connect(autocommit=False) as tx:
        tx.execute(f"CREATE TABLE {t} (a int)")
        outcome = []

        def create():
            with server.connect() as other:
                try:
                    other.execute(f"CREATE TABLE {t} (b text)")
                    outcome.append("created")
                except errors.Error as e:
                    outcome.append(e.sqlstate)
        th = threading.Thread(target=create)
        th.start()
        time.sleep(0.5)
        assert outcome == []
        tx.rollback()
        th.join(30)
    assert outcome == ["created"]
    assert [d.name for d in conn.execute(f"SELECT * FROM {t}").description] == ["b"]


def test_deadlock_is_detected(server, conn, table):
    a, b = table(), table()
    conn.execute(f"CREATE TABLE {a} (x int)")
    conn.execute(f"CREATE TABLE {b} (x int)")
    with server.connect(autocommit=False) as t1, server.connect(autocommit=False) as t2:
        t1.execute(f"DROP TABLE {a}")
        t2.execute(f"DROP TABLE {b}")
        outcome = {}

        def drop(name, tx, other):
            try:
                tx.execute(f"DROP TABLE {other}")
                outcome[name] = "ok"
            except errors.Error as e:
                outcome[name] = (e.sqlstate, e.diag.message_primary, e.diag.message_detail)
                tx.rollback()  # ends it: the other one's wait ends
        th = threading.Thread(target=drop, args=("t1", t1, b))
        th.start()
        time.sleep(0.5)
        drop("t2", t2, a)
        th.join(30)
        # One of the two is chosen (the one that closes the cycle), the other goes on.
        failed = [k for k, v in outcome.items() if v != "ok"]
        assert len(outcome) == 2 and len(failed) == 1, outcome
        state, message, detail = outcome[failed[0]]
        assert (state, message) == ("40P01", "deadlock detected")
        assert "blocked by process" in detail
        winner = t1 if failed[0] == "t2" else t2
        winner.commit()
    fails(conn, f"SELECT * FROM {a}", "42P01")
    fails(conn, f"SELECT * FROM {b}", "42P01")


# --- schema-qualified names ------------------------------------------------------------------
def test_schema_qualified_names(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE public.{t} (k int8, v int8)")
    conn.execute(f"INSERT INTO public.{t} VALUES (1, 10)")
    conn.execute(f'INSERT INTO "public"."{t}" (k, v) VALUES (2, 20)')
    conn.execute(f"INSERT INTO raympp.public.{t} SELECT 3, 30")
    assert rows_of(conn, f"public.{t}") == (3, 6, 60)
    assert rows_of(conn, f"raympp.public.{t}") == (3, 6, 60)
    assert conn.execute(f"SELECT {t}.k FROM public.{t} WHERE {t}.v = 20").fetchall() == [(2,)]
    assert conn.execute(f"SELECT x.k FROM PUBLIC.{t} x WHERE x.v = 30").fetchall() == [(3,)]
    conn.execute(f"ANALYZE public.{t}")
    conn.execute(f"ANALYZE raympp.public.{t} (k), {t}")
    with conn.cursor() as cur:
        with cur.copy(f"COPY public.{t} FROM STDIN") as cp:
            cp.write_row((4, 40))
        with cur.copy(f"COPY raympp.public.{t} TO STDOUT") as cp:
            cp.set_types(["int8", "int8"])
            assert sorted(cp.rows()) == [(1, 10), (2, 20), (3, 30), (4, 40)]
    assert rows_of(conn, t) == (4, 10, 100)
    conn.execute(f"TRUNCATE public.{t}")
    assert rows_of(conn, t)[0] == 0
    conn.execute(f"DROP TABLE public.{t}")
    fails(conn, f"SELECT * FROM {t}", "42P01")


@pytest.mark.parametrize("sql, sqlstate, message", [
    ("SELECT * FROM otherschema.{t}", "42P01", 'relation "otherschema.{t}" does not exist'),
    ("SELECT * FROM public.no_such_x", "42P01", 'relation "public.no_such_x" does not exist'),
    ('SELECT * FROM "PUBLIC".{t}', "42P01", 'relation "PUBLIC.{t}" does not exist'),
    ("SELECT * FROM pg_catalog.{t}", "42P01", 'relation "pg_catalog.{t}" does not exist'),
    ("SELECT * FROM otherdb.public.{t}", "0A000",
     'cross-database references are not implemented: "otherdb.public.{t}"'),
    ("SELECT * FROM a.b.c.d", "42601", "improper qualified name (too many dotted names): a.b.c.d"),
    ("INSERT INTO otherschema.{t} VALUES (1)", "42P01", 'relation "otherschema.{t}" does not exist'),
    ("INSERT INTO otherdb.public.{t} VALUES (1)", "0A000", None),
    ("CREATE TABLE otherschema.{t} (a int)", "3F000", 'schema "otherschema" does not exist'),
    ("CREATE TABLE otherschema.{t} AS SELECT 1", "3F000", 'schema "otherschema" does not exist'),
    ("CREATE TABLE pg_catalog.{t} (a int)", "42501", 'permission denied to create "pg_catalog.{t}"'),
    ("CREATE TABLE otherdb.public.x (a int)", "0A000",
     'cross-database references are not implemented: "otherdb.public.x"'),
    ("CREATE TABLE public.{t} (a int)", "42P07", 'relation "{t}" already exists'),
    ("DROP TABLE otherschema.{t}", "3F000", 'schema "otherschema" does not exist'),
    ("DROP TABLE public.no_such_x", "42P01", 'table "no_such_x" does not exist'),
    ("TRUNCATE otherschema.{t}", "3F000", 'schema "otherschema" does not exist'),
    ("TRUNCATE public.no_such_x", "42P01", 'relation "public.no_such_x" does not exist'),
    ("ANALYZE otherschema.{t}", "3F000", 'schema "otherschema" does not exist'),
    ("ANALYZE public.no_such_x", "42P01", 'relation "public.no_such_x" does not exist'),
    ("COPY otherschema.{t} FROM STDIN", "3F000", 'schema "otherschema" does not exist'),
    ("COPY public.no_such_x FROM STDIN", "42P01", 'relation "public.no_such_x" does not exist'),
    ("COPY otherschema.{t} TO STDOUT", "3F000", 'schema "otherschema" does not exist'),
])
def test_names_in_other_schemas(conn, table, sql, sqlstate, message):
    t = table()
    conn.execute(f"CREATE TABLE {t} (a int)")
    conn.execute(f"INSERT INTO {t} VALUES (5)")
    fails(conn, sql.format(t=t), sqlstate, message.format(t=t) if message else None)
    # Nothing read or wrote public.t in its place.
    assert conn.execute(f"SELECT a FROM {t}").fetchall() == [(5,)]


# --- search_path -------------------------------------------------------------------------------
def test_search_path(server, table):
    t = table()
    with server.connect() as c:
        c.execute(f"CREATE TABLE {t} (a int)")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        assert c.execute("SHOW search_path").fetchone() == ('"$user", public',)
        assert c.execute("SELECT current_schema()").fetchone() == ("public",)
        c.execute("SET search_path = foo")
        assert c.execute("SHOW search_path").fetchone() == ("foo",)
        assert c.execute("SELECT current_schema()").fetchone() == (None,)
        fails(c, f"SELECT * FROM {t}", "42P01", f'relation "{t}" does not exist')
        fails(c, f"INSERT INTO {t} VALUES (2)", "42P01", f'relation "{t}" does not exist')
        fails(c, f"DROP TABLE {t}", "42P01", f'table "{t}" does not exist')
        fails(c, f"TRUNCATE {t}", "42P01", f'relation "{t}" does not exist')
        fails(c, "CREATE TABLE sp_new (a int)", "3F000", "no schema has been selected to create in")
        fails(c, "CREATE TABLE sp_new AS SELECT 1", "3F000",
              "no schema has been selected to create in")
        assert c.execute(f"SELECT a FROM public.{t}").fetchall() == [(1,)]
        c.execute("SET search_path = foo, public")
        assert c.execute("SELECT current_schema()").fetchone() == ("public",)
        assert c.execute(f"SELECT a FROM {t}").fetchall() == [(1,)]
        c.execute("SET search_path = pg_catalog")
        assert c.execute("SELECT current_schema()").fetchone() == ("pg_catalog",)
        fails(c, "CREATE TABLE sp_new (a int)", "42501", 'permission denied to create "pg_catalog.sp_new"')
        c.execute("SET search_path TO ''")
        assert c.execute("SHOW search_path").fetchone() == ('""',)
        c.execute('SET search_path = "$user", foo, public')
        assert c.execute("SHOW search_path").fetchone() == ('"$user", foo, public',)
        c.execute(f"INSERT INTO {t} VALUES (2)")
        c.execute("SET SCHEMA 'foo'")
        fails(c, f"SELECT * FROM {t}", "42P01")
        c.execute("RESET search_path")
        assert c.execute("SHOW search_path").fetchone() == ('"$user", public',)
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (2,)
        fails(c, "SET search_path = 'a', \"b", "42601")


# --- TEMP and UNLOGGED ----------------------------------------------------------------------------
@pytest.mark.parametrize("sql", [
    "CREATE TEMP TABLE {t} (a int)", "CREATE TEMPORARY TABLE {t} (a int)",
    "CREATE LOCAL TEMP TABLE {t} (a int)", "CREATE GLOBAL TEMPORARY TABLE {t} (a int)",
    "CREATE TEMP TABLE {t} AS SELECT 1 AS a", "CREATE TEMP TABLE IF NOT EXISTS {t} (a int)"])
def test_temporary_tables_are_the_sessions(conn, table, sql):
    """TEMP tables exist (coordinator/temp_tables.py; tests/e2e/test_temp_tables.py)."""
    t = table()
    conn.execute(sql.format(t=t))
    assert len(conn.execute(f"SELECT * FROM {t}").fetchall()) <= 1
    conn.execute(f"DROP TABLE {t}")


def test_unlogged_tables_are_durable_tables(conn, table):
    t = table()
    conn.execute(f"CREATE UNLOGGED TABLE {t} (a int)")
    conn.execute(f"INSERT INTO {t} VALUES (1)")
    assert conn.execute(f"SELECT * FROM {t}").fetchall() == [(1,)]


# --- read-only transactions ------------------------------------------------------------------------
def _in_read_only(conn, sql, sqlstate="25006", message=None, begin="BEGIN READ ONLY"):
    conn.execute(begin)
    try:
        return fails(conn, sql, sqlstate, message)
    finally:
        conn.execute("ROLLBACK")


@pytest.mark.parametrize("sql, command", [
    ("INSERT INTO {t} VALUES (1)", "INSERT"),
    ("INSERT INTO {t} SELECT g FROM generate_series(1, 10) g", "INSERT"),
    ("CREATE TABLE {t}_new (a int)", "CREATE TABLE"),
    ("CREATE TABLE IF NOT EXISTS {t} (a int)", "CREATE TABLE"),
    ("CREATE TABLE {t}_new AS SELECT 1", "CREATE TABLE AS"),
    ("DROP TABLE {t}", "DROP TABLE"),
    ("DROP TABLE no_such_table_here", "DROP TABLE"),
    ("TRUNCATE {t}", "TRUNCATE TABLE"),
    ("TRUNCATE no_such_table_here", "TRUNCATE TABLE"),
])
def test_read_only_transaction_refuses_writes(conn, table, sql, command):
    t = table()
    conn.execute(f"CREATE TABLE {t} (a int)")
    conn.execute(f"INSERT INTO {t} VALUES (7)")
    _in_read_only(conn, sql.format(t=t), "25006",
                  f"cannot execute {command} in a read-only transaction")
    assert conn.execute(f"SELECT * FROM {t}").fetchall() == [(7,)]
    fails(conn, f"SELECT * FROM {t}_new", "42P01")


def test_read_only_transaction(server, table):
    t = table()
    with server.connect() as c:
        c.execute(f"CREATE TABLE {t} (a int)")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        # The target must exist first (PostgreSQL's parse analysis, COPY's table open).
        _in_read_only(c, "INSERT INTO no_such_table_here VALUES (1)", "42P01")
        _in_read_only(c, "COPY no_such_table_here FROM STDIN", "42P01")
        cur = c.execute("START TRANSACTION READ ONLY")
        assert cur.statusmessage == "START TRANSACTION"
        assert c.execute("SHOW transaction_read_only").fetchone() == ("on",)
        assert c.execute(f"SELECT a FROM {t}").fetchall() == [(1,)]
        c.execute(f"ANALYZE {t}")  # allowed in PostgreSQL too
        with pytest.raises(errors.Error) as e:
            with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                cp.write_row((2,))
        assert (e.value.sqlstate, e.value.diag.message_primary) == (
            "25006", "cannot execute COPY FROM in a read-only transaction")
        c.execute("ROLLBACK")
        assert c.execute("SHOW transaction_read_only").fetchone() == ("off",)
        # SET TRANSACTION READ ONLY after a statement; READ WRITE only before one.
        c.execute("BEGIN")
        c.execute("SELECT 1")
        c.execute("SET TRANSACTION READ ONLY")
        fails(c, f"INSERT INTO {t} VALUES (2)", "25006",
              "cannot execute INSERT in a read-only transaction")
        c.execute("ROLLBACK")
        c.execute("BEGIN READ ONLY")
        c.execute("SET TRANSACTION READ WRITE")
        c.execute(f"INSERT INTO {t} VALUES (2)")
        c.execute("COMMIT")
        c.execute("BEGIN READ ONLY")
        c.execute("SELECT 1")
        fails(c, "SET TRANSACTION READ WRITE", "25001",
              "transaction read-write mode must be set before any query")
        c.execute("ROLLBACK")
        # The session default, for blocks begun after it and for autocommit statements.
        c.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        assert c.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
        assert c.execute("SHOW transaction_read_only").fetchone() == ("on",)
        fails(c, f"INSERT INTO {t} VALUES (3)", "25006")
        fails(c, f"DROP TABLE {t}", "25006", "cannot execute DROP TABLE in a read-only transaction")
        c.execute("BEGIN")
        assert c.execute("SHOW transaction_read_only").fetchone() == ("on",)
        c.execute("SET default_transaction_read_only = off")  # the next block's
        assert c.execute("SHOW transaction_read_only").fetchone() == ("on",)
        fails(c, f"INSERT INTO {t} VALUES (3)", "25006")
        c.execute("ROLLBACK")  # which undoes the SET, as in PostgreSQL
        assert c.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
        fails(c, f"INSERT INTO {t} VALUES (3)", "25006")
        c.execute("SET default_transaction_read_only = off")
        c.execute(f"INSERT INTO {t} VALUES (3)")
        c.execute("SET default_transaction_read_only = on")
        c.execute("BEGIN READ WRITE")
        c.execute(f"INSERT INTO {t} VALUES (4)")
        c.execute("COMMIT")
        c.execute("RESET default_transaction_read_only")
        c.execute("BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY")
        assert c.execute("SHOW transaction_read_only").fetchone() == ("on",)
        c.execute("COMMIT")
        assert sorted(c.execute(f"SELECT a FROM {t}").fetchall()) == [(1,), (2,), (3,), (4,)]


def test_default_transaction_read_only_at_startup(server, table):
    t = table()
    with server.connect() as c:
        c.execute(f"CREATE TABLE {t} (a int)")
    with server.connect(options="-c default_transaction_read_only=on") as c:
        assert c.execute("SHOW transaction_read_only").fetchone() == ("on",)
        assert c.info.parameter_status("default_transaction_read_only") == "on"
        fails(c, f"INSERT INTO {t} VALUES (1)", "25006")
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


# --- faults: a segment restart, the coordinator cut short ---------------------------------------
@pytest.fixture(scope="module")
def own(ray_session, tmp_path_factory):
    """A cluster of this module's own (its tests kill segments and restart it);
    `restart(before_start)` stops the coordinator, calls `before_start()` and starts a new
    coordinator on the same data directory."""
    data_dir = str(tmp_path_factory.mktemp("ddl-txn"))
    box = {"server": start_server(data_dir, 2)}

    def restart(before_start=None):
        box["server"].stop()
        if before_start is not None:
            before_start()
        box["server"] = start_server(data_dir, 2)
        return box["server"]
    box["restart"] = restart
    yield box
    box["server"].stop()


def _no_collection(monkeypatch):
    """As if the coordinator stopped before removing any storage: no collection at the
    end of transactions nor in the engine's background round."""
    from coordinator import engine, transaction

    monkeypatch.setattr(transaction, "collect_garbage", lambda *a: [])
    monkeypatch.setattr(engine, "collect_garbage", lambda *a: [])


def _kill_segment(server, seg: int) -> None:
    wait_restarted(server, seg, kill_segment(server, seg))


def _load(c, t):
    c.execute(f"CREATE TABLE {t} (k int8, v int8) DISTRIBUTED BY (k)")
    c.execute(f"INSERT INTO {t} SELECT g, g * 2 FROM generate_series(1, 20000) g")
    return rows_of(c, t)


def test_segment_restart_inside_a_drop_transaction(own):
    server = own["server"]
    with server.connect() as c:
        before = _load(c, "f_drop_kill")
        with server.connect(autocommit=False) as tx:
            tx.execute("DROP TABLE f_drop_kill")
            _kill_segment(server, 1)
            tx.rollback()
        assert rows_of(c, "f_drop_kill") == before
        # And a committed drop while a segment restarts: gone everywhere once it is back.
        table_id = server.engine.catalog.get_table("f_drop_kill").id
        with server.connect(autocommit=False) as tx:
            tx.execute("DROP TABLE f_drop_kill")
            _kill_segment(server, 0)
            tx.commit()
        fails(c, "SELECT * FROM f_drop_kill", "42P01")
        c.execute("CREATE TABLE f_after_kill (a int)")  # a later DDL retries any removal
        c.execute("DROP TABLE f_after_kill")
        wait_storage_gone(server, table_id, 60)


def test_segment_restart_inside_a_create_transaction(own):
    server = own["server"]
    with server.connect() as c:
        with server.connect(autocommit=False) as tx:
            tx.execute("CREATE TABLE f_create_kill (k int8, v int8)")
            tx.execute("INSERT INTO f_create_kill SELECT g, g FROM generate_series(1, 1000) g")
            table_id = created_id(server, "f_create_kill")
            _kill_segment(server, 1)
            with pytest.raises(errors.Error) as e:
                tx.commit()
            assert e.value.sqlstate == "40001"
        fails(c, "SELECT * FROM f_create_kill", "42P01")
        wait_storage_gone(server, table_id, 60)


def test_coordinator_cut_short_after_a_committed_drop(own, monkeypatch):
    """The catalog commits the drop, then the coordinator stops before the storage is
    removed: the table stays dropped, and its storage goes when the coordinator starts."""
    server = own["server"]
    with server.connect() as c:
        _load(c, "f_drop_crash")
    table_id = server.engine.catalog.get_table("f_drop_crash").id
    _no_collection(monkeypatch)
    with server.connect() as c:
        c.execute("DROP TABLE f_drop_crash")
    assert len(storage_dirs(server, table_id)) == 2  # cut short: nothing removed yet
    assert [i for i, _ in server.engine.catalog.storage_rows()] == [table_id]
    server = own["restart"](monkeypatch.undo)
    with server.connect() as c:
        fails(c, "SELECT * FROM f_drop_crash", "42P01")
    assert storage_dirs(server, table_id) == []
    assert server.engine.catalog.storage_rows() == []


def test_coordinator_cut_short_inside_a_create_transaction(own, monkeypatch):
    """A transaction created a table, wrote rows and dropped another, and the coordinator
    stopped before it ended (its own clean-up disabled, as in a crash): no new table, its
    storage removed at the next start, the dropped table and its rows intact."""
    server = own["server"]
    with server.connect() as c:
        kept = _load(c, "f_kept")
    _no_collection(monkeypatch)
    tx = server.connect(autocommit=False)
    tx.execute("CREATE TABLE f_create_crash (k int8)")
    tx.execute("INSERT INTO f_create_crash SELECT g FROM generate_series(1, 5000) g")
    tx.execute("DROP TABLE f_kept")
    table_id = created_id(server, "f_create_crash")
    assert len(storage_dirs(server, table_id)) == 2
    try:
        server = own["restart"](monkeypatch.undo)  # the session ends with the old coordinator
    finally:
        monkeypatch.undo()
        tx.close()
    with server.connect() as c:
        fails(c, "SELECT * FROM f_create_crash", "42P01")
        assert rows_of(c, "f_kept") == kept
    assert storage_dirs(server, table_id) == []
    assert server.engine.catalog.storage_rows() == []
