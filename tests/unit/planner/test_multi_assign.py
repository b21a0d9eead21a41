"""SET (columns) = <source> as one value per column (planner/multi_assign.py)."""

from __future__ import annotations

import pytest
import sqlglot

from planner import errors, multi_assign
from planner.sql_dialect import RaymppPostgres


def _pairs(sql: str) -> list[tuple[str, str]]:
    item = sqlglot.parse_one(sql, dialect=RaymppPostgres).expressions[0]
    return [(c.sql(dialect="postgres"), v.sql(dialect="postgres"))
            for c, v in multi_assign.pairs(item.this, item.expression)]


def test_row_constructors_pair_in_order():
    assert _pairs("UPDATE t SET (a, b) = (1, DEFAULT)") == [("a", "1"), ("b", "DEFAULT")]
    assert _pairs("UPDATE t SET (a, b) = ROW(x + 1, 'y')") == [("a", "x + 1"), ("b", "'y'")]
    assert _pairs("UPDATE t SET (a) = ROW(2)") == [("a", "2")]


def test_sub_select_becomes_one_scalar_subquery_per_column():
    got = _pairs("UPDATE t SET (a, b) = (SELECT x, max(y) FROM s WHERE s.k = t.k GROUP BY x)")
    assert got == [("a", "(SELECT x FROM s WHERE s.k = t.k GROUP BY x)"),
                   ("b", "(SELECT MAX(y) FROM s WHERE s.k = t.k GROUP BY x)")]


@pytest.mark.parametrize("sql", [
    "UPDATE t SET (a, b) = (SELECT DISTINCT x, y FROM s)",
    "UPDATE t SET (a, b) = (SELECT x, y AS o FROM s ORDER BY o LIMIT 1)",
    "UPDATE t SET (a, b) = (SELECT x, y FROM s GROUP BY 1, 2)",
    "UPDATE t SET (a, b) = (SELECT 1, 2 UNION SELECT 3, 4)",
])
def test_a_query_whose_rows_depend_on_its_select_list_is_read_by_position(sql):
    for _, value in _pairs(sql):
        assert value.startswith('(SELECT "\x00row"."\x00c')


@pytest.mark.parametrize("sql,error", [
    ("UPDATE t SET (a, b) = (SELECT 1)", errors.SyntaxError_),
    ("UPDATE t SET (a, b) = ROW(1, 2, 3)", errors.SyntaxError_),
    ("UPDATE t SET (a, b) = (SELECT 1 UNION SELECT 2)", errors.SyntaxError_),
    ("UPDATE t SET (a) = (1)", errors.FeatureNotSupported),
    ("UPDATE t SET (a, b) = (SELECT random(), 1 FROM s)", errors.FeatureNotSupported),
    ("UPDATE t SET (a, b) = (SELECT * FROM s)", errors.FeatureNotSupported),
])
def test_refusals(sql, error):
    with pytest.raises(error):
        _pairs(sql)


def test_a_bare_select_list_is_its_one_row():
    assert _pairs("UPDATE t SET (a, b) = (SELECT s.x + 1, 'y' AS z)") == [
        ("a", "s.x + 1"), ("b", "'y'")]
    assert _pairs("UPDATE t SET (a, b) = (SELECT random(), 1)")[0][1] == "RANDOM()"
    got = _pairs("UPDATE t SET (a, b) = (SELECT generate_series(1, 2), 1)")
    assert got[0][1].startswith("(SELECT")  # a set-returning function: maybe many rows


def test_default_in_a_sub_select_is_42601():
    with pytest.raises(errors.SyntaxError_, match="DEFAULT is not allowed in this context"):
        _pairs("UPDATE t SET (a, b) = (SELECT DEFAULT, 1)")
