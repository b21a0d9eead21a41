"""Arrays as grouping and join keys: segment/kernels/group_keys.py's encoding, hash
aggregation (in batches, merged, spilled, PARTIAL then FINAL) and hash joins on array keys,
checked against the same answer computed in Python."""

from __future__ import annotations

import collections

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from segment.kernels import group_keys
from segment.operators import base

A = ex.AggFunc
INTS = T.array_of(T.INT4)
TEXTS = T.array_of(T.TEXT)
FLOATS = T.array_of(T.FLOAT8)


def _random_arrays(n: int, seed: int = 5) -> tuple[list, list, list]:
    rng = np.random.default_rng(seed)
    ints, texts, values = [], [], []
    for _ in range(n):
        r = rng.random()
        ints.append(None if r < 0.05 else [] if r < 0.1 else
                    [None if x < 0 else int(x) for x in rng.integers(-1, 4, rng.integers(1, 4))])
        texts.append(None if r > 0.95 else [["a", "b"], ["ab"], ["a", None], [""], []][
            int(rng.integers(0, 5))])
        values.append(int(rng.integers(0, 100)))
    return ints, texts, values


def _key(v):
    return None if v is None else tuple(v)


def test_encoding_tells_arrays_apart_exactly():
    arr = pa.array([[1, 2], [2, 1], [], [None], None, [1, 2], [None, None], [0]])
    enc = group_keys.encode(arr).to_pylist()
    assert enc[0] == enc[5] and enc[4] is None
    assert len({e for e in enc if e is not None}) == 6
    texts = group_keys.encode(pa.array([["a", "b"], ["ab"], ["a\x01b"], ["a", None], None]))
    assert len(set(texts.to_pylist())) == 5
    floats = group_keys.encode(pa.array([[0.0], [-0.0], [float("nan")], [-float("nan")]]))
    assert floats[0] == floats[1] and floats[2] == floats[3] and floats[0] != floats[2]
    # A '1 day' interval and a '24 hours' one are equal, as PostgreSQL compares them.
    iv = pa.array([pa.scalar((0, 1, 0), pa.month_day_nano_interval()).as_py(),
                   pa.scalar((0, 0, 86_400 * 10**9), pa.month_day_nano_interval()).as_py()],
                  pa.month_day_nano_interval())
    lists = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), iv)
    e = group_keys.encode(lists)
    assert e[0] == e[1]
    # Slices encode as the rows they show.
    assert group_keys.encode(arr.slice(5, 2)).to_pylist() == enc[5:7]


@pytest.mark.parametrize("batch_rows", [None, 37])
def test_group_by_arrays(batch_rows):
    ints, texts, values = _random_arrays(400)
    table = pa.table({"i": pa.array(ints, pa.list_(pa.int32())), "t": pa.array(texts),
                      "v": pa.array(values, pa.int64())})
    src = k.source(table, [INTS, TEXTS, T.INT8], batch_rows=batch_rows)
    keys = (k.col(0, INTS), k.col(1, TEXTS))
    aggs = (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
            ex.AggCall(A.SUM, k.col(2, T.INT8), False, T.numeric(38, 0)),
            ex.AggCall(A.COUNT, k.col(0, INTS), True, T.INT8))
    node = plan.Aggregate(src, keys, aggs, plan.AggMode.SINGLE, plan.fields_of(
        [("i", INTS), ("t", TEXTS), ("n", T.INT8), ("s", T.numeric(38, 0)), ("d", T.INT8)]))
    got = {(_key(r["i"]), _key(r["t"])): (r["n"], int(r["s"]), r["d"])
           for r in k.run(node).to_pylist()}
    want = collections.defaultdict(lambda: [0, 0])
    for i, t, v in zip(ints, texts, values):
        want[(_key(i), _key(t))][0] += 1
        want[(_key(i), _key(t))][1] += v
    assert got == {g: (n, s, 0 if g[0] is None else 1) for g, (n, s) in want.items()}


def test_partial_then_final_and_spilled(tmp_path):
    ints, _, values = _random_arrays(40_000, seed=9)
    ints = [None if a is None else a + [j % 5000] for j, a in enumerate(ints)]  # many groups
    table = pa.table({"i": pa.array(ints, pa.list_(pa.int32())),
                      "v": pa.array(values, pa.int64())})
    src = k.source(table, [INTS, T.INT8], batch_rows=8000)
    count = ex.AggCall(A.COUNT_STAR, None, False, T.INT8)
    partial = plan.Aggregate(src, (k.col(0, INTS),), (count,), plan.AggMode.PARTIAL,
                             plan.fields_of([("i", INTS), ("n", T.INT8)]))
    final = plan.Aggregate(partial, (k.col(0, INTS),),
                           (ex.AggCall(A.SUM, k.col(1, T.INT8), False, T.INT8),),
                           plan.AggMode.FINAL, plan.fields_of([("i", INTS), ("n", T.INT8)]))
    want = collections.Counter(_key(a) for a in ints)
    budget = k.budget(tmp_path, 64 << 10)
    ctx = base.ExecContext(memory=budget, analyze=True)
    got = k.run(final, ctx)
    assert {_key(r["i"]): r["n"] for r in got.to_pylist()} == dict(want)
    assert budget.spilled_bytes > 0
    k.check_clean(budget, tmp_path)


def test_join_on_arrays():
    left = pa.table({"a": pa.array([[1, 2], [2, 1], None, [], [1, 2], [None]],
                                   pa.list_(pa.int32())), "x": pa.array(range(6))})
    right = pa.table({"b": pa.array([[1, 2], [], [None], None, [3]], pa.list_(pa.int32())),
                      "y": pa.array(range(5))})
    ls, rs = k.source(left, [INTS, T.INT8]), k.source(right, [INTS, T.INT8])
    node = plan.HashJoin(ls, rs, plan.JoinType.INNER, (0,), (0,), None,
                         ls.fields + rs.fields)
    got = sorted((r["x"], r["y"]) for r in k.run(node).to_pylist())
    assert got == [(0, 0), (3, 1), (4, 0), (5, 2)]  # NULL arrays match nothing


def test_join_on_arrays_of_different_element_types_is_refused():
    from planner import errors
    ls = k.source(pa.table({"a": pa.array([[1]], pa.list_(pa.int32()))}), [INTS])
    rs = k.source(pa.table({"b": pa.array([["1"]])}), [TEXTS])
    with pytest.raises(errors.FeatureNotSupported):
        plan.HashJoin(ls, rs, plan.JoinType.INNER, (0,), (0,), None, ls.fields + rs.fields)
