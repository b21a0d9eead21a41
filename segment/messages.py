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
import pickle
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ray import cloudpickle

from motion.channel import ChannelStats, Endpoint
from planner import plan as pl
from segment.operators.base import NodeStats


class SlicePlan:
    """A slice's plan in transit: the Motion it sends into (its child is the plan), pickled
    once on the coordinator and unpickled once per segment process.

    Pickling a plan of frozen dataclasses costs about a millisecond per slice (a Python
    call per node), and Ray would do it again for every segment and every run. So the
    coordinator keeps the pickled bytes of each plan object it dispatched (`of`: a cached
    plan is pickled at its first run only) and a segment keeps the plan of each byte
    string it received (`motion`), both in small LRUs."""

    __slots__ = ("data", "_motion")
    CACHED = 256  # plans kept by each of the two caches

    _pickled: "OrderedDict[int, tuple[pl.Motion, SlicePlan]]" = OrderedDict()
    _unpickled: "OrderedDict[bytes, pl.Motion]" = OrderedDict()
    _lock = threading.Lock()

    def __init__(self, data: bytes, motion: pl.Motion | None = None):
        self.data = data
        self._motion = motion

    def __reduce__(self):
        return SlicePlan, (self.data,)

    @classmethod
    def of(cls, motion: pl.Motion) -> "SlicePlan":
        """The plan of `motion`, pickled at most once while it stays cached."""
        with cls._lock:
            hit = cls._pickled.get(id(motion))
            if hit is not None and hit[0] is motion:  # (an id may be reused once freed)
                cls._pickled.move_to_end(id(motion))
                return hit[1]
        plan = cls(_dumps(motion), motion)
        with cls._lock:
            cls._pickled[id(motion)] = (motion, plan)
            while len(cls._pickled) > cls.CACHED:
                cls._pickled.popitem(last=False)
        return plan

    def motion(self) -> pl.Motion:
        """The plan, unpickled at most once per process while it stays cached."""
        if self._motion is not None:
            return self._motion
        with self._lock:
            found = self._unpickled.get(self.data)
            if found is not None:
                self._unpickled.move_to_end(self.data)
        if found is None:
            found = pickle.loads(self.data)
            with self._lock:
                self._unpickled[self.data] = found
                while len(self._unpickled) > self.CACHED:
                    self._unpickled.popitem(last=False)
        self._motion = found
        return found


def _dumps(motion: pl.Motion) -> bytes:
    # Plain pickle (C) is about twice as fast as Ray's cloudpickle, whose Python pickler
    # looks at every object; cloudpickle for plans holding values plain pickle refuses.
    try:
        return pickle.dumps(motion, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return cloudpickle.dumps(motion, protocol=pickle.HIGHEST_PROTOCOL)


@dataclass(frozen=True)
class SliceTask:
    """What the coordinator tells a segment to run: one slice of one query."""

    query_id: int
    plan: SlicePlan                   # the Motion this slice sends into; its child is the plan
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
    segments: int = 0                 # the segments the query runs on (split series' parts)

    @property
    def motion(self) -> pl.Motion:
        return self.plan.motion()


# The segment methods a MethodCall (or the actor's `checked`) may name: everything that
# reads or writes a transaction's state, run only on the process `incarnation` names.
CHECKED_METHODS = frozenset({
    "begin", "write", "truncate", "prepare", "create_table", "drop_table", "table_rows",
    "table_bytes",
    "analyze", "insert_select", "copy_from_file", "motion_endpoint", "mark", "rollback_to",
    "compact", "compactable", "rewrite_table", "set_placement"})
# ... and those that any process of the segment takes (idempotent ends of a transaction,
# which a restarted process settles from the commit log too; ping).
UNCHECKED_METHODS = frozenset({"commit", "abort", "drop_table", "ping"})


@dataclass(frozen=True)
class MethodCall:
    """A call of a segment worker's method over the task socket (segment/task_server.py),
    as the actor's `checked` (with `incarnation`) or plain call would make it through Ray:
    a round trip there costs 1.5-2 ms of Ray's, here one write and one read."""

    method: str
    args: tuple
    incarnation: int | None = None
    checked: bool = True


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
    integers, days, microseconds) the chunk statistics keep; and the most common values
    of a random sample of `sampled` rows with their counts in it (segment/
    common_values.py)."""

    nulls: int
    kmv: np.ndarray
    min: Any = None
    max: Any = None
    common: tuple[tuple[Any, int], ...] = ()
    sampled: int = 0


@dataclass(frozen=True)
class ShardSample:
    """One segment's share of ANALYZE of a table: its rows and each column's sample."""

    rows: int
    columns: dict[str, ColumnSample]
