"""convert.conform: PostgreSQL's input rules and errors for each type, from text and typed
(Parquet-like) columns."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from planner import errors
from planner import types as T
from planner.schema import ColumnDef
from segment.ingest import convert


def conform_text(t, values, not_null=False):
    batch = convert.conform(pa.table({"x": pa.array(values, pa.string())}),
                           [ColumnDef("x", t, not_null)], relation="t")
    assert batch.schema.field(0).type == t.arrow_type()
    return batch.column(0).to_pylist()


def error_of(t, values, not_null=False) -> errors.QueryError:
    with pytest.raises(errors.QueryError) as info:
        conform_text(t, values, not_null)
    return info.value


# --- integers ---------------------------------------------------------------------------
def test_integers_accept_space_and_plus():
    assert conform_text(T.INT4, ["1", " 2 ", "+3", "-4", None, "007"]) == [1, 2, 3, -4, None, 7]
    assert conform_text(T.INT2, ["-32768", "32767"]) == [-32768, 32767]
    assert conform_text(T.INT8, ["-9223372036854775808"]) == [-2**63]


@pytest.mark.parametrize("t, value, state, message", [
    (T.INT4, "abc", "22P02", 'invalid input syntax for type integer: "abc"'),
    (T.INT4, "", "22P02", 'invalid input syntax for type integer: ""'),
    (T.INT4, "1.5", "22P02", 'invalid input syntax for type integer: "1.5"'),
    (T.INT4, "99999999999", "22003", 'value "99999999999" is out of range for type integer'),
    (T.INT2, "32768", "22003", 'value "32768" is out of range for type smallint'),
    (T.INT8, "9223372036854775808", "22003",
     'value "9223372036854775808" is out of range for type bigint'),
])
def test_integer_errors(t, value, state, message):
    e = error_of(t, ["1", "2", value, "bad-too"])
    assert (e.sqlstate, e.message, e.row, e.column) == (state, message, 2, "x")


# --- floats -----------------------------------------------------------------------------
def test_floats_special_values_case_insensitive():
    got = conform_text(T.FLOAT8, ["1.5", "NaN", "nan", "Infinity", "-INFINITY", "inf", " 2 ",
                                  "1e-320", "-0", None])
    assert got[0] == 1.5 and got[1] != got[1] and got[2] != got[2]
    assert got[3:7] == [float("inf"), float("-inf"), float("inf"), 2.0]
    assert got[7] == 1e-320 and str(got[8]) == "-0.0" and got[9] is None


@pytest.mark.parametrize("t, value, state", [
    (T.FLOAT8, "1e400", "22003"), (T.FLOAT8, "1e-400", "22003"), (T.FLOAT4, "1e39", "22003"),
    (T.FLOAT4, "1e-50", "22003"), (T.FLOAT8, "x1", "22P02"), (T.FLOAT4, "", "22P02"),
])
def test_float_errors(t, value, state):
    e = error_of(t, ["0", value])
    assert e.sqlstate == state and e.row == 1
    if state == "22003":
        assert e.message == f'"{value}" is out of range for type {t.sql()}'


# --- numeric ----------------------------------------------------------------------------
def test_numeric_scaled_int64_rounds_half_away_from_zero():
    got = conform_text(T.numeric(15, 2), ["12.34", "12.3", "1.005", "-1.005", "0.004", "-0.005",
                                          "1e2", " 7 ", None, "-0", ".5", "5.", "+2.499",
                                          "0.12345678901234567890123456789012345678901"])
    assert got == [1234, 1230, 101, -101, 0, -1, 10000, 700, None, 0, 50, 500, 250, 12]


def test_numeric_precision_overflow():
    e = error_of(T.numeric(15, 2), ["1", "1234567890123.99", "12345678901234"])
    assert (e.sqlstate, e.message, e.row) == ("22003", "numeric field overflow", 2)
    assert e.detail == ("A field with precision 15, scale 2 must round to an absolute value "
                        "less than 10^13.")
    assert error_of(T.numeric(15, 2), ["9999999999999.995"]).sqlstate == "22003"  # rounds up
    assert error_of(T.numeric(3, 0), ["1e3"]).sqlstate == "22003"


def test_numeric_bad_text_and_special_values():
    e = error_of(T.numeric(10, 2), ["1", "1.2.3"])
    assert (e.sqlstate, e.message, e.row) == ("22P02", 'invalid input syntax for type numeric: '
                                                       '"1.2.3"', 1)
    assert error_of(T.numeric(10, 2), ["Infinity"]).sqlstate == "22003"
    assert error_of(T.numeric(10, 2), ["NaN"]).sqlstate == "0A000"


def test_wide_and_unconstrained_numeric_are_decimal128():
    assert conform_text(T.numeric(30, 4), ["12.34565", "-99999999999999999999999999.9999"]) == \
        [Decimal("12.3457"), Decimal("-99999999999999999999999999.9999")]
    assert conform_text(T.numeric(None, 3), ["-0.0005", "1.2345e3"]) == \
        [Decimal("-0.001"), Decimal("1234.500")]
    assert conform_text(T.numeric(38, 38), ["0.123456789012345678901234567890123456785"]) == \
        [Decimal("0.12345678901234567890123456789012345679")]
    assert error_of(T.numeric(30, 4), ["100000000000000000000000000"]).sqlstate == "22003"


# --- booleans, strings ------------------------------------------------------------------
def test_booleans():
    assert conform_text(T.BOOL, ["t", "F", "yes", "No", "on", "OFF", "1", "0", " true ", "tr",
                                 "n", None]) == \
        [True, False, True, False, True, False, True, False, True, True, False, None]
    e = error_of(T.BOOL, ["t", "maybe"])
    assert (e.sqlstate, e.message, e.row) == ("22P02",
                                              'invalid input syntax for type boolean: "maybe"', 1)
    assert error_of(T.BOOL, ["o"]).sqlstate == "22P02"  # ambiguous: on or off


def test_varchar_length():
    assert conform_text(T.varchar(3), ["abc", "ab   ", "é€x", "", None]) == \
        ["abc", "ab ", "é€x", "", None]
    e = error_of(T.varchar(3), ["abc", "abcd"])
    assert (e.sqlstate, e.message, e.row) == ("22001",
                                              "value too long for type character varying(3)", 1)


def test_char_is_kept_without_trailing_spaces():
    # As INSERT stores char(n) (pgwire and COPY TO pad it to n): a COPY-loaded value must
    # equal, group and join with an inserted one.
    assert conform_text(T.char(3), ["a", "abc  ", "", " a ", None]) == \
        ["a", "abc", "", " a", None]
    assert error_of(T.char(3), ["abcd"]).message == "value too long for type character(3)"
    assert conform_text(T.TEXT, ["  keep  "]) == ["  keep  "]
    assert conform_text(T.char(None), ["a", " b", None]) == ["a", " b", None]
    e = error_of(T.char(None), ["a", "b ", "c "])
    assert (e.sqlstate, e.row) == ("0A000", 1)
    assert "bpchar without a length" in e.message


# --- dates, timestamps, intervals -------------------------------------------------------
def test_dates():
    assert conform_text(T.DATE, ["2020-01-01", " 2021-02-03 ", "2020-01-01 10:00:00", None]) == \
        [dt.date(2020, 1, 1), dt.date(2021, 2, 3), dt.date(2020, 1, 1), None]
    e = error_of(T.DATE, ["2020-01-01", "2020-02-30"])
    assert (e.sqlstate, e.message, e.row) == ("22008",
                                              'date/time field value out of range: "2020-02-30"', 1)
    e = error_of(T.DATE, ["garbage"])
    assert (e.sqlstate, e.message) == ("22007", 'invalid input syntax for type date: "garbage"')


def test_timestamps():
    got = conform_text(T.TIMESTAMP, ["2020-01-01 10:00:00", "2020-01-01T10:00:00.123456",
                                     "2020-01-01", "2020-01-01 10:00:00+02",
                                     "2020-01-01 10:00:00.1234567", "2020-01-01 10:00", None])
    assert got == [dt.datetime(2020, 1, 1, 10), dt.datetime(2020, 1, 1, 10, 0, 0, 123456),
                   dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 10),
                   dt.datetime(2020, 1, 1, 10, 0, 0, 123457), dt.datetime(2020, 1, 1, 10), None]
    tz = conform_text(T.TIMESTAMPTZ, ["2020-01-01 10:00:00", "2020-01-01 10:00:00+02"])
    assert [v.replace(tzinfo=None) for v in tz] == [dt.datetime(2020, 1, 1, 10),
                                                   dt.datetime(2020, 1, 1, 8)]
    assert error_of(T.TIMESTAMP, ["2020-01-01 25:00:00"]).sqlstate == "22008"
    assert error_of(T.TIMESTAMP, ["yesterday-ish"]).sqlstate == "22007"


def test_intervals():
    got = conform_text(T.INTERVAL, ["1 day", "1 year 2 mons 3 days 04:05:06.5", "@ 2 hours ago",
                                    "-1 days +02:03:00", "1.5 days", None])
    assert [None if v is None else (v.months, v.days, v.nanoseconds) for v in got] == [
        (0, 1, 0), (14, 3, 14_706_500_000_000), (0, 0, -7_200_000_000_000),
        (0, -1, 7_380_000_000_000), (0, 1, 43_200_000_000_000), None]
    assert error_of(T.INTERVAL, ["1 fortnight"]).sqlstate == "22007"
    # a bare number before a time of day is days (PostgreSQL: '3 days 04:05:06')
    assert [(v.months, v.days, v.nanoseconds) for v in conform_text(
        T.INTERVAL, ["3 4:05:06", "3"])] == [(0, 3, 14_706_000_000_000), (0, 0, 3_000_000_000)]
    # the time part is nanoseconds in 64 bits: PostgreSQL's longest time parts are 0A000
    assert conform_text(T.INTERVAL, ["2562047:47:16.854775"])[0].nanoseconds == \
        9_223_372_036_854_775_000
    e = error_of(T.INTERVAL, ["1 hour", "2562047788:00:54.775807"])
    assert (e.sqlstate, e.row) == ("0A000", 1)


# --- NOT NULL, shape --------------------------------------------------------------------
def test_not_null_violation():
    e = error_of(T.TEXT, ["x", None], not_null=True)
    assert (e.sqlstate, e.row) == ("23502", 1)
    assert e.message == 'null value in column "x" of relation "t" violates not-null constraint'
    batch = convert.conform(pa.table({"x": ["a"]}), [ColumnDef("x", T.TEXT, True)])
    assert batch.schema.field(0).nullable is False


def test_empty_input_and_chunked_table():
    cols = [ColumnDef("a", T.INT4), ColumnDef("b", T.TEXT)]
    no_rows = pa.array([], pa.string())
    empty = convert.conform(pa.table({"a": no_rows, "b": no_rows}), cols)
    assert empty.num_rows == 0 and empty.schema.types == [pa.int32(), pa.string()]
    schema = pa.schema([("a", pa.string()), ("b", pa.string())])
    chunked = pa.Table.from_batches([pa.record_batch({"a": ["1"], "b": ["x"]}, schema=schema),
                                     pa.record_batch({"a": ["2"], "b": [None]}, schema=schema)])
    assert convert.conform(chunked, cols).to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
    with pytest.raises(errors.InternalError):
        convert.conform(chunked, cols[:1])


# --- typed inputs -----------------------------------------------------------------------
def test_typed_integers_and_floats():
    assert convert.convert(pa.array([1, None], pa.int32()), T.INT8).type == pa.int64()
    assert convert.convert(pa.array([1, 2], pa.uint8()), T.INT2).to_pylist() == [1, 2]
    with pytest.raises(errors.NumericOutOfRange):
        convert.convert(pa.array([2**40], pa.int64()), T.INT4)
    assert convert.convert(pa.array([2.5, 3.5, -2.5]), T.INT4).to_pylist() == [2, 4, -2]
    with pytest.raises(errors.NumericOutOfRange):
        convert.convert(pa.array([float("nan")]), T.INT4)
    assert convert.convert(pa.array([1, 2], pa.int64()), T.FLOAT8).to_pylist() == [1.0, 2.0]
    assert convert.convert(pa.array([1.5], pa.float64()), T.FLOAT4).type == pa.float32()


def test_typed_numerics():
    dec = pa.array([Decimal("1.005"), Decimal("-1.005"), None], pa.decimal128(10, 3))
    assert convert.convert(dec, T.numeric(15, 2)).to_pylist() == [101, -101, None]
    assert convert.convert(pa.array([Decimal("1.5")], pa.decimal128(5, 1)),
                          T.numeric(15, 3)).to_pylist() == [1500]
    assert convert.convert(pa.array([12, -3], pa.int32()), T.numeric(15, 2)).to_pylist() == \
        [1200, -300]
    assert convert.convert(pa.array([0.125, 1.005]), T.numeric(10, 2)).to_pylist() == [13, 101]
    assert convert.convert(pa.array([Decimal("1.25")], pa.decimal256(40, 2)),
                          T.numeric(30, 1)).to_pylist() == [Decimal("1.3")]
    with pytest.raises(errors.NumericOutOfRange):
        convert.convert(pa.array([123456], pa.int64()), T.numeric(5, 2))


def test_typed_temporal_strings_and_dictionaries():
    ns = pa.array([1_500_000_000_000_000_500, None], pa.timestamp("ns"))
    got = convert.convert(ns, T.TIMESTAMP)
    assert got.type == pa.timestamp("us") and got.cast(pa.int64()).to_pylist()[0] == \
        1_500_000_000_000_001
    aware = pa.array([0], pa.timestamp("s", tz="Europe/Paris"))
    assert convert.convert(aware, T.TIMESTAMP).cast(pa.int64()).to_pylist() == [0]
    assert convert.convert(pa.array([dt.datetime(2020, 1, 2, 23)], pa.timestamp("ms")),
                          T.DATE).to_pylist() == [dt.date(2020, 1, 2)]
    assert convert.convert(pa.array([dt.date(2020, 1, 2)]), T.TIMESTAMP).to_pylist() == \
        [dt.datetime(2020, 1, 2)]
    assert convert.convert(pa.array(["a", None], pa.large_string()), T.TEXT).type == pa.string()
    dictionary = pa.array(["x", "y", "x", None]).dictionary_encode()
    assert convert.convert(dictionary, T.varchar(5)).to_pylist() == ["x", "y", "x", None]
    assert convert.convert(pa.array(["7", "8"]).dictionary_encode(), T.INT4).to_pylist() == [7, 8]
    assert convert.convert(pa.nulls(2), T.DATE).type == pa.date32()
    assert convert.convert(pa.array([b"ok"], pa.binary()), T.TEXT).to_pylist() == ["ok"]
    with pytest.raises(errors.QueryError) as info:
        convert.convert(pa.array([b"ok", b"\xff"], pa.binary()), T.TEXT)
    assert info.value.sqlstate == "22021" and info.value.row == 1
    assert convert.convert(pa.array([1, 0], pa.int8()), T.BOOL).to_pylist() == [True, False]
    assert convert.convert(pa.array([5], pa.int64()), T.TEXT).to_pylist() == ["5"]


def test_first_error_in_row_order():
    # A range error on row 1 comes before a syntax error on row 2, as PostgreSQL meets them.
    e = error_of(T.INT2, ["1", "40000", "abc"])
    assert (e.sqlstate, e.row) == ("22003", 1)
    cols = [ColumnDef("a", T.INT4, True), ColumnDef("b", T.INT4)]
    data = pa.table({"a": ["1", None, "3"], "b": ["1", "x", "y"]})
    with pytest.raises(errors.QueryError) as info:
        convert.conform(data, cols)
    assert (info.value.sqlstate, info.value.row) == ("22P02", 1)  # conversion before NOT NULL
    data = pa.table({"a": ["1", "2", None], "b": ["1", "2", "3"]})
    with pytest.raises(errors.NotNullViolation):
        convert.conform(data, cols)


def test_bytea_and_uuid_from_text():
    assert conform_text(T.BYTEA, ["\\x00ff", "a\\\\b\\001", "", None]) == \
        [b"\x00\xff", b"a\\b\x01", b"", None]
    assert conform_text(T.UUID, ["A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", None]) == \
        [bytes.fromhex("a0eebc999c0b4ef8bb6d6bb9bd380a11"), None]
    e = error_of(T.UUID, ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "x"])
    assert (e.sqlstate, e.row, e.message) == \
        ("22P02", 1, 'invalid input syntax for type uuid: "x"')
    assert error_of(T.BYTEA, ["\\x0"]).sqlstate == "22023"
