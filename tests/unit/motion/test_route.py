"""route(): the parts of a batch sent to one receiver, to every receiver, or by hash."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from motion import hashing, route
from motion.errors import MotionError
from motion.route import Route
from planner import plan as pl
from segment.operators import motion_send


def _batch(n=10_000, seed=0):
    rng = np.random.default_rng(seed)
    return pa.record_batch({"k": pa.array(rng.integers(0, 1000, n)),
                            "s": pa.array([f"v{i % 37}" for i in range(n)]),
                            "id": pa.array(np.arange(n))})


def test_to_one_sends_everything_to_one():
    b = _batch()
    assert route.route(b, Route.TO_ONE, 1) == [b]
    with pytest.raises(MotionError, match="one receiver"):
        route.route(b, Route.TO_ONE, 2)


def test_broadcast_shares_the_batch():
    b = _batch()
    parts = route.route(b, Route.TO_EVERY, 3)
    assert len(parts) == 3 and all(p is b for p in parts)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_redistribute_uses_the_one_hash(n):
    b = _batch()
    parts = route.route(b, Route.BY_HASH, n, [0, 1])
    seg = hashing.segment_ids([b.column(0), b.column(1)], n)
    for r, part in enumerate(parts):
        want = b.filter(pa.array(seg == r))
        if want.num_rows == 0:
            assert part is None
        else:
            assert part.equals(want)
    assert sum(p.num_rows for p in parts if p is not None) == b.num_rows


def test_buckets_keep_rows_on_the_first_receivers():
    """A table an expansion has not moved yet: rows hash over its 2 segments of 4, and a
    Broadcast into it reaches those 2 only."""
    b = _batch()
    parts = route.route(b, Route.BY_HASH, 4, [0], buckets=2)
    assert parts[2] is None and parts[3] is None
    seg = hashing.segment_ids([b.column(0)], 2)
    assert parts[0].equals(b.filter(pa.array(seg == 0)))
    assert parts[1].equals(b.filter(pa.array(seg == 1)))
    every = route.route(b, Route.TO_EVERY, 4, buckets=3)
    assert [p is b for p in every] == [True, True, True, False]
    assert route.route(b, Route.BY_HASH, 3, [0], buckets=3)[2] is not None
    with pytest.raises(MotionError, match="receivers"):
        route.route(b, Route.BY_HASH, 2, [0], buckets=3)


def test_redistribute_leaves_none_for_empty_parts():
    b = pa.record_batch({"k": pa.array([5] * 100)})
    parts = route.route(b, Route.BY_HASH, 8, [0])
    assert sum(p is not None for p in parts) == 1


def test_scaled_numeric_keys_hash_like_their_values():
    scaled = pa.record_batch({"k": pa.array([500, 150], pa.int64())})  # 5.00 and 1.50
    ints = pa.record_batch({"k": pa.array([5], pa.int64())})
    a = route.route(scaled, Route.BY_HASH, 16, [0], [2])
    b = route.route(ints, Route.BY_HASH, 16, [0])
    where_five = [i for i, p in enumerate(b) if p is not None]
    assert a[where_five[0]] is not None and 500 in a[where_five[0]].column(0).to_pylist()


def test_empty_batch_goes_nowhere():
    b = _batch(0)
    assert route.route(b, Route.TO_ONE, 1) == [None]
    assert route.route(b, Route.TO_EVERY, 2) == [None, None]
    assert route.route(b, Route.BY_HASH, 2, [0]) == [None, None]


def test_only_a_route_routes():
    b = _batch(10)
    with pytest.raises(MotionError, match="unknown route"):
        route.route(b, "Broadcast", 2)  # the planner's kind names are not routes


def test_every_planner_motion_kind_has_a_route():
    assert set(motion_send.ROUTES) == set(pl.MotionKind)
    assert motion_send.ROUTES[pl.MotionKind.GATHER_MERGE] is Route.TO_ONE


def test_bad_arguments():
    b = _batch(10)
    with pytest.raises(MotionError, match="hash keys"):
        route.route(b, Route.BY_HASH, 2)
    with pytest.raises(MotionError, match="at least one"):
        route.route(b, Route.TO_EVERY, 0)
    with pytest.raises(MotionError, match="redistribute"):
        route.route(b, Route.BY_HASH, 2, [7])


def test_by_segment_sends_each_row_where_its_column_says():
    b = pa.record_batch({"seg": pa.array([2, 0, 2, 1], pa.int32()),
                         "v": pa.array(["a", "b", "c", "d"])})
    parts = route.route(b, Route.BY_SEGMENT, 3, [0])
    assert [p.column(1).to_pylist() for p in parts] == [["b"], ["d"], ["a", "c"]]
    assert route.route(b.slice(0, 1), Route.BY_SEGMENT, 3, [0])[:2] == [None, None]


def test_by_segment_refuses_a_segment_out_of_range():
    b = pa.record_batch({"seg": pa.array([0, 3], pa.int32())})
    with pytest.raises(MotionError):
        route.route(b, Route.BY_SEGMENT, 3, [0])
