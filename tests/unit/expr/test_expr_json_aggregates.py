"""The kernels of the json aggregates and set-returning json functions
(segment/kernels/expr_json.py: json_agg, json_object_agg, JSON_ELEMENTS & co.) over hand-
built array_agg results with NULL elements, NULL (empty-group) lists and sliced inputs, and
the jsonb grouping rewrite (planner/json_grouping.py). Expected texts are PostgreSQL 15's."""

from __future__ import annotations

import pyarrow as pa
import pytest

from planner import errors, json_grouping, json_values
from planner import expr as ex
from planner import plan as pl
from planner import types as T
from planner.expr import Call, Func
from segment.kernels import expr_json as xj


def _agg(func, elem_types, out, *lists):
    args = tuple(ex.ColumnRef(i, T.array_of(t)) for i, t in enumerate(elem_types))
    return xj.CALLS[func](Call(func, args, out), list(lists), len(lists[0]))


def test_json_agg_formats_elements_with_nulls_and_empty_groups():
    lists = pa.array([[1, None, 2], None, [], [3]], pa.list_(pa.int32()))
    assert _agg(Func.JSON_AGG, [T.INT4], T.JSON, lists).to_pylist() == \
        ["[1, null, 2]", None, "[]", "[3]"]


def test_json_agg_of_text_quotes_and_jsonb_agg_is_canonical():
    lists = pa.array([['a"b', None], ["é\\"]], pa.list_(pa.string()))
    assert _agg(Func.JSON_AGG, [T.TEXT], T.JSON, lists).to_pylist() == \
        ['["a\\"b", null]', '["é\\\\"]']
    floats = pa.array([[1e20, 1.5]], pa.list_(pa.float64()))
    assert _agg(Func.JSON_AGG, [T.FLOAT8], T.JSONB, floats).to_pylist() == \
        ["[100000000000000000000, 1.5]"]


def test_json_agg_keeps_json_text_and_works_on_a_slice():
    lists = pa.array([['{"b" : 1,"a":2}'], ['[1.50]', 'null'], None], pa.list_(pa.string()))
    assert _agg(Func.JSON_AGG, [T.JSON], T.JSON, lists.slice(1)).to_pylist() == \
        ["[[1.50], null]", None]
    assert _agg(Func.JSON_AGG, [T.JSON], T.JSONB, lists).to_pylist() == \
        ['[{"a": 2, "b": 1}]', "[[1.50], null]", None]


def test_object_agg_json_and_jsonb_forms():
    keys = pa.array([["a", "b", "a"], None], pa.list_(pa.string()))
    vals = pa.array([[1, None, 2], None], pa.list_(pa.int8()))
    assert _agg(Func.JSON_OBJECT_AGG, [T.TEXT, T.INT8], T.JSON, keys, vals).to_pylist() == \
        ['{ "a" : 1, "b" : null, "a" : 2 }', None]
    assert _agg(Func.JSON_OBJECT_AGG, [T.TEXT, T.INT8], T.JSONB, keys, vals).to_pylist() == \
        ['{"a": 2, "b": null}', None]


def test_object_agg_keys_of_other_types_are_their_text():
    keys = pa.array([[True, False]], pa.list_(pa.bool_()))
    vals = pa.array([[1.5, 2.0]], pa.list_(pa.float64()))
    assert _agg(Func.JSON_OBJECT_AGG, [T.BOOL, T.FLOAT8], T.JSON, keys, vals).to_pylist() == \
        ['{ "true" : 1.5, "false" : 2 }']


def test_object_agg_null_key_is_22023():
    keys = pa.array([["a", None]], pa.list_(pa.string()))
    vals = pa.array([[1, 2]], pa.list_(pa.int32()))
    with pytest.raises(errors.QueryError) as e:
        _agg(Func.JSON_OBJECT_AGG, [T.TEXT, T.INT4], T.JSONB, keys, vals)
    assert e.value.sqlstate == "22023" and "field name must not be null" in str(e.value)


def _srf(func, arg_type, out, col):
    return xj.CALLS[func](Call(func, (ex.ColumnRef(0, arg_type),), out), [col], len(col))


def test_elements_each_and_object_keys_once_per_distinct_value():
    col = pa.array(['[1, "a", null]', None, '[1, "a", null]', "[]"])
    assert _srf(Func.JSON_ELEMENTS, T.JSONB, T.array_of(T.JSONB), col).to_pylist() == \
        [["1", '"a"', "null"], None, ["1", '"a"', "null"], []]
    assert _srf(Func.JSON_ELEMENTS, T.JSONB, T.array_of(T.TEXT), col).to_pylist() == \
        [["1", "a", None], None, ["1", "a", None], []]
    obj = pa.array(['{"b" : 2, "a" : [1,  2], "b": 3}'])
    assert _srf(Func.JSON_EACH_KEYS, T.JSON, T.array_of(T.TEXT), obj).to_pylist() == \
        [["b", "a", "b"]]
    assert _srf(Func.JSON_EACH_VALUES, T.JSON, T.array_of(T.JSON), obj).to_pylist() == \
        [["2", "[1,  2]", "3"]]
    assert _srf(Func.JSON_OBJECT_KEYS, T.JSONB, T.array_of(T.TEXT),
                pa.array([json_values.canonical('{"bb": 1, "c": 2, "a": 3}')])).to_pylist() == \
        [["a", "c", "bb"]]


@pytest.mark.parametrize(("func", "arg_type", "text", "message"), [
    (Func.JSON_ELEMENTS, T.JSONB, '{"a": 1}', "cannot extract elements from an object"),
    (Func.JSON_ELEMENTS, T.JSON, "1", "cannot call json_array_elements on a scalar"),
    (Func.JSON_EACH_VALUES, T.JSON, "[1]", "cannot deconstruct an array as an object"),
    (Func.JSON_EACH_KEYS, T.JSONB, "[1]", "cannot call jsonb_each on a non-object"),
    (Func.JSON_OBJECT_KEYS, T.JSONB, "1", "cannot call jsonb_object_keys on a scalar"),
])
def test_srf_errors_are_postgresql_s(func, arg_type, text, message):
    with pytest.raises(errors.QueryError) as e:
        _srf(func, arg_type, T.array_of(arg_type), pa.array([text]))
    assert e.value.sqlstate == "22023" and str(e.value).startswith(message)


def _leaf(*types):
    return pl.Values(((ex.Literal(None, T.UNKNOWN),) * len(types),), tuple(pl.Field(f"c{i}", t)
                                                   for i, t in enumerate(types)))


def test_jsonb_keys_group_by_sort_key_and_show_one_of_the_values():
    child = _leaf(T.JSONB, T.INT4)
    key = ex.ColumnRef(0, T.JSONB, "c0")
    count = ex.AggCall(ex.AggFunc.COUNT_STAR, None, False, T.INT8)
    fields = (pl.Field("c0", T.JSONB), pl.Field("count", T.INT8))
    node = json_grouping.aggregate(child, (key,), (count,), fields)
    assert isinstance(node, pl.Project) and node.fields == fields
    agg = node.child
    assert agg.keys == (Call(Func.JSONB_SORT_KEY, (key,), T.SqlType(T.Kind.BYTEA)),)
    assert agg.aggs[-1] == ex.AggCall(ex.AggFunc.MIN, key, False, T.JSONB)
    assert node.exprs[0] == ex.ColumnRef(2, T.JSONB, "c0")
    assert json_values.sort_key("1.5") == json_values.sort_key("1.50")


def test_other_keys_are_unchanged_and_json_is_42883():
    child = _leaf(T.INT4, T.JSON)
    fields = (pl.Field("c0", T.INT4),)
    node = json_grouping.aggregate(child, (ex.ColumnRef(0, T.INT4, "c0"),), (), fields)
    assert isinstance(node, pl.Aggregate)
    with pytest.raises(errors.QueryError) as e:
        json_grouping.aggregate(child, (ex.ColumnRef(1, T.JSON, "c1"),), (),
                                (pl.Field("c1", T.JSON),))
    assert e.value.sqlstate == "42883"


def test_count_distinct_jsonb_counts_sort_keys():
    child = _leaf(T.JSONB)
    arg = ex.ColumnRef(0, T.JSONB, "c0")
    node = json_grouping.aggregate(child, (), (ex.AggCall(ex.AggFunc.COUNT, arg, True, T.INT8),),
                                   (pl.Field("count", T.INT8),))
    assert node.aggs[0].arg == json_grouping.group_key(arg) != arg
