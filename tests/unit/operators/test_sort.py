"""sort: multi-key order with per-key direction and NULLS placement (checked against
DuckDB), NaN above every number, top-K equal to a full sort cut to K, edge inputs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import plan
from planner import types as T
from segment.operators import base

TYPES = [T.INT4, T.TEXT, T.FLOAT8, T.INT8]


def _table(n: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    f = rng.normal(0, 10, n).round(1)
    f[rng.random(n) < 0.05] = np.nan
    return pa.table({
        "a": pa.array(rng.integers(0, 5, n).astype(np.int32), mask=rng.random(n) < 0.1),
        "s": pa.array([f"s{x}" if x % 7 else None for x in rng.integers(0, 40, n)]),
        "f": pa.array(f, mask=rng.random(n) < 0.1),
        "id": pa.array(np.arange(n, dtype=np.int64)),
    })


def _sql_key(name: str, desc: bool, nulls_first: bool) -> str:
    return f"{name} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}"


def _ids(table: pa.Table) -> list[int]:
    return table.column("id").to_pylist()


CASES = list(itertools.product([False, True], [False, True]))


@pytest.mark.parametrize("a_dir", CASES, ids=lambda c: f"a{'D' if c[0] else 'A'}{'F' if c[1] else 'L'}")
@pytest.mark.parametrize("f_dir", CASES, ids=lambda c: f"f{'D' if c[0] else 'A'}{'F' if c[1] else 'L'}")
def test_full_sort_matches_duckdb(duck, a_dir, f_dir):
    table = _table(20_000)
    duck.register("t", table)
    keys = (plan.SortKey(k.col(0, T.INT4), *a_dir), plan.SortKey(k.col(1, T.TEXT), True, False),
            plan.SortKey(k.col(2, T.FLOAT8), *f_dir), plan.SortKey(k.col(3, T.INT8)))
    node = plan.Sort(k.source(table, TYPES, 3000), keys, k.source(table, TYPES).fields)
    sql = (f"select id from t order by {_sql_key('a', *a_dir)}, s DESC NULLS LAST, "
           f"{_sql_key('f', *f_dir)}, id")
    want = duck.sql(sql).to_arrow_table().column("id").to_pylist()
    assert _ids(k.run(node)) == want


@pytest.mark.parametrize("limit", [1, 7, 2500, 20_000, 50_000])
def test_top_k_equals_full_sort_cut(limit, monkeypatch):
    monkeypatch.setattr(base, "MIN_BATCH_ROWS", 1000)  # re-select among candidates often
    table = _table(20_000, seed=2)
    keys = (plan.SortKey(k.col(2, T.FLOAT8), True, False), plan.SortKey(k.col(0, T.INT4), False, True),
            plan.SortKey(k.col(3, T.INT8), True, False))
    src = k.source(table, TYPES, 1500)
    full = k.run(plan.Sort(src, keys, src.fields))
    top = k.run(plan.Sort(src, keys, src.fields, limit=limit))
    assert _ids(top) == _ids(full)[:limit]


def test_top_k_holds_bounded_rows(monkeypatch):
    """Candidates never grow past ~2 * max(K, MIN_BATCH_ROWS) + one batch."""
    monkeypatch.setattr(base, "MIN_BATCH_ROWS", 100)
    from segment.operators import sort as sort_mod

    held = []
    original = sort_mod.SortOp._reduce

    def spy(self, rows, keys, kk):
        held.append(sum(r.num_rows for r in rows))
        return original(self, rows, keys, kk)

    monkeypatch.setattr(sort_mod.SortOp, "_reduce", spy)
    table = _table(50_000, seed=3)
    src = k.source(table, TYPES, 500)
    out = k.run(plan.Sort(src, (plan.SortKey(k.col(3, T.INT8), True),), src.fields, limit=10))
    assert _ids(out) == list(range(49_999, 49_989, -1))
    assert held and max(held) <= 2 * 100 + 10 + 10


def test_nan_sorts_above_numbers_with_nulls_either_side():
    t = pa.table({"f": pa.array([1.0, None, math.nan, -1.0, math.inf])})
    src = k.source(t, [T.FLOAT8])

    def order(desc, nulls_first):
        out = k.run(plan.Sort(src, (plan.SortKey(k.col(0, T.FLOAT8), desc, nulls_first),),
                              src.fields)).column(0).to_pylist()
        return ["nan" if v is not None and math.isnan(v) else v for v in out]

    assert order(False, False) == [-1.0, 1.0, math.inf, "nan", None]
    assert order(False, True) == [None, -1.0, 1.0, math.inf, "nan"]
    assert order(True, True) == [None, "nan", math.inf, 1.0, -1.0]
    assert order(True, False) == ["nan", math.inf, 1.0, -1.0, None]


def test_text_sorts_by_bytes():
    t = pa.table({"s": ["b", "B", "a", "é", "Z"]})
    src = k.source(t, [T.TEXT])
    out = k.run(plan.Sort(src, (plan.SortKey(k.col(0, T.TEXT)),), src.fields))
    assert out.column(0).to_pylist() == ["B", "Z", "a", "b", "é"]


def test_sort_key_expression_not_in_output():
    from planner import expr as ex

    t = pa.table({"a": pa.array([1, 2, 3], pa.int64()), "b": pa.array([3, 1, 2], pa.int64())})
    src = k.source(t, [T.INT8, T.INT8])
    key = plan.SortKey(k.call(ex.Func.SUB, k.lit(0, T.INT8), k.col(1, T.INT8), t=T.INT8))
    out = k.run(plan.Sort(src, (key,), src.fields))
    assert out.column(0).to_pylist() == [1, 3, 2]


@pytest.mark.parametrize("limit", [None, 0, 3])
def test_empty_and_one_row(limit):
    empty = k.Source((), plan.fields_of([("a", T.INT4)]))
    keys = (plan.SortKey(k.col(0, T.INT4)),)
    assert k.run(plan.Sort(empty, keys, empty.fields, limit=limit)).num_rows == 0
    one = k.source(pa.table({"a": pa.array([None], pa.int32())}), [T.INT4])
    got = k.run(plan.Sort(one, keys, one.fields, limit=limit)).column(0).to_pylist()
    assert got == ([] if limit == 0 else [None])


def test_output_schema_is_exact():
    t = pa.table({"a": pa.array([2, 1], pa.int32())})
    src = k.source(t, [T.INT4])
    out = k.run(plan.Sort(src, (plan.SortKey(k.col(0, T.INT4)),), plan.fields_of([("x", T.INT4)])))
    assert out.schema == pa.schema([("x", pa.int32())])
    assert out.column(0).to_pylist() == [1, 2]


@pytest.mark.parametrize("kind", ["int4", "date", "timestamp"])
@pytest.mark.parametrize("desc,nulls_first", list(itertools.product([False, True], repeat=2)))
def test_sampled_bound_of_a_big_top_k_keeps_its_rows(kind, desc, nulls_first):
    """A top-K over many rows drops those a sampled bound proves beaten
    (sort_order._candidates): the rows kept are a full sort's first K, ties on the first
    key decided by the second, NULLs where they belong."""
    from planner import expr as ex
    from segment.kernels import sort_order

    n = 200_000
    rng = np.random.default_rng(7)
    first = pa.array(rng.integers(0, 3000, n).astype(np.int32), mask=rng.random(n) < 0.02)
    first = {"int4": first, "date": first.cast(pa.date32()),
             "timestamp": first.cast(pa.int64()).cast(pa.timestamp("us"))}[kind]
    second = pa.array(rng.permutation(n).astype(np.int64))
    keys = [plan.SortKey(ex.ColumnRef(0, T.INT4), desc, nulls_first),
            plan.SortKey(ex.ColumnRef(1, T.INT8))]
    for limit in (1, 10, 250):
        got = sort_order.top_k_indices([first, second], keys, limit).to_pylist()
        full = sort_order.sort_indices([first, second], keys).to_pylist()[:limit]
        assert got == full
    shortcut = sort_order._candidates([first, second], keys, 10)
    if nulls_first:
        assert shortcut is None  # NULLs sort first and there are some: no bound drops rows
    else:
        assert shortcut is not None and len(shortcut) < n // 20


def test_sampled_bound_over_ties_falls_back_to_one_selection():
    """Q33's shape: ORDER BY count DESC LIMIT 10 over a million groups of count 1. The
    sampled bound is 1, which keeps every row: the top-K selects over all of them once
    (it recursed on the same rows until RecursionError)."""
    from planner import expr as ex
    from segment.kernels import sort_order

    n = 1_000_000
    counts = np.ones(n, dtype=np.int64)
    counts[[5, 77_777, 999_999]] = [3, 2, 4]
    ids = pa.array(np.arange(n, dtype=np.int64))
    keys = [plan.SortKey(ex.ColumnRef(0, T.INT8), True), plan.SortKey(ex.ColumnRef(1, T.INT8))]
    got = sort_order.top_k_indices([pa.array(counts), ids], keys, 10).to_pylist()
    assert got == [999_999, 5, 77_777, 0, 1, 2, 3, 4, 6, 7]
