"""Grouping by key columns that Arrow's hash aggregation cannot hash: arrays (Arrow lists).

Arrow groups by scalars only, so each array key is replaced by a binary encoding that is
equal exactly where the arrays are equal as SQL groups them (element by element, NULL
elements alike, -0.0 as 0.0, every NaN alike, intervals by their total length as
PostgreSQL compares them), the grouping runs on that, and each group's array is taken back
from the first row of the group. Everything is done with Arrow compute over whole columns.
What it leaves to others: the aggregates themselves (segment/operators/hash_agg.py) and
the distribution hash of arrays (motion/hashing.py).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_FIRST = "__first_row"
_EMPTY, _ONE, _ZERO = (pa.scalar(b, pa.large_binary()) for b in (b"", b"\x01", b"\x00"))


def needs_encoding(t: pa.DataType) -> bool:
    """Whether Arrow's grouping cannot take this key type as it is."""
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def group_by(table: pa.Table, keys: Sequence[str], aggs: list) -> pa.Table:
    """table.group_by(keys).aggregate(aggs), single-threaded, for keys of any type and
    "list" aggregates of any input type."""
    listed = [a[0] for a in aggs if len(a) > 1 and a[1] == "list"
              and pa.types.is_struct(table.schema.field(a[0]).type)]
    if listed:
        # Arrow's hash_list takes no structs (ROW values): list the row numbers, then take.
        originals = {c: _combined(table.column(c)) for c in listed}
        rows = pa.array(np.arange(table.num_rows, dtype=np.int64))
        for c in listed:
            table = table.set_column(table.schema.get_field_index(c), c, rows)
        out = group_by(table, keys, aggs)
        for c in listed:
            i = out.schema.get_field_index(f"{c}_list")
            numbers = _combined(out.column(i))
            taken = pa.ListArray.from_arrays(numbers.offsets, originals[c].take(
                numbers.values), mask=numbers.is_null())
            out = out.set_column(i, f"{c}_list", taken)
        return out
    lists = [k for k in keys if needs_encoding(table.schema.field(k).type)]
    if not lists:
        return table.group_by(list(keys), use_threads=False).aggregate(aggs)
    encoded = table
    for k in lists:
        encoded = encoded.set_column(encoded.schema.get_field_index(k), k,
                                     encode(_combined(table.column(k))))
    encoded = encoded.append_column(_FIRST, pa.array(np.arange(table.num_rows, dtype=np.int64)))
    out = encoded.group_by(list(keys), use_threads=False).aggregate(
        list(aggs) + [(_FIRST, "min")])
    first = _combined(out.column(f"{_FIRST}_min"))
    for k in lists:
        out = out.set_column(out.schema.get_field_index(k), k, table.column(k).take(first))
    return out.drop_columns([f"{_FIRST}_min"])


def encode(arr: pa.Array) -> pa.Array:
    """A binary column, NULL where arr is, equal where the arrays are equal."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    wide = pa.types.is_large_list(arr.type)
    offsets = np.frombuffer(arr.buffers()[1], np.int64 if wide else np.int32,
                            count=arr.offset + len(arr) + 1)[arr.offset:]
    values = _element_bytes(arr.values)
    marked = pc.if_else(pc.is_valid(values),
                        pc.binary_join_element_wise(_ONE, values, _EMPTY), _ZERO)
    cls = pa.LargeListArray if wide else pa.ListArray
    lists = cls.from_arrays(pa.array(offsets), marked, mask=pc.is_null(arr))
    return pc.binary_join(lists, _EMPTY)


def _element_bytes(values: pa.Array) -> pa.Array:
    """Each element as bytes that tell it apart from every other element of its type
    (variable-width ones with a length prefix, so that ['a', 'b'] is not ['ab'])."""
    t = values.type
    if pa.types.is_dictionary(t):
        return _element_bytes(values.dictionary_decode())
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return _element_bytes(values.cast(pa.large_binary()))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        values = values.cast(pa.large_binary())
        lengths = pc.fill_null(pc.binary_length(values), 0).to_numpy().astype("<u4")
        return pc.binary_join_element_wise(_fixed(lengths.view(np.uint8), 4), values, _EMPTY)
    if pa.types.is_boolean(t):
        values = pc.cast(values, pa.uint8())
    elif pa.types.is_floating(t):
        v = pc.add(values.cast(pa.float64()), pa.scalar(0.0))  # -0.0 + 0.0 is 0.0
        values = pc.if_else(pc.is_nan(v), pa.scalar(float("nan")), v)
    elif t == pa.month_day_nano_interval():
        values = _interval_length(values)
    width = values.type.bit_width // 8
    raw = np.frombuffer(values.buffers()[1], np.uint8,
                        count=(values.offset + len(values)) * width)[values.offset * width:]
    fixed = _fixed(raw, width, pc.is_valid(values))
    return fixed


def _fixed(raw: np.ndarray, width: int, valid: pa.Array | None = None) -> pa.Array:
    """Bytes in rows of `width`, as binary values (NULL where `valid` is false)."""
    n = len(raw) // width
    out = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), n,
                                               [None, pa.py_buffer(raw.tobytes())])
    out = out.cast(pa.large_binary())
    return out if valid is None else pc.if_else(valid, out, pa.scalar(None, pa.large_binary()))


def _interval_length(values: pa.Array) -> pa.Array:
    """Intervals as int64 microseconds, a month 30 days and a day 24 hours, as PostgreSQL
    compares them."""
    rec = np.frombuffer(values.buffers()[1], dtype=[("m", "<i4"), ("d", "<i4"), ("ns", "<i8")],
                        count=values.offset + len(values))[values.offset:]
    us = (rec["m"].astype(np.int64) * 30 + rec["d"]) * 86_400_000_000 + rec["ns"] // 1_000
    return pa.array(us, pa.int64(), mask=pc.is_null(values).to_numpy(zero_copy_only=False))


def _combined(c) -> pa.Array:
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
