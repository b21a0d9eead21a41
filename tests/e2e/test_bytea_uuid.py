"""bytea and uuid end to end, held to PostgreSQL 15 (the pg_oracle fixture): COPY TO STDOUT
in text, CSV and binary format gives the very bytes PostgreSQL's gives for the same rows,
PostgreSQL's COPY output loads back into raympp in each format (and escape-format bytea
input too), and psycopg round-trips bytes and uuid.UUID values as text and binary
parameters and results."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import asyncpg_connect, run_async

COLUMNS = "(id int, b bytea, u uuid, t text)"
# Rows whose bytea holds what COPY must escape or quote: backslash, tab, newline, carriage
# return, NUL, quote, comma, bytes >= 0x80, the empty value, NULL.
VALUES = """
(1, '\\x00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'plain'),
(2, '\\x5c78', '00000000-0000-0000-0000-000000000000', 'back\\slash'),
(3, 'tab\\011and\\012newline\\015cr', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', 'a,b'),
(4, '', '{a0eebc999c0b4ef8bb6d6bb9bd380a12}', ''),
(5, NULL, NULL, NULL),
(6, '\\xdeadbeef00ff', 'a0eebc99-9c0b4ef8-bb6d6bb9-bd380a13', 'quote"d'),
(7, 'comma,and"quote''', '12345678-1234-1234-1234-123456789abc', 'x'),
(8, '\\\\\\\\', '87654321-4321-4321-4321-cba987654321', 'y')
"""
FORMATS = ["text", "csv", "binary"]


def _setup(conn, name: str, distributed: str = "") -> None:
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(f"CREATE TABLE {name} {COLUMNS} {distributed}")
    conn.execute(f"INSERT INTO {name} VALUES {VALUES}")


def _copy_out(conn, sql: str) -> bytes:
    out = bytearray()
    with conn.cursor().copy(sql) as cp:
        for chunk in cp:
            out += chunk
    return bytes(out)


@pytest.fixture(scope="module")
def pg(pg_oracle):
    c = pg_oracle.connect()
    _setup(c, "bu_src")
    yield c
    c.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_copy_to_stdout_is_postgresql_bytes(conn, table, pg, fmt):
    t = table()
    _setup(conn, t, "DISTRIBUTED BY (u)")
    sql = "COPY (SELECT * FROM {} ORDER BY id) TO STDOUT WITH (FORMAT %s)" % fmt
    want = _copy_out(pg, sql.format("bu_src"))
    got = _copy_out(conn, sql.format(t))
    assert got == want


@pytest.mark.parametrize("fmt", FORMATS)
def test_copy_from_postgresql_output(conn, table, pg, fmt):
    data = _copy_out(pg, f"COPY bu_src TO STDOUT WITH (FORMAT {fmt})")
    t = table()
    conn.execute(f"CREATE TABLE {t} {COLUMNS} DISTRIBUTED BY (b)")
    with conn.cursor().copy(f"COPY {t} FROM STDIN WITH (FORMAT {fmt})") as cp:
        cp.write(data)
    want = pg.execute("SELECT * FROM bu_src ORDER BY id").fetchall()
    assert conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() == want
    # and out again: the table copies out as PostgreSQL's does
    sql = "COPY (SELECT * FROM {} ORDER BY id) TO STDOUT WITH (FORMAT %s)" % fmt
    assert _copy_out(conn, sql.format(t)) == _copy_out(pg, sql.format("bu_src"))


def test_copy_from_escape_format_and_errors(conn, table, pg):
    # COPY text unescapes first (\\ is one backslash), then byteain reads escape or hex.
    lines = "1\t\\\\000a\\\\\\\\b\\\\377\n2\t\\\\x41 42\n3\tplain\n"
    t = table()
    conn.execute(f"CREATE TABLE {t} (id int, b bytea)")
    pg.execute("DROP TABLE IF EXISTS bu_esc")
    pg.execute("CREATE TABLE bu_esc (id int, b bytea)")
    for c, name in ((conn, t), (pg, "bu_esc")):
        with c.cursor().copy(f"COPY {name} FROM STDIN") as cp:
            cp.write(lines)
    want = pg.execute("SELECT * FROM bu_esc ORDER BY id").fetchall()
    assert conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() == want
    for bad, state in (("1\t\\\\x4\n", "22023"), ("1\ta\\\\b\n", "22P02")):
        codes = []
        for c, name in ((conn, t), (pg, "bu_esc")):
            try:
                with c.cursor().copy(f"COPY {name} FROM STDIN") as cp:
                    cp.write(bad)
            except Exception as e:  # noqa: BLE001 - the SQLSTATE is what is compared
                codes.append(e.diag.sqlstate)
        assert codes == [state, state]
    u = table()
    conn.execute(f"CREATE TABLE {u} (u uuid)")
    with pytest.raises(Exception) as e:
        with conn.cursor().copy(f"COPY {u} FROM STDIN") as cp:
            cp.write("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\nnot-a-uuid\n")
    assert e.value.diag.sqlstate == "22P02"
    assert e.value.diag.message_primary == 'invalid input syntax for type uuid: "not-a-uuid"'
    assert e.value.diag.context.startswith(f"COPY {u}, line 2, column u")


@pytest.mark.parametrize("binary", [False, True])
def test_psycopg_round_trip(conn, table, binary):
    t = table()
    conn.execute(f"CREATE TABLE {t} (id int, b bytea, u uuid) DISTRIBUTED BY (u)")
    rows = [(i, bytes((i * 7 + j) % 256 for j in range(i % 40)) + b"\x00\\", uuid.uuid4())
            for i in range(50)] + [(50, None, None), (51, b"", uuid.UUID(int=0))]
    placeholder = "%b" if binary else "%t"
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {t} VALUES ({placeholder}, {placeholder}, {placeholder})",
                        rows)
    got = conn.cursor(binary=binary).execute(f"SELECT * FROM {t} ORDER BY id").fetchall()
    assert got == rows
    key = rows[7]
    one = conn.cursor(binary=binary).execute(
        f"SELECT id FROM {t} WHERE u = {placeholder} AND b = {placeholder}",
        (key[2], key[1])).fetchall()
    assert one == [(7,)]
    arrays = conn.cursor(binary=binary).execute(
        f"SELECT array_agg(u ORDER BY id), array_agg(b ORDER BY id) FROM {t} "
        "WHERE id < 3").fetchone()
    assert arrays == ([r[2] for r in rows[:3]], [r[1] for r in rows[:3]])
    back = conn.cursor(binary=binary).execute(
        f"SELECT {placeholder}::uuid[], {placeholder}::bytea[]",
        ([rows[0][2], None], [b"\x00\\", None, b""])).fetchone()
    assert back == ([rows[0][2], None], [b"\x00\\", None, b""])


def test_asyncpg_binary_round_trip(server, table):
    """asyncpg speaks the binary format for both types (bytea, uuid and their arrays)."""
    t = table()
    values = [(1, b"\x00\\\xff", uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
              (2, None, None), (3, b"", uuid.UUID(int=0))]

    async def go():
        c = await asyncpg_connect(server)
        try:
            await c.execute(f"CREATE TABLE {t} (id int, b bytea, u uuid)")
            await c.executemany(f"INSERT INTO {t} VALUES ($1, $2, $3)", values)
            rows = await c.fetch(f"SELECT id, b, u FROM {t} ORDER BY id")
            found = await c.fetchval(f"SELECT id FROM {t} WHERE u = $1", values[0][2])
            arrays = await c.fetchrow(f"SELECT array_agg(b ORDER BY id), array_agg(u ORDER BY id) "
                                      f"FROM {t}")
            return [tuple(r) for r in rows], found, tuple(arrays)
        finally:
            await c.close()
    rows, found, arrays = run_async(go())
    assert rows == values and found == 1
    assert arrays == ([v[1] for v in values], [v[2] for v in values])
