"""What crosses the seam between the coordinator and a segment actor, as frozen dataclasses
that pickle through Ray: the slice task the coordinator sends, the slice result and the
ANALYZE sample a segment returns. Nothing here is read by string keys.

The coordinator builds SliceTasks (coordinator/dispatch.py) and merges ShardSamples into the
catalog's statistics (coordinator/ddl.py); segment/worker.py runs the one and computes the
other. The plan inside a task is the planner's (frozen plan nodes); Motion endpoints and
channel counters are motion/'s.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from motion.channel import ChannelStats, Endpoint
from planner import plan as pl
from segment.operators.base import NodeStats


@dataclass(frozen=True)
class SliceTask:
    """What the coordinator tells a segment to run: one slice of one query."""

    query_id: int
    motion: pl.Motion                 # the Motion this slice sends into; its child is the plan
    receivers: tuple[Endpoint, ...]   # motion Endpoints of the receivers, in receiver order
    sender_index: int                 # this segment's index among the slice's senders
    n_senders: dict[int, int]         # slice id -> number of senders, for Motions received here
    txn_id: int | None
    analyze: bool = False
    now: datetime.datetime | None = None  # the statement's start (now()), alike everywhere
    incarnation: int | None = None    # the segment process this was planned for (None: any)
    deadline: float | None = None     # statement_timeout as a wall-clock time.time()
    work_mem: int | None = None       # bytes of operator memory before spilling (None: default)
    jit: bool = True                  # compiled operator paths where they apply (SET jit)
    jit_above_rows: int = 0           # ... for batches of at least this many rows


@dataclass(frozen=True)
class SliceResult:
    """What one slice on one segment reports when it ends: EXPLAIN ANALYZE's statistics of
    its nodes (by position in the slice; empty without ANALYZE) and its Motion counters."""

    segment: int
    slice_id: int
    nodes: dict[int, NodeStats] = field(default_factory=dict)
    sent: tuple[ChannelStats, ...] = ()                      # one per receiver sent to
    received: dict[int, tuple[ChannelStats, ...]] = field(default_factory=dict)  # by slice id


@dataclass(frozen=True)
class ColumnSample:
    """One column of one shard for ANALYZE: nulls, a KMV sketch (the smallest distinct
    64-bit hashes, segment/sketch.py) and the bounds, as physical values (scaled
    integers, days, microseconds) the chunk statistics keep."""

    nulls: int
    kmv: np.ndarray
    min: Any = None
    max: Any = None


@dataclass(frozen=True)
class ShardSample:
    """One segment's share of ANALYZE of a table: its rows and each column's sample."""

    rows: int
    columns: dict[str, ColumnSample]
