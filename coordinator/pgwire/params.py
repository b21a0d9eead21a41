"""Bind parameters: text or binary bytes from the client -> Python values for the engine.

The engine receives int, float, Decimal, str, bool, date, datetime (aware in UTC for
timestamptz), bytes (bytea, uuid) or None. Untyped (UNKNOWN) parameters stay text, for
the engine to coerce the way PostgreSQL resolves an unknown literal; intervals also arrive
as PostgreSQL interval text, since no Python type holds months. Input errors carry
PostgreSQL's SQLSTATEs: 22P02 for bad text, 22007/22008 for bad dates, 22003 out of
range, 08P01 for malformed binary data.
"""

from __future__ import annotations

import datetime
import decimal
import struct

from coordinator.pgwire import codec, numeric, values
from planner import (binary_values, datetime_input, errors, temporal, time_values, time_zones,
                     timestamp_text)
from planner.types import Kind, SqlType
from planner.array_text import quote_element
from planner.values import format_array

_PG_EPOCH_DATE = datetime.date(2000, 1, 1)
_PG_EPOCH = datetime.datetime(2000, 1, 1)
_UTC = datetime.timezone.utc
_INT_RANGE = {Kind.INT2: 1 << 15, Kind.INT4: 1 << 31, Kind.INT8: 1 << 63}


def _syntax(t: SqlType, text: str) -> errors.QueryError:
    return errors.InvalidTextRepresentation(f'invalid input syntax for type {t}: "{text}"')


def _bool(text: str, t: SqlType) -> bool:
    # boolin: any prefix of true/yes/false/no, on/off (two letters at least), 1/0.
    s = text.strip().lower()
    if s and ("true".startswith(s) or "yes".startswith(s) or s in ("on", "1")):
        return True
    if s and ("false".startswith(s) or "no".startswith(s) or s in ("of", "off", "0")):
        return False
    raise _syntax(t, text)


def _int(text: str, t: SqlType) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise _syntax(t, text) from None
    _check_range(value, t)
    return value


def _check_range(value: int, t: SqlType) -> None:
    bound = _INT_RANGE[t.kind]
    if not -bound <= value < bound:
        raise errors.NumericOutOfRange(f'value "{value}" is out of range for type {t}')


def _float(text: str, t: SqlType) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise _syntax(t, text) from None


def _numeric(text: str, t: SqlType) -> decimal.Decimal:
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        raise _syntax(t, text) from None
    if value.is_snan():
        raise _syntax(t, text)
    return value


def _date(text: str, t: SqlType, order: str) -> datetime.date | temporal.Infinite:
    """date_in (planner/datetime_input.py): every spelling PostgreSQL reads."""
    return timestamp_text.parse_timestamp(text, t, order=order)


def _timestamp(text: str, t: SqlType, order: str) -> datetime.datetime | temporal.Infinite:
    """timestamp_in / timestamptz_in. A timestamptz without a zone of its own stays a
    wall clock: bound as '...'::timestamptz, it is read in the session's TimeZone
    (planner/zone_rules.py)."""
    value = timestamp_text.parse_timestamp(text, t, time_zones.UTC_ZONE, order)
    if t.kind is Kind.TIMESTAMPTZ and not isinstance(value, temporal.Infinite) \
            and not datetime_input.has_zone(text):
        return value.replace(tzinfo=None)
    return value


# date/time text: (text, type, DateStyle's field order) -> value
_DATETIME_TEXT = {
    Kind.DATE: _date, Kind.TIMESTAMP: _timestamp, Kind.TIMESTAMPTZ: _timestamp,
    Kind.TIME: lambda text, t, order: time_values.parse_time(text, order),
    Kind.TIMETZ: lambda text, t, order: time_values.parse_timetz(text, order),
}
_FROM_TEXT = {
    Kind.BOOL: _bool, Kind.INT2: _int, Kind.INT4: _int, Kind.INT8: _int,
    Kind.FLOAT4: _float, Kind.FLOAT8: _float, Kind.NUMERIC: _numeric,
    Kind.BYTEA: lambda text, t: binary_values.parse_bytea(text),
    Kind.UUID: lambda text, t: binary_values.parse_uuid(text),
}


def _unpack(fmt: str):
    size = struct.calcsize(fmt)

    def decode(data: bytes, t: SqlType):
        if len(data) != size:
            raise _bad_binary(t)
        return struct.unpack(fmt, data)[0]
    return decode


def _bad_binary(t: SqlType) -> errors.QueryError:
    return errors.ProtocolViolation(f"incorrect binary data format for type {t}")


def _out_of_range(what: str) -> errors.QueryError:
    return errors.QueryError(f"{what} out of range", "22008")


def _binary_date(data: bytes, t: SqlType) -> datetime.date | temporal.Infinite:
    days = _unpack("!i")(data, t)
    if days in temporal.INFINITE_DAYS:
        return temporal.INFINITY if days > 0 else temporal.NEG_INFINITY
    try:
        return _PG_EPOCH_DATE + datetime.timedelta(days=days)
    except OverflowError:
        raise _out_of_range("date") from None


def _binary_timestamp(data: bytes, t: SqlType) -> datetime.datetime | temporal.Infinite:
    micros = _unpack("!q")(data, t)
    if micros in temporal.INFINITE_MICROS:
        return temporal.INFINITY if micros > 0 else temporal.NEG_INFINITY
    try:
        value = _PG_EPOCH + datetime.timedelta(microseconds=micros)
    except OverflowError:
        raise _out_of_range("timestamp") from None
    return value.replace(tzinfo=_UTC) if t.kind is Kind.TIMESTAMPTZ else value


def _binary_interval(data: bytes, t: SqlType) -> str:
    if len(data) != 16:
        raise _bad_binary(t)
    micros, days, months = struct.unpack("!qii", data)
    return values.interval_text(months, days, micros)


def _binary_time(data: bytes, t: SqlType) -> datetime.time:
    micros = _unpack("!q")(data, t)
    if micros == temporal.USECS_PER_DAY:
        raise errors.FeatureNotSupported("time 24:00:00 is not supported")
    if not 0 <= micros < temporal.USECS_PER_DAY:
        raise _out_of_range("time")
    return time_values.time_of_micros(micros)


def _binary_timetz(data: bytes, t: SqlType) -> time_values.TimeTz:
    if len(data) != 12:
        raise _bad_binary(t)
    micros, zone = struct.unpack("!qi", data)
    if micros == temporal.USECS_PER_DAY:
        raise errors.FeatureNotSupported("time 24:00:00 is not supported")
    if not 0 <= micros < temporal.USECS_PER_DAY or abs(zone) > 15 * 3600 + 59 * 60 + 59:
        raise _out_of_range("time with time zone")
    return time_values.TimeTz(micros + zone * 10**6, zone)


def _binary_bool(data: bytes, t: SqlType) -> bool:
    if len(data) != 1:
        raise _bad_binary(t)
    return data != b"\0"


_FROM_BINARY = {
    Kind.BOOL: _binary_bool,
    Kind.INT2: _unpack("!h"), Kind.INT4: _unpack("!i"), Kind.INT8: _unpack("!q"),
    Kind.FLOAT4: _unpack("!f"), Kind.FLOAT8: _unpack("!d"),
    Kind.NUMERIC: lambda data, t: numeric.decode(data),
    Kind.DATE: _binary_date, Kind.TIMESTAMP: _binary_timestamp,
    Kind.TIMESTAMPTZ: _binary_timestamp, Kind.INTERVAL: _binary_interval,
    Kind.TIME: _binary_time, Kind.TIMETZ: _binary_timetz,
    Kind.OID: _unpack("!I"),  # name and the other catalog types: text (utf8)
    Kind.BYTEA: lambda data, t: bytes(data),
    Kind.UUID: lambda data, t: _binary_uuid(data, t),
}


def _binary_uuid(data: bytes, t: SqlType) -> bytes:
    """uuid_recv: exactly 16 bytes."""
    if len(data) != 16:
        raise _bad_binary(t)
    return bytes(data)


def _binary_jsonb(data: bytes, t: SqlType) -> str:
    """jsonb_recv: a version byte (1), then the text."""
    if not data or data[0] != 1:
        raise errors.QueryError(f"unsupported jsonb version number {data[0] if data else 0}",
                                "22023")
    return _utf8(data[1:])


_FROM_BINARY[Kind.JSONB] = _binary_jsonb


def _binary_array(data: bytes, t: SqlType) -> str:
    """array_recv of a one-dimensional array: its text form, which the engine reads as an
    array literal of the parameter's type."""
    try:
        ndim, _flags, elem_oid = struct.unpack_from("!iiI", data, 0)
        if ndim == 0:
            return format_array((), t)
        if ndim != 1:
            raise errors.FeatureNotSupported("multidimensional array parameters")
        count, _lower = struct.unpack_from("!ii", data, 12)
        pos, items = 20, []
        decoder = _FROM_BINARY.get(t.elem.kind)
        for _ in range(count):
            (size,) = struct.unpack_from("!i", data, pos)
            pos += 4
            if size < 0:
                items.append(None)
                continue
            cell = data[pos:pos + size]
            if len(cell) != size:
                raise _bad_binary(t)
            pos += size
            items.append(_utf8(cell) if decoder is None else decoder(cell, t.elem))
    except struct.error:
        raise _bad_binary(t) from None
    if pos != len(data):
        raise _bad_binary(t)
    if t.elem.kind is Kind.NUMERIC:
        # Each value's own digits: numeric[] without a typmod formats every element at
        # scale 0 (which would round 1.5 to 2); the engine reads the literal's scales.
        return "{" + ",".join("NULL" if v is None else quote_element(format(v, "f"))
                              for v in items) + "}"
    return format_array(tuple(items), t)


_FROM_BINARY[Kind.ARRAY] = _binary_array


def _utf8(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise errors.QueryError('invalid byte sequence for encoding "UTF8"', "22021") from None


def decode(data: bytes | None, t: SqlType, fmt: int, order: str = "mdy") -> object:
    """One parameter value. Text, varchar, char, interval and unknown stay str. Date/time
    text is read in DateStyle's field `order` ('mdy', 'dmy', 'ymd')."""
    if data is None:
        return None
    if fmt == codec.BINARY:
        decoder = _FROM_BINARY.get(t.kind)
        return _utf8(data) if decoder is None else decoder(data, t)
    if fmt != codec.TEXT:
        raise errors.ProtocolViolation(f"unsupported format code: {fmt}")
    text = _utf8(data)
    if t.kind in _DATETIME_TEXT:
        return _DATETIME_TEXT[t.kind](text, t, order)
    decoder = _FROM_TEXT.get(t.kind)
    return text if decoder is None else decoder(text, t)


def resolve_formats(codes: tuple[int, ...], count: int, what: str) -> list[int]:
    """Per-item format codes from a Bind's 0, 1 or `count` codes (parameters or results)."""
    if not codes:
        formats = [codec.TEXT] * count
    elif len(codes) == 1:
        formats = [codes[0]] * count
    elif len(codes) == count:
        formats = list(codes)
    else:
        has = f"{count} parameters" if what == "parameter" else f"query has {count} columns"
        raise errors.ProtocolViolation(f"bind message has {len(codes)} {what} formats but {has}")
    for code in formats:
        if code not in (codec.TEXT, codec.BINARY):
            raise errors.ProtocolViolation(f"unsupported format code: {code}")
    return formats
