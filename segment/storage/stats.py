"""Per-chunk column statistics: min, max and null count as JSON-able physical values.

Scans skip chunks whose [min, max] cannot match a predicate, and simple aggregates (count,
min, max) can be answered from them, so a bound must never be wrong; it may be unknown
(None). Values are the *physical* values of the column:
- integers, bool (0/1), date32 (days since 1970-01-01), timestamp (int64 microseconds, UTC
  for zoned ones; other units converted): int. A scaled-int64 numeric is just an int64
  column here; the catalog knows its scale.
- float32/float64: float. Bounds follow PostgreSQL's order, where NaN sorts above every
  number: max is NaN when the chunk holds a NaN, min is NaN only when every value is. Python
  comparisons with NaN are false, so a pruner that compares naively keeps such chunks.
- string: str, compared by bytes (PostgreSQL's "C" order, Arrow's order). Strings longer
  than MAX_STRING_CHARS keep a truncated min (still a lower bound) and an unknown max.
- decimal128: str of the Decimal ("12.30"), exact.
- binary (bytea, uuid): str, the lowercase hex of the bytes, which orders as the bytes do
  (PostgreSQL's order of both); a min longer than MAX_STRING_CHARS bytes keeps a prefix,
  a longer max is unknown, as for strings.
- anything else, and columns with no non-null value: min = max = None.
Computation uses pyarrow.compute (C++), never a Python loop over rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

MAX_STRING_CHARS = 256
US_PER = {"s": 1_000_000, "ms": 1_000, "us": 1}  # microseconds per timestamp unit


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """Bounds of one column in one chunk; None means unknown (or no non-null value)."""

    min: Any
    max: Any
    null_count: int

    def to_json(self) -> dict:
        return {"min": self.min, "max": self.max, "null_count": self.null_count}

    @staticmethod
    def from_json(obj: dict) -> "ColumnStats":
        return ColumnStats(obj["min"], obj["max"], int(obj["null_count"]))


def column_stats(arr: pa.Array | pa.ChunkedArray) -> ColumnStats:
    """Statistics of one column of a chunk."""
    nulls = arr.null_count
    if len(arr) == nulls:
        return ColumnStats(None, None, nulls)
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        lo, hi = _min_max(arr)
        return ColumnStats(int(lo), int(hi), nulls)
    if pa.types.is_date32(t):
        lo, hi = _min_max(arr.cast(pa.int32()))
        return ColumnStats(lo, hi, nulls)
    if pa.types.is_timestamp(t):
        lo, hi = _min_max(arr.cast(pa.int64()))
        if t.unit == "ns":  # floor keeps the bounds bounds
            return ColumnStats(lo // 1_000, -(-hi // 1_000), nulls)
        return ColumnStats(lo * US_PER[t.unit], hi * US_PER[t.unit], nulls)
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        return _float_stats(arr, nulls)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _string_stats(arr, nulls)
    if pa.types.is_decimal128(t):
        lo, hi = _min_max(arr)
        return ColumnStats(str(lo), str(hi), nulls)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        lo, hi = _min_max(arr)
        return ColumnStats(lo[:MAX_STRING_CHARS].hex(),
                           hi.hex() if len(hi) <= MAX_STRING_CHARS else None, nulls)
    return ColumnStats(None, None, nulls)


def table_stats(table: pa.Table) -> dict[str, ColumnStats]:
    """Statistics of every column of a chunk, by column name, in schema order."""
    return {name: column_stats(table.column(name)) for name in table.column_names}


def _min_max(arr) -> tuple[Any, Any]:
    mm = pc.min_max(arr)
    return mm["min"].as_py(), mm["max"].as_py()


def _float_stats(arr, nulls: int) -> ColumnStats:
    # Arrow's min_max skips NaN (unless all are NaN); PostgreSQL sorts NaN last.
    lo, hi = _min_max(arr)
    if not math.isnan(hi) and pc.any(pc.is_nan(arr)).as_py():
        hi = math.nan
    return ColumnStats(float(lo), float(hi), nulls)


def _string_stats(arr, nulls: int) -> ColumnStats:
    lo, hi = _min_max(arr)
    if len(lo) > MAX_STRING_CHARS:
        lo = lo[:MAX_STRING_CHARS]  # a prefix sorts before the string itself
    if len(hi) > MAX_STRING_CHARS:
        hi = None
    return ColumnStats(lo, hi, nulls)
