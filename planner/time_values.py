"""Times of day as Python values: time (a datetime.time) and time with time zone (TimeTz),
their text input (planner/datetime_input.py) and output with PostgreSQL's rules and
errors, time(p) rounding, casts and the constant folder's arithmetic. 24:00:00, which
PostgreSQL has, is 0A000 (raympp's times end before it).
planner/values.py builds the typed text I/O and casts on these; the kernels are
segment/kernels/expr_datetime.py (time) and expr_timetz.py (timetz).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from planner import datetime_input, errors, time_zones
from planner.temporal import USECS_PER_DAY, Infinite, Interval
from planner.types import Kind

def _context(order: str | None, zone=None):
    return datetime_input.Context(zone=zone or time_zones.session_zone(),
                                  order=order or datetime_input.session_order())


def parse_time(text: str, order: str | None = None, zone=None) -> dt.time:
    """A time of day from its text, as PostgreSQL's time_in reads it
    (planner/datetime_input.py: '12:34', '1:02:03.5 pm', '040506', 'allballs', 'now'; a
    date or zone is read and ignored). 24:00:00 (which PostgreSQL accepts) is 0A000:
    raympp's times end before it."""
    return time_of_micros(datetime_input.time_in(text, _context(order, zone)))


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


def parse_timetz(text: str, order: str | None = None, zone=None) -> TimeTz:
    """time with time zone, as PostgreSQL's timetz_in reads it: a time and a zone (an
    offset, abbreviation or zone name); none means the session's TimeZone."""
    local, west = datetime_input.timetz_in(text, _context(order, zone))
    return TimeTz(local + west * 10**6, west)


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


def round_timetz(v: "TimeTz", precision: int | None) -> "TimeTz":
    """A timetz rounded for timetz(p): its local time, as round_time."""
    if precision is None or v is None:
        return v
    local = time_micros(round_time(time_of_micros(v.local), precision))
    return TimeTz(local + v.zone * 10**6, v.zone)


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
