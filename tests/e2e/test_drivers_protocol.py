"""Protocol details drivers rely on (issue 11), through psycopg, asyncpg and raw messages:
parameter types inferred at Parse, errors in the extended protocol, `$1,$2` placeholders,
the transaction status after a row-limited Execute, savepoints, cursors, LISTEN/NOTIFY,
SQL PREPARE/EXECUTE/DEALLOCATE, asyncpg's connection reset and EXPLAIN's options. The
expected values are PostgreSQL 15's."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import struct
import time
from decimal import Decimal

import psycopg
import pytest

from tests.conftest import asyncpg_connect as apg, run_async as run
from psycopg import errors

from coordinator.pgwire import codec

asyncpg = pytest.importorskip("asyncpg")

UTC = dt.timezone.utc
# column -> (type, a value of it as the drivers give it)
TYPED = {
    "i2": ("int2", -7), "i4": ("int4", 123456), "i8": ("int8", 2**40),
    "f4": ("float4", 1.5), "f8": ("float8", 0.1), "n": ("numeric(15,2)", Decimal("12.34")),
    "t": ("text", "héllo"), "v": ("varchar(10)", "abc"), "c": ("char(3)", "ab "),
    "b": ("bool", True), "d": ("date", dt.date(2024, 2, 29)),
    "ts": ("timestamp", dt.datetime(2024, 1, 2, 3, 4, 5, 600000)),
    "tz": ("timestamptz", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    "iv": ("interval", dt.timedelta(days=3, hours=4, minutes=5)),
}


@pytest.fixture
def typed_table(conn, table):
    t = table()
    cols = ", ".join(f"{c} {ty}" for c, (ty, _) in TYPED.items())
    conn.execute(f"CREATE TABLE {t} ({cols})")
    return t


# --- 1. parameter types inferred at Parse -------------------------------------------------
PARAMETER_TYPES = [  # (query on {t}, PostgreSQL 15's ParameterDescription)
    ("SELECT * FROM {t} WHERE i8 = $1", ["int8"]),
    ("SELECT * FROM {t} WHERE i2 = $1", ["int2"]),
    ("SELECT * FROM {t} WHERE v = $1", ["text"]),
    ("SELECT * FROM {t} WHERE c = $1", ["bpchar"]),
    ("SELECT * FROM {t} WHERE n > $1", ["numeric"]),
    ("SELECT * FROM {t} WHERE tz < $1", ["timestamptz"]),
    ("SELECT * FROM {t} WHERE t LIKE $1", ["text"]),
    ("SELECT * FROM {t} LIMIT $1 OFFSET $2", ["int8", "int8"]),
    ("SELECT $1 + 1", ["int4"]),
    ("SELECT $1", ["text"]),
    ("SELECT $1::int8", ["int8"]),
    ("SELECT * FROM {t} WHERE i4 BETWEEN $1 AND $2", ["int4", "int4"]),
    ("SELECT * FROM {t} WHERE i4 IN ($1,$2)", ["int4", "int4"]),
    ("SELECT * FROM {t} WHERE $1 = i4 + 1", ["int4"]),
    ("SELECT count(*) FROM {t} HAVING count(*) > $1", ["int8"]),
    ("SELECT * FROM {t} a JOIN {t} b ON a.i4 = b.i4 WHERE a.d = $1", ["date"]),
    ("SELECT * FROM (SELECT i2 AS x FROM {t}) s WHERE x = $1", ["int2"]),
    ("SELECT * FROM {t} WHERE i4 = (SELECT max(i4) FROM {t} WHERE i8 = $1)", ["int8"]),
    ("SELECT coalesce(f8, $1) FROM {t}", ["float8"]),
    ("SELECT * FROM {t} WHERE $1", ["bool"]),
    ("SELECT * FROM {t} WHERE $1 = $2", ["text", "text"]),
    ("INSERT INTO {t} VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)",
     ["int2", "int4", "int8", "float4", "float8", "numeric", "text", "varchar", "bpchar",
      "bool", "date", "timestamp", "timestamptz", "interval"]),
    ("INSERT INTO {t} (i8, v) SELECT $1, $2", ["int8", "varchar"]),
]


@pytest.mark.parametrize("sql, expected", PARAMETER_TYPES, ids=[q for q, _ in PARAMETER_TYPES])
def test_parameter_types_from_context(server, typed_table, sql, expected):
    async def main():
        c = await apg(server)
        try:
            st = await c.prepare(sql.format(t=typed_table))
            return [p.name for p in st.get_parameters()]
        finally:
            await c.close()
    assert run(main()) == expected


def test_asyncpg_typed_parameters_in_insert_and_where(server, typed_table):
    t = typed_table
    cols = list(TYPED)

    async def main():
        c = await apg(server)
        try:
            marks = ",".join(f"${i + 1}" for i in range(len(cols)))
            await c.execute(f"INSERT INTO {t} VALUES ({marks})", *[v for _, v in TYPED.values()])
            await c.executemany(f"INSERT INTO {t} (i8, t) VALUES ($1, $2)", [(1, "a"), (2, "b")])
            found = {}
            for col, (_, value) in TYPED.items():
                found[col] = await c.fetchval(f"SELECT {col} FROM {t} WHERE {col} = $1", value)
            found["limit"] = await c.fetchval(
                f"SELECT count(*) FROM (SELECT i8 FROM {t} WHERE i8 > $1 LIMIT $2) s", 0, 2)
            return found
        finally:
            await c.close()
    found = run(main())
    assert found.pop("limit") == 2
    assert found == {col: value for col, (_, value) in TYPED.items()}


# --- 2. errors in the extended protocol --------------------------------------------------------
def test_asyncpg_errors_do_not_hang(server, table):
    t = table()

    async def main():
        c = await apg(server)
        try:
            await c.execute(f"CREATE TABLE {t} (k int8)")
            with pytest.raises(asyncpg.exceptions.UndefinedColumnError):
                await c.fetch(f"SELECT nope FROM {t}")
            with pytest.raises(asyncpg.exceptions.DivisionByZeroError):
                await c.fetch("SELECT 1 / (k - k) FROM (SELECT $1::int8 AS k) s", 5)
            with pytest.raises(asyncpg.exceptions.PostgresSyntaxError):
                await c.execute("SELEC 1")
            assert await c.fetchval("SELECT 1") == 1
            tr = c.transaction()
            await tr.start()
            with pytest.raises(asyncpg.exceptions.UndefinedTableError):
                await c.fetch("SELECT * FROM no_such_table WHERE k = $1", 1)
            with pytest.raises(asyncpg.exceptions.InFailedSQLTransactionError):
                await c.fetchval("SELECT 1")
            await tr.rollback()
            return await c.fetchval("SELECT $1::int4 + 1", 1)
        finally:
            await c.close()
    assert run(main()) == 2


class Raw:
    """Protocol messages straight over a socket (for what drivers do not expose)."""

    def __init__(self, server):
        self.sock = socket.create_connection((server.host, server.port), timeout=30)
        self.buf = b""
        self.send(codec.StartupMessage({"user": "raympp", "database": "raympp"}))
        self.until_ready()

    def send(self, *messages):
        self.sock.sendall(b"".join(m.encode() for m in messages))

    def recv(self):
        while len(self.buf) < 5 or len(self.buf) < 1 + struct.unpack("!i", self.buf[1:5])[0]:
            chunk = self.sock.recv(65536)
            assert chunk, "server closed the connection"
            self.buf += chunk
        n = 1 + struct.unpack("!i", self.buf[1:5])[0]
        msg, self.buf = (self.buf[:1], self.buf[5:n]), self.buf[n:]
        return msg

    def until_ready(self):
        out = [self.recv()]
        while out[-1][0] != b"Z":
            out.append(self.recv())
        return out

    def close(self):
        self.sock.close()


def kinds(messages) -> str:
    return "".join(t.decode() for t, _ in messages)


def test_error_reaches_client_at_flush_and_block_fails(server):
    raw = Raw(server)
    try:
        raw.send(codec.Query("BEGIN"))
        assert raw.until_ready()[-1] == (b"Z", b"T")
        raw.send(codec.Parse("", "SELECT * FROM no_such_table_here"), codec.Flush())
        t, body = raw.recv()  # at once, though no Sync came
        assert t == b"E" and b"C42P01\0" in body
        raw.send(codec.Bind("", ""), codec.Execute("", 0), codec.Sync())
        assert raw.until_ready() == [(b"Z", b"E")]
        raw.send(codec.Query("ROLLBACK"))
        assert raw.until_ready()[-1] == (b"Z", b"I")
    finally:
        raw.close()


# --- 3, 4. placeholders without spaces; status after a row-limited Execute -----------------------
def test_placeholders_without_spaces(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (a int8, b text)")
    conn.execute(f"INSERT INTO {t} VALUES (%s,%s),(%s,%s)", (1, "x", 2, "y"))
    assert conn.execute(f"SELECT b FROM {t} WHERE a IN (%s,%s) AND b<>%s ORDER BY a",
                        (1, 2, "y")).fetchall() == [("x",)]
    assert conn.execute("SELECT %s::int,%s::text", (3, "z")).fetchone() == (3, "z")


def test_status_after_row_limited_execute_is_the_real_one(server):
    raw = Raw(server)
    try:
        q = "SELECT i FROM generate_series(1, 5) AS g(i)"
        raw.send(codec.Parse("", q), codec.Bind("p", ""), codec.Execute("p", 2), codec.Sync())
        messages = raw.until_ready()
        assert kinds(messages) == "12DDsZ" and messages[-1] == (b"Z", b"I")
        raw.send(codec.Execute("p", 2), codec.Sync())  # Sync ended the implicit transaction
        messages = raw.until_ready()
        assert kinds(messages) == "EZ" and b"C34000\0" in messages[0][1]
        raw.send(codec.Query("BEGIN"))
        raw.until_ready()
        raw.send(codec.Parse("", q), codec.Bind("p", ""), codec.Execute("p", 2), codec.Sync())
        assert raw.until_ready()[-1] == (b"Z", b"T")
        raw.send(codec.Execute("p", 0), codec.Sync())
        assert kinds(raw.until_ready()) == "DDDCZ"
        raw.send(codec.Query("COMMIT"))
        assert raw.until_ready()[-1] == (b"Z", b"I")
    finally:
        raw.close()


# --- 5. savepoints -------------------------------------------------------------------------
def test_psycopg_nested_transactions(server, conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8)")
    with server.connect() as c:
        with c.transaction():
            c.execute(f"INSERT INTO {t} VALUES (1)")
            with c.transaction():
                c.execute(f"SELECT count(*) FROM {t}")
            with pytest.raises(errors.DivisionByZero):
                with c.transaction():
                    c.execute(f"SELECT 1 / (k - k) FROM {t}")
            # the failed inner block was rolled back to its savepoint: the outer goes on
            c.execute(f"INSERT INTO {t} VALUES (2)")
    assert conn.execute(f"SELECT k FROM {t} ORDER BY k").fetchall() == [(1,), (2,)]


def test_rollback_to_savepoint_restores_settings_and_clears_failure(server):
    with server.connect(autocommit=False) as c:
        before = c.execute("SHOW work_mem").fetchone()[0]
        c.execute("SAVEPOINT a")
        c.execute("SET work_mem = '1MB'")
        with pytest.raises(errors.DivisionByZero):
            c.execute("SELECT 1 / 0")
        with pytest.raises(errors.InFailedSqlTransaction):
            c.execute("SELECT 1")
        with pytest.raises(errors.InFailedSqlTransaction):
            c.execute("SAVEPOINT b")
        assert c.execute("ROLLBACK TO SAVEPOINT a").statusmessage == "ROLLBACK"
        assert c.execute("SHOW work_mem").fetchone() == (before,)
        c.execute("ROLLBACK TO a")  # the savepoint stays after ROLLBACK TO
        assert c.execute("RELEASE SAVEPOINT a").statusmessage == "RELEASE"
        with pytest.raises(errors.InvalidSavepointSpecification):
            c.execute("RELEASE a")
        c.rollback()


def test_savepoint_names_and_blocks(conn):
    for sql, word in [("SAVEPOINT a", "SAVEPOINT"), ("RELEASE a", "RELEASE SAVEPOINT"),
                      ("ROLLBACK TO SAVEPOINT a", "ROLLBACK TO SAVEPOINT")]:
        with pytest.raises(errors.NoActiveSqlTransaction,
                           match=f"{word} can only be used in transaction blocks"):
            conn.execute(sql)
    conn.execute("BEGIN")
    conn.execute("SAVEPOINT a")
    conn.execute("SAVEPOINT b")
    conn.execute("RELEASE a")  # and b with it
    with pytest.raises(errors.InvalidSavepointSpecification, match='savepoint "b" does not'):
        conn.execute("ROLLBACK TO b")
    conn.execute("ROLLBACK")


def test_rollback_to_undoes_rows_written_since_the_savepoint(server, conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8) DISTRIBUTED BY (k)")
    with server.connect(autocommit=False) as c:
        c.execute("SAVEPOINT before_any_write")
        c.execute(f"INSERT INTO {t} VALUES (0)")
        c.execute("ROLLBACK TO before_any_write")
        c.execute(f"INSERT INTO {t} SELECT g FROM generate_series(1, 1000) g")
        c.execute("SAVEPOINT s")
        c.execute(f"INSERT INTO {t} SELECT g FROM generate_series(1001, 2000) g")
        c.execute("SAVEPOINT s2")
        c.execute(f"INSERT INTO {t} VALUES (5000)")
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (2001,)
        c.execute("ROLLBACK TO s2")
        assert c.execute(f"SELECT count(*), max(k) FROM {t}").fetchone() == (2000, 2000)
        c.execute("ROLLBACK TO s")  # drops the second thousand, keeps the first
        assert c.execute(f"SELECT count(*), max(k) FROM {t}").fetchone() == (1000, 1000)
        c.execute(f"INSERT INTO {t} VALUES (7)")
        c.execute("RELEASE s")
        c.commit()
    assert conn.execute(f"SELECT count(*), sum(k) FROM {t}").fetchone() == (1001, 500507)


def test_rollback_to_after_ddl_is_refused(server, conn, table):
    t, u = table(), table()
    conn.execute(f"CREATE TABLE {t} (k int8)")
    with server.connect(autocommit=False) as c:
        c.execute(f"INSERT INTO {t} VALUES (1)")
        c.execute("SAVEPOINT s")
        c.execute(f"CREATE TABLE {u} (k int8)")
        with pytest.raises(errors.FeatureNotSupported, match="ROLLBACK TO SAVEPOINT"):
            c.execute("ROLLBACK TO s")
        with pytest.raises(errors.InFailedSqlTransaction):
            c.execute("SELECT 1")
        # COMMIT cannot keep row 1 without the table: it fails, and nothing was written.
        with pytest.raises(errors.FeatureNotSupported, match="rolled back"):
            c.commit()
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
    with server.connect(autocommit=False) as c:  # TRUNCATE since the savepoint: refused
        c.execute(f"INSERT INTO {t} VALUES (1)")
        c.execute("SAVEPOINT s")
        c.execute(f"TRUNCATE {t}")
        with pytest.raises(errors.FeatureNotSupported, match="TRUNCATE"):
            c.execute("ROLLBACK TO s")
        c.rollback()
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_asyncpg_nested_transactions(server, table):
    t = table()

    async def main():
        c = await apg(server)
        try:
            await c.execute(f"CREATE TABLE {t} (k int8)")
            async with c.transaction():
                await c.execute(f"INSERT INTO {t} VALUES (1)")
                with pytest.raises(asyncpg.exceptions.DivisionByZeroError):
                    async with c.transaction():
                        await c.execute("SELECT 1 / 0")
                async with c.transaction():
                    await c.fetchval(f"SELECT count(*) FROM {t}")
            return await c.fetchval(f"SELECT count(*) FROM {t}")
        finally:
            await c.close()
    assert run(main()) == 1


# --- 6. cursors ------------------------------------------------------------------------------
@pytest.fixture
def numbers(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8, v text)")
    conn.execute(f"INSERT INTO {t} SELECT i, 'v' || i FROM generate_series(1, 2500) AS g(i)")
    return t


def test_psycopg_named_cursor(server, numbers):
    with server.connect(autocommit=False) as c:
        cur = c.cursor("chunks")
        cur.execute(f"SELECT k, v FROM {numbers} WHERE k <= %s ORDER BY k", (2000,))
        assert cur.fetchmany(3) == [(1, "v1"), (2, "v2"), (3, "v3")]
        assert cur.fetchone() == (4, "v4")
        seen, chunk = 4, cur.fetchmany(700)
        while chunk:  # how pandas reads a server-side cursor: chunk after chunk
            assert chunk[0][0] == seen + 1
            seen += len(chunk)
            chunk = cur.fetchmany(700)
        assert seen == 2000
        cur.close()
        cur = c.cursor("iter")
        cur.itersize = 100
        cur.execute(f"SELECT k FROM {numbers} ORDER BY k")
        assert sum(1 for _ in cur) == 2500
        c.commit()


def test_cursor_commands(server, numbers):
    with server.connect(autocommit=False) as c:
        c.execute(f"DECLARE c NO SCROLL CURSOR FOR SELECT k FROM {numbers} ORDER BY k")
        assert c.execute("FETCH 2 FROM c").fetchall() == [(1,), (2,)]
        assert c.execute("FETCH NEXT c").fetchall() == [(3,)]
        assert c.execute("MOVE FORWARD 10 IN c").statusmessage == "MOVE 10"
        assert c.execute("FETCH FORWARD 1 FROM c").fetchall() == [(14,)]
        assert c.execute("FETCH ABSOLUTE 20 c").fetchall() == [(20,)]
        assert c.execute("FETCH RELATIVE 5 c").fetchall() == [(25,)]
        with pytest.raises(errors.ObjectNotInPrerequisiteState, match="only scan forward"):
            c.execute("FETCH PRIOR c")
        c.rollback()
        c.execute(f"DECLARE c CURSOR FOR SELECT k FROM {numbers} WHERE k > 2490 ORDER BY k")
        cur = c.execute("FETCH ALL c")
        assert cur.statusmessage == "FETCH 10" and len(cur.fetchall()) == 10
        assert c.execute("FETCH c").fetchall() == []
        with pytest.raises(errors.FeatureNotSupported, match="BACKWARD"):
            c.execute("MOVE BACKWARD 1 c")
        c.rollback()
        with pytest.raises(errors.FeatureNotSupported, match="SCROLL"):
            c.execute(f"DECLARE s SCROLL CURSOR FOR SELECT k FROM {numbers}")
        c.rollback()
        c.execute(f"DECLARE d CURSOR FOR SELECT k FROM {numbers}")
        with pytest.raises(errors.DuplicateCursor, match='cursor "d" already exists'):
            c.execute("DECLARE d CURSOR FOR SELECT 1")
        c.rollback()
        with pytest.raises(errors.InvalidCursorName, match='cursor "d" does not exist'):
            c.execute("FETCH d")  # ROLLBACK closed it
        c.rollback()
        c.execute("DECLARE e CURSOR FOR SELECT 1 AS one")
        assert c.execute("CLOSE e").statusmessage == "CLOSE CURSOR"
        assert c.execute("CLOSE ALL").statusmessage == "CLOSE CURSOR ALL"
        with pytest.raises(errors.InvalidCursorName):
            c.execute("CLOSE e")
        c.rollback()


def test_declare_needs_a_block_unless_with_hold(conn, numbers):
    with pytest.raises(errors.NoActiveSqlTransaction,
                       match="DECLARE CURSOR can only be used in transaction blocks"):
        conn.execute(f"DECLARE c CURSOR FOR SELECT k FROM {numbers}")
    conn.execute(f"DECLARE h CURSOR WITH HOLD FOR SELECT k FROM {numbers} ORDER BY k")
    assert conn.execute("FETCH 2 h").fetchall() == [(1,), (2,)]
    conn.execute("CLOSE h")


def test_with_hold_cursor_survives_commit(server, numbers):
    with server.connect(autocommit=False) as c:
        c.execute(f"INSERT INTO {numbers} VALUES (9999, 'mine')")
        cur = c.cursor("held", withhold=True)
        cur.execute(f"SELECT k FROM {numbers} WHERE k > 2498 ORDER BY k")
        assert cur.fetchone() == (2499,)
        c.execute("DECLARE gone CURSOR FOR SELECT 1")
        c.commit()
        assert cur.fetchall() == [(2500,), (9999,)]  # it saw its transaction's own row
        cur.close()
        with pytest.raises(errors.InvalidCursorName):
            c.execute("FETCH gone")
        c.rollback()


def test_binary_cursor(server, numbers):
    with server.connect(autocommit=False) as c:
        cur = c.cursor("bin", binary=True)
        cur.execute(f"SELECT k, v FROM {numbers} WHERE k < 3 ORDER BY k")
        assert cur.fetchall() == [(1, "v1"), (2, "v2")]
        c.rollback()


def test_cursor_fetches_are_timed_each_on_their_own(server, numbers):
    with server.connect(autocommit=False) as c:
        c.execute("SET statement_timeout = '1s'")
        c.execute(f"DECLARE c CURSOR FOR SELECT k FROM {numbers} ORDER BY k")
        assert c.execute("FETCH 1 c").fetchall() == [(1,)]
        time.sleep(1.5)  # longer than the timeout, between statements: no harm
        assert c.execute("FETCH 1 c").fetchall() == [(2,)]
        c.rollback()


def test_asyncpg_cursor(server, numbers):
    async def main():
        c = await apg(server)
        try:
            async with c.transaction():
                keys = [r["k"] async for r in c.cursor(
                    f"SELECT k FROM {numbers} WHERE k > $1 ORDER BY k", 2490, prefetch=4)]
                cur = await c.cursor(f"SELECT k FROM {numbers} ORDER BY k")
                first = await cur.fetch(3)
                await cur.forward(10)
                row = await cur.fetchrow()
            return keys, [r["k"] for r in first], row["k"]
        finally:
            await c.close()
    keys, first, row = run(main())
    assert keys == list(range(2491, 2501)) and first == [1, 2, 3] and row == 14


# --- 7. LISTEN / NOTIFY, asyncpg's reset ------------------------------------------------------------
def test_listen_notify_between_sessions(server):
    with server.connect() as listener, server.connect() as sender:
        listener.execute("LISTEN chan")
        sender.execute("NOTIFY chan, 'one'")
        with sender.transaction():
            sender.execute("NOTIFY chan, 'two'")
            sender.execute("NOTIFY chan, 'two'")  # the same in one block: sent once
        with pytest.raises(ZeroDivisionError):
            with sender.transaction():
                sender.execute("NOTIFY chan, 'never'")
                raise ZeroDivisionError
        got = []
        for n in listener.notifies(timeout=5, stop_after=2):
            got.append((n.channel, n.payload, n.pid))
        assert got == [("chan", "one", sender.info.backend_pid),
                       ("chan", "two", sender.info.backend_pid)]
        listener.execute("UNLISTEN *")
        sender.execute("NOTIFY chan, 'late'")
        assert list(listener.notifies(timeout=0.5)) == []


def test_asyncpg_listener_and_reset(server):
    async def main():
        c = await apg(server)
        other = await apg(server)
        try:
            received = asyncio.Queue()
            await c.add_listener("events", lambda *args: received.put_nowait(args[1:]))
            await other.execute("NOTIFY events, 'hello'")
            note = await asyncio.wait_for(received.get(), 10)
            await c.execute("SET work_mem = '2MB'")
            await c.reset()  # SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL
            work_mem = await c.fetchval("SHOW work_mem")
            pool = await asyncpg.create_pool(host=server.host, port=server.port, user="raympp",
                                             database="raympp", min_size=1, max_size=1)
            try:
                for _ in range(3):  # each release runs the reset query
                    async with pool.acquire() as pc:
                        assert await pc.fetchval("SELECT $1::int4 * 2", 21) == 42
            finally:
                await pool.close()
            return note, work_mem, other.get_server_pid()
        finally:
            await c.close()
            await other.close()
    (pid, channel, payload), work_mem, other_pid = run(main())
    assert (pid, channel, payload) == (other_pid, "events", "hello")
    assert work_mem == "64MB"


# --- 8. PREPARE / EXECUTE / DEALLOCATE -----------------------------------------------------------------
def test_sql_prepare_execute_deallocate(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8, v text)")
    conn.execute(f"PREPARE ins (int8, text) AS INSERT INTO {t} VALUES ($1, $2)")
    assert conn.execute("EXECUTE ins (1, 'a')").statusmessage == "INSERT 0 1"
    conn.execute("EXECUTE ins(2, 3)")  # 3 becomes text, as an assignment would make it
    conn.execute(f"PREPARE sel AS SELECT v FROM {t} WHERE k = $1")
    assert conn.execute("EXECUTE sel(2)").fetchall() == [("3",)]
    with pytest.raises(errors.SyntaxError, match="wrong number of parameters"):
        conn.execute("EXECUTE sel")
    with pytest.raises(errors.DuplicatePreparedStatement):
        conn.execute("PREPARE sel AS SELECT 1")
    assert conn.execute("DEALLOCATE sel").statusmessage == "DEALLOCATE"
    with pytest.raises(errors.InvalidSqlStatementName):
        conn.execute("EXECUTE sel(1)")
    with pytest.raises(errors.InvalidSqlStatementName):
        conn.execute("DEALLOCATE PREPARE sel")
    assert conn.execute("DEALLOCATE ALL").statusmessage == "DEALLOCATE ALL"
    with pytest.raises(errors.InvalidSqlStatementName):
        conn.execute("EXECUTE ins(1, 'a')")


def test_protocol_and_sql_prepared_statements_share_names(server):
    raw = Raw(server)
    try:
        raw.send(codec.Parse("plus", "SELECT $1::int8 + 1"), codec.Sync())
        assert kinds(raw.until_ready()) == "1Z"
        raw.send(codec.Query("EXECUTE plus(41)"))
        messages = raw.until_ready()
        assert kinds(messages) == "TDCZ" and messages[1][1].endswith(b"42")
        raw.send(codec.Query("PREPARE plus AS SELECT 1"))
        assert b"C42P05\0" in raw.until_ready()[0][1]
        raw.send(codec.Query("DEALLOCATE plus"))
        assert kinds(raw.until_ready()) == "CZ"
        raw.send(codec.Bind("", "plus"), codec.Sync())
        assert b"C26000\0" in raw.until_ready()[0][1]
        raw.send(codec.Query("PREPARE two AS SELECT 2"))
        raw.until_ready()
        raw.send(codec.Bind("", "two"), codec.Execute("", 0), codec.Sync())
        messages = raw.until_ready()
        assert kinds(messages) == "2DCZ" and messages[1][1].endswith(b"2")
    finally:
        raw.close()


# --- 9. EXPLAIN options -------------------------------------------------------------------------------
def test_explain_format_json_is_refused(conn):
    with pytest.raises(errors.FeatureNotSupported, match=r"EXPLAIN \(FORMAT JSON\)"):
        conn.execute("EXPLAIN (FORMAT JSON) SELECT 1")
    with pytest.raises(errors.SyntaxError, match='unrecognized EXPLAIN option "foo"'):
        conn.execute("EXPLAIN (foo) SELECT 1")
    assert conn.execute("EXPLAIN (FORMAT TEXT, COSTS OFF) SELECT 1").fetchall()
