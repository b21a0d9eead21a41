"""Rehome: the rows an expansion moves off a segment, each with its new segment."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from motion import hashing
from planner import plan
from planner import types as T
from tests.unit.operators import opkit


def _rehome(rows: pa.Table, mode: plan.RehomeMode, keys, old: int, new: int, segment: int):
    src = opkit.source(rows, [T.INT8, T.INT8])
    fields = src.fields + (plan.Field("target", T.INT4),)
    node = plan.Rehome(src, mode, keys, (None,) * len(keys), old, new, fields)
    return opkit.run(node, opkit.ctx(segment_id=segment))


def _keys_on(segment: int, old: int, n: int = 20_000) -> pa.Table:
    """Keys stored on `segment` of `old` (as hashing places them), with a row id column."""
    k = np.arange(n, dtype=np.int64)
    here = hashing.segment_ids([pa.array(k)], old) == segment
    return pa.table({"k": k[here], "row": np.arange(int(here.sum()), dtype=np.int64)})


@pytest.mark.parametrize("old,new", [(2, 3), (2, 4), (3, 7)])
def test_hashed_moves_exactly_the_keys_whose_bucket_changes(old, new):
    for segment in range(old):
        rows = _keys_on(segment, old)
        out = _rehome(rows, plan.RehomeMode.HASHED, (0,), old, new, segment)
        target = hashing.segment_ids([rows.column("k")], new)
        moving = target != segment
        assert out.column("k").to_pylist() == rows.column("k").to_numpy()[moving].tolist()
        assert out.column("target").to_pylist() == target[moving].tolist()
        # Jump-consistent hashing: a changed bucket is always one of the new segments,
        # and about 1 - old/new of the keys change.
        assert all(old <= t < new for t in out.column("target").to_pylist())
        assert abs(out.num_rows / rows.num_rows - (1 - old / new)) < 0.03


def test_random_gives_the_new_segments_their_share_by_row_id():
    rows = pa.table({"k": np.zeros(30_000, np.int64), "row": np.arange(30_000, dtype=np.int64)})
    out = _rehome(rows, plan.RehomeMode.RANDOM, (1,), 2, 3, segment=0)
    assert set(out.column("target").to_pylist()) == {2}
    assert abs(out.num_rows / rows.num_rows - 1 / 3) < 0.03


def test_replicated_sends_every_row_to_each_new_segment():
    rows = pa.table({"k": np.arange(5, dtype=np.int64), "row": np.arange(5, dtype=np.int64)})
    out = _rehome(rows, plan.RehomeMode.REPLICATED, (), 2, 4, segment=0)
    assert sorted(zip(out.column("target").to_pylist(), out.column("k").to_pylist())) == \
        sorted((t, k) for t in (2, 3) for k in range(5))


def test_nothing_moves_when_no_bucket_changes():
    rows = _keys_on(0, 4)
    keep = hashing.segment_ids([rows.column("k")], 5) == 0
    staying = rows.filter(pa.array(keep))
    out = _rehome(staying, plan.RehomeMode.HASHED, (0,), 4, 5, segment=0)
    assert out.num_rows == 0
