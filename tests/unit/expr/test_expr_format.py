"""Formatting functions: the vectorized to_char kernel agrees with the one-value formatter,
and known PostgreSQL 15 outputs of to_char, to_date, to_timestamp and to_number."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import pyarrow as pa
import pytest

from planner import errors
from planner import types as T
from planner.expr import Call, ColumnRef, Func, Interval, Literal
from planner.format_input import date2j, j2date, to_date, to_timestamp
from planner.format_values import to_char_value
from planner.formatting import parse_datetime_template
from planner.number_format import format_number
from planner.number_input import to_number
from segment.expr import evaluate

TEMPLATES = [
    "YYYY-MM-DD HH24:MI:SS.US", "Y,YYY YYY YY Y IYYY IYY IY I",
    "MONTH Month month MON Mon mon FMMonth|", "DAY Day day DY Dy dy FMDay|TMDay|",
    "DD DDD D ID IDDD WW W IW J CC Q", "HH HH12 HH24 MI SS MS US FF1 FF2 FF3 FF4 FF5 FF6 SSSS",
    "AM pm A.M. p.m. AD bc A.D. b.c.", "DDth DDTH MMth Jth Yth YYYYth Qth IDDDth Y,YYYth",
    "FMDD FMMM FMHH24 FMYYYY FMCC FMDDD FMWW", "RM rm FMRM", "TZ tz OF TZH:TZM FMOF",
    '"quoted YYYY" \\"DD\\" 日本', "FX", "",
]
INTERVAL_TEMPLATES = [
    "YYYY MM DD HH24 HH HH12 MI SS MS US SSSS FF1 FF2", "Y,YYY YYY YY Y CC Q WW W DDD RM rm FMRM",
    "FMHH24:FMMI FMSS HH24th AM pm Qth Y,YYYth DDDth", "YYYYth MMTH",
    "IYYY IYY IY I IW IDDD J FMIYYY IWth",
]


def _kernel(values, t, fmt):
    arr = pa.array(values, t.arrow_type()) if t.kind is not T.Kind.INTERVAL else pa.array(
        [None if v is None else pa.MonthDayNano([v.months, v.days, v.micros * 1000])
         for v in values], pa.month_day_nano_interval())
    e = Call(Func.TO_CHAR, (ColumnRef(0, t), Literal(fmt, T.TEXT)), T.TEXT)
    return evaluate(e, pa.record_batch([arr], names=["x"])).to_pylist()


def _timestamps(tz: bool):
    rng = random.Random(7)
    out = [dt.datetime(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28),
                       rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59),
                       rng.randint(0, 999999)) for _ in range(200)]
    out += [dt.datetime(2024, 2, 29), dt.datetime(2020, 12, 31, 12), dt.datetime(2021, 1, 3),
            dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None]
    return [v.replace(tzinfo=dt.timezone.utc) if tz and v is not None else v for v in out]


@pytest.mark.parametrize("fmt", TEMPLATES)
@pytest.mark.parametrize("t", [T.TIMESTAMP, T.TIMESTAMPTZ])
def test_timestamp_kernel_matches_one_value_formatter(t, fmt):
    values = _timestamps(t.kind is T.Kind.TIMESTAMPTZ)
    want = [None if v is None else to_char_value(v, t, fmt) for v in values]
    assert _kernel(values, t, fmt) == want


@pytest.mark.parametrize("fmt", INTERVAL_TEMPLATES)
def test_interval_kernel_matches_one_value_formatter(fmt):
    rng = random.Random(3)
    values = [Interval(rng.randint(-300, 300), rng.randint(-100, 100),
                       rng.randint(-10**12, 10**12)) for _ in range(200)]
    values += [Interval(0, 0, 0), Interval(12, 0, 0), Interval(-12, 0, 0), None]
    want = [None if v is None else to_char_value(v, T.INTERVAL, fmt) for v in values]
    assert _kernel(values, T.INTERVAL, fmt) == want


def test_timestamp_outputs_as_postgresql():
    ts = dt.datetime(2024, 2, 29, 13, 4, 5, 123456)
    f = lambda fmt: to_char_value(ts, T.TIMESTAMP, fmt)  # noqa: E731
    assert f("Day, DD Month YYYY HH12:MI:SS.MS PM") == \
        "Thursday , 29 February  2024 01:04:05.123 PM"
    assert f("FMDay FMDDth FMMonth") == "Thursday 29th February"
    assert f("IYYY-IW-ID DDD J") == "2024-09-4 060 2460370"
    assert f("TZ|OF") == "|+00"
    assert to_char_value(ts.replace(tzinfo=dt.timezone.utc), T.TIMESTAMPTZ, "TZ OF") == "UTC +00"
    assert f("") is None


def test_intervals_as_postgresql():
    with pytest.raises(errors.QueryError) as e:
        to_char_value(Interval(0, 1, 0), T.INTERVAL, "Day")
    assert e.value.sqlstate == "22007"
    # PostgreSQL's date arithmetic over the parts (year 0, month 0, day 0)
    assert to_char_value(Interval(0, 0, 0), T.INTERVAL, "IYYY IW J") == "-001 48 1721028"
    assert to_char_value(Interval(-14, 0, 0), T.INTERVAL, "IYYY") == "-0002"


@pytest.mark.parametrize("value, kind, fmt, want", [
    (485, "int4", "999", " 485"), (-485, "int4", "999", "-485"),
    (1485, "int4", "9,999", " 1,485"), (12345, "int4", "999", " ###"),
    (485, "int4", "FM999th", "485th"), (3999, "int4", "RN", "MMMCMXCIX".rjust(15)),
    (Decimal("0.5"), "numeric", "9", " 1"), (Decimal("-0.1"), "numeric", "FM9.9", "-.1"),
    (Decimal("148.5"), "numeric", "999.999", " 148.500"),
    (Decimal("0.1"), "numeric", "0.9", " 0.1"),
    (Decimal("-12.345"), "numeric", "FM999.99MI", "12.35-"),
    (Decimal("12.3"), "numeric", "9.99EEEE", " 1.23e+01"),
    (Decimal("-1234.5678"), "numeric", "9G999G999D9PR", "    <1,234.6>"),
    (1.5, "float8", "9", " 2"), (2.5, "float8", "9", " 2"),
    (float("inf"), "float8", "9999.99", " ####.##"), (float("nan"), "float8", "9999", "  NaN"),
    (1e14, "float8", "999999999999999.99", " 100000000000000"),
    (12, "int4", "", ""), (-1, "int4", "S0000", "-0001"), (5, "int4", "99V99", "  500"),
])
def test_numbers_as_postgresql(value, kind, fmt, want):
    assert format_number(value, kind, fmt) == want


@pytest.mark.parametrize("fmt", ["9.9.9", "9EEEE9", "S9S", "9PR9", "FM9EEEE", "99V9.9"])
def test_number_template_errors(fmt):
    with pytest.raises(errors.QueryError) as e:
        format_number(1, "int4", fmt)
    assert e.value.sqlstate == "42601"


def test_reading_dates_and_timestamps():
    assert to_date("05 Dec 2000", "DD Mon YYYY") == dt.date(2000, 12, 5)
    assert to_date("2019-W01-1", 'IYYY-"W"IW-ID') == dt.date(2018, 12, 31)
    assert to_date("99-1-1", "YY-MM-DD") == dt.date(1999, 1, 1)
    assert to_date("2012 366", "YYYY DDD") == dt.date(2012, 12, 31)
    assert to_date("2000 Junk", "YYYY Mon") == dt.date(2000, 6, 1)  # 'Jun' is a prefix
    utc = dt.timezone.utc
    assert to_timestamp("2011 12 18 11:38 PM", "YYYY MM DD HH:MI AM") == \
        dt.datetime(2011, 12, 18, 23, 38, tzinfo=utc)
    assert to_timestamp("2000-01-05 +05:30", "YYYY-MM-DD TZH:TZM") == \
        dt.datetime(2000, 1, 4, 18, 30, tzinfo=utc)
    for text, fmt, sqlstate in [("2023-02-29", "YYYY-MM-DD", "22008"),
                                ("2000-xx-01", "YYYY-MM-DD", "22007"),
                                ("13:00 PM", "HH:MI AM", "22007"),
                                ("2000 UTC", "YYYY TZ", "0A000"),
                                ("10000-01-01", "YYYY-MM-DD", "0A000")]:
        with pytest.raises(errors.QueryError) as e:
            to_date(text, fmt)
        assert e.value.sqlstate == sqlstate, text


def test_julian_days_round_trip():
    for y, m, d in [(2000, 1, 1), (1, 1, 1), (0, 12, 31), (-4713, 11, 24), (9999, 12, 31)]:
        assert j2date(date2j(y, m, d)) == (y, m, d)
    assert date2j(2000, 1, 1) == 2451545


def test_reading_numbers():
    assert to_number("12,454.8-", "99G999D9S") == (Decimal("-12454.8"), 1)
    assert to_number("<123>", "999PR") == (Decimal("-123"), 0)
    assert to_number("-12.345", "99.99") == (Decimal("-12.34"), 2)
    assert to_number("12", "99V9") == (Decimal("1.2000000000000000"), 16)
    with pytest.raises(errors.QueryError) as e:
        to_number("abc", "999")
    assert e.value.sqlstate == "22P02"


def test_template_parsing():
    nodes = parse_datetime_template('FMHH24th "x\\"y" \\"Q')
    assert [(n.key, n.text) for n in nodes][:1] == [("HH24", "HH24")]
    assert nodes[0].suffix == {"FM", "th"}
    assert "".join(n.text for n in nodes[1:] if n.key is None) == ' x"y "'
