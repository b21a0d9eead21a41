"""motion_recv: receiving batches through the context, and merge_sorted over sorted
streams (checked against one full sort), including the fallback without per-sender streams."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import errors
from planner import plan
from planner import types as T
from segment.operators import base
from segment.kernels import sort_order
from segment.operators import motion_recv, ordering

FIELDS = plan.fields_of([("a", T.INT4), ("s", T.TEXT), ("id", T.INT8)])
SCHEMA = base.schema_of(FIELDS)
KEYS = (plan.SortKey(k.col(0, T.INT4), True, False), plan.SortKey(k.col(1, T.TEXT), False, True))


def _rows(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"a": pa.array(rng.integers(0, 30, n).astype(np.int32),
                                   mask=rng.random(n) < 0.1),
                     "s": pa.array([None if x < 3 else f"v{x}" for x in rng.integers(0, 50, n)]),
                     "id": pa.array(np.arange(n) + seed * 1_000_000, pa.int64())}, schema=SCHEMA)


def _sorted(t: pa.Table) -> pa.Table:
    b = base.table_to_batch(t)
    return t.take(sort_order.sort_indices(ordering.key_arrays(b, KEYS), KEYS))


def _key_tuples(t: pa.Table) -> list[tuple]:
    return list(zip(t.column("a").to_pylist(), t.column("s").to_pylist()))


def _stream(t: pa.Table, rng: random.Random) -> list[pa.RecordBatch]:
    """A sorted table cut into batches of random sizes (some empty)."""
    out, i = [], 0
    while i < t.num_rows:
        n = rng.choice([0, 1, 5, 50, 400])
        out.append(base.table_to_batch(t.slice(i, n)) if n else base.empty_batch(SCHEMA))
        i += n
    return out


@pytest.mark.parametrize("n_streams", [1, 2, 5, 16])
def test_merge_sorted_equals_full_sort(n_streams):
    rng = random.Random(n_streams)
    tables = [_sorted(_rows(rng.choice([0, 1, 300, 2000]), seed=s)) for s in range(n_streams)]
    streams = [iter(_stream(t, rng)) for t in tables]
    merged = list(motion_recv.merge_sorted(streams, KEYS, SCHEMA))
    out = pa.Table.from_batches(merged, SCHEMA)
    everything = pa.concat_tables(tables)
    assert out.num_rows == everything.num_rows
    assert sorted(out.column("id").to_pylist()) == sorted(everything.column("id").to_pylist())
    assert _key_tuples(out) == _key_tuples(_sorted(everything))


def test_merge_sorted_streams_lazily():
    """The merge does not drain a stream before emitting."""
    pulled = {"n": 0}
    t = _sorted(_rows(5000, seed=1))

    def stream(table):
        for b in table.to_batches(max_chunksize=100):
            pulled["n"] += 1
            yield b

    half = t.num_rows // 2
    merged = motion_recv.merge_sorted([stream(t.slice(0, half)), stream(t.slice(half))],
                                      KEYS, SCHEMA)
    next(merged)
    assert pulled["n"] < 10


def _motion(kind, sort_keys=()):
    child = k.Source((), FIELDS)
    return plan.Motion(child, kind, FIELDS, slice_id=2, sort_keys=sort_keys)


def test_gather_yields_received_batches_in_node_schema():
    t = _rows(100, seed=3)
    got = []

    def receive(motion):
        got.append(motion.slice_id)
        return iter(t.rename_columns(["x", "y", "z"]).to_batches(max_chunksize=30))

    out = k.run(_motion(plan.MotionKind.GATHER), k.ctx(receive=receive))
    assert got == [2] and out.schema == SCHEMA and out.num_rows == 100


def test_gather_merge_uses_sorted_streams():
    parts = [_sorted(_rows(500, seed=s)) for s in range(3)]
    c = k.ctx(receive_sorted=lambda m: [iter(p.to_batches(max_chunksize=64)) for p in parts])
    out = k.run(_motion(plan.MotionKind.GATHER_MERGE, KEYS), c)
    assert _key_tuples(out) == _key_tuples(_sorted(pa.concat_tables(parts)))


def test_gather_merge_without_sorted_streams_sorts_again():
    parts = [_sorted(_rows(500, seed=s)) for s in range(3)]
    c = k.ctx(receive=lambda m: iter([b for p in parts for b in p.to_batches(max_chunksize=64)]))
    out = k.run(_motion(plan.MotionKind.GATHER_MERGE, KEYS), c)
    assert _key_tuples(out) == _key_tuples(_sorted(pa.concat_tables(parts)))


def test_no_receiver_is_an_internal_error():
    with pytest.raises(errors.InternalError):
        k.run(_motion(plan.MotionKind.REDISTRIBUTE), k.ctx())


def test_empty_streams():
    assert list(motion_recv.merge_sorted([iter([]), iter([base.empty_batch(SCHEMA)])],
                                         KEYS, SCHEMA)) == []
