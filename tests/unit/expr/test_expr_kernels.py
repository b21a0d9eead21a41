"""The numba kernels of segment/kernels/expr_kernels.py against Python arithmetic on random
inputs, and the vectorized paths that use them against the pure-Python value layer."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from expr_helpers import L, col, py_values

from planner import functions as F
from planner import temporal
from planner import types as T
from planner import values as V
from planner.expr import Func, Interval
from segment.kernels import expr_cast
from segment.kernels import expr_kernels as xk

RNG = random.Random(20240601)


def words(values):
    lo = np.array([v & (2**64 - 1) for v in values], dtype=np.uint64).view(np.int64)
    hi = np.array([v >> 64 for v in values], dtype=np.int64)
    return lo, hi


def reference_divide(x: int, k: int, y: int, mode: int) -> int:
    x *= 10**k
    q, r = abs(x) // abs(y), abs(x) % abs(y)
    negative = (x < 0) != (y < 0)
    if mode == xk.MODE_MOD:
        return -r if x < 0 else r
    up = r and ((mode == xk.MODE_HALF_AWAY and 2 * r >= abs(y)) or (mode == xk.MODE_FLOOR and negative)
                or (mode == xk.MODE_CEIL and not negative))
    q += 1 if up else 0
    return -q if negative else q


@pytest.mark.parametrize("k", [0, 1, 7, 16, 19, 25])
@pytest.mark.parametrize("mode", [xk.MODE_TRUNC, xk.MODE_HALF_AWAY, xk.MODE_FLOOR, xk.MODE_CEIL,
                                  xk.MODE_MOD])
def test_divide128_matches_python(k, mode):
    a = [RNG.randint(-10**(36 - k), 10**(36 - k)) for _ in range(500)] + [0, 1, -1, 5, -5, 10**(36 - k)]
    b = [RNG.choice([1, -1, 2, -3, 7, 10**min(k, 18), 2**63 - 1, -2**63, RNG.randint(1, 2**62)])
         for _ in a]
    lo, hi = words(a)
    out_lo, out_hi = np.empty(len(a), np.int64), np.empty(len(a), np.int64)
    status = xk.divide128(lo, hi, k, np.array(b, np.int64), np.ones(len(a), bool), mode, out_lo, out_hi)
    assert status == xk.DIVIDE_OK
    got = [int(h) * 2**64 + int(lw) for lw, h in zip(out_lo.view(np.uint64), out_hi)]
    assert got == [reference_divide(x, k, y, mode) for x, y in zip(a, b)]


def test_divide128_reports_zero_and_overflow():
    lo, hi = words([10**30, 7])
    out = np.empty(2, np.int64), np.empty(2, np.int64)
    assert xk.divide128(lo, hi, 0, np.array([3, 0]), np.array([True, True]), 1, *out) == xk.DIVIDE_BY_ZERO
    assert xk.divide128(lo, hi, 0, np.array([3, 0]), np.array([True, False]), 1, *out) == xk.DIVIDE_OK
    assert xk.divide128(lo, hi, 10, np.array([1]), np.array([True, True]), 1, *out) == xk.DIVIDE_OVERFLOW


@pytest.mark.parametrize("mode", [xk.MODE_TRUNC, xk.MODE_HALF_AWAY, xk.MODE_FLOOR, xk.MODE_CEIL,
                                  xk.MODE_MOD])
def test_divide64_matches_python(mode):
    a = [RNG.randint(-2**62, 2**62) for _ in range(1000)] + [0, 7, -7, 2**63 - 1, -2**63 + 1]
    b = [RNG.choice([1, -1, 2, -2, 3, 10, RNG.randint(-10**9, 10**9) or 1]) for _ in a]
    out = np.empty(len(a), np.int64)
    assert xk.divide64(np.array(a, np.int64), np.array(b, np.int64), np.ones(len(a), bool), mode,
                       out) == xk.DIVIDE_OK
    assert out.tolist() == [reference_divide(x, 0, y, mode) for x, y in zip(a, b)]


@pytest.mark.parametrize("scale", [0, 1, 2, 6, 16, 20, 38])
def test_format_numeric_matches_decimal(scale):
    values = [0, 1, -1, 9, -10, 10**19, 10**19 - 1, -(10**19), 2**63 - 1, -2**63, 10**38 - 1, -(10**38 - 1)]
    values += [RNG.randint(-10**38 + 1, 10**38 - 1) for _ in range(300)]
    values += [RNG.randint(-10**6, 10**6) for _ in range(300)]
    lo, hi = words(values)
    offsets, data = xk.format_numeric(lo, hi, np.ones(len(values), bool), scale, True)
    text = bytes(data)
    got = [text[offsets[i]:offsets[i + 1]].decode() for i in range(len(values))]
    assert got == [V.format_text(V.DEC.scaleb(Decimal(v), -scale), T.numeric(None, scale))
                   for v in values]


def test_calendar_kernels_match_python():
    days = [RNG.randint(-700000, 2900000) for _ in range(400)] + [0, -1, 11016, 11017, 10956]
    stamps = [dt.datetime(1970, 1, 1) + dt.timedelta(days=d, microseconds=RNG.randint(0, 86399999999))
              for d in days]
    months = [RNG.randint(-1200, 1200) for _ in days]
    us = np.array([(s - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1) for s in stamps], np.int64)
    out = np.empty(len(us), np.int64)
    assert xk.add_interval(us, np.array(months, np.int64), np.array([3], np.int64),
                           np.array([-5], np.int64), np.ones(len(us), bool), out, -2**62)
    want = [temporal.add_interval(s, Interval(m, 3, -5)) for s, m in zip(stamps, months)]
    assert [dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(v)) for v in out] == want
    for unit, fn in ((1, lambda s: s.replace(day=1)), (2, lambda s: s.replace(month=(s.month - 1) // 3 * 3 + 1, day=1)),
                     (3, lambda s: s.replace(month=1, day=1)), (4, lambda s: s.replace(year=s.year - s.year % 10, month=1, day=1)),
                     (5, lambda s: s.replace(year=(s.year - 1) // 100 * 100 + 1, month=1, day=1)),
                     (6, lambda s: s.replace(year=(s.year - 1) // 1000 * 1000 + 1, month=1, day=1))):
        xk.trunc_micros(us, np.ones(len(us), bool), unit, out)
        got = [dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(v)) for v in out]
        assert got == [fn(s).replace(hour=0, minute=0, second=0, microsecond=0) for s in stamps]


def test_numeric_division_on_many_rows_matches_decimal():
    """Each quotient at PostgreSQL's select_div_scale for its operands (planner.values
    div_scale), rounded half away from zero: the digits printed, not just the value."""
    V.DEC.prec = 200
    a = [Decimal(RNG.choice([-1, 1]) * RNG.randint(10**9, 10**13)).scaleb(-2)
         for _ in range(3000)]
    b = [Decimal(RNG.choice([RNG.randint(1, 10**6), -RNG.randint(1, 10**15)])).scaleb(-2) for _ in a]
    a += [Decimal("0.00"), Decimal("-1.00"), Decimal("99.99"), Decimal("2.00")]
    b += [Decimal("3.00"), Decimal("7.00"), Decimal("-0.07"), Decimal("0.03")]
    batch = pa.record_batch([expr_cast.to_arrow(a, T.numeric(15, 2)), expr_cast.to_arrow(b, T.numeric(17, 2))],
                            names=["a", "b"])
    e = F.bind_call(Func.DIV, [col(0, T.numeric(15, 2)), col(1, T.numeric(17, 2))])
    got = py_values(e, batch)
    want = [V.DEC.quantize(V.DEC.divide(x, y), Decimal(1).scaleb(-V.div_scale(x, y, 2, 2)))
            for x, y in zip(a, b)]
    assert [str(v) for v in got] == [str(v) for v in want]


def test_float_text_band_rows():
    values = [1.5e-7, 2.5e-5, 1e-4, 1.2345e10, 9.99999e14, 1e15, 123.25, -4.5e12, 5e-324, 1e-310]
    batch = pa.record_batch([pa.array(values)], names=["f"])
    assert py_values(F.bind_cast(col(0, T.FLOAT8), T.TEXT), batch) == [V.format_float(v) for v in values]
    f4 = [1.5e-7, 1234567.0, 98765432.0, 1.5e9, 12345.0]
    batch = pa.record_batch([pa.array(f4, pa.float32())], names=["r"])
    want = [V.format_float(v, True) for v in pa.array(f4, pa.float32()).to_pylist()]
    assert py_values(F.bind_cast(col(0, T.FLOAT4), T.TEXT), batch) == want


def test_month_arithmetic_on_many_rows_matches_python():
    base = [dt.datetime(2000, 1, 31) + dt.timedelta(days=RNG.randint(-40000, 40000), seconds=RNG.randint(0, 86399))
            for _ in range(2000)]
    batch = pa.record_batch([pa.array(base, pa.timestamp("us"))], names=["ts"])
    for text in ("1 month", "-13 months 2 days", "1 year -1 second", "25 months 1 day 00:00:01"):
        iv = temporal.parse_interval(text)
        e = F.bind_call(Func.ADD, [col(0, T.TIMESTAMP), L(iv)])
        assert py_values(e, batch) == [temporal.add_interval(s, iv) for s in base]
