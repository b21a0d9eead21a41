"""sort under a tiny memory budget: sorted runs spilled to disk and merged give exactly the
in-memory result (same row order, ties included) for every key direction and NULLS
placement, over ints, strings and floats with NULLs and NaN; spill files are gone after
the end, an error and an early stop; Top-K never spills; EXPLAIN ANALYZE sees the spill."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from segment import memory
from segment.operators import base
from segment.operators import sort_merge

TYPES = [T.INT4, T.TEXT, T.FLOAT8, T.INT8]
N = 300_000


def _table(n: int = N, seed: int = 5) -> pa.Table:
    rng = np.random.default_rng(seed)
    f = rng.normal(0, 100, n).round(1)
    f[rng.random(n) < 0.03] = np.nan
    return pa.table({
        "a": pa.array(rng.integers(-40, 40, n).astype(np.int32), mask=rng.random(n) < 0.1),
        "s": pa.array([None if x % 11 == 0 else f"str{x}" for x in rng.integers(0, 5000, n)]),
        "f": pa.array(f, mask=rng.random(n) < 0.1),
        "id": pa.array(np.arange(n, dtype=np.int64)),
    })


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return _table()


def _budget(tmp_path, limit=1 << 20) -> memory.MemoryBudget:
    return memory.MemoryBudget(limit, str(tmp_path))


def _sort(table, keys, batch_rows=10_000, limit=None):
    src = k.source(table, TYPES, batch_rows)
    return plan.Sort(src, tuple(keys), src.fields, limit)


def _check_clean(budget, tmp_path):
    assert budget.open_files == 0
    assert budget.used == 0
    assert os.listdir(tmp_path) == []


def _ids(t: pa.Table) -> np.ndarray:
    return t.column("id").to_numpy()


DIRS = list(itertools.product([False, True], [False, True]))


@pytest.mark.parametrize("d", DIRS, ids=lambda d: f"{'D' if d[0] else 'A'}{'F' if d[1] else 'L'}")
def test_spilled_sort_equals_in_memory(table, tmp_path, d):
    keys = [plan.SortKey(k.col(1, T.TEXT), *d), plan.SortKey(k.col(2, T.FLOAT8), d[1], d[0]),
            plan.SortKey(k.col(0, T.INT4), *d)]
    node = _sort(table, keys)
    want = k.run(node)
    budget = _budget(tmp_path)
    got = k.run(node, base.ExecContext(memory=budget))
    assert budget.spilled_bytes > 0
    assert got.num_rows == N
    assert np.array_equal(_ids(got), _ids(want))
    assert got.drop_columns(["f"]).equals(want.drop_columns(["f"]))
    _check_clean(budget, tmp_path)


def test_ties_keep_input_order_and_multi_pass_merge(table, tmp_path, monkeypatch):
    # one key of few values: almost every row ties; a tiny fan-in forces merge passes
    monkeypatch.setattr(sort_merge, "MAX_FAN_IN", 3)
    node = _sort(table, [plan.SortKey(k.col(0, T.INT4), True, True)], batch_rows=7000)
    want = k.run(node)
    budget = _budget(tmp_path)
    got = k.run(node, base.ExecContext(memory=budget))
    assert budget.spilled_bytes > 2 * table.nbytes  # runs, then longer runs, were written
    assert np.array_equal(_ids(got), _ids(want))
    _check_clean(budget, tmp_path)


def test_expression_key_and_integer_key(table, tmp_path):
    neg = ex.Call(ex.Func.NEG, (k.col(3, T.INT8),), T.INT8)
    node = _sort(table, [plan.SortKey(k.col(0, T.INT4)), plan.SortKey(neg)])
    want = k.run(node)
    budget = _budget(tmp_path)
    got = k.run(node, base.ExecContext(memory=budget))
    assert budget.spilled_bytes > 0
    assert np.array_equal(_ids(got), _ids(want))
    _check_clean(budget, tmp_path)


def test_presorted_input_passes_runs_through(tmp_path):
    t = _table(200_000)
    node = _sort(t, [plan.SortKey(k.col(3, T.INT8), True)])
    budget = _budget(tmp_path)
    got = k.run(node, base.ExecContext(memory=budget))
    assert budget.spilled_bytes > 0
    assert np.array_equal(_ids(got), np.arange(200_000)[::-1])
    _check_clean(budget, tmp_path)


def test_big_budget_does_not_spill(table, tmp_path):
    budget = _budget(tmp_path, 1 << 30)
    node = _sort(table, [plan.SortKey(k.col(1, T.TEXT))])
    got = k.run(node, base.ExecContext(memory=budget))
    assert budget.spilled_bytes == 0 and budget.peak > table.nbytes // 2
    assert got.num_rows == N
    _check_clean(budget, tmp_path)


def test_top_k_does_not_spill(table, tmp_path):
    budget = _budget(tmp_path, 1 << 16)
    keys = [plan.SortKey(k.col(2, T.FLOAT8)), plan.SortKey(k.col(3, T.INT8))]
    got = k.run(_sort(table, keys, limit=100), base.ExecContext(memory=budget))
    want = k.run(_sort(table, keys))
    assert np.array_equal(_ids(got), _ids(want)[:100])
    assert budget.spilled_bytes == 0


def test_early_stop_and_error_close_spill_files(table, tmp_path):
    from segment import executor

    node = _sort(table, [plan.SortKey(k.col(1, T.TEXT))])
    budget = _budget(tmp_path)
    ctx = base.ExecContext(memory=budget)
    it = executor.run(node, ctx)
    next(it)
    assert budget.open_files > 0
    it.close()  # a LIMIT above, or a cancel: the generator is closed
    _check_clean(budget, tmp_path)

    class Boom(Exception):
        pass

    def failing():
        for i, b in enumerate(table.to_batches(max_chunksize=10_000)):
            if i == 20:
                raise Boom()
            yield b

    src = k.source(table, TYPES, 10_000)
    op = _FailingSort(plan.Sort(src, (plan.SortKey(k.col(1, T.TEXT)),), src.fields), failing)
    budget = _budget(tmp_path)
    with pytest.raises(Boom):
        list(op.execute(base.ExecContext(memory=budget)))
    assert budget.spilled_bytes > 0
    _check_clean(budget, tmp_path)


class _FailingSort:
    """A SortOp over a child that fails half way through."""

    def __init__(self, node, batches):
        from segment.operators import sort

        class Child:
            schema = base.schema_of(node.fields)

            def execute(self, ctx):
                return batches()

        self.op = sort.SortOp(node, Child())

    def execute(self, ctx):
        return self.op.execute(ctx)


def test_analyze_reports_peak_and_spilled_bytes(table, tmp_path):
    node = _sort(table, [plan.SortKey(k.col(1, T.TEXT))])
    budget = _budget(tmp_path)
    ctx = base.ExecContext(memory=budget, analyze=True)
    k.run(node, ctx)
    stats = ctx.node_stats[0]
    assert stats.spilled_bytes > 0
    assert 0 < stats.peak_memory <= budget.peak
