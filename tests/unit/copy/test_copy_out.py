"""COPY TO STDOUT: bytes identical to PostgreSQL 15's (pinned in pg15_expected.py), chunks
of whole rows, and round trips through the COPY FROM parsers for every type."""

from __future__ import annotations

import datetime as dt
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from coordinator import copy_out
from planner import copy_options
from planner import types as T
from planner.copy_options import CopyFormat
from planner.schema import ColumnDef
from segment.ingest import copy_binary, copy_text

sys.path.insert(0, str(Path(__file__).parent))
import pg15_expected as pg  # noqa: E402

UTC = dt.timezone.utc
COLUMNS = [ColumnDef("i", T.INT4), ColumnDef("f8", T.FLOAT8), ColumnDef("f4", T.FLOAT4),
           ColumnDef("n", T.numeric(15, 2)), ColumnDef("w", T.numeric(30, 5)),
           ColumnDef("b", T.BOOL), ColumnDef("s", T.TEXT), ColumnDef("c", T.char(3)),
           ColumnDef("d", T.DATE), ColumnDef("ts", T.TIMESTAMP), ColumnDef("tz", T.TIMESTAMPTZ),
           ColumnDef("iv", T.INTERVAL)]
TYPES = [c.type for c in COLUMNS]
NAMES = [c.name for c in COLUMNS]
# char(3) values as raympp keeps them: without trailing spaces (printed padded to 3).
ROWS = [
    (1, 0.1, 1.5, 1230, Decimal("-1.00001"), True, "plain", "ab", dt.date(2020, 1, 2),
     dt.datetime(2020, 1, 1, 10, 0, 0, 120000), dt.datetime(2020, 1, 1, 10, tzinfo=UTC),
     (14, 3, 14_706_500_000_000)),
    (None,) * 12,
    (-2147483648, float("inf"), float("nan"), -5, Decimal("0"), False,
     'tab\there\nnl\\bs "q",c\rcr', "", dt.date(1999, 12, 31), dt.datetime(2020, 1, 1),
     dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC), (0, -1, 7_380_000_000_000)),
    (0, 1e15, 1e6, 1, Decimal("12345678901234567890123.45678"), True, "ünï€😀", 'a"b',
     dt.date(2000, 2, 29), dt.datetime(1900, 1, 1, 0, 0, 0, 500000),
     dt.datetime(2000, 1, 1, tzinfo=UTC), (0, 0, 0)),
    (7, 123456789012345.0, 123456.0, -9999999, Decimal("0.00001"), False, "", "",
     dt.date(2020, 1, 1), dt.datetime(2020, 1, 1, 0, 0, 0, 1), dt.datetime(2020, 1, 1, tzinfo=UTC),
     (0, 0, -1_000_000_000)),
    (8, 1e-5, 1e-5, 100, Decimal("1.00000"), True, "\\.", ",", dt.date(2020, 1, 1),
     dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, tzinfo=UTC), (0, 1, 0)),
]


def batch_of(rows, columns=COLUMNS) -> pa.RecordBatch:
    arrays = []
    for k, col in enumerate(columns):
        values = [r[k] for r in rows]
        if col.type.kind is T.Kind.INTERVAL:
            values = [None if v is None else pa.scalar(v, pa.month_day_nano_interval()).as_py()
                      for v in values]
        arrays.append(pa.array(values, col.type.arrow_type()))
    return pa.RecordBatch.from_arrays(arrays, names=[c.name for c in columns])


BATCH = batch_of(ROWS)


def encode(batches, fmt, types=TYPES, names=None, **params) -> bytes:
    if fmt is CopyFormat.CSV:
        params.setdefault("format", "csv")
    if fmt is CopyFormat.BINARY:
        params.setdefault("format", "binary")
    options = copy_options.parse_copy_options(params)
    return b"".join(copy_out.encode_copy(batches, types, fmt, options, names=names))


# --- identical to PostgreSQL ------------------------------------------------------------
@pytest.mark.parametrize("fmt, params, expected", [
    (CopyFormat.TEXT, {}, pg.TEXT),
    (CopyFormat.CSV, {"header": "true"}, pg.CSV_HEADER),
    (CopyFormat.CSV, {"quote": "'", "escape": "\\", "null": "NULL", "delimiter": "|"},
     pg.CSV_CUSTOM),
    (CopyFormat.TEXT, {"delimiter": ",", "header": "true"}, pg.TEXT_COMMA_HEADER),
    (CopyFormat.BINARY, {}, pg.BINARY),
])
def test_bytes_match_postgres(fmt, params, expected):
    assert encode([BATCH], fmt, **params) == expected


def test_single_column_csv_quotes_end_marker():
    s = BATCH.select(["s"])
    assert encode([s], CopyFormat.CSV, types=[T.TEXT]) == pg.CSV_ONE_COLUMN


def test_header_names_and_empty_results():
    assert encode([], CopyFormat.CSV, names=["a", "b c"], header="true") == b"a,b c\n"
    assert encode([], CopyFormat.TEXT, names=["a"]) == b""
    assert encode([], CopyFormat.BINARY) == copy_binary.HEADER + copy_binary.TRAILER
    odd = encode([], CopyFormat.CSV, names=["x,y", 'q"'], header="true")
    assert odd == b'"x,y","q"""\n'
    assert encode([BATCH.slice(0, 1)], CopyFormat.TEXT, header="true").startswith(b"i\tf8\tf4\t")


# --- round trips ------------------------------------------------------------------------
AWKWARD = ["plain", "", None, "tab\there", "new\nline", "cr\rreturn", "back\\slash", "\\N",
           "\\.", "trailing\\", 'quote"d', "comma,semi;pipe|", "NULL", "ünï€😀", " spaced ",
           "\b\f\v", "\\\\", '""', "\n", ","]
WIDE = [ColumnDef("i2", T.INT2), ColumnDef("i8", T.INT8), ColumnDef("v", T.varchar(40)),
        ColumnDef("s", T.TEXT)] + COLUMNS


def wide_batch() -> pa.RecordBatch:
    rows = []
    for k, text in enumerate(AWKWARD):
        base = ROWS[k % len(ROWS)]
        rows.append(((k - 10) * 1000, -(2**63) + k if k % 2 else 2**63 - 1 - k, text,
                     AWKWARD[-1 - k]) + base)
    return batch_of(rows, WIDE)


def parse(data: bytes, fmt, columns, pieces=1, block_bytes=64, **params) -> pa.Table:
    if fmt is CopyFormat.BINARY:
        parser = copy_binary.BinaryCopyParser(columns, block_bytes=block_bytes)
    else:
        if fmt is CopyFormat.CSV:
            params.setdefault("format", "csv")
        parser = copy_text.CopyParser(columns, fmt, copy_options.parse_copy_options(params),
                                      block_bytes=block_bytes)
    step = max(1, len(data) // pieces)
    batches = []
    for i in range(0, len(data), step):
        batches += parser.feed(data[i:i + step])
    batches += parser.finish()
    return pa.Table.from_batches(batches)


@pytest.mark.parametrize("fmt, params", [
    (CopyFormat.TEXT, {}), (CopyFormat.CSV, {}), (CopyFormat.BINARY, {}),
    (CopyFormat.TEXT, {"delimiter": "|", "null": "<null>", "header": "true"}),
    (CopyFormat.CSV, {"quote": "'", "escape": "\\", "delimiter": ";", "null": "NULL",
                      "header": "true"}),
])
@pytest.mark.parametrize("pieces", [1, 37])
def test_round_trip_all_types(fmt, params, pieces):
    batch = wide_batch()
    data = encode([batch.slice(0, 7), batch.slice(7)], fmt, [c.type for c in WIDE], **params)
    got = parse(data, fmt, WIDE, pieces, **params)
    assert repr(got.to_pylist()) == repr(pa.Table.from_batches([batch]).to_pylist())
    assert got.schema.types == batch.schema.types


def test_round_trip_through_postgres_bytes():
    # What PostgreSQL wrote reads back as the rows it came from, in every format.
    for fmt, params, data in [(CopyFormat.TEXT, {}, pg.TEXT),
                              (CopyFormat.CSV, {"header": "true"}, pg.CSV_HEADER),
                              (CopyFormat.BINARY, {}, pg.BINARY)]:
        got = parse(data, fmt, COLUMNS, **params)
        assert repr(got.to_pylist()) == repr(pa.Table.from_batches([BATCH]).to_pylist())


# --- chunks -----------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", [CopyFormat.TEXT, CopyFormat.CSV, CopyFormat.BINARY])
def test_one_row_per_chunk(fmt):
    """PostgreSQL sends one CopyData per row and drivers (psycopg's copy.rows()) rely on it."""
    n = 300_000
    batch = pa.record_batch({"a": pa.array(range(n), pa.int64()),
                             "s": pa.array([f"row {k}\twith tab" for k in range(n)])})
    options = copy_options.parse_copy_options({"format": fmt.name.lower()})
    small = [batch.slice(k, 1000) for k in range(0, 20_000, 1000)]
    chunks = list(copy_out.encode_copy(small + [batch.slice(20_000)], [T.INT8, T.TEXT], fmt,
                                       options))
    if fmt is CopyFormat.BINARY:
        assert len(chunks) == n + 1  # the header rides with row 1; the trailer alone
        assert chunks[0].startswith(b"PGCOPY\n") and chunks[-1] == b"\xff\xff"
    else:
        assert len(chunks) == n
        assert all(c.endswith(b"\n") and c.count(b"\n") == 1 for c in chunks)
    cols = [ColumnDef("a", T.INT8), ColumnDef("s", T.TEXT)]
    got = parse(b"".join(chunks), fmt, cols, pieces=len(chunks), block_bytes=1 << 20)
    assert got.num_rows == n and got.column("s")[n - 1].as_py() == f"row {n - 1}\twith tab"


@pytest.mark.parametrize("params, expected", [  # PostgreSQL 15's output
    ({"force_quote": "*"}, b'"1","x",\n,"","a""b"\n"3",,""\n'),
    ({"force_quote": "s"}, b'1,"x",\n,"","a""b"\n3,,""\n'),
    ({"force_quote": "a, v", "null": "N"}, b'"1",x,N\nN,,"a""b"\n"3",N,""\n'),
])
def test_csv_force_quote(params, expected):
    batch = pa.record_batch({"a": pa.array([1, None, 3], pa.int32()), "s": ["x", "", None],
                             "v": [None, 'a"b', ""]})
    assert encode([batch], CopyFormat.CSV, [T.INT4, T.TEXT, T.TEXT], **params) == expected
    assert encode([batch], CopyFormat.CSV, [T.INT4, T.TEXT, T.TEXT], names=["a", "s", "v"],
                  **params) == expected
