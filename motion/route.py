"""Routes: which receiver of a Motion gets which rows of a batch.

`route(batch, kind, n_receivers, key_indices, scales)` returns one entry per receiver:
- GATHER, GATHER_MERGE: everything to the single receiver (n_receivers must be 1);
- BROADCAST: the same batch to every receiver (no copy);
- REDISTRIBUTE: rows split by motion.hashing.partition on the key columns, the one hash
  that also places stored rows, so redistributed rows meet the stored rows of equal keys.
An entry is None when that receiver gets no rows, so senders skip empty frames.

MotionKind mirrors planner.plan.MotionKind (same names and values) without importing the
planner; route() accepts either enum, or the value string.
"""

from __future__ import annotations

import enum

import pyarrow as pa

from motion import hashing
from motion.errors import INTERNAL, MotionError


class MotionKind(enum.Enum):
    GATHER = "Gather"
    GATHER_MERGE = "Gather Merge"
    REDISTRIBUTE = "Redistribute"
    BROADCAST = "Broadcast"


def motion_kind(kind) -> MotionKind:
    """MotionKind of this package from ours, the planner's (by value), or a value string."""
    if isinstance(kind, MotionKind):
        return kind
    try:
        return MotionKind(getattr(kind, "value", kind))
    except ValueError:
        raise MotionError(f"unknown motion kind {kind!r}", INTERNAL) from None


def route(batch: pa.RecordBatch, kind, n_receivers: int,
          key_indices: list[int] | tuple[int, ...] = (),
          scales: list[int | None] | None = None) -> list[pa.RecordBatch | None]:
    """The part of `batch` for each of `n_receivers` receivers (None: no rows)."""
    kind = motion_kind(kind)
    if n_receivers < 1:
        raise MotionError(f"a motion needs at least one receiver, got {n_receivers}", INTERNAL)
    if kind in (MotionKind.GATHER, MotionKind.GATHER_MERGE):
        if n_receivers != 1:
            raise MotionError(f"{kind.value} motion has one receiver, not {n_receivers}",
                              INTERNAL)
        return [batch if batch.num_rows else None]
    if batch.num_rows == 0:
        return [None] * n_receivers
    if kind == MotionKind.BROADCAST:
        return [batch] * n_receivers
    if not key_indices:
        raise MotionError("Redistribute motion without hash keys", INTERNAL)
    try:
        parts = hashing.partition(batch, list(key_indices), n_receivers, scales)
    except (TypeError, ValueError) as exc:
        raise MotionError(f"cannot redistribute: {exc}", INTERNAL) from None
    return [p if p.num_rows else None for p in parts]
