"""Interval columns from text: PostgreSQL's interval input syntax, once per distinct value.

Interval syntax is rich ('1 year 2 mons -3 days 04:05:06.5', '@ 2 hours ago', '1.5
months', '1-2', '3 4:05:06', 'mm:ss.fff'), so each distinct text is read by the one
parser of casts and constants (planner/temporal.py parse_interval, PostgreSQL's
DecodeInterval rules and errors) into Arrow's month_day_nano layout, and spread to the
rows. Part of segment/ingest/convert.py's `convert`.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, temporal
from planner.types import SqlType
from segment.ingest.base import first_true, raise_at


def interval_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """An interval column from its text; an error names the first row holding the text."""
    distinct = pc.unique(arr.drop_null())
    values = []
    for s in distinct.to_pylist():
        try:
            iv = temporal.parse_interval(s)
        except errors.QueryError as e:
            raise_at(e, first_true(pc.equal(arr, s)))
        values.append((iv.months, iv.days, iv.micros * 1000))
    return pa.array(values, pa.month_day_nano_interval()).take(
        pc.index_in(arr, value_set=distinct))
