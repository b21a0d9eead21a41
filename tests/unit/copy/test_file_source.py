"""COPY FROM a server file: CSV, TEXT and binary through the COPY parsers, Parquet by
column name; errors for files that cannot be read."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from planner import errors
from planner import copy_options
from planner import types as T
from planner.schema import ColumnDef
from segment.ingest import copy_binary, file_source

COLS = [ColumnDef("id", T.INT8, not_null=True), ColumnDef("price", T.numeric(15, 2)),
        ColumnDef("name", T.varchar(10)), ColumnDef("day", T.DATE)]
CSV = copy_options.CopyOptions(format=copy_options.CopyFormat.CSV)


def read(path, fmt, cols=COLS, **params) -> list[dict]:
    options = copy_options.parse_copy_options({**params, "format": fmt})
    batches = list(file_source.read_file(str(path), options, cols, table="t"))
    assert all(b.schema.types == [c.type.arrow_type() for c in cols] for b in batches)
    return pa.Table.from_batches(batches).to_pylist() if batches else []


def test_csv_file_with_header(tmp_path, monkeypatch):
    monkeypatch.setattr(file_source, "READ_BYTES", 7)  # reads cut rows anywhere
    path = tmp_path / "data.csv"
    path.write_text('id,price,name,day\n1,12.345,"a,b",2020-01-02\n2,,,\n3,-0.5,"x""y",\n')
    assert read(path, "csv", format="csv", header="true") == [
        {"id": 1, "price": 1235, "name": "a,b", "day": dt.date(2020, 1, 2)},
        {"id": 2, "price": None, "name": None, "day": None},
        {"id": 3, "price": -50, "name": 'x"y', "day": None}]


def test_text_file_and_errors_with_lines(tmp_path):
    path = tmp_path / "data.txt"
    path.write_bytes(b"1\t1.5\tt\\tab\t2020-01-01\n2\t\\N\t\\N\t\\N\n")
    assert [r["name"] for r in read(path, "text")] == ["t\tab", None]
    path.write_bytes(b"1\t1\tx\t2020-01-01\n\\N\t1\tx\t2020-01-01\n")
    with pytest.raises(errors.NotNullViolation) as info:
        read(path, "text")
    assert info.value.located == ('COPY t, line 2: null value in column "id" of relation "t" '
                                  "violates not-null constraint")


def test_binary_file(tmp_path):
    cols = [ColumnDef("a", T.INT4)]
    path = tmp_path / "data.bin"
    path.write_bytes(copy_binary.HEADER + b"\x00\x01\x00\x00\x00\x04\x00\x00\x00\x2a"
                     + copy_binary.TRAILER)
    assert read(path, "binary", cols, format="binary") == [{"a": 42}]


def test_parquet_by_name_case_insensitive(tmp_path):
    path = tmp_path / "data.parquet"
    table = pa.table({
        "DAY": pa.array([dt.datetime(2020, 1, 2, 5), None], pa.timestamp("ns")),
        "Name": pa.array(["x", "y"]).dictionary_encode(),
        "extra": [1, 2],
        "PRICE": pa.array([Decimal("1.005"), Decimal("-2.5")], pa.decimal128(10, 3)),
        "ID": pa.array([1, 2], pa.int32()),
    })
    pq.write_table(table, path, row_group_size=1)
    assert read(path, "parquet") == [
        {"id": 1, "price": 101, "name": "x", "day": dt.date(2020, 1, 2)},
        {"id": 2, "price": -250, "name": "y", "day": None}]


def test_parquet_errors(tmp_path):
    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"id": pa.array([1, None]), "name": ["a", "b"]}), path)
    with pytest.raises(errors.UndefinedColumn) as info:
        read(path, "parquet")
    assert info.value.located == f'column "price" does not exist in Parquet file "{path}"'
    cols = [ColumnDef("id", T.INT8, not_null=True), ColumnDef("name", T.TEXT)]
    with pytest.raises(errors.NotNullViolation) as info:
        read(path, "parquet", cols)
    assert info.value.located.startswith("COPY t, row 2: null value in column \"id\"")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(errors.BadCopyFileFormat):
        read(bad, "parquet", cols)


def test_missing_file_and_directory(tmp_path):
    missing = str(tmp_path / "nope.csv")
    with pytest.raises(errors.UndefinedFile) as info:
        file_source.read_file(missing, CSV, COLS)
    assert (info.value.sqlstate, info.value.located) == (
        "58P01", f'could not open file "{missing}" for reading: No such file or directory')
    with pytest.raises(errors.QueryError) as info:
        file_source.read_file(str(tmp_path), copy_options.CopyOptions(), COLS)
    assert (info.value.sqlstate, info.value.located) == ("42809", f'"{tmp_path}" is a directory')
    with pytest.raises(errors.InvalidParameterValue):
        copy_options.parse_copy_options({"format": "xml"})


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.csv"
    path.write_text("1\n")
    path.chmod(0)
    with pytest.raises(errors.QueryError) as info:
        file_source.read_file(str(path), CSV, COLS)
    assert info.value.sqlstate == "42501"
