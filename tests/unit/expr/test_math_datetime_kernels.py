"""The batch kernels of the issue-14 math and date/time functions (segment/kernels/
expr_math.py, expr_make_datetime.py) against the pure-Python constant folder
(planner/math_values.py, planner/datetime_values.py) on random rows, and
planner/numeric_math.py on values PostgreSQL 15 printed."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import pyarrow as pa
import pytest
from expr_helpers import col, py_values

from planner import errors, numeric_math
from planner import functions as F
from planner import types as T
from planner.expr import Func, Interval
from planner.fold import evaluate_constant
from segment.kernels import expr_cast as xcast

UTC = dt.timezone.utc
N = 400


def _batch(columns: list[tuple[list, T.SqlType]]) -> pa.RecordBatch:
    return pa.record_batch([xcast.to_arrow(v, t) for v, t in columns],
                           names=[f"c{i}" for i in range(len(columns))])


def _python(v):
    if isinstance(v, pa.MonthDayNano):
        return Interval(v.months, v.days, v.nanoseconds // 1000)
    return v


def _check(func: Func, columns: list[tuple[list, T.SqlType]]):
    """The kernel's values equal the folder's, row by row (NULL rows included)."""
    call = F.bind_call(func, [col(i, t) for i, (_, t) in enumerate(columns)])
    got = [_python(v) for v in py_values(call, _batch(columns))]
    for i, value in enumerate(got):
        args = [vals[i] for vals, _ in columns]
        want = None if None in args else evaluate_constant(call, args)
        if isinstance(want, dt.datetime) and want.tzinfo is not None:
            want = want.astimezone(UTC)
        assert value == want, (func, args, value, want)


def _ts(rng: random.Random, tz: bool = False):
    span = 200 * 365 * 86400 * 10**6  # microseconds of 1900 .. 2100
    t = dt.datetime(1900, 1, 1) + dt.timedelta(microseconds=rng.randrange(0, span))
    t = t.replace(microsecond=rng.choice([0, t.microsecond]))
    return t.replace(tzinfo=UTC) if tz else t


def _iv(rng: random.Random) -> Interval:
    return Interval(rng.randint(-30, 30), rng.randint(-70, 70),
                    rng.randint(-3, 3) * 86_400_000_000 + rng.randint(-10**11, 10**11))


def _maybe_null(values, rng):
    return [None if rng.random() < 0.05 else v for v in values]


def test_age_matches_folder():
    rng = random.Random(1)
    a = _maybe_null([_ts(rng) for _ in range(N)], rng)
    b = _maybe_null([_ts(rng) if rng.random() < 0.7 else a[i] and a[i] + dt.timedelta(
        days=rng.randint(-40, 40)) for i in range(N)], rng)
    _check(Func.AGE, [(a, T.TIMESTAMP), (b, T.TIMESTAMP)])
    _check(Func.AGE, [([x and x.replace(tzinfo=UTC) for x in a], T.TIMESTAMPTZ),
                      ([x and x.replace(tzinfo=UTC) for x in b], T.TIMESTAMPTZ)])


@pytest.mark.parametrize("func", [Func.JUSTIFY_DAYS, Func.JUSTIFY_HOURS, Func.JUSTIFY_INTERVAL])
def test_justify_matches_folder(func):
    rng = random.Random(2)
    _check(func, [(_maybe_null([_iv(rng) for _ in range(N)], rng), T.INTERVAL)])


def test_date_bin_matches_folder():
    rng = random.Random(3)
    strides = [Interval(0, rng.randint(0, 3), rng.randint(1, 5 * 3600) * 10**6) for _ in range(N)]
    src = _maybe_null([_ts(rng) for _ in range(N)], rng)
    origin = [_ts(rng) for _ in range(N)]
    _check(Func.DATE_BIN, [(strides, T.INTERVAL), (src, T.TIMESTAMP), (origin, T.TIMESTAMP)])


def test_make_functions_match_folder():
    rng = random.Random(4)
    ys = [rng.randint(1, 9999) for _ in range(N)]
    ms = [rng.randint(1, 12) for _ in range(N)]
    ds = [rng.randint(1, 28) for _ in range(N)]
    hs, mis = [rng.randint(0, 23) for _ in range(N)], [rng.randint(0, 59) for _ in range(N)]
    secs = [rng.choice([0.0, 59.9999996, rng.random() * 60]) for _ in range(N)]
    _check(Func.MAKE_DATE, [(ys, T.INT4), (ms, T.INT4), (ds, T.INT4)])
    for f in (Func.MAKE_TIMESTAMP, Func.MAKE_TIMESTAMPTZ):
        _check(f, [(ys, T.INT4), (ms, T.INT4), (ds, T.INT4), (hs, T.INT4), (mis, T.INT4),
                   (secs, T.FLOAT8)])
    ints = [[rng.randint(-10**9, 10**9) for _ in range(N)] for _ in range(4)] + [
        [rng.randint(-10**6, 10**6) for _ in range(N)] for _ in range(2)]
    _check(Func.MAKE_INTERVAL, [(v, T.INT4) for v in ints] + [
        ([rng.uniform(-1e6, 1e6) for _ in range(N)], T.FLOAT8)])


def test_make_date_errors():
    batch = _batch([([2023, 2023], T.INT4), ([1, 2], T.INT4), ([31, 30], T.INT4)])
    call = F.bind_call(Func.MAKE_DATE, [col(i, T.INT4) for i in range(3)])
    with pytest.raises(errors.QueryError, match="date field value out of range: 2023-02-30"):
        py_values(call, batch)


def test_width_bucket_and_div_match_folder():
    rng = random.Random(5)
    ops = [rng.uniform(-20, 20) for _ in range(N)]
    lows = [rng.choice([-10.0, 0.0, 5.0]) for _ in range(N)]
    highs = [lo + rng.choice([-7.5, 3.0, 12.25]) for lo in lows]
    counts = [rng.randint(1, 9) for _ in range(N)]
    _check(Func.WIDTH_BUCKET, [(ops, T.FLOAT8), (lows, T.FLOAT8), (highs, T.FLOAT8),
                               (counts, T.INT4)])
    dec = lambda v: Decimal(round(v, 3)).quantize(Decimal("0.001"))  # noqa: E731
    _check(Func.WIDTH_BUCKET, [([dec(v) for v in ops], T.numeric(12, 3)),
                               ([dec(v) for v in lows], T.numeric(12, 3)),
                               ([dec(v) for v in highs], T.numeric(12, 3)), (counts, T.INT4)])
    _check(Func.DIV_INT, [([dec(v) for v in ops], T.numeric(12, 3)),
                          ([dec(v) or Decimal("0.5") for v in lows], T.numeric(12, 3))])


def test_timestamp_series():
    """generate_series over timestamps, as arrays: calendar months added step after step."""
    starts = [dt.datetime(2020, 1, 31), dt.datetime(2020, 3, 1), None, dt.datetime(2021, 1, 1)]
    stops = [dt.datetime(2020, 6, 30), dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1),
             dt.datetime(2021, 1, 1)]
    steps = [Interval(1, 0, 0), Interval(0, -20, 0), Interval(0, 1, 0), Interval(1, 0, 0)]
    call = F.bind_call(Func.SERIES, [col(0, T.TIMESTAMP), col(1, T.TIMESTAMP),
                                     col(2, T.INTERVAL)])
    got = py_values(call, _batch([(starts, T.TIMESTAMP), (stops, T.TIMESTAMP),
                                  (steps, T.INTERVAL)]))
    assert got[0] == [dt.datetime(2020, m, d) for m, d in
                      ((1, 31), (2, 29), (3, 29), (4, 29), (5, 29), (6, 29))]
    assert got[1] == [dt.datetime(2020, 3, 1), dt.datetime(2020, 2, 10),
                      dt.datetime(2020, 1, 21), dt.datetime(2020, 1, 1)]
    assert got[2] is None and got[3] == [dt.datetime(2021, 1, 1)]


@pytest.mark.parametrize("fn, args, text", [
    (numeric_math.ln, (Decimal("2.0"), 1), "0.6931471805599453"),
    (numeric_math.ln, (Decimal("1.0001"), 4), "0.00009999500033330834"),
    (numeric_math.ln, (Decimal("0.001"), 3), "-6.9077552789821371"),
    (numeric_math.log, (Decimal(10), 0, Decimal("0.001"), 3), "-3.0000000000000000"),
    (numeric_math.log, (Decimal(2), 0, Decimal(8), 0), "3.0000000000000000"),
    (numeric_math.power, (Decimal("2.0"), 1, Decimal(3), 0), "8.0000000000000000"),
    (numeric_math.power, (Decimal("2.5"), 1, Decimal("0.5"), 1), "1.5811388300841897"),
    (numeric_math.power, (Decimal(-2), 0, Decimal(3), 0), "-8.0000000000000000"),
    (numeric_math.power, (Decimal(2), 0, Decimal(-3), 0), "0.1250000000000000"),
])
def test_numeric_math_scales(fn, args, text):
    assert str(fn(*args)) == text


def test_numeric_math_errors():
    with pytest.raises(errors.QueryError, match="logarithm of zero"):
        numeric_math.ln(Decimal(0), 0)
    with pytest.raises(errors.QueryError, match="zero raised to a negative power"):
        numeric_math.power(Decimal(0), 0, Decimal(-1), 0)
    with pytest.raises(errors.NumericOutOfRange):
        numeric_math.power(Decimal("1.1"), 1, Decimal(1000), 0)
    with pytest.raises(errors.DivisionByZero):
        numeric_math.log(Decimal(1), 0, Decimal(10), 0)


def test_width_bucket_thresholds_match_folder():
    """The binary search over unsorted thresholds too, and over arrays per row."""
    rng = random.Random(6)
    ops = _maybe_null([rng.choice([rng.uniform(-5, 15), float("nan")]) for _ in range(N)], rng)
    arrays = [tuple(sorted(rng.uniform(0, 10) for _ in range(rng.randint(0, 6))))
              if rng.random() < 0.7 else tuple(rng.uniform(0, 10) for _ in range(rng.randint(0, 6)))
              for _ in range(N)]
    _check(Func.WIDTH_BUCKET, [(ops, T.FLOAT8), (arrays, T.array_of(T.FLOAT8))])
    ints = [rng.randint(-3, 12) for _ in range(N)]
    int_arrays = [tuple(rng.randint(0, 10) for _ in range(rng.randint(0, 5))) for _ in range(N)]
    _check(Func.WIDTH_BUCKET, [(ints, T.INT4), (int_arrays, T.array_of(T.INT4))])
