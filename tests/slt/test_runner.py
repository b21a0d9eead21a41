"""The SLT runner itself, without raympp: parsing, value comparison, and every .slt file's
oracle part run with DuckDB standing in for raympp (a fast check that the files are sound).
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
    assert slt.created_tables() == ["t"]


@pytest.mark.parametrize("text", [
    "query X\nSELECT 1\n----\n1\n",          # unknown type letter
    "query I\nSELECT 1\n",                    # literal query without ----
    "query I oracle\nSELECT 1\n----\n1\n",    # oracle query with a block
    "statement maybe\nSELECT 1\n",
    "onlyif postgres\nstatement ok\nSELECT 1\n",
])
def test_parse_errors(text):
    with pytest.raises(runner.ParseError):
        runner.parse(text)


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
def test_slt_file_is_sound(path, tmp_path):
    """Every statement and oracle query of the file runs on DuckDB (literal results and
    expected errors are raympp's business and are left out)."""
    slt = runner.parse_file(path)
    kept = tuple(r for r in slt.records
                 if "duckdb" not in r.skip and not getattr(r, "expect_error", False)
                 and (isinstance(r, runner.Statement) or r.oracle))
    slt = dataclasses.replace(slt, records=kept)
    outcome = runner.Runner(DuckAsRaympp(), runner.Oracle(), str(tmp_path)).run_file(slt)
    if outcome.failures:
        pytest.fail(outcome.report(), pytrace=False)
