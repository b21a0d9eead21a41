"""hash_join under a tiny memory budget: the grace hash join (both sides partitioned to
disk by key hash, recursively) gives the in-memory result for every join type, with
NULL, string, numeric and composite keys and residuals; NOT IN's NULL rules across
partitions; a key too big for the budget fails with 53200; joins without keys run as
block nested loops; spill files are gone at the end, on an early stop and on that error."""

from __future__ import annotations


import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import opkit as k
import test_hash_join as tj
from planner import errors
from planner import expr as ex
from planner import plan
from planner import types as T
from segment import executor
from segment.operators import base

J = plan.JoinType
N152 = T.numeric(15, 2)
TYPES = [T.INT8, T.TEXT, N152, T.FLOAT8]  # key-ish int, string, numeric, payload


def _side(n: int, seed: int, names: list[str], spread: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ints = rng.integers(0, spread, n)
    return pa.table({
        names[0]: pa.array(ints, mask=rng.random(n) < 0.05),
        names[1]: pa.array([None if x % 29 == 0 else f"key{x}"
                            for x in rng.integers(0, spread, n)]),
        names[2]: pa.array(rng.integers(0, spread, n) * 25, mask=rng.random(n) < 0.05),
        names[3]: pa.array(rng.normal(0, 1, n)),
    })


@pytest.fixture(scope="module")
def sides() -> tuple[pa.Table, pa.Table]:
    return (_side(300_000, 1, ["a", "s", "n", "x"], 150_000),
            _side(200_000, 2, ["b", "t", "m", "y"], 150_000))


_budget = k.budget
_check_clean = k.check_clean


def _canonical(t: pa.Table) -> pa.Table:
    """The rows in one order (all columns as sort keys), for comparing row multisets."""
    t = t.rename_columns([f"c{i}" for i in range(t.num_columns)])  # (names repeat)
    keys = [(n, "ascending", "at_end") for n in t.schema.names]
    return t.take(pc.sort_indices(t, sort_keys=keys))


def _node(left, right, jt, lkeys, rkeys, residual=None):
    fields = left.fields if jt in tj.LEFT_ONLY else left.fields + right.fields
    return plan.HashJoin(left, right, jt, tuple(lkeys), tuple(rkeys), residual, fields)


KEYS = {
    "int": ((0,), (0,)),
    "text": ((1,), (1,)),
    "numeric_int": ((2, 0), (2, 0)),
}


def _residual():  # l.x < r.y + 0.5
    y = ex.Call(ex.Func.ADD, (k.col(4 + 3, T.FLOAT8), k.lit(0.5, T.FLOAT8)), T.FLOAT8)
    return k.call(ex.Func.LT, k.col(3, T.FLOAT8), y)


@pytest.mark.parametrize("jt", list(J), ids=lambda j: j.name)
@pytest.mark.parametrize("keys", list(KEYS))
def test_grace_join_equals_in_memory(sides, tmp_path, jt, keys):
    if jt is J.ANTI_NULL_AWARE and keys == "numeric_int":
        pytest.skip("NOT IN over a composite key checks NULL pairs quadratically (in memory "
                    "too); test_grace_join_against_duckdb covers it on small sides")
    lt, rt = sides
    lkeys, rkeys = KEYS[keys]
    residual = _residual() if keys == "numeric_int" else None
    node = _node(k.source(lt, TYPES, 20_000), k.source(rt, TYPES, 20_000), jt, lkeys, rkeys,
                 residual)
    want = k.run(node)
    budget = _budget(tmp_path)
    ctx = base.ExecContext(memory=budget, analyze=True)
    got = k.run(node, ctx)
    assert budget.spilled_bytes > 0
    assert ctx.node_stats[0].spilled_bytes == budget.spilled_bytes
    assert got.num_rows == want.num_rows
    assert _canonical(got).equals(_canonical(want))
    _check_clean(budget, tmp_path)


@pytest.mark.parametrize("jt", [J.INNER, J.FULL, J.ANTI], ids=lambda j: j.name)
def test_partitions_too_big_are_split_again(sides, tmp_path, jt):
    lt, rt = sides
    node = _node(k.source(lt, TYPES, 20_000), k.source(rt, TYPES, 20_000), jt, (1,), (1,))
    want = k.run(node)
    budget = _budget(tmp_path, 256 << 10)
    ctx = base.ExecContext(memory=budget, analyze=True)
    got = k.run(node, ctx)
    assert ctx.node_stats[0].counters["spill_levels"] >= 2
    assert _canonical(got).equals(_canonical(want))
    _check_clean(budget, tmp_path)


@pytest.mark.parametrize("jt", list(J), ids=lambda j: j.name)
@pytest.mark.parametrize("keys", list(tj.KEYS))
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
def test_grace_join_against_duckdb(duck, tmp_path, jt, keys, residual):
    """The DuckDB oracle of test_hash_join on small sides and a budget of a few KiB:
    duplicate keys, NULLs, NOT IN's row-wise NULL rules and the n x k table, spilled."""
    lt, rt = tj._tables(800, 300)
    lkeys, rkeys, cond = tj.KEYS[keys]
    node = tj._node(k.source(lt, tj.LEFT_TYPES, 97), k.source(rt, tj.RIGHT_TYPES, 41), jt,
                    lkeys, rkeys, tj._residual() if residual else None)
    budget = _budget(tmp_path, 12 << 10)
    got = k.run(node, base.ExecContext(memory=budget))
    duck.register("l", lt)
    duck.register("r", rt)
    assert tj._rows(got) == tj._duck_rows(duck, tj._expected_sql(jt, cond, residual, lkeys,
                                                                 rkeys))
    assert budget.spilled_bytes > 0 or (jt is J.ANTI_NULL_AWARE and not residual)
    _check_clean(budget, tmp_path)


def test_not_in_with_only_probe_nulls(duck, tmp_path):
    """No NULL on the build side: NULL probe keys are rejected (the build is not empty),
    every other probe row is decided by its partition."""
    lt, rt = tj._tables(3000, 1200, seed=8)
    rt = rt.filter(pc.is_valid(rt["b"]))
    node = tj._node(k.source(lt, tj.LEFT_TYPES, 100), k.source(rt, tj.RIGHT_TYPES, 50),
                    J.ANTI_NULL_AWARE, (0,), (0,))
    budget = _budget(tmp_path, 16 << 10)
    got = k.run(node, base.ExecContext(memory=budget))
    duck.register("l", lt)
    duck.register("r", rt)
    assert budget.spilled_bytes > 0
    assert tj._rows(got) == tj._duck_rows(duck, tj._expected_sql(J.ANTI_NULL_AWARE,
                                                                 "", False, (0,), (0,)))
    _check_clean(budget, tmp_path)


def test_one_key_bigger_than_the_budget_fails_53200(tmp_path):
    n = 100_000
    build = pa.table({"b": pa.array(np.full(n, 7, np.int64)), "t": pa.array(["v" * 20] * n),
                      "m": pa.array(np.arange(n)), "y": pa.array(np.zeros(n))})
    probe = build.slice(0, 1000)
    node = _node(k.source(probe, TYPES[:1] + [T.TEXT, T.INT8, T.FLOAT8], 500),
                 k.source(build, TYPES[:1] + [T.TEXT, T.INT8, T.FLOAT8], 10_000),
                 J.INNER, (0,), (0,))
    budget = _budget(tmp_path)
    with pytest.raises(errors.QueryError, match="out of memory") as info:
        k.run(node, base.ExecContext(memory=budget))
    assert info.value.sqlstate == "53200"
    _check_clean(budget, tmp_path)


def test_nested_loop_join_spills_its_build_side(tmp_path):
    lt, rt = tj._tables(60, 2000)
    node = tj._node(k.source(lt, tj.LEFT_TYPES, 50), k.source(rt, tj.RIGHT_TYPES, 100),
                    J.INNER, (), (), tj._residual())
    want = k.run(node)
    budget = _budget(tmp_path, 4 << 10)
    got = k.run(node, base.ExecContext(memory=budget))
    assert budget.spilled_bytes > 0
    assert tj._rows(got) == tj._rows(want)
    _check_clean(budget, tmp_path)


def test_early_stop_closes_spill_files(sides, tmp_path):
    lt, rt = sides
    node = _node(k.source(lt, TYPES, 20_000), k.source(rt, TYPES, 20_000), J.INNER,
                 (0,), (0,))
    budget = _budget(tmp_path)
    it = executor.run(node, base.ExecContext(memory=budget))
    next(it)
    assert budget.open_files > 0
    it.close()
    _check_clean(budget, tmp_path)


@pytest.mark.parametrize("jt", [j for j in J if j is not J.ANTI_NULL_AWARE], ids=lambda j: j.name)
def test_block_nested_loop_equals_in_memory(tmp_path, jt):
    """A join without keys (a nested loop with a residual) whose build side outgrows the
    budget runs in build blocks against the spilled probe side: same rows as in memory,
    several blocks, spill files gone at the end."""
    lt, rt = _side(3_000, 3, ["a", "s", "n", "x"], 500), _side(2_500, 4, ["b", "t", "m", "y"], 500)
    # l.a < r.b - 480 (few matches per row, some rows with none, NULLs never match)
    cond = k.call(ex.Func.LT, k.col(0, T.INT8),
                  ex.Call(ex.Func.SUB, (k.col(4, T.INT8), k.lit(480, T.INT8)), T.INT8))
    node = _node(k.source(lt, TYPES, 700), k.source(rt, TYPES, 300), jt, (), (), cond)
    want = k.run(node)
    budget = _budget(tmp_path, 32 << 10)
    ctx = base.ExecContext(memory=budget, analyze=True)
    got = k.run(node, ctx)
    assert budget.spilled_bytes > 0
    join = ctx.node_stats[0]
    assert join.spilled_bytes > 0 and join.counters["blocks"] >= 3
    assert got.num_rows == want.num_rows
    assert _canonical(got).equals(_canonical(want))
    _check_clean(budget, tmp_path)
