"""Dates, timestamps and intervals as Python values: text input and output, interval arithmetic.

A date is a datetime.date, a timestamp a naive datetime.datetime, a timestamptz a UTC-aware
one, 'infinity' / '-infinity' of any of them an `Infinite`, an interval an `Interval`
(months, days, microseconds). `round_timestamp` is timestamp(p)'s rounding. Times of day
are planner/time_values.py's (and date/time text, planner/timestamp_text.py's).
`parse_interval` reads PostgreSQL's interval input with its errors, `format_interval`
writes IntervalStyle postgres, and `add_interval` / `interval_scale` / `interval_key` are
PostgreSQL's calendar arithmetic and interval order. `field_name` canonicalizes the unit
names of intervals, EXTRACT and date_trunc. planner/values.py builds the typed text I/O and
casts on these; planner/fold.py and segment/kernels use them directly.
"""

from __future__ import annotations

import calendar
import datetime as dt
import decimal
import math
import re
from dataclasses import dataclass
from decimal import Decimal

from planner import errors
from planner.types import Kind, SqlType


@dataclass(frozen=True, slots=True)
class Interval:
    """An interval value as PostgreSQL keeps it: months, days and microseconds apart."""

    months: int = 0
    days: int = 0
    micros: int = 0


@dataclass(frozen=True, slots=True)
class Infinite:
    """The date, timestamp or timestamptz 'infinity' (sign 1) or '-infinity' (sign -1):
    above (below) every other value of its type and equal to itself. In batches they are
    the extreme integers, as PostgreSQL's binary format has them (INFINITE_DAYS,
    INFINITE_MICROS); the constant folder leaves arithmetic on them to the kernels."""

    sign: int

    def _key(self, other):
        if isinstance(other, Infinite):
            return self.sign, other.sign
        if isinstance(other, (dt.date, dt.datetime)):
            return self.sign, 0
        return None

    def __lt__(self, other):
        k = self._key(other)
        return NotImplemented if k is None else k[0] < k[1]

    def __le__(self, other):
        k = self._key(other)
        return NotImplemented if k is None else k[0] <= k[1]

    def __gt__(self, other):
        k = self._key(other)
        return NotImplemented if k is None else k[0] > k[1]

    def __ge__(self, other):
        k = self._key(other)
        return NotImplemented if k is None else k[0] >= k[1]

    def __str__(self) -> str:
        return "infinity" if self.sign > 0 else "-infinity"


INFINITY, NEG_INFINITY = Infinite(1), Infinite(-1)
# The physical values of +/-infinity: date32 days and timestamp microseconds.
INFINITE_DAYS = (2**31 - 1, -2**31)
INFINITE_MICROS = (2**63 - 1, -2**63)
TEMPORAL = (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ)
UTC = dt.timezone.utc
USECS_PER_DAY = 86_400_000_000
_WS = " \t\n\r\v\f"  # what PostgreSQL's scanners treat as skippable space
UNIX_EPOCH = dt.datetime(1970, 1, 1)
PG_EPOCH_MICROS = 946_684_800_000_000  # 2000-01-01, where PostgreSQL's timestamps count from


def round_micros(us: int, precision: int, epoch: int = 0) -> int:
    """Microseconds rounded to `precision` fractional digits, half away from zero from
    `epoch` (AdjustTimestampForTypmod counts from 2000-01-01, AdjustTimeForTypmod from
    midnight)."""
    q = 10 ** (6 - precision)
    rel = us - epoch
    r = (abs(rel) + q // 2) // q * q
    return epoch + (r if rel >= 0 else -r)


def _fract_micros(us: Decimal) -> int:
    """A unit's microseconds as AdjustMicroseconds adds them: the whole ones, and the
    fraction left rint()ed on its own, so that half of one rounds to even, zero ('1.5 us'
    is 1 microsecond, '1.6 us' 2)."""
    whole = int(us)
    rest = us - whole
    return whole + (0 if abs(rest) <= Decimal("0.5") else (1 if rest > 0 else -1))


def round_interval(v: Interval, precision: int | None) -> Interval:
    """An interval rounded for interval(p): its time part, half away from zero
    (AdjustIntervalForTypmod)."""
    if precision is None or v is None:
        return v
    return Interval(v.months, v.days, round_micros(v.micros, precision))


def round_timestamp(v, precision: int | None):
    """A timestamp(tz) rounded for timestamp(p) (+/-infinity as they are)."""
    if precision is None or v is None or isinstance(v, Infinite):
        return v
    naive = v.replace(tzinfo=None)
    us = (naive - UNIX_EPOCH) // dt.timedelta(microseconds=1)
    out = UNIX_EPOCH + dt.timedelta(microseconds=round_micros(us, precision, PG_EPOCH_MICROS))
    return out.replace(tzinfo=v.tzinfo)


# Intervals are Arrow month_day_nano: their time part holds nanoseconds in 64 bits, a
# thousandth of PostgreSQL's microseconds (2562047 hours where PostgreSQL has 2562047788).
MAX_INTERVAL_MICROS = (2**63 - 1) // 1000


def interval_time_refused() -> errors.QueryError:
    """An interval whose time part raympp's nanoseconds cannot hold."""
    return errors.FeatureNotSupported(
        "intervals with a time part beyond 2562047:47:16.854775 (raympp holds "
        "nanoseconds in 64 bits)")


_IV_UNITS = {"microseconds": (0, 0, 1), "milliseconds": (0, 0, 1000), "second": (0, 0, 10**6),
             "minute": (0, 0, 60 * 10**6), "hour": (0, 0, 3600 * 10**6), "day": (0, 1, 0),
             "week": (0, 7, 0), "month": (1, 0, 0), "year": (12, 0, 0), "decade": (120, 0, 0),
             "century": (1200, 0, 0), "millennium": (12000, 0, 0)}
_IV_TOKEN = re.compile(
    r"\s*(?:(?P<sign>[+-])?(?P<h>\d+):(?P<m>\d+(?:\.\d*)?)(?::(?P<s>\d+(?:\.\d*)?))?"
    r"|(?P<ym>[+-]?\d+-\d+)(?![\d.:])"  # SQL's years-months: '1-2' is 1 year 2 mons
    r"|(?P<qty>[+-]?(?:\d+\.?\d*|\.\d+))\s*(?P<unit>[a-z]+)?)", re.A | re.I)
# The fields a time of day sets: no unit may be given twice (DecodeInterval's field mask)
_SECOND_FIELDS = ("second", "milliseconds", "microseconds")
_CLOCK_FIELDS = ("hour", "minute") + _SECOND_FIELDS


def _bare_unit(s: str, pos: int, rightmost: str) -> str:
    """The unit of a number written without one: days right before a time of day ('3
    4:05:06' is 3 days 04:05:06, as DecodeInterval reads it), else the rightmost field of
    the literal's qualifier (seconds without one)."""
    nxt = _IV_TOKEN.match(s, pos)
    return "day" if nxt is not None and nxt.group("h") is not None else rightmost


def parse_interval(text: str, fields: tuple[str, str] | None = None) -> Interval:
    """PostgreSQL's interval input: '90 day', '1 year 2 mons', '-1 day +02:03:04.5',
    '@ 3 days ago', '1.5 months' (fractions spill down as PostgreSQL does).

    `fields` is a literal's qualifier (first, last), as in INTERVAL '3' DAY TO HOUR: it
    gives a number without a unit its unit (the last field), and makes 'a:b' minutes and
    seconds for MINUTE TO SECOND. Its truncation is `restrict_interval`'s."""
    rightmost = fields[1].lower() if fields else "second"
    mm_ss = fields == ("MINUTE", "SECOND")
    s = text.strip(_WS).lower()
    s = s[1:] if s.startswith("@") else s
    ago = s.endswith(" ago") or s == "ago"
    s = s[:-3] if ago else s
    months, days, micros, pos = 0, 0, Decimal(0), 0
    seen: set[str] = set()

    def once(*fields: str) -> None:  # a unit given twice ('1 2', '1 day 2 days') is 22007
        if seen.intersection(fields):
            raise ValueError
        seen.update(fields)
    try:
        if not s.strip():
            raise ValueError
        if text.startswith("P"):
            for qty, unit in _iso8601_parts(text):
                months, days, micros = _add_quantity(months, days, micros, qty, unit)
            pos = len(s)  # the ISO form is the whole text: no tokens follow
        while pos < len(s.rstrip(_WS)):
            m = _IV_TOKEN.match(s, pos)
            if not m or m.end() == pos:
                raise ValueError
            pos = m.end()
            if m.group("h") is not None:
                once(*_CLOCK_FIELDS)
                h, mi, sec = m.group("h"), m.group("m"), m.group("s")
                if sec is None and ("." in mi or mm_ss):  # 'mm:ss[.fff]' (DecodeTime's)
                    h, mi, sec = "0", h, mi
                elif "." in mi:
                    raise ValueError
                seconds = (int(h) * 60 + int(mi)) * 60 + Decimal(sec or 0)
                us = seconds * 10**6
                micros += -us if m.group("sign") == "-" else us
                continue
            if m.group("ym") is not None:
                once("month")
                negative = m.group("ym").startswith("-")
                y, mo = m.group("ym").lstrip("+-").split("-")
                total = int(y) * 12 + int(mo)
                months += -total if negative else total
                continue
            qty = Decimal(m.group("qty"))
            unit = field_name(m.group("unit") or _bare_unit(s, pos, rightmost))
            # fractional seconds count as milli- and microseconds given too
            once(*(_SECOND_FIELDS if unit == "second" and qty != int(qty) else (unit,)))
            months, days, micros = _add_quantity(months, days, micros, qty, unit)
    except (ValueError, KeyError, decimal.InvalidOperation):
        raise errors.InvalidDatetimeFormat(f'invalid input syntax for type interval: "{text}"')
    iv = Interval(months, days, int(round(micros)))
    if abs(iv.micros) > MAX_INTERVAL_MICROS:
        raise interval_time_refused()
    return Interval(-iv.months, -iv.days, -iv.micros) if ago else iv


def _add_quantity(months: int, days: int, micros: Decimal, qty: Decimal, unit: str):
    """The interval so far plus `qty` `unit`s, a fraction spilling down as PostgreSQL's
    AdjustFractDays / AdjustFractSeconds spill it (1.5 months: 1 month 15 days)."""
    mo, d, us = _IV_UNITS[unit]
    if mo:
        whole = int(qty * mo)
        months += whole
        if unit == "month":
            spill = (qty - whole) * 30
            days += int(spill)
            micros += (spill - int(spill)) * USECS_PER_DAY
        else:
            months += int(round((qty * mo - whole)))
    elif d:
        whole = int(qty * d)
        days += whole
        micros += (qty * d - whole) * USECS_PER_DAY
    else:
        micros += _fract_micros(qty * us)
    return months, days, micros


_ISO_DATE = {"Y": "year", "M": "month", "W": "week", "D": "day"}
_ISO_TIME = {"H": "hour", "M": "minute", "S": "second"}
_ISO_PART = re.compile(r"([+-]?\d*\.?\d+)([A-Z])")
_ISO_ALTERNATIVE = re.compile(
    r"P(\d+)(?:-(\d+)(?:-(\d+))?)?(?:T(\d+)(?::(\d+)(?::(\d+(?:\.\d+)?))?)?)?$")


def _iso8601_parts(s: str) -> list[tuple[Decimal, str]]:
    """ISO 8601 intervals as PostgreSQL reads them (DecodeISO8601Interval): the format
    with designators ('P1Y2M3DT4H5M6.5S', 'P1W', 'PT90M', signed and fractional numbers;
    upper case, nothing around it) and the alternative one ('P0001-02-03T04:05:06'):
    (quantity, unit) pairs; ValueError for anything else."""
    alt = _ISO_ALTERNATIVE.match(s)
    if alt is not None and ("-" in s or ":" in s):
        units = ("year", "month", "day", "hour", "minute", "second")
        return [(Decimal(v), u) for v, u in zip(alt.groups(), units) if v is not None]
    body, timed, clock = s[1:].partition("T")
    out = []
    for text, names in ((body, _ISO_DATE), (clock, _ISO_TIME)):
        pos = 0
        while pos < len(text):
            m = _ISO_PART.match(text, pos)
            if m is None or m.group(2) not in names:
                raise ValueError
            out.append((Decimal(m.group(1)), names[m.group(2)]))
            pos = m.end()
    if not out and not timed:  # 'P' alone is 22007, 'PT' a zero interval
        raise ValueError
    return out


_CLOCK_UNIT = {"HOUR": 3_600_000_000, "MINUTE": 60_000_000}


def restrict_interval(iv: Interval, fields: tuple[str, str] | None) -> Interval:
    """An interval cut to its qualifier's fields, as AdjustIntervalForTypmod: the fields
    right of the last are dropped (toward zero), INTERVAL '1 day 2 hours' DAY is 1 day."""
    if fields is None:
        return iv
    first, last = fields
    months, days, micros = iv.months, iv.days, iv.micros
    if last in ("YEAR", "MONTH"):
        days = micros = 0
        if last == "YEAR":
            months = abs(months) // 12 * 12 * (1 if months >= 0 else -1)
    elif last == "DAY":
        micros = 0
    elif last in _CLOCK_UNIT:
        kept = abs(micros) // _CLOCK_UNIT[last] * _CLOCK_UNIT[last]
        micros = kept if micros >= 0 else -kept
    return Interval(months, days, micros)


def format_interval(iv: Interval) -> str:
    """EncodeInterval in IntervalStyle postgres: '1 year 2 mons -3 days +04:05:06.5'."""
    years = int(iv.months / 12) if abs(iv.months) < 2**52 else iv.months // 12
    parts, is_zero, is_before = [], True, False
    for value, unit in ((years, "year"), (iv.months - years * 12, "mon"), (iv.days, "day")):
        if value:
            parts.append(f"{'+' if is_before and value > 0 else ''}{value} {unit}"
                         f"{'' if value == 1 else 's'}")
            is_before, is_zero = value < 0, False
    if is_zero or iv.micros:
        sign = "-" if iv.micros < 0 else ("+" if is_before else "")
        hours, rest = divmod(abs(iv.micros), 3_600_000_000)
        minutes, rest = divmod(rest, 60_000_000)
        seconds, fraction = divmod(rest, 1_000_000)
        clock = f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
        parts.append(clock + (f".{fraction:06d}".rstrip("0") if fraction else ""))
    return " ".join(parts)


def add_interval(ts: dt.datetime, iv: Interval, sign: int = 1) -> dt.datetime:
    """timestamp + interval as PostgreSQL: months on the calendar (clamped to the month's
    last day), then days, then microseconds."""
    y, m = divmod(ts.year * 12 + ts.month - 1 + sign * iv.months, 12)
    try:
        day = min(ts.day, calendar.monthrange(y, m + 1)[1])
        return ts.replace(year=y, month=m + 1, day=day) + dt.timedelta(
            days=sign * iv.days, microseconds=sign * iv.micros)
    except (ValueError, OverflowError, calendar.IllegalMonthError):
        raise errors.QueryError("timestamp out of range", "22008")


def interval_scale(iv: Interval, factor: float, divide: bool) -> Interval:
    """interval * float8 and interval / float8 (PostgreSQL's interval_mul/interval_div:
    fractional months spill into days, fractional days into time)."""
    if divide and factor == 0:
        raise errors.DivisionByZero("division by zero")
    if math.isnan(factor) or math.isinf(factor):
        raise errors.QueryError("interval out of range", "22008")
    op = (lambda x: x / factor) if divide else (lambda x: x * factor)
    months, days = int(op(iv.months)), int(op(iv.days))
    month_days = round((op(iv.months) - months) * 30 * 1e6) / 1e6
    secs = round((op(iv.days) - days + month_days - int(month_days)) * 86400 * 1e6) / 1e6
    if abs(secs) >= 86400:
        days += int(secs / 86400)
        secs -= int(secs / 86400) * 86400
    days += int(month_days)
    return Interval(months, days, int(round(op(iv.micros) + secs * 1e6)))


def interval_key(iv: Interval) -> int:
    """The total order PostgreSQL compares intervals by (a month is 30 days)."""
    return (iv.months * 30 + iv.days) * USECS_PER_DAY + iv.micros


_FIELD_ALIASES = {
    "years": "year", "yr": "year", "yrs": "year", "y": "year", "months": "month",
    "mon": "month", "mons": "month", "days": "day", "d": "day", "hours": "hour", "hr": "hour",
    "hrs": "hour", "h": "hour", "minutes": "minute", "min": "minute", "mins": "minute",
    "m": "minute", "seconds": "second", "sec": "second", "secs": "second", "s": "second",
    "millisecond": "milliseconds", "ms": "milliseconds", "msec": "milliseconds",
    "msecs": "milliseconds", "microsecond": "microseconds", "us": "microseconds",
    "usec": "microseconds", "usecs": "microseconds", "weeks": "week", "w": "week",
    "decades": "decade", "dec": "decade", "centuries": "century", "c": "century",
    "millennia": "millennium", "millenniums": "millennium", "mil": "millennium",
    "qtr": "quarter", "epoch": "epoch", "j": "julian",
}


def field_name(raw: str) -> str:
    """The canonical name of an EXTRACT / date_trunc field ('years' -> 'year')."""
    key = raw.strip().lower()
    return _FIELD_ALIASES.get(key, key)
