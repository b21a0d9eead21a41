"""Array kernels (segment/kernels/expr_pgarray.py) over list columns with NULL rows, NULL
elements, empty arrays and sliced batches, and the typing of array expressions
(planner/array_rules.py, planner/bind_array.py) from SQL text."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

import expr_helpers
from planner import errors
from planner import types as T
from planner.array_text import split_array_text
from planner.values import format_array, parse_array
from planner.scope import Scope, ScopeColumn
from segment.kernels import expr_pgarray as xpa

INTS = T.array_of(T.INT4)
TEXTS = T.array_of(T.TEXT)

# a: int[], b: text[], i: int4, s: text
BATCH = pa.record_batch({
    "a": pa.array([[1, 2, 3], [], None, [4, None, 6], [7]], pa.list_(pa.int32())),
    "b": pa.array([["x", "y z"], ["q"], None, [None, "a,b"], []], pa.list_(pa.string())),
    "i": pa.array([2, 1, 1, None, 7], pa.int32()),
    "s": pa.array(["a,b", "", None, "c", "d,,e"], pa.string()),
})
SCOPE = Scope([ScopeColumn("t", "a", INTS), ScopeColumn("t", "b", TEXTS),
               ScopeColumn("t", "i", T.INT4), ScopeColumn("t", "s", T.TEXT)])


def bind(sql: str):
    return expr_helpers.bound(sql, SCOPE)


def texts(sql: str, batch: pa.RecordBatch = BATCH) -> list:
    return expr_helpers.texts(sql, SCOPE, batch)


@pytest.mark.parametrize(("sql", "expected"), [
    ("a", ["{1,2,3}", "{}", None, "{4,NULL,6}", "{7}"]),
    ("b", ['{x,"y z"}', "{q}", None, '{NULL,"a,b"}', "{}"]),
    ("a[1]", ["1", None, None, "4", "7"]),
    ("a[i]", ["2", None, None, None, None]),
    ("a[0]", [None] * 5),
    ("a[2:3]", ["{2,3}", "{}", None, "{NULL,6}", "{}"]),
    ("a[:1]", ["{1}", "{}", None, "{4}", "{7}"]),
    ("a[i:]", ["{2,3}", "{}", None, None, "{}"]),
    ("cardinality(a)", ["3", "0", None, "3", "1"]),
    ("array_length(a, 1)", ["3", None, None, "3", "1"]),
    ("array_upper(a, 1)", ["3", None, None, "3", "1"]),
    ("array_lower(a, 1)", ["1", None, None, "1", "1"]),
    ("array_dims(a)", ["[1:3]", None, None, "[1:3]", "[1:1]"]),
    ("a || i", ["{1,2,3,2}", "{1}", "{1}", "{4,NULL,6,NULL}", "{7,7}"]),
    ("i || a", ["{2,1,2,3}", "{1}", "{1}", "{NULL,4,NULL,6}", "{7,7}"]),
    ("a || a", ["{1,2,3,1,2,3}", "{}", None, "{4,NULL,6,4,NULL,6}", "{7,7}"]),
    ("array_cat(a, ARRAY[0])", ["{1,2,3,0}", "{0}", "{0}", "{4,NULL,6,0}", "{7,0}"]),
    ("ARRAY[i, i + 1]", ["{2,3}", "{1,2}", "{1,2}", "{NULL,NULL}", "{7,8}"]),
    ("array_to_string(b, '|')", ["x|y z", "q", None, "a,b", ""]),
    ("array_to_string(b, '|', '-')", ["x|y z", "q", None, "-|a,b", ""]),
    ("string_to_array(s, ',')", ["{a,b}", "{}", None, "{c}", '{d,"",e}']),
    ("string_to_array(s, ',', '')", ["{a,b}", "{}", None, "{c}", "{d,NULL,e}"]),
    ("array_position(a, 6)", [None, None, None, "3", None]),
    ("array_position(a, NULL)", [None, None, None, "2", None]),
    ("i = ANY(a)", ["true", "false", None, None, "true"]),
    ("i <> ALL(a)", ["false", "true", None, None, "false"]),
    ("3 > ANY(a)", ["true", "false", None, None, "false"]),
    ("a @> ARRAY[1, 3]", ["true", "false", None, "false", "false"]),
    ("a <@ ARRAY[1, 2, 3, 7]", ["true", "true", None, "false", "true"]),
    ("a && '{3,7}'", ["true", "false", None, "false", "true"]),
    ("a = '{4,NULL,6}'", ["false", "false", None, "true", "false"]),
    ("a <> ARRAY[7]", ["true", "true", None, "true", "false"]),
    ("'y z' = ANY(b)", ["true", "false", None, None, "false"]),
    ("a::text", ["{1,2,3}", "{}", None, "{4,NULL,6}", "{7}"]),
    ("a::bigint[]", ["{1,2,3}", "{}", None, "{4,NULL,6}", "{7}"]),
    ("a IS NULL", ["false", "false", "true", "false", "false"]),
])
def test_kernels(sql, expected):
    assert texts(sql) == expected


def test_sliced_batch():
    sliced = BATCH.slice(2, 3)
    assert texts("a[2]", sliced) == [None, None, None]
    assert texts("a || 0", sliced) == ["{0}", "{4,NULL,6,0}", "{7,0}"]
    assert texts("cardinality(b)", sliced) == [None, "2", "0"]


def test_text_input_vectorized_and_by_value():
    arr = pa.array(["{1, 2 ,NULL}", "{}", None, " {3} "])
    assert xpa.from_text(arr, INTS).to_pylist() == [[1, 2, None], [], None, [3]]
    quoted = pa.array(['{"a,b",c}', '{"x\\"y", NULL, "NULL"}', "{ a b }"])
    assert xpa.from_text(quoted, TEXTS).to_pylist() == [["a,b", "c"], ['x"y', None, "NULL"],
                                                        ["a b"]]
    vec = T.SqlType(T.Kind.INT2VECTOR)
    assert xpa.from_text(pa.array(["1 2 3", "", None]), vec).to_pylist() == [[1, 2, 3], [], None]


@pytest.mark.parametrize(("text", "detail"), [
    ("{1,,2}", 'Unexpected "," character.'), ("1,2", 'Array value must start with "{"'),
    ("{1,2", "Unexpected end of input."), ("{1}x", "Junk after closing right brace."),
])
def test_malformed_literals(text, detail):
    with pytest.raises(errors.QueryError) as info:
        xpa.from_text(pa.array([text]), INTS)
    assert info.value.sqlstate == "22P02"
    assert info.value.message == f'malformed array literal: "{text}"'
    assert detail in info.value.detail


def test_element_errors_and_refusals():
    with pytest.raises(errors.QueryError) as info:
        parse_array("{1,a}", INTS)
    assert info.value.sqlstate == "22P02"
    with pytest.raises(errors.QueryError) as info:
        split_array_text("{{1},{2}}")
    assert info.value.sqlstate == "0A000"


def test_output_quoting():
    value = ("a b", "", "NULL", 'x"y', "back\\slash", None, "{}", "plain")
    assert format_array(value, TEXTS) == \
        '{"a b","","NULL","x\\"y","back\\\\slash",NULL,"{}",plain}'
    arr = xpa.to_arrow([value, None, ()], TEXTS)
    assert xpa.to_text(arr, TEXTS).to_pylist() == [format_array(value, TEXTS), None, "{}"]
    assert parse_array(format_array(value, TEXTS), TEXTS) == value


def test_numeric_and_date_elements():
    t = T.array_of(T.numeric(5, 2))
    arr = xpa.to_arrow([(Decimal("1.5"), None), ()], t)
    assert arr.type == pa.list_(pa.int64())
    assert xpa.to_text(arr, t).to_pylist() == ["{1.50,NULL}", "{}"]
    assert texts("ARRAY[date '2024-02-29', NULL]")[0] == "{2024-02-29,NULL}"
    assert texts("ARRAY[timestamp '2024-01-01 10:00']")[0] == '{"2024-01-01 10:00:00"}'
    assert texts("ARRAY[true, false]")[0] == "{t,f}"


@pytest.mark.parametrize(("sql", "type_"), [
    ("ARRAY[1, 2]", "integer[]"), ("ARRAY[1, 2.5]", "numeric[]"),
    ("ARRAY['a', 'b']", "text[]"), ("'{1}'::int8[]", "bigint[]"), ("'{x}'::_text", "text[]"),
    ("a[1]", "integer"), ("a[1:2]", "integer[]"), ("b || s", "text[]"),
    ("'{a}'::varchar(3)[]", "character varying(3)[]"), ("a = b::int[]", "boolean"),
    ("array_remove(a, 1)", "integer[]"), ("array_replace(b, 'x', NULL)", "text[]"),
    ("array_positions(a, 1::int8)", "integer[]"), ("array_remove(a, 1::int8)", "bigint[]"),
])
def test_types(sql, type_):
    assert bind(sql).type.sql() == type_


@pytest.mark.parametrize(("sql", "sqlstate"), [
    ("ARRAY[]", "42P18"), ("ARRAY[1, true]", "42804"), ("a < 1", "42883"),
    ("ARRAY[[1]]", "0A000"), ("a[1][1]", "0A000"), ("a @> b", "42883"),
    ("1 = ANY(i)", "42804"), ("i[1]", "42804"), ("unnest(a)", "0A000"),
    ("array_agg(i)", "0A000"), ("ARRAY(SELECT 1)", "0A000"), ("array_fill(a, 1)", "0A000"),
    ("array_remove(a, 1.5)", "0A000"), ("array_remove(a, true)", "42883"),
    ("b || 'x'", "22P02"),
])
def test_errors(sql, sqlstate):
    with pytest.raises(errors.QueryError) as info:
        bind(sql)
    assert info.value.sqlstate == sqlstate, info.value.message


def test_type_names_and_oids():
    assert T.from_name("int[]") == INTS and T.from_name("_int4") == INTS
    assert T.from_name("integer[]").oid == 1007 and TEXTS.oid == 1009
    assert T.from_oid(1007) == INTS and T.from_oid(1231).elem.kind is T.Kind.NUMERIC
    assert T.array_of(T.varchar(3)).typmod == 7
    assert T.SqlType(T.Kind.INT2VECTOR).arrow_type() == pa.list_(pa.int16())
    assert T.SqlType(T.Kind.INT2VECTOR).lower_bound == 0
