"""Fixtures for every rule of planner/rules/: an input plan, the plan the rule must give,
and the rule applied to its own output changes nothing (each rule is idempotent). Plans
are built by hand from plan nodes, so a fixture fails on the rule alone, not the binder.
test_sum_of_constant.py has more cases of that rule, test_stats_scan.py of stats_aggregate
against real chunks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner import expr as ex
from planner import locus as lc
from planner import plan as pl
from planner import rules
from planner import types as T
from planner import window as wn
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef

TABLE = TableDef(1, "t", (ColumnDef("a", T.INT8), ColumnDef("b", T.INT4),
                          ColumnDef("c", T.TEXT)), DistPolicy(DistKind.HASHED, (0,)))
FIELDS = pl.fields_of([("a", T.INT8), ("b", T.INT4), ("c", T.TEXT)])
SCAN = pl.Scan(TABLE, (0, 1, 2), FIELDS)
A, B, C = (ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(FIELDS))


def lit(v, t=T.INT4):
    return ex.Literal(v, t)


def cmp(func, left, right):
    return ex.Call(func, (left, right), T.BOOL)


def scan(cols=(0, 1, 2), filter=None, locus=None):
    return pl.Scan(TABLE, cols, tuple(FIELDS[i] for i in cols), filter, locus=locus)


B_GT_1 = cmp(ex.Func.GT, B, lit(1))
A_LT_9 = cmp(ex.Func.LT, A, lit(9, T.INT8))


# --- pushdown_filters: WHERE predicates into the Scan below --------------------------------
def _pushdown_fixtures():
    yield "filter_into_scan", pl.Filter(SCAN, B_GT_1, FIELDS), scan(filter=B_GT_1)
    both = ex.Call(ex.Func.AND, (A_LT_9, B_GT_1), T.BOOL)
    yield ("two_filters_and_together",
           pl.Filter(pl.Filter(SCAN, A_LT_9, FIELDS), B_GT_1, FIELDS), scan(filter=both))
    proj = pl.Project(SCAN, (A,), FIELDS[:1])
    yield ("through_a_project_of_columns", pl.Filter(proj, A_LT_9, FIELDS[:1]),
           pl.Project(scan(filter=A_LT_9), (A,), FIELDS[:1]))
    plus = pl.Project(SCAN, (cmp(ex.Func.ADD, A, lit(1, T.INT8)),), FIELDS[:1])
    yield ("above_a_computed_column_stays", pl.Filter(plus, A_LT_9, FIELDS[:1]),
           pl.Filter(plus, A_LT_9, FIELDS[:1]))
    j = pl.HashJoin(pl.Filter(SCAN, B_GT_1, FIELDS), SCAN, pl.JoinType.INNER, (0,), (0,),
                    None, FIELDS + FIELDS)
    yield ("into_both_sides_of_a_join", j, replace(j, left=scan(filter=B_GT_1)))
    on_right = cmp(ex.Func.GT, ex.ColumnRef(4, T.INT4, "b"), lit(1))
    left_join = replace(j, left=SCAN, join_type=pl.JoinType.LEFT)
    yield ("a_where_on_the_nullable_side_stays_above_a_left_join",
           pl.Filter(left_join, on_right, left_join.fields),
           pl.Filter(left_join, on_right, left_join.fields))
    inner = replace(j, left=SCAN)
    yield ("a_where_on_one_side_goes_into_it", pl.Filter(inner, on_right, inner.fields),
           replace(inner, right=scan(filter=B_GT_1)))
    # UNION ALL of branches tagged with constants: the WHERE on the tag keeps one branch.
    tag = pl.Field("tag", T.TEXT)

    def branch(name):
        return pl.Project(SCAN, (A, ex.Literal(name, T.TEXT)), (FIELDS[0], tag))
    union = pl.Append((branch("s"), branch("w")), (FIELDS[0], tag))
    want_w = cmp(ex.Func.EQ, ex.ColumnRef(1, T.TEXT, "tag"), ex.Literal("w", T.TEXT))
    yield ("only_the_append_inputs_the_filter_can_pass", pl.Filter(union, want_w, union.fields),
           branch("w"))
    nothing = cmp(ex.Func.EQ, ex.ColumnRef(1, T.TEXT, "tag"), ex.Literal("x", T.TEXT))
    yield ("an_append_no_input_passes_is_empty", pl.Filter(union, nothing, union.fields),
           pl.Values((), union.fields))
    # Group keys: below the aggregate; an aggregate's value: above it.
    count = ex.AggCall(ex.AggFunc.COUNT, None, False, T.INT8)
    agg_fields = (FIELDS[1], pl.Field("count", T.INT8))
    agg = pl.Aggregate(SCAN, (B,), (count,), pl.AggMode.SINGLE, agg_fields)
    having = cmp(ex.Func.GT, ex.ColumnRef(1, T.INT8, "count"), lit(1, T.INT8))
    yield ("a_group_key_condition_goes_below_the_aggregate",
           pl.Filter(agg, cmp(ex.Func.GT, ex.ColumnRef(0, T.INT4, "b"), lit(1)), agg_fields),
           replace(agg, child=scan(filter=B_GT_1)))
    yield ("an_aggregate_value_condition_stays", pl.Filter(agg, having, agg_fields),
           pl.Filter(agg, having, agg_fields))
    # WHERE false: no groups, but an ungrouped aggregate still makes its one row.
    never = ex.Literal(False, T.BOOL)
    yield ("no_groups_from_no_rows", replace(agg, child=pl.Filter(SCAN, never, FIELDS)),
           pl.Values((), agg_fields))
    total = pl.Aggregate(pl.Filter(SCAN, never, FIELDS), (), (count,), pl.AggMode.SINGLE,
                         agg_fields[1:])
    yield ("one_row_of_an_ungrouped_aggregate_of_no_rows", total,
           replace(total, child=pl.Values((), FIELDS)))
    # Grouping sets: b is NULL in the rows of the set without it; the filter stays above.
    expand = pl.Expand(SCAN, ((A, B), (A, ex.Literal(None, T.INT4))), FIELDS[:2])
    rollup = replace(agg, child=expand)
    on_b = cmp(ex.Func.GT, ex.ColumnRef(0, T.INT4, "b"), lit(1))
    yield ("a_grouping_set_key_condition_stays", pl.Filter(rollup, on_b, agg_fields),
           pl.Filter(rollup, on_b, agg_fields))


# --- sum_of_constant: sum(x + c) as sum(x) + c * count(x) ----------------------------------
def _sum_of_constant_fixtures():
    small = ex.ColumnRef(0, T.INT2, "s")
    table = TableDef(2, "s", (ColumnDef("s", T.INT2),), DistPolicy(DistKind.RANDOM))
    s_scan = pl.Scan(table, (0,), pl.fields_of([("s", T.INT2)]))
    wide = ex.Cast(small, T.INT4)
    call = ex.AggCall(ex.AggFunc.SUM, ex.Call(ex.Func.ADD, (wide, lit(3)), T.INT4), False,
                      T.INT8)
    agg = pl.Aggregate(s_scan, (), (call,), pl.AggMode.SINGLE, (pl.Field("sum", T.INT8),))
    out = rules.sum_of_constant(agg)
    # The expected shape: one sum and one count of s, and sum + 3 * count above them.
    assert isinstance(out, pl.Project) and [a.func for a in out.child.aggs] == [
        ex.AggFunc.SUM, ex.AggFunc.COUNT]
    yield "sum_plus_constant", agg, out
    plain = pl.Aggregate(s_scan, (), (ex.AggCall(ex.AggFunc.SUM, small, False, T.INT8),),
                         pl.AggMode.SINGLE, (pl.Field("sum", T.INT8),))
    yield "plain_sum_unchanged", plain, plain


# --- window_top_n: rn <= n above row_number() marks the WindowAgg ---------------------------
def _window_top_n_fixtures():
    rn = wn.WindowCall(wn.WindowFunc.ROW_NUMBER, None, T.INT8)
    w_fields = FIELDS + (pl.Field("rn", T.INT8),)
    w = pl.WindowAgg(SCAN, (1,), (pl.SortKey(A),), (rn,), w_fields)
    refs = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(w_fields))
    proj = pl.Project(w, refs, w_fields)
    rn_ref = refs[3]
    top3 = pl.Filter(proj, cmp(ex.Func.LE, rn_ref, lit(3, T.INT8)), w_fields)
    yield ("rank_at_most_n_keeps_n", top3,
           replace(top3, child=replace(proj, child=replace(w, keep=(0, 3)))))
    other = pl.Filter(proj, cmp(ex.Func.GT, rn_ref, lit(3, T.INT8)), w_fields)
    yield "rank_above_n_unchanged", other, other
    summed = wn.WindowCall(wn.WindowFunc.SUM, 1, T.INT8)
    not_rank = pl.Filter(replace(proj, child=replace(w, calls=(summed,))),
                         cmp(ex.Func.LE, rn_ref, lit(3, T.INT8)), w_fields)
    yield "not_a_ranking_unchanged", not_rank, not_rank


# --- prune_columns: a Scan reads only what is used above it ---------------------------------
def _prune_columns_fixtures():
    proj = pl.Project(SCAN, (C,), FIELDS[2:])
    c0 = ex.ColumnRef(0, T.TEXT, "c")
    yield "project_one_column", proj, pl.Project(scan((2,)), (c0,), FIELDS[2:])
    filt = pl.Project(pl.Filter(SCAN, B_GT_1, FIELDS), (C,), FIELDS[2:])
    b0 = ex.ColumnRef(0, T.INT4, "b")
    kept = (FIELDS[1], FIELDS[2])
    yield ("filter_columns_kept", filt,
           pl.Project(pl.Filter(scan((1, 2)), cmp(ex.Func.GT, b0, lit(1)), kept),
                      (ex.ColumnRef(1, T.TEXT, "c"),), FIELDS[2:]))
    count = pl.Aggregate(SCAN, (), (ex.AggCall(ex.AggFunc.COUNT_STAR, None, False, T.INT8),),
                         pl.AggMode.SINGLE, (pl.Field("count", T.INT8),))
    yield "count_star_reads_one_column", count, replace(count, child=scan((0,)))
    # a semi join's build side: a, filtered on b; only a is held in the hash table
    semi = pl.HashJoin(scan((0, 2)), scan(filter=B_GT_1), pl.JoinType.SEMI, (0,), (0,), None,
                       (FIELDS[0], FIELDS[2]))
    a0 = ex.ColumnRef(0, T.INT8, "a")
    build = pl.Project(scan((0, 1), filter=cmp(ex.Func.GT, ex.ColumnRef(1, T.INT4, "b"),
                                                lit(1))), (a0,), (FIELDS[0],))
    yield "build_side_drops_filter_columns", semi, replace(semi, right=build)
    # the probe side too (it may cross a Motion): a and c kept, b only filtered on
    inner_fields = (FIELDS[0], FIELDS[2], FIELDS[0])
    inner = pl.HashJoin(scan((0, 1, 2), filter=B_GT_1), scan((0,)), pl.JoinType.INNER,
                        (0,), (0,), None, FIELDS + (FIELDS[0],))
    top = pl.Project(inner, (ex.ColumnRef(0, T.INT8, "a"), C, ex.ColumnRef(3, T.INT8, "a")),
                     inner_fields)
    probe = pl.Project(scan((0, 1, 2), filter=B_GT_1), (a0, ex.ColumnRef(2, T.TEXT, "c")),
                       (FIELDS[0], FIELDS[2]))
    pruned = replace(inner, left=probe, fields=(FIELDS[0], FIELDS[2], FIELDS[0]))
    yield ("probe_side_drops_filter_columns", top,
           pl.Project(pruned, (a0, ex.ColumnRef(1, T.TEXT, "c"), ex.ColumnRef(2, T.INT8, "a")),
                      inner_fields))


# --- stats_aggregate (after distribute): a PARTIAL count/min/max from chunk statistics ------
def _stats_aggregate_fixtures():
    hashed = lc.hashed((0,), 2)
    s = scan((0, 1), locus=hashed)
    calls = (ex.AggCall(ex.AggFunc.COUNT_STAR, None, False, T.INT8),
             ex.AggCall(ex.AggFunc.MAX, ex.ColumnRef(1, T.INT4, "b"), False, T.INT4))
    out_fields = (pl.Field("count(*)", T.INT8), pl.Field("max(b)", T.INT4))
    partial = pl.Aggregate(s, (), calls, pl.AggMode.PARTIAL, out_fields, locus=lc.STREWN)
    stats = ((pl.ChunkStat.ROWS, None), (pl.ChunkStat.MAX, 1))
    st_fields = (pl.Field("rows", T.INT8), pl.Field("max(b)", T.INT4))
    expected = pl.Aggregate(
        pl.StatsScan(TABLE, stats, st_fields, locus=lc.STREWN), (),
        (ex.AggCall(ex.AggFunc.SUM, ex.ColumnRef(0, T.INT8, "rows"), False, T.INT8),
         ex.AggCall(ex.AggFunc.MAX, ex.ColumnRef(1, T.INT4, "max(b)"), False, T.INT4)),
        pl.AggMode.PARTIAL, out_fields, locus=lc.STREWN)
    gather = pl.Motion(partial, pl.MotionKind.GATHER, out_fields, slice_id=1, locus=lc.ENTRY)
    yield "partial_under_a_gather", gather, replace(gather, child=expected)
    filtered = replace(partial, child=replace(s, filter=B_GT_1))
    yield "filtered_scan_unchanged", filtered, filtered
    single = replace(partial, mode=pl.AggMode.SINGLE)
    yield "single_stage_unchanged", single, single


# --- late_fetch: a top-K over a scan sorts narrow rows and fetches the rest -------------
def _late_fetch_fixtures():
    from planner.schema import ROW_ID, SYSTEM_COLUMNS

    hashed = lc.hashed((0,), 2)
    proj = pl.Project(scan(locus=hashed), (A, B, C), FIELDS, locus=hashed)
    top = pl.Sort(proj, (pl.SortKey(B, True),), FIELDS, 10, locus=hashed)
    row = pl.Field(SYSTEM_COLUMNS[ROW_ID].name, T.INT8)
    b0, row1 = ex.ColumnRef(0, T.INT4, "b"), ex.ColumnRef(1, T.INT8, row.name)
    narrow_scan = pl.Scan(TABLE, (1, ROW_ID), (FIELDS[1], row), None,
                          locus=lc.STREWN)
    narrow = pl.Project(narrow_scan, (b0, row1), (FIELDS[1], row), locus=lc.STREWN)
    sorted_ = pl.Sort(narrow, (pl.SortKey(b0, True), pl.SortKey(row1)), narrow.fields, 10,
                      locus=lc.STREWN)
    fetch = pl.Fetch(sorted_, TABLE, 1, (0, 2), narrow.fields + (FIELDS[0], FIELDS[2]),
                     locus=lc.STREWN)
    expected = pl.Project(fetch, (ex.ColumnRef(2, T.INT8, "a"), ex.ColumnRef(0, T.INT4, "b"),
                                  ex.ColumnRef(3, T.TEXT, "c")), FIELDS, locus=hashed)
    gm = pl.Motion(top, pl.MotionKind.GATHER_MERGE, FIELDS, slice_id=1, sort_keys=top.keys,
                   locus=lc.ENTRY)
    yield "top_k_under_a_gather_merge", gm, replace(gm, child=expected)
    # The filter's column is read early; a is the hash key, kept as the narrow locus.
    filtered = replace(top, child=replace(proj, child=scan(filter=A_LT_9, locus=hashed)))
    f_scan = pl.Scan(TABLE, (0, 1, ROW_ID), (FIELDS[0], FIELDS[1], row), A_LT_9,
                     locus=hashed)
    a0, b1, row2 = A, ex.ColumnRef(1, T.INT4, "b"), ex.ColumnRef(2, T.INT8, row.name)
    f_narrow = pl.Project(f_scan, (a0, b1, row2), (FIELDS[0], FIELDS[1], row), locus=hashed)
    f_sorted = pl.Sort(f_narrow, (pl.SortKey(b1, True), pl.SortKey(row2)), f_narrow.fields,
                       10, locus=hashed)
    f_fetch = pl.Fetch(f_sorted, TABLE, 2, (2,), f_narrow.fields + (FIELDS[2],), locus=hashed)
    yield "filter_columns_early", filtered, pl.Project(
        f_fetch, (A, b1, ex.ColumnRef(3, T.TEXT, "c")), FIELDS, locus=hashed)
    narrow_late = replace(top, child=pl.Project(scan((0, 1), locus=hashed), (A, B),
                                                FIELDS[:2], locus=hashed), fields=FIELDS[:2])
    yield "late_columns_narrower_than_a_row_id_unchanged", narrow_late, narrow_late
    every = replace(top, keys=(pl.SortKey(A), pl.SortKey(B), pl.SortKey(C)))
    yield "every_column_a_key_unchanged", every, every
    full = replace(top, limit=None)
    yield "full_sort_unchanged", full, full
    big = replace(top, limit=10_000_000)
    yield "big_limit_unchanged", big, big
    on_coordinator = replace(top, child=replace(proj, child=scan(locus=lc.ENTRY)))
    yield "off_the_segments_unchanged", on_coordinator, on_coordinator
    rnd = ex.Call(ex.Func.RANDOM, (), T.FLOAT8)
    volatile = replace(top, child=replace(proj, exprs=(A, B, rnd)))
    yield "volatile_projection_unchanged", volatile, volatile


# --- build_side: the small side is hashed (LEFT becomes RIGHT; SEMI/ANTI build left) -------
def _build_side_fixtures():
    from planner.schema import TableStats
    small_t = replace(TABLE, stats=TableStats(100))
    big_t = replace(TABLE, id=2, name="u", stats=TableStats(100_000))
    small = pl.Scan(small_t, (0, 1), FIELDS[:2])
    big = pl.Scan(big_t, (0, 2), (FIELDS[0], FIELDS[2]))
    fields = small.fields + big.fields
    # residual over (small.a, small.b, big.a, big.c): small.b > 1 AND big.c IS NOT NULL
    residual = ex.Call(ex.Func.AND, (cmp(ex.Func.GT, ex.ColumnRef(1, T.INT4, "b"), lit(1)),
                                     ex.IsNull(ex.ColumnRef(3, T.TEXT, "c"), True)), T.BOOL)
    left = pl.HashJoin(small, big, pl.JoinType.LEFT, (0,), (0,), residual, fields)
    swapped_residual = ex.Call(ex.Func.AND, (
        cmp(ex.Func.GT, ex.ColumnRef(3, T.INT4, "b"), lit(1)),
        ex.IsNull(ex.ColumnRef(1, T.TEXT, "c"), True)), T.BOOL)
    right = pl.HashJoin(big, small, pl.JoinType.RIGHT, (0,), (0,), swapped_residual,
                        big.fields + small.fields)
    order = pl.Project(right, (ex.ColumnRef(2, T.INT8, "a"), ex.ColumnRef(3, T.INT4, "b"),
                               ex.ColumnRef(0, T.INT8, "a"), ex.ColumnRef(1, T.TEXT, "c")),
                       fields)
    yield "small_left_swapped", left, order
    yield "big_left_unchanged", replace(left, left=big, right=small,
                                        fields=big.fields + small.fields, residual=None), \
        replace(left, left=big, right=small, fields=big.fields + small.fields, residual=None)
    inner = replace(left, join_type=pl.JoinType.INNER)
    yield "inner_unchanged", inner, inner
    semi = pl.HashJoin(small, big, pl.JoinType.SEMI, (0,), (0,), residual, small.fields)
    yield "small_left_semi_builds_left", semi, replace(semi, build_left=True)
    anti = replace(semi, join_type=pl.JoinType.ANTI, residual=None)
    yield "small_left_anti_builds_left", anti, replace(anti, build_left=True)
    big_semi = pl.HashJoin(big, small, pl.JoinType.SEMI, (0,), (0,), None, big.fields)
    yield "big_left_semi_unchanged", big_semi, big_semi
    not_in = replace(semi, join_type=pl.JoinType.ANTI_NULL_AWARE, residual=None)
    yield "not_in_unchanged", not_in, not_in


# --- semi_join_pushdown: a semi join moves to the relation its keys come from -----------------
def _semi_join_pushdown_fixtures():
    a = scan((0, 1))                       # a, b
    b = pl.Scan(replace(TABLE, id=2, name="u"), (0, 2), (FIELDS[0], FIELDS[2]))  # a, c
    s = pl.Scan(replace(TABLE, id=3, name="s"), (1,), (FIELDS[1],))              # b
    ab = pl.HashJoin(a, b, pl.JoinType.INNER, (0,), (0,), None, a.fields + b.fields)
    proj = pl.Project(ab, (ex.ColumnRef(3, T.TEXT, "c"), ex.ColumnRef(1, T.INT4, "b")),
                      (FIELDS[2], FIELDS[1]))
    # (SELECT c, b FROM a JOIN u) WHERE b IN (SELECT b FROM s) AND c <> 'x' ... on a.b
    residual = cmp(ex.Func.NE, ex.ColumnRef(2, T.INT4, "b"), ex.ColumnRef(1, T.INT4, "b"))
    semi = pl.HashJoin(proj, s, pl.JoinType.SEMI, (1,), (0,), residual, proj.fields)
    pushed = pl.HashJoin(a, s, pl.JoinType.SEMI, (1,), (0,),
                         cmp(ex.Func.NE, ex.ColumnRef(2, T.INT4, "b"),
                             ex.ColumnRef(1, T.INT4, "b")), a.fields)
    expected = replace(proj, child=replace(ab, left=pushed))
    yield "through_project_and_join", semi, expected
    both = pl.HashJoin(ab, s, pl.JoinType.ANTI, (1,), (0,),
                       cmp(ex.Func.NE, ex.ColumnRef(3, T.TEXT, "c"), lit("x", T.TEXT)),
                       ab.fields)
    yield "reads_both_sides_unchanged", both, both
    on_b = pl.HashJoin(ab, s, pl.JoinType.ANTI, (2,), (0,), None, ab.fields)
    yield "onto_the_right_side", on_b, replace(
        ab, right=pl.HashJoin(b, s, pl.JoinType.ANTI, (0,), (0,), None, b.fields))


# --- join_filter_into_aggregate: a join on group keys filters the aggregate's input too ---
def _join_filter_into_aggregate_fixtures():
    from planner.schema import ColumnStats, TableStats
    sales = pl.Scan(replace(TABLE, stats=TableStats(
        1_000_000, {"b": ColumnStats(0.0, 1000.0, None, None)})), (0, 1), FIELDS[:2])
    count = ex.AggCall(ex.AggFunc.COUNT, None, False, T.INT8)
    agg_fields = (FIELDS[1], pl.Field("count", T.INT8))
    agg = pl.Aggregate(sales, (B,), (count,), pl.AggMode.SINGLE, agg_fields)
    weeks_t = replace(TABLE, id=2, name="w", stats=TableStats(
        5_000, {"b": ColumnStats(0.0, 5000.0, 0, 5000)}))
    weeks = pl.Scan(weeks_t, (1,), (FIELDS[1],),
                    cmp(ex.Func.LT, ex.ColumnRef(0, T.INT4, "b"), lit(10)))
    fields = agg_fields + weeks.fields
    join = pl.HashJoin(agg, weeks, pl.JoinType.INNER, (0,), (0,), None, fields)
    probe = pl.Project(weeks, (ex.ColumnRef(0, T.INT4, "b"),), weeks.fields)
    semi = pl.HashJoin(sales, probe, pl.JoinType.SEMI, (1,), (0,), None, sales.fields)
    yield "semi_join_below_the_aggregate", join, replace(join, left=replace(agg, child=semi))
    flipped = pl.HashJoin(weeks, agg, pl.JoinType.INNER, (0,), (0,), None,
                          weeks.fields + agg_fields)
    yield "aggregate_on_the_right", flipped, replace(
        flipped, right=replace(agg, child=semi))
    on_count = pl.HashJoin(agg, replace(weeks, fields=(pl.Field("n", T.INT8),)),
                           pl.JoinType.INNER, (1,), (0,), None, fields)
    yield "not_a_group_key_unchanged", on_count, on_count
    unfiltered = replace(join, right=replace(weeks, filter=None, table=replace(
        weeks_t, stats=TableStats(5_000_000, {}))))
    yield "a_big_relation_unchanged", unfiltered, unfiltered
    left = replace(join, join_type=pl.JoinType.LEFT)
    yield "aggregate_on_the_preserved_side_unchanged", left, left
    right = replace(join, join_type=pl.JoinType.RIGHT)
    yield "aggregate_on_the_nullable_side", right, replace(
        right, left=replace(agg, child=semi))
    # The join's keys come from a join of the big sales with the small weeks: the weeks'
    # keys, a superset of the join's, filter the aggregate (TPC-H Q17's subquery).
    sales_weeks = pl.HashJoin(sales, weeks, pl.JoinType.INNER, (1,), (0,), None,
                              sales.fields + weeks.fields)
    outer = pl.Project(sales_weeks, (ex.ColumnRef(2, T.INT4, "b"),), weeks.fields)
    through = pl.HashJoin(outer, agg, pl.JoinType.LEFT, (0,), (0,), None,
                          outer.fields + agg_fields)
    yield "keys_traced_through_a_join", through, replace(
        through, right=replace(agg, child=semi))
    # The key is the big side's own column, matched on the weeks' keys: those filter.
    sales_key = replace(through, left=replace(outer, exprs=(ex.ColumnRef(1, T.INT4, "b"),)))
    yield "keys_across_a_join_equality", sales_key, replace(
        sales_key, right=replace(agg, child=semi))
    computed = replace(through, left=pl.Project(
        sales_weeks, (cmp(ex.Func.ADD, ex.ColumnRef(2, T.INT4, "b"), lit(1)),),
        weeks.fields))
    yield "computed_key_unchanged", computed, computed


FIXTURES = {
    rules.join_filter_into_aggregate: _join_filter_into_aggregate_fixtures,
    rules.semi_join_pushdown: _semi_join_pushdown_fixtures,
    rules.build_side: _build_side_fixtures,
    rules.pushdown_filters: _pushdown_fixtures,
    rules.sum_of_constant: _sum_of_constant_fixtures,
    rules.window_top_n: _window_top_n_fixtures,
    rules.prune_columns: _prune_columns_fixtures,
    rules.stats_aggregate: _stats_aggregate_fixtures,
    rules.late_fetch: _late_fetch_fixtures,
}


def _cases():
    for rule, fixtures in FIXTURES.items():
        for name, given, expected in fixtures():
            yield pytest.param(rule, given, expected, id=f"{rule.__name__}-{name}")


@pytest.mark.parametrize(("rule", "given", "expected"), list(_cases()))
def test_rule_gives_the_expected_plan_and_is_idempotent(rule, given, expected):
    out = rule(given)
    assert out == expected
    assert rule(out) == out


def test_every_rule_has_fixtures():
    assert set(FIXTURES) == set(rules.RULES) | set(rules.DISTRIBUTED_RULES)
