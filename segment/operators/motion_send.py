"""The sending end of a Motion: the root of every slice that runs on segments.

It pulls its slice's batches and routes each to the Motion's receivers (one for a
Gather, every segment for Redistribute and Broadcast) with the one hash function, over
Senders of motion/ (shared memory on one node, TCP across nodes). It yields nothing: its
output leaves the process. When its receivers all hang up (a LIMIT above was satisfied)
it stops pulling early.
"""

from __future__ import annotations

from typing import Iterable

import pyarrow as pa

from motion import route as motion_route
from planner import plan as pl


# How each kind of Motion routes its rows (motion/route.py knows routes, not plan nodes).
ROUTES = {pl.MotionKind.GATHER: motion_route.Route.TO_ONE,
          pl.MotionKind.GATHER_MERGE: motion_route.Route.TO_ONE,
          pl.MotionKind.BROADCAST: motion_route.Route.TO_EVERY,
          pl.MotionKind.REDISTRIBUTE: motion_route.Route.BY_HASH,
          pl.MotionKind.EXPLICIT: motion_route.Route.BY_SEGMENT}


def scales_of(motion: pl.Motion) -> list[int | None]:
    """Scales of the hash keys that are scaled-int numerics, or arrays of them (they hash
    by value)."""
    return [_scale(motion.child.fields[k].type) for k in motion.hash_keys]


def buckets_of(motion: pl.Motion) -> int:
    """The receivers a Redistribute hashes over (its locus's segments) or a Broadcast
    sends to (`buckets`); 0: all of them."""
    if motion.kind is pl.MotionKind.REDISTRIBUTE and motion.locus is not None:
        return motion.locus.segments
    return motion.buckets


def _scale(t) -> int | None:
    if t.is_array:
        t = t.elem
    return t.scale if t.is_scaled_int else None


def send(batches: Iterable[pa.RecordBatch], motion: pl.Motion, senders: list) -> int:
    """Route every batch to `senders` (one per receiver, in receiver order); finish them.
    Returns rows sent. On error the caller fails the senders."""
    scales = scales_of(motion)
    how = ROUTES[motion.kind]
    buckets = buckets_of(motion)
    live = [True] * len(senders)
    rows = 0
    for batch in batches:
        parts = motion_route.route(batch, how, len(senders), motion.hash_keys, scales,
                                   buckets)
        for i, part in enumerate(parts):
            if part is not None and live[i]:
                live[i] = senders[i].send(part)
                rows += part.num_rows
        if not any(live):
            break
    for s in senders:
        s.finish()
    return rows
