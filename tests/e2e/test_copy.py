"""COPY through psycopg: FROM STDIN in text and CSV format (100k rows), TO STDOUT in text,
CSV and binary format, round trips, and a bad row that loads nothing."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from psycopg import errors

N = 100_000
CENT = Decimal("0.01")
DAY0 = dt.date(2020, 1, 1)
COLUMNS = "(id int8, k int4, name text, amount numeric(12,2), day date, x float8)"


def make_rows(n=N):
    """Rows with NULLs, negative and fractional numbers, and text that needs escaping."""
    rows = []
    for i in range(1, n + 1):
        k = None if i % 50 == 0 else i % 100 - 50
        if i % 1000 == 0:
            name = None
        elif i % 777 == 0:
            name = 'tab\there, "quoted", back\\slash'
        elif i % 333 == 0:
            name = ""
        else:
            name = f"n{i}"
        amount = None if i % 91 == 0 else (Decimal(i % 100000 - 50000) / 100).quantize(CENT)
        rows.append((i, k, name, amount, DAY0 + dt.timedelta(days=i % 1000), i / 8))
    return rows


ROWS = make_rows()


def pg_str(v) -> str:
    """A value as PostgreSQL's text output writes it (floats without a trailing '.0')."""
    if isinstance(v, float):
        s = repr(v)
        return s[:-2] if s.endswith(".0") else s
    return str(v)


def text_line(row) -> str:
    def field(v):
        if v is None:
            return "\\N"
        return pg_str(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return "\t".join(field(v) for v in row) + "\n"


def csv_line(row) -> str:
    def field(v):
        if v is None:
            return ""
        s = pg_str(v)
        if s == "" or any(c in s for c in ',"\r\n'):   # when PostgreSQL quotes
            return '"' + s.replace('"', '""') + '"'
        return s
    return ",".join(field(v) for v in row) + "\n"


def check_loaded(conn, t, rows=ROWS):
    got = conn.execute(f"SELECT count(*), count(k), sum(k), count(name), sum(amount), "
                       f"count(amount), min(day), max(day), sum(x) FROM {t}").fetchone()
    ks = [r[1] for r in rows if r[1] is not None]
    amounts = [r[3] for r in rows if r[3] is not None]
    assert got == (len(rows), len(ks), sum(ks), sum(r[2] is not None for r in rows),
                   sum(amounts), len(amounts), min(r[4] for r in rows),
                   max(r[4] for r in rows), sum(r[5] for r in rows))
    sample = {r[0]: r for r in rows if r[0] % 777 == 0 or r[0] % 333 == 0 or r[0] % 1000 == 0}
    got_rows = conn.execute(f"SELECT * FROM {t} WHERE id % 777 = 0 OR id % 333 = 0 "
                            f"OR id % 1000 = 0").fetchall()
    assert {r[0]: r for r in got_rows} == sample


def create(conn, table, distributed="DISTRIBUTED BY (id)") -> str:
    t = table()
    conn.execute(f"CREATE TABLE {t} {COLUMNS} {distributed}")
    return t


def test_copy_from_stdin_text(conn, table):
    t = create(conn, table)
    data = "".join(text_line(r) for r in ROWS).encode()
    with conn.cursor() as cur:
        with cur.copy(f"COPY {t} FROM STDIN") as cp:
            for i in range(0, len(data), 1 << 16):   # CopyData boundaries cut rows apart
                cp.write(data[i:i + (1 << 16)])
        assert cur.rowcount == N
    check_loaded(conn, t)


def test_copy_from_stdin_csv(conn, table):
    t = create(conn, table, "DISTRIBUTED RANDOMLY")
    data = "id,k,name,amount,day,x\n" + "".join(csv_line(r) for r in ROWS)
    with conn.cursor() as cur:
        with cur.copy(f"COPY {t} FROM STDIN WITH (FORMAT csv, HEADER true)") as cp:
            cp.write(data)
        assert cur.rowcount == N
    check_loaded(conn, t)


def test_copy_write_row_with_column_list(conn, table):
    t = create(conn, table)
    rows = ROWS[:5000]
    with conn.cursor().copy(f"COPY {t} (x, day, amount, name, k, id) FROM STDIN") as cp:
        for r in rows:
            cp.write_row(tuple(reversed(r)))
    check_loaded(conn, t, rows)


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_copy_to_stdout_round_trip(conn, table, fmt):
    src = create(conn, table)
    with conn.cursor().copy(f"COPY {src} FROM STDIN") as cp:
        cp.write("".join(text_line(r) for r in ROWS[:20000]))
    out = bytearray()
    with conn.cursor().copy(f"COPY {src} TO STDOUT WITH (FORMAT {fmt})") as cp:
        for chunk in cp:
            out += chunk
    lines = bytes(out).decode().splitlines(keepends=True)
    expected = [(text_line if fmt == "text" else csv_line)(r) for r in ROWS[:20000]]
    assert sorted(lines) == sorted(expected)

    dst = create(conn, table, "DISTRIBUTED REPLICATED")
    with conn.cursor().copy(f"COPY {dst} FROM STDIN WITH (FORMAT {fmt})") as cp:
        cp.write(bytes(out))
    check_loaded(conn, dst, ROWS[:20000])


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_copy_out_sends_one_row_per_message(conn, table, fmt):
    """The protocol says CopyData from the backend is "always one per row"; psycopg's
    read_row()/rows() rely on it."""
    t = create(conn, table)
    with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
        cp.write("".join(text_line(r) for r in ROWS[:5000]))
    with conn.cursor().copy(f"COPY {t} TO STDOUT WITH (FORMAT {fmt})") as cp:
        chunks = [bytes(c) for c in cp]
    assert len(chunks) == 5000
    assert all(c.endswith(b"\n") and c.count(b"\n") == 1 for c in chunks)
    with conn.cursor().copy(f"COPY {t} (id, k) TO STDOUT") as cp:
        cp.set_types(["int8", "int4"])
        assert sorted(cp.rows()) == [r[:2] for r in ROWS[:5000]]


def test_copy_query_to_stdout(conn, table):
    t = create(conn, table)
    with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
        cp.write("".join(text_line(r) for r in ROWS[:1000]))
    with conn.cursor().copy(f"COPY (SELECT id, name FROM {t} WHERE id <= 3 ORDER BY id) "
                            f"TO STDOUT WITH (FORMAT csv, HEADER true)") as cp:
        data = b"".join(bytes(c) for c in cp)
    assert data.decode() == "id,name\n1,n1\n2,n2\n3,n3\n"


def test_copy_to_stdout_binary(conn, table):
    t = create(conn, table)
    rows = ROWS[:10000]
    with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
        cp.write("".join(text_line(r) for r in rows))
    with conn.cursor().copy(f"COPY {t} TO STDOUT (FORMAT binary)") as cp:
        cp.set_types(["int8", "int4", "text", "numeric", "date", "float8"])
        got = list(cp.rows())
    assert sorted(got) == rows


def test_copy_bad_row_loads_nothing(conn, table):
    t = create(conn, table)
    data = "".join(text_line(r) for r in ROWS[:3000])
    data += "3001\tnot a number\tx\t1.00\t2020-01-01\t1.5\n"
    with pytest.raises(errors.InvalidTextRepresentation):
        with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
            cp.write(data)
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
    assert conn.execute("SELECT 1").fetchone() == (1,)


def test_copy_aborted_by_client_loads_nothing(conn, table):
    t = create(conn, table)
    with pytest.raises((ClientGivesUp, errors.QueryCanceled)):
        with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
            cp.write("".join(text_line(r) for r in ROWS[:3000]))
            raise ClientGivesUp()   # psycopg sends CopyFail
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
    assert conn.execute("SELECT 1").fetchone() == (1,)


class ClientGivesUp(Exception):
    pass
