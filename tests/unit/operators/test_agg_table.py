"""agg_table (the numba group table of hash_agg): the same answers as the general Arrow
path (SET jit = off) for every key and aggregate type it covers, NULL keys and values,
many groups (the table grows), exact sums past int64, a PARTIAL stage over budget, and
the hand-overs to the general path (too many hashed groups, a FINAL stage over budget)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from segment import memory
from segment.operators import agg_table
from segment.operators import base

A = ex.AggFunc
N152 = T.numeric(15, 2)
WIDE0 = T.numeric(38, 0)
WIDE2 = T.numeric(38, 2)
AVG_N = T.numeric(None, 16)
TYPES = [T.INT4, T.TEXT, T.INT8, T.FLOAT8, N152, T.DATE, T.BOOL, T.TIMESTAMP, T.INT2]


def _table(n: int, groups: int = 50, seed: int = 5) -> pa.Table:
    rng = np.random.default_rng(seed)

    def nulls(values, frac=0.1):
        return pa.array(values, mask=rng.random(n) < frac)

    return pa.table({
        "g": nulls(rng.integers(0, groups, n).astype(np.int32), 0.05),
        "s": pa.array([None if x % 17 == 0 else f"s{x}" for x in rng.integers(0, groups, n)]),
        "i8": nulls(rng.integers(-2**62, 2**62, n)),
        "f8": nulls(np.where(rng.random(n) < 0.05, -0.0, rng.integers(-5, 5, n) * 0.5)),
        "n": nulls(rng.integers(-10**12, 10**12, n)),
        "d": nulls(rng.integers(0, 20, n).astype(np.int32)).cast(pa.date32()),
        "b": nulls(rng.random(n) < 0.5),
        "ts": nulls(rng.integers(0, 10**12, n)).cast(pa.timestamp("us")),
        "i2": nulls(rng.integers(-100, 100, n).astype(np.int16)),
    })


def _aggs():
    c = k.col
    return (
        ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
        ex.AggCall(A.COUNT, c(1, T.TEXT), False, T.INT8),
        ex.AggCall(A.SUM, c(0, T.INT4), False, T.INT8),
        ex.AggCall(A.SUM, c(2, T.INT8), False, WIDE0),
        ex.AggCall(A.SUM, c(4, N152), False, WIDE2),
        ex.AggCall(A.SUM, c(3, T.FLOAT8), False, T.FLOAT8),
        ex.AggCall(A.AVG, c(8, T.INT2), False, AVG_N),
        ex.AggCall(A.AVG, c(4, N152), False, AVG_N),
        ex.AggCall(A.AVG, c(3, T.FLOAT8), False, T.FLOAT8),
        ex.AggCall(A.MIN, c(5, T.DATE), False, T.DATE),
        ex.AggCall(A.MAX, c(7, T.TIMESTAMP), False, T.TIMESTAMP),
        ex.AggCall(A.MIN, c(4, N152), False, N152),
        ex.AggCall(A.MAX, c(2, T.INT8), False, T.INT8),
    )


def _node(child, keys, aggs, mode=plan.AggMode.SINGLE):
    fields = [(f"k{i}", e.type) for i, e in enumerate(keys)] + \
        [(f"a{i}", a.type) for i, a in enumerate(aggs)]
    return plan.Aggregate(child, tuple(keys), tuple(aggs), mode, plan.fields_of(fields))


def _rows(table: pa.Table) -> list[tuple]:
    rows = [tuple(r.values()) for r in table.to_pylist()]
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def _both(node, budget_bytes: int | None = None):
    """(table path rows, general path rows, the table path's counters)."""
    out = []
    for jit in (True, False):
        mem = memory.MemoryBudget(budget_bytes) if budget_bytes else memory.MemoryBudget()
        ctx = base.ExecContext(jit=jit, memory=mem, analyze=True)
        out.append(_rows(k.run(node, ctx)))
        if jit:
            counters = next((s.counters for s in ctx.node_stats.values()
                             if s.name == "Aggregate"), {})
    return out[0], out[1], counters


KEYS = {"int": [0], "float": [3], "date+bool": [5, 6], "ts+i2": [7, 8],
        "numeric": [4], "int+float+bool": [0, 3, 6]}


@pytest.mark.parametrize("keys", list(KEYS.values()), ids=list(KEYS))
def test_same_answers_as_general_path(keys):
    table = _table(30_000, groups=40)
    node = _node(k.source(table, TYPES, batch_rows=4000),
                 [k.col(i, TYPES[i]) for i in keys], _aggs())
    assert agg_table.covers(node, [s for s in _specs(node)])
    ours, general, counters = _both(node)
    assert counters.get("table_batches") == 8
    assert ours == general


def _specs(node):
    from segment.operators.agg_state import AggSpec
    return [AggSpec(a, node.mode) for a in node.aggs]


def test_many_groups_grow_the_table():
    table = _table(50_000, groups=40_000, seed=11)
    node = _node(k.source(table, TYPES, batch_rows=10_000),
                 [k.col(0, T.INT4), k.col(3, T.FLOAT8)], _aggs())
    ours, general, _ = _both(node)
    assert len(ours) > 30_000
    assert ours == general


def test_exact_sums_past_int64_become_numeric():
    big = 2**62
    t = pa.table({"g": pa.array([1, 1, 1, 2, 2], pa.int32()),
                  "x": pa.array([big, big, big, -big, -big], pa.int64())})
    node = _node(k.source(t, [T.INT4, T.INT8], batch_rows=2), [k.col(0, T.INT4)],
                 (ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0),
                  ex.AggCall(A.AVG, k.col(1, T.INT8), False, AVG_N)))
    ours, general, _ = _both(node)
    assert ours == general
    assert int(ours[0][1]) == 3 * big and int(ours[1][1]) == -2 * big


def test_null_and_nan_and_negative_zero_keys():
    t = pa.table({"f": pa.array([0.0, -0.0, float("nan"), float("nan"), None, None, 1.5]),
                  "x": pa.array([1, 2, 3, 4, 5, None, 7], pa.int64())})
    node = _node(k.source(t, [T.FLOAT8, T.INT8], batch_rows=3), [k.col(0, T.FLOAT8)],
                 (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
                  ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0)))
    ours, general, _ = _both(node)
    assert len(ours) == 4  # 0.0, NaN, NULL, 1.5
    assert [r[1:] for r in ours] == [r[1:] for r in general]


def test_all_null_values_give_null_sums_and_zero_counts():
    t = pa.table({"g": pa.array([1, 1, 2], pa.int32()), "x": pa.array([None, None, 3], pa.int64())})
    node = _node(k.source(t, [T.INT4, T.INT8]), [k.col(0, T.INT4)],
                 (ex.AggCall(A.COUNT, k.col(1, T.INT8), False, T.INT8),
                  ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0),
                  ex.AggCall(A.MIN, k.col(1, T.INT8), False, T.INT8)))
    ours, general, _ = _both(node)
    assert ours == general
    assert ours[0][1:] == (0, None, None)


def test_partial_over_budget_emits_and_final_merges():
    table = _table(40_000, groups=30_000, seed=2)
    keys = [k.col(0, T.INT4)]
    aggs = (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
            ex.AggCall(A.SUM, k.col(2, T.INT8), False, WIDE0))
    node = _node(k.source(table, TYPES, batch_rows=2000), keys, aggs, plan.AggMode.PARTIAL)
    ctx = base.ExecContext(memory=memory.MemoryBudget(256 << 10), analyze=True)
    partial = k.run(node, ctx)
    final = _node(k.source(partial, [T.INT4, T.INT8, WIDE0], batch_rows=5000), keys,
                  (ex.AggCall(A.SUM, k.col(1, T.INT8), False, T.INT8),
                   ex.AggCall(A.SUM, k.col(2, WIDE0), False, WIDE0)), plan.AggMode.FINAL)
    single = _node(k.source(table, TYPES), keys, aggs)
    assert _rows(k.run(final)) == _rows(k.run(single, base.ExecContext(jit=False)))


def test_final_over_budget_spills():
    table = _table(60_000, groups=50_000, seed=8)
    node = _node(k.source(table, TYPES, batch_rows=5000), [k.col(2, T.INT8)],
                 (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
                  ex.AggCall(A.MAX, k.col(0, T.INT4), False, T.INT4)))
    ours, general, counters = _both(node, budget_bytes=512 << 10)
    assert counters.get("spill_levels", 0) >= 1
    assert ours == general


def _dictionary_batches(table: pa.Table, rows: int, column: int = 1) -> list:
    """The table in batches of `rows`, its string column dictionary-encoded per batch
    (each batch its own dictionary, in its own order, as scans give them)."""
    out = []
    for b in table.combine_chunks().to_batches(max_chunksize=rows):
        cols = list(b.columns)
        cols[column] = pa.compute.dictionary_encode(cols[column])
        out.append(pa.RecordBatch.from_arrays(cols, names=b.schema.names))
    return out


@pytest.mark.parametrize("keys", [[1], [1, 0], [6, 1, 5]], ids=["text", "text+int",
                                                                   "bool+text+date"])
def test_string_keys_of_small_dictionaries_take_the_table(keys):
    """Dictionary-encoded string keys (NULLs among them) are numbered across batches
    whose dictionaries differ; the answers equal the general path's."""
    table = _table(6000, groups=40, seed=21)
    node = _node(k.source(_dictionary_batches(table, 700), TYPES),
                 [k.col(i, TYPES[i]) for i in keys], _aggs())
    assert agg_table.covers(node, _specs(node))
    ours, general, counters = _both(node)
    assert ours == general
    assert counters["table_batches"] == 9  # every batch through the table


def test_plain_strings_or_a_big_dictionary_hand_over(monkeypatch):
    """A batch of plain strings, or of a dictionary bigger than SMALL_DICTIONARY, hands
    the table (with the batches before it) to the general path: same answers."""
    table = _table(6000, groups=300, seed=22)
    batches = _dictionary_batches(table, 1000)
    batches[3] = table.combine_chunks().to_batches(max_chunksize=1000)[3]  # plain strings
    node = _node(k.source(batches, TYPES), [k.col(1, T.TEXT)], _aggs())
    ours, general, counters = _both(node)
    assert ours == general
    assert counters["table_batches"] == 3
    monkeypatch.setattr(agg_table, "SMALL_DICTIONARY", 100)  # ~300 values a batch: too many
    node = _node(k.source(_dictionary_batches(table, 1000), TYPES), [k.col(1, T.TEXT)],
                 _aggs())
    ours, general, counters = _both(node)
    assert ours == general
    assert counters["table_batches"] == 0


def test_not_covered_falls_back():
    table = _table(1000)
    node = _node(k.source(table, TYPES), [k.col(0, T.INT4)],
                 (ex.AggCall(A.MIN, k.col(1, T.TEXT), False, T.TEXT),))
    assert not agg_table.covers(node, _specs(node))
    ours, general, _ = _both(node)
    assert ours == general


def test_direct_map_widens_then_switches_to_hashing(monkeypatch):
    """One integer key is looked up by value while its range is small; a batch that widens
    the range past DIRECT_MAX moves the groups found so far into the hash table."""
    monkeypatch.setattr(agg_table, "DIRECT_MAX", 5000)
    rng = np.random.default_rng(3)
    parts = [rng.integers(0, 1000, 3000), rng.integers(-2000, 1500, 3000),
             rng.integers(0, 10**9, 3000), rng.integers(0, 1000, 3000)]
    g = pa.array(np.concatenate(parts), mask=rng.random(12_000) < 0.05)
    t = pa.table({"g": g, "x": pa.array(rng.integers(0, 100, 12_000))})
    node = _node(k.source(t, [T.INT8, T.INT8], batch_rows=3000), [k.col(0, T.INT8)],
                 (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
                  ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0)))
    ours, general, _ = _both(node)
    assert ours == general


def test_hashed_groups_past_the_cap_keep_the_table_in_a_single_stage(monkeypatch):
    """HASH_GROUPS_MAX bounds only a PARTIAL stage's hashed table; a SINGLE (or FINAL)
    stage's table grows as long as its budget allows, every batch through it."""
    monkeypatch.setattr(agg_table, "HASH_GROUPS_MAX", 1024)
    rng = np.random.default_rng(12)
    g = pa.array(rng.integers(0, 10**15, 20_000) // 7 * 7)  # spread: no direct map
    t = pa.table({"g": g, "x": pa.array(rng.integers(-50, 50, 20_000))})
    node = _node(k.source(t, [T.INT8, T.INT8], batch_rows=700), [k.col(0, T.INT8)],
                 (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
                  ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0)))
    ours, general, counters = _both(node)
    assert counters["table_batches"] == 29
    assert "spill_levels" not in counters
    assert ours == general


def _spread(n: int, groups: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, groups, n)
    return pa.table({"g": pa.array(ids * 2654435761 % (1 << 61), mask=ids % 97 == 0),
                     "h": pa.array((ids % 1000).astype(np.int32)),
                     "x": pa.array(rng.integers(-50, 50, n), mask=rng.random(n) < 0.1),
                     "f": pa.array(rng.integers(-8, 8, n) * 0.25),  # sums exact in any order
                     "s": pa.array([f"v{i % 300}" for i in ids])})


SPREAD = [T.INT8, T.INT4, T.INT8, T.FLOAT8, T.TEXT]
SPREAD_AGGS = (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
               ex.AggCall(A.SUM, k.col(2, T.INT8), False, WIDE0),
               ex.AggCall(A.COUNT, k.col(2, T.INT8), False, T.INT8),
               ex.AggCall(A.AVG, k.col(3, T.FLOAT8), False, T.FLOAT8),
               ex.AggCall(A.MIN, k.col(2, T.INT8), False, T.INT8))


@pytest.mark.parametrize("mode", [plan.AggMode.SINGLE, plan.AggMode.FINAL])
def test_full_table_sets_rows_of_new_groups_aside_in_partitions(mode, tmp_path):
    """Over its budget a SINGLE or FINAL stage's table takes no more groups: rows of the
    groups it holds still accumulate, the others go to hash partitions on disk, each
    aggregated the same way afterwards (a level down when it is still too big). Same
    answers as the general path; nothing left held or on disk."""
    table = _spread(60_000, 40_000, seed=31)
    node = _node(k.source(table, SPREAD, batch_rows=4000), [k.col(0, T.INT8), k.col(1, T.INT4)],
                 SPREAD_AGGS, mode)
    budget = k.budget(tmp_path, 100 << 10)
    ctx = base.ExecContext(memory=budget, analyze=True)
    ours = _rows(k.run(node, ctx))
    counters = next(s.counters for s in ctx.node_stats.values() if s.name == "Aggregate")
    assert counters["spill_levels"] >= 2  # the first partitions were too big as well
    assert counters["table_batches"] > 15  # the partitions went through tables too
    assert budget.spilled_bytes > 0
    k.check_clean(budget, tmp_path)
    assert ours == _rows(k.run(node, base.ExecContext(jit=False)))


def test_a_hand_over_after_rows_were_set_aside_takes_them_along(tmp_path):
    """A table that set rows aside and then meets what it does not hold (a batch of plain
    strings) hands the general path its states, the batch and every row set aside."""
    table = _spread(30_000, 20_000, seed=32)
    batches = _dictionary_batches(table, 3000, column=4)
    batches[-2] = table.combine_chunks().to_batches(max_chunksize=3000)[-2]  # plain strings
    node = _node(k.source(batches, SPREAD), [k.col(4, T.TEXT), k.col(0, T.INT8)], SPREAD_AGGS)
    budget = k.budget(tmp_path, 256 << 10)
    ctx = base.ExecContext(memory=budget, analyze=True)
    ours = _rows(k.run(node, ctx))
    counters = next(s.counters for s in ctx.node_stats.values() if s.name == "Aggregate")
    assert counters["spill_levels"] == 1 and counters["table_batches"] == 8
    k.check_clean(budget, tmp_path)
    assert ours == _rows(k.run(node, base.ExecContext(jit=False)))


def test_a_partial_stage_whose_groups_do_not_repeat_emits_rows_as_states(monkeypatch):
    """Once a PARTIAL stage sees its groups hardly repeat, later batches go out as one
    state row per input row, without a table; the FINAL stage's answer is unchanged."""
    from segment.operators import hash_agg

    monkeypatch.setattr(hash_agg, "SKIP_PROBE_ROWS", 5000)
    table = _spread(40_000, 1 << 40, seed=33)
    keys = [k.col(0, T.INT8), k.col(1, T.INT4)]
    aggs = (SPREAD_AGGS[0], SPREAD_AGGS[1], SPREAD_AGGS[2],
            ex.AggCall(A.SUM, k.col(3, T.FLOAT8), False, T.FLOAT8), SPREAD_AGGS[4])
    node = _node(k.source(table, SPREAD, batch_rows=2000), keys, aggs, plan.AggMode.PARTIAL)
    ctx = base.ExecContext(analyze=True)
    partial = k.run(node, ctx)
    counters = next(s.counters for s in ctx.node_stats.values() if s.name == "Aggregate")
    assert counters["raw_batches"] == 16
    final = _node(k.source(partial, [T.INT8, T.INT4, T.INT8, WIDE0, T.INT8, T.FLOAT8, T.INT8],
                           batch_rows=5000), keys,
                  (ex.AggCall(A.SUM, k.col(2, T.INT8), False, T.INT8),
                   ex.AggCall(A.SUM, k.col(3, WIDE0), False, WIDE0),
                   ex.AggCall(A.SUM, k.col(4, T.INT8), False, T.INT8),
                   ex.AggCall(A.SUM, k.col(5, T.FLOAT8), False, T.FLOAT8),
                   ex.AggCall(A.MIN, k.col(6, T.INT8), False, T.INT8)), plan.AggMode.FINAL)
    single = _node(k.source(table, SPREAD), keys, aggs)
    assert _rows(k.run(final)) == _rows(k.run(single, base.ExecContext(jit=False)))


def test_null_inside_a_dictionary_is_a_null_key():
    """A NULL among a dictionary's values (not only a NULL index) groups as NULL."""
    strings = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 1, None, 0], pa.int32()),
                                             pa.array(["a", None, "b"]))
    batch = pa.RecordBatch.from_arrays([strings, pa.array([1, 2, 3, 4, 5, 6])],
                                       names=["s", "x"])
    node = _node(k.source([batch], [T.TEXT, T.INT8]), [k.col(0, T.TEXT)],
                 (ex.AggCall(A.COUNT_STAR, None, False, T.INT8),
                  ex.AggCall(A.SUM, k.col(1, T.INT8), False, WIDE0)))
    ours, general, counters = _both(node)
    assert ours == general == [("a", 2, 7), ("b", 1, 3), (None, 3, 11)]
    assert counters["table_batches"] == 1


def test_decimal128_sums_take_the_table_while_their_values_fit_int64():
    n304 = T.numeric(30, 4)
    total = T.numeric(38, 4)

    def node_over(values, mode=plan.AggMode.SINGLE):
        t = pa.table({"g": pa.array([1, 2, 1, 2, 1], pa.int32()),
                      "x": pa.array(values, pa.decimal128(38, 4))})
        return _node(k.source(t, [T.INT4, n304], batch_rows=2), [k.col(0, T.INT4)],
                     (ex.AggCall(A.SUM, k.col(1, n304), False, total),
                      ex.AggCall(A.AVG, k.col(1, n304), False, AVG_N)), mode)

    import decimal as d
    fits = [d.Decimal("1.2345"), d.Decimal("-3"), None, d.Decimal("922337203685477.5807"),
            d.Decimal("0.0001")]
    node = node_over(fits)
    assert agg_table.covers(node, _specs(node))
    ours, general, counters = _both(node)
    assert ours == general and counters.get("table_batches") == 3
    # partial states as the general path's (a FINAL stage merges both kinds)
    ours, general, _ = _both(node_over(fits, plan.AggMode.PARTIAL))
    assert ours == general
    # a value past int64 hands the table over; the answers stay the general path's
    wide = fits[:3] + [d.Decimal("1e20"), d.Decimal("-1e20")]
    ours, general, _ = _both(node_over(wide))
    assert ours == general


def _product_sums(values, batch_rows):
    n304, total = T.numeric(30, 4), T.numeric(38, 4)
    t = pa.table({"g": pa.array([i % 3 for i in range(len(values))], pa.int32()),
                  "n": pa.array(values, pa.int64())})
    prod = ex.Call(ex.Func.MUL, (k.col(1, N152), k.col(1, N152)), n304)
    return _node(k.source(t, [T.INT4, N152], batch_rows=batch_rows), [k.col(0, T.INT4)],
                 (ex.AggCall(A.SUM, prod, False, total), ex.AggCall(A.COUNT, prod, False, T.INT8),
                  ex.AggCall(A.MAX, k.col(1, N152), False, N152),
                  ex.AggCall(A.AVG, k.col(1, N152), False, AVG_N),
                  ex.AggCall(A.COUNT_STAR, None, False, T.INT8)))


def test_arguments_computed_and_accumulated_in_one_compiled_loop():
    rng = np.random.default_rng(3)
    values = [None if x % 11 == 0 else int(x) for x in rng.integers(-10**6, 10**6, 5000)]
    ours, general, counters = _both(_product_sums(values, 1000))
    assert ours == general
    assert counters.get("jit_batches") == 5 and counters.get("table_batches") == 5


def test_a_row_the_loop_leaves_is_added_the_general_way():
    # 10**10 squared passes int64 in the loop: that row and the rest of its batch go the
    # general way (here: a decimal128 past int64, so the table hands over with them)
    values = [7, -3, None, 10**10, 5, 2, 9, -1]
    ours, general, counters = _both(_product_sums(values, 4))
    assert ours == general
    assert counters.get("jit_fallbacks") == 1


def test_an_overflow_in_the_loop_raises_as_the_general_path_does():
    from planner import errors
    t = pa.table({"g": pa.array([1, 2, 1], pa.int32()), "x": pa.array([1, 2**62, 3], pa.int64())})
    double = ex.Call(ex.Func.MUL, (k.col(1, T.INT8), ex.Literal(2, T.INT8)), T.INT8)
    node = _node(k.source(t, [T.INT4, T.INT8]), [k.col(0, T.INT4)],
                 (ex.AggCall(A.SUM, double, False, WIDE0),))
    for jit in (True, False):
        ctx = base.ExecContext(jit=jit, memory=memory.MemoryBudget(), jit_above_rows=0)
        with pytest.raises(errors.QueryError) as e:
            k.run(node, ctx)
        assert e.value.sqlstate == "22003"
