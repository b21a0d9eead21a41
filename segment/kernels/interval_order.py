"""Intervals in PostgreSQL's order, as bytes: grouping, sorting and min/max keys.

PostgreSQL compares intervals by their span with a month of 30 days and a day of 24 hours
(interval_cmp_value, a 128-bit integer), so '1 mon' = '30 days' and they group together.
The span, months * 30 + days days plus the microseconds, is split exactly into two int64
words: whole days (hi) and microseconds into the day (lo, 0 .. 86_400_000_000 - 1). Their
big-endian bytes (hi's sign bit flipped) compare bytewise as the spans do, for every value
an Arrow month_day_nano can hold (no overflow, unlike a plain int64 of microseconds).

`order_key` is those 16 bytes: equal exactly where PostgreSQL's intervals are equal.
`keyed` appends the value's own 16 bytes, so that min/max over the keyed bytes picks a
value in PostgreSQL's order and `unkeyed` gives it back (planner/interval_aggregates.py).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

USECS_PER_DAY = 86_400_000_000
_IV = pa.month_day_nano_interval()
RECORD = np.dtype([("m", "<i4"), ("d", "<i4"), ("ns", "<i8")])
_SIGN = np.uint64(1 << 63)


def records(values: pa.Array) -> np.ndarray:
    """The (months, days, nanoseconds) records of a month_day_nano array (any under NULL)."""
    return np.frombuffer(values.buffers()[1], dtype=RECORD,
                         count=values.offset + len(values))[values.offset:]


def words(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(whole days, microseconds into the day) of each interval's span, int64 each."""
    rec = records(values)
    days = rec["m"].astype(np.int64) * 30 + rec["d"]
    micros = rec["ns"] // 1000
    return days + micros // USECS_PER_DAY, micros % USECS_PER_DAY


def _binary(parts: list[np.ndarray], values: pa.Array) -> pa.Array:
    """Rows of big-endian uint64 words (and raw bytes) as binary, NULL where values is."""
    raw = np.ascontiguousarray(np.concatenate(parts, axis=1))
    width = raw.shape[1]
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), len(values), [None, pa.py_buffer(raw.tobytes())])
    out = fixed.cast(pa.binary())
    if values.null_count:
        out = pc.if_else(values.is_valid(), out, pa.scalar(None, pa.binary()))
    return out


def _key_bytes(values: pa.Array) -> np.ndarray:
    hi, lo = words(values)
    pair = np.stack([hi.view(np.uint64) ^ _SIGN, lo.view(np.uint64)], axis=1)
    return pair.astype(">u8").view(np.uint8).reshape(len(values), 16)


def order_key(values: pa.Array) -> pa.Array:
    """16 bytes per interval that compare (bytewise) and are equal as PostgreSQL's
    intervals; NULL where the interval is."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return _binary([_key_bytes(values)], values)


def keyed(values: pa.Array) -> pa.Array:
    """The order key followed by the value's own bytes: min/max of these are the min/max
    interval, recoverable with `unkeyed`."""
    raw = records(values).view(np.uint8).reshape(len(values), 16)
    return _binary([_key_bytes(values), raw], values)


def unkeyed(data: pa.Array) -> pa.Array:
    """The intervals whose `keyed` bytes these are (NULL stays NULL)."""
    n = len(data)
    filled = data.fill_null(b"\0" * 32).cast(pa.binary(32)) if data.null_count else \
        data.cast(pa.binary(32))
    raw = np.frombuffer(filled.buffers()[1], dtype=np.uint8,
                        count=32 * (filled.offset + n))[32 * filled.offset:]
    body = np.ascontiguousarray(raw.reshape(n, 32)[:, 16:])
    # is_valid() is a fresh boolean array at offset 0: its bits are a validity bitmap
    validity = data.is_valid().buffers()[1] if data.null_count else None
    return pa.Array.from_buffers(_IV, n, [validity, pa.py_buffer(body.tobytes())],
                                 null_count=data.null_count)
