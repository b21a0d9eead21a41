"""make_date, make_timestamp[tz], make_interval, justify_*, age and date_bin
over batches, as PostgreSQL 15's date.c and timestamp.c compute them (session time zone
UTC). Calendar fields come from numpy's datetime64 (proleptic Gregorian, as PostgreSQL's
Julian-day routines); raympp's dates span years 1 to 9999, and a value outside is 0A000.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from planner import errors
from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_datetime as xd

US_PER_DAY = xd.US_PER_DAY
US_PER_SEC = 1_000_000
DAYS_PER_MONTH = 30
_MAX_YEAR = 9999
# An interval's time part is held in nanoseconds (Arrow's month_day_nano): no more
# microseconds than this (PostgreSQL's int64 microseconds reach 1000 times further).
MAX_INTERVAL_MICROS = (2**63 - 1) // 1000
_END_MICROS = (np.datetime64("10000-01-01", "D").astype(np.int64)) * US_PER_DAY


def _timestamps(d: xa.Datum, n: int) -> tuple[np.ndarray, np.ndarray]:
    vals, valid = xd.micros_of(d, n)
    vals = np.broadcast_to(vals, (n,))
    return vals, np.ones(n, bool) if valid is None else np.broadcast_to(valid, (n,))


def first_day(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of the first day of month m (1-12) of year y."""
    months = (y - 1970) * 12 + (m - 1)
    return months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)


def month_days(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The number of days of month m of year y."""
    return first_day(y + (m == 12), m % 12 + 1) - first_day(y, m)


def civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of days since 1970-01-01."""
    d = days.astype("datetime64[D]")
    months = d.astype("datetime64[M]")
    y = months.astype("datetime64[Y]").astype(np.int64) + 1970
    m = months.astype(np.int64) % 12 + 1
    return y, m, (d - months.astype("datetime64[D]")).astype(np.int64) + 1


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


def _dates(e: Call, y, m, d, valid) -> np.ndarray:
    """Days since 1970 of the fields, with make_date's errors on the first bad row."""
    bad = valid & ((y == 0) | (m < 1) | (m > 12))
    ok_month = np.where((m >= 1) & (m <= 12), m, 1)
    # the month's length in the year asked for (10000-02-29 is a date, refused below)
    bad |= valid & ((d < 1) | (d > month_days(np.clip(y, 1, 10**6), ok_month)))
    i = _first(bad)
    if i is not None:
        raise errors.QueryError(f"date field value out of range: {y[i]}-{m[i]:02d}-{d[i]:02d}",
                                "22008")
    if (valid & ((y < 1) | (y > _MAX_YEAR))).any():
        raise errors.FeatureNotSupported(f"{e.func.value}() of a year outside 1 to 9999")
    return first_day(np.where(valid, y, 1970), ok_month) + np.where(valid, d, 1) - 1


def make_date(e: Call, args: list, n: int) -> xa.Datum:
    (y, vy), (m, vm), (d, vd) = (xa.filled(a, n, np.int64) for a in args)
    valid = vy & vm & vd
    days = _dates(e, y, m, d, valid)
    return xa.from_numpy(days.astype(np.int32), pa.date32(), valid)


def make_timestamp(e: Call, args: list, n: int) -> xa.Datum:
    """make_timestamp / make_timestamptz: the fields as a timestamp (UTC); the seconds
    are a float8 rounded to microseconds, hour 24 and second 60 allowed up to 24:00:00."""
    (y, vy), (m, vm), (d, vd), (h, vh), (mi, vmi) = (xa.filled(a, n, np.int64) for a in args[:5])
    sec, vs = xa.filled(args[5], n, np.float64)
    valid = vy & vm & vd & vh & vmi & vs
    days = _dates(e, y, m, d, valid)
    with np.errstate(invalid="ignore"):
        us = np.rint(sec * US_PER_SEC)
        clock = ((h * 60 + mi) * 60) * US_PER_SEC + np.where(np.isfinite(us), us, 0).astype(
            np.int64)
        bad = valid & ((h < 0) | (h > 24) | (mi < 0) | (mi >= 60) | np.isnan(sec)
                       | (us < 0) | (us > 60 * US_PER_SEC) | (clock > US_PER_DAY))
    i = _first(bad)
    if i is not None:
        raise errors.QueryError(
            f"time field value out of range: {h[i]}:{mi[i]:02d}:{sec[i]:02g}", "22008")
    out = days * US_PER_DAY + clock
    if (valid & (out >= _END_MICROS)).any():  # 9999-12-31 24:00:00
        raise errors.QueryError("timestamp out of range", "22008")
    return xa.from_numpy(out, e.type.arrow_type(), valid)


def make_interval(e: Call, args: list, n: int) -> xa.Datum:
    """make_interval: months and days wrap as PostgreSQL 15's int32 arithmetic does;
    infinite or NaN seconds, and a time part beyond what an interval column holds, are
    22008."""
    parts = [xa.filled(a, n, np.int64) for a in args[:6]]
    secs, vs = xa.filled(args[6], n, np.float64)
    valid = vs.copy()
    for _, v in parts:
        valid &= v
    years, months, weeks, days, hours, mins = (p for p, _ in parts)
    if (valid & ~np.isfinite(secs)).any():
        raise errors.QueryError("interval out of range", "22008")
    us = np.rint(np.where(valid, secs, 0.0) * US_PER_SEC)
    if (np.abs(us) >= 2.0**63).any():
        raise errors.QueryError("interval out of range", "22008")
    wrap32 = lambda v: ((v + 2**31) % 2**32) - 2**31  # noqa: E731 - C int32 arithmetic
    mon = wrap32(wrap32(years * 12) + months)
    day = wrap32(wrap32(weeks * 7) + days)
    time = hours * 3600 * US_PER_SEC + mins * 60 * US_PER_SEC + us.astype(np.int64)
    if (valid & (np.abs(time) > MAX_INTERVAL_MICROS)).any():
        raise errors.QueryError("interval out of range", "22008")
    return xd.interval_array(mon, day, time, valid, n)


def _c_div(a: np.ndarray, b: int) -> np.ndarray:
    """C's integer division (truncated toward zero)."""
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def justify(e: Call, args: list, n: int) -> xa.Datum:
    """justify_days (30-day months), justify_hours (24-hour days), justify_interval (both,
    with one sign throughout), as interval_justify_* do."""
    mon, day, time, valid = xd.interval_parts(args[0])
    if e.func in (Func.JUSTIFY_HOURS, Func.JUSTIFY_INTERVAL):
        whole = _c_div(time, US_PER_DAY)
        time, day = time - whole * US_PER_DAY, day + whole
    if e.func in (Func.JUSTIFY_DAYS, Func.JUSTIFY_INTERVAL):
        whole = _c_div(day, DAYS_PER_MONTH)
        day, mon = day - whole * DAYS_PER_MONTH, mon + whole
        if e.func is Func.JUSTIFY_INTERVAL:
            down = (mon > 0) & ((day < 0) | ((day == 0) & (time < 0)))
            up = (mon < 0) & ((day > 0) | ((day == 0) & (time > 0)))
        else:
            down, up = (mon > 0) & (day < 0), (mon < 0) & (day > 0)
        day = day + DAYS_PER_MONTH * down - DAYS_PER_MONTH * up
        mon = mon - down + up
    if e.func in (Func.JUSTIFY_HOURS, Func.JUSTIFY_INTERVAL):
        down, up = (day > 0) & (time < 0), (day < 0) & (time > 0)
        time = time + US_PER_DAY * down - US_PER_DAY * up
        day = day - down + up
    return xd.interval_array(mon, day, time, valid, n)


def age(e: Call, args: list, n: int) -> xa.Datum:
    """age(a, b): field-wise differences of the two timestamps (b's fields taken from a's
    with the sign of a - b), borrowed into the next larger field, months of the earlier
    month's length (timestamp_age)."""
    (t1, v1), (t2, v2) = _timestamps(args[0], n), _timestamps(args[1], n)
    valid = v1 & v2
    f1, f2 = _fields(np.where(valid, t1, 0)), _fields(np.where(valid, t2, 0))
    neg = t1 < t2
    sign = np.where(neg, -1, 1)
    us, sec, mi, hr, mday, mon, yr = (sign * (a - b) for a, b in zip(f1, f2))
    borrow = us < 0
    us, sec = us + US_PER_SEC * borrow, sec - borrow
    borrow = sec < 0
    sec, mi = sec + 60 * borrow, mi - borrow
    borrow = mi < 0
    mi, hr = mi + 60 * borrow, hr - borrow
    borrow = hr < 0
    hr, mday = hr + 24 * borrow, mday - borrow
    # a negative day count borrows months of the length of the earlier timestamp's month
    ref_y, ref_m = np.where(neg, f1[6], f2[6]), np.where(neg, f1[5], f2[5])
    length = month_days(np.clip(ref_y, 1, _MAX_YEAR), ref_m)
    k = np.where(mday < 0, (-mday + length - 1) // length, 0)
    mday, mon = mday + k * length, mon - k
    borrow = (mon < 0) * ((-mon + 11) // 12)
    mon, yr = mon + 12 * borrow, yr - borrow
    months = sign * (yr * 12 + mon)
    time = sign * (((hr * 60 + mi) * 60 + sec) * US_PER_SEC + us)
    return xd.interval_array(months, sign * mday, time, valid, n)


def _fields(ts: np.ndarray) -> tuple[np.ndarray, ...]:
    """(microseconds, second, minute, hour, day, month, year) of timestamps."""
    days = np.floor_divide(ts, US_PER_DAY)
    clock = ts - days * US_PER_DAY
    y, m, d = civil(days)
    secs, us = np.divmod(clock, US_PER_SEC)
    mins, sec = np.divmod(secs, 60)
    hr, mi = np.divmod(mins, 60)
    return us, sec, mi, hr, d, m, y


def date_bin(e: Call, args: list, n: int) -> xa.Datum:
    """date_bin(stride, source, origin): origin plus whole strides, the start of the bin
    holding source (timestamp_bin / timestamptz_bin of PostgreSQL 15)."""
    mon, day, time, vstride = xd.interval_parts(args[0])
    vstride = np.ones(len(mon), bool) if vstride is None else vstride
    if (vstride & (mon != 0)).any():
        raise errors.FeatureNotSupported(
            "timestamps cannot be binned into intervals containing months or years")
    stride = day * US_PER_DAY + time
    if (vstride & (stride <= 0)).any():
        raise errors.QueryError("stride must be greater than zero", "22008")
    (src, vs), (org, vo) = _timestamps(args[1], n), _timestamps(args[2], n)
    valid = vs & vo & np.broadcast_to(vstride, (n,))
    stride = np.broadcast_to(np.where(vstride, stride, 1), (n,))
    diff = src - org
    delta = diff - np.mod(diff, stride)  # the bin's start, also when origin is later
    return xa.from_numpy(org + delta, e.type.arrow_type(), valid)


def timestamp_step(e: Call, args: list, n: int) -> xa.Datum:
    """start + k * step microseconds: the rows of a long generate_series of timestamps
    (k counts up to a last value the binder computed within range)."""
    start, vs = _timestamps(args[0], n)
    k, vk = xa.filled(args[1], n, np.int64)
    out = start + k * np.int64(args[2].as_py())
    return xa.from_numpy(out, e.type.arrow_type(), vs & vk)


CALLS = {
    Func.MAKE_DATE: make_date, Func.MAKE_TIMESTAMP: make_timestamp,
    Func.MAKE_INTERVAL: make_interval,
    Func.JUSTIFY_DAYS: justify, Func.JUSTIFY_HOURS: justify, Func.JUSTIFY_INTERVAL: justify,
    Func.AGE: age, Func.DATE_BIN: date_bin,
    Func.TIMESTAMP_STEP: timestamp_step,
}


# The most timestamps one generate_series call's arrays hold in a batch: each is built
# whole in memory (PostgreSQL streams them).
MAX_SERIES = 50_000_000


def _check_size(total: int) -> None:
    if total > MAX_SERIES:
        raise errors.FeatureNotSupported(
            f"generate_series of timestamps with more than {MAX_SERIES} values in a batch")


def timestamp_series(e: Call, args: list, n: int) -> pa.Array:
    """Each row's generate_series(start, stop, step interval) of timestamps as an array:
    the step added again and again (months on the calendar, so Jan 31 + 1 month + 1 month
    is Mar 29) while the value has not passed stop; the direction is the step's sign by
    interval order (a month is 30 days), a zero step 22023."""
    (start, vs), (stop, ve) = _timestamps(args[0], n), _timestamps(args[1], n)
    mon, day, time, vstep = xd.interval_parts(args[2])
    vstep = np.ones(len(mon), bool) if vstep is None else vstep
    key = (mon * DAYS_PER_MONTH + day) * US_PER_DAY + time
    if (vstep & (key == 0)).any():
        raise errors.InvalidParameterValue("step size cannot equal zero")
    valid = vs & ve & np.broadcast_to(vstep, (n,))
    mon, day, time, key = (np.broadcast_to(np.where(vstep, x, 1), (n,)) for x in
                           (mon, day, time, key))
    if not mon.any():  # a fixed step: the values are start + k * step
        step = day * US_PER_DAY + time
        span = np.where(valid, stop - start, 0)
        counts = np.where(valid & ((span == 0) | ((span > 0) == (step > 0))),
                          span // step + 1, 0).astype(np.int64)
        _check_size(int(counts.sum()))
        rank = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts)
        values = np.repeat(start, counts) + rank * np.repeat(step, counts)
    else:  # calendar months: step all rows in lockstep until each has passed its stop
        rows, parts, current, total = [], [], np.where(valid, start, 0), 0
        live = valid.copy()
        while True:
            live &= np.where(key > 0, current <= stop, current >= stop)
            if not live.any():
                break
            idx = np.flatnonzero(live)
            total += len(idx)
            _check_size(total)
            rows.append(idx)
            parts.append(current[idx])
            current = current.copy()
            current[idx] = xd.add_interval(current[idx], mon[idx], day[idx], time[idx])
        order = np.argsort(np.concatenate(rows), kind="stable") if rows else np.zeros(0, int)
        values = np.concatenate(parts)[order] if rows else np.zeros(0, np.int64)
        counts = np.bincount(np.concatenate(rows), minlength=n) if rows else np.zeros(n, int)
    t = e.type.elem.arrow_type()
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()),
                                    pa.array(values, pa.int64()).cast(t), type=pa.list_(t),
                                    mask=None if valid.all() else pa.array(~valid))
