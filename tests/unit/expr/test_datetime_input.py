"""PostgreSQL 15's date/time input (planner/datetime_input.py) and its column reader
(segment/kernels/datetime_text.py): expected values are PostgreSQL 15's (TimeZone UTC,
DateStyle ISO with the order given)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from planner import datetime_input as di
from planner import errors
from planner import types as T
from planner.time_zones import Zone
from segment.ingest import convert
from segment.kernels import expr_cast as xcast

_EPOCH = dt.date(1970, 1, 1)


def _date(text: str, order: str = "mdy") -> str:
    return (_EPOCH + dt.timedelta(days=di.date_in(text, di.Context(order=order)))).isoformat()


@pytest.mark.parametrize("text, mdy, dmy, ymd", [
    ("01/02/03", "2003-01-02", "2003-02-01", "2001-02-03"),
    ("1-2-2003", "2003-01-02", "2003-02-01", None),
    ("Jan 2 03", "2003-01-02", "2003-01-02", "2002-01-03"),
    ("02-Jan-03", "2003-01-02", "2003-01-02", "2002-01-03"),
    ("2003-01-02", "2003-01-02", "2003-01-02", "2003-01-02"),
    ("20030102", "2003-01-02", "2003-01-02", "2003-01-02"),
])
def test_field_order(text, mdy, dmy, ymd):
    for order, want in (("mdy", mdy), ("dmy", dmy), ("ymd", ymd)):
        if want is None:
            with pytest.raises(errors.QueryError):
                _date(text, order)
        else:
            assert _date(text, order) == want


@pytest.mark.parametrize("text, sqlstate, message", [
    ("99-01-08", "22008", 'date/time field value out of range: "99-01-08"'),
    ("2023-02-29", "22008", 'date/time field value out of range: "2023-02-29"'),
    ("Jan 2024", "22007", 'invalid input syntax for type date: "Jan 2024"'),
    ("2024-01-05 foo/bar", "22023", 'time zone "foo/bar" not recognized'),
    ("4714-11-23 BC", "22008", 'date out of range: "4714-11-23 BC"'),
])
def test_date_errors(text, sqlstate, message):
    with pytest.raises(errors.QueryError) as e:
        di.date_in(text)
    assert (e.value.sqlstate, e.value.message) == (sqlstate, message)
    if text == "99-01-08":
        assert e.value.hint == 'Perhaps you need a different "datestyle" setting.'


def test_relative_values_read_the_statement_time_in_the_zone():
    now = dt.datetime(2024, 1, 5, 3, 0, tzinfo=dt.timezone.utc)  # 22:00 the day before in NY
    ny = di.Context(zone=Zone(name="America/New_York"), now=now)
    utc = di.Context(now=now)
    assert _EPOCH + dt.timedelta(days=di.date_in("today", ny)) == dt.date(2024, 1, 4)
    assert _EPOCH + dt.timedelta(days=di.date_in("tomorrow", utc)) == dt.date(2024, 1, 6)
    instant = di.timestamp_in("now", True, ny)
    assert instant == di.timestamp_in("2024-01-05 03:00:00+00", True)
    assert di.timestamp_in("today", True, ny) == di.timestamp_in("2024-01-04 05:00+00", True)


def test_zones_in_timestamptz():
    utc = di.timestamp_in("1999-01-08 12:05:06+00", True)
    for text in ("1999-01-08 04:05:06 PST", "1999-01-08 04:05:06-8", "1999-01-08 040506-08",
                 "1999-01-08 04:05:06 America/Los_Angeles", "J2451187 04:05:06 PST"):
        assert di.timestamp_in(text, True) == utc, text
    with pytest.raises(errors.FeatureNotSupported):
        di.timestamp_in("1999-01-08 04:05:06 MSK", True)
    assert di.has_zone("2024-01-05 10:00 CET") and not di.has_zone("Jan 5 2024 10:00")


def test_column_reads_iso_fast_and_the_rest_once_per_distinct_text():
    text = pa.array(["2024-01-05", "Jan 6 2024", None, "2024-01-07", "Jan 6 2024", "epoch",
                     "infinity", "J2451187"])
    got = xcast.to_text(xcast.from_text(text, T.DATE), T.DATE).to_pylist()
    assert got == ["2024-01-05", "2024-01-06", None, "2024-01-07", "2024-01-06",
                   "1970-01-01", "infinity", "1999-01-08"]
    assert convert.convert(text, T.DATE) == xcast.from_text(text, T.DATE)


def test_column_errors_name_the_first_bad_row():
    with pytest.raises(errors.QueryError) as e:
        convert.convert(pa.array(["2024-01-05", "Jan 6 2024", "2024-02-30", "nope"]), T.DATE)
    assert (e.value.sqlstate, e.value.row) == ("22008", 2)
    with pytest.raises(errors.QueryError) as e:
        convert.convert(pa.array(["04:05", "4:05 pm", "25:00"]), T.TIME)
    assert (e.value.sqlstate, e.value.row) == ("22008", 2)


def test_column_timestamptz_in_a_zone():
    text = pa.array(["2024-01-05 10:00", "Jan 5 2024 10:00", "2024-01-05 10:00+02",
                     "2024-01-05 10:00 PST"])
    got = convert.convert(text, T.TIMESTAMPTZ, "America/New_York")
    assert xcast.to_text(got, T.TIMESTAMPTZ).to_pylist() == [
        "2024-01-05 15:00:00+00", "2024-01-05 15:00:00+00", "2024-01-05 08:00:00+00",
        "2024-01-05 18:00:00+00"]


@pytest.mark.parametrize("read, text, sqlstate", [
    (di.time_in, "Mon 4:05", "22007"),          # DecodeTimeOnly has no weekday names
    (di.time_in, "10:00 Jan", "22007"),
    (di.time_in, "10:00 jan-05x", "22007"),     # a POSIX zone with DST: needs a date
    (di.time_in, "10:00 America/New_York", "22007"),
    (di.time_in, "10:00 foo/bar", "22023"),
    (di.date_in, "am 32 h h ,", "22008"),       # PostgreSQL 15: a unit may follow a unit
    (di.date_in, "mm d 32", "22008"),
    (di.timetz_in, "10:00-16", "22009"),
    (di.date_in, "2024-01-05 EST5EDT4,M3.2.0,M11.1.0", "22007"),  # ',' splits fields
    (di.date_in, "2024-01-05 10:00 xst5xdt", "0A000"),  # PostgreSQL reads the DST rules
])
def test_postgres_15_errors(read, text, sqlstate):
    with pytest.raises(errors.QueryError) as e:
        read(text)
    assert e.value.sqlstate == sqlstate


def test_postgres_15_oddities():
    assert di.timetz_in("0405 d s Z") == (4 * 3600 * 10**6 + 5 * 60 * 10**6, 0)
    assert di.timetz_in("allballs") == (0, 0)
    assert di.timetz_in("10:00 Etc/GMT+2") == (10 * 3600 * 10**6, 7200)
    assert di.timestamp_in("2024-01-05 epoch", False) == 0  # 15 marks the word's bit only
    assert di.date_in("jan -infinity") == di.NEG_INFINITY
