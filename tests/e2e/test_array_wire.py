"""Arrays over the wire: asyncpg sends and receives arrays of every element type in
binary (its parameter types come from ParameterDescription, its codecs from its type
introspection query), psycopg reads them in text and binary, and COPY text round-trips
array columns."""

from __future__ import annotations

import datetime
import decimal
import io

import pytest

from tests.conftest import asyncpg_connect as apg, run_async as run


@pytest.fixture
def arrays(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (id int, a int[], b text[]) DISTRIBUTED BY (id)")
    conn.execute(f"""INSERT INTO {t} VALUES (1, '{{1,2,NULL}}', '{{x,"y z",NULL,""}}'),
                     (2, '{{}}', ARRAY['a,b', 'q"t', 'back\\slash']), (3, NULL, NULL)""")
    return t


def test_asyncpg_text_array_parameters_and_results(server, arrays):
    async def go():
        c = await apg(server)
        try:
            await c.execute(f"INSERT INTO {arrays} (id, b) VALUES ($1, $2)", 4,
                            ["p", None, "r s", ""])
            rows = await c.fetch(f"SELECT id, b FROM {arrays} ORDER BY id")
            anyv = await c.fetchval(f"SELECT count(*) FROM {arrays} WHERE $1 = ANY(b)", "r s")
            texts = await c.fetchval("SELECT $1::text[]", ["a", None, "{b}", ""])
            elem = await c.fetchval(f"SELECT b[$1] FROM {arrays} WHERE id = 1", 2)
            return [(r["id"], r["b"]) for r in rows], anyv, texts, elem
        finally:
            await c.close()

    got, anyv, texts, elem = run(go())
    assert got == [(1, ["x", "y z", None, ""]), (2, ["a,b", 'q"t', "back\\slash"]),
                   (3, None), (4, ["p", None, "r s", ""])]
    assert anyv == 1
    assert texts == ["a", None, "{b}", ""]
    assert elem == "y z"


# asyncpg learns array types by its introspection query (WITH RECURSIVE, and a correlated
# recursive CTE under ORDER BY ... LIMIT 1 in a scalar subquery) before it binds them.
def test_asyncpg_array_parameters_and_results(server, arrays):
    async def go():
        c = await apg(server)
        try:
            await c.execute(f"INSERT INTO {arrays} VALUES ($1, $2, $3)", 4, [7, None, 9],
                            ["p", None, "r s", ""])
            rows = await c.fetch(f"SELECT id, a, b FROM {arrays} ORDER BY id")
            got = [(r["id"], r["a"], r["b"]) for r in rows]
            hit = await c.fetch(f"SELECT id FROM {arrays} WHERE a = $1", [7, None, 9])
            anyv = await c.fetchval(f"SELECT count(*) FROM {arrays} WHERE $1 = ANY(b)", "r s")
            back = await c.fetchval("SELECT $1::int[] || $2::int[]", [1, 2], [])
            texts = await c.fetchval("SELECT $1::text[]", ["a", None, "{b}", ""])
            empty = await c.fetchval("SELECT '{}'::int[]")
            return got, [r["id"] for r in hit], anyv, back, texts, empty
        finally:
            await c.close()

    got, hit, anyv, back, texts, empty = run(go())
    assert got == [(1, [1, 2, None], ["x", "y z", None, ""]),
                   (2, [], ["a,b", 'q"t', "back\\slash"]),
                   (3, None, None),
                   (4, [7, None, 9], ["p", None, "r s", ""])]
    assert hit == [4]
    assert anyv == 1
    assert back == [1, 2]
    assert texts == ["a", None, "{b}", ""]
    assert empty == []


def test_psycopg_text_and_binary(conn, arrays):
    rows = conn.execute(f"SELECT id, a, b FROM {arrays} ORDER BY id").fetchall()
    assert rows[0] == (1, [1, 2, None], ["x", "y z", None, ""])
    assert rows[1] == (2, [], ["a,b", 'q"t', "back\\slash"])
    with conn.cursor(binary=True) as cur:
        cur.execute(f"SELECT a, b FROM {arrays} ORDER BY id")
        assert cur.fetchall()[:2] == [([1, 2, None], ["x", "y z", None, ""]),
                                      ([], ["a,b", 'q"t', "back\\slash"])]
    desc = conn.execute(f"SELECT a, b, a[1] FROM {arrays}").description
    assert [d.type_code for d in desc] == [1007, 1009, 23]


def test_copy_text_round_trip(conn, arrays, table):
    out = io.BytesIO()
    with conn.cursor().copy(f"COPY {arrays} TO STDOUT") as cp:
        for chunk in cp:
            out.write(chunk)
    text = out.getvalue().decode()
    assert '1\t{1,2,NULL}\t{x,"y z",NULL,""}\n' in text
    assert '2\t{}\t{"a,b","q\\\\"t","back\\\\\\\\slash"}\n' in text
    copy = table()
    conn.execute(f"CREATE TABLE {copy} (id int, a int[], b text[])")
    with conn.cursor().copy(f"COPY {copy} FROM STDIN") as cp:
        cp.write(text.encode())
    same = conn.execute(f"""SELECT count(*) FROM {copy} x JOIN {arrays} y ON x.id = y.id
                            WHERE x.a IS NOT DISTINCT FROM y.a
                              AND x.b IS NOT DISTINCT FROM y.b""").fetchone()[0]
    assert same == 3


def test_asyncpg_any_and_subscript_parameters(server, arrays):
    async def go():
        c = await apg(server)
        try:
            hit = await c.fetch(f"SELECT id FROM {arrays} WHERE $1 = ANY(a) ORDER BY id", 2)
            inside = await c.fetch(f"SELECT id FROM {arrays} WHERE id = ANY($1) ORDER BY id",
                                   [1, 3])
            elem = await c.fetchval(f"SELECT b[$1] FROM {arrays} WHERE id = 1", 2)
            types = [t.name for t in (await c.prepare(
                f"SELECT id FROM {arrays} WHERE $1 = ANY(a) AND id = ANY($2)")).get_parameters()]
            return [r["id"] for r in hit], [r["id"] for r in inside], elem, types
        finally:
            await c.close()

    hit, inside, elem, types = run(go())
    assert hit == [1]
    assert inside == [1, 3]
    assert elem == "y z"
    assert types == ["int4", "int4[]"]


def test_asyncpg_typed_array_parameters_of_every_element_type(server):
    d = datetime.date

    async def go():
        c = await apg(server)
        try:
            row = await c.fetchrow(
                "SELECT $1::int2[] a, $2::int8[] b, $3::float8[] c, $4::numeric[] e, "
                "$5::bool[] f, $6::date[] g, $7::varchar[] h, $8::int4[] i",
                [1, None, -3], [2**40, None], [0.5, None, -1e300],
                [decimal.Decimal("1.5"), None, decimal.Decimal("-2.25")],
                [True, None, False], [d(2024, 2, 29), None], ["x", None], None)
            return dict(row)
        finally:
            await c.close()

    got = run(go())
    assert got == {"a": [1, None, -3], "b": [2**40, None], "c": [0.5, None, -1e300],
                   "e": [decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")],
                   "f": [True, None, False], "g": [d(2024, 2, 29), None], "h": ["x", None],
                   "i": None}
