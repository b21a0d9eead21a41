"""Views with real clients: psql's \\d v, \\dv and \\d+ v, SQLAlchemy's view inspection,
NOTICEs of DROP ... CASCADE, EXPLAIN of a query on a view, plans made anew after a view
changes, a DROP waiting for a transaction creating a view over its table, and views that
survive a coordinator restart only when committed."""

from __future__ import annotations

import shutil
import threading
import time

import pytest
from psycopg import errors

from tests.conftest import start_server

_PSQL = pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")


@pytest.fixture
def objects(conn):
    """Names to drop after the test: `objects(kind, name)` -> name."""
    made = []

    def make(kind: str, name: str) -> str:
        made.append((kind, name))
        return name
    yield make
    for kind, name in reversed(made):
        try:
            conn.execute(f"DROP {kind} IF EXISTS {name} CASCADE")
        except errors.Error:  # cleanup only: the test has already reported what broke
            pass


def _fails(conn, sql: str, sqlstate: str) -> errors.Error:
    with pytest.raises(errors.Error) as e:
        conn.execute(sql)
    assert e.value.sqlstate == sqlstate, (sql, e.value)
    return e.value


@pytest.fixture
def base(conn, objects):
    t = objects("TABLE", "e2e_vw_base")
    conn.execute(f"CREATE TABLE {t} (k int8, name varchar(10), amount numeric(10,2))")
    conn.execute(f"INSERT INTO {t} SELECT g, 'n' || g, g * 1.5 FROM generate_series(1, 100) g")
    return t


@_PSQL
def test_psql_describes_views(psql, conn, base, objects):
    v = objects("VIEW", "e2e_vw_psql")
    conn.execute(f"CREATE VIEW {v} AS SELECT k, name, amount * 2 AS twice FROM {base} "
                 "WHERE k > 10")
    out = psql("-c", f"\\d {v}").stdout
    assert f'View "public.{v}"' in out
    rows = [[c.strip() for c in line.split("|")] for line in out.splitlines() if "|" in line]
    assert rows[0] == ["Column", "Type", "Collation", "Nullable", "Default"]
    # raympp's numerics keep the scale their expression has: numeric(11,2) where
    # PostgreSQL shows an unconstrained numeric
    assert [r[:2] for r in rows[1:]] == [["k", "bigint"], ["name", "character varying(10)"],
                                         ["twice", "numeric(11,2)"]]
    listed = [[c.strip() for c in line.split("|")] for line in psql("-c", "\\dv").stdout
              .splitlines() if "|" in line]
    assert ["public", v, "view", "raympp"] in listed and all(base not in r for r in listed)
    listed = [[c.strip() for c in line.split("|")] for line in psql("-c", "\\d").stdout
              .splitlines() if "|" in line]
    assert ["public", v, "view", "raympp"] in listed and ["public", base, "table", "raympp"] \
        in listed
    out = psql("-c", f"\\d+ {v}").stdout
    assert "View definition:" in out and f"FROM {base}" in out and "k > 10" in out


def test_sqlalchemy_inspects_views(server, conn, base, objects):
    sa = pytest.importorskip("sqlalchemy")
    v = objects("VIEW", "e2e_vw_sqla")
    conn.execute(f"CREATE VIEW {v} (key, label) AS SELECT k, name FROM {base}")
    engine = sa.create_engine(
        f"postgresql+psycopg://raympp@{server.host}:{server.port}/raympp")
    try:
        inspector = sa.inspect(engine)
        assert v in inspector.get_view_names() and v not in inspector.get_table_names()
        assert f"FROM {base}" in inspector.get_view_definition(v)
        cols = inspector.get_columns(v)
        assert [(c["name"], str(c["type"])) for c in cols] == [("key", "BIGINT"),
                                                               ("label", "VARCHAR(10)")]
        table = sa.Table(v, sa.MetaData(), autoload_with=engine)
        with engine.connect() as c:
            got = c.execute(sa.select(sa.func.count()).select_from(table)
                            .where(table.c.key > 50)).scalar()
        assert got == 50
    finally:
        engine.dispose()


def test_drop_cascade_notices(conn, base, objects):
    a, b = objects("VIEW", "e2e_vw_n1"), objects("VIEW", "e2e_vw_n2")
    conn.execute(f"CREATE VIEW {a} AS SELECT k FROM {base}")
    conn.execute(f"CREATE VIEW {b} AS SELECT k FROM {a}")
    notices = []
    conn.add_notice_handler(lambda d: notices.append(
        (d.severity, d.message_primary, d.message_detail)))
    e = _fails(conn, f"DROP TABLE {base}", "2BP01")
    assert e.diag.message_primary == \
        f"cannot drop table {base} because other objects depend on it"
    assert e.diag.message_detail == (f"view {a} depends on table {base}\n"
                                     f"view {b} depends on view {a}")
    assert e.diag.message_hint == "Use DROP ... CASCADE to drop the dependent objects too."
    conn.execute(f"DROP VIEW {a} CASCADE")
    assert notices == [("NOTICE", f"drop cascades to view {b}", None)]
    conn.execute(f"CREATE VIEW {a} AS SELECT k FROM {base}")
    conn.execute(f"CREATE VIEW {b} AS SELECT k FROM {a}")
    notices.clear()
    conn.execute("SET client_min_messages = warning")
    try:
        conn.execute(f"DROP VIEW {a} CASCADE")
    finally:
        conn.execute("RESET client_min_messages")
    assert notices == []
    conn.execute(f"DROP VIEW IF EXISTS {a}")
    assert notices == [("NOTICE", f'view "{a}" does not exist, skipping', None)]
    conn.execute(f"CREATE VIEW {a} AS SELECT k FROM {base}")
    conn.execute(f"CREATE VIEW {b} AS SELECT k FROM {a}")
    notices.clear()
    conn.execute(f"DROP TABLE {base} CASCADE")
    assert notices == [("NOTICE", "drop cascades to 2 other objects",
                        f"drop cascades to view {a}\ndrop cascades to view {b}")]
    conn.execute(f"CREATE VIEW {a} AS SELECT 1 AS one")
    notices.clear()
    conn.execute(f"ANALYZE {a}")
    assert notices == [("WARNING", f'skipping "{a}" --- cannot analyze non-tables or special '
                        "system tables", None)]


def test_explain_shows_the_base_tables(conn, base, objects):
    v = objects("VIEW", "e2e_vw_explain")
    conn.execute(f"CREATE VIEW {v} AS SELECT k, amount FROM {base} WHERE k % 2 = 0")
    plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN SELECT sum(amount) FROM {v} "
                                                "WHERE k > 10"))
    assert f"Scan: {base}" in plan and v not in plan
    assert conn.execute(f"SELECT sum(amount) FROM {v} WHERE k > 10").fetchone()[0] == \
        conn.execute(f"SELECT sum(amount) FROM {base} WHERE k > 10 AND k % 2 = 0").fetchone()[0]


def test_plans_follow_view_changes(server, conn, base, objects):
    v = objects("VIEW", "e2e_vw_plans")
    conn.execute(f"CREATE VIEW {v} AS SELECT k FROM {base} WHERE k <= 3")
    sql = f"SELECT count(*) FROM {v}"
    assert conn.execute(sql).fetchone()[0] == 3
    assert conn.execute(sql).fetchone()[0] == 3  # from the plan cache
    conn.execute(f"CREATE OR REPLACE VIEW {v} AS SELECT k FROM {base} WHERE k <= 7")
    assert conn.execute(sql).fetchone()[0] == 7
    with server.connect(autocommit=False) as tx:
        tx.execute(f"CREATE OR REPLACE VIEW {v} AS SELECT k FROM {base} WHERE k <= 9")
        assert tx.execute(sql).fetchone()[0] == 9
        assert conn.execute(sql).fetchone()[0] == 7  # not committed: others see the old
        tx.rollback()
    assert conn.execute(sql).fetchone()[0] == 7


def test_drop_waits_for_a_view_being_created_over_its_table(server, conn, base, objects):
    v = objects("VIEW", "e2e_vw_lock")
    with server.connect(autocommit=False) as tx:
        tx.execute(f"CREATE VIEW {v} AS SELECT k FROM {base}")
        conn.execute("SET lock_timeout = '200ms'")
        _fails(conn, f"DROP TABLE {base}", "55P03")
        conn.execute("RESET lock_timeout")
        assert conn.execute(f"SELECT count(*) FROM {base}").fetchone()[0] == 100
        outcome = []

        def drop():
            with server.connect() as other:
                try:
                    other.execute(f"DROP TABLE {base}")
                    outcome.append("dropped")
                except errors.Error as e:
                    outcome.append(e.sqlstate)
        th = threading.Thread(target=drop)
        th.start()
        time.sleep(0.5)
        assert outcome == []  # waiting for the view's transaction
        tx.commit()
        th.join(30)
    assert outcome == ["2BP01"]  # then it sees the view depending on the table


def test_views_survive_a_restart_only_when_committed(ray_session, tmp_path):
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir, 2)
    try:
        with server.connect() as c:
            c.execute("CREATE TABLE r_t (k int8)")
            c.execute("INSERT INTO r_t SELECT g FROM generate_series(1, 10) g")
            c.execute("CREATE VIEW r_v (n) AS SELECT count(*) FROM r_t")
            c.execute("CREATE VIEW r_w AS SELECT n * 2 AS twice FROM r_v")
        tx = server.connect(autocommit=False)
        tx.execute("CREATE VIEW r_uncommitted AS SELECT 1 AS one")
        tx.execute("DROP VIEW r_w")
    finally:
        server.stop()  # the open transaction ends with the coordinator
    tx.close()
    server = start_server(data_dir, 2)
    try:
        with server.connect() as c:
            assert c.execute("SELECT * FROM r_w").fetchone() == (20,)
            _fails(c, "SELECT * FROM r_uncommitted", "42P01")
            _fails(c, "DROP TABLE r_t", "2BP01")
            c.execute("DROP TABLE r_t CASCADE")
            _fails(c, "SELECT * FROM r_v", "42P01")
    finally:
        server.stop()


def test_copy_of_a_view(conn, base, objects):
    v = objects("VIEW", "e2e_vw_copy")
    conn.execute(f"CREATE VIEW {v} AS SELECT k, name FROM {base} WHERE k <= 3")
    with pytest.raises(errors.Error) as e:
        with conn.cursor().copy(f"COPY {v} TO STDOUT") as copy:
            list(copy)
    assert e.value.sqlstate == "42809"
    assert e.value.diag.message_primary == f'cannot copy from view "{v}"'
    assert e.value.diag.message_hint == "Try the COPY (SELECT ...) TO variant."
    with pytest.raises(errors.Error) as e:
        with conn.cursor().copy(f"COPY {v} FROM STDIN") as copy:
            copy.write("1\tx\n")
    assert e.value.sqlstate == "42809"
    with conn.cursor().copy(f"COPY (SELECT * FROM {v} ORDER BY k) TO STDOUT") as copy:
        got = b"".join(bytes(b) for b in copy)
    assert got == b"1\tn1\n2\tn2\n3\tn3\n"
    _fails(conn, f"INSERT INTO {v} VALUES (1, 'x')", "0A000")
    conn.execute(f"CREATE TABLE e2e_vw_ctas AS SELECT * FROM {v}")
    objects("TABLE", "e2e_vw_ctas")
    assert conn.execute("SELECT count(*) FROM e2e_vw_ctas").fetchone()[0] == 3


@pytest.fixture
def schema(conn):
    """A schema the test makes, dropped with what it holds afterwards."""
    conn.execute("CREATE SCHEMA e2e_vw_s")
    yield "e2e_vw_s"
    conn.execute("DROP SCHEMA IF EXISTS e2e_vw_s CASCADE")


def test_views_in_a_schema(server, psql, conn, schema, objects):
    """A view in a schema: psql \\d s.v, SQLAlchemy's schema= inspection, DROP SCHEMA's
    dependents as PostgreSQL 15 lists them (each relation of the schema followed by the
    views elsewhere that read it), ALTER SCHEMA RENAME refused while views read it."""
    s = schema
    pv = objects("VIEW", "e2e_vw_over_s")
    conn.execute(f"CREATE TABLE {s}.t (k int)")
    conn.execute(f"CREATE VIEW {s}.v AS SELECT k FROM {s}.t")
    conn.execute(f"CREATE VIEW {pv} AS SELECT k FROM {s}.t")
    conn.execute(f"CREATE VIEW {s}.w AS SELECT k FROM {pv}")
    e = _fails(conn, f"DROP SCHEMA {s}", "2BP01")
    assert e.diag.message_detail == (f"table {s}.t depends on schema {s}\n"
                                     f"view {pv} depends on table {s}.t\n"
                                     f"view {s}.v depends on schema {s}\n"
                                     f"view {s}.w depends on schema {s}")
    e = _fails(conn, f"DROP TABLE {s}.t", "2BP01")
    assert e.diag.message_primary == f"cannot drop table {s}.t because other objects depend on it"
    assert e.diag.message_detail == (f"view {s}.v depends on table {s}.t\n"
                                     f"view {pv} depends on table {s}.t\n"
                                     f"view {s}.w depends on view {pv}")
    _fails(conn, f"ALTER SCHEMA {s} RENAME TO e2e_vw_s2", "0A000")
    if shutil.which("psql") is not None:
        out = psql("-c", f"\\d {s}.v").stdout
        assert f'View "{s}.v"' in out
    sa = pytest.importorskip("sqlalchemy")
    engine = sa.create_engine(
        f"postgresql+psycopg://raympp@{server.host}:{server.port}/raympp")
    try:
        inspector = sa.inspect(engine)
        assert inspector.get_view_names(schema=s) == ["v", "w"]
        assert inspector.get_table_names(schema=s) == ["t"]
        assert [c["name"] for c in inspector.get_columns("v", schema=s)] == ["k"]
    finally:
        engine.dispose()
    notices = []
    conn.add_notice_handler(lambda d: notices.append((d.message_primary, d.message_detail)))
    conn.execute(f"DROP SCHEMA {s} CASCADE")
    assert notices == [("drop cascades to 4 other objects",
                        f"drop cascades to table {s}.t\ndrop cascades to view {pv}\n"
                        f"drop cascades to view {s}.v\ndrop cascades to view {s}.w")]
    _fails(conn, f"SELECT * FROM {pv}", "42P01")
