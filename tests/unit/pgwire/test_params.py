"""Decoding Bind parameters from text and binary format into the engine's Python values."""

import datetime as dt
import struct
import uuid
from decimal import Decimal

import pytest
from psycopg.adapt import PyFormat, Transformer

from coordinator.pgwire import params
from planner import errors
from planner import types as T

UTC = dt.timezone.utc


@pytest.mark.parametrize("t, raw, expected", [
    (T.BOOL, "t", True), (T.BOOL, "FALSE", False), (T.BOOL, " yes ", True), (T.BOOL, "of", False),
    (T.BOOL, "on", True), (T.BOOL, "0", False),
    (T.INT2, "-32768", -32768), (T.INT4, " 42 ", 42), (T.INT8, "9223372036854775807", 2**63 - 1),
    (T.FLOAT4, "1.5", 1.5), (T.FLOAT8, "-Infinity", float("-inf")), (T.FLOAT8, "1e-5", 1e-5),
    (T.numeric(None, 0), "12.30", Decimal("12.30")),
    (T.TEXT, " keep spaces ", " keep spaces "), (T.varchar(3), "abc", "abc"),
    (T.DATE, "2024-02-29", dt.date(2024, 2, 29)),
    (T.TIMESTAMP, "2024-01-02 03:04:05.6", dt.datetime(2024, 1, 2, 3, 4, 5, 600000)),
    (T.TIMESTAMP, "2024-01-02 03:04:05+05", dt.datetime(2024, 1, 2, 3, 4, 5)),
    (T.TIMESTAMPTZ, "2024-01-02 03:04:05+02",
     dt.datetime(2024, 1, 2, 1, 4, 5, tzinfo=UTC)),
    # no offset: a wall clock, read in the session's TimeZone where it is bound
    (T.TIMESTAMPTZ, "2024-01-02 03:04:05", dt.datetime(2024, 1, 2, 3, 4, 5)),
    (T.INTERVAL, "1 day", "1 day"),
    (T.UNKNOWN, "anything 1", "anything 1"),
])
def test_text_parameters(t, raw, expected):
    value = params.decode(raw.encode(), t, 0)
    assert value == expected and type(value) is type(expected)
    if isinstance(expected, dt.datetime):
        assert value.tzinfo == expected.tzinfo


def test_null_parameter():
    assert params.decode(None, T.INT4, 0) is None
    assert params.decode(None, T.INT4, 1) is None


@pytest.mark.parametrize("value, t", [
    (True, T.BOOL), (12345, T.INT8), (-7, T.INT2), (2.5, T.FLOAT8),
    (Decimal("-12.340"), T.numeric(None, 0)), ("héllo", T.TEXT),
    (dt.date(1999, 12, 31), T.DATE), (dt.datetime(2024, 1, 2, 3, 4, 5, 6), T.TIMESTAMP),
    (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), T.TIMESTAMPTZ),
])
def test_binary_parameters_from_psycopg_dumpers(value, t):
    dumper = Transformer().get_dumper(value, PyFormat.BINARY)
    data = bytes(dumper.dump(value))
    if t.kind is T.Kind.INT8 and len(data) != 8:  # psycopg picks the smallest int type
        data = struct.pack("!q", value)
    if t.kind is T.Kind.INT2:
        data = struct.pack("!h", value)
    got = params.decode(data, t, 1)
    assert got == value and type(got) is type(value)


def test_binary_float4_interval_and_unknown():
    assert params.decode(struct.pack("!f", 0.25), T.FLOAT4, 1) == 0.25
    interval = struct.pack("!qii", 3_600_000_000 + 500_000, -2, 14)
    assert params.decode(interval, T.INTERVAL, 1) == "1 year 2 mons -2 days +01:00:00.5"
    assert params.decode(b"raw", T.UNKNOWN, 1) == "raw"


@pytest.mark.parametrize("t, raw, error, sqlstate", [
    (T.INT4, "12x", 'invalid input syntax for type integer: "12x"', "22P02"),
    (T.INT2, "40000", 'value "40000" is out of range for type smallint', "22003"),
    (T.INT4, "2147483648", "out of range for type integer", "22003"),
    (T.BOOL, "maybe", 'invalid input syntax for type boolean: "maybe"', "22P02"),
    (T.BOOL, "o", "invalid input syntax for type boolean", "22P02"),
    (T.FLOAT8, "one", "invalid input syntax for type double precision", "22P02"),
    (T.numeric(None, 0), "1.2.3", "invalid input syntax for type numeric", "22P02"),
    (T.DATE, "2024-13-01", 'date/time field value out of range: "2024-13-01"', "22008"),
    (T.DATE, "2024-01-05x", 'invalid input syntax for type date: "2024-01-05x"', "22007"),
    (T.TIMESTAMP, "yesterday-ish", "invalid input syntax for type timestamp", "22007"),
])
def test_bad_text_parameters(t, raw, error, sqlstate):
    with pytest.raises(errors.QueryError, match=error) as e:
        params.decode(raw.encode(), t, 0)
    assert e.value.sqlstate == sqlstate


@pytest.mark.parametrize("t, data", [
    (T.INT4, b"\0\0\1"), (T.INT8, b"\0" * 4), (T.BOOL, b""), (T.FLOAT8, b"\0"),
    (T.INTERVAL, b"\0" * 15), (T.numeric(None, 0), b"\0\1"),
])
def test_malformed_binary_parameters_are_protocol_violations(t, data):
    with pytest.raises(errors.ProtocolViolation):
        params.decode(data, t, 1)


def test_invalid_utf8_and_format_code():
    with pytest.raises(errors.QueryError) as e:
        params.decode(b"\xff", T.TEXT, 0)
    assert e.value.sqlstate == "22021"
    with pytest.raises(errors.ProtocolViolation, match="unsupported format code: 3"):
        params.decode(b"1", T.INT4, 3)


def test_resolve_formats():
    assert params.resolve_formats((), 3, "parameter") == [0, 0, 0]
    assert params.resolve_formats((1,), 2, "result") == [1, 1]
    assert params.resolve_formats((0, 1), 2, "result") == [0, 1]
    with pytest.raises(errors.ProtocolViolation,
                       match="bind message has 2 result formats but query has 3 columns"):
        params.resolve_formats((0, 1), 3, "result")
    with pytest.raises(errors.ProtocolViolation,
                       match="bind message has 2 parameter formats but 1 parameters"):
        params.resolve_formats((0, 1), 1, "parameter")
    with pytest.raises(errors.ProtocolViolation, match="unsupported format code: 5"):
        params.resolve_formats((5,), 1, "parameter")


def test_bytea_and_uuid_parameters():
    u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    assert params.decode(b"\\x00ff", T.BYTEA, 0) == b"\x00\xff"
    assert params.decode(b"a\\\\b", T.BYTEA, 0) == b"a\\b"     # escape format
    assert params.decode(b"\x00\\", T.BYTEA, 1) == b"\x00\\"    # binary: the bytes
    assert params.decode(str(u).upper().encode(), T.UUID, 0) == u.bytes
    tx = Transformer()
    # (psycopg's text dumper of bytes needs a connection: tests/e2e/test_bytea_uuid.py)
    for value, t, fmts in ((b"\x00x", T.BYTEA, (PyFormat.BINARY,)),
                           (u, T.UUID, (PyFormat.TEXT, PyFormat.BINARY))):
        for fmt in fmts:
            data = bytes(tx.get_dumper(value, fmt).dump(value))
            got = params.decode(data, t, 1 if fmt is PyFormat.BINARY else 0)
            assert got == (value.bytes if isinstance(value, uuid.UUID) else value)
    with pytest.raises(errors.QueryError) as e:
        params.decode(b"nope", T.UUID, 0)
    assert e.value.sqlstate == "22P02"
    with pytest.raises(errors.QueryError) as e:
        params.decode(b"\x01", T.UUID, 1)
    assert e.value.sqlstate == "08P01"
