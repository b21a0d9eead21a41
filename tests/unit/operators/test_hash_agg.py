"""hash_agg: SINGLE / PARTIAL / FINAL aggregation against DuckDB over random data, exact
sums and averages, overflow, empty input, DISTINCT, and float keys."""

from __future__ import annotations

import decimal
import random

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import errors
from planner import expr as ex
from planner import plan
from planner import types as T
from segment import executor
from segment.kernels import agg_decimal
from segment.operators import base

A = ex.AggFunc
N152 = T.numeric(15, 2)
WIDE0 = T.numeric(38, 0)
WIDE2 = T.numeric(38, 2)
AVG_T = T.numeric(None, 16)
TYPES = [T.INT4, T.TEXT, T.INT4, T.INT8, T.FLOAT8, N152, T.DATE]


def _random_table(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)

    def with_nulls(values, frac=0.1):
        return pa.array(values, mask=rng.random(n) < frac)

    return pa.table({
        "g": with_nulls(rng.integers(0, 50, n).astype(np.int32), 0.05),
        "s": pa.array([None if x < 0.05 else f"k{x * 20:.0f}" for x in rng.random(n)]),
        "i4": with_nulls(rng.integers(-2**31, 2**31 - 1, n).astype(np.int32)),
        "i8": with_nulls(rng.integers(-2**62, 2**62, n)),
        "f8": with_nulls(rng.normal(0, 1000, n)),
        "n": with_nulls(rng.integers(-10**12, 10**12, n)),  # numeric(15,2) as scaled int64
        "d": with_nulls(rng.integers(0, 20000, n).astype(np.int32)).cast(pa.date32()),
    })


def _duck_view(duck, table: pa.Table) -> None:
    """Register `t` with the scaled numeric as a real decimal, as DuckDB sees it."""
    n = agg_decimal.with_scale(table.column("n").combine_chunks(), 2).cast(pa.decimal128(15, 2))
    duck.register("t", table.set_column(table.schema.get_field_index("n"), "n", n))


def _aggs():
    c = k.col
    return (
        ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
        ex.AggCall(A.COUNT, c(2, T.INT4), False, T.INT8),
        ex.AggCall(A.SUM, c(2, T.INT4), False, T.INT8),
        ex.AggCall(A.SUM, c(3, T.INT8), False, WIDE0),
        ex.AggCall(A.SUM, c(5, N152), False, WIDE2),
        ex.AggCall(A.SUM, c(4, T.FLOAT8), False, T.FLOAT8),
        ex.AggCall(A.MIN, c(1, T.TEXT), False, T.TEXT),
        ex.AggCall(A.MAX, c(6, T.DATE), False, T.DATE),
        ex.AggCall(A.MIN, c(5, N152), False, N152),
        ex.AggCall(A.MAX, c(4, T.FLOAT8), False, T.FLOAT8),
    )


_DUCK_AGGS = ("count(*), count(i4), sum(i4), sum(i8), sum(n), sum(f8), min(s), max(d), "
              "min(n), max(f8)")


def _agg_node(child, keys, aggs, mode=plan.AggMode.SINGLE):
    key_fields = [(f"k{i}", e.type) for i, e in enumerate(keys)]
    agg_fields = [(f"a{i}", a.type) for i, a in enumerate(aggs)]
    return plan.Aggregate(child, tuple(keys), tuple(aggs), mode,
                          plan.fields_of(key_fields + agg_fields))


def _logical(table: pa.Table, node: plan.Node) -> pa.Table:
    """Scaled-int numerics as decimals, so they compare with an oracle's output."""
    cols = [agg_decimal.with_scale(c.combine_chunks(), f.type.scale) if f.type.is_scaled_int
            else c for c, f in zip(table.columns, node.fields)]
    return pa.table(cols, names=table.schema.names)


def _rows(table: pa.Table, nkeys: int) -> list[tuple]:
    rows = [tuple(r.values()) for r in table.to_pylist()]
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r[:nkeys]))


def _norm(v):
    if isinstance(v, decimal.Decimal):
        return v.normalize() if v == v.to_integral() else v
    if isinstance(v, int) and not isinstance(v, bool):
        return decimal.Decimal(v).normalize()
    return v


def _same(ours: list[tuple], theirs: list[tuple]) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        for x, y in zip(a, b):
            if isinstance(x, float) or isinstance(y, float):
                assert x == pytest.approx(y, rel=1e-9, abs=1e-6)
            elif isinstance(x, (int, decimal.Decimal)) and isinstance(y, (int, decimal.Decimal)):
                assert decimal.Decimal(x) == decimal.Decimal(y)
            else:
                assert x == y


@pytest.fixture
def small_batches(monkeypatch):
    """Merge the group table often, so the merge path is exercised on small inputs."""
    monkeypatch.setattr(base, "BATCH_ROWS", 3000)


@pytest.mark.parametrize("keys", [[0], [1], [0, 1], []], ids=["int", "text", "int+text", "scalar"])
def test_single_matches_duckdb(duck, small_batches, keys):
    table = _random_table(100_000)
    _duck_view(duck, table)
    names = ["g", "s"]
    node = _agg_node(k.source(table, TYPES, batch_rows=7000),
                     [k.col(i, TYPES[i]) for i in keys], _aggs())
    ours = _rows(_logical(k.run(node), node), len(keys))
    group = ", ".join(names[i] for i in keys)
    sql = f"select {group + ', ' if keys else ''}{_DUCK_AGGS} from t"
    if keys:
        sql += f" group by {group}"
    theirs = _rows(duck.sql(sql).to_arrow_table(), len(keys))
    _same(ours, theirs)


def test_partial_on_three_splits_then_final_equals_single(small_batches):
    table = _random_table(60_000, seed=3)
    keys = [k.col(0, T.INT4), k.col(1, T.TEXT)]
    aggs = _aggs()
    single = _rows(k.run(_agg_node(k.source(table, TYPES, 5000), keys, aggs)), 2)
    parts = []
    for lo, hi in [(0, 10_000), (10_000, 35_000), (35_000, 60_000)]:
        node = _agg_node(k.source(table.slice(lo, hi - lo), TYPES, 4000), keys, aggs,
                         plan.AggMode.PARTIAL)
        parts.append(k.run(node))
    partial = pa.concat_tables(parts)
    ptypes = [T.INT4, T.TEXT] + [a.type for a in aggs]
    merge = {A.COUNT_STAR: A.SUM, A.COUNT: A.SUM, A.SUM: A.SUM, A.MIN: A.MIN, A.MAX: A.MAX}
    final_aggs = [ex.AggCall(merge[a.func], k.col(2 + i, a.type), False, a.type)
                  for i, a in enumerate(aggs)]
    final = _agg_node(k.source(partial, ptypes, 50), [k.col(0, T.INT4), k.col(1, T.TEXT)],
                      final_aggs, plan.AggMode.FINAL)
    _same(_rows(k.run(final), 2), single)


def test_distinct_after_partial_dedupe_like_distribute():
    """distribute.py's plan for count(DISTINCT x): PARTIAL (g, x) with no aggregates on
    each segment, then a FINAL with the DISTINCT calls over the gathered pairs."""
    rng = random.Random(9)
    t = pa.table({"g": pa.array([rng.randrange(4) for _ in range(3000)], pa.int32()),
                  "x": pa.array([rng.choice([None, 1, 2, 3, 5, 8]) for _ in range(3000)],
                                pa.int32())})
    types = [T.INT4, T.INT4]
    parts = []
    for lo in (0, 1000, 2000):
        dedupe = _agg_node(k.source(t.slice(lo, 1000), types, 300),
                           [k.col(0, T.INT4), k.col(1, T.INT4)], [], plan.AggMode.PARTIAL)
        parts.append(k.run(dedupe))
    aggs = [ex.AggCall(A.COUNT, k.col(1, T.INT4), True, T.INT8),
            ex.AggCall(A.SUM, k.col(1, T.INT4), True, T.INT8),
            ex.AggCall(A.AVG, k.col(1, T.INT4), True, AVG_T)]
    final = _agg_node(k.source(pa.concat_tables(parts), types, 7), [k.col(0, T.INT4)], aggs,
                      plan.AggMode.FINAL)
    single = _agg_node(k.source(t, types, 500), [k.col(0, T.INT4)], aggs)
    assert _rows(k.run(final), 1) == _rows(k.run(single), 1)
    assert _rows(k.run(final), 1)[0][1:3] == (5, 19)  # 1+2+3+5+8


@pytest.mark.parametrize("batch_rows", [1, 2, 3])
def test_sum_int8_is_exact_beyond_int64(batch_rows):
    # 1: int64 states that must widen when merged; 2: a batch that sums in decimal;
    # 3: decimal and int64 states merged together.
    big = 2**62 + 5
    t = pa.table({"g": pa.array([1, 1, 1, 2], pa.int32()),
                  "v": pa.array([big, big, big, -big], pa.int64())})
    node = _agg_node(k.source(t, [T.INT4, T.INT8], batch_rows), [k.col(0, T.INT4)],
                     [ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0)])
    assert _rows(k.run(node), 1) == [(1, decimal.Decimal(3 * big)), (2, decimal.Decimal(-big))]


def test_scaled_numeric_sum_exact_and_wide():
    vals = [10**17 - 1] * 40  # numeric(18,2) near its limit: the sum needs more than int64
    t = pa.table({"v": pa.array(vals, pa.int64())})
    node = _agg_node(k.source(t, [T.numeric(18, 2)], batch_rows=7), [],
                     [ex.AggCall(A.SUM, k.col(0, T.numeric(18, 2)), False, WIDE2)])
    got = k.run(node).column(0).to_pylist()[0]
    assert got == decimal.Decimal(40 * (10**17 - 1)).scaleb(-2)


def test_bigint_result_overflow_raises():
    t = pa.table({"v": pa.array([2**62, 2**62, 1], pa.int64())})
    node = _agg_node(k.source(t, [T.INT8], batch_rows=1), [],
                     [ex.AggCall(A.SUM, k.col(0, T.INT8), False, T.INT8)], plan.AggMode.FINAL)
    with pytest.raises(errors.NumericOutOfRange, match="bigint out of range"):
        k.run(node)


def test_sum_int4_into_int8_never_wraps():
    t = pa.table({"v": pa.array([2**31 - 1] * 10_000, pa.int32())})
    node = _agg_node(k.source(t, [T.INT4], batch_rows=999), [],
                     [ex.AggCall(A.SUM, k.col(0, T.INT4), False, T.INT8)])
    assert k.run(node).column(0).to_pylist() == [(2**31 - 1) * 10_000]


def test_avg_exact_rounding_half_away_from_zero():
    t = pa.table({"g": pa.array([1, 1, 2, 2, 3], pa.int32()),
                  "v": pa.array([1, 2, -1, -2, None], pa.int32()),
                  "n": pa.array([1, 2, -1, -2, None], pa.int64())})
    node = _agg_node(k.source(t, [T.INT4, T.INT4, N152], 2), [k.col(0, T.INT4)], [
        ex.AggCall(A.AVG, k.col(1, T.INT4), False, T.numeric(None, 0)),
        ex.AggCall(A.AVG, k.col(2, N152), False, T.numeric(None, 2)),
        ex.AggCall(A.AVG, k.col(1, T.INT4), False, AVG_T)])
    rows = _rows(k.run(node), 1)
    D = decimal.Decimal
    assert rows == [(1, D(2), D("0.02"), D("1.5000000000000000")),
                    (2, D(-2), D("-0.02"), D("-1.5000000000000000")),
                    (3, None, None, None)]


def test_avg_matches_exact_python(small_batches):
    table = _random_table(20_000, seed=11)
    node = _agg_node(k.source(table, TYPES, 3000), [k.col(0, T.INT4)], [
        ex.AggCall(A.AVG, k.col(2, T.INT4), False, AVG_T),
        ex.AggCall(A.AVG, k.col(3, T.INT8), False, AVG_T),
        ex.AggCall(A.AVG, k.col(5, N152), False, AVG_T),
        ex.AggCall(A.AVG, k.col(4, T.FLOAT8), False, T.FLOAT8)])
    got = {r[0]: r[1:] for r in _rows(k.run(node), 1)}
    groups: dict = {}
    for row in table.to_pylist():
        groups.setdefault(row["g"], []).append(row)

    def exact(values, scale):
        values = [v for v in values if v is not None]
        if not values:
            return None
        num, den = sum(values) * 10**16, len(values) * 10**scale
        q, r = divmod(abs(num), den)
        q += 2 * r >= den
        return decimal.Decimal(f"{q if num >= 0 else -q}e-16")

    for g, rows in groups.items():
        want = (exact([r["i4"] for r in rows], 0), exact([r["i8"] for r in rows], 0),
                exact([r["n"] for r in rows], 2))
        assert got[g][:3] == want
        floats = [r["f8"] for r in rows if r["f8"] is not None]
        assert got[g][3] == pytest.approx(sum(floats) / len(floats))


def test_empty_input_scalar_emits_one_row_and_grouped_none():
    src = k.Source((), plan.fields_of([("v", T.INT4)]))
    aggs = [ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
            ex.AggCall(A.SUM, k.col(0, T.INT4), False, T.INT8),
            ex.AggCall(A.AVG, k.col(0, T.INT4), False, AVG_T),
            ex.AggCall(A.MAX, k.col(0, T.INT4), False, T.INT4),
            ex.AggCall(A.COUNT, k.col(0, T.INT4), True, T.INT8)]
    assert _rows(k.run(_agg_node(src, [], aggs)), 0) == [(0, None, None, None, 0)]
    assert k.run(_agg_node(src, [k.col(0, T.INT4)], aggs)).num_rows == 0
    partial = _agg_node(src, [], aggs[:2], plan.AggMode.PARTIAL)
    assert _rows(k.run(partial), 0) == [(0, None)]


def test_count_star_over_batches_without_columns():
    src = k.Source((base.rows_without_columns(5), base.rows_without_columns(0),
                    base.rows_without_columns(7)), ())
    node = _agg_node(src, [], [ex.AggCall(A.COUNT_STAR, None, False, T.INT8)])
    assert k.run(node).to_pydict() == {"a0": [12]}


def test_one_row_and_all_null_group():
    t = pa.table({"g": pa.array([None], pa.int32()), "v": pa.array([None], pa.int64())})
    node = _agg_node(k.source(t, [T.INT4, T.INT8]), [k.col(0, T.INT4)],
                     [ex.AggCall(A.COUNT, k.col(1, T.INT8), False, T.INT8),
                      ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0),
                      ex.AggCall(A.MIN, k.col(1, T.INT8), False, T.INT8)])
    assert _rows(k.run(node), 1) == [(None, 0, None, None)]


@pytest.mark.parametrize("keys", [[0], []], ids=["grouped", "scalar"])
def test_distinct_matches_duckdb(duck, small_batches, keys):
    rng = random.Random(5)
    n = 30_000
    table = pa.table({"g": pa.array([rng.randrange(20) for _ in range(n)], pa.int32()),
                      "x": pa.array([None if rng.random() < 0.1 else rng.randrange(500)
                                     for _ in range(n)], pa.int32()),
                      "s": pa.array([f"v{rng.randrange(300)}" for _ in range(n)])})
    duck.register("t", table)
    aggs = [ex.AggCall(A.COUNT, k.col(1, T.INT4), True, T.INT8),
            ex.AggCall(A.SUM, k.col(1, T.INT4), True, T.INT8),
            ex.AggCall(A.COUNT, k.col(2, T.TEXT), True, T.INT8),
            ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
            ex.AggCall(A.SUM, k.col(1, T.INT4), False, T.INT8)]
    node = _agg_node(k.source(table, [T.INT4, T.INT4, T.TEXT], 4000),
                     [k.col(i, T.INT4) for i in keys], aggs)
    sel = "count(distinct x), sum(distinct x), count(distinct s), count(*), sum(x)"
    sql = f"select g, {sel} from t group by g" if keys else f"select {sel} from t"
    theirs = _rows(duck.sql(sql).to_arrow_table(), len(keys))
    _same(_rows(k.run(node), len(keys)), theirs)


def test_float_keys_group_negative_zero_with_zero_and_nan_together():
    t = pa.table({"f": pa.array([0.0, -0.0, float("nan"), float("nan"), None, 1.5])})
    node = _agg_node(k.source(t, [T.FLOAT8]), [k.col(0, T.FLOAT8)],
                     [ex.AggCall(A.COUNT_STAR, None, False, T.INT8)])
    counts = sorted(k.run(node).column("a0").to_pylist())
    assert counts == [1, 1, 2, 2]


def test_no_keys_no_aggregates_is_one_row():
    src = k.source(pa.table({"v": pa.array([1, 2, 3], pa.int32())}), [T.INT4])
    batches = list(executor.run(plan.Aggregate(src, (), (), plan.AggMode.SINGLE, ()), k.ctx()))
    assert sum(b.num_rows for b in batches) == 1
