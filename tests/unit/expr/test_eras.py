"""Dates and timestamps outside the years 1..9999 (segment/kernels/eras.py): PostgreSQL's
text both ways, its range, and the end of raympp's int64 timestamps."""

from __future__ import annotations

import pyarrow as pa
import pytest

from planner import errors
from planner import types as T
from segment.ingest import convert
from segment.kernels import expr_cast as xcast

# PostgreSQL 15's output for each (SELECT x::date::text, ...)
DATES = ["0044-03-15 BC", "4713-01-01 BC", "4714-11-24 BC", "0001-01-01 BC", "0001-01-01",
         "9999-12-31", "10000-01-01", "5874897-12-31", "0005-02-29 BC", "2024-02-29"]
TIMESTAMPS = ["0044-03-15 12:00:00.5 BC", "4714-11-24 00:00:00 BC", "0001-12-31 23:59:59.999999 BC",
              "10000-01-01 00:00:00", "294246-12-31 23:59:59.999999", "2000-01-01 00:00:00"]


def test_dates_read_and_print_as_postgres():
    values = convert.convert(pa.array(DATES + [None, "infinity"]), T.DATE)
    assert xcast.to_text(values, T.DATE).to_pylist() == DATES + [None, "infinity"]
    assert xcast.from_text(pa.array(DATES), T.DATE) == values.slice(0, len(DATES))


def test_timestamps_read_and_print_as_postgres():
    values = convert.convert(pa.array(TIMESTAMPS), T.TIMESTAMP)
    assert xcast.to_text(values, T.TIMESTAMP).to_pylist() == TIMESTAMPS
    with_zone = [t.replace(" BC", "+00 BC") if t.endswith(" BC") else t + "+00"
                 for t in TIMESTAMPS]
    aware = convert.convert(pa.array(with_zone), T.TIMESTAMPTZ)
    # the offset comes before ' BC'
    assert xcast.to_text(aware, T.TIMESTAMPTZ).to_pylist() == with_zone


def test_bc_after_the_date_and_offsets_with_seconds():
    got = convert.convert(pa.array(["0044-03-15 BC 10:00", "0001-01-01 05:53:28+05:53:28",
                                    "0001-12-31 19:03:58-04:56:02 BC"]), T.TIMESTAMPTZ)
    assert xcast.to_text(got, T.TIMESTAMPTZ).to_pylist() == [
        "0044-03-15 10:00:00+00 BC", "0001-01-01 00:00:00+00", "0001-01-01 00:00:00+00"]


def _error(t, text: str) -> tuple:
    with pytest.raises(errors.QueryError) as info:
        convert.convert(pa.array(["2000-01-01", text]), t)
    return info.value.sqlstate, info.value.message, info.value.row


def test_out_of_range():
    assert _error(T.DATE, "4714-11-23 BC") == ("22008", 'date out of range: "4714-11-23 BC"', 1)
    assert _error(T.DATE, "5874898-01-01") == ("22008", 'date out of range: "5874898-01-01"', 1)
    assert _error(T.TIMESTAMP, "294277-01-01 00:00") == (
        "22008", 'timestamp out of range: "294277-01-01 00:00"', 1)
    # PostgreSQL has it; raympp's int64 microseconds since 1970 do not
    assert _error(T.TIMESTAMP, "294247-01-11 00:00") == (
        "0A000", "timestamps after 294246-12-31 (raympp holds microseconds since 1970 in 64 "
        "bits)", 1)
