"""COPY FROM in binary format: the PGCOPY framing, each type's binary form, errors, and
input cut at every byte."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

from coordinator.pgwire import numeric
from planner import errors
from planner import types as T
from planner.schema import ColumnDef
from segment.ingest import copy_binary as cb

NULL = struct.pack("!i", -1)


def field(b: bytes) -> bytes:
    return struct.pack("!i", len(b)) + b


def tup(*fields: bytes) -> bytes:
    return struct.pack("!h", len(fields)) + b"".join(fields)


def parse(data: bytes, cols, pieces=None, block_bytes=cb.BLOCK_BYTES, batch_rows=cb.BATCH_ROWS):
    parser = cb.BinaryCopyParser(cols, table="t", block_bytes=block_bytes, batch_rows=batch_rows)
    batches = []
    for piece in pieces or [data]:
        batches += parser.feed(piece)
    batches += parser.finish()
    rows = [tuple(r.values()) for b in batches for r in b.to_pylist()]
    assert parser.rows == len(rows)
    return rows


def error(data: bytes, cols) -> errors.QueryError:
    with pytest.raises(errors.QueryError) as info:
        parse(data, cols)
    return info.value


COLS = [ColumnDef("i2", T.INT2), ColumnDef("i4", T.INT4), ColumnDef("i8", T.INT8),
        ColumnDef("f4", T.FLOAT4), ColumnDef("f8", T.FLOAT8), ColumnDef("b", T.BOOL),
        ColumnDef("s", T.TEXT), ColumnDef("v", T.varchar(5)), ColumnDef("c", T.char(3)),
        ColumnDef("n", T.numeric(15, 2)), ColumnDef("w", T.numeric(None, 4)),
        ColumnDef("d", T.DATE), ColumnDef("ts", T.TIMESTAMP), ColumnDef("tz", T.TIMESTAMPTZ),
        ColumnDef("iv", T.INTERVAL)]


def all_types_row(k: int) -> bytes:
    return tup(field(struct.pack("!h", -k)), field(struct.pack("!i", 1000 * k)),
               field(struct.pack("!q", -(10**15) * k)), field(struct.pack("!f", 0.5 * k)),
               field(struct.pack("!d", 1.25 * k)), field(bytes([k % 2])),
               field(f"tab\there\nnew ünï {k}".encode()), field(b"abc"), field(b"x"),
               field(numeric.encode(-123456 * k, 3)),
               field(numeric.encode_decimal(Decimal("12345678901234567890.00005"))),
               field(struct.pack("!i", -1 + k)), field(struct.pack("!q", 1_500_000 * k)),
               field(struct.pack("!q", 0)), field(struct.pack("!qii", 3_600_000_001, k, -k)))


DATA = cb.HEADER + all_types_row(1) + tup(*[NULL] * len(COLS)) + all_types_row(2) + cb.TRAILER


def test_all_types():
    rows = parse(DATA, COLS)
    assert rows[1] == (None,) * len(COLS)
    r = rows[0]
    assert r[:6] == (-1, 1000, -(10**15), 0.5, 1.25, True)
    assert r[6:9] == ("tab\there\nnew ünï 1", "abc", "x")  # char(3) kept without padding
    assert r[9] == -12346  # -123.456 rounds half away from zero to -123.46
    assert r[10] == Decimal("12345678901234567890.0001")
    assert r[11] == dt.date(2000, 1, 1)
    assert r[12] == dt.datetime(2000, 1, 1, 0, 0, 1, 500000)
    assert r[13].replace(tzinfo=None) == dt.datetime(2000, 1, 1)
    assert (r[14].months, r[14].days, r[14].nanoseconds) == (-1, 1, 3_600_000_001_000)
    assert rows[2][0] == -2 and rows[2][5] is False


def test_numeric_forms():
    cols = [ColumnDef("n", T.numeric(None, 6))]
    values = ["0", "-0.000001", "123456789.123456", "10000", "0.5", "-99990000", "1E+12"]
    data = cb.HEADER + b"".join(tup(field(numeric.encode_decimal(Decimal(v)))) for v in values)
    assert [r[0] for r in parse(data + cb.TRAILER, cols)] == [Decimal(v) for v in values]
    # numeric_send of 0.1 with weight -1 and 12.5 with trailing digit groups
    raw = [struct.pack("!hhHh", 1, -1, 0, 1) + struct.pack("!h", 1000),
           struct.pack("!hhHh", 2, 0, 0x4000, 1) + struct.pack("!hh", 12, 5000)]
    data = cb.HEADER + b"".join(tup(field(r)) for r in raw) + cb.TRAILER
    assert [r[0] for r in parse(data, cols)] == [Decimal("0.1"), Decimal("-12.5")]
    nan = cb.HEADER + tup(field(struct.pack("!hhHh", 0, 0, 0xC000, 0))) + cb.TRAILER
    assert error(nan, cols).sqlstate == "0A000"


def test_every_split_position_and_small_blocks():
    expected = parse(DATA, COLS)
    for cut in range(len(DATA) + 1):
        got = parse(DATA, COLS, pieces=[DATA[:cut], DATA[cut:]], block_bytes=16)
        assert repr(got) == repr(expected), cut  # repr: NaN-free, but keeps types exact
    bytewise = [DATA[i:i + 1] for i in range(len(DATA))]
    assert repr(parse(DATA, COLS, pieces=bytewise, block_bytes=1, batch_rows=1)) == repr(expected)


def test_header_extension_and_missing_trailer():
    cols = [ColumnDef("a", T.INT4)]
    header = cb.SIGNATURE + struct.pack("!iI", 0, 4) + b"ext!"
    assert parse(header + tup(field(struct.pack("!i", 5))) + cb.TRAILER, cols) == [(5,)]
    # PostgreSQL accepts the end of data at a tuple boundary without the trailer.
    assert parse(cb.HEADER + tup(field(struct.pack("!i", 5))), cols) == [(5,)]
    assert parse(cb.HEADER + cb.TRAILER, cols) == []


@pytest.mark.parametrize("data, state, message", [
    (b"", "22P04", "COPY file signature not recognized"),
    (b"PGCOPY\n\xff\r\n\x01" + bytes(8), "22P04", "COPY file signature not recognized"),
    (cb.SIGNATURE + struct.pack("!ii", 1 << 16, 0), "22P04",
     "invalid COPY file header (WITH OIDS)"),
    (cb.SIGNATURE + struct.pack("!ii", 1 << 20, 0), "22P04",
     "unrecognized critical flags in COPY file header"),
    (cb.HEADER + tup(field(b"\x00\x00\x00\x01"), field(b"x")) + cb.TRAILER, "22P04",
     "COPY t, line 1: row field count is 2, expected 1"),
    (cb.HEADER + tup(field(b"\x00\x00\x00\x01")) + tup(field(b"\x01")) + cb.TRAILER, "22P03",
     "COPY t, line 2, column a: incorrect binary data format"),
    (cb.HEADER + tup(field(b"\x00\x00\x00\x01"))[:-2], "22P04",
     "COPY t, line 1: unexpected EOF in COPY data"),
    (cb.HEADER + tup(field(b"\x00\x00\x00\x01")) + cb.TRAILER + b"x", "22P04",
     "received copy data after EOF marker"),
    (cb.HEADER + struct.pack("!hi", 1, -2) + cb.TRAILER, "22P04",
     "COPY t, line 1: invalid field size"),
])
def test_framing_errors(data, state, message):
    e = error(data, [ColumnDef("a", T.INT4)])
    assert (e.sqlstate, e.located) == (state, message)


def test_value_errors():
    cols = [ColumnDef("a", T.INT4), ColumnDef("s", T.varchar(2), not_null=True)]
    one = field(struct.pack("!i", 1))
    e = error(cb.HEADER + tup(one, field(b"ok")) + tup(one, field(b"\xff")) + cb.TRAILER, cols)
    assert (e.sqlstate, e.located) == (
        "22021", 'COPY t, line 2, column s: invalid byte sequence for encoding "UTF8": 0xff')
    e = error(cb.HEADER + tup(one, field(b"long")) + cb.TRAILER, cols)
    assert (e.sqlstate, e.located) == (
        "22001", "COPY t, line 1, column s: value too long for type character varying(2)")
    e = error(cb.HEADER + tup(one, field(b"ok")) + tup(one, NULL) + cb.TRAILER, cols)
    assert (e.sqlstate, e.located) == (
        "23502", 'COPY t, line 2: null value in column "s" of relation "t" violates not-null '
                 "constraint")
    e = error(cb.HEADER + tup(one, field(b"a\x00")) + cb.TRAILER, cols)
    assert e.sqlstate == "22021"
    big = cb.HEADER + tup(field(struct.pack("!h", 1))) + cb.TRAILER
    assert error(big, [ColumnDef("a", T.INT4)]).sqlstate == "22P03"


def test_long_intervals_and_timestamps_are_refused():
    # PostgreSQL's binary values that raympp's layouts cannot hold: 0A000, not wrapped
    cols = [ColumnDef("iv", T.INTERVAL)]
    long_time = field(struct.pack("!qii", 2562047788 * 3_600_000_000, 0, 0))
    assert error(cb.HEADER + tup(long_time) + cb.TRAILER, cols).sqlstate == "0A000"
    late = field(struct.pack("!q", 9_223_371_331_199_999_999))  # 294276-12-31 23:59:59.999999
    assert error(cb.HEADER + tup(late) + cb.TRAILER, [ColumnDef("ts", T.TIMESTAMP)]).sqlstate \
        == "0A000"
    early = field(struct.pack("!i", -2_451_546))  # the day before 4714-11-24 BC
    e = error(cb.HEADER + tup(early) + cb.TRAILER, [ColumnDef("d", T.DATE)])
    assert (e.sqlstate, e.message) == ("22008", "date out of range")


def test_infinite_dates_and_times_of_day():
    # +/-infinity arrive as the extreme integers and are stored as such (kernels/infinite.py)
    data = cb.HEADER + b"".join(
        tup(field(struct.pack("!i", d)), field(struct.pack("!q", ts)), field(struct.pack("!q", t)))
        for d, ts, t in ((2**31 - 1, -2**63, 0), (-2**31, 2**63 - 1, 86_399_999_999),
                         (0, 0, 45_296_500_000))) + cb.TRAILER
    cols = [ColumnDef("d", T.DATE), ColumnDef("ts", T.TIMESTAMP), ColumnDef("t", T.TIME)]
    parser = cb.BinaryCopyParser(cols, table="t")
    (batch,) = parser.feed(data) + parser.finish()
    assert batch.column(0).view(pa.int32()).to_pylist() == [2**31 - 1, -2**31, 10_957]
    assert batch.column(1).view(pa.int64()).to_pylist() == [-2**63, 2**63 - 1, 946_684_800_000_000]
    assert [str(v) for v in batch.column(2).to_pylist()] == ["00:00:00", "23:59:59.999999",
                                                             "12:34:56.500000"]
    day = cb.HEADER + tup(field(b"\0\0\0\0"), field(struct.pack("!q", 0)),
                          field(struct.pack("!q", 86_400_000_000))) + cb.TRAILER
    assert error(day, cols).sqlstate == "0A000"  # 24:00:00


def test_first_error_in_row_order():
    cols = [ColumnDef("a", T.INT4), ColumnDef("s", T.varchar(2))]
    one = field(struct.pack("!i", 1))
    data = cb.HEADER + tup(one, field(b"ok")) + tup(one, field(b"long")) + \
        tup(field(b"\x01"), field(b"ok")) + cb.TRAILER
    e = error(data, cols)  # the bad width of a is on line 3, the long s on line 2
    assert e.located == "COPY t, line 2, column s: value too long for type character varying(2)"


def test_bytea_and_uuid_are_their_bytes():
    u = bytes(range(16))
    cols = [ColumnDef("b", T.BYTEA), ColumnDef("u", T.UUID)]
    data = cb.HEADER + tup(field(b"\x00\\\xff"), field(u)) + tup(NULL, NULL) \
        + tup(field(b""), field(u)) + cb.TRAILER
    assert parse(data, cols) == [(b"\x00\\\xff", u), (None, None), (b"", u)]
    assert parse(data, cols, pieces=[data[i:i + 3] for i in range(0, len(data), 3)]) \
        == [(b"\x00\\\xff", u), (None, None), (b"", u)]
    short = cb.HEADER + tup(field(b""), field(u[:15])) + cb.TRAILER
    assert error(short, cols).sqlstate == "22P03"
