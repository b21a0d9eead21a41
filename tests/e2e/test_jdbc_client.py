"""The PostgreSQL JDBC driver (Debian's libpostgresql-jdbc-java, /usr/share/java/postgresql.jar,
installed by deploy/test_clients.sh) against raympp: tests/e2e/jdbc/JdbcClient.java is
compiled with javac into a temporary directory and run once against the shared server; it
prints every step's rows (or `ERROR sqlstate message`), and each test checks one step.

The expected answers are PostgreSQL 15's (the same program run against it, with the table
created without DISTRIBUTED BY). DatabaseMetaData calls whose queries the binder cannot run
yet are marked xfail(strict=True, raises=Refused): they must be refused (0A000, or 42883
for a missing function), never answered wrongly, and the mark flips once the feature
lands. Skipped only where Java is absent; a missing driver jar fails."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess

import pytest

JAR = os.environ.get("RAYMPP_JDBC_JAR", "/usr/share/java/postgresql.jar")
SOURCE = os.path.join(os.path.dirname(__file__), "jdbc", "JdbcClient.java")
_serial = itertools.count(1)


class Refused(Exception):
    """The step was refused as not supported (0A000), its function is missing (42883), or
    the driver found a setting it reads missing from pg_settings."""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> str:
    """The directory of JdbcClient.class."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        pytest.skip("no Java (java, javac) on this machine")
    assert os.path.exists(JAR), f"{JAR} missing: run deploy/test_clients.sh (as root)"
    out_dir = tmp_path_factory.mktemp("jdbc")
    subprocess.run(["javac", "-d", str(out_dir), "-cp", JAR, SOURCE], check=True,
                   capture_output=True, text=True, timeout=300)
    return str(out_dir)


def run_client(server, compiled, zone: str = "UTC") -> tuple[subprocess.CompletedProcess, str]:
    """One JdbcClient run in a JVM whose default time zone is `zone` (pgjdbc sends it as
    the TimeZone startup parameter); its table is dropped afterwards."""
    table = f"e2e_jdbc_{os.getpid()}_{next(_serial)}"
    url = f"jdbc:postgresql://{server.host}:{server.port}/raympp?connectTimeout=30"
    try:
        p = subprocess.run(["java", f"-Duser.timezone={zone}", "-cp",
                            f"{JAR}{os.pathsep}{compiled}", "JdbcClient", url, "raympp", table,
                            "DISTRIBUTED BY (id)"],
                           capture_output=True, text=True, timeout=300, check=False)
    finally:
        with server.connect() as c:
            c.execute(f"DROP TABLE IF EXISTS {table}")
    return p, table


@pytest.fixture(scope="module")
def jdbc(server, compiled):
    """{step: output lines} of one JdbcClient run, and the table name it used."""
    p, table = run_client(server, compiled)
    assert p.returncode == 0, f"JdbcClient failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    lines = p.stdout.splitlines()
    assert lines and lines[-1] == "END", p.stdout + p.stderr
    steps: dict[str, list[str]] = {}
    for line in lines[:-1]:
        if line.startswith("STEP "):
            current = steps.setdefault(line[5:], [])
        else:
            current.append(line)
    return steps, table


def answer(jdbc, step: str) -> list[str]:
    """The step's output lines; Refused for 0A000/42883, AssertionError for other errors."""
    steps, _ = jdbc
    lines = steps[step]
    if lines and lines[-1].startswith("ERROR "):
        state = lines[-1].split()[1]
        if state in ("0A000", "42883") or "missing system catalog data" in lines[-1]:
            raise Refused(lines[-1])
        raise AssertionError(f"{step}: {lines[-1]}")
    return lines


def rows(*lines: str) -> list[str]:
    return ["\t".join(r.split("|")) for r in lines]


# --- connection, statements, prepared statements ------------------------------------------
def test_connect(jdbc):
    assert answer(jdbc, "connect") == rows("PostgreSQL|PostgreSQL JDBC Driver|raympp|public")


def test_connect_from_a_jvm_outside_utc(server, compiled):
    # pgjdbc sends the JVM's zone as the TimeZone startup parameter.
    p, _ = run_client(server, compiled, zone="Europe/Berlin")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[:2] == ["STEP connect",
                                         "PostgreSQL\tPostgreSQL JDBC Driver\traympp\tpublic"]


def test_statement_updates(jdbc):
    assert answer(jdbc, "create") == ["0"]
    assert answer(jdbc, "insert_statement") == ["3"]
    # setInt/setString/setBigDecimal/setDate: the date arrives as '2024-12-31 +00'.
    assert answer(jdbc, "insert_prepared") == ["1"]
    assert answer(jdbc, "insert_batch") == rows("2|1|1")


def test_generated_keys_returning(jdbc):
    # RETURN_GENERATED_KEYS: pgjdbc appends RETURNING * (INSERT ... RETURNING).
    assert answer(jdbc, "generated_keys") == rows("1", "8|eight")


def test_statement_query(jdbc):
    assert answer(jdbc, "statement_query") == rows(
        "1|one|1.50|2024-01-01", "2|two|2.25|2024-02-29", "3|null|null|null",
        "4|four|4.75|2024-12-31", "5|n5|5.01|2025-01-05", "6|n6|6.01|2025-01-06",
        "8|eight|null|null")


def test_result_set_metadata(jdbc):
    assert answer(jdbc, "statement_types") == rows(
        "id|int4|4", "name|text|12", "amount|numeric|2", "day|date|91",
        "1|one|1.50|2024-01-01")


def test_prepared_parameters(jdbc):
    assert answer(jdbc, "prepared_int") == ["two"]
    assert answer(jdbc, "prepared_text") == ["1", "5", "6"]
    assert answer(jdbc, "prepared_numeric") == rows("2|4.50", "4|9.50", "5|10.02", "6|12.02")
    assert answer(jdbc, "prepared_date") == rows("1|2024-01-01", "2|2024-02-29",
                                                 "4|2024-12-31")
    assert answer(jdbc, "prepared_null") == ["1"]


def test_prepared_more_types(jdbc):
    # setTimestamp sends '2024-01-02 03:04:05.6+00', setBoolean/setLong/setDouble/setShort
    # typed parameters.
    assert answer(jdbc, "prepared_more_types") == rows(
        "2024-01-02 03:04:05.6|2024-01-02T03:04:05Z|true|1099511627776|0.25|-7|éx")


def test_prepared_statement_reused_server_side(jdbc):
    # From the 5th execution on, pgjdbc uses a named server-side statement.
    assert answer(jdbc, "prepared_reuse") == rows("1|2|3|4|5|6|6")


def test_transaction_and_fetch_size(jdbc):
    # rollback() undoes id 100; commit() keeps id 7.
    assert answer(jdbc, "transaction") == rows("8|8")
    # setFetchSize(2) inside a transaction: the portal is read by row-limited Executes.
    assert answer(jdbc, "fetch_size") == ["1", "2", "3", "4", "5", "6", "7", "8"]


def test_error_then_usable(jdbc):
    steps, _ = jdbc
    # PostgreSQL adds "  Position: 8" (the ErrorResponse's P field), which raympp omits.
    assert len(steps["error"]) == 1
    assert steps["error"][0].startswith('ERROR 42703 ERROR: column "nosuchcolumn" does not exist')
    assert answer(jdbc, "after_error") == ["1"]


# --- DatabaseMetaData ---------------------------------------------------------------------
def test_get_catalogs_and_table_types(jdbc):
    assert answer(jdbc, "getCatalogs") == ["raympp"]
    assert answer(jdbc, "getTableTypes") == [
        "FOREIGN TABLE", "INDEX", "MATERIALIZED VIEW", "PARTITIONED INDEX",
        "PARTITIONED TABLE", "SEQUENCE", "SYSTEM INDEX", "SYSTEM TABLE", "SYSTEM TOAST INDEX",
        "SYSTEM TOAST TABLE", "SYSTEM VIEW", "TABLE", "TEMPORARY INDEX", "TEMPORARY SEQUENCE",
        "TEMPORARY TABLE", "TEMPORARY VIEW", "TYPE", "VIEW"]


def test_get_tables(jdbc):
    _, table = jdbc
    assert answer(jdbc, "getTables") == rows(f"public|{table}|TABLE|null")
    assert answer(jdbc, "getTables_all") == rows("true|1")


def test_get_schemas(jdbc):
    # pgjdbc: ... OR nspname = (pg_catalog.current_schemas(true))[1]
    assert answer(jdbc, "getSchemas") == rows("information_schema|null", "pg_catalog|null",
                                              "public|null")
    assert answer(jdbc, "getSchemas_pattern") == ["public"]


def test_get_columns(jdbc):
    # pgjdbc reads row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum.
    assert answer(jdbc, "getColumns") == rows(
        "id|4|int4|10|0|0|1|NO|NO", "name|12|text|2147483647|0|1|2|YES|NO",
        "amount|2|numeric|12|2|1|3|YES|NO", "day|91|date|13|0|1|4|YES|NO")


def test_get_primary_keys(jdbc):
    # pgjdbc reads (information_schema._pg_expandarray(i.indkey)).n, the record column
    # information_schema._pg_expandarray(i.indkey) AS KEYS and (result.KEYS).x.
    assert answer(jdbc, "getPrimaryKeys") == []  # raympp tables have no primary keys


def test_get_index_info(jdbc):
    # ... and tmp.I_INDOPTION[tmp.ORDINAL_POSITION - 1] & 1::smallint.
    assert answer(jdbc, "getIndexInfo") == []


def test_get_type_info(jdbc):
    # pgjdbc's TypeInfoCache reads generate_series(1, array_upper(current_schemas(false),
    # 1)) AS s(r) and (current_schemas(false))[s.r].
    assert answer(jdbc, "getTypeInfo") == rows(
        "bool=-7|date=91|float8=8|int4=4|int8=-5|numeric=2|text=12|timestamp=93")


def test_get_version_columns(jdbc):
    assert answer(jdbc, "getVersionColumns") == rows("null|ctid|1111|tid|null|null|null|2")


def test_get_imported_and_exported_keys(jdbc):
    # pgjdbc reads max_index_keys from pg_settings, then con.conkey[pos.n] over
    # generate_series(1, 32).
    assert answer(jdbc, "getImportedKeys") == []  # raympp has no foreign keys
    assert answer(jdbc, "getExportedKeys") == []


def test_get_functions_procedures_privileges(jdbc):
    assert answer(jdbc, "getFunctions") == rows("pg_catalog|pg_typeof")
    assert answer(jdbc, "getProcedures") == []  # PostgreSQL 15: prokind 'p' only
    assert answer(jdbc, "getTablePrivileges") == ["true"]


def test_get_udts(jdbc):
    # Each table's row type is a pg_type row of typtype 'c' (pg_class.reltype).
    _, table = jdbc
    assert f"null\tpublic\t{table}\tnull\t2002\tnull\tnull" in answer(jdbc, "getUDTs")


def test_drop(jdbc):
    assert answer(jdbc, "drop") == ["dropped"]
