"""route(): gather, gather merge, broadcast and redistribute parts of a batch."""

from __future__ import annotations

import enum

import numpy as np
import pyarrow as pa
import pytest

from motion import hashing, route
from motion.errors import MotionError
from motion.route import MotionKind


def _batch(n=10_000, seed=0):
    rng = np.random.default_rng(seed)
    return pa.record_batch({"k": pa.array(rng.integers(0, 1000, n)),
                            "s": pa.array([f"v{i % 37}" for i in range(n)]),
                            "id": pa.array(np.arange(n))})


@pytest.mark.parametrize("kind", [MotionKind.GATHER, MotionKind.GATHER_MERGE])
def test_gather_kinds_send_everything_to_one(kind):
    b = _batch()
    assert route.route(b, kind, 1) == [b]
    with pytest.raises(MotionError, match="one receiver"):
        route.route(b, kind, 2)


def test_broadcast_shares_the_batch():
    b = _batch()
    parts = route.route(b, MotionKind.BROADCAST, 3)
    assert len(parts) == 3 and all(p is b for p in parts)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_redistribute_uses_the_one_hash(n):
    b = _batch()
    parts = route.route(b, MotionKind.REDISTRIBUTE, n, [0, 1])
    seg = hashing.segment_ids([b.column(0), b.column(1)], n)
    for r, part in enumerate(parts):
        want = b.filter(pa.array(seg == r))
        if want.num_rows == 0:
            assert part is None
        else:
            assert part.equals(want)
    assert sum(p.num_rows for p in parts if p is not None) == b.num_rows


def test_redistribute_leaves_none_for_empty_parts():
    b = pa.record_batch({"k": pa.array([5] * 100)})
    parts = route.route(b, MotionKind.REDISTRIBUTE, 8, [0])
    assert sum(p is not None for p in parts) == 1


def test_scaled_numeric_keys_hash_like_their_values():
    scaled = pa.record_batch({"k": pa.array([500, 150], pa.int64())})  # 5.00 and 1.50
    ints = pa.record_batch({"k": pa.array([5], pa.int64())})
    a = route.route(scaled, MotionKind.REDISTRIBUTE, 16, [0], [2])
    b = route.route(ints, MotionKind.REDISTRIBUTE, 16, [0])
    where_five = [i for i, p in enumerate(b) if p is not None]
    assert a[where_five[0]] is not None and 500 in a[where_five[0]].column(0).to_pylist()


def test_empty_batch_goes_nowhere():
    b = _batch(0)
    assert route.route(b, MotionKind.GATHER, 1) == [None]
    assert route.route(b, MotionKind.BROADCAST, 2) == [None, None]
    assert route.route(b, MotionKind.REDISTRIBUTE, 2, [0]) == [None, None]


def test_kind_from_the_planner_enum_or_value():
    class PlannerKind(enum.Enum):  # stands in for planner.plan.MotionKind
        BROADCAST = "Broadcast"

    b = _batch(10)
    assert route.route(b, PlannerKind.BROADCAST, 2) == [b, b]
    assert route.route(b, "Gather", 1) == [b]
    with pytest.raises(MotionError, match="unknown motion kind"):
        route.route(b, "Scatter", 1)


def test_bad_arguments():
    b = _batch(10)
    with pytest.raises(MotionError, match="hash keys"):
        route.route(b, MotionKind.REDISTRIBUTE, 2)
    with pytest.raises(MotionError, match="at least one"):
        route.route(b, MotionKind.BROADCAST, 0)
    with pytest.raises(MotionError, match="redistribute"):
        route.route(b, MotionKind.REDISTRIBUTE, 2, [7])
