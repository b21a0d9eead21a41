"""Grouping by key columns that Arrow's hash aggregation cannot hash as SQL groups them:
arrays (Arrow lists), intervals (equal by their span: '1 mon' = '30 days') and
unconstrained numerics (equal by their value: 1.5 = 1.50; grouped by it).

Arrow groups by scalars only, so each array key is replaced by its binary sort key
(segment/kernels/expr_pgarray.py `sort_key`), which is equal exactly where the arrays are
equal as SQL groups them (element by element, NULL elements alike, -0.0 as 0.0, every
NaN alike, intervals by their total length as PostgreSQL compares them); an interval
key by its order key (segment/kernels/interval_order.py); the grouping runs on that, and
each group's array (interval) is taken back from the first row of the group. Everything is
done with Arrow compute over whole columns.
What it leaves to others: the aggregates themselves (segment/operators/hash_agg.py) and
the distribution hash of arrays (motion/hashing.py).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from planner import types
from segment.kernels import interval_order, numeric_dscale
from segment.kernels.expr_pgarray import sort_key

_FIRST = "__first_row"
_INTERVAL = pa.month_day_nano_interval()


def needs_encoding(t: pa.DataType) -> bool:
    """Whether Arrow's grouping cannot take this key type as it is."""
    return (pa.types.is_list(t) or pa.types.is_large_list(t) or t == _INTERVAL
            or types.is_dynamic_arrow(t))


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
    """A binary column, NULL where arr is, equal where the arrays (intervals) are equal:
    their sort keys, which are canonical (expr_pgarray.sort_key, interval_order)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if arr.type == _INTERVAL:
        return interval_order.order_key(arr)
    if types.is_dynamic_arrow(arr.type):  # 1.5 and 1.50 are one group
        return numeric_dscale.value_of(arr)
    return sort_key(arr)


def _combined(c) -> pa.Array:
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
