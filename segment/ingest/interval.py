"""Interval columns from text: PostgreSQL's interval input syntax, value by value.

Interval columns are rare and their syntax is rich ('1 year 2 mons -3 days 04:05:06.5',
'@ 2 hours ago', '1.5 months'), so each value is parsed in Python into Arrow's
month_day_nano layout. Part of segment/ingest/convert.py's `convert`.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pyarrow as pa

from planner import errors, temporal
from planner.types import SqlType
from segment.ingest.base import WS, raise_at


def interval_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    # Interval columns are rare and their syntax is rich: parsed value by value.
    values = []
    for i, s in enumerate(arr.to_pylist()):
        try:
            values.append(None if s is None else parse_interval(s))
        except errors.QueryError as e:
            raise_at(e, i)
    return pa.array(values, pa.month_day_nano_interval())


_UNITS = {  # unit -> (months, days, microseconds) per one
    "millennium": (12000, 0, 0), "century": (1200, 0, 0), "decade": (120, 0, 0),
    "year": (12, 0, 0), "month": (1, 0, 0), "week": (0, 7, 0), "day": (0, 1, 0),
    "hour": (0, 0, 3_600_000_000), "minute": (0, 0, 60_000_000), "second": (0, 0, 1_000_000),
    "millisecond": (0, 0, 1000), "microsecond": (0, 0, 1)}
_UNIT_ALIASES = {"millennia": "millennium", "centuries": "century", "decades": "decade",
                 "y": "year", "yr": "year", "yrs": "year", "years": "year", "mon": "month",
                 "mons": "month", "months": "month", "w": "week", "weeks": "week", "d": "day",
                 "days": "day", "h": "hour", "hr": "hour", "hrs": "hour", "hours": "hour",
                 "m": "minute", "min": "minute", "mins": "minute", "minutes": "minute",
                 "s": "second", "sec": "second", "secs": "second", "seconds": "second",
                 "ms": "millisecond", "msec": "millisecond", "milliseconds": "millisecond",
                 "us": "microsecond", "usec": "microsecond", "microseconds": "microsecond"}
_INTERVAL_TOKEN = re.compile(
    r"\s*(?:(?P<clock>[+-]?\d+:\d{1,2}(?::\d{1,2}(?:\.\d*)?)?)"
    r"|(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))\s*(?P<unit>[a-z]+)?|(?P<word>@|ago))", re.I)


def parse_interval(text: str) -> tuple[int, int, int]:
    """PostgreSQL-style interval text ('1 year 2 mons -3 days 04:05:06.5', '@ 2 hours
    ago') as (months, days, nanoseconds). Fractions spill down as in PostgreSQL (a month is
    30 days, a day 24 hours)."""
    months = days = micros = 0
    negate, pos, s = False, 0, text.strip(WS)
    bad = errors.InvalidDatetimeFormat(f'invalid input syntax for type interval: "{text}"')
    while pos < len(s):
        m = _INTERVAL_TOKEN.match(s, pos)
        if m is None or m.end() == pos:
            raise bad
        pos = m.end()
        if m["word"]:
            negate = negate or m["word"].lower() == "ago"
        elif m["clock"]:
            clock = m["clock"]
            sign = -1 if clock.startswith("-") else 1
            parts = clock.lstrip("+-").split(":")
            secs = Decimal(parts[2]) if len(parts) > 2 else Decimal(0)
            micros += sign * int((int(parts[0]) * 3600 + int(parts[1]) * 60 + secs) * 1_000_000)
        else:
            # a number without a unit right before a time of day is days ('3 4:05:06')
            nxt = _INTERVAL_TOKEN.match(s, pos)
            bare = "day" if nxt is not None and nxt["clock"] else "second"
            unit = (m["unit"] or bare).lower()
            unit = _UNIT_ALIASES.get(unit, unit)
            if unit not in _UNITS:
                raise bad
            n = Decimal(m["num"])
            per_month, per_day, per_micro = _UNITS[unit]
            whole_months = int(n * per_month)
            day_part = (n * per_month - whole_months) * 30 + n * per_day
            months += whole_months
            days += int(day_part)
            micros += int((day_part - int(day_part)) * 86_400_000_000 + n * per_micro)
    if negate:
        months, days, micros = -months, -days, -micros
    if abs(micros) > temporal.MAX_INTERVAL_MICROS:
        raise temporal.interval_time_refused()
    return months, days, micros * 1000
