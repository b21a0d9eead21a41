"""segment.expr over numerics: exact scaled-int64 arithmetic, decimal128 results, the wide
fallback when int64 overflows, rounding, overflow errors."""

from __future__ import annotations

import decimal
import random
from decimal import Decimal

import pyarrow as pa
import pytest
from expr_helpers import L, col, py_values, raises_sqlstate

from planner import functions as F
from planner import types as T
from planner import values as V
from planner.expr import Func
from segment.expr import evaluate

N152 = T.numeric(15, 2)
bc = F.bind_call


def scaled(values, scale):
    return pa.array([None if v is None else int(Decimal(v).scaleb(scale)) for v in values], pa.int64())


def decimals(values, scale):
    return pa.array([None if v is None else Decimal(v) for v in values], pa.decimal128(38, scale))


@pytest.fixture
def lineitem():
    """Columns like TPC-H lineitem: numeric(15,2) price, discount, tax, quantity."""
    rng = random.Random(7)
    n = 2000
    price = [Decimal(rng.randint(90000, 10494950)).scaleb(-2) for _ in range(n)]
    disc = [Decimal(rng.randint(0, 10)).scaleb(-2) for _ in range(n)]
    tax = [Decimal(rng.randint(0, 8)).scaleb(-2) for _ in range(n)]
    price[5] = None
    batch = pa.record_batch([scaled(price, 2), scaled(disc, 2), scaled(tax, 2)], names=["p", "d", "t"])
    return batch, price, disc, tax


def test_sum_of_products_is_exact(lineitem):
    batch, price, disc, tax = lineitem
    p, d, t = col(0, N152, "p"), col(1, N152, "d"), col(2, N152, "t")
    e = bc(Func.MUL, [bc(Func.MUL, [p, bc(Func.SUB, [L(1), d])]), bc(Func.ADD, [L(1), t])])
    assert e.type == T.numeric(None, 6)
    got = py_values(e, batch)
    want = [None if a is None else a * (1 - b) * (1 + c) for a, b, c in zip(price, disc, tax)]
    assert got == want
    assert sum(v for v in got if v is not None) == sum(v for v in want if v is not None)


def test_add_sub_align_scales():
    batch = pa.record_batch([scaled(["1.25", "-3.50", None], 2), scaled(["0.0001", "2", "1"], 4)],
                            names=["a", "b"])
    a, b = col(0, N152), col(1, T.numeric(10, 4))
    assert py_values(bc(Func.ADD, [a, b]), batch) == [Decimal("1.2501"), Decimal("-1.5000"), None]
    assert py_values(bc(Func.SUB, [b, a]), batch) == [Decimal("-1.2499"), Decimal("5.5000"), None]
    assert py_values(bc(Func.GT, [a, b]), batch) == [True, False, None]
    assert py_values(bc(Func.EQ, [a, L(Decimal("1.250"))]), batch) == [True, False, None]


def test_division_rounds_half_away_from_zero():
    batch = pa.record_batch([scaled(["1", "2", "-2", "10", "7", None], 0)], names=["a"])
    a = col(0, T.numeric(10, 0))
    e = bc(Func.DIV, [a, L(3)])
    assert e.type.is_dynamic  # PostgreSQL's select_div_scale per value: 20 or 16 digits
    got = py_values(e, batch)
    assert [str(v) for v in got[:5]] == [
        "0.33333333333333333333", "0.66666666666666666667", "-0.66666666666666666667",
        "3.3333333333333333", "2.3333333333333333"]
    assert got[5] is None
    half = bc(Func.DIV, [col(0, T.numeric(10, 0)), L(Decimal("4.0000000000000000"))])
    batch = pa.record_batch([scaled(["1", "-1"], 0)], names=["a"])
    assert [str(v) for v in py_values(bc(Func.DIV, [half, L(Decimal("1E-4"))]), batch)] == [
        "2500.00000000000000000000", "-2500.00000000000000000000"]
    # a quotient PostgreSQL prints with more than 38 digits is beyond raympp: 22003
    raises_sqlstate("22003", evaluate, bc(Func.DIV, [half, L(Decimal("1E-16"))]), batch)


def test_constant_division_has_postgres_scale():
    e = bc(Func.DIV, [F.bind_cast(L(1), T.numeric(None, 0)), L(3)])
    assert V.format_text(e.value, e.type) == "0.33333333333333333333"
    e = bc(Func.DIV, [F.bind_cast(L(10), T.numeric(None, 0)), L(3)])
    assert V.format_text(e.value, e.type) == "3.3333333333333333"


def test_division_and_modulo_by_zero():
    batch = pa.record_batch([scaled(["1.00", "2.00"], 2), scaled(["0.00", None], 2)], names=["a", "b"])
    a, b = col(0, N152), col(1, N152)
    raises_sqlstate("22012", evaluate, bc(Func.DIV, [a, b]), batch)
    raises_sqlstate("22012", evaluate, bc(Func.MOD, [a, b]), batch)
    ok = pa.record_batch([scaled(["1.00", None], 2), scaled([None, "0.00"], 2)], names=["a", "b"])
    assert py_values(bc(Func.DIV, [a, b]), ok) == [None, None]  # NULL / 0 is NULL


def test_modulo_keeps_dividend_sign():
    batch = pa.record_batch([scaled(["10.5", "-7.5", "7"], 2)], names=["a"])
    e = bc(Func.MOD, [col(0, N152), L(Decimal("2"))])
    assert py_values(e, batch) == [Decimal("0.50"), Decimal("-1.50"), Decimal("1.00")]


def test_int64_overflow_recomputes_in_decimal128():
    decimal.getcontext().prec = 60
    big = "9000000000000000.00"  # 1.8e18 as scaled int64: fits; the product does not
    batch = pa.record_batch([scaled([big, "2.00", None], 2)], names=["a"])
    a = col(0, T.numeric(18, 2))
    e = bc(Func.MUL, [a, a])
    assert e.type == T.numeric(None, 4)
    assert py_values(e, batch) == [Decimal(big) ** 2, Decimal("4.0000"), None]
    e = bc(Func.ADD, [bc(Func.MUL, [a, L(100)]), a])
    assert py_values(e, batch)[0] == Decimal(big) * 101


def test_decimal128_inputs_beyond_int64():
    decimal.getcontext().prec = 60
    vals = ["123456789012345678901234567.89", "-0.01", None, "1"]
    batch = pa.record_batch([decimals(vals, 2)], names=["a"])
    a = col(0, T.numeric(None, 2))
    assert py_values(bc(Func.ADD, [a, L(1)]), batch) == [
        Decimal(vals[0]) + 1, Decimal("0.99"), None, Decimal("2.00")]
    # a quotient is held at scale 24 and keeps 14 integer digits (PostgreSQL would print
    # 308641972530864197253.09 for the second: fewer fractional digits for a larger one)
    raises_sqlstate("22003", evaluate, bc(Func.DIV, [a, L(4)]), batch)
    assert [None if v is None else str(v) for v in py_values(
        bc(Func.DIV, [a, L(4)]), batch.slice(1))] == [
        "-0.00250000000000000000", None, "0.25000000000000000000"]
    big = pa.record_batch([decimals(["1234567890123456789012.34"], 2)], names=["a"])
    raises_sqlstate("22003", evaluate, bc(Func.DIV, [a, L(4)]), big)
    assert py_values(bc(Func.NEG, [a]), batch)[1] == Decimal("0.01")
    assert py_values(bc(Func.LT, [a, L(0)]), batch) == [False, True, None, False]
    assert py_values(F.bind_cast(a, T.TEXT), batch) == [
        "123456789012345678901234567.89", "-0.01", None, "1.00"]


def test_decimal_overflow_beyond_38_digits():
    batch = pa.record_batch([decimals(["9" * 30], 0)], names=["a"])
    a = col(0, T.numeric(None, 0))
    e = raises_sqlstate("22003", evaluate, bc(Func.MUL, [a, a]), batch)
    assert e.message == "value overflows numeric format"


@pytest.mark.parametrize("func,digits,values,want", [
    (Func.ROUND, 1, ["1.25", "-1.25", "1.24"], ["1.3", "-1.3", "1.2"]),
    (Func.ROUND, 0, ["2.50", "-2.50", "0.49"], ["3", "-3", "0"]),
    (Func.ROUND, -2, ["1234.50", "-1250.00", "49.99"], ["1200", "-1300", "0"]),
    (Func.ROUND, 4, ["1.25", "-1.25", "0"], ["1.2500", "-1.2500", "0.0000"]),
    (Func.TRUNC, 1, ["1.29", "-1.29", "0.05"], ["1.2", "-1.2", "0.0"]),
    (Func.FLOOR, None, ["1.50", "-1.50", "-0.01"], ["1", "-2", "-1"]),
    (Func.CEIL, None, ["1.50", "-1.50", "-0.01"], ["2", "-1", "0"]),
])
def test_numeric_rounding(func, digits, values, want):
    batch = pa.record_batch([scaled(values, 2)], names=["a"])
    args = [col(0, N152)] + ([L(digits)] if digits is not None else [])
    assert py_values(bc(func, args), batch) == [Decimal(w) for w in want]


def test_round_with_per_row_digits():
    batch = pa.record_batch([scaled(["1.25", "1.25", "1.25", None], 2), pa.array([0, 1, None, 1], pa.int32())],
                            names=["a", "d"])
    e = bc(Func.ROUND, [col(0, N152), col(1, T.INT4)])
    assert py_values(e, batch) == [Decimal("1.00"), Decimal("1.30"), None, None]


def test_numeric_casts():
    batch = pa.record_batch([scaled(["1.235", "-1.235", "999.994", "999.995", None], 3)], names=["a"])
    a = col(0, T.numeric(6, 3))
    raises_sqlstate("22003", evaluate, F.bind_cast(a, T.numeric(5, 2)), batch)
    ok = batch.slice(0, 3)
    assert py_values(F.bind_cast(a, T.numeric(5, 2)), ok) == [
        Decimal("1.24"), Decimal("-1.24"), Decimal("999.99")]
    assert py_values(F.bind_cast(a, T.INT4), batch) == [1, -1, 1000, 1000, None]
    assert py_values(F.bind_cast(a, T.FLOAT8), batch) == [1.235, -1.235, 999.994, 999.995, None]
    assert py_values(F.bind_cast(a, T.numeric(None, 5)), ok) == [
        Decimal("1.23500"), Decimal("-1.23500"), Decimal("999.99400")]
    wide = F.bind_cast(a, T.numeric(30, 3))
    assert wide.type.arrow_type() == pa.decimal128(38, 3)
    assert evaluate(wide, ok).to_pylist() == [Decimal("1.235"), Decimal("-1.235"), Decimal("999.994")]


def test_numeric_overflow_detail_at_run_time():
    batch = pa.record_batch([pa.array([123456], pa.int32())], names=["a"])
    err = raises_sqlstate("22003", evaluate, F.bind_cast(col(0, T.INT4), T.numeric(5, 2)), batch)
    assert err.message == "numeric field overflow"
    assert err.detail == "A field with precision 5, scale 2 must round to an absolute value less than 10^3."


def test_float_to_numeric_uses_15_digits():
    batch = pa.record_batch([pa.array([0.1, 1.0000000000000002, -2.675, 1e20, 123.456, None, 0.0])],
                            names=["f"])
    f = col(0, T.FLOAT8)
    assert py_values(F.bind_cast(f, T.numeric(None, 2)), batch) == [
        Decimal("0.10"), Decimal("1.00"), Decimal("-2.68"), Decimal(10**20), Decimal("123.46"),
        None, Decimal("0.00")]
    assert py_values(F.bind_cast(f, T.numeric(20, 18)), batch.slice(0, 2)) == [
        Decimal("0.100000000000000000"), Decimal("1.000000000000000000")]
    raises_sqlstate("22003", evaluate, F.bind_cast(f, T.numeric(5, 2)), batch)


def test_numeric_to_int_overflow():
    batch = pa.record_batch([scaled(["3000000000"], 0)], names=["a"])
    err = raises_sqlstate("22003", evaluate, F.bind_cast(col(0, T.numeric(12, 0)), T.INT4), batch)
    assert err.message == "integer out of range"


def test_decimal_column_storage_is_accepted():
    """A numeric(15,2) column stored as decimal128(15,2) is read as scaled int64."""
    batch = pa.record_batch([pa.array([Decimal("1.50"), None], pa.decimal128(15, 2))], names=["a"])
    e = bc(Func.ADD, [col(0, N152), L(1)])
    assert py_values(e, batch) == [Decimal("2.50"), None]
