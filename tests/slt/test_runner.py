"""The SLT runner itself, without raympp: parsing, value comparison, and every .slt file's
oracle part run with its oracle standing in for raympp (a fast check that the files are
sound; files mirrored into PostgreSQL start the session's private PostgreSQL for that).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from decimal import Decimal
from pathlib import Path

import pytest

import runner

SLT_DIR = Path(__file__).parent


class DuckAsRaympp:
    """DuckDB behind the runner's raympp interface, values turned into PostgreSQL text."""

    def __init__(self):
        self.oracle = runner.Oracle()

    def run(self, sql):
        res = self.oracle.run(sql)
        if res is None:
            return None
        rows = [tuple(None if v is None else runner.pg_text(v) if not isinstance(v, float)
                      else _float_text(v) for v in r) for r in res.rows]
        return runner.Result(res.columns, rows)


def _float_text(v: float) -> str:
    """PostgreSQL's float8 output for the values these tests use (shortest round trip)."""
    if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def test_parse_records():
    slt = runner.parse(
        "# segments: 2, 3\n"
        "# a comment\n"
        "statement ok\n"
        "CREATE TABLE t (k int8)\n"
        "DISTRIBUTED BY (k)\n"
        "\n"
        "statement error 42P01 relation .* does not exist\n"
        "SELECT * FROM nope\n"
        "\n"
        "skipif duckdb\n"
        "query IT rowsort\n"
        "SELECT 1, 'a'\n"
        "----\n"
        "1 a\n"
        "\n"
        "query R oracle\n"
        "SELECT 1.5\n")
    assert slt.segments == frozenset({2, 3})
    create, err, lit, orc = slt.records
    assert create.sql == "CREATE TABLE t (k int8)\nDISTRIBUTED BY (k)" and create.line == 3
    assert (err.expect_error, err.sqlstate, err.pattern) == (True, "42P01",
                                                             "relation .* does not exist")
    assert lit.types == "IT" and lit.rowsort and lit.expected == ("1 a",)
    assert lit.skip == frozenset({"duckdb"})
    assert orc.oracle and orc.expected is None and orc.skip == frozenset()
    assert slt.created_tables() == [("TABLE", "t")]


@pytest.mark.parametrize("text", [
    "query X\nSELECT 1\n----\n1\n",          # unknown type letter
    "query I\nSELECT 1\n",                    # literal query without ----
    "query I oracle\nSELECT 1\n----\n1\n",    # oracle query with a block
    "statement maybe\nSELECT 1\n",
    "onlyif postgres\nstatement ok\nSELECT 1\n",              # not mirrored into PostgreSQL
    "skipif postgres\nstatement ok\nSELECT 1\n",
    "query I oracle postgres\nSELECT 1\n",                    # likewise
    "# oracle: postgres\nquery I oracle duckdb\nSELECT 1\n",  # not mirrored into DuckDB
    "# oracle: postgres\nonlyif duckdb\nstatement ok\nSELECT 1\n",
    "# oracle: postgres\nquery I postgres\nSELECT 1\n",      # an oracle name needs 'oracle'
    "# oracle: postgres\nquery I oracle mysql\nSELECT 1\n",
    "# oracle: mysql\nstatement ok\nSELECT 1\n",
    "# oracle:\nstatement ok\nSELECT 1\n",
    "onlyif pg\nstatement ok\nSELECT 1\n",
])
def test_parse_errors(text):
    with pytest.raises(runner.ParseError):
        runner.parse(text)


def test_parse_postgres_oracle():
    slt = runner.parse(
        "# oracle: postgres\n"
        "statement ok\n"
        "CREATE TABLE t (k int8) DISTRIBUTED RANDOMLY\n"
        "\n"
        "onlyif postgres\n"
        "statement ok\n"
        "SET enable_hashjoin = off\n"
        "\n"
        "skipif postgres\n"
        "statement ok\n"
        "ANALYZE t\n"
        "\n"
        "statement error 42P01\n"
        "SELECT * FROM nope\n"
        "\n"
        "query IT oracle rowsort\n"
        "SELECT 1, 'a'\n"
        "\n"
        "query I oracle postgres\n"
        "SELECT 2\n"
        "\n"
        "skipif postgres\n"
        "query I\n"
        "SELECT 3\n"
        "----\n"
        "3\n")
    assert slt.oracles == frozenset({"postgres"})
    create, only, skip, err, orc, named, lit = slt.records
    assert create.skip == frozenset() and only.skip == frozenset({"raympp", "duckdb"})
    assert skip.skip == frozenset({"postgres"})
    assert err.expect_error and err.sqlstate == "42P01"
    assert orc.oracle and orc.rowsort and orc.oracles == frozenset({"postgres"})
    assert named.oracle and named.oracles == frozenset({"postgres"})
    assert not lit.oracle and lit.skip == frozenset({"postgres"}) and lit.expected == ("3",)
    assert runner.Oracle.translate(create.sql) == "CREATE TABLE t (k int8)"

    both = runner.parse("# oracle: duckdb, postgres\n"
                        "query I oracle\nSELECT 1\n\n"
                        "query I oracle duckdb\nSELECT 1\n\n"
                        "query I oracle postgres duckdb rowsort\nSELECT 1\n")
    assert both.oracles == frozenset({"duckdb", "postgres"})
    assert [q.oracles for q in both.records] == [
        frozenset({"duckdb", "postgres"}), frozenset({"duckdb"}),
        frozenset({"duckdb", "postgres"})]
    default = runner.parse("query I oracle\nSELECT 1\n")
    assert default.oracles == frozenset({"duckdb"})
    assert default.records[0].oracles == frozenset({"duckdb"})


def test_postgres_oracle_runs_statement_errors(tmp_path):
    """In a file mirrored into PostgreSQL, `statement error` must fail there too (DuckDB
    stands in for PostgreSQL here; the real server is exercised by pg_oracle_smoke.slt)."""
    path = tmp_path / "pg.slt"
    path.write_text(
        "# oracle: postgres\n"
        "statement ok\nCREATE TABLE t (k int8) DISTRIBUTED BY (k)\n\n"
        "statement ok\nINSERT INTO t VALUES (1), (2)\n\n"
        "onlyif postgres\nstatement ok\nINSERT INTO t VALUES (3)\n\n"
        "query I oracle rowsort\nSELECT k FROM t\n\n"
        "statement error\nSELECT * FROM nope\n\n"
        "skipif raympp\nstatement error\nSELECT 1\n\n"
        "skipif postgres\nstatement ok\nINSERT INTO t VALUES (4)\n\n"
        "query I oracle postgres\nSELECT count(*) FROM t\n")
    outcome = runner.Runner(DuckAsRaympp(), None, str(tmp_path),
                            postgres=runner.Oracle()).run_file(runner.parse_file(path))
    assert outcome.records_run == 8
    assert [f.line for f in outcome.failures] == [12, 19]
    assert "raympp returned 2 rows, PostgreSQL 3" in outcome.failures[0].message
    assert "oracle (PostgreSQL) accepted the statement" in outcome.failures[1].message


def test_value_conversions():
    assert runner.from_text("N", "12.50") == runner.from_oracle("N", Decimal("12.5"))
    assert runner.same("R", runner.from_text("R", "0.30000000000000004"), 0.3)
    assert not runner.same("R", 1.0, 1.0 + 1e-6)
    assert runner.same("R", float("nan"), float("nan"))
    assert runner.from_text("B", "t") is True
    assert runner.from_text("D", "2024-02-29") == runner.from_oracle("D", dt.date(2024, 2, 29))
    assert (runner.from_text("P", "2024-03-01 00:00:00+00")
            == runner.from_oracle("P", dt.datetime(2024, 3, 1)))
    with pytest.raises(ValueError):
        runner.from_text("D", "2024-03-01 10:00:00")
    with pytest.raises(ValueError):
        runner.from_oracle("N", 1.5)
    assert runner.show(None) == "NULL" and runner.show("") == "(empty)"
    assert runner.normalize_line("a \t b  ", 2) == "a b"
    assert runner.normalize_line("  Scan: t  ", 1) == "  Scan: t"
    # PostgreSQL values through psycopg
    utc = dt.timezone.utc
    assert (runner.from_text("P", "2024-03-01 10:00:00+00")
            == runner.from_oracle("P", dt.datetime(2024, 3, 1, 15, 30,
                                                   tzinfo=dt.timezone(dt.timedelta(hours=5,
                                                                                   minutes=30)))))
    assert runner.pg_text(dt.datetime(2024, 3, 1, 10, 0, 0, 500000, tzinfo=utc)) == (
        "2024-03-01 10:00:00.5+00")
    assert runner.pg_text(dt.datetime(2024, 3, 1, 10)) == "2024-03-01 10:00:00"
    assert runner.pg_text(dt.time(10, 0, 0, 250000)) == "10:00:00.25"
    assert runner.pg_text(Decimal("1.50")) == "1.50" and runner.pg_text(True) == "t"
    assert [runner.float_text(v) for v in (1.0, -1.5, 0.1, 1e15, 123456789012345.0, 1e-4,
                                           1.5e-5, 0.0, -0.0, math.inf, math.nan)] == [
        "1", "-1.5", "0.1", "1e+15", "123456789012345", "0.0001", "1.5e-05", "0", "-0",
        "Infinity", "NaN"]


def test_runner_reports_mismatches(tmp_path):
    path = tmp_path / "x.slt"
    path.write_text(
        "statement ok\nCREATE TABLE t (k int8, x float8) DISTRIBUTED BY (k)\n\n"
        "statement ok\nINSERT INTO t SELECT i, i * 0.5 FROM generate_series(1, 10) AS g(i)\n\n"
        "query IR oracle rowsort\nSELECT k, x FROM t\n\n"
        "query I\nSELECT count(*) FROM t\n----\n11\n\n"
        "statement error 22012\nSELECT 1\n")
    outcome = runner.Runner(DuckAsRaympp(), runner.Oracle(), str(tmp_path)).run_file(
        runner.parse_file(path))
    assert outcome.records_run == 5
    assert [f.line for f in outcome.failures] == [10, 15]
    assert "expected '11', got '10'" in outcome.failures[0].message


@pytest.mark.parametrize("path", sorted(SLT_DIR.glob("*.slt")), ids=lambda p: p.stem)
def test_slt_file_is_sound(path, tmp_path, request):
    """Every statement and oracle query of the file runs on each of its oracles (literal
    results and expected errors are raympp's business and are left out). DuckDB stands in
    for raympp against DuckDB; a PostgreSQL database (read as text, like raympp) stands in
    for raympp against another PostgreSQL database."""
    full = runner.parse_file(path)
    for name in sorted(full.oracles):
        kept = tuple(r for r in full.records
                     if name not in r.skip and not getattr(r, "expect_error", False)
                     and (isinstance(r, runner.Statement) or name in r.oracles))
        if name == "duckdb":
            slt = dataclasses.replace(full, records=kept)
            outcome = runner.Runner(DuckAsRaympp(), runner.Oracle(),
                                    str(tmp_path)).run_file(slt)
        else:
            # The stand-in runs what PostgreSQL runs; compared with PostgreSQL only.
            kept = tuple(dataclasses.replace(r, skip=frozenset()) for r in kept)
            slt = dataclasses.replace(full, records=kept)
            stand_in, oracle = PgAsRaympp(request.getfixturevalue("pg_oracle")), None
            try:
                oracle = runner.PgOracle(stand_in.server)
                outcome = runner.Runner(stand_in, None, str(tmp_path),
                                        postgres=oracle).run_file(slt)
            finally:
                stand_in.close()
                if oracle is not None:
                    oracle.close()
        if outcome.failures:
            pytest.fail(f"[{name}] " + outcome.report(), pytrace=False)


class PgAsRaympp(runner.Raympp):
    """A database of its own on the PostgreSQL oracle, read as text like raympp."""

    def __init__(self, server):
        self.server = server
        self.db = runner.PgOracle(server)   # creates (and at close drops) the database
        super().__init__(server.connect(self.db.dbname))

    def run(self, sql):
        return super().run(runner.PgOracle.translate(sql))

    def close(self):
        try:
            super().close()
        finally:
            self.db.close()
