"""Kernels of time, timetz, interval and infinite dates: interval order keys (exact over the
whole month_day_nano range, equal where PostgreSQL's intervals are), +/-infinity in
batches, the time of day's text input and precision, and timetz's packed int64 (ordered
as PostgreSQL's timetz_cmp)."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from planner import errors, temporal, time_values, timestamp_text
from planner import values as V
from planner import types as T
from planner.temporal import Interval
from segment.kernels import expr_cast, expr_timetz, infinite, interval_order

IV = pa.month_day_nano_interval()


def _ivs(values):
    return pa.array([None if v is None else pa.MonthDayNano([v[0], v[1], v[2] * 1000])
                     for v in values], IV)


def _span(v):
    return (v[0] * 30 + v[1]) * temporal.USECS_PER_DAY + v[2]


def test_order_key_sorts_and_equals_as_the_span():
    rng = random.Random(7)
    values = [(0, 0, 0), (1, 0, 0), (0, 30, 0), (0, 0, 30 * temporal.USECS_PER_DAY),
              (-2**31, -2**31, -(2**63 // 1000)), (2**31 - 1, 2**31 - 1, 2**63 // 1000 - 1)]
    values += [(rng.randint(-2**31, 2**31 - 1), rng.randint(-2**31, 2**31 - 1),
                rng.randint(-2**62, 2**62) // 1000) for _ in range(300)]
    keys = interval_order.order_key(_ivs(values)).to_pylist()
    spans = [_span(v) for v in values]
    assert sorted(range(len(values)), key=lambda i: keys[i]) == \
        sorted(range(len(values)), key=lambda i: (spans[i], keys[i]))
    for i in range(len(values)):
        for j in (0, 1, 2, 3):
            assert (keys[i] == keys[j]) == (spans[i] == spans[j])


def test_order_key_nulls_and_offsets():
    arr = _ivs([(1, 0, 0), None, (0, 30, 0)])
    keys = interval_order.order_key(arr.slice(1))
    assert keys[0].as_py() is None and keys[1].as_py() == interval_order.order_key(arr)[0].as_py()


def test_keyed_round_trips_and_orders():
    arr = _ivs([(0, 30, 5), None, (1, 0, 0), (-1, 2, -3)]).slice(1)
    keyed = interval_order.keyed(arr)
    assert interval_order.unkeyed(keyed).equals(arr)
    smallest = pa.array([pc.min(keyed).as_py()], pa.binary())
    assert interval_order.unkeyed(smallest).to_pylist() == [pa.MonthDayNano([-1, 2, -3000])]


def test_infinite_rows_found_kept_and_printed():
    days = pa.array([2**31 - 1, 0, None, -2**31], pa.int32()).view(pa.date32())
    inf = infinite.infinities(days)
    assert inf[0].tolist() == [True, False, False, False]
    assert inf[1].tolist() == [False, False, False, True]
    ts = infinite.cast(days, pa.timestamp("us"))
    assert ts.view(pa.int64()).to_pylist() == [2**63 - 1, 0, None, -2**63]
    assert expr_cast.to_text(ts, T.TIMESTAMP).to_pylist() == \
        ["infinity", "1970-01-01 00:00:00", None, "-infinity"]
    assert infinite.isfinite(days).to_pylist() == [False, True, None, False]
    assert infinite.infinities(pa.array([0], pa.int32()).view(pa.date32())) is None


def test_infinite_python_values_order_against_dates():
    assert temporal.NEG_INFINITY < dt.date(1, 1, 1) < temporal.INFINITY
    assert dt.datetime(9999, 12, 31) < temporal.INFINITY
    assert max([dt.date(2020, 1, 1), temporal.INFINITY, temporal.NEG_INFINITY]) is temporal.INFINITY
    arr = infinite.with_infinities([dt.date(2020, 1, 1), temporal.INFINITY, None], T.DATE)
    assert arr.view(pa.int32()).to_pylist() == [18262, 2**31 - 1, None]


@pytest.mark.parametrize(("text", "micros"), [
    ("12:34", 45240 * 10**6), (" 1:02:03.5 pm ", 46923_500_000), ("12:00 am", 0),
    ("2020-01-01 23:59:59.9999994", 86399_999_999), ("allballs", 0), ("07:08:09+05", 25689 * 10**6)])
def test_parse_time(text, micros):
    assert time_values.time_micros(time_values.parse_time(text)) == micros


@pytest.mark.parametrize(("text", "state"), [("25:00", "22008"), ("12:60", "22008"),
                                             ("13:00 pm", "22008"), ("abc", "22007"),
                                             ("24:00", "0A000"), ("23:59:60", "0A000")])
def test_parse_time_errors(text, state):
    with pytest.raises(errors.QueryError) as e:
        time_values.parse_time(text)
    assert e.value.sqlstate == state


def test_vectorized_time_input_matches_the_parser():
    texts = pa.array(["00:00", "23:59:59.999999", None, " 7:5:3.25 ", "12:34:56"])
    fast = expr_cast.fast_time(texts)
    assert fast is not None
    slow = [None if s is None else time_values.parse_time(s) for s in texts.to_pylist()]
    assert fast.to_pylist() == slow
    assert expr_cast.fast_time(pa.array(["24:00"])) is None
    assert expr_cast.fast_time(pa.array(["1:00 pm"])) is None


def test_time_arith_wraps_and_reads_only_the_time_part():
    t = time_values.parse_time("23:30")
    assert time_values.time_arith(True, t, Interval(1, 2, 3600 * 10**6)) == dt.time(0, 30)
    assert time_values.time_arith(False, dt.time(0, 15), Interval(0, 0, 3600 * 10**6)) == dt.time(23, 15)
    assert time_values.time_arith(False, dt.time(1), dt.time(2)) == Interval(0, 0, -3600 * 10**6)
    assert time_values.to_time(Interval(0, 0, -1), T.Kind.INTERVAL) == dt.time(23, 59, 59, 999999)


def test_timetz_packing_orders_as_postgres():
    rng = random.Random(3)
    values = [time_values.TimeTz(local + zone * 10**6, zone)
              for local, zone in [(rng.randrange(temporal.USECS_PER_DAY),
                                   rng.randint(-57599, 57599)) for _ in range(500)]]
    values += [time_values.parse_timetz(s) for s in ("12:00+02", "10:00+00", "11:00+01",
                                                  "00:00-15:59:59", "23:59:59.999999+15:59:59")]
    packed = [v.pack() for v in values]
    assert sorted(range(len(values)), key=lambda i: values[i]) == \
        sorted(range(len(values)), key=lambda i: packed[i])
    assert all(time_values.TimeTz.unpack(p) == v for p, v in zip(packed, values))
    assert len(set(packed)) == len(set(values))


def test_timetz_kernels_round_trip_text():
    texts = ["12:34:56.5+05:30", None, "00:00-08", "23:59:59.999999+15:59:59", "10:00"]
    arr = pa.array([None if s is None else time_values.parse_timetz(s).pack() for s in texts],
                   pa.int64())
    assert expr_timetz.to_text(arr).to_pylist() == [
        "12:34:56.5+05:30", None, "00:00:00-08", "23:59:59.999999+15:59:59", "10:00:00+00"]
    assert expr_cast.from_text(expr_timetz.to_text(arr), T.TIMETZ).equals(arr)


@pytest.mark.parametrize(("text", "p", "out"), [
    ("12:34:56.789", 1, "12:34:56.8"), ("12:34:56.45", 1, "12:34:56.5"),
    ("00:00:00.004999", 2, "00:00:00"), ("12:34:56.5", 0, "12:34:57")])
def test_time_precision_rounds_half_up(text, p, out):
    t = T.SqlType(T.Kind.TIME, precision=p)
    assert time_values.format_time(time_values.round_time(time_values.parse_time(text), p)) == out
    arr = expr_cast.round_time(pa.array([time_values.parse_time(text)], pa.time64("us")), p)
    assert time_values.format_time(arr[0].as_py()) == out
    assert t.typmod == p and t.sql() == f"time({p}) without time zone"


@pytest.mark.parametrize(("text", "p", "out"), [
    ("1999-12-31 23:59:59.5", 0, "1999-12-31 23:59:59"),   # half away from zero from 2000
    ("1969-12-31 23:59:59.5", 0, "1969-12-31 23:59:59"),
    ("2000-01-01 00:00:00.5", 0, "2000-01-01 00:00:01"),
    ("2020-01-01 12:00:00.125", 2, "2020-01-01 12:00:00.13"),
    ("infinity", 1, "infinity")])
def test_timestamp_precision_rounds_as_postgres(text, p, out):
    t = T.SqlType(T.Kind.TIMESTAMP, precision=p)
    v = temporal.round_timestamp(timestamp_text.parse_timestamp(text, T.TIMESTAMP), p)
    assert V.format_text(v, T.TIMESTAMP) == out
    arr = expr_cast.to_arrow([timestamp_text.parse_timestamp(text, T.TIMESTAMP)], T.TIMESTAMP)
    assert expr_cast.to_text(expr_cast.round_fraction(arr, t), T.TIMESTAMP).to_pylist() == [out]
    assert t.sql() == f"timestamp({p}) without time zone"
