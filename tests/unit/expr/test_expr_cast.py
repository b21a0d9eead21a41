"""segment.expr casts: a table of source values x target types, checked against the
pure-Python conversion of planner.values (which the constant folder uses), plus the
error paths with PostgreSQL's messages."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pytest
from expr_helpers import col, py_values, raises_sqlstate

from planner import functions as F
from planner import types as T
from planner import values as V
from planner.expr import Interval
from segment.expr import evaluate
from segment.kernels import expr_cast

SOURCES = {
    T.BOOL: [True, False, None],
    T.INT2: [1, -32768, None, 0],
    T.INT4: [7, -2, None, 2**31 - 1],
    T.INT8: [10, -(2**40), None, 0],
    T.FLOAT4: [1.5, -0.25, None, 3.0],
    T.FLOAT8: [2.5, -3.5, None, 1e-5, 123456.789, 0.1],
    T.numeric(15, 2): [Decimal("1.25"), Decimal("-2.50"), None, Decimal("0.05")],
    T.numeric(None, 3): [Decimal("123456789012345678901.125"), Decimal("-1.000"), None],
    T.TEXT: ["1", " 2 ", None, "+3"],
    T.DATE: [dt.date(2000, 1, 31), None, dt.date(1969, 12, 31)],
    T.TIMESTAMP: [dt.datetime(2000, 1, 31, 10, 11, 12, 500000), None, dt.datetime(1969, 12, 31, 23)],
    T.TIMESTAMPTZ: [dt.datetime(2000, 1, 31, 10, tzinfo=dt.timezone.utc), None],
    T.INTERVAL: [Interval(14, 3, 14706500000), None, Interval(0, -1, -7200000000)],
}
TARGETS = [T.BOOL, T.INT2, T.INT4, T.INT8, T.FLOAT4, T.FLOAT8, T.numeric(15, 2), T.numeric(None, 4),
           T.numeric(30, 6), T.TEXT, T.varchar(3), T.char(2), T.DATE, T.TIMESTAMP, T.TIMESTAMPTZ,
           T.INTERVAL]


def _cases():
    for src, values in SOURCES.items():
        for dst in TARGETS:
            if not F.cast_type_ok(src, dst) or (src.kind is T.Kind.TEXT and not dst.is_integer
                                                and not dst.is_string):
                continue
            yield pytest.param(src, dst, values, id=f"{src}->{dst}")


@pytest.mark.parametrize("src,dst,values", list(_cases()))
def test_cast_matches_pure_python(src, dst, values):
    try:
        want = [V.cast_value(v, src, dst) for v in values]
    except Exception as exc:  # the same error must come out of the batch path
        state = getattr(exc, "sqlstate", None)
        assert state is not None
        batch = pa.record_batch([expr_cast.to_arrow(values, src)], names=["x"])
        raises_sqlstate(state, evaluate, F.bind_cast(col(0, src), dst), batch)
        return
    batch = pa.record_batch([expr_cast.to_arrow(values, src)], names=["x"])
    e = F.bind_cast(col(0, src), dst)
    got = py_values(e, batch)
    if dst.kind is T.Kind.INTERVAL:
        want = [None if v is None else pa.MonthDayNano([v.months, v.days, v.micros * 1000]) for v in want]
    assert got == want


@pytest.mark.parametrize("texts,dst", [
    ([" 12 ", "+7", "-0", None], T.INT4), (["1.5", " -2.25 ", ".5", "7.", "1e3", None], T.numeric(10, 2)),
    (["1.235", "-1.235", "0.005", "12345678901234567890.5"], T.numeric(None, 2)),
    (["NaN", "-Infinity", "inf", " 1.5e-3 ", "0"], T.FLOAT8), (["3.4e38", "1e-7"], T.FLOAT4),
    (["t", "TRUE", " yes ", "of", "0", None], T.BOOL),
    (["1998-12-01", " 2000-02-29 ", "2000-01-01 10:00", None], T.DATE),
    (["1998-12-01 12:01:18.5", "1998-12-01T12:01:18", "1998-12-01", "2000-01-01 00:00+02"], T.TIMESTAMP),
    (["2000-01-01 00:00:00+02", "2000-01-01 10:00"], T.TIMESTAMPTZ),
    (["90 day", "1 year 2 mons", "90 day", None], T.INTERVAL),
])
def test_text_input_matches_parse_text(texts, dst):
    batch = pa.record_batch([pa.array(texts, pa.string())], names=["s"])
    got = evaluate(F.bind_cast(col(0, T.TEXT), dst), batch)
    want = expr_cast.to_arrow([None if t is None else V.parse_text(t, dst) for t in texts], dst)
    if dst.is_float:
        assert [str(v) for v in got.to_pylist()] == [str(v) for v in want.to_pylist()]
    else:
        assert got.equals(want)


@pytest.mark.parametrize("texts,dst,sqlstate,message", [
    (["1", "12a"], T.INT4, "22P02", 'invalid input syntax for type integer: "12a"'),
    (["1", "99999999999"], T.INT4, "22003", 'value "99999999999" is out of range for type integer'),
    (["1e400"], T.FLOAT8, "22003", '"1e400" is out of range for type double precision'),
    (["x"], T.numeric(5, 2), "22P02", 'invalid input syntax for type numeric: "x"'),
    (["12345.678"], T.numeric(5, 2), "22003", "numeric field overflow"),
    (["maybe"], T.BOOL, "22P02", 'invalid input syntax for type boolean: "maybe"'),
    (["1998-02-30"], T.DATE, "22008", 'date/time field value out of range: "1998-02-30"'),
    (["soon"], T.TIMESTAMP, "22007", 'invalid input syntax for type timestamp: "soon"'),
    (["forever"], T.INTERVAL, "22007", 'invalid input syntax for type interval: "forever"'),
])
def test_text_input_errors(texts, dst, sqlstate, message):
    batch = pa.record_batch([pa.array(texts, pa.string())], names=["s"])
    err = raises_sqlstate(sqlstate, evaluate, F.bind_cast(col(0, T.TEXT), dst), batch)
    assert err.message == message


@pytest.mark.parametrize("src,values,texts", [
    (T.BOOL, [True, False, None], ["true", "false", None]),
    (T.FLOAT8, [0.1, 1e15, 123456789012345.0, 1e-5, -0.0, math.nan, math.inf, 1.5e300],
     ["0.1", "1e+15", "123456789012345", "1e-05", "-0", "NaN", "Infinity", "1.5e+300"]),
    (T.FLOAT4, [1234567.0, 0.1, 3.0], ["1.234567e+06", "0.1", "3"]),
    (T.numeric(15, 2), [Decimal("1.50"), Decimal("-0.05"), Decimal("0"), Decimal("-12.00")],
     ["1.50", "-0.05", "0.00", "-12.00"]),
    (T.numeric(5, 0), [Decimal(-7), Decimal(0)], ["-7", "0"]),
    (T.numeric(None, 2), [Decimal("-0.05"), Decimal("12345678901234567890123.45")],
     ["-0.05", "12345678901234567890123.45"]),
    (T.DATE, [dt.date(2000, 1, 1), dt.date(5, 1, 1)], ["2000-01-01", "0005-01-01"]),
    (T.TIMESTAMP, [dt.datetime(2000, 1, 1, 10), dt.datetime(2000, 1, 1, 0, 0, 0, 120000)],
     ["2000-01-01 10:00:00", "2000-01-01 00:00:00.12"]),
    (T.INTERVAL, [Interval(0, 90, 0), Interval(-24, 0, 0)], ["90 days", "-2 years"]),
])
def test_text_output(src, values, texts):
    batch = pa.record_batch([expr_cast.to_arrow(values, src)], names=["x"])
    assert py_values(F.bind_cast(col(0, src), T.TEXT), batch) == texts
    assert [V.format_text(v, src) for v in values] == texts


@pytest.mark.parametrize("src,values,dst,message", [
    (T.INT8, [1, 3000000000], T.INT4, "integer out of range"),
    (T.INT4, [40000], T.INT2, "smallint out of range"),
    (T.FLOAT8, [3e10], T.INT4, "integer out of range"),
    (T.FLOAT8, [math.nan], T.INT8, "bigint out of range"),
    (T.FLOAT8, [1e300], T.FLOAT4, "value out of range: overflow"),
    (T.numeric(15, 2), [Decimal("99999999999.99")], T.INT4, "integer out of range"),
    (T.numeric(15, 2), [Decimal("1234.56")], T.numeric(5, 2), "numeric field overflow"),
])
def test_cast_overflow(src, values, dst, message):
    batch = pa.record_batch([expr_cast.to_arrow(values, src)], names=["x"])
    err = raises_sqlstate("22003", evaluate, F.bind_cast(col(0, src), dst), batch)
    assert err.message == message


def test_float_to_int_rounds_half_even_numeric_half_away():
    f = pa.record_batch([pa.array([0.5, 1.5, 2.5, -2.5, 2.4999])], names=["f"])
    assert py_values(F.bind_cast(col(0, T.FLOAT8), T.INT4), f) == [0, 2, 2, -2, 2]
    n = pa.record_batch([pa.array([5, 15, 25, -25, 24], pa.int64())], names=["n"])
    assert py_values(F.bind_cast(col(0, T.numeric(3, 1)), T.INT4), n) == [1, 2, 3, -3, 2]


def test_varchar_and_char_targets():
    b = pa.record_batch([pa.array(["abcdef", "ab", None, "é€x"])], names=["s"])
    assert py_values(F.bind_cast(col(0, T.TEXT), T.varchar(3)), b) == ["abc", "ab", None, "é€x"]
    assert py_values(F.bind_cast(col(0, T.TEXT), T.char(4)), b) == ["abcd", "ab", None, "é€x"]
