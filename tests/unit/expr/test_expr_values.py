"""planner.values, planner.temporal and planner.fold: text input/output, value casts, constant
folding."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
from expr_helpers import L, col, raises_sqlstate

from planner import expr as ex
from planner import functions as F
from planner import temporal
from planner import types as T
from planner import values as V
from planner.expr import Call, Func, Interval, Literal


@pytest.mark.parametrize("text,t,value", [
    (" 12 ", T.INT4, 12), ("+12", T.INT4, 12), ("-32768", T.INT2, -32768),
    ("9223372036854775807", T.INT8, 2**63 - 1), (" 1.5 ", T.numeric(None, 1), Decimal("1.5")),
    ("1e3", T.numeric(10, 0), Decimal("1000")), (".5", T.numeric(3, 2), Decimal("0.50")),
    ("1.235", T.numeric(5, 2), Decimal("1.24")), ("-1.235", T.numeric(5, 2), Decimal("-1.24")),
    (" 1.5 ", T.FLOAT8, 1.5), ("-Infinity", T.FLOAT8, -math.inf), ("inf", T.FLOAT4, math.inf),
    (" true ", T.BOOL, True), ("ye", T.BOOL, True), ("f", T.BOOL, False), ("OFF", T.BOOL, False),
    ("0", T.BOOL, False), ("1998-12-01", T.DATE, dt.date(1998, 12, 1)),
    ("2000-01-01 10:00", T.DATE, dt.date(2000, 1, 1)),
    ("1998-12-01 12:01:18.5", T.TIMESTAMP, dt.datetime(1998, 12, 1, 12, 1, 18, 500000)),
    ("1998-12-01T12:01:18", T.TIMESTAMP, dt.datetime(1998, 12, 1, 12, 1, 18)),
    ("2000-01-01 00:00:00+02", T.TIMESTAMPTZ, dt.datetime(1999, 12, 31, 22, tzinfo=dt.timezone.utc)),
    ("2000-01-01 24:00", T.TIMESTAMP, dt.datetime(2000, 1, 2)),
    ("abcdef", T.varchar(3), "abc"), ("ab  ", T.char(4), "ab"),
])
def test_parse_text(text, t, value):
    assert V.parse_text(text, t) == value


@pytest.mark.parametrize("text,t,sqlstate,message", [
    ("12a", T.INT4, "22P02", 'invalid input syntax for type integer: "12a"'),
    ("", T.INT8, "22P02", 'invalid input syntax for type bigint: ""'),
    ("99999999999", T.INT4, "22003", 'value "99999999999" is out of range for type integer'),
    ("40000", T.INT2, "22003", 'value "40000" is out of range for type smallint'),
    ("1e400", T.FLOAT8, "22003", '"1e400" is out of range for type double precision'),
    ("1e-400", T.FLOAT8, "22003", '"1e-400" is out of range for type double precision'),
    ("abc", T.FLOAT4, "22P02", 'invalid input syntax for type real: "abc"'),
    ("1.2.3", T.numeric(5, 2), "22P02", 'invalid input syntax for type numeric: "1.2.3"'),
    ("12345.678", T.numeric(5, 2), "22003", "numeric field overflow"),
    ("maybe", T.BOOL, "22P02", 'invalid input syntax for type boolean: "maybe"'),
    ("xyz", T.DATE, "22007", 'invalid input syntax for type date: "xyz"'),
    ("1998-02-30", T.DATE, "22008", 'date/time field value out of range: "1998-02-30"'),
    ("1998-13-01", T.TIMESTAMP, "22008", 'date/time field value out of range: "1998-13-01"'),
    ("abc", T.TIMESTAMP, "22007", 'invalid input syntax for type timestamp: "abc"'),
    ("abc", T.INTERVAL, "22007", 'invalid input syntax for type interval: "abc"'),
])
def test_parse_text_errors(text, t, sqlstate, message):
    err = raises_sqlstate(sqlstate, V.parse_text, text, t)
    assert err.message == message


@pytest.mark.parametrize("text,iv", [
    ("90 day", Interval(0, 90, 0)), ("1 year 2 mons 3 days 04:05:06.5",
                                     Interval(14, 3, 14706500000)),
    ("-1 day -02:00:00", Interval(0, -1, -7200000000)), ("1.5 days", Interval(0, 1, 43200000000)),
    ("1.5 months", Interval(1, 15, 0)), ("1.5 years", Interval(18, 0, 0)),
    ("1 week", Interval(0, 7, 0)), ("2 years ago", Interval(-24, 0, 0)),
    ("01:02", Interval(0, 0, 3720000000)), ("5", Interval(0, 0, 5000000)),
    ("@ 3 hours", Interval(0, 0, 3 * 3600 * 10**6)), ("1 mon 2 day 3 min", Interval(1, 2, 180000000)),
])
def test_parse_interval(text, iv):
    assert temporal.parse_interval(text) == iv


@pytest.mark.parametrize("value,t,text", [
    (True, T.BOOL, "true"), (False, T.BOOL, "false"), (Decimal("1.50"), T.numeric(5, 2), "1.50"),
    (Decimal("-0.00"), T.numeric(5, 2), "0.00"), (Decimal("0.05"), T.numeric(None, 2), "0.05"),
    (0.1, T.FLOAT8, "0.1"), (1e15, T.FLOAT8, "1e+15"), (123456789012345.0, T.FLOAT8, "123456789012345"),
    (1e-5, T.FLOAT8, "1e-05"), (0.0001, T.FLOAT8, "0.0001"), (-0.0, T.FLOAT8, "-0"),
    (math.nan, T.FLOAT8, "NaN"), (-math.inf, T.FLOAT8, "-Infinity"), (1234567.0, T.FLOAT4, "1.234567e+06"),
    (0.1, T.FLOAT4, "0.1"), (dt.date(5, 1, 1), T.DATE, "0005-01-01"),
    (dt.datetime(2000, 1, 1, 0, 0, 0, 120000), T.TIMESTAMP, "2000-01-01 00:00:00.12"),
    (dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc), T.TIMESTAMPTZ, "2000-01-01 00:00:00+00"),
    (Interval(14, 3, 14706500000), T.INTERVAL, "1 year 2 mons 3 days 04:05:06.5"),
    (Interval(0, -1, -7200000000), T.INTERVAL, "-1 days -02:00:00"),
    (Interval(0, 1, -3600000000), T.INTERVAL, "1 day -01:00:00"),
    (Interval(0, 0, 90000000000), T.INTERVAL, "25:00:00"), (Interval(), T.INTERVAL, "00:00:00"),
    (Interval(-24, 0, 0), T.INTERVAL, "-2 years"), (Interval(1, 2, 180000000), T.INTERVAL,
                                                   "1 mon 2 days 00:03:00"),
])
def test_format_text(value, t, text):
    assert V.format_text(value, t) == text


@pytest.mark.parametrize("value,src,dst,out", [
    (2.5, T.FLOAT8, T.INT4, 2), (3.5, T.FLOAT8, T.INT4, 4), (-2.5, T.FLOAT8, T.INT4, -2),
    (Decimal("2.5"), T.numeric(2, 1), T.INT4, 3), (Decimal("-2.5"), T.numeric(2, 1), T.INT4, -3),
    (True, T.BOOL, T.INT4, 1), (5, T.INT4, T.BOOL, True), (1e20, T.FLOAT8, T.numeric(None, 0),
                                                           Decimal(10**20)),
    (0.1, T.FLOAT8, T.numeric(20, 18), Decimal("0.100000000000000000")),
    (1.0000000000000002, T.FLOAT8, T.numeric(None, 0), Decimal(1)),
    (Decimal("1.50"), T.numeric(3, 2), T.TEXT, "1.50"), (True, T.BOOL, T.TEXT, "true"),
    (dt.date(2000, 1, 1), T.DATE, T.TIMESTAMP, dt.datetime(2000, 1, 1)),
    (dt.datetime(2000, 1, 1, 23), T.TIMESTAMP, T.DATE, dt.date(2000, 1, 1)),
    (dt.datetime(2000, 1, 1), T.TIMESTAMP, T.TIMESTAMPTZ, dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)),
])
def test_cast_value(value, src, dst, out):
    assert V.cast_value(value, src, dst) == out


@pytest.mark.parametrize("value,src,dst,sqlstate,message", [
    (3000000000, T.INT8, T.INT4, "22003", "integer out of range"),
    (32768, T.INT4, T.INT2, "22003", "smallint out of range"),
    (math.nan, T.FLOAT8, T.INT4, "22003", "integer out of range"),
    (Decimal("12345.678"), T.numeric(8, 3), T.numeric(5, 2), "22003", "numeric field overflow"),
    (1e300, T.FLOAT8, T.FLOAT4, "22003", "value out of range: overflow"),
    (1e-300, T.FLOAT8, T.FLOAT4, "22003", "value out of range: underflow"),
])
def test_cast_value_errors(value, src, dst, sqlstate, message):
    err = raises_sqlstate(sqlstate, V.cast_value, value, src, dst)
    assert err.message == message


def test_numeric_field_overflow_detail():
    err = raises_sqlstate("22003", V.cast_value, Decimal("12345.678"), T.numeric(8, 3), T.numeric(5, 2))
    assert err.detail == "A field with precision 5, scale 2 must round to an absolute value less than 10^3."


@pytest.mark.parametrize("a,b,scale", [
    ("1", "3", 20), ("2", "3", 20), ("10", "3", 16), ("100000", "3", 12), ("0.001", "7", 20),
    ("12345678.90", "98765432.10", 20), ("1.00", "3.000000000000000000000", 21),
])
def test_div_scale_is_select_div_scale(a, b, scale):
    da, db = Decimal(a), Decimal(b)
    sa, sb = max(0, -da.as_tuple().exponent), max(0, -db.as_tuple().exponent)
    assert V.div_scale(da, db, sa, sb) == scale


def test_add_interval_clamps_to_month_end():
    assert temporal.add_interval(dt.datetime(2000, 1, 31), Interval(1, 0, 0)) == dt.datetime(2000, 2, 29)
    assert temporal.add_interval(dt.datetime(2000, 2, 29), Interval(12, 0, 0), -1) == dt.datetime(1999, 2, 28)
    assert temporal.add_interval(dt.datetime(2000, 1, 31, 10), Interval(1, 1, 3600 * 10**6)) == \
        dt.datetime(2000, 3, 1, 11)
    raises_sqlstate("22008", temporal.add_interval, dt.datetime(9999, 12, 1), Interval(1, 0, 0))


def test_interval_scale_follows_postgres():
    assert temporal.interval_scale(Interval(1, 0, 0), 2, False) == Interval(2, 0, 0)
    assert temporal.interval_scale(Interval(0, 1, 0), 2, True) == Interval(0, 0, 43200000000)
    assert temporal.interval_scale(Interval(1, 0, 0), 1.5, False) == Interval(1, 15, 0)
    raises_sqlstate("22012", temporal.interval_scale, Interval(0, 1, 0), 0.0, True)


# --- folding ------------------------------------------------------------------------------
I4 = col(0, T.INT4, "i")


def test_fold_constants_bottom_up():
    tree = Call(Func.ADD, (I4, Call(Func.MUL, (L(2), L(3)), T.INT4)), T.INT4)
    assert F.fold_constants(tree) == Call(Func.ADD, (I4, Literal(6, T.INT4)), T.INT4)


def test_fold_leaves_errors_for_run_time():
    tree = Call(Func.DIV, (L(1), L(0)), T.INT4)
    assert F.fold_constants(tree) == tree
    overflow = Call(Func.ADD, (L(2**31 - 1), L(1)), T.INT4)
    assert F.fold_constants(overflow) == overflow


def test_fold_case_prunes_constant_branches():
    gt = F.bind_call(Func.GT, [I4, L(0)])
    case = ex.Case(((Literal(False, T.BOOL), L(1)), (gt, L(2)), (Literal(True, T.BOOL), L(3))),
                   L(4), T.INT4)
    assert F.fold_constants(case) == ex.Case(((gt, L(2)),), L(3), T.INT4)
    only = ex.Case(((Literal(None, T.BOOL), L(1)),), L(4), T.INT4)
    assert F.fold_constants(only) == L(4)


@pytest.mark.parametrize("func,args,value", [
    (Func.AND, (Literal(None, T.BOOL), Literal(False, T.BOOL)), False),
    (Func.OR, (Literal(None, T.BOOL), Literal(True, T.BOOL)), True),
    (Func.AND, (Literal(None, T.BOOL), Literal(True, T.BOOL)), None),
    (Func.COALESCE, (Literal(None, T.INT4), L(2)), 2),
    (Func.GREATEST, (L(1), Literal(None, T.INT4), L(3)), 3),
    (Func.NULLIF, (L(1), L(1)), None),
    (Func.MOD, (L(-7), L(3)), -1), (Func.MOD, (L(7), L(-3)), 1),
    (Func.SUBSTRING, (L("hello"), L(-1), L(3)), "h"), (Func.SUBSTRING, (L("hello"), L(0)), "hello"),
    (Func.LEFT, (L("hello"), L(-2)), "hel"), (Func.RIGHT, (L("hello"), L(-2)), "llo"),
    (Func.POSITION, (L("héllo"), L("l")), 3), (Func.OCTET_LENGTH, (L("héllo"),), 6),
    (Func.TRIM, (L("xxaxx"), L("x")), "a"), (Func.REPLACE, (L("abab"), L("ab"), L("x")), "xx"),
    (Func.ROUND, (L(Decimal("2.5")),), Decimal(3)), (Func.ROUND, (L(2.5),), 2.0),
    (Func.ROUND, (L(Decimal("1234.5")), L(-2)), Decimal(1200)),
    (Func.TRUNC, (L(Decimal("-1.239")), L(2)), Decimal("-1.23")),
    (Func.CEIL, (L(Decimal("-0.5")),), Decimal(0)), (Func.FLOOR, (L(Decimal("-1.5")),), Decimal(-2)),
])
def test_folded_values(func, args, value):
    e = F.bind_call(func, list(args))
    assert isinstance(e, Literal) and e.value == value


def test_folded_in_list_and_is_null():
    assert F.bind_in(L(1), [L(1), L(None)]) == Literal(True, T.BOOL)
    assert F.bind_in(L(2), [L(1), L(None)]) == Literal(None, T.BOOL)
    assert F.bind_in(L(2), [L(1), L(3)], negated=True) == Literal(True, T.BOOL)
    assert F.bind_is_null(L(1), negated=True) == Literal(True, T.BOOL)
