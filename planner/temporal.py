"""Dates, timestamps and intervals as Python values: text input and output, interval arithmetic.

A date is a datetime.date, a timestamp a naive datetime.datetime, a timestamptz a UTC-aware
one, an interval an `Interval` (months, days, microseconds). `parse_timestamp` and
`parse_interval` read PostgreSQL's input spellings with its errors, `format_interval`
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
_TS_RE = re.compile(r"\s*(\d{4,})-(\d{1,2})-(\d{1,2})(?:(?:\s+|T)(\d{1,2}):(\d{1,2})"
                    r"(?::(\d{1,2})(?:\.(\d*))?)?)?\s*(Z|[+-]\d{1,2}(?::?\d{2})?)?\s*\Z",
                    re.A | re.I)
_TYPE_WORD = {Kind.TIMESTAMP: "timestamp"}


def _syntax(t: SqlType, text: str) -> errors.QueryError:
    name = _TYPE_WORD.get(t.kind, t.kind.value)
    return errors.InvalidDatetimeFormat(f'invalid input syntax for type {name}: "{text}"')


_TIME_RE = re.compile(r"\s*(?:\d{4,}-\d{1,2}-\d{1,2}(?:\s+|T))?(\d{1,2}):(\d{1,2})"
                      r"(?::(\d{1,2})(?:\.(\d*))?)?\s*(am|pm)?\s*"
                      r"(z|utc|gmt|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)?\s*\Z", re.A | re.I)


def parse_time(text: str) -> dt.time:
    """A time of day from its text ('12:34', '1:02:03.5 pm', '2020-01-01 12:34:56+02': a
    date or zone is read and ignored, as PostgreSQL's time_in does). Microseconds are
    rounded; 24:00:00 (which PostgreSQL accepts) is 0A000: raympp's times end before it."""
    if text.strip(_WS).lower() == "allballs":
        return dt.time()
    m = _TIME_RE.match(text)
    if not m:
        raise errors.InvalidDatetimeFormat(
            f'invalid input syntax for type time: "{text}"')
    hh, mi, ss, frac, ampm, _ = m.groups()
    h, minute, sec = int(hh), int(mi), int(ss or 0)
    if ampm:
        if h > 12:
            raise errors.QueryError(f'date/time field value out of range: "{text}"', "22008")
        h = h % 12 + (12 if ampm.lower() == "pm" else 0)
    micros = int((Decimal("0." + frac) * 10**6).to_integral_value(decimal.ROUND_HALF_EVEN)) \
        if frac else 0
    if h > 24 or minute > 59 or sec > 60 or (h == 24 and (minute or sec or micros)):
        raise errors.QueryError(f'date/time field value out of range: "{text}"', "22008")
    total = ((h * 60 + minute) * 60 + sec) * 10**6 + micros
    if total >= USECS_PER_DAY:
        raise errors.FeatureNotSupported("time 24:00:00 is not supported")
    return time_of_micros(total)


@dataclass(frozen=True, slots=True, order=True)
class TimeTz:
    """A time with time zone: the UTC instant it names (microseconds, local time plus the
    zone) and the zone in seconds west of UTC, as PostgreSQL keeps it. Fields in this
    order compare as PostgreSQL's timetz_cmp: by instant, then by zone."""

    instant: int
    zone: int

    @property
    def local(self) -> int:
        """Microseconds since local midnight."""
        return self.instant - self.zone * 10**6

    def pack(self) -> int:
        """The int64 of raympp's layout: ordered (and equal) as the values are."""
        return (self.instant << 17) | (self.zone + (1 << 16))

    @staticmethod
    def unpack(key: int) -> "TimeTz":
        return TimeTz(key >> 17, (key & 0x1FFFF) - (1 << 16))

    def __str__(self) -> str:  # its text, as a parameter is substituted into SQL
        return format_timetz(self)


_ZONE_NAMED = re.compile(r"\s*(?:\d{4,}-\d{1,2}-\d{1,2}\s+)?\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d*)?)?"
                         r"\s*(?:am|pm)?\s*[a-z][a-z0-9/_+-]*\s*\Z", re.A | re.I)
_MAX_ZONE = 15 * 3600 + 59 * 60 + 59  # PostgreSQL's TZDISP_LIMIT (15:59:59)


def parse_timetz(text: str) -> TimeTz:
    """time with time zone: a time (parse_time's forms) and a numeric offset, Z, UTC or
    GMT; none means the session's TimeZone, UTC. Zone names are 0A000."""
    m = _TIME_RE.match(text)
    if not m:
        if _ZONE_NAMED.match(text):  # a time and a zone name ('12:00 PST')
            raise errors.FeatureNotSupported(f'time zone in "{text}"')
        raise errors.InvalidDatetimeFormat(
            f'invalid input syntax for type time with time zone: "{text}"')
    local = time_micros(parse_time(text[:m.start(6)] if m.group(6) else text))
    tz = (m.group(6) or "z").lower()
    zone = 0
    if tz not in ("z", "utc", "gmt"):
        digits = tz[1:].replace(":", "")
        h, rest = (digits[:2], digits[2:]) if len(digits) > 2 else (digits, "")
        secs = int(h) * 3600 + (int(rest[:2]) * 60 if rest else 0) + (int(rest[2:4]) if
                                                                     len(rest) > 2 else 0)
        if secs > _MAX_ZONE:
            raise errors.QueryError(f'time zone displacement out of range: "{text}"', "22009")
        zone = secs if tz[0] == "-" else -secs
    return TimeTz(local + zone * 10**6, zone)


def format_timetz(v: TimeTz) -> str:
    """timetz_out: the local time, then the offset +HH[:MM[:SS]] (east positive)."""
    return format_time(time_of_micros(v.local)) + format_offset(v.zone)


def format_offset(zone: int) -> str:
    """A zone (seconds west) as PostgreSQL prints offsets: +HH, +HH:MM or +HH:MM:SS east."""
    east = -zone
    h, rest = divmod(abs(east), 3600)
    mi, sec = divmod(rest, 60)
    return f"{'-' if east < 0 else '+'}{h:02d}" + (f":{mi:02d}" if mi or sec else "") + (
        f":{sec:02d}" if sec else "")


def round_time(v: dt.time, precision: int | None) -> dt.time:
    """A time rounded to `precision` fractional digits, half up (AdjustTimeForTypmod);
    rounding up to 24:00:00 is 0A000, as that value is."""
    if precision is None or v is None:
        return v
    q = 10 ** (6 - precision)
    us = (time_micros(v) + q // 2) // q * q
    if us >= USECS_PER_DAY:
        raise errors.FeatureNotSupported("time 24:00:00 is not supported")
    return time_of_micros(us)


def time_of_micros(us: int) -> dt.time:
    """The time us microseconds after midnight (0 <= us < one day)."""
    secs, micros = divmod(us, 10**6)
    return dt.time(secs // 3600, secs // 60 % 60, secs % 60, micros)


def time_micros(v: dt.time) -> int:
    """Microseconds since midnight of a time."""
    return ((v.hour * 60 + v.minute) * 60 + v.second) * 10**6 + v.microsecond


def to_time(v, src: Kind) -> dt.time | None:
    """CAST to time: a timestamp's (timestamptz's, at UTC) time of day; an interval's time
    part modulo a day (interval_time, which ignores days and months); a timetz's local
    time."""
    if isinstance(v, TimeTz):
        return time_of_micros(v.local)
    if isinstance(v, Interval):
        return time_of_micros(v.micros % USECS_PER_DAY)
    if isinstance(v, Infinite):  # timestamp_time: NULL
        return None
    if isinstance(v, dt.datetime):
        return v.time()
    return v


def to_timetz(v) -> TimeTz | None:
    """CAST to timetz: a time or a timestamptz's time of day, in the session's zone (UTC);
    NULL for +/-infinity (timestamptz_timetz)."""
    if isinstance(v, TimeTz):
        return v
    if isinstance(v, Infinite):
        return None
    return TimeTz(time_micros(v.time() if isinstance(v, dt.datetime) else v), 0)


def time_interval(v: dt.time) -> Interval:
    """CAST time AS interval: its microseconds."""
    return Interval(0, 0, time_micros(v))


def time_arith(add: bool, a, b):
    """The constant folder's time arithmetic (typing_rules._time_arith's signatures, the
    time or date first): time +/- interval wraps around the day and reads only the
    interval's time part (time_pl_interval); time - time is an interval; date +/- time a
    timestamp."""
    sign = 1 if add else -1
    if isinstance(a, TimeTz):  # timetz +/- interval: the local time wraps, the zone stays
        local = (a.local + sign * b.micros) % USECS_PER_DAY
        return TimeTz(local + a.zone * 10**6, a.zone)
    if isinstance(b, Interval):
        return time_of_micros((time_micros(a) + sign * b.micros) % USECS_PER_DAY)
    if isinstance(a, dt.time):
        return Interval(0, 0, time_micros(a) - time_micros(b))
    try:
        return dt.datetime.combine(a, dt.time()) + sign * dt.timedelta(
            microseconds=time_micros(b))
    except OverflowError:
        raise errors.QueryError("timestamp out of range", "22008")


def format_time(v: dt.time) -> str:
    """time_out: HH:MM:SS and the fraction without trailing zeros."""
    s = f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    return s + (f".{v.microsecond:06d}".rstrip("0") if v.microsecond else "")


def parse_timestamp(text: str, t: SqlType) -> dt.datetime | Infinite:
    """A date, timestamp or timestamptz (t) from its ISO text; an offset converts a
    timestamptz to UTC. 'infinity' and '-infinity' (any case) are Infinite."""
    word = text.strip(_WS).lower()
    if word in ("infinity", "-infinity"):
        return NEG_INFINITY if word[0] == "-" else INFINITY
    m = _TS_RE.match(text)
    if not m:
        raise _syntax(t, text)
    y, mo, d, hh, mi, ss, frac, tz = m.groups()
    h, minute, sec = int(hh or 0), int(mi or 0), int(ss or 0)
    micros = int(round(Decimal("0." + frac) * 10**6)) if frac else 0
    try:
        if h > 24 or minute > 59 or sec > 60 or (h == 24 and (minute or sec or micros)):
            raise ValueError
        v = dt.datetime(int(y), int(mo), int(d)) + dt.timedelta(
            hours=h, minutes=minute, seconds=sec, microseconds=micros)
    except (ValueError, OverflowError):
        raise errors.QueryError(f'date/time field value out of range: "{text}"', "22008")
    if t.kind is Kind.TIMESTAMPTZ:
        offset = 0
        if tz and tz.upper() != "Z":
            digits = tz[1:].replace(":", "")
            offset = int(digits[:2]) * 3600 + (int(digits[2:]) * 60 if len(digits) > 2 else 0)
            offset = -offset if tz[0] == "-" else offset
        v = (v - dt.timedelta(seconds=offset)).replace(tzinfo=UTC)
    return v


def has_offset(text: str) -> bool:
    """Whether timestamp text names its own UTC offset (then no time zone reads it)."""
    m = _TS_RE.match(text)
    return bool(m and m.group(8))


_IV_UNITS = {"microseconds": (0, 0, 1), "milliseconds": (0, 0, 1000), "second": (0, 0, 10**6),
             "minute": (0, 0, 60 * 10**6), "hour": (0, 0, 3600 * 10**6), "day": (0, 1, 0),
             "week": (0, 7, 0), "month": (1, 0, 0), "year": (12, 0, 0), "decade": (120, 0, 0),
             "century": (1200, 0, 0), "millennium": (12000, 0, 0)}
_IV_TOKEN = re.compile(r"\s*(?:([+-])?(\d+):(\d+)(?::(\d+(?:\.\d*)?))?|([+-]?(?:\d+\.?\d*|\.\d+))"
                       r"\s*([a-z]+)?)", re.A | re.I)


def parse_interval(text: str) -> Interval:
    """PostgreSQL's interval input: '90 day', '1 year 2 mons', '-1 day +02:03:04.5',
    '@ 3 days ago', '1.5 months' (fractions spill down as PostgreSQL does)."""
    s = text.strip(_WS).lower()
    s = s[1:] if s.startswith("@") else s
    ago = s.endswith(" ago") or s == "ago"
    s = s[:-3] if ago else s
    months, days, micros, pos = 0, 0, Decimal(0), 0
    try:
        if not s.strip():
            raise ValueError
        while pos < len(s.rstrip(_WS)):
            m = _IV_TOKEN.match(s, pos)
            if not m or m.end() == pos:
                raise ValueError
            pos = m.end()
            if m.group(2) is not None:
                seconds = (int(m.group(2)) * 60 + int(m.group(3))) * 60 + Decimal(m.group(4) or 0)
                us = seconds * 10**6
                micros += -us if m.group(1) == "-" else us
                continue
            qty, unit = Decimal(m.group(5)), field_name(m.group(6) or "second")
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
                micros += qty * us
    except (ValueError, KeyError, decimal.InvalidOperation):
        raise errors.InvalidDatetimeFormat(f'invalid input syntax for type interval: "{text}"')
    iv = Interval(months, days, int(round(micros)))
    return Interval(-iv.months, -iv.days, -iv.micros) if ago else iv


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
