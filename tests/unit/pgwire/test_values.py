"""Result cells in text and binary format for every type, DataRow framing, numeric NBASE.

Binary cells are checked twice: against hand-computed bytes and by loading them with
psycopg's own binary loaders (an independent implementation of the formats).
"""

import datetime as dt
import struct
import uuid
from decimal import Decimal

import pyarrow as pa
import pytest
from psycopg import pq
from psycopg.adapt import PyFormat, Transformer

from coordinator.pgwire import backend, numeric, values
from planner import types as T
from segment.kernels import numeric_dscale as nd

UTC = dt.timezone.utc
MDN = pa.MonthDayNano


def text(arr, t):
    return values.encode_column(arr, t, 0).to_pylist()


def binary(arr, t):
    return values.encode_column(arr, t, 1).to_pylist()


TEXT_CASES = [
    (pa.array([True, False, None]), T.BOOL, ["t", "f", None]),
    (pa.array([1, -32768, None], pa.int16()), T.INT2, ["1", "-32768", None]),
    (pa.array([7, -2**31, None], pa.int32()), T.INT4, ["7", "-2147483648", None]),
    (pa.array([2**63 - 1, None], pa.int64()), T.INT8, ["9223372036854775807", None]),
    (pa.array([0.1, 1e20, 1e15, 1e14, 1.5e-5, 1e-4, float("inf"), float("-inf"), float("nan"),
               -0.0, 100.0, 1 / 3, 1234567890123456.7, None]), T.FLOAT8,
     ["0.1", "1e+20", "1e+15", "100000000000000", "1.5e-05", "0.0001", "Infinity", "-Infinity",
      "NaN", "-0", "100", "0.3333333333333333", "1.2345678901234568e+15", None]),
    (pa.array([0.1, 1e6, 100000.0, 3.14159, 1e-5, 123456.7, float("nan"), None], pa.float32()),
     T.FLOAT4, ["0.1", "1e+06", "100000", "3.14159", "1e-05", "123456.7", "NaN", None]),
    (pa.array([1234, 1230, -5, 0, -100, None], pa.int64()), T.numeric(15, 2),
     ["12.34", "12.30", "-0.05", "0.00", "-1.00", None]),
    (pa.array([42, -7], pa.int64()), T.numeric(10, 0), ["42", "-7"]),
    (pa.array([Decimal("12.30"), Decimal("0.0000000001"), Decimal("-5"), None],
              pa.decimal128(38, 10)), T.numeric(None, 10),
     ["12.3000000000", "0.0000000001", "-5.0000000000", None]),
    (pa.array(["a", "é", "", None]), T.TEXT, ["a", "é", "", None]),
    (pa.array(["ab", None]), T.varchar(10), ["ab", None]),
    (pa.array(["ab", "abc", None]), T.char(3), ["ab ", "abc", None]),
    (pa.array([dt.date(2024, 2, 29), dt.date(1, 1, 1), None]), T.DATE,
     ["2024-02-29", "0001-01-01", None]),
    (pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 600000), dt.datetime(2000, 1, 1),
               dt.datetime(1999, 1, 1, 0, 0, 0, 1), None], pa.timestamp("us")), T.TIMESTAMP,
     ["2024-01-02 03:04:05.6", "2000-01-01 00:00:00", "1999-01-01 00:00:00.000001", None]),
    (pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 120000, tzinfo=UTC), None],
              pa.timestamp("us", tz="UTC")), T.TIMESTAMPTZ,
     ["2024-01-02 03:04:05.12+00", None]),
    (pa.array([MDN([14, 3, 14_706_000_000_000]), MDN([0, 0, 0]), MDN([1, 0, 0]),
               MDN([-1, -1, -3_600_500_000_000]), MDN([0, 1, 0]), MDN([-14, 0, 0]),
               MDN([0, -1, 3_600_000_000_000]), MDN([0, 0, 100 * 3_600_000_000_000]), None],
              pa.month_day_nano_interval()), T.INTERVAL,
     ["1 year 2 mons 3 days 04:05:06", "00:00:00", "1 mon", "-1 mons -1 days -01:00:00.5",
      "1 day", "-1 years -2 mons", "-1 days +01:00:00", "100:00:00", None]),
    (pa.nulls(2), T.UNKNOWN, [None, None]),
]


@pytest.mark.parametrize("arr, t, expected", TEXT_CASES, ids=[str(c[1]) for c in TEXT_CASES])
def test_text_format(arr, t, expected):
    assert text(arr, t) == expected
    assert text(arr.slice(1), t) == expected[1:]  # offsets into shared buffers


BINARY_BYTES = [
    (pa.array([True, False, None]), T.BOOL, ["01", "00", None]),
    (pa.array([1, -2, None], pa.int16()), T.INT2, ["0001", "fffe", None]),
    (pa.array([1, None], pa.int32()), T.INT4, ["00000001", None]),
    (pa.array([-1], pa.int64()), T.INT8, ["ffffffffffffffff"]),
    (pa.array([1.5], pa.float32()), T.FLOAT4, ["3fc00000"]),
    (pa.array([1.5, None]), T.FLOAT8, ["3ff8000000000000", None]),
    (pa.array([1234, -5], pa.int64()), T.numeric(15, 2),
     ["0002000000000002000c0d48", "0001ffff4000000201f4"]),
    (pa.array(["é"]), T.TEXT, ["c3a9"]),
    (pa.array(["a"]), T.char(2), ["6120"]),
    (pa.array(["a"]), T.varchar(5), ["61"]),
    (pa.array([dt.date(2000, 1, 2), dt.date(1999, 12, 31)]), T.DATE, ["00000001", "ffffffff"]),
    (pa.array([dt.datetime(2000, 1, 1, 0, 0, 1)], pa.timestamp("us")), T.TIMESTAMP,
     ["00000000000f4240"]),
    (pa.array([dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)],
              pa.timestamp("us", tz="UTC")), T.TIMESTAMPTZ, ["ffffffffffffffff"]),
    (pa.array([MDN([14, 3, 4_000_000_000]), None], pa.month_day_nano_interval()), T.INTERVAL,
     ["00000000003d0900" "00000003" "0000000e", None]),
]


@pytest.mark.parametrize("arr, t, expected", BINARY_BYTES, ids=[str(c[1]) for c in BINARY_BYTES])
def test_binary_format_bytes(arr, t, expected):
    assert [None if c is None else c.hex() for c in binary(arr, t)] == expected


PY_VALUES = [
    (T.BOOL, [True, False, None]),
    (T.INT2, [0, -32768, 32767, None]),
    (T.INT4, [5, -2**31, None]),
    (T.INT8, [2**63 - 1, -2**63, None]),
    (T.FLOAT4, [0.5, -3.25, float("inf"), None]),
    (T.FLOAT8, [0.1, -1e300, float("-inf"), None]),
    (T.TEXT, ["x", "héllo", "", None]),
    (T.DATE, [dt.date(2024, 2, 29), dt.date(1970, 1, 1), dt.date(1900, 3, 1), None]),
    (T.TIMESTAMP, [dt.datetime(2024, 1, 2, 3, 4, 5, 6), dt.datetime(1960, 5, 6), None]),
    (T.TIMESTAMPTZ, [dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), None]),
    (T.BYTEA, [b"\x00\\\xff", b"", None, bytes(range(256))]),
]


@pytest.mark.parametrize("t, py", PY_VALUES, ids=[str(c[0]) for c in PY_VALUES])
def test_cells_load_back_with_psycopg(t, py):
    arr = pa.array(py, t.arrow_type())
    tx = Transformer()
    for fmt in (pq.Format.TEXT, pq.Format.BINARY):
        loader = tx.get_loader(t.oid, fmt)
        cells = values.encode_column(arr, t, int(fmt)).to_pylist()
        got = [None if c is None else loader.load(c if isinstance(c, bytes) else c.encode())
               for c in cells]
        assert got == py, fmt


@pytest.mark.parametrize("d", ["12.30", "100", "10000", "-0.05", "0", "0.000", "1E-10",
                               "123456789012345678901234567890.123456789",
                               "-1234567890123456789012.5000", "99999999.9999"])
def test_numeric_binary_matches_psycopg_and_decodes_back(d):
    value = Decimal(d)
    ours = numeric.encode_decimal(value)
    assert ours == bytes(Transformer().get_dumper(value, PyFormat.BINARY).dump(value))
    back = numeric.decode(ours)
    assert back == value and back.as_tuple().exponent == min(value.as_tuple().exponent, 0)


def test_numeric_binary_columns_decode_to_exact_values():
    scaled = pa.array([1234, -5, 0, 999999999999999999, None], pa.int64())
    got = [None if c is None else numeric.decode(c) for c in binary(scaled, T.numeric(18, 2))]
    assert got == [Decimal("12.34"), Decimal("-0.05"), Decimal("0.00"),
                   Decimal("9999999999999999.99"), None]
    assert str(got[2]) == "0.00"
    wide = pa.array([Decimal("-1234567890123456789012.5000"), None], pa.decimal128(38, 4))
    got = [None if c is None else numeric.decode(c) for c in binary(wide, T.numeric(None, 4))]
    assert got == [Decimal("-1234567890123456789012.5000"), None]
    assert numeric.decode(numeric.encode_decimal(Decimal("NaN"))).is_nan()


def test_unconstrained_numeric_binary_and_text_carry_each_dscale():
    texts = ["1.5", "1.50", "-0.001", None, "0.00", "123456789012.1234567891", "7"]
    arr = nd.from_decimals([None if t is None else Decimal(t) for t in texts], 16)
    cells = binary(arr, T.UNCONSTRAINED)
    got = [None if c is None else numeric.decode(c) for c in cells]
    assert [None if v is None else str(v) for v in got] == texts
    dscales = [None if c is None else struct.unpack_from("!h", c, 6)[0] for c in cells]
    assert dscales == [1, 2, 3, None, 2, 10, 0]
    expected = [None if t is None else numeric.encode_decimal(Decimal(t)) for t in texts]
    assert list(cells) == expected
    text = values.encode_column(arr, T.UNCONSTRAINED, 0).to_pylist()
    assert text == texts


def test_interval_binary_loads_in_psycopg():
    arr = pa.array([MDN([0, 3, 14_706_000_000_000]), MDN([0, -1, -500_000])],
                   pa.month_day_nano_interval())
    loader = Transformer().get_loader(T.INTERVAL.oid, pq.Format.BINARY)
    assert [loader.load(c) for c in binary(arr, T.INTERVAL)] == [
        dt.timedelta(days=3, hours=4, minutes=5, seconds=6),
        dt.timedelta(days=-1, microseconds=-500)]


def test_conform_tolerates_other_arrow_layouts():
    dictionary = pa.array(["a", "b", "a", None]).dictionary_encode()
    assert text(dictionary, T.TEXT) == ["a", "b", "a", None]
    assert text(pa.array(["x"], pa.large_string()), T.TEXT) == ["x"]
    assert binary(pa.array([1], pa.int32()), T.INT8) == [b"\0" * 7 + b"\1"]
    assert text(pa.array([Decimal("1.50")], pa.decimal128(10, 2)), T.numeric(10, 2)) == ["1.50"]


def test_data_rows_match_one_row_encoder():
    batch = pa.record_batch([pa.array([1, None, 3], pa.int32()), pa.array(["a", "bc", None])],
                            names=["i", "s"])
    framed = values.encode_data_rows(batch, [T.INT4, T.TEXT], [0, 1])
    expected = b"".join(backend.DataRow(r).encode() for r in
                        [(b"1", b"a"), (None, b"bc"), (b"3", None)])
    assert framed == expected
    assert framed[:17] == b"D\x00\x00\x00\x10\x00\x02\x00\x00\x00\x011\x00\x00\x00\x01a"
    assert values.encode_data_rows(batch.slice(3), [T.INT4, T.TEXT], [0, 0]) == b""
    # binary int cell: length 4, big-endian value
    assert values.encode_data_rows(batch.slice(0, 1), [T.INT4, T.TEXT], [1, 0])[7:15] == \
        struct.pack("!ii", 4, 1)


def test_data_rows_sliced_into_pieces_are_identical(monkeypatch):
    batch = pa.record_batch([pa.array(range(1000), pa.int64()),
                             pa.array([f"row{i}" for i in range(1000)])], names=["n", "s"])
    whole = values.encode_data_rows(batch, [T.INT8, T.TEXT], [0, 0])
    monkeypatch.setattr(values, "_ROW_SLICE_BYTES", 100)
    assert values.encode_data_rows(batch, [T.INT8, T.TEXT], [0, 0]) == whole
    assert whole.count(b"D\x00\x00\x00") == 1000


@pytest.mark.parametrize("arr, t", [(c[0], c[1]) for c in TEXT_CASES + BINARY_BYTES],
                         ids=[str(c[1]) for c in TEXT_CASES + BINARY_BYTES])
def test_few_rows_framed_as_by_the_kernels(arr, t, monkeypatch):
    """Batches of a few rows are framed in Python: the same bytes as the Arrow path."""
    batch = pa.record_batch([arr, pa.array(["x"] * len(arr))], names=["v", "s"])
    for fmt in (0, 1):
        few = values.encode_data_rows(batch, [t, T.TEXT], [fmt, 0])
        monkeypatch.setattr(values, "_FEW_ROWS", 0)
        assert values.encode_data_rows(batch, [t, T.TEXT], [fmt, 0]) == few
        monkeypatch.undo()
    assert len(arr) <= values._FEW_ROWS


def test_zero_column_rows():
    batch = pa.RecordBatch.from_pydict({}).slice(0, 0)
    assert values.encode_data_rows(batch, [], []) == b""
    two = pa.record_batch([pa.array([1, 2])], names=["x"]).select([])
    assert values.encode_data_rows(two, [], []) == backend.DataRow(()).encode() * 2


def test_unsupported_format_code():
    with pytest.raises(Exception, match="unsupported format code: 2"):
        values.encode_column(pa.array([1], pa.int32()), T.INT4, 2)


def test_uuid_cells_in_both_formats():
    u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    arr = pa.array([u.bytes, None, uuid.UUID(int=0).bytes], pa.binary())
    assert text(arr, T.UUID) == [str(u), None, "00000000-0000-0000-0000-000000000000"]
    assert binary(arr, T.UUID) == [u.bytes, None, bytes(16)]
    tx = Transformer()
    for fmt in (pq.Format.TEXT, pq.Format.BINARY):
        cell = values.encode_column(arr, T.UUID, int(fmt))[0].as_py()
        loaded = tx.get_loader(2950, fmt).load(cell if isinstance(cell, bytes) else cell.encode())
        assert loaded == u
    assert text(pa.array([b"\x01\xab"], pa.binary()), T.BYTEA) == ["\\x01ab"]
