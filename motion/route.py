"""Routes: which receiver of a Motion gets which rows of a batch.

`route(batch, how, n_receivers, key_indices, scales, buckets)` returns one entry per
receiver, by `how` (a Route):
- TO_ONE: everything to the single receiver (n_receivers must be 1): a Gather, and a
  Gather Merge, whose receiver merges the senders' sorted streams;
- TO_EVERY: the same batch to every receiver (no copy): a Broadcast;
- BY_HASH: rows split by motion.hashing.partition on the key columns, the one hash that
  also places stored rows, so redistributed rows meet the stored rows of equal keys;
  over the first `buckets` receivers (0: all), where a table an expansion has not moved
  yet has its rows (TO_EVERY takes `buckets` alike);
- BY_SEGMENT: each row to the receiver its one key column names (an int32 segment id):
  DELETE and UPDATE send the rows they found back to the segments that store them.
An entry is None when that receiver gets no rows, so senders skip empty frames.

Route is how rows travel, not what the plan asks for: the planner's MotionKind (which
this package does not import) maps to it in segment/operators/motion_send.py.
"""

from __future__ import annotations

import enum

import pyarrow as pa

from motion import hashing
from motion.errors import INTERNAL, MotionError


class Route(enum.Enum):
    """How a sender splits its rows among the receivers of one Motion."""

    TO_ONE = enum.auto()
    TO_EVERY = enum.auto()
    BY_HASH = enum.auto()
    BY_SEGMENT = enum.auto()


def route(batch: pa.RecordBatch, how: Route, n_receivers: int,
          key_indices: list[int] | tuple[int, ...] = (),
          scales: list[int | None] | None = None,
          buckets: int = 0) -> list[pa.RecordBatch | None]:
    """The part of `batch` for each of `n_receivers` receivers (None: no rows)."""
    if not isinstance(how, Route):
        raise MotionError(f"unknown route {how!r}", INTERNAL)
    if n_receivers < 1:
        raise MotionError(f"a motion needs at least one receiver, got {n_receivers}", INTERNAL)
    if buckets and how in (Route.TO_EVERY, Route.BY_HASH) and buckets < n_receivers:
        parts = route(batch, how, buckets, key_indices, scales)
        return parts + [None] * (n_receivers - buckets)
    if buckets > n_receivers:
        raise MotionError(f"rows hashed over {buckets} segments, but the motion has "
                          f"{n_receivers} receivers", INTERNAL)
    if how is Route.TO_ONE:
        if n_receivers != 1:
            raise MotionError(f"a gathering motion has one receiver, not {n_receivers}",
                              INTERNAL)
        return [batch if batch.num_rows else None]
    if batch.num_rows == 0:
        return [None] * n_receivers
    if how is Route.TO_EVERY:
        return [batch] * n_receivers
    if not key_indices:
        raise MotionError("Redistribute motion without hash keys", INTERNAL)
    if how is Route.BY_SEGMENT:
        return _by_segment(batch, key_indices[0], n_receivers)
    try:
        parts = hashing.partition(batch, list(key_indices), n_receivers, scales)
    except (TypeError, ValueError) as exc:
        raise MotionError(f"cannot redistribute: {exc}", INTERNAL) from None
    return [p if p.num_rows else None for p in parts]


def _by_segment(batch: pa.RecordBatch, column: int, n_receivers: int
                ) -> list[pa.RecordBatch | None]:
    targets = batch.column(column).to_numpy(zero_copy_only=False)
    if targets.min() < 0 or targets.max() >= n_receivers:
        raise MotionError(f"row addressed to segment {int(targets.max())} of "
                          f"{n_receivers}", INTERNAL)
    out: list[pa.RecordBatch | None] = []
    for seg in range(n_receivers):
        mask = targets == seg
        out.append(batch.filter(pa.array(mask)) if mask.any() else None)
    return out
