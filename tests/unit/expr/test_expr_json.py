"""json and jsonb: input and canonical output (planner/json_values.py), the operators and
functions over one value (planner/json_ops.py), their typing from SQL text
(planner/bind_json.py, planner/json_rules.py) and the batch kernels
(segment/kernels/expr_json.py) over NULLs, dictionary-encoded and sliced columns.
Expected values are PostgreSQL 15's output."""

from __future__ import annotations

from unittest import mock

import pyarrow as pa
import pytest

from planner import errors, json_ops, json_values, values
from planner import types as T
from planner.scope import Scope, ScopeColumn
from segment.kernels import expr_json as xj

import expr_helpers
from expr_helpers import raises_sqlstate


@pytest.mark.parametrize(("text", "canonical"), [
    ('{"b": 1, "a": 2, "a": 3}', '{"a": 3, "b": 1}'),
    ('{"bb":1,"a":2,"c":{"x":1.50e1}}', '{"a": 2, "c": {"x": 15.0}, "bb": 1}'),
    ("1e5", "100000"), ("-0.0", "0.0"), ("[1E-3, 0.10]", "[0.001, 0.10]"),
    ('"\\u00e9\\n\\t\\u0001"', '"é\\n\\t\\u0001"'), ('"\\ud83d\\ude00"', '"😀"'),
    (" [ ] ", "[]"), ("{}", "{}"), ("null", "null"),
])
def test_jsonb_canonical_text(text, canonical):
    assert json_values.canonical(text) == canonical


@pytest.mark.parametrize(("text", "sqlstate"), [
    ("01", "22P02"), ("{bad}", "22P02"), ("[1,]", "22P02"), ("", "22P02"), ("NaN", "22P02"),
    ('"\\u0000"', "22P05"), ('"\\ud800"', "22P02"),
])
def test_jsonb_bad_input(text, sqlstate):
    raises_sqlstate(sqlstate, json_values.canonical, text)


def test_json_keeps_its_text_and_validates_it():
    assert json_values.check_json('{"b" : 2,  "a":1, "a": 2}') == '{"b" : 2,  "a":1, "a": 2}'
    assert json_values.check_json('"\\u0000"') == '"\\u0000"'  # json does not decode escapes
    raises_sqlstate("22P02", json_values.check_json, "[1")


def test_jsonb_order_is_postgresql_btree_order():
    ordered = ['[]', 'null', '"a"', '"b"', '-1.5', '-1', '0', '1.5', 'false', 'true', '[1]',
               '[{}]', '[1, 2]', '{}', '{"a": 1, "b": 1}', '{"b": 1, "d": 1}', '{"c": 1, "aa": 1}']
    keys = [json_values.sort_key(json_values.canonical(v)) for v in ordered]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert json_values.sort_key("1.5") == json_values.sort_key("1.50")


@pytest.mark.parametrize(("text", "kind", "expected"), [
    ("1.5", T.INT4, 2), ("2.5", T.INT2, 3), ("1.5", T.FLOAT8, 1.5), ("true", T.BOOL, True),
])
def test_jsonb_scalar_casts(text, kind, expected):
    assert values.cast_value(text, T.JSONB, kind) == expected


@pytest.mark.parametrize(("text", "dst", "message"), [
    ("{}", T.INT4, "cannot cast jsonb object to type integer"),
    ('"1"', T.numeric(None, 0),
     "cannot cast jsonb string to type numeric"),
    ("1", T.BOOL, "cannot cast jsonb numeric to type boolean"),
    ("null", T.INT4, "cannot cast jsonb null to type integer"),
])
def test_jsonb_bad_scalar_casts(text, dst, message):
    e = raises_sqlstate("22023", values.cast_value, text, T.JSONB, dst)
    assert e.message == message


def test_json_extraction_returns_the_sub_text():
    doc = '{"a": [1,  2], "a": {"x" : "y"}, "b": null}'
    assert json_ops.get(doc, "a", False, False) == '{"x" : "y"}'  # the last key wins
    assert json_ops.get(doc, "b", False, True) is None
    assert json_ops.get(' [1, "x\\ny"] ', -1, False, True) == "x\ny"
    assert json_ops.get_path(doc, ("a", "x"), False, True) == "y"
    assert json_ops.get('"s"', 0, False, False) is None
    assert json_ops.get('"s"', 0, True, False) == '"s"'  # jsonb: a pseudo array


def test_jsonb_operators():
    assert json_ops.contains('{"a": 1, "b": {"c": [1, 2]}}', '{"b": {"c": [2]}}')
    assert not json_ops.contains('{"a": true}', '{"a": 1}')
    assert json_ops.contains("[1, 2]", "1") and not json_ops.contains("1", "[1]")
    assert json_ops.exists('["a"]', "a") and json_ops.exists('"a"', "a")
    assert json_ops.concat('{"a": 1}', "[2]") == '[{"a": 1}, 2]'
    assert json_ops.concat('{"b": 1}', '{"a": 2, "b": 3}') == '{"a": 2, "b": 3}'
    assert json_ops.delete('["a", "b", "a"]', "a") == '["b"]'
    assert json_ops.delete("[1, 2, 3]", -1) == "[1, 2]"
    raises_sqlstate("22023", json_ops.delete, "1", "a")
    raises_sqlstate("22023", json_ops.delete, "{}", 0)
    assert json_ops.set_path("[1, 2]", ("-5",), "3", True) == "[3, 1, 2]"
    assert json_ops.set_path('{"a": 1}', ("b", "c"), "2", True) == '{"a": 1}'
    raises_sqlstate("22P02", json_ops.set_path, "[1]", ("x",), "2", True)
    assert json_ops.strip_nulls('{"a": null, "b": [null, {"c": null}]}') == '{"b": [null, {}]}'
    assert json_ops.pretty('{"c": {}, "a": [1]}') == \
        '{\n    "a": [\n        1\n    ],\n    "c": {\n    }\n}'


def test_build_object_spacing_and_errors():
    assert json_ops.build_object(["a", "1", "b", '"x"'], False, "json_build_object") == \
        '{"a" : 1, "b" : "x"}'
    assert json_ops.build_object(["b", "1", "a", "2", "a", "3"], True, "jsonb_build_object") \
        == '{"a": 3, "b": 1}'
    raises_sqlstate("22023", json_ops.build_object, ["a"], False, "json_build_object")
    raises_sqlstate("22023", json_ops.build_object, [None, "1"], True, "jsonb_build_object")


# --- from SQL text over a batch -------------------------------------------------------------
BATCH = pa.record_batch({
    "j": pa.array(['{"a": 1, "b": [1, 2.50]}', '[1, "x", null]', None, '"s"',
                   '{"a": 1, "b": [1, 2.50]}'], pa.string()),
    "i": pa.array([1, 2, None, 0, -1], pa.int32()),
    "s": pa.array(["a", "b", None, "x\"y", "a"], pa.string()),
})
SCOPE = Scope([ScopeColumn("t", "j", T.JSONB), ScopeColumn("t", "i", T.INT4),
               ScopeColumn("t", "s", T.TEXT)])


def bind(sql: str):
    return expr_helpers.bound(sql, SCOPE)


def texts(sql: str, batch: pa.RecordBatch = BATCH) -> list:
    return expr_helpers.texts(sql, SCOPE, batch)


@pytest.mark.parametrize(("sql", "expected"), [
    ("j -> 'a'", ["1", None, None, None, "1"]),
    ("j ->> i", [None, None, None, "s", None]),  # "s" ->> 0: a pseudo array in jsonb
    ("j #> '{b,1}'", ["2.50", None, None, None, "2.50"]),
    ("jsonb_array_length(j -> 'b')", ["2", None, None, None, "2"]),  # a lambda to sqlglot
    ("j @> '{\"a\": 1}'", ["true", "false", None, "false", "true"]),
    ("j ? s", ["true", "false", None, "false", "true"]),
    ("j < '[1]'", ["false", "false", None, "true", "false"]),
    ("jsonb_typeof(j)", ["object", "array", None, "string", "object"]),
    ("json_build_object('s', s, 'i', i)",
     ['{"s" : "a", "i" : 1}', '{"s" : "b", "i" : 2}', '{"s" : null, "i" : null}',
      '{"s" : "x\\"y", "i" : 0}', '{"s" : "a", "i" : -1}']),
    ("jsonb_build_array(i, s, j -> 'a')",
     ['[1, "a", 1]', '[2, "b", null]', "[null, null, null]", '[0, "x\\"y", null]',
      '[-1, "a", 1]']),
    ("to_json(array[i, i])", ["[1,1]", "[2,2]", "[null,null]", "[0,0]", "[-1,-1]"]),
    ("to_jsonb(s)", ['"a"', '"b"', None, '"x\\"y"', '"a"']),
])
def test_sql_over_a_batch(sql, expected):
    assert texts(sql) == expected


def test_output_types_and_operator_errors():
    assert bind("j -> 'a'").type == T.JSONB and bind("j::json -> 'a'").type == T.JSON
    assert bind("j ->> 0").type == T.TEXT
    raises_sqlstate("42883", bind, "j::json = j::json")
    raises_sqlstate("42883", bind, "j -> true")
    raises_sqlstate("42883", bind, "jsonb_typeof(j::json)")
    raises_sqlstate("42846", bind, "i::jsonb")
    raises_sqlstate("0A000", bind, "jsonb_agg(j)")


def test_each_distinct_value_is_computed_once():
    column = pa.array(['{"a": 1}', '{"a": 2}'] * 50 + [None], pa.string())
    batch = pa.record_batch({"j": column.dictionary_encode(), "i": pa.nulls(101, pa.int32()),
                             "s": pa.nulls(101, pa.string())})
    with mock.patch.object(json_ops, "get", wraps=json_ops.get) as get:
        out = texts("j ->> 'a'", batch)
    assert out == ["1", "2"] * 50 + [None]
    assert get.call_count == 2


def test_sliced_and_dictionary_casts():
    arr = pa.array(['{"b":1,"a":2}', "[1 , 2]", None, "1.50"]).slice(1)
    assert xj.cast(arr, T.TEXT, T.JSONB).to_pylist() == ["[1, 2]", None, "1.50"]
    assert xj.cast(arr.dictionary_encode(), T.TEXT, T.JSON).to_pylist() == \
        ["[1 , 2]", None, "1.50"]
    with pytest.raises(errors.QueryError) as info:
        xj.cast(pa.array(["1", "{}"]), T.JSONB, T.INT4)
    assert info.value.sqlstate == "22023"
