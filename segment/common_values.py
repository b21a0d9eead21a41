"""ANALYZE's most common values on one segment: a random sample of a shard's live rows and
the values that occur most often in it, with their counts.

A filter `column = constant` keeps 1/distinct of the rows only where values are about
equally frequent; on skewed data (ClickBench's CounterID = 62 holds 8% of the rows, 1 in
6,000 by its distinct count) that estimate is off by orders of magnitude and plans choose
as if a few rows came. PostgreSQL keeps the most common values of a sample of 300 x
default_statistics_target rows (analyze.c); so does this, per segment, and the
coordinator merges the segments' counts (coordinator/table_stats.py).

Values are physical, as the chunk statistics' bounds (segment/storage/stats.py):
integers and booleans as int, dates as days, timestamps as microseconds, strings as str.
Other types (floats, decimal128, bytes, arrays, ...) keep no common values.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from segment.storage.stats import US_PER

SAMPLE_ROWS = 30_000  # PostgreSQL: 300 x default_statistics_target (100)
COMMON_MAX = 100      # values a segment reports, as default_statistics_target


def sample_positions(live_rows: list[int], seed: int) -> list[np.ndarray]:
    """For chunks of these many live rows, the sorted positions of each chunk's share of
    one uniform random sample of at most SAMPLE_ROWS rows of them all."""
    total = sum(live_rows)
    if total <= SAMPLE_ROWS:
        return [np.arange(n, dtype=np.int64) for n in live_rows]
    rng = np.random.default_rng(seed)
    picked = np.sort(rng.choice(total, SAMPLE_ROWS, replace=False))
    starts = np.cumsum([0] + live_rows)
    return [picked[(picked >= lo) & (picked < hi)] - lo
            for lo, hi in zip(starts[:-1], starts[1:])]


def physical(arr: pa.Array) -> pa.Array | None:
    """The values as the statistics keep them, or None for a type without common values."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return physical(arr.dictionary_decode())
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return arr.cast(pa.int64())
    if pa.types.is_date32(t):
        return arr.cast(pa.int32())
    if pa.types.is_timestamp(t) and t.unit in US_PER:
        return pc.multiply(arr.cast(pa.int64()), US_PER[t.unit])
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr
    return None


def most_common(values: list[pa.Array]) -> tuple[tuple[object, int], ...]:
    """The COMMON_MAX most frequent non-null values of the sampled values (one array per
    chunk) that occur more than once, most frequent first, with their counts."""
    arrays = [a for a in (physical(v) for v in values) if a is not None]
    if not arrays or len(arrays) != len(values):
        return ()
    sample = pa.chunked_array(arrays).combine_chunks().drop_null()
    if len(sample) == 0:
        return ()
    counted = pc.value_counts(sample)
    counts = counted.field("counts").to_numpy(zero_copy_only=False)
    order = np.argsort(-counts, kind="stable")[:COMMON_MAX]
    order = order[counts[order] > 1]
    found = counted.field("values").take(pa.array(order)).to_pylist()
    return tuple((v, int(c)) for v, c in zip(found, counts[order]))
