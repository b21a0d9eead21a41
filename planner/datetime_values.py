"""make_date, make_timestamp[tz], make_interval, justify_*, age, date_bin and isfinite of
constant values (planner/fold.py), with PostgreSQL 15's results and errors; the batch
kernels of segment/kernels/expr_make_datetime.py compute the same over columns.

Values as planner/temporal.py holds them: datetime.date, naive datetime (timestamp), UTC
datetime (timestamptz, the session time zone being UTC), Interval.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math

from planner import errors
from planner.temporal import UTC, USECS_PER_DAY, Interval

US_PER_SEC = 1_000_000
DAYS_PER_MONTH = 30
MAX_YEAR = 9999  # raympp's dates and timestamps end with year 9999
_EPOCH = dt.datetime(1970, 1, 1)
MAX_INTERVAL_MICROS = (2**63 - 1) // 1000


def _date(func: str, y: int, m: int, d: int) -> dt.date:
    if y == 0 or not 1 <= m <= 12 or d < 1 or d > calendar.monthrange(max(y, 1), m)[1]:
        raise errors.QueryError(f"date field value out of range: {y}-{m:02d}-{d:02d}", "22008")
    if not 1 <= y <= MAX_YEAR:
        raise errors.FeatureNotSupported(f"{func}() of a year outside 1 to 9999")
    return dt.date(y, m, d)


def make_date(y: int, m: int, d: int) -> dt.date:
    """make_date: 22008 for fields that name no date."""
    return _date("make_date", y, m, d)


def make_timestamp(y: int, m: int, d: int, h: int, mi: int, sec: float,
                   tz: bool = False) -> dt.datetime:
    """make_timestamp / make_timestamptz (UTC): seconds rounded to microseconds, hour 24
    and second 60 allowed up to 24:00:00."""
    day = _date("make_timestamptz" if tz else "make_timestamp", y, m, d)
    us = math.nan if math.isnan(sec) else (
        float(round(sec * US_PER_SEC)) if math.isfinite(sec) else sec)
    if h < 0 or h > 24 or mi < 0 or mi >= 60 or math.isnan(us) or us < 0 \
            or us > 60 * US_PER_SEC or ((h * 60 + mi) * 60) * US_PER_SEC + us > USECS_PER_DAY:
        raise errors.QueryError(f"time field value out of range: {h}:{mi:02d}:{sec:02g}",
                                "22008")
    clock = ((h * 60 + mi) * 60) * US_PER_SEC + int(us)
    try:
        out = dt.datetime.combine(day, dt.time()) + dt.timedelta(microseconds=clock)
    except OverflowError:
        raise errors.QueryError("timestamp out of range", "22008")
    return out.replace(tzinfo=UTC) if tz else out


def _wrap32(v: int) -> int:
    """C int32 arithmetic's wrap-around (PostgreSQL 15's make_interval checks nothing)."""
    return (v + 2**31) % 2**32 - 2**31


def make_interval(years: int, months: int, weeks: int, days: int, hours: int, mins: int,
                  secs: float) -> Interval:
    """make_interval; infinite or NaN seconds, and a time part beyond what raympp's
    intervals hold (nanoseconds in an int64), are 22008."""
    if not math.isfinite(secs) or abs(round(secs * US_PER_SEC)) >= 2**63:
        raise errors.QueryError("interval out of range", "22008")
    time = hours * 3600 * US_PER_SEC + mins * 60 * US_PER_SEC + int(round(secs * US_PER_SEC))
    if abs(time) > MAX_INTERVAL_MICROS:
        raise errors.QueryError("interval out of range", "22008")
    return Interval(_wrap32(_wrap32(years * 12) + months), _wrap32(_wrap32(weeks * 7) + days),
                    time)


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncated toward zero)."""
    q = abs(a) // b
    return -q if a < 0 else q


def justify(which: str, iv: Interval) -> Interval:
    """justify_days ('days'), justify_hours ('hours') or justify_interval ('interval')."""
    mon, day, time = iv.months, iv.days, iv.micros
    if which in ("hours", "interval"):
        whole = _c_div(time, USECS_PER_DAY)
        time, day = time - whole * USECS_PER_DAY, day + whole
    if which in ("days", "interval"):
        whole = _c_div(day, DAYS_PER_MONTH)
        day, mon = day - whole * DAYS_PER_MONTH, mon + whole
        if which == "interval":
            down = mon > 0 and (day < 0 or (day == 0 and time < 0))
            up = mon < 0 and (day > 0 or (day == 0 and time > 0))
        else:
            down, up = mon > 0 and day < 0, mon < 0 and day > 0
        day += DAYS_PER_MONTH * (down - up)
        mon += up - down
    if which in ("hours", "interval"):
        down, up = day > 0 and time < 0, day < 0 and time > 0
        time += USECS_PER_DAY * (down - up)
        day += up - down
    return Interval(mon, day, time)


def _naive(t: dt.datetime) -> dt.datetime:
    return t.astimezone(UTC).replace(tzinfo=None) if t.tzinfo is not None else t


def age(a: dt.datetime, b: dt.datetime) -> Interval:
    """timestamp_age: the field-wise difference, borrowed into larger fields, a month
    borrowed being as long as the earlier timestamp's month."""
    a, b = _naive(a), _naive(b)
    sign = -1 if a < b else 1
    f1 = (a.microsecond, a.second, a.minute, a.hour, a.day, a.month, a.year)
    f2 = (b.microsecond, b.second, b.minute, b.hour, b.day, b.month, b.year)
    us, sec, mi, hr, mday, mon, yr = (sign * (x - y) for x, y in zip(f1, f2))
    if us < 0:
        us, sec = us + US_PER_SEC, sec - 1
    if sec < 0:
        sec, mi = sec + 60, mi - 1
    if mi < 0:
        mi, hr = mi + 60, hr - 1
    if hr < 0:
        hr, mday = hr + 24, mday - 1
    ref = a if sign < 0 else b
    length = calendar.monthrange(ref.year, ref.month)[1]
    while mday < 0:
        mday, mon = mday + length, mon - 1
    while mon < 0:
        mon, yr = mon + 12, yr - 1
    return Interval(sign * (yr * 12 + mon), sign * mday,
                    sign * (((hr * 60 + mi) * 60 + sec) * US_PER_SEC + us))


def micros(t: dt.datetime) -> int:
    """Microseconds since 1970 of a timestamp or timestamptz value."""
    delta = _naive(t) - _EPOCH
    return (delta.days * 86400 + delta.seconds) * US_PER_SEC + delta.microseconds


def date_bin(stride: Interval, source: dt.datetime, origin: dt.datetime) -> dt.datetime:
    """The start of the stride-wide bin, counted from origin, that holds source."""
    if stride.months:
        raise errors.FeatureNotSupported(
            "timestamps cannot be binned into intervals containing months or years")
    step = stride.days * USECS_PER_DAY + stride.micros
    if step <= 0:
        raise errors.QueryError("stride must be greater than zero", "22008")
    diff = micros(source) - micros(origin)
    out = origin + dt.timedelta(microseconds=diff - diff % step)
    return out
