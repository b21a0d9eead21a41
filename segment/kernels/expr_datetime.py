"""Dates, timestamps and intervals over batches, computed as PostgreSQL computes them.

date is date32 (days), timestamp[tz] int64 microseconds (timestamptz in UTC), interval
month_day_nano with PostgreSQL's three separate parts. Adding an interval moves months on
the calendar first (clamping to the month's last day: 2000-01-31 + 1 month = 2000-02-29),
then days, then microseconds. EXTRACT returns the scaled integers of its numeric type
(seconds at scale 6), date_part the same as float8, date_trunc floors to the unit (weeks
start on Monday, centuries on year 1 of the century, as PostgreSQL).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, temporal
from planner.expr import Call, Func, Interval
from planner.types import Kind
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_kernels as xk
from segment.kernels import expr_numeric as xn
from segment.kernels import expr_timetz as xtz
from segment.kernels import infinite, interval_order

US_PER_DAY = 86_400_000_000
MIN_TIMESTAMP = -210_866_803_200_000_000  # 4714-11-24 BC, PostgreSQL's lower bound
MAX_DAYS = (2**63 - 1) // US_PER_DAY
_IV_DTYPE = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])
_TRUNC_UNITS = {"month": 1, "quarter": 2, "year": 3, "decade": 4, "century": 5, "millennium": 6}
_DAY_UNITS = {"microseconds": 1, "milliseconds": 1000, "second": 10**6, "minute": 60 * 10**6,
              "hour": 3600 * 10**6, "day": US_PER_DAY}


# EXTRACT fields that are +/-Infinity at +/-infinity (PostgreSQL 15); the others are NULL
_UNBOUNDED_FIELDS = ("year", "isoyear", "decade", "century", "millennium", "epoch", "julian")


def _out_of_range(what: str) -> errors.QueryError:
    return errors.QueryError(f"{what} out of range", "22008")


# --- intervals -----------------------------------------------------------------------------
def interval_parts(d: xa.Datum) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(months, days, micros) int64 arrays (length 1 for a scalar) and the validity mask."""
    if isinstance(d, pa.Scalar):
        v = d.value if d.is_valid else None
        if v is None:
            return (np.zeros(1, np.int64),) * 3 + (np.zeros(1, bool),)
        return (np.array([v.months]), np.array([v.days]), np.array([v.nanoseconds // 1000]), None)
    raw = xa.np_view(d, _IV_DTYPE)
    return (raw["months"].astype(np.int64), raw["days"].astype(np.int64),
            raw["nanos"] // 1000, xa.valid_mask(d))


def interval_array(months, days, micros, valid, n: int) -> pa.Array:
    months, days, micros = (np.broadcast_to(np.asarray(x, np.int64), (n,))
                            for x in (months, days, micros))
    lim = 2**31
    if (np.abs(months) >= lim).any() or (np.abs(days) >= lim).any():
        raise _out_of_range("interval")
    out = np.empty(n, dtype=_IV_DTYPE)
    out["months"], out["days"], out["nanos"] = months, days, micros * 1000
    if valid is not None:
        valid = np.broadcast_to(valid, (n,)).copy()
    return xa.from_numpy(out, pa.month_day_nano_interval(), valid)


def interval_key(d: xa.Datum) -> xa.Datum:
    """Bytes that compare as PostgreSQL orders intervals (their span, a month 30 days),
    exact over the whole range (segment/kernels/interval_order.py)."""
    if isinstance(d, pa.Scalar):
        return interval_order.order_key(pa.array([d], d.type))[0]
    return interval_order.order_key(d)


def interval_negate(d: xa.Datum, n: int) -> pa.Array:
    m, dd, us, valid = interval_parts(d)
    return interval_array(-m, -dd, -us, valid, n)


# --- arithmetic ----------------------------------------------------------------------------
def micros_of(d: xa.Datum, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Microseconds since 1970 of a date, timestamp or timestamptz datum, and validity."""
    arr = xa.as_array(d, n)
    if pa.types.is_date32(arr.type):
        return xa.np_view(arr, np.int32).astype(np.int64) * US_PER_DAY, xa.valid_mask(arr)
    return xa.np_view(arr, np.int64), xa.valid_mask(arr)


def add_interval(ts: np.ndarray, months, days, micros, valid=None) -> np.ndarray:
    """timestamp micros + interval parts (arrays broadcast), calendar months first."""
    out, _ = xa.alloc(len(ts), np.int64)
    live = xa.all_valid(len(ts)) if valid is None else np.ascontiguousarray(
        np.broadcast_to(valid, (len(ts),)))
    parts = [np.ascontiguousarray(np.asarray(x, np.int64).reshape(-1))
             for x in (months, days, micros)]
    if not xk.add_interval(ts, *parts, live, out, MIN_TIMESTAMP):
        raise _out_of_range("timestamp")
    return out


def time_arith(e: Call, args: list, n: int) -> pa.Array:
    """time +/- interval (wrapping around the day, the interval's time part only, as
    time_pl_interval), time - time -> interval, date +/- time -> timestamp; the time or
    date comes first (planner/typing_rules._time_arith)."""
    (a, b), kb = args, e.args[1].type.kind
    sign = 1 if e.func is Func.ADD else -1
    x, vx = micros_of(a, n)
    if kb is Kind.INTERVAL:
        _, _, us, vb = interval_parts(b)
        out = np.mod(np.broadcast_to(x, (n,)) + sign * us, US_PER_DAY)
        return xa.from_numpy(out, pa.time64("us"), _valid_n(n, vx, vb))
    y, vy = micros_of(b, n)
    if e.args[0].type.kind is Kind.TIME:
        return interval_array(0, 0, x - y, _valid_n(n, vx, vy), n)
    out = np.broadcast_to(x + sign * y, (n,)).copy()
    valid = _valid_n(n, vx, vy)
    bad = (out < MIN_TIMESTAMP) | (out > MAX_DAYS * US_PER_DAY)
    if (bad if valid is None else bad & valid).any():
        raise _out_of_range("timestamp")
    return xa.from_numpy(out, pa.timestamp("us"), valid)


def time_cast(arr: pa.Array, src: Kind, dst: Kind) -> pa.Array:
    """timestamp(tz) -> time (the time of day, at UTC), interval -> time (its time part
    modulo a day, as interval_time), time -> interval."""
    n = len(arr)
    if src is Kind.INTERVAL:
        _, _, us, valid = interval_parts(arr)
        return xa.from_numpy(np.mod(us, US_PER_DAY), pa.time64("us"), valid)
    inf = infinite.infinities(arr)  # timestamp_time: NULL for +/-infinity
    us, valid = micros_of(infinite.finite(arr, inf), n)
    if dst is Kind.INTERVAL:
        return interval_array(0, 0, us, valid, n)
    return infinite.without(xa.from_numpy(np.mod(us, US_PER_DAY), pa.time64("us"), valid), inf)


def temporal_arith(e: Call, args: list, n: int) -> xa.Datum:
    """date +/- int, date - date, timestamp +/- interval, timestamp - timestamp,
    interval +/- interval, interval * / float8, and the time of day's (time_arith)."""
    f, (a, b) = e.func, args
    ka, kb = e.args[0].type.kind, e.args[1].type.kind
    inf = infinite.infinities(a) if ka in temporal.TEMPORAL else None
    if inf is not None or (kb in temporal.TEMPORAL and infinite.infinities(b) is not None):
        # +/-infinity stays where it is (the date or timestamp comes first); a difference
        # of two dates or timestamps has none (PostgreSQL's error)
        if e.type.kind not in temporal.TEMPORAL:
            what = "dates" if ka is Kind.DATE else "timestamps"
            raise errors.QueryError(f"cannot subtract infinite {what}", "22008")
        kept = temporal_arith(e, [infinite.finite(a, inf), b], n)
        return infinite.put(xa.as_array(kept, n), inf)
    if ka is Kind.TIMETZ:
        return xtz.arith(e, args, n)
    if Kind.TIME in (ka, kb):
        return time_arith(e, args, n)
    if ka is Kind.DATE and kb is Kind.DATE:
        return pc.subtract_checked(pc.cast(a, pa.int32()), pc.cast(b, pa.int32()))
    if ka is Kind.DATE:
        kernel = pc.add_checked if f is Func.ADD else pc.subtract_checked
        try:
            out = pc.cast(kernel(pc.cast(a, pa.int32()), b), pa.date32())
        except pa.ArrowInvalid:
            raise _out_of_range("date")
        if infinite.infinities(out) is not None:  # a finite date does not become infinity
            raise _out_of_range("date")
        return out
    if ka in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ) and kb is Kind.INTERVAL:
        ts, tvalid = micros_of(a, n)
        m, d, us, ivalid = interval_parts(b)
        sign = 1 if f is Func.ADD else -1
        valid = _valid_n(n, tvalid, ivalid)
        out = add_interval(np.broadcast_to(ts, (n,)), sign * m, sign * d, sign * us, valid)
        return xa.from_numpy(out, e.type.arrow_type(), valid)
    if ka in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):  # timestamp - timestamp
        (x, vx), (y, vy) = micros_of(a, n), micros_of(b, n)
        diff = x - y
        if (((x ^ y) & (x ^ diff)) < 0).any():  # int64 wrapped around
            raise _out_of_range("interval")
        days = np.abs(diff) // US_PER_DAY * np.sign(diff)  # justify_hours: truncate
        return interval_array(0, days, diff - days * US_PER_DAY, _valid_n(n, vx, vy), n)
    if kb is Kind.INTERVAL:  # interval +/- interval
        (ma, da, ua, va), (mb, db, ub, vb) = interval_parts(a), interval_parts(b)
        s = 1 if f is Func.ADD else -1
        return interval_array(ma + s * mb, da + s * db, ua + s * ub, _valid_n(n, va, vb), n)
    return _interval_scale(a, b, f is Func.DIV, n)


def _valid_n(n: int, *masks) -> np.ndarray | None:
    ms = [np.broadcast_to(m, (n,)) for m in masks if m is not None]
    return xa.and_masks(*ms) if ms else None


def _interval_scale(iv: xa.Datum, factor: xa.Datum, divide: bool, n: int) -> pa.Array:
    """interval_mul / interval_div of PostgreSQL, vectorized."""
    m, d, us, valid = interval_parts(iv)
    f_arr = xa.as_array(factor, 1 if isinstance(factor, pa.Scalar) else n)
    fv = pc.fill_null(f_arr, 1.0).to_numpy(zero_copy_only=False)
    fvalid = xa.valid_mask(f_arr)
    valid = _valid_n(n, valid, fvalid)
    live = fv if valid is None or len(fv) == 1 else fv[np.broadcast_to(valid, (n,))]
    if divide and (live == 0).any():
        raise errors.DivisionByZero("division by zero")
    if not np.isfinite(live).all():
        raise _out_of_range("interval")
    op = (lambda x: x / fv) if divide else (lambda x: x * fv)
    months, days = np.trunc(op(m)).astype(np.int64), np.trunc(op(d)).astype(np.int64)
    month_days = np.rint((op(m) - months) * 30 * 1e6) / 1e6
    secs = np.rint((op(d) - days + month_days - np.trunc(month_days)) * 86400 * 1e6) / 1e6
    spill = np.trunc(secs / 86400)
    days = days + spill.astype(np.int64) + np.trunc(month_days).astype(np.int64)
    secs = secs - spill * 86400
    micros = np.rint(op(us) + secs * 1e6).astype(np.int64)
    return interval_array(months, days, micros, valid, n)


# --- extract, date_part, date_trunc --------------------------------------------------------
def _field_values(field: str, x: pa.Array, kind: Kind) -> tuple[np.ndarray, int]:
    """The integer values of an EXTRACT field and their decimal scale."""
    if kind is Kind.INTERVAL:
        return _interval_field(field, x)
    if kind is Kind.TIMETZ:
        return xtz.field_values(field, x)
    if kind is Kind.TIME and field in ("hour", "minute"):
        us, _ = micros_of(x, len(x))
        return (us // 3_600_000_000 if field == "hour" else us // 60_000_000 % 60), 0
    if field in ("second", "milliseconds", "microseconds", "epoch", "julian"):
        us, _ = micros_of(x, len(x))
        if field == "epoch":
            return (us // 10**6, 0) if kind is Kind.DATE else (us, 6)
        if field == "julian":
            return us // US_PER_DAY + 2440588, 0
        return np.mod(us, 60 * 10**6), {"second": 6, "milliseconds": 3, "microseconds": 0}[field]
    year = None
    if field in ("decade", "century", "millennium"):
        year = xa.np_view(pc.year(x), np.int64)
    simple = {
        "year": lambda: pc.year(x), "month": lambda: pc.month(x), "day": lambda: pc.day(x),
        "hour": lambda: pc.hour(x), "minute": lambda: pc.minute(x),
        "quarter": lambda: pc.quarter(x), "doy": lambda: pc.day_of_year(x),
        "dow": lambda: pc.day_of_week(x, count_from_zero=True, week_start=7),
        "isodow": lambda: pc.day_of_week(x, count_from_zero=False, week_start=1),
        "week": lambda: pc.iso_week(x), "isoyear": lambda: pc.iso_year(x),
    }
    if field in simple:
        out = xa.np_view(pc.cast(simple[field](), pa.int64()), np.int64)
        if field in ("year", "isoyear"):  # no year 0: 1 BC (astronomical 0) is -1
            out = np.where(out <= 0, out - 1, out)
        return out, 0
    if field == "decade":
        return np.floor_divide(year, 10), 0
    if field == "century":
        return np.where(year > 0, (year + 99) // 100, -((99 - (year - 1)) // 100)), 0
    return np.where(year > 0, (year + 999) // 1000, -((999 - (year - 1)) // 1000)), 0


def _interval_field(field: str, x: pa.Array) -> tuple[np.ndarray, int]:
    m, d, us, _ = interval_parts(x)
    years = np.trunc(m / 12).astype(np.int64)
    if field == "epoch":
        secs = (years * 36525 * 864 + (m - years * 12) * 30 * 86400 + d * 86400)
        return secs * 10**6 + us, 6
    per_hour = 3600 * 10**6
    hours = np.trunc(us / per_hour).astype(np.int64)
    rest = us - hours * per_hour
    values = {
        "year": years, "month": m - years * 12, "day": d, "hour": hours,
        "minute": np.trunc(rest / (60 * 10**6)).astype(np.int64),
        "quarter": (m - years * 12) // 3 + 1,
        "decade": np.trunc(years / 10).astype(np.int64),
        "century": np.trunc(years / 100).astype(np.int64),
        "millennium": np.trunc(years / 1000).astype(np.int64),
    }
    if field in values:
        return values[field], 0
    sec = np.fmod(us, 60 * 10**6)
    return sec, {"second": 6, "milliseconds": 3, "microseconds": 0}[field]


def extract(e: Call, args: list, n: int) -> xa.Datum:
    """EXTRACT(field FROM x) as numeric, or date_part(field, x) as float8."""
    field = args[0].as_py()
    x = xa.as_array(args[1], n)
    inf = infinite.infinities(x)
    if inf is not None:
        if field in _UNBOUNDED_FIELDS:
            raise errors.FeatureNotSupported(
                f"EXTRACT({field}) of infinity (numeric Infinity)")
        return infinite.without(extract(e, [args[0], infinite.finite(x, inf)], n), inf)
    vals, scale = _field_values(field, x, e.args[1].type.kind)
    vals = np.broadcast_to(np.asarray(vals, np.int64), (len(x),)).copy()
    valid = xa.valid_mask(x)
    if e.func is Func.DATE_PART:
        return xa.from_numpy(vals / float(10**scale) if scale else vals.astype(np.float64),
                             pa.float64(), valid)
    num = xn.Num(xa.from_numpy(vals, pa.int64(), valid), scale=scale)
    return xn.to_array(num, e.type, len(x), check=False)


def date_trunc(e: Call, args: list, n: int) -> xa.Datum:
    field = args[0].as_py()
    x = xa.as_array(args[1], n)
    if pa.types.is_interval(x.type):
        return _trunc_interval(field, x)
    inf = infinite.infinities(x)
    if inf is not None:  # +/-infinity truncates to itself
        return infinite.put(date_trunc(e, [args[0], infinite.finite(x, inf)], n), inf)
    us, valid = micros_of(x, len(x))
    if field in _DAY_UNITS:
        unit = _DAY_UNITS[field]
        out = np.floor_divide(us, unit) * unit
    elif field == "week":
        day = np.floor_divide(us, US_PER_DAY)
        out = (day - np.mod(day + 3, 7)) * US_PER_DAY  # 1970-01-01 was a Thursday
    else:
        out, _ = xa.alloc(len(us), np.int64)
        live = xa.all_valid(len(us)) if valid is None else valid
        xk.trunc_micros(us, live, _TRUNC_UNITS[field], out)
    return xa.from_numpy(out, e.type.arrow_type(), valid)


# Units of an interval's time part, and how many months a unit of its month part is.
_TIME_UNITS = {"hour": 3_600_000_000, "minute": 60_000_000, "second": 1_000_000,
               "milliseconds": 1000, "microseconds": 1}
_MONTH_UNITS = {"millennium": 12000, "century": 1200, "decade": 120, "year": 12,
                "quarter": 3, "month": 1}


def _trunc_interval(field: str, x: pa.Array) -> pa.Array:
    """interval_trunc: the interval's fields below the unit zeroed, each field as
    interval2itm splits it (years and months of the months, hours .. microseconds of the
    time, all of the value's sign: C's division truncates toward zero)."""
    m, d, us, valid = interval_parts(x)
    if field in _TIME_UNITS:
        us = _toward_zero(us, _TIME_UNITS[field])
    else:
        us = np.zeros_like(us)
        if field != "day":
            d = np.zeros_like(d)
            years = _toward_zero(m, 12)
            # millennium, century, decade: years cut down; quarter: its months in threes
            unit = _MONTH_UNITS[field]
            m = _toward_zero(m, unit) if unit >= 12 else years + _toward_zero(m - years, unit)
    return interval_array(m, d, us, valid, len(x))


def _toward_zero(v: np.ndarray, unit: int) -> np.ndarray:
    """v rounded toward zero to a multiple of unit (C's (v / unit) * unit)."""
    return np.sign(v) * (np.abs(v) // unit) * unit


def parse_intervals(texts: pa.Array) -> pa.Array:
    """text -> interval, parsing each distinct text once in Python."""
    uniq = pc.unique(texts.drop_null())
    parsed = [temporal.parse_interval(s) for s in uniq.to_pylist()]
    m = np.array([p.months for p in parsed], np.int64)
    d = np.array([p.days for p in parsed], np.int64)
    us = np.array([p.micros for p in parsed], np.int64)
    table = interval_array(m, d, us, None, len(parsed))
    return table.take(pc.index_in(texts, value_set=uniq))


def format_intervals(ivs: pa.Array) -> pa.Array:
    """interval -> text in IntervalStyle postgres (per value in Python: intervals are few)."""
    m, d, us, valid = interval_parts(ivs)
    out = [temporal.format_interval(Interval(int(a), int(b), int(c)))
           for a, b, c in zip(m, d, us)]
    return pa.array(out, pa.string(), mask=None if valid is None else ~valid)
