"""The system catalog (pg_catalog, information_schema, gp_distribution_policy) against a real
cluster: what it says about the tables, the oid/regclass idioms clients use, the catalog
functions, name resolution, and psql's meta-commands."""

from __future__ import annotations

import shutil
import time

import psycopg
import pytest

from planner import system_tables


def _rows(conn, sql, params=None):
    return conn.execute(sql, params).fetchall()


def _fails(conn, sql, sqlstate):
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)
    assert info.value.sqlstate == sqlstate, info.value
    return str(info.value)


def test_columns_of_a_table(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (a int NOT NULL, b varchar(10), c numeric(15,2), "
                 f"d char(3), e text, f timestamp, g bigint NOT NULL, h numeric) "
                 f"DISTRIBUTED BY (a)")
    got = _rows(conn, f"""
        SELECT a.attname, a.attnum, a.atttypid, a.atttypmod, a.attnotnull,
               pg_catalog.format_type(a.atttypid, a.atttypmod), a.attisdropped,
               a.atthasdef, a.attidentity, a.attgenerated
        FROM pg_catalog.pg_attribute a
        JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname = '{t}' AND n.nspname = 'public' AND a.attnum > 0
        ORDER BY a.attnum""")
    assert got == [
        ("a", 1, 23, -1, True, "integer", False, False, "", ""),
        ("b", 2, 1043, 14, False, "character varying(10)", False, False, "", ""),
        ("c", 3, 1700, ((15 << 16) | 2) + 4, False, "numeric(15,2)", False, False, "", ""),
        ("d", 4, 1042, 7, False, "character(3)", False, False, "", ""),
        ("e", 5, 25, -1, False, "text", False, False, "", ""),
        ("f", 6, 1114, -1, False, "timestamp without time zone", False, False, "", ""),
        ("g", 7, 20, -1, True, "bigint", False, False, "", ""),
        ("h", 8, 1700, -1, False, "numeric", False, False, "", "")]
    oid, kind, natts, ns, owner, persistence, hasindex = conn.execute(
        f"SELECT oid, relkind, relnatts, relnamespace, pg_get_userbyid(relowner), "
        f"relpersistence, relhasindex FROM pg_class WHERE relname = '{t}'").fetchone()
    assert (kind, natts, ns, owner, persistence, hasindex) == ("r", 8, 2200, "raympp", "p",
                                                               False)
    assert oid >= 16384
    assert conn.execute(f"SELECT '{t}'::regclass::oid").fetchone() == (oid,)


def test_information_schema_columns(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (a int NOT NULL, b varchar(10), c numeric(15,2), "
                 f"d timestamp, e double precision, f char(2)) DISTRIBUTED RANDOMLY")
    got = _rows(conn, f"""
        SELECT column_name, ordinal_position, data_type, character_maximum_length,
               numeric_precision, numeric_scale, is_nullable
        FROM information_schema.columns WHERE table_name = '{t}' ORDER BY ordinal_position""")
    assert got == [("a", 1, "integer", None, 32, 0, "NO"),
                   ("b", 2, "character varying", 10, None, None, "YES"),
                   ("c", 3, "numeric", None, 15, 2, "YES"),
                   ("d", 4, "timestamp without time zone", None, None, None, "YES"),
                   ("e", 5, "double precision", None, 53, None, "YES"),
                   ("f", 6, "character", 2, None, None, "YES")]
    assert _rows(conn, f"SELECT table_schema, table_type FROM information_schema.tables "
                       f"WHERE table_name = '{t}'") == [("public", "BASE TABLE")]
    schemata = {r[0] for r in _rows(conn, "SELECT schema_name FROM information_schema.schemata")}
    assert schemata == {"public", "pg_catalog", "information_schema"}


def test_distribution_policy(conn, table):
    h, r, s = table(), table(), table()
    conn.execute(f"CREATE TABLE {h} (x int, y text, z int) DISTRIBUTED BY (z, x)")
    conn.execute(f"CREATE TABLE {r} (x int) DISTRIBUTED REPLICATED")
    conn.execute(f"CREATE TABLE {s} (x int) DISTRIBUTED RANDOMLY")
    got = dict((row[0], row[1:]) for row in _rows(conn, f"""
        SELECT localoid::regclass::text, policytype, numsegments, distkey::text
        FROM gp_distribution_policy WHERE localoid IN ('{h}'::regclass, '{r}'::regclass,
                                                       '{s}'::regclass)"""))
    assert got == {h: ("p", 2, "3 1"), r: ("r", 2, ""), s: ("p", 2, "")}


def test_regclass_and_oid_idioms(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (x int)")
    oid = conn.execute(f"SELECT '{t}'::regclass::oid").fetchone()[0]
    assert conn.execute(f"SELECT {oid}::regclass, '{t}'::regclass::oid::regclass::text, "
                        f"'public.{t}'::regclass = '{t}'::regclass, "
                        f"'pg_class'::regclass::oid, 'pg_catalog.pg_type'::regclass, "
                        f"99999999::regclass").fetchone() == (t, t, True, 1259, "pg_type",
                                                              "99999999")
    # oid columns compare with integers, regclass values and quoted numbers
    assert _rows(conn, f"SELECT relname FROM pg_class WHERE oid = {oid}") == [(t,)]
    assert _rows(conn, f"SELECT relname FROM pg_class WHERE oid = '{oid}'") == [(t,)]
    assert _rows(conn, f"SELECT relname FROM pg_class WHERE oid = '{t}'::regclass") == [(t,)]
    assert _rows(conn, f"SELECT relname FROM pg_class WHERE oid::int8 = {oid}") == [(t,)]
    assert conn.execute("SELECT 'int4'::regtype, 'character varying'::regtype::oid, "
                        "25::regtype, 'pg_catalog'::regnamespace::oid, "
                        "'raympp'::regrole::oid").fetchone() == (
        "integer", 1043, "text", 11, 10)
    _fails(conn, "SELECT 'no_such_table_at_all'::regclass", "42P01")
    _fails(conn, "SELECT 'no_such_type'::regtype", "42704")
    _fails(conn, "SELECT 1::oid + 1", "42883")
    assert conn.execute("SELECT to_regclass('no_such_table_at_all'), to_regclass('pg_class')"
                        ).fetchone() == (None, "pg_class")


def test_pg_typeof_names_as_postgresql_15(conn):
    # PostgreSQL 15's answers for the same expressions.
    got = conn.execute(
        "SELECT pg_typeof(1), pg_typeof(3000000000), pg_typeof(1.5), pg_typeof('a'), "
        "pg_typeof(1::smallint), pg_typeof(1.5::float8), pg_typeof(1.5::real), "
        "pg_typeof(true), pg_typeof(date '2020-01-01'), pg_typeof(timestamp '2020-01-01'), "
        "pg_typeof(now()), pg_typeof(interval '1 day'), pg_typeof('x'::varchar(3)), "
        "pg_typeof('x'::char(3)), pg_typeof(1::oid), pg_typeof('pg_class'::regclass), "
        "pg_typeof('int4'::regtype), pg_typeof(null), pg_typeof(relname), "
        "pg_typeof(relkind), pg_typeof(relnatts), pg_typeof(reltuples), pg_typeof(relacl), "
        "pg_typeof(count(*)) FROM pg_class GROUP BY relname, relkind, relnatts, reltuples, "
        "relacl LIMIT 1").fetchone()
    assert list(got) == [
        "integer", "bigint", "numeric", "unknown", "smallint", "double precision", "real",
        "boolean", "date", "timestamp without time zone", "timestamp with time zone",
        "interval", "character varying", "character", "oid", "regclass", "regtype",
        "unknown", "name", '"char"', "smallint", "real", "aclitem[]", "bigint"]


def test_every_system_relation_answers(conn):
    for (schema, name), rel in system_tables.RELATIONS.items():
        cur = conn.execute(f"SELECT * FROM {schema}.{name}")
        cur.fetchall()
        assert [d.name for d in cur.description] == [c.name for c in rel.columns], name
    n_system = len(system_tables.RELATIONS)
    system = conn.execute("SELECT count(*) FROM pg_class WHERE relnamespace IN (11, 13207)"
                          ).fetchone()[0]
    assert system == n_system
    # each relation's columns are in pg_attribute, in order
    assert conn.execute(
        "SELECT count(*) FROM pg_attribute WHERE attrelid = 'pg_class'::regclass").fetchone() \
        == (len(system_tables.RELATIONS[("pg_catalog", "pg_class")].columns),)


def test_catalog_queries_join_filter_aggregate_and_subquery(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (x int, y int)")
    got = _rows(conn, f"""
        SELECT c.relname, count(a.attnum), max(a.attname)
        FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE c.relname IN ('{t}', 'pg_am') GROUP BY c.relname ORDER BY 1""")
    assert got == sorted([("pg_am", 4, "oid"), (t, 2, "y")])
    got = _rows(conn, f"""
        SELECT relname FROM pg_class
        WHERE oid IN (SELECT attrelid FROM pg_attribute WHERE attname = 'y')
          AND relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'public')""")
    assert (t,) in got
    # a catalog query runs on the coordinator: no motion to or from segments
    plan = "\n".join(r[0] for r in _rows(conn, "EXPLAIN SELECT n.nspname, count(*) FROM "
                                              "pg_class c JOIN pg_namespace n ON "
                                              "n.oid = c.relnamespace GROUP BY 1"))
    assert "System Relation pg_catalog.pg_class" in plan and "Motion" not in plan
    # joined with a user table: that table's rows come to the coordinator
    conn.execute(f"INSERT INTO {t} VALUES (2, 1), (25, 2)")
    got = _rows(conn, f"SELECT t.x, p.typname FROM {t} t JOIN pg_type p ON p.oid = t.x "
                      f"ORDER BY 1")
    assert got == [(25, "text")]


def test_transaction_sees_its_own_tables(server, table):
    t = table()
    with server.connect(autocommit=False) as a, server.connect() as b:
        a.execute(f"CREATE TABLE {t} (x int)")
        q = f"SELECT count(*) FROM pg_class WHERE relname = '{t}'"
        assert a.execute(q).fetchone() == (1,)
        assert b.execute(q).fetchone() == (0,)
        a.commit()
        assert b.execute(q).fetchone() == (1,)


def test_name_resolution(conn, table):
    n_catalog = conn.execute("SELECT count(*) FROM pg_catalog.pg_class").fetchone()[0]
    conn.execute("CREATE TABLE pg_class (x int)")
    try:
        conn.execute("INSERT INTO public.pg_class VALUES (1)")
        # pg_catalog is searched first: the catalog's pg_class
        assert conn.execute("SELECT count(*) FROM pg_class").fetchone() == (n_catalog + 1,)
        assert conn.execute("SELECT count(*) FROM public.pg_class").fetchone() == (1,)
        conn.execute("SET search_path = public, pg_catalog")
        assert conn.execute("SELECT count(*) FROM pg_class").fetchone() == (1,)
        conn.execute("RESET search_path")
    finally:
        conn.execute("DROP TABLE public.pg_class")
    _fails(conn, "SELECT * FROM tables", "42P01")  # information_schema is not searched
    _fails(conn, "SELECT * FROM pg_catalog.no_such_relation", "42P01")
    conn.execute("SET search_path = information_schema")
    try:
        assert conn.execute("SELECT count(*) > 0 FROM tables").fetchone() == (True,)
    finally:
        conn.execute("RESET search_path")


def test_schema_qualified_column_references(conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (x int)")
    assert _rows(conn, "SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class "
                       "WHERE pg_catalog.pg_class.oid = 1259") == [("pg_class",)]
    assert _rows(conn, f"SELECT public.{t}.x FROM {t}") == []
    _fails(conn, f"SELECT pg_catalog.{t}.x FROM {t}", "42P01")
    _fails(conn, "SELECT pg_catalog.c.relname FROM pg_class c", "42P01")


def test_the_catalog_is_read_only(conn):
    for sql in ("INSERT INTO pg_class SELECT * FROM pg_class",
                "TRUNCATE pg_catalog.pg_attribute", "COPY pg_namespace FROM STDIN",
                "INSERT INTO information_schema.tables SELECT * FROM information_schema.tables"):
        assert "read-only" in _fails(conn, sql, "0A000")


def test_roles_and_database(conn):
    assert _rows(conn, "SELECT rolname, rolsuper, rolcanlogin, rolpassword, oid FROM pg_roles "
                       "WHERE oid = 10") == [("raympp", True, True, "********", 10)]
    assert _rows(conn, "SELECT usename, usesysid, passwd FROM pg_user WHERE usesysid = 10") \
        == [("raympp", 10, "********")]
    assert conn.execute("SELECT count(*) FROM pg_authid").fetchone()[0] >= 1
    assert _rows(conn, "SELECT datname, encoding, pg_encoding_to_char(encoding), datcollate "
                       "FROM pg_database") == [("raympp", 6, "UTF8", "C")]


def test_settings(conn):
    assert _rows(conn, "SELECT name, setting, unit, vartype, source, boot_val FROM pg_settings "
                       "WHERE name IN ('work_mem', 'search_path') ORDER BY 1") == [
        ("search_path", '"$user", public', None, "string", "default", '"$user", public'),
        ("work_mem", "65536", "kB", "integer", "default", "65536")]
    assert conn.execute("SELECT enumvals FROM pg_settings WHERE name = 'IntervalStyle'"
                        ).fetchone()[0] in ("{postgres,postgres_verbose,sql_standard,iso_8601}",
                                            ["postgres", "postgres_verbose", "sql_standard",
                                             "iso_8601"])
    assert conn.execute("SELECT set_config('work_mem', '8MB', false), "
                        "current_setting('work_mem')").fetchone() == ("8MB", "8MB")
    assert _rows(conn, "SELECT setting, source FROM pg_settings WHERE name = 'work_mem'") == [
        ("8192", "session")]
    conn.execute("RESET work_mem")
    assert conn.execute("SELECT current_setting('no.such', true)").fetchone() == (None,)
    _fails(conn, "SELECT current_setting('no_such_setting')", "42704")


def test_pg_stat_activity(server, conn):
    with server.connect() as other:
        other.execute("SELECT 42")
        pid = other.info.backend_pid
        rows = _rows(conn, "SELECT pid, datname, usename, state, query, client_addr, "
                           "backend_start <= now() FROM pg_stat_activity")
        by_pid = {r[0]: r for r in rows}
        assert by_pid[pid][1:5] == ("raympp", "raympp", "idle", "SELECT 42")
        assert by_pid[pid][6] is True
        mine = by_pid[conn.info.backend_pid]
        assert mine[3] == "active" and "pg_stat_activity" in mine[4]
    # The server ends a session when it reads the closed connection, a moment after the
    # client closed it (as a PostgreSQL backend exits): the row goes within that moment.
    deadline = time.monotonic() + 10
    while (pid,) in _rows(conn, "SELECT pid FROM pg_stat_activity"):
        assert time.monotonic() < deadline, "a closed session stays in pg_stat_activity"
        time.sleep(0.05)


def test_functions(conn):
    version = conn.execute("SELECT version()").fetchone()[0]
    assert version.startswith("PostgreSQL 15")
    assert conn.execute("SELECT pg_catalog.version(), VERSION()").fetchone() == (version,
                                                                                  version)
    assert conn.execute("SELECT pg_backend_pid()").fetchone() == (conn.info.backend_pid,)
    got = conn.execute(
        "SELECT pg_get_userbyid(10), pg_table_is_visible('pg_class'::regclass), "
        "pg_type_is_visible(23), obj_description(1259, 'pg_class'), col_description(1259, 1), "
        "has_table_privilege('pg_class', 'SELECT'), has_schema_privilege('public', 'USAGE'), "
        "has_database_privilege('raympp', 'CONNECT'), current_schemas(true)::text, "
        "current_schemas(false)::text, pg_get_expr(NULL, 1259), pg_get_indexdef(1259), "
        "pg_get_constraintdef(1259), format_type(1043, 14), format_type(1042, -1), "
        "format_type(0, -1), format_type(999999, -1), pg_postmaster_start_time() <= now(), "
        "pg_encoding_to_char(6)").fetchone()
    assert got == ("raympp", True, True, None, None, True, True, True, "{pg_catalog,public}",
                   "{public}", None, None, None, "character varying(10)", "bpchar", "-", "???",
                   True, "UTF8")
    _fails(conn, "SELECT has_table_privilege('no_such_table_at_all', 'SELECT')", "42P01")


def test_regular_expressions(conn):
    assert conn.execute("SELECT 'abc' ~ 'b', 'abc' ~* 'B', 'abc' !~ 'b', 'abc' !~* 'x', "
                        "'pg_toast' ~ '^pg_', 'Abc' OPERATOR(pg_catalog.~) '^A'").fetchone() \
        == (True, True, False, True, True, True)
    assert _rows(conn, "SELECT relname FROM pg_class WHERE relname OPERATOR(pg_catalog.~) "
                       "'^(pg_am)$' COLLATE pg_catalog.default") == [("pg_am",)]
    assert conn.execute("SELECT 'a' ~ '[[:alpha:]]', 'a b' ~ '\\mb\\M'").fetchone() == (True, True)
    assert "lookbehind" in _fails(conn, "SELECT 'ab' ~ '(?<=a+)b'", "0A000")
    _fails(conn, "SELECT 'a' ~ '('", "2201B")


_PSQL = pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")


@_PSQL
def test_psql_meta_commands_that_work(psql, conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (a int NOT NULL, b varchar(10))")
    out = psql("-c", "\\dt").stdout
    assert f" public | {t} " in out and "| table |" in out
    assert f" public | {t} " in psql("-c", "\\d").stdout
    assert " public " in psql("-c", "\\dn").stdout
    assert " raympp " in psql("-c", "\\l").stdout and "UTF8" in psql("-c", "\\l").stdout
    assert "List of functions" in psql("-c", "\\df").stdout
    # \du: ARRAY(SELECT ...) of each role's memberships, correlated by the role's oid.
    conn.execute("DROP ROLE IF EXISTS e2e_du_role")
    conn.execute("CREATE ROLE e2e_du_role LOGIN")
    try:
        out = psql("-c", "\\du").stdout
        assert " raympp " in out and "Superuser" in out and "| {}" in out
        assert " e2e_du_role " in out and "Member of" in out
    finally:
        conn.execute("DROP ROLE e2e_du_role")


@_PSQL
def test_psql_describe_table(psql, conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (a int NOT NULL, b varchar(10), c numeric(10,2), "
                 "d int[], e text)")
    # \d t reads its policy footer's ARRAY(SELECT ... WHERE oid = ANY (pol.polroles)),
    # correlated through an array column, and its publications with generate_series
    # over an outer array's bounds and string_agg; \d+ t also reads
    # unnest(tc.reloptions) of an outer column in a subquery's FROM.
    out = psql("-c", f"\\d {t}").stdout
    assert f'Table "public.{t}"' in out
    rows = [[c.strip() for c in line.split("|")] for line in out.splitlines() if "|" in line]
    assert rows[0] == ["Column", "Type", "Collation", "Nullable", "Default"]
    assert [r[:4] for r in rows[1:]] == [
        ["a", "integer", "", "not null"], ["b", "character varying(10)", "", ""],
        ["c", "numeric(10,2)", "", ""], ["d", "integer[]", "", ""], ["e", "text", "", ""]]
    out = psql("-c", f"\\d+ {t}").stdout
    rows = [[c.strip() for c in line.split("|")] for line in out.splitlines() if "|" in line]
    assert rows[0][:6] == ["Column", "Type", "Collation", "Nullable", "Default", "Storage"]
    assert [(r[0], r[5]) for r in rows[1:]] == [
        ("a", "plain"), ("b", "extended"), ("c", "main"), ("d", "extended"), ("e", "extended")]
    assert "Access method: heap" in out


@_PSQL
def test_psql_prints_records_as_record_out(psql):
    out = psql("-At", "-c", "SELECT ROW(1, 'a b', NULL, ''), ROW('x,y', '(', 'q\"t', "
               "'back\\slash'), information_schema._pg_expandarray(ARRAY['p', NULL])").stdout
    assert out.splitlines() == ['(1,"a b",,"")|("x,y","(","q""t","back\\\\slash")|(p,1)',
                                '(1,"a b",,"")|("x,y","(","q""t","back\\\\slash")|(,2)']