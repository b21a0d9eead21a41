"""Chunk files and their statistics: round trip of every column type, zero-copy reads."""

from __future__ import annotations

import datetime as dt
import math
import pickle

import pyarrow as pa
import pytest

from planner import errors
from segment.storage import chunk, stats


def test_round_trip_and_stats(tmp_path, all_types_table):
    table = all_types_table
    info = chunk.write(str(tmp_path / "c.arrow"), table)
    assert info.rows == 4 and info.nbytes > 0 and info.file == "c.arrow"
    back = chunk.read(info.path)
    assert back.equals(table)
    st = info.stats
    assert list(st) == table.column_names
    assert st["b"] == stats.ColumnStats(0, 1, 1)
    assert st["i16"] == stats.ColumnStats(-7, 12, 1)
    assert st["i32"] == stats.ColumnStats(-2**31, 2**31 - 1, 1)
    assert st["i64"] == stats.ColumnStats(-5, 2**62, 1)
    assert st["f32"] == stats.ColumnStats(-0.25, 8.0, 1)
    assert st["f64"] == stats.ColumnStats(-1e300, 3.25, 1)
    assert st["dec"] == stats.ColumnStats("-99999999999999999999999999999999999.99", "12.30", 1)
    assert st["s"] == stats.ColumnStats("Apple", "ü", 1)  # byte order: "A" < "p" < "ü"
    assert st["d"] == stats.ColumnStats(-1, 19782, 1)
    epoch = dt.datetime(1970, 1, 1)
    us = lambda t: (t - epoch) // dt.timedelta(microseconds=1)  # noqa: E731
    assert st["ts"] == stats.ColumnStats(us(dt.datetime(1960, 6, 1)),
                                         us(dt.datetime(2024, 1, 1, 0, 0, 0, 1)), 1)
    for s in st.values():  # JSON-able physical values only
        assert type(s.min) in (int, float, str) and type(s.max) in (int, float, str)


def test_stats_edge_cases():
    assert stats.column_stats(pa.array([None, None], pa.int64())) == stats.ColumnStats(None, None, 2)
    assert stats.column_stats(pa.array([], pa.string())) == stats.ColumnStats(None, None, 0)
    nan = stats.column_stats(pa.array([1.0, float("nan"), -2.0]))
    assert nan.min == -2.0 and math.isnan(nan.max)  # NaN sorts last, as in PostgreSQL
    all_nan = stats.column_stats(pa.array([float("nan")]))
    assert math.isnan(all_nan.min) and math.isnan(all_nan.max)
    long = "z" * (stats.MAX_STRING_CHARS + 10)
    s = stats.column_stats(pa.array(["a" * 300, long]))
    assert s.min == "a" * stats.MAX_STRING_CHARS and s.max is None
    ns = stats.column_stats(pa.array([1_500, 2_500], pa.timestamp("ns")))
    assert (ns.min, ns.max) == (1, 3)  # bounds stay bounds after the unit change
    ms = stats.column_stats(pa.array([2, 3], pa.timestamp("ms", tz="UTC")))
    assert (ms.min, ms.max) == (2_000, 3_000)
    assert stats.column_stats(pa.chunked_array([[5], [None, 1]], pa.int8())) == stats.ColumnStats(1, 5, 1)
    other = stats.column_stats(pa.array([[1]]))
    assert (other.min, other.max, other.null_count) == (None, None, 0)


def test_read_columns_in_requested_order(tmp_path, all_types_table):
    table = all_types_table
    info = chunk.write(str(tmp_path / "c.arrow"), table)
    got = chunk.read(info.path, ["s", "i16"])
    assert got.column_names == ["s", "i16"] and got.equals(table.select(["s", "i16"]))
    none = chunk.read(info.path, [])
    assert none.num_columns == 0 and none.num_rows == 4
    with pytest.raises(errors.UndefinedColumn):
        chunk.read(info.path, ["nope"])
    with pytest.raises(errors.UndefinedFile):
        chunk.read(str(tmp_path / "missing.arrow"))


def test_reads_are_memory_mapped(tmp_path):
    table = pa.table({"x": pa.array(range(100_000), pa.int64())})
    info = chunk.write(str(tmp_path / "c.arrow"), table)
    before = pa.total_allocated_bytes()
    got = chunk.read(info.path, ["x"])
    assert pa.total_allocated_bytes() - before < 1_000  # no copy of the 800 kB column
    assert got.column("x").chunk(0).buffers()[1].is_mutable is False
    assert got.column("x").to_pylist()[-1] == 99_999


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compression(tmp_path, codec):
    table = pa.table({"x": pa.array([7] * 50_000, pa.int64()), "s": ["abc"] * 50_000})
    plain = chunk.write(str(tmp_path / "p.arrow"), table)
    packed = chunk.write(str(tmp_path / "z.arrow"), table, codec)
    assert packed.nbytes < plain.nbytes / 2
    assert packed.compression == codec and plain.compression is None
    # "s" repeats: it is stored dictionary-encoded, and decodes to the same values.
    assert chunk.read(packed.path).cast(table.schema).equals(table)
    got = chunk.read(packed.path, ["s"], compressed=True)
    assert pa.types.is_dictionary(got.schema.field("s").type)
    assert got.cast(table.select(["s"]).schema).equals(table.select(["s"]))
    assert chunk.read(packed.path, [], compressed=True).num_rows == 50_000


def test_repeated_strings_are_stored_encoded_unique_ones_plain(tmp_path):
    n = 10_000
    table = pa.table({"few": pa.array([None if i % 7 == 0 else f"v{i % 30}" for i in range(n)]),
                      "unique": [f"u{i}" for i in range(n)],
                      "x": pa.array(range(n), pa.int64())})
    info = chunk.write(str(tmp_path / "c.arrow"), table)
    got = chunk.read(info.path)
    assert got.schema.field("few").type == pa.dictionary(pa.int32(), pa.string())
    assert got.schema.field("unique").type == pa.string()
    assert got.cast(table.schema).equals(table)
    # Statistics are of the values, whatever the encoding.
    assert info.stats["few"].min == "v0" and info.stats["few"].max == "v9"
    assert info.stats["few"].null_count == table.column("few").null_count
    small = chunk.write(str(tmp_path / "s.arrow"), table.slice(0, 100))
    assert chunk.read(small.path).schema == table.schema  # too few rows to bother


def test_write_never_overwrites_and_checks_codec(tmp_path):
    table = pa.table({"x": [1]})
    chunk.write(str(tmp_path / "c.arrow"), table)
    with pytest.raises(FileExistsError):
        chunk.write(str(tmp_path / "c.arrow"), table)
    with pytest.raises(ValueError):
        chunk.write(str(tmp_path / "d.arrow"), table, "snappy")


def test_one_batch_per_chunk(tmp_path):
    table = pa.Table.from_batches([pa.record_batch({"x": [i]}) for i in range(10)])
    info = chunk.write(str(tmp_path / "c.arrow"), table)
    assert chunk.read(info.path).column("x").num_chunks == 1


def test_chunk_info_json_round_trip(tmp_path, all_types_table):
    info = chunk.write(str(tmp_path / "c.arrow"), all_types_table)
    again = chunk.ChunkInfo.from_json(info.to_json(), str(tmp_path))
    assert again == info
    with pytest.raises(errors.InternalError):
        chunk.ChunkInfo.from_json(dict(info.to_json(), file="../x.arrow"), str(tmp_path))


def test_chunk_info_pickles(tmp_path, all_types_table):
    # ChunkInfo travels to segment actors inside plans and snapshots.
    info = chunk.write(str(tmp_path / "c.arrow"), all_types_table, "lz4")
    assert pickle.loads(pickle.dumps(info)) == info
