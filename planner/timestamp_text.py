"""Dates, timestamps and timestamptz constants from their text: PostgreSQL's date/time
input (planner/datetime_input.py) as the Python values of planner/temporal.py.

Its own module because it needs the session's zone (planner/time_zones.py) and DateStyle,
which themselves build on temporal's values.
"""

from __future__ import annotations

import datetime as dt

from planner import datetime_input, errors, time_zones
from planner.temporal import UNIX_EPOCH, UTC, USECS_PER_DAY, Infinite
from planner.types import Kind, SqlType


def parse_timestamp(text: str, t: SqlType, zone=None,
                    order: str | None = None) -> dt.date | dt.datetime | Infinite:
    """A date, timestamp or timestamptz (t) from its text, as PostgreSQL reads it
    (planner/datetime_input.py): a timestamptz without a zone is a wall clock in `zone`
    (a planner.time_zones.Zone; None: the session's), numeric dates in DateStyle's field
    `order` (None: the session's). Python's dates hold years 1..9999: others are 0A000
    here (columns take them all)."""
    ctx = datetime_input.Context(zone=zone or time_zones.session_zone(),
                                 order=order or datetime_input.session_order())
    if t.kind is Kind.DATE:
        v = datetime_input.date_in(text, ctx)
        return v if isinstance(v, Infinite) else _python_value(v, 1, t, text)
    v = datetime_input.timestamp_in(text, t.kind is Kind.TIMESTAMPTZ, ctx)
    if isinstance(v, Infinite):
        return v
    out = _python_value(v, USECS_PER_DAY, t, text)
    return out.replace(tzinfo=UTC) if t.kind is Kind.TIMESTAMPTZ else out


_FIRST_DAY, _END_DAY = -719_162, 2_932_897  # 0001-01-01 and 10000-01-01, days since 1970


def _python_value(v: int, per_day: int, t: SqlType, text: str):
    """Days (per_day 1) or microseconds since 1970 as a date / naive datetime."""
    if not _FIRST_DAY <= v // per_day < _END_DAY:
        raise errors.FeatureNotSupported(
            f'constant {t.kind.value.split(" ")[0]} outside the years 1..9999: "{text.strip()}"')
    if per_day == 1:
        return dt.date(1970, 1, 1) + dt.timedelta(days=v)
    return UNIX_EPOCH + dt.timedelta(microseconds=v)
