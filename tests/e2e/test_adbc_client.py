"""The ADBC PostgreSQL driver (adbc_driver_postgresql, libpq inside) against raympp: its
connect (the driver reads pg_type's regproc columns at once), cursor.execute with
fetch_arrow_table (COPY ... TO STDOUT (FORMAT binary) underneath), parameters,
executemany, transactions, adbc_ingest in modes create, append, replace and create_append
(CREATE TABLE "public" . "t", COPY FROM STDIN binary, and the column lookup by
`$1::regclass`), adbc_get_table_schema and adbc_get_objects. The expected values are
PostgreSQL 15's."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest

pa = pytest.importorskip("pyarrow")
dbapi = pytest.importorskip("adbc_driver_postgresql.dbapi")

_serial = itertools.count(1)


@pytest.fixture
def adbc(server):
    conn = dbapi.connect(f"postgresql://raympp@{server.host}:{server.port}/raympp",
                         autocommit=True)
    yield conn
    conn.close()


@pytest.fixture
def name(server):
    n = f"e2e_adbc_t{next(_serial)}"
    yield n
    with server.connect() as c:
        c.execute(f"DROP TABLE IF EXISTS {n}")


def _table(cur, sql, parameters=None):
    cur.execute(sql, parameters=parameters)
    return cur.fetch_arrow_table()


def test_fetch_arrow_table_types(adbc):
    with adbc.cursor() as cur:
        t = _table(cur, "SELECT 1 AS i4, 2::int8 AS i8, 3::int2 AS i2, 'x' AS t, "
                        "1.5::float8 AS f8, 2.5::float4 AS f4, true AS b, "
                        "DATE '2024-02-29' AS d, TIMESTAMP '2024-01-02 03:04:05.5' AS ts, "
                        "TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tz, NULL::int AS n")
    assert [(f.name, str(f.type)) for f in t.schema] == [
        ("i4", "int32"), ("i8", "int64"), ("i2", "int16"), ("t", "string"),
        ("f8", "double"), ("f4", "float"), ("b", "bool"), ("d", "date32[day]"),
        ("ts", "timestamp[us]"), ("tz", "timestamp[us, tz=UTC]"), ("n", "int32")]
    assert t.to_pylist() == [{
        "i4": 1, "i8": 2, "i2": 3, "t": "x", "f8": 1.5, "f4": 2.5, "b": True,
        "d": dt.date(2024, 2, 29), "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 500000),
        "tz": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc), "n": None}]


def test_numeric_is_postgresql_opaque_text(adbc):
    # The driver hands numeric over as an opaque extension type with text storage.
    with adbc.cursor() as cur:
        t = _table(cur, "SELECT 1.50::numeric(5,2) AS n, 12345678901234567890::numeric AS big")
    assert t.schema.field("n").metadata[b"POSTGRESQL:typmod"] == b"327686"  # (5,2)
    assert [c.storage.to_pylist() if hasattr(c, "storage") else c.to_pylist()
            for c in (t.column("n").chunk(0), t.column("big").chunk(0))] == \
        [["1.50"], ["12345678901234567890"]]


def test_parameters_and_executemany(adbc, name):
    with adbc.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} (id int, name text, day date)")
        cur.executemany(f"INSERT INTO {name} VALUES ($1, $2, $3)",
                        [(1, "a", dt.date(2024, 1, 1)), (2, "b", None), (3, None, None)])
        cur.execute(f"SELECT name FROM {name} WHERE id = $1", parameters=(2,))
        assert cur.fetchall() == [("b",)]
        t = _table(cur, f"SELECT id FROM {name} WHERE name = $1 OR day > $2 ORDER BY id",
                   parameters=("b", dt.date(2023, 12, 31)))
        assert t.column("id").to_pylist() == [1, 2]
        cur.execute(f"SELECT count(*) FROM {name} WHERE name IS NULL")
        assert cur.fetchone() == (1,)


def test_transactions(server, name):
    conn = dbapi.connect(f"postgresql://raympp@{server.host}:{server.port}/raympp")
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE TABLE {name} (id int)")
            conn.commit()
            cur.execute(f"INSERT INTO {name} VALUES (1)")
            conn.rollback()
            cur.execute(f"INSERT INTO {name} VALUES (2)")
            conn.commit()
            assert _table(cur, f"SELECT id FROM {name}").column("id").to_pylist() == [2]
            conn.commit()
    finally:
        conn.close()


INGEST = pa.table({
    "k": pa.array([1, 2, 3], pa.int64()), "s": ["x", None, "z"], "f": [1.5, 2.5, None],
    "d": pa.array([dt.date(2024, 1, 1), None, dt.date(2024, 3, 1)]),
    "b": [True, False, None], "i": pa.array([7, None, -7], pa.int32())})


def test_ingest_create_and_append(adbc, name):
    with adbc.cursor() as cur:
        assert cur.adbc_ingest(name, INGEST, mode="create") == 3
        got = _table(cur, f"SELECT * FROM {name} ORDER BY k")
        assert [(f.name, str(f.type)) for f in got.schema] == [
            ("k", "int64"), ("s", "string"), ("f", "double"), ("d", "date32[day]"),
            ("b", "bool"), ("i", "int32")]
        assert got.to_pylist() == INGEST.to_pylist()
        # append finds the table's columns with `$1::regclass` of '"public" . "name"'.
        assert cur.adbc_ingest(name, INGEST, mode="append") == 3
        got = _table(cur, f"SELECT k, count(*) AS n, min(s) AS s FROM {name} "
                          "GROUP BY k ORDER BY k")
        assert got.to_pylist() == [{"k": 1, "n": 2, "s": "x"}, {"k": 2, "n": 2, "s": None},
                                   {"k": 3, "n": 2, "s": "z"}]
        with pytest.raises(dbapi.ProgrammingError) as info:  # 42P07, as PostgreSQL
            cur.adbc_ingest(name, INGEST, mode="create")
        assert "already exists" in str(info.value)


def test_ingest_replace_and_create_append(adbc, name):
    with adbc.cursor() as cur:
        assert cur.adbc_ingest(name, INGEST, mode="create_append") == 3
        assert cur.adbc_ingest(name, INGEST, mode="create_append") == 3
        assert _table(cur, f"SELECT count(*) AS n FROM {name}").to_pylist() == [{"n": 6}]
        assert cur.adbc_ingest(name, INGEST.slice(0, 1), mode="replace") == 1
        assert _table(cur, f"SELECT * FROM {name}").to_pylist() == INGEST.slice(0, 1).to_pylist()


def test_get_table_schema(adbc, name):
    with adbc.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} (id int, name text, amount double precision, "
                    "day date, ok boolean)")
    schema = adbc.adbc_get_table_schema(name)
    assert [(f.name, str(f.type)) for f in schema] == [
        ("id", "int32"), ("name", "string"), ("amount", "double"), ("day", "date32[day]"),
        ("ok", "bool")]


def _objects(adbc, depth, table):
    """get_objects' entry of database raympp (the one database raympp has)."""
    got = adbc.adbc_get_objects(depth=depth, db_schema_filter="public",
                                table_name_filter=table).read_all().to_pylist()
    return [c for c in got if c["catalog_name"] == "raympp"]


def test_get_objects_catalogs_schemas_tables(adbc, name):
    with adbc.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} (id int, name text)")
    assert _objects(adbc, "catalogs", name) == [
        {"catalog_name": "raympp", "catalog_db_schemas": None}]
    assert _objects(adbc, "db_schemas", name) == [
        {"catalog_name": "raympp",
         "catalog_db_schemas": [{"db_schema_name": "public", "db_schema_tables": None}]}]
    assert _objects(adbc, "tables", name) == [
        {"catalog_name": "raympp", "catalog_db_schemas": [
            {"db_schema_name": "public", "db_schema_tables": [
                {"table_name": name, "table_type": "table", "table_columns": None,
                 "table_constraints": None}]}]}]
    assert adbc.adbc_get_table_types() == ["partitioned_table", "foreign_table", "toast_table",
                                           "materialized_view", "view", "table"]


# get_objects(depth='all') reads the constraints with UNNEST(con.conkey) in a SELECT list
# and in FROM (CROSS JOIN UNNEST(conkey)), and two ARRAY_AGG(... ORDER BY ...) of other
# orders at one query level.
def test_get_objects_all(adbc, name):
    with adbc.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} (id int NOT NULL, name text)")
    got = _objects(adbc, "all", name)
    tables = got[0]["catalog_db_schemas"][0]["db_schema_tables"]
    assert len(got) == 1
    assert [t["table_name"] for t in tables] == [name]
    assert [(c["column_name"], c["ordinal_position"], c["xdbc_type_name"])
            for c in tables[0]["table_columns"]] == [("id", 1, "int4"), ("name", 2, "text")]
    assert tables[0]["table_constraints"] == []


def test_catalog_idioms_the_driver_uses(conn):
    # At connect: `typreceive != 0 ... typreceive::TEXT != 'array_recv'` over pg_type's
    # regproc columns (the type I/O functions have their real oids); for append:
    # `$1::regclass` of '"public" . "t"' (blanks around the dot, as PostgreSQL allows).
    assert conn.execute(
        "SELECT typreceive::oid, typinput, typreceive = 'int4recv'::regproc, "
        "'int4in'::regproc::oid, typreceive != 0, typreceive::text != 'array_recv' "
        "FROM pg_type WHERE typname = 'int4'").fetchall() == [(2406, "int4in", True, 42, True,
                                                              True)]
    assert conn.execute("SELECT 0::regproc, 0::regclass, 0::regtype, typmodin "
                        "FROM pg_type WHERE typname = 'int4'").fetchall() == [("-",) * 4]
    assert conn.execute("SELECT %s::regclass::oid, ' pg_catalog.pg_class '::regclass",
                        ('"pg_catalog" . "pg_class"',)).fetchall() == [(1259, "pg_class")]
    with pytest.raises(Exception) as info:
        conn.execute("""SELECT ' "a b" '::regclass""")
    assert getattr(info.value, "sqlstate", None) == "42P01"
