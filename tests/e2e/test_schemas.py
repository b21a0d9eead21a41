"""Schemas with real clients: PostgreSQL's NOTICEs of CREATE/DROP SCHEMA, COPY in and out of
a table in a schema, EXPLAIN, plans kept per search_path, DDL of two sessions on a schema
and its tables, DROP ROLE of a schema's owner, psql's \\dn / \\dt s.* / \\d s.t,
SQLAlchemy's inspection of schemas and pandas' to_sql(schema=...), and a restarted
coordinator keeping exactly the committed schemas (SQL semantics against PostgreSQL:
tests/slt/schemas.slt)."""

from __future__ import annotations

import shutil
import threading
import time

import pytest
from psycopg import errors

from tests.conftest import start_server

_PSQL = pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")


def fails(conn, sql, sqlstate, message=None):
    with pytest.raises(errors.Error) as e:
        conn.execute(sql)
    assert e.value.sqlstate == sqlstate, (sql, e.value)
    if message is not None:
        assert e.value.diag.message_primary == message, sql
    return e.value


@pytest.fixture
def schema(server):
    """A fresh schema name (e2e_s<n>), dropped with its tables after the test."""
    names = []

    def make() -> str:
        names.append(f"e2e_s{len(names)}_{int(time.time() * 1000) % 10**8}")
        return names[-1]

    yield make
    with server.connect(autocommit=True) as c:
        for n in names:
            try:
                c.execute(f"DROP SCHEMA IF EXISTS {n} CASCADE")
            except Exception:  # the test has already reported what broke
                pass


def notices_of(conn):
    got = []
    conn.add_notice_handler(lambda d: got.append(
        (d.severity, d.sqlstate, d.message_primary, d.message_detail)))
    return got


def test_notices_of_schema_statements(conn, schema):
    s = schema()
    got = notices_of(conn)
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
    conn.execute(f"CREATE TABLE {s}.t1 (a int)")
    conn.execute(f"CREATE TABLE {s}.t2 (a int)")
    assert got == [("NOTICE", "42P06", f'schema "{s}" already exists, skipping', None)]
    got.clear()
    e = fails(conn, f"DROP SCHEMA {s}", "2BP01",
              f"cannot drop schema {s} because other objects depend on it")
    assert e.diag.message_detail == (f"table {s}.t1 depends on schema {s}\n"
                                     f"table {s}.t2 depends on schema {s}")
    assert e.diag.message_hint == "Use DROP ... CASCADE to drop the dependent objects too."
    conn.execute(f"DROP SCHEMA IF EXISTS e2e_no_such, {s} CASCADE")
    assert got == [
        ("NOTICE", "00000", 'schema "e2e_no_such" does not exist, skipping', None),
        ("NOTICE", "00000", "drop cascades to 2 other objects",
         f"drop cascades to table {s}.t1\ndrop cascades to table {s}.t2")]
    got.clear()
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE TABLE {s}.single (a int)")
    conn.execute("SET client_min_messages = warning")
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
    assert got == []
    conn.execute("RESET client_min_messages")
    conn.execute(f"DROP SCHEMA {s} CASCADE")
    assert got == [("NOTICE", "00000", f"drop cascades to table {s}.single", None)]
    got.clear()
    # Several schemas: the last one named first, each one's tables oldest first.
    s2 = schema()
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE SCHEMA {s2}")
    for t in (f"{s}.t1", f"{s2}.u1", f"{s}.t2"):
        conn.execute(f"CREATE TABLE {t} (a int)")
    conn.execute(f"DROP SCHEMA {s}, {s2} CASCADE")
    assert got == [("NOTICE", "00000", "drop cascades to 3 other objects",
                    f"drop cascades to table {s2}.u1\ndrop cascades to table {s}.t1\n"
                    f"drop cascades to table {s}.t2")]
    got.clear()
    # The tables' IF [NOT] EXISTS NOTICEs too.
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE TABLE {s}.t (a int)")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {s}.t (a int)")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {s}.t AS SELECT 1 AS a")
    conn.execute(f"DROP TABLE IF EXISTS e2e_no_such.t, {s}.no_such, {s}.t")
    assert got == [("NOTICE", "42P07", 'relation "t" already exists, skipping', None)] * 2 + [
        ("NOTICE", "00000", 'schema "e2e_no_such" does not exist, skipping', None),
        ("NOTICE", "00000", 'table "no_such" does not exist, skipping', None)]


def test_drop_schema_removes_the_storage_of_its_tables(server, conn, schema):
    from tests.e2e.test_ddl_transactions import storage_dirs, wait_storage_gone

    s = schema()
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE TABLE {s}.t (k int8)")
    conn.execute(f"INSERT INTO {s}.t SELECT g FROM generate_series(1, 1000) g")
    nsp = conn.execute("SELECT oid FROM pg_namespace WHERE nspname = %s", (s,)).fetchone()[0]
    table_id = server.engine.catalog.get_table("t", nsp).id
    assert len(storage_dirs(server, table_id)) == 2
    with server.connect(autocommit=False) as tx:  # rolled back: the rows stay
        tx.execute(f"DROP SCHEMA {s} CASCADE")
        tx.rollback()
    assert conn.execute(f"SELECT count(*) FROM {s}.t").fetchone() == (1000,)
    conn.execute(f"DROP SCHEMA {s} CASCADE")
    wait_storage_gone(server, table_id)


def test_copy_and_explain_of_a_table_in_a_schema(conn, schema):
    s = schema()
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE TABLE {s}.t (k int8, v text) DISTRIBUTED BY (k)")
    conn.execute("CREATE TABLE IF NOT EXISTS public.t (k int8, v text)")  # same name, public
    with conn.cursor() as cur:
        with cur.copy(f"COPY {s}.t FROM STDIN") as cp:
            for i in range(1, 1001):
                cp.write_row((i, f"v{i}"))
        with cur.copy(f"COPY raympp.{s}.t (k) TO STDOUT") as cp:
            cp.set_types(["int8"])
            assert sorted(r[0] for r in cp.rows()) == list(range(1, 1001))
        # COPY of the table a search path finds
        cur.execute(f"SET search_path = {s}")
        with cur.copy("COPY t FROM STDIN") as cp:
            cp.write_row((1001, "x"))
        cur.execute("RESET search_path")
    assert conn.execute(f"SELECT count(*), sum(k) FROM {s}.t").fetchone() == (1001, 501501)
    plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN SELECT v FROM {s}.t WHERE k = 3"))
    assert "Scan: t, columns=[k, v], filter=(k = 3)" in plan
    conn.execute(f"ANALYZE {s}.t")
    assert conn.execute(f"SELECT reltuples FROM pg_class WHERE oid = '{s}.t'::regclass"
                        ).fetchone() == (1001.0,)
    conn.execute(f"TRUNCATE {s}.t")
    assert conn.execute(f"SELECT count(*) FROM {s}.t").fetchone() == (0,)
    conn.execute("DROP TABLE public.t")


def test_kept_plans_follow_the_search_path(server, schema):
    """One text, two search paths that resolve its table differently: each runs on its own
    table (the plan cache keys plans by search_path), also through a prepared statement."""
    a, b = schema(), schema()
    with server.connect(autocommit=True) as c:
        for s, n in ((a, 1), (b, 2)):
            c.execute(f"CREATE SCHEMA {s}")
            c.execute(f"CREATE TABLE {s}.pc (k int8)")
            c.execute(f"INSERT INTO {s}.pc SELECT g FROM generate_series(1, {n}) g")
        for _ in range(2):
            for s, n in ((a, 1), (b, 2)):
                c.execute(f"SET search_path = {s}")
                assert c.execute("SELECT count(*) FROM pc").fetchone() == (n,)
                assert c.execute("SELECT count(*) FROM pc WHERE k > %s", (0,),
                                 prepare=True).fetchone() == (n,)
        # A table that shadows another in an earlier schema, created after a plan was kept.
        c.execute(f"SET search_path = {a}, {b}")
        c.execute(f"DROP TABLE {a}.pc")
        assert c.execute("SELECT count(*) FROM pc").fetchone() == (2,)
        c.execute(f"CREATE TABLE {a}.pc (k int8)")
        assert c.execute("SELECT count(*) FROM pc").fetchone() == (0,)


def test_ddl_of_two_sessions_on_a_schema(server, schema):
    s, s2 = schema(), schema()
    with server.connect(autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {s}")
        # A transaction creating a table in a schema holds its name: a DROP SCHEMA waits
        # for it (lock_timeout), and finds the table once it is committed.
        with server.connect(autocommit=False) as tx:
            tx.execute(f"CREATE TABLE {s}.t (a int)")
            c.execute("SET lock_timeout = '300ms'")
            fails(c, f"DROP SCHEMA {s}", "55P03", "canceling statement due to lock timeout")
            c.execute("RESET lock_timeout")
            tx.commit()
        fails(c, f"DROP SCHEMA {s}", "2BP01")
        c.execute(f"DROP TABLE {s}.t")
        # A CREATE TABLE waits for a DROP SCHEMA of its schema, then finds it gone.
        with server.connect(autocommit=False) as tx:
            tx.execute(f"DROP SCHEMA {s}")
            outcome = []

            def create():
                try:
                    c.execute(f"CREATE TABLE {s}.t (a int)")
                    outcome.append("created")
                except errors.Error as e:
                    outcome.append((e.sqlstate, e.diag.message_primary))
            th = threading.Thread(target=create)
            th.start()
            time.sleep(0.5)
            assert outcome == []  # waiting
            tx.commit()
            th.join(30)
        assert outcome == [("3F000", f'schema "{s}" does not exist')]
        # Two transactions create one schema: the second waits, then finds it (42P06).
        with server.connect(autocommit=False) as tx:
            tx.execute(f"CREATE SCHEMA {s2}")
            outcome = []

            def second():
                with server.connect(autocommit=False) as tx2:
                    try:
                        tx2.execute(f"CREATE SCHEMA {s2}")
                        outcome.append("created")
                    except errors.Error as e:
                        outcome.append(e.sqlstate)
            th = threading.Thread(target=second)
            th.start()
            time.sleep(0.5)
            assert outcome == []  # waiting for the first
            tx.commit()
            th.join(30)
        assert outcome == ["42P06"]
        # Seen by others only once committed.
        with server.connect(autocommit=False) as tx:
            tx.execute(f"ALTER SCHEMA {s2} RENAME TO {s2}_r")
            assert c.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s",
                             (s2,)).fetchone() == (1,)
            tx.commit()
        assert c.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s",
                         (s2,)).fetchone() == (0,)
        c.execute(f"DROP SCHEMA {s2}_r")


def test_drop_role_that_owns_a_schema(conn, schema):
    s = schema()
    conn.execute("DROP ROLE IF EXISTS e2e_schema_owner")
    conn.execute("CREATE ROLE e2e_schema_owner")
    try:
        conn.execute(f"CREATE SCHEMA {s} AUTHORIZATION e2e_schema_owner")
        assert conn.execute("SELECT pg_get_userbyid(nspowner) FROM pg_namespace "
                            "WHERE nspname = %s", (s,)).fetchone() == ("e2e_schema_owner",)
        e = fails(conn, "DROP ROLE e2e_schema_owner", "2BP01",
                  'role "e2e_schema_owner" cannot be dropped because some objects depend on it')
        assert e.diag.message_detail == f"owner of schema {s}"
        conn.execute(f"ALTER SCHEMA {s} OWNER TO CURRENT_USER")
    finally:
        conn.execute("DROP ROLE e2e_schema_owner")


@_PSQL
def test_psql_describes_schemas(psql, conn, schema):
    s = schema()
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE TABLE {s}.t (a int NOT NULL, b varchar(10))")
    out = psql("-c", "\\dn").stdout
    assert f" {s} " in out and " public " in out
    out = psql("-c", f"\\dt {s}.*").stdout
    assert f" {s} | t " in out and "| table |" in out
    out = psql("-c", f"\\d {s}.t").stdout
    assert f'Table "{s}.t"' in out
    rows = [[c.strip() for c in line.split("|")] for line in out.splitlines() if "|" in line]
    assert [r[:4] for r in rows[1:]] == [["a", "integer", "", "not null"],
                                         ["b", "character varying(10)", "", ""]]
    assert f" {s} " in psql("-c", "\\dn+").stdout
    assert f'Table "{s}.t"' in psql("-c", f"\\d+ {s}.t").stdout
    # Not in the search path: \dt lists public's tables only, \dt *.* every schema's.
    assert f" {s} " not in psql("-c", "\\dt").stdout
    assert f" {s} | t " in psql("-c", "\\dt *.*").stdout


def test_sqlalchemy_and_pandas_in_a_schema(server, schema):
    sa = pytest.importorskip("sqlalchemy")
    pd = pytest.importorskip("pandas")
    s = schema()
    eng = sa.create_engine(f"postgresql+psycopg://raympp@{server.host}:{server.port}/raympp")
    try:
        with eng.begin() as c:
            c.exec_driver_sql(f"CREATE SCHEMA {s}")
            c.exec_driver_sql(f"CREATE TABLE {s}.items (id int NOT NULL, name text)")
        insp = sa.inspect(eng)
        assert s in insp.get_schema_names() and insp.has_schema(s)
        assert insp.get_table_names(schema=s) == ["items"]
        assert insp.has_table("items", schema=s) and not insp.has_table("items")
        assert [c["name"] for c in insp.get_columns("items", schema=s)] == ["id", "name"]
        df = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", None]})
        df.to_sql("frame", eng, schema=s, index=False)
        df.to_sql("frame", eng, schema=s, index=False, if_exists="append")
        back = pd.read_sql(f"SELECT id, name FROM {s}.frame ORDER BY id, name", eng)
        assert back["id"].tolist() == [1, 1, 2, 2, 3, 3]
        assert sorted(sa.inspect(eng).get_table_names(schema=s)) == ["frame", "items"]
        df.head(1).to_sql("frame", eng, schema=s, index=False, if_exists="replace")
        assert pd.read_sql(f"SELECT count(*) AS n FROM {s}.frame", eng)["n"].tolist() == [1]
        meta = sa.MetaData(schema=s)
        sa.Table("made", meta, sa.Column("id", sa.Integer), sa.Column("label", sa.Text))
        meta.create_all(eng)
        assert "made" in sa.inspect(eng).get_table_names(schema=s)
        meta.drop_all(eng)
        table = sa.Table("items", sa.MetaData(), autoload_with=eng, schema=s)
        with eng.begin() as c:
            c.execute(table.insert().values(id=7, name="seven"))
            assert c.execute(sa.select(table.c.name)).scalars().all() == ["seven"]
    finally:
        eng.dispose()


def test_restart_keeps_the_committed_schemas(ray_session, tmp_path_factory):
    """A restarted coordinator has the committed schemas, their tables and rows, and none
    of a transaction that was open when it stopped."""
    data_dir = str(tmp_path_factory.mktemp("schemas"))
    server = start_server(data_dir, 2)
    try:
        with server.connect(autocommit=True) as c:
            c.execute("CREATE SCHEMA kept")
            c.execute("CREATE TABLE kept.t (k int8)")
            c.execute("INSERT INTO kept.t SELECT g FROM generate_series(1, 100) g")
            c.execute("CREATE SCHEMA renamed")
            c.execute("ALTER SCHEMA renamed RENAME TO renamed2")
        tx = server.connect(autocommit=False)
        tx.execute("CREATE SCHEMA lost")
        tx.execute("CREATE TABLE lost.t (k int8)")
        tx.execute("DROP SCHEMA kept CASCADE")
        server.stop()
        tx.close()
        server = start_server(data_dir, 2)
        with server.connect(autocommit=True) as c:
            assert c.execute("SELECT count(*), sum(k) FROM kept.t").fetchone() == (100, 5050)
            names = {r[0] for r in c.execute("SELECT nspname FROM pg_namespace")}
            assert {"kept", "renamed2"} <= names and not {"lost", "renamed"} & names
            fails(c, "SELECT * FROM lost.t", "42P01")
    finally:
        server.stop()
