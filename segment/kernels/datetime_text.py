"""Date/time text of a column as values, in bulk: the caller's vectorized parser reads
the plain ISO rows, planner/datetime_input.py (PostgreSQL's whole input syntax) the
others, once per distinct text. Every path that reads date, timestamp, timestamptz,
time or timetz text from columns (casts, AT TIME ZONE's text input, COPY) ends here, so
they all read and refuse as constants do.

`column(arr, t, fast, zone)`: `fast(text)` is the caller's Arrow parser (a typed array,
or None / an exception when some value is not its form). It gets the whole column
first; when that fails, only the rows that look like ISO (the forms Arrow reads as
PostgreSQL does), and the decoder the rest; if even those fail, the decoder reads every
distinct value, and its errors are PostgreSQL's, with the first failing row (`row`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import datetime_input, errors
from planner.temporal import INFINITE_DAYS, INFINITE_MICROS, Infinite
from planner.time_values import TimeTz
from planner.time_zones import Zone
from planner.types import Kind, SqlType

_WS = "[ \t\n\r\v\f]*"
_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_CLOCK = r"[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?"
_OFFSET = r"([+-][0-9]{2}(:?[0-9]{2})?|Z)?"
# The rows handed to the fast parser when it cannot read the whole column.
_ISO = {
    Kind.DATE: f"^{_WS}{_DATE}{_WS}$",
    Kind.TIMESTAMP: f"^{_WS}{_DATE}({_CLOCK})?{_WS}$",
    Kind.TIMESTAMPTZ: f"^{_WS}{_DATE}({_CLOCK}{_OFFSET})?{_WS}$",
    Kind.TIME: f"^{_WS}[0-9]{{2}}:[0-9]{{2}}(:[0-9]{{2}}(\\.[0-9]{{1,6}})?)?{_WS}$",
}


def _reader(t: SqlType, zone: str | None, order: str):
    """One text -> the layout's integer (or +/-infinity) for t, as PostgreSQL reads it."""
    ctx = datetime_input.Context(zone=None if zone is None else Zone.from_spec(zone),
                                 order=order)
    k = t.kind
    if k is Kind.DATE:
        return lambda s: datetime_input.date_in(s, ctx)
    if k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        return lambda s: datetime_input.timestamp_in(s, k is Kind.TIMESTAMPTZ, ctx)
    if k is Kind.TIME:
        return lambda s: datetime_input.time_in(s, ctx)
    if k is Kind.TIMETZ:
        def timetz(s: str) -> int:
            local, west = datetime_input.timetz_in(s, ctx)
            return TimeTz(local + west * 10**6, west).pack()
        return timetz
    raise errors.InternalError(f"date/time text of type {t}")


def _layout_int(v, t: SqlType) -> int:
    if not isinstance(v, Infinite):
        return v
    ends = INFINITE_DAYS if t.kind is Kind.DATE else INFINITE_MICROS
    return ends[0] if v.sign > 0 else ends[1]


def decode(arr: pa.Array, t: SqlType, zone: str | None = None,
           order: str = "mdy") -> pa.Array:
    """Every value of `arr` (text) through the decoder, once per distinct text; an error
    names the first row holding the text that failed."""
    read = _reader(t, zone, order)
    distinct = pc.unique(arr.drop_null())  # in order of first appearance
    ints = []
    for s in distinct.to_pylist():
        try:
            ints.append(_layout_int(read(s), t))
        except errors.QueryError as e:
            e.row = int(np.flatnonzero(
                pc.fill_null(pc.equal(arr, s), False).to_numpy(zero_copy_only=False))[0])
            raise
    width = pa.int32() if t.kind is Kind.DATE else pa.int64()
    values = pa.array(ints, width).take(pc.index_in(arr, value_set=distinct))
    return values.view(pa.int64() if t.kind is Kind.TIMETZ else t.arrow_type())


def column(arr: pa.Array, t: SqlType, fast, zone: str | None = None,
           order: str = "mdy") -> pa.Array:
    """`arr` (text) as values of t: `fast` where it reads them, the decoder elsewhere
    (see the module docstring). `zone`: the zone (a Zone spec) that a timestamptz
    without its own reads its wall clock in; None is UTC. `order`: DateStyle's field
    order ('mdy', 'dmy', 'ymd'); the fast parsers read only year-first ISO text."""
    whole = _attempt(fast, arr)
    if whole is not None:
        return whole
    pattern = _ISO.get(t.kind)
    iso = None if pattern is None else pc.fill_null(pc.match_substring_regex(arr, pattern),
                                                    False)
    if iso is None or not pc.any(iso).as_py():
        return decode(arr, t, zone, order)
    is_iso = np.asarray(iso, dtype=bool)
    read_fast = _attempt(fast, arr.filter(iso))
    if read_fast is None:  # a bad ISO value: the decoder names it
        return decode(arr, t, zone, order)
    others = np.flatnonzero(~is_iso)
    try:
        slow = decode(arr.take(pa.array(others)), t, zone, order)
    except errors.QueryError as e:
        e.row = int(others[e.row])
        raise
    # back in row order: the i-th ISO row is read_fast[i], the j-th other row slow[j]
    idx = np.empty(len(arr), np.int64)
    idx[is_iso] = np.arange(len(read_fast))
    idx[others] = len(read_fast) + np.arange(len(others))
    return pa.concat_arrays([read_fast.cast(slow.type), slow]).take(pa.array(idx))


def _attempt(fast, arr: pa.Array) -> pa.Array | None:
    """The fast parser's reading of arr, or None where it cannot read a value: a fast path
    only; the decoder then reads the rows and raises PostgreSQL's error naming a bad one."""
    try:
        return fast(arr)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, errors.QueryError, ValueError):
        return None
