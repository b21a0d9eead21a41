"""segment.expr: integers, floats, comparisons, three-valued logic, CASE / COALESCE / AND
laziness, IN, LIKE, IS NULL, empty and sliced batches."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from expr_helpers import L, col, py_values, raises_sqlstate

from planner import expr as ex
from planner import functions as F
from planner import types as T
from planner.expr import Func
from segment.expr import evaluate

bc = F.bind_call
I2, I4, I8 = col(0, T.INT2, "s"), col(1, T.INT4, "i"), col(2, T.INT8, "b")
F8, TXT, BO = col(3, T.FLOAT8, "f"), col(4, T.TEXT, "t"), col(5, T.BOOL, "bo")


@pytest.fixture
def batch():
    return pa.record_batch([
        pa.array([1, -32768, None, 0, 32767], pa.int16()),
        pa.array([7, -7, None, 0, 2**31 - 1], pa.int32()),
        pa.array([10, None, 3, -(2**63), 2**63 - 1], pa.int64()),
        pa.array([1.5, -0.0, None, math.nan, 1e300]),
        pa.array(["héllo", "a_c", None, "", "A%C"]),
        pa.array([True, False, None, True, False]),
    ], names=["s", "i", "b", "f", "t", "bo"])


def test_integer_arithmetic(batch):
    part = batch.slice(0, 4)
    assert py_values(bc(Func.ADD, [I4, I8]), part) == [17, None, None, -(2**63)]
    assert py_values(bc(Func.DIV, [I4, L(2)]), part) == [3, -3, None, 0]
    assert py_values(bc(Func.MOD, [I4, L(3)]), part) == [1, -1, None, 0]
    assert py_values(bc(Func.MUL, [I2, L(1)]), batch) == [1, -32768, None, 0, 32767]
    assert py_values(bc(Func.NEG, [I4]), part) == [-7, 7, None, 0]
    assert py_values(bc(Func.ABS, [I4]), part) == [7, 7, None, 0]


@pytest.mark.parametrize("e,message", [
    (bc(Func.ADD, [I4, L(1)]), "integer out of range"),
    (bc(Func.MUL, [I2, I2]), "smallint out of range"),
    (bc(Func.NEG, [I2]), "smallint out of range"),
    (bc(Func.ADD, [I8, L(1)]), "bigint out of range"),
    (bc(Func.ABS, [I8]), "bigint out of range"),
    (bc(Func.SUB, [I8, L(1)]), "bigint out of range"),
])
def test_integer_overflow(batch, e, message):
    err = raises_sqlstate("22003", evaluate, e, batch)
    assert err.message == message


def test_int_min_divided_by_minus_one():
    b = pa.record_batch([pa.array([-(2**31)], pa.int32())], names=["i"])
    i = col(0, T.INT4)
    raises_sqlstate("22003", evaluate, bc(Func.DIV, [i, L(-1)]), b)
    assert py_values(bc(Func.MOD, [i, L(-1)]), b) == [0]


def test_division_by_zero_only_on_non_null_rows(batch):
    raises_sqlstate("22012", evaluate, bc(Func.DIV, [L(1), I4]), batch)
    raises_sqlstate("22012", evaluate, bc(Func.MOD, [I8, I4]), batch)
    nulls = pa.record_batch([pa.array([None, 4], pa.int32()), pa.array([0, 2], pa.int32())],
                            names=["a", "b"])
    assert py_values(bc(Func.DIV, [col(0, T.INT4), col(1, T.INT4)]), nulls) == [None, 2]
    assert py_values(bc(Func.MOD, [col(0, T.INT4), col(1, T.INT4)]), nulls) == [None, 0]


def test_float_arithmetic_errors(batch):
    assert py_values(bc(Func.MUL, [F8, L(2.0)]), batch.slice(0, 3)) == [3.0, -0.0, None]
    raises_sqlstate("22012", evaluate, bc(Func.DIV, [L(1.0), F8]), batch)
    err = raises_sqlstate("22003", evaluate, bc(Func.MUL, [F8, L(1e10)]), batch)
    assert err.message == "value out of range: overflow"
    tiny = pa.record_batch([pa.array([1e-300])], names=["f"])
    err = raises_sqlstate("22003", evaluate, bc(Func.MUL, [col(0, T.FLOAT8), L(1e-300)]), tiny)
    assert err.message == "value out of range: underflow"
    nan = pa.record_batch([pa.array([math.nan])], names=["f"])
    assert math.isnan(py_values(bc(Func.DIV, [col(0, T.FLOAT8), L(0.0)]), nan)[0])
    negative = pa.record_batch([pa.array([-1.0])], names=["f"])
    raises_sqlstate("2201F", evaluate, bc(Func.SQRT, [col(0, T.FLOAT8)]), negative)


def test_float_nan_compares_as_postgres(batch):
    f = col(3, T.FLOAT8)
    assert py_values(bc(Func.EQ, [f, L(math.nan)]), batch) == [False, False, None, True, False]
    assert py_values(bc(Func.GT, [f, L(1e308)]), batch) == [False, False, None, True, False]
    assert py_values(bc(Func.LT, [f, L(math.inf)]), batch) == [True, True, None, False, True]


def test_comparisons_and_three_valued_logic(batch):
    gt = bc(Func.GT, [I4, L(0)])
    assert py_values(gt, batch) == [True, False, None, False, True]
    assert py_values(bc(Func.AND, [gt, BO]), batch) == [True, False, None, False, False]
    assert py_values(bc(Func.OR, [gt, BO]), batch) == [True, False, None, True, True]
    assert py_values(bc(Func.NOT, [BO]), batch) == [False, True, None, False, True]
    nulls = bc(Func.AND, [BO, ex.Literal(None, T.BOOL)])
    assert py_values(nulls, batch) == [None, False, None, None, False]
    assert py_values(bc(Func.OR, [BO, ex.Literal(None, T.BOOL)]), batch) == [
        True, None, None, True, None]
    assert py_values(bc(Func.AND, [BO, gt, L(True)]), batch) == [True, False, None, False, False]
    assert py_values(bc(Func.LT, [TXT, L("b")]), batch) == [False, True, None, True, True]
    assert py_values(bc(Func.GT, [TXT, L("h")]), batch) == [True, False, None, False, False]


def test_case_is_lazy(batch):
    e = F.bind_case([(bc(Func.NE, [I4, L(0)]), bc(Func.DIV, [L(100), I4]))], L(-1))
    assert py_values(e, batch) == [14, -14, -1, -1, 0]
    e = F.bind_case([(bc(Func.EQ, [I4, L(0)]), L(0))], bc(Func.DIV, [L(100), I4]))
    assert py_values(e, batch) == [14, -14, None, 0, 0]
    e = F.bind_case([(bc(Func.LT, [I4, L(1000)]), bc(Func.MUL, [I4, L(1000)]))], L(0))
    assert py_values(e, batch) == [7000, -7000, 0, 0, 0]  # 2^31-1 * 1000 is never computed
    raises_sqlstate("22012", evaluate, F.bind_case([(BO, bc(Func.DIV, [L(1), I4]))], None), batch)


def test_case_first_match_wins_and_nulls_fall_through(batch):
    e = F.bind_case([(BO, L("bool")), (bc(Func.GT, [I4, L(0)]), L("positive"))], L("other"))
    assert py_values(e, batch) == ["bool", "other", "other", "bool", "positive"]
    e = F.bind_case([(BO, L(1))], None)
    assert py_values(e, batch) == [1, None, None, 1, None]


def test_lazy_subset_for_rare_branches():
    n = 1000
    vals = [0] * n
    vals[3] = 5
    b = pa.record_batch([pa.array(vals, pa.int32())], names=["i"])
    i = col(0, T.INT4)
    e = F.bind_case([(bc(Func.NE, [i, L(0)]), bc(Func.DIV, [L(10), i]))], L(0))
    out = py_values(e, b)
    assert out[3] == 2 and sum(out) == 2


def test_coalesce_and_and_are_lazy(batch):
    e = bc(Func.COALESCE, [bc(Func.NULLIF, [I4, L(0)]), L(5)])
    assert py_values(e, batch) == [7, -7, 5, 5, 2**31 - 1]
    e = bc(Func.COALESCE, [I8, bc(Func.DIV, [L(1), I4])])
    assert py_values(e, batch.slice(0, 3)) == [10, -0, 3]
    guarded = bc(Func.AND, [bc(Func.NE, [I4, L(0)]), bc(Func.GT, [bc(Func.DIV, [L(10), I4]), L(0)])])
    assert py_values(guarded, batch) == [True, False, None, False, False]
    either = bc(Func.OR, [bc(Func.EQ, [I4, L(0)]), bc(Func.GT, [bc(Func.DIV, [L(10), I4]), L(0)])])
    assert py_values(either, batch) == [True, False, None, True, False]


def test_greatest_least_ignore_nulls(batch):
    assert py_values(bc(Func.GREATEST, [I4, L(0), ex.Literal(None, T.INT4)]), batch) == [
        7, 0, 0, 0, 2**31 - 1]
    assert py_values(bc(Func.LEAST, [I4, I2]), batch) == [1, -32768, None, 0, 32767]
    assert py_values(bc(Func.GREATEST, [TXT, L("b")]), batch) == ["héllo", "b", "b", "b", "b"]


def test_in_list_null_semantics(batch):
    e = F.bind_in(I4, [L(7), L(0), L(None)])
    assert py_values(e, batch) == [True, None, None, True, None]
    e = F.bind_in(I4, [L(7), L(0)], negated=True)
    assert py_values(e, batch) == [False, True, None, False, True]
    e = F.bind_in(I4, [L(7), L(None)], negated=True)
    assert py_values(e, batch) == [False, None, None, None, None]
    e = F.bind_in(I4, [I2, L(-7)])  # non-literal members
    assert py_values(e, batch) == [False, True, None, True, False]
    e = F.bind_in(L(-7), [I4, I2])  # constant on the left, columns in the list
    assert py_values(e, batch) == [False, True, None, False, False]
    e = F.bind_in(TXT, [L("a_c"), L("")])
    assert py_values(e, batch) == [False, True, None, True, False]


def test_like(batch):
    assert py_values(F.bind_like(TXT, L("a_c")), batch) == [False, True, None, False, False]
    assert py_values(F.bind_like(TXT, L("a\\_c")), batch) == [False, True, None, False, False]
    assert py_values(F.bind_like(TXT, L("%\\%%")), batch) == [False, False, None, False, True]
    assert py_values(F.bind_like(TXT, L("a%c"), case_insensitive=True), batch) == [
        False, True, None, False, True]
    assert py_values(F.bind_like(TXT, L("h.llo")), batch) == [False] * 2 + [None] + [False] * 2
    assert py_values(F.bind_like(TXT, L("h_llo"), negated=True), batch) == [
        False, True, None, True, True]
    assert py_values(F.bind_like(TXT, L("%")), batch) == [True, True, None, True, True]


def test_like_with_per_row_patterns():
    b = pa.record_batch([pa.array(["abc", "abc", "xyz", None]), pa.array(["a%", "b%", None, "%"])],
                        names=["s", "p"])
    e = F.bind_like(col(0, T.TEXT), col(1, T.TEXT))
    assert py_values(e, b) == [True, False, None, None]
    bad = pa.record_batch([pa.array(["abc"]), pa.array(["ab\\"])], names=["s", "p"])
    raises_sqlstate("22025", evaluate, e, bad)


def test_is_null(batch):
    assert py_values(F.bind_is_null(I4), batch) == [False, False, True, False, False]
    assert py_values(F.bind_is_null(F8, negated=True), batch) == [True, True, False, True, True]


def test_empty_batch(batch):
    empty = batch.slice(0, 0)
    for e in (bc(Func.ADD, [I4, I8]), bc(Func.DIV, [L(1), I4]), F.bind_like(TXT, L("a%")),
              F.bind_case([(BO, L(1))], L(2)), F.bind_cast(F8, T.TEXT), F.bind_in(I4, [L(1)]),
              bc(Func.SUBSTRING, [TXT, I4]), L(3)):
        arr = evaluate(e, empty)
        assert len(arr) == 0 and arr.type == e.type.arrow_type()


def test_sliced_batch_keeps_alignment(batch):
    part = batch.slice(1, 3)
    assert py_values(bc(Func.ADD, [I4, L(1)]), part) == [-6, None, 1]
    assert py_values(bc(Func.LENGTH, [TXT]), part) == [3, None, 0]
    assert py_values(F.bind_case([(BO, I4)], I2), part) == [-32768, None, 0]
    assert py_values(bc(Func.SUBSTRING, [TXT, I4, L(2)]), part.slice(1)) == [None, ""]


def test_literals_broadcast_to_batch_length(batch):
    arr = evaluate(L(7), batch)
    assert arr.to_pylist() == [7] * 5 and arr.type == pa.int32()
    assert evaluate(ex.Literal(None, T.UNKNOWN), batch).null_count == 5
    assert py_values(bc(Func.ADD, [L(1), bc(Func.NEG, [L(2)])]), batch) == [-1] * 5
    assert py_values(bc(Func.NOW, []), batch)[0] is not None


def test_constant_subtrees_not_folded_still_evaluate_once(batch):
    e = ex.Call(Func.REGEXP_REPLACE, (L("abc"), L("b"), L("x")), T.TEXT)
    assert py_values(e, batch) == ["axc"] * 5
    raises_sqlstate("22012", evaluate, bc(Func.DIV, [L(1), L(0)]), batch)


def test_columns_in_other_physical_layouts():
    from decimal import Decimal
    from segment.expr import evaluate_columns
    cols = [pa.array(["b", "a", None, "b"]).dictionary_encode(),
            pa.array(["x", "yy", None, ""], pa.large_string()),
            pa.array([Decimal("1.5"), None, Decimal("-2.25"), Decimal("0")], pa.decimal128(10, 2)),
            pa.chunked_array([[1, 2], [3, None]], pa.int32())]
    s, ls, n, i = col(0, T.TEXT), col(1, T.TEXT), col(2, T.numeric(15, 2)), col(3, T.INT4)
    out = evaluate_columns(bc(Func.CONCAT, [s, ls]), cols, 4)
    assert out.to_pylist() == ["bx", "ayy", None, "b"]
    out = evaluate_columns(bc(Func.ADD, [n, i]), cols, 4)
    assert out.type == pa.int64() and out.to_pylist() == [250, None, 75, None]


def test_now_is_the_statement_time():
    import datetime as dt
    b = pa.record_batch([pa.array([1, 2])], names=["x"])
    when = dt.datetime(2001, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc)
    assert evaluate(bc(Func.NOW, []), b, now=when).to_pylist() == [when, when]
    e = F.bind_cast(bc(Func.NOW, []), T.DATE)
    assert evaluate(e, b, now=when).to_pylist() == [dt.date(2001, 2, 3)] * 2
