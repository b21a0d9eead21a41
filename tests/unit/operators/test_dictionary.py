"""Dictionary-encoded string columns through expressions, filters, projections and
aggregates: every answer equals the decoded column's, operators that do not take
dictionaries (and a slice's consumer) get plain strings."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from segment import expr as sexpr
from segment.operators import base

A = ex.AggFunc
VOCAB = ["http://a.example/x", "http://b.example/google", "", "12", "x7", "google"]


def _encoded(n: int, seed: int, vocab=VOCAB, nulls=True) -> pa.DictionaryArray:
    rng = np.random.default_rng(seed)
    values = [vocab[i] for i in rng.integers(0, len(vocab), n)]
    if nulls:
        values = [None if i % 11 == 0 else v for i, v in enumerate(values)]
    return pc.dictionary_encode(pa.array(values, pa.string()))


def _both(e: ex.Expr, arr: pa.DictionaryArray, keep: bool = False):
    batch = pa.record_batch([arr], names=["s"])
    plain = pa.record_batch([arr.dictionary_decode()], names=["s"])
    return sexpr.evaluate(e, batch, keep_dictionary=keep), sexpr.evaluate(e, plain)


S = k.col(0, T.TEXT, "s")


@pytest.mark.parametrize("e", [
    ex.Like(S, k.lit("%google%", T.TEXT), False, False),
    ex.Like(S, k.lit("%google%", T.TEXT), True, False),
    ex.IsNull(S, False),
    ex.InList(S, (k.lit("", T.TEXT), k.lit("x7", T.TEXT)), True),
    k.call(ex.Func.NE, S, k.lit("", T.TEXT)),
    k.call(ex.Func.AND, k.call(ex.Func.NE, S, k.lit("", T.TEXT)), ex.IsNull(S, True)),
    k.call(ex.Func.LENGTH, S, t=T.INT4),
], ids=["like", "not_like", "is_null", "not_in", "ne", "and", "length"])
def test_expressions_over_the_dictionary_equal_row_by_row(e):
    got, want = _both(e, _encoded(5_000, 1))
    assert got.equals(want)


def test_string_result_stays_encoded_with_distinct_values():
    e = k.call(ex.Func.REGEXP_REPLACE, S, k.lit("^https?://([^/]+)/.*$", T.TEXT),
               k.lit("\\1", T.TEXT), t=T.TEXT)
    got, want = _both(e, _encoded(5_000, 2), keep=True)
    assert pa.types.is_dictionary(got.type)
    assert len(pc.unique(got.dictionary)) == len(got.dictionary)  # aggregates rely on it
    assert got.dictionary_decode().equals(want)


def test_a_value_no_row_holds_cannot_fail_the_expression():
    # The dictionary still holds "x7" after a filter removed its rows: casting every
    # distinct value would fail, the rows do not.
    arr = _encoded(5_000, 3, nulls=False)
    kept = arr.filter(pc.invert(pc.equal(arr.dictionary_decode(), "x7")))
    kept = kept.filter(pc.equal(kept.dictionary_decode(), "12"))
    assert "x7" in kept.dictionary.to_pylist()
    got, want = _both(ex.Cast(S, T.INT4), kept)
    assert got.equals(want) and set(got.to_pylist()) == {12}


def _agg_node(src, keys, aggs, fields, mode=plan.AggMode.SINGLE):
    return plan.Aggregate(src, keys, aggs, mode, plan.fields_of(fields))


@pytest.mark.parametrize("mode", [plan.AggMode.SINGLE, plan.AggMode.PARTIAL])
def test_group_by_encoded_keys_across_batches_with_different_dictionaries(mode):
    batches = []
    for seed in range(4):  # each batch its own dictionary, in its own order
        vocab = VOCAB[seed:] + VOCAB[:seed]
        s = _encoded(3_000, seed, vocab)
        x = pa.array(np.arange(3_000) % 13, pa.int64())
        batches.append(pa.record_batch([s, x], names=["s", "x"]))
    src = k.Source(tuple(batches), plan.fields_of([("s", T.TEXT), ("x", T.INT8)]))
    aggs = (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
            ex.AggCall(A.MAX, k.col(1, T.INT8), False, T.INT8),
            ex.AggCall(A.COUNT, S, True, T.INT8))
    node = _agg_node(src, (S,), aggs, [("s", T.TEXT), ("c", T.INT8), ("m", T.INT8),
                                       ("d", T.INT8)], mode)
    got = k.run(node)
    assert got.schema.field("s").type == pa.string()
    plain = pa.Table.from_batches(batches).cast(pa.schema([("s", pa.string()), ("x", pa.int64())]))
    want = plain.group_by("s").aggregate([([], "count_all"), ("x", "max")])
    if mode is plan.AggMode.PARTIAL:  # partial states: merge them before comparing
        got = got.group_by("s").aggregate([("c", "sum"), ("m", "max")]).rename_columns(
            ["s", "c", "m"])
    got_rows = {r["s"]: (r["c"], r["m"]) for r in got.to_pylist()}
    want_rows = {r["s"]: (r["count_all"], r["x_max"]) for r in want.to_pylist()}
    assert got_rows == want_rows


def test_operators_that_take_no_dictionaries_get_plain_strings():
    s = _encoded(2_000, 5)
    src = k.Source((pa.record_batch([s], names=["s"]),), plan.fields_of([("s", T.TEXT)]))
    pred = ex.Like(S, k.lit("%example%", T.TEXT), False, False)
    filt = plan.Filter(src, pred, src.fields)
    want = sorted(v for v in s.dictionary_decode().to_pylist() if v and "example" in v)
    # A full Sort decodes its input; a Top-K Sort keeps it encoded and its K rows are
    # decoded for the Limit above, which takes no dictionaries.
    out = k.run(plan.Sort(filt, (plan.SortKey(S),), src.fields))
    assert out.schema.field(0).type == pa.string()
    assert out.column(0).to_pylist() == want
    top = plan.Sort(filt, (plan.SortKey(S, descending=True),), src.fields, limit=7)
    out = k.run(plan.Limit(top, 5, 1, src.fields))
    assert out.schema.field(0).type == pa.string()
    assert out.column(0).to_pylist() == sorted(want, reverse=True)[1:6]
    # And a slice's own output is plain even when its root takes dictionaries.
    assert k.run(filt).schema.field(0).type == pa.string()


def test_concat_keeps_encoded_columns_and_decodes_mixed_ones():
    a = pa.record_batch([_encoded(100, 1), _encoded(100, 2)], names=["p", "q"])
    b = pa.record_batch([_encoded(50, 3), _encoded(50, 4).dictionary_decode()],
                        names=["p", "q"])
    schema = pa.schema([("p", pa.string()), ("q", pa.string())])
    out = base.concat_batches([a, b], schema)
    assert pa.types.is_dictionary(out.schema.field("p").type)
    assert out.schema.field("q").type == pa.string()
    assert out.num_rows == 150
    assert out.column(0).dictionary_decode().to_pylist() == \
        a.column(0).dictionary_decode().to_pylist() + b.column(0).dictionary_decode().to_pylist()
