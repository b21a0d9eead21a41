"""SQLAlchemy 2 (dialect postgresql+psycopg) and pandas against raympp: the engine's first
connect (the dialect's version, settings and catalog probes), the Inspector calls that
raympp's system catalog answers, Core SELECT / INSERT, and pandas' to_sql / read_sql round
trip. get_columns (correlated scalar subqueries over pg_attrdef / pg_sequence / pg_type and
json_build_object), Table autoload, read_sql_table, get_pk_constraint, get_indexes and
get_unique_constraints (array_agg(... ORDER BY ...), unnest and generate_subscripts over
int2vector) must give the right answer; the reflection calls whose queries the binder may
not run yet (get_enums, get_table_options) must be right or refused with 0A000, never
answered wrongly."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest

sa = pytest.importorskip("sqlalchemy")
pd = pytest.importorskip("pandas")

_serial = itertools.count(1)


@pytest.fixture(scope="module")
def engine(raympp_cluster):
    server = raympp_cluster(2)
    eng = sa.create_engine(
        f"postgresql+psycopg://raympp@{server.host}:{server.port}/raympp")
    yield eng
    eng.dispose()


@pytest.fixture
def name(engine):
    """A table name of this test's own, dropped afterwards."""
    n = f"sqla_pd_t{next(_serial)}"
    yield n
    with engine.begin() as c:
        c.exec_driver_sql(f"DROP TABLE IF EXISTS {n}")


def _create(engine, name):
    with engine.begin() as c:
        c.exec_driver_sql(f"CREATE TABLE {name} (id int NOT NULL, name text, x double precision)")


def _refused(call):
    """The call fails with PostgreSQL's 0A000 (feature_not_supported)."""
    with pytest.raises(sa.exc.NotSupportedError) as info:
        call()
    assert info.value.orig.sqlstate == "0A000", info.value
    return info.value


# --- engine and Inspector --------------------------------------------------------------------
def test_engine_connects(engine):
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT 1")).scalar() == 1
        assert c.get_isolation_level() == "READ COMMITTED"
    assert engine.dialect.server_version_info[0] == 15


def test_inspector_schemas_and_tables(engine, name):
    _create(engine, name)
    insp = sa.inspect(engine)
    schemas = insp.get_schema_names()
    assert "public" in schemas and "pg_catalog" not in schemas
    assert insp.has_schema("public") and not insp.has_schema("no_such_schema")
    assert name in insp.get_table_names()
    assert name in insp.get_table_names(schema="public")
    assert insp.has_table(name) and insp.has_table(name, schema="public")
    assert not insp.has_table(name + "_missing")
    assert isinstance(insp.get_table_oid(name), int)
    assert insp.get_view_names() == []
    assert insp.get_materialized_view_names() == []
    assert insp.get_temp_table_names() == []
    assert insp.get_sequence_names() == [] and not insp.has_sequence("s")
    # pg_catalog's relations are there for whoever asks for that schema
    assert "pg_class" in insp.get_table_names(schema="pg_catalog")
    assert "pg_roles" in insp.get_view_names(schema="pg_catalog")


def test_inspector_constraints_and_comments(engine, name):
    _create(engine, name)
    insp = sa.inspect(engine)
    assert insp.get_foreign_keys(name) == []
    assert insp.get_check_constraints(name) == []
    assert insp.get_table_comment(name) == {"text": None}


def _correct_or_refused(call, check):
    """Either the right answer or 0A000: the binder may learn these queries (planner/
    bind_subquery.py is being extended), but must never answer them wrongly."""
    try:
        got = call()
    except sa.exc.NotSupportedError as e:
        assert e.orig.sqlstate == "0A000", e
        return None
    check(got)
    return got


def test_inspector_calls_refused_or_right(engine, name):
    _create(engine, name)
    with engine.begin() as c:
        c.exec_driver_sql(f"INSERT INTO {name} VALUES (1, 'a', 0.5)")
    insp = sa.inspect(engine)

    def columns(cols):
        assert [(c["name"], type(c["type"]), c["nullable"], c["default"]) for c in cols] == [
            ("id", sa.INTEGER, False, None), ("name", sa.TEXT, True, None),
            ("x", sa.dialects.postgresql.DOUBLE_PRECISION, True, None)]
    columns(insp.get_columns(name))  # json_build_object over pg_sequence: answered now
    assert sa.Table(name, sa.MetaData(), autoload_with=engine).c.keys() == ["id", "name", "x"]
    assert pd.read_sql_table(name, engine).values.tolist() == [[1, "a", 0.5]]

    pk = insp.get_pk_constraint(name)
    assert pk["constrained_columns"] == [] and pk["name"] is None
    assert insp.get_indexes(name) == [] and insp.get_unique_constraints(name) == []

    def no_options(got):
        assert got == {}
    _correct_or_refused(lambda: insp.get_table_options(name), no_options)


def test_catalog_functions_of_the_dialect(engine):
    with engine.connect() as c:
        assert c.execute(sa.text(
            "SELECT pg_catalog.pg_collation_is_visible(100), pg_collation_is_visible(950), "
            "pg_catalog.pg_get_serial_sequence('pg_class', 'oid')")).one() == (True, True, None)
        rows = c.execute(sa.text(
            "SELECT collname FROM pg_catalog.pg_collation "
            "WHERE pg_catalog.pg_collation_is_visible(oid) ORDER BY collname")).all()
        assert [r[0] for r in rows] == ["C", "POSIX", "default"]
        assert c.execute(sa.text(
            "SELECT pg_get_viewdef('pg_catalog.pg_class'::regclass)")).scalar() is None


def test_view_definition_of_a_system_view_is_refused(engine):
    # raympp has no SQL text of its system views: 0A000, not NULL (which SQLAlchemy would
    # report as NoSuchTableError for a view that pg_class lists).
    insp = sa.inspect(engine)
    err = _refused(lambda: insp.get_view_definition("pg_tables", schema="pg_catalog"))
    assert "pg_catalog.pg_tables" in str(err)
    with engine.connect() as c:
        _refused(lambda: c.execute(sa.text(
            "SELECT relname, pg_get_viewdef(oid, true) FROM pg_catalog.pg_class "
            "WHERE relkind = 'v'")).all())
    with pytest.raises(sa.exc.NoSuchTableError):
        insp.get_view_definition("no_such_view")


# --- Core --------------------------------------------------------------------------------------
def test_core_create_insert_select(engine, name):
    md = sa.MetaData()
    t = sa.Table(name, md, sa.Column("id", sa.Integer, nullable=False),
                 sa.Column("v", sa.String(10)), sa.Column("n", sa.Numeric(10, 2)))
    md.create_all(engine)
    assert sa.inspect(engine).has_table(name)
    with engine.begin() as c:
        c.execute(sa.insert(t).values(id=1, v="a", n=1.25))
        c.execute(sa.insert(t), [{"id": 2, "v": "b_c", "n": 2}, {"id": 3, "v": None, "n": None}])
    with engine.connect() as c:
        rows = c.execute(sa.select(t).order_by(t.c.id)).all()
        assert [(r.id, r.v, None if r.n is None else float(r.n)) for r in rows] == [
            (1, "a", 1.25), (2, "b_c", 2.0), (3, None, None)]
        q = lambda s: [tuple(r) for r in c.execute(s).all()]  # noqa: E731
        assert q(sa.select(t.c.v).where(t.c.id > 1).order_by(t.c.id)) == [("b_c",), (None,)]
        assert q(sa.select(t.c.id).where(t.c.id.in_([1, 3])).order_by(t.c.id)) == [(1,), (3,)]
        assert q(sa.select(t.c.id).where(t.c.v.like("a%"))) == [(1,)]
        assert q(sa.select(t.c.id).where(t.c.v.ilike("A%"))) == [(1,)]
        # autoescape writes LIKE ... ESCAPE '/': '_' is then a plain character
        assert q(sa.select(t.c.id).where(t.c.v.contains("_", autoescape=True))) == [(2,)]
        assert q(sa.select(sa.func.count(), sa.func.max(t.c.id))) == [(3, 3)]
        assert q(sa.select(t.c.id).order_by(t.c.id).limit(2).offset(1)) == [(2,), (3,)]
        assert q(sa.select(t.c.id).where(
            t.c.id == sa.select(sa.func.max(t.c.id)).scalar_subquery())) == [(3,)]
    md.drop_all(engine)
    assert not sa.inspect(engine).has_table(name)


def test_core_update_delete_and_serial_primary_key(engine, name):
    md = sa.MetaData()
    t = sa.Table(name, md, sa.Column("id", sa.Integer, nullable=False))
    md.create_all(engine)
    with engine.begin() as c:  # INSERT ... RETURNING works (coordinator/load.py)
        assert c.execute(sa.insert(t).values(id=1).returning(t.c.id)).all() == [(1,)]
    # UPDATE and DELETE work (coordinator/modify.py), with their row counts
    with engine.begin() as c:
        assert c.execute(sa.update(t).where(t.c.id == 1).values(id=2)).rowcount == 1
    with engine.begin() as c:
        assert c.execute(sa.select(t.c.id)).all() == [(2,)]
        assert c.execute(sa.delete(t).where(t.c.id == 2)).rowcount == 1
        assert c.execute(sa.select(t.c.id)).all() == []
    # A primary key column becomes SERIAL, PRIMARY KEY (id): both exist now.
    md2 = sa.MetaData()
    pk = sa.Table(name + "_pk", md2, sa.Column("id", sa.Integer, primary_key=True),
                  sa.Column("v", sa.Text))
    md2.create_all(engine)
    with engine.begin() as c:
        assert c.execute(sa.insert(pk).values(v="a").returning(pk.c.id)).all() == [(1,)]
    md2.drop_all(engine)


# --- pandas -------------------------------------------------------------------------------------
def test_pandas_round_trip(engine, name):
    df = pd.DataFrame({
        "i": pd.Series([1, 2, 3], dtype="int64"), "f": [0.5, None, 2.0],
        "s": ["x", "y", None], "b": [True, False, True],
        "ts": pd.to_datetime(["2024-01-01 10:00:00", "2024-02-03 04:05:06",
                              "2024-12-31 23:59:59"]),
        "d": [dt.date(2024, 1, 1), dt.date(2024, 2, 29), dt.date(2025, 3, 4)]})
    df.to_sql(name, engine, index=False, if_exists="replace")
    back = pd.read_sql(sa.text(f"SELECT * FROM {name} ORDER BY i"), engine)
    assert list(back.columns) == list(df.columns)
    assert back["i"].tolist() == [1, 2, 3]
    assert back["f"].tolist()[0] == 0.5 and pd.isna(back["f"][1]) and back["f"][2] == 2.0
    assert back["s"].tolist()[:2] == ["x", "y"] and pd.isna(back["s"][2])
    assert back["b"].tolist() == [True, False, True]
    assert back["ts"].tolist() == df["ts"].tolist()
    assert back["d"].tolist() == df["d"].tolist()

    df.to_sql(name, engine, index=False, if_exists="append")
    df.to_sql(name, engine, index=False, if_exists="append", method="multi", chunksize=2)
    assert pd.read_sql(f"SELECT count(*) AS n FROM {name}", engine)["n"][0] == 9
    with pytest.raises(ValueError, match="already exists"):
        df.to_sql(name, engine, index=False)          # if_exists='fail'

    # Replacing a table that exists reflects it first (MetaData.reflect: get_columns,
    # get_multi_pk_constraint, ...): right or 0A000 (a new table's 'replace' works above).
    def replaced(_):
        assert pd.read_sql(f"SELECT count(*) AS n FROM {name}", engine)["n"][0] == 1
    if _correct_or_refused(
            lambda: df.head(1).to_sql(name, engine, index=False, if_exists="replace"),
            replaced) is None:
        assert pd.read_sql(f"SELECT count(*) AS n FROM {name}", engine)["n"][0] == 9
        with engine.begin() as c:
            c.exec_driver_sql(f"DROP TABLE {name}")
        df.head(1).to_sql(name, engine, index=False, if_exists="replace")

    got = pd.read_sql(sa.text(f"SELECT s FROM {name} WHERE i = :i"), engine, params={"i": 1})
    assert got["s"].tolist() == ["x"]
    chunks = list(pd.read_sql(f"SELECT * FROM {name}", engine, chunksize=1))
    assert [len(c) for c in chunks] == [1]


def test_pandas_to_sql_with_index(engine, name):
    # index=True (pandas' default) also creates an index on the index column: recorded in
    # the catalog (raympp builds no index structure), and reflected back.
    df = pd.DataFrame({"a": [1, 2]})
    df.to_sql(name, engine, if_exists="replace")
    assert sa.inspect(engine).get_indexes(name) == [
        {"name": f"ix_{name}_index", "unique": False, "column_names": ["index"],
         "dialect_options": {"postgresql_include": []}}]
    assert pd.read_sql(f"SELECT * FROM {name} ORDER BY 1", engine).values.tolist() == [
        [0, 1], [1, 2]]


def test_inspector_keys_indexes_comments(engine, name):
    """What the Inspector reflects of keys, indexes and comments is what PostgreSQL 15's
    catalog gives it for the same DDL (the expected values are PostgreSQL's)."""
    with engine.begin() as c:
        c.exec_driver_sql(f"CREATE TABLE {name} (id int PRIMARY KEY, a int, b text, "
                          f"CONSTRAINT {name}_bk UNIQUE (b, id), UNIQUE (a, id))")
        c.exec_driver_sql(f"CREATE INDEX ON {name} (a)")
        c.exec_driver_sql(f"COMMENT ON TABLE {name} IS 'the table'")
        c.exec_driver_sql(f"COMMENT ON COLUMN {name}.a IS 'column a'")
        c.exec_driver_sql(f"COMMENT ON CONSTRAINT {name}_pkey ON {name} IS 'the key'")
    insp = sa.inspect(engine)
    assert insp.get_pk_constraint(name) == {
        "constrained_columns": ["id"], "name": f"{name}_pkey", "comment": "the key",
        "dialect_options": {"postgresql_include": []}}
    opts = {"postgresql_include": [], "postgresql_nulls_not_distinct": False}
    assert sorted(insp.get_unique_constraints(name), key=lambda u: u["name"]) == [
        {"column_names": ["a", "id"], "name": f"{name}_a_id_key", "comment": None,
         "dialect_options": opts},
        {"column_names": ["b", "id"], "name": f"{name}_bk", "comment": None,
         "dialect_options": opts}]
    assert sorted(insp.get_indexes(name), key=lambda i: i["name"]) == [
        {"name": f"{name}_a_id_key", "unique": True, "column_names": ["a", "id"],
         "duplicates_constraint": f"{name}_a_id_key",
         "dialect_options": {"postgresql_include": []}},
        {"name": f"{name}_a_idx", "unique": False, "column_names": ["a"],
         "dialect_options": {"postgresql_include": []}},
        {"name": f"{name}_bk", "unique": True, "column_names": ["b", "id"],
         "duplicates_constraint": f"{name}_bk",
         "dialect_options": {"postgresql_include": []}}]
    assert insp.get_table_comment(name) == {"text": "the table"}
    assert [(c["name"], c.get("comment")) for c in insp.get_columns(name)] == [
        ("id", None), ("a", "column a"), ("b", None)]
