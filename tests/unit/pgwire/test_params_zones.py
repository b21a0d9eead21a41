"""Date and timestamp parameters with a zone after a blank, as pgjdbc's setDate and
setTimestamp send them ('2024-12-31 +00'); PostgreSQL's date_in ignores the zone."""

from __future__ import annotations

import datetime as dt

import pytest

from coordinator.pgwire import codec, params
from planner import errors, types
from planner.types import Kind, SqlType

UTC = dt.timezone.utc


@pytest.mark.parametrize(("text", "want"), [
    ("2024-12-31 +00", dt.date(2024, 12, 31)),
    ("2024-12-31 -05:30", dt.date(2024, 12, 31)),
    ("2024-12-31", dt.date(2024, 12, 31)),
    ("2024-01-02 03:04:05+01", dt.date(2024, 1, 2)),
    (" 2024-02-29 ", dt.date(2024, 2, 29)),
])
def test_date(text, want):
    assert params.decode(text.encode(), SqlType(Kind.DATE), codec.TEXT) == want


@pytest.mark.parametrize(("kind", "text", "want"), [
    (Kind.TIMESTAMPTZ, "2024-01-02 03:04:05.6 +00", dt.datetime(2024, 1, 2, 3, 4, 5, 600000,
                                                                  tzinfo=UTC)),
    (Kind.TIMESTAMPTZ, "2024-01-02 03:04:05 -05:30", dt.datetime(2024, 1, 2, 8, 34, 5,
                                                                   tzinfo=UTC)),
    (Kind.TIMESTAMP, "2024-01-02 03:04:05.6 +02", dt.datetime(2024, 1, 2, 3, 4, 5, 600000)),
])
def test_timestamp(kind, text, want):
    assert params.decode(text.encode(), SqlType(kind), codec.TEXT) == want


@pytest.mark.parametrize("text, sqlstate", [("2024-13-01 +00", "22008"), ("x +00", "22007"),
                                             ("2024-12-31 +", "22007")])
def test_bad(text, sqlstate):
    with pytest.raises(errors.QueryError) as info:
        params.decode(text.encode(), types.DATE, codec.TEXT)
    assert info.value.sqlstate == sqlstate  # PostgreSQL 15's date_in
