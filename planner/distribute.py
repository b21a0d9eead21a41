"""Give every plan node a locus and insert Motions: the only place Motions are added.

Rules (DESIGN.md, "Loci and motions"):
- A Scan's locus is its table's distribution; constants and small generate_series are
  GENERAL; a large generate_series is split across segments (STREWN).
- An Aggregate runs in one stage where its input is already hashed on a subset of the
  group keys; otherwise a PARTIAL stage runs on each segment, a Motion brings the states
  together and a FINAL stage merges them. DISTINCT aggregates de-duplicate (group, arg)
  on the segments first.
- ORDER BY sorts (or keeps the top K) on each segment and a Gather Merge keeps the order;
  LIMIT is applied on each segment (limit + offset rows) and again after the Gather.
- The result ends on the coordinator (ENTRY): a final Gather when rows are on segments.
"""

from __future__ import annotations

from dataclasses import replace

from planner import expr as ex
from planner import estimate, functions, rules, types
from planner import locus as lc
from planner import plan as pl
from planner.locus import LocusKind
from planner.schema import DistKind
from planner.typing_rules import agg_result_type

# A generate_series with more rows than this runs as one part per segment.
PARALLEL_SERIES_MIN_ROWS = 1_000_000
# Partial aggregates estimated at no more rows than this are gathered to the coordinator
# for the final stage; more are redistributed by group key and finished on the segments.
GATHER_GROUPS_MAX = 10_000
# count(DISTINCT x) GROUP BY g moves its de-duplicated (g, x) by g alone from this many
# estimated groups on (`_dedupe_then_aggregate`).
SPREAD_GROUPS_MIN = 1_000


def distribute(node: pl.Node, n_segments: int = 2) -> pl.Node:
    """Return the plan with loci set and Motions inserted; its root's locus is ENTRY or
    GENERAL. The rewrites that need loci (rules.DISTRIBUTED_RULES) run on the result."""
    out = _dist(node, n_segments)
    if out.locus.on_segments:
        out = ensure_entry(out)
    return _number_slices(rules.rewrite_distributed(out))


def distribute_insert(source: pl.Node, table, n_segments: int = 2) -> pl.Node | None:
    """Plan INSERT INTO table <source> as writes on the segments: the source's rows move
    to the segments the table's distribution says (Redistribute by its key, Broadcast for
    a replicated table, nothing for a random one), each segment writes its rows, and a
    Gather brings the counts. None when the source ends on the coordinator anyway."""
    d = _dist(source, n_segments)
    if not d.locus.on_segments:
        return None
    kind = table.policy.kind
    width = table.segment_count(n_segments)
    if kind is DistKind.HASHED:
        d = redistribute(d, tuple(table.policy.keys), width)
    elif kind is DistKind.REPLICATED:
        # One copy of the rows goes to each of the table's segments (a replicated source
        # sends from one).
        d = pl.Motion(d, pl.MotionKind.BROADCAST, d.fields, locus=lc.REPLICATED,
                      buckets=0 if width == n_segments else width)
    elif d.locus.kind is LocusKind.REPLICATED:
        return None  # random target from a replicated source: spread from the coordinator
    # Every segment writes the rows that reached it.
    ins = pl.Insert(d, table, (pl.Field("rows", types.INT8),), locus=lc.STREWN)
    return _number_slices(rules.rewrite_distributed(ensure_entry(ins)))


def place(node: pl.Node, n_segments: int) -> pl.Node:
    """`node` with loci set and the Motions its own operators need; what goes above it is
    the caller's (DELETE and UPDATE, planner/modify.py), which then calls `finish`."""
    return _dist(node, n_segments)


def finish(root: pl.Node) -> pl.Node:
    """A placed plan made whole: a Gather to the coordinator if it ends on the segments,
    the rewrites that need loci, and its slices numbered."""
    return _number_slices(rules.rewrite_distributed(ensure_entry(root)))


def ensure_entry(node: pl.Node) -> pl.Node:
    """`node` unchanged when it is already on the coordinator; else add one Gather."""
    if not node.locus.on_segments:
        return node
    return pl.Motion(node, pl.MotionKind.GATHER, node.fields, locus=lc.ENTRY)


def _dist(node: pl.Node, n: int) -> pl.Node:
    """`node` placed on a cluster of `n` segments (the count prices Broadcasts)."""
    if isinstance(node, pl.Scan):
        return replace(node, locus=_scan_locus(node, n))
    if isinstance(node, pl.Values):  # a system relation's rows are the coordinator's
        at_entry = node.system or any(ex.calls_sequence(e) for row in node.rows for e in row)
        return replace(node, locus=lc.ENTRY if at_entry else lc.GENERAL)
    if isinstance(node, pl.Materialized):  # every process has its rows
        return replace(node, locus=lc.GENERAL)
    if isinstance(node, pl.GenerateSeries):
        count = max(0, (node.stop - node.start) // node.step + 1)
        big = count > PARALLEL_SERIES_MIN_ROWS
        return replace(node, locus=lc.STREWN if big else lc.GENERAL)
    if isinstance(node, pl.TableFunction):
        return replace(node, locus=lc.STREWN)  # each segment makes its part
    if isinstance(node, (pl.Filter, pl.ProjectSet, pl.Project)) and _volatile(node):
        # random() over rows every segment has (constants, a replicated table) must be
        # drawn once per row, not once per segment: on one copy, at the coordinator.
        # Sequence functions always run there: the counters are the coordinator's.
        child = _dist(node.child, n)
        if child.locus.kind in (LocusKind.GENERAL, LocusKind.REPLICATED) \
                or _calls_sequence(node):
            return replace(node, child=ensure_entry(child), locus=lc.ENTRY)
        node = replace(node, child=child)
        return replace(node, locus=_through_keys(child.locus, node.exprs)
                       if isinstance(node, pl.Project) else child.locus)
    if isinstance(node, (pl.Filter, pl.ProjectSet)):  # rows stay where they are
        child = _dist(node.child, n)
        return replace(node, child=child, locus=child.locus)
    if isinstance(node, pl.Expand):
        # Rows stay where they are, but a hashed key may be NULL in some of the sets.
        child = _dist(node.child, n)
        return replace(node, child=child,
                       locus=lc.STREWN if child.locus.is_partitioned else child.locus)
    if isinstance(node, pl.Project):
        child = _dist(node.child, n)
        return replace(node, child=child, locus=_through_keys(child.locus, node.exprs))
    if isinstance(node, pl.Aggregate):
        return _aggregate(replace(node, child=_dist(node.child, n)), n)
    if isinstance(node, pl.Sort):
        return _sort(replace(node, child=_dist(node.child, n)))
    if isinstance(node, pl.WindowAgg):
        return _window(replace(node, child=_dist(node.child, n)), n)
    if isinstance(node, pl.Limit):
        return _limit(node, n)
    if isinstance(node, pl.HashJoin):
        return _join(replace(node, left=_dist(node.left, n), right=_dist(node.right, n)), n)
    if isinstance(node, pl.Append):
        inputs = tuple(_dist(c, n) for c in node.inputs)
        if all(c.locus.is_partitioned for c in inputs):
            return replace(node, inputs=inputs, locus=lc.STREWN)
        if all(c.locus.kind is LocusKind.GENERAL for c in inputs):
            return replace(node, inputs=inputs, locus=lc.GENERAL)
        # Constants or one copy of replicated rows must not be repeated per segment.
        return replace(node, inputs=tuple(ensure_entry(c) for c in inputs), locus=lc.ENTRY)
    raise TypeError(f"distribute: unexpected node {type(node).__name__}")


def _calls_sequence(node: pl.Node) -> bool:
    exprs = (node.predicate,) if isinstance(node, pl.Filter) else (
        node.arrays if isinstance(node, pl.ProjectSet) else node.exprs)
    return any(ex.calls_sequence(e) for e in exprs)


def _volatile(node: pl.Node) -> bool:
    """Whether a Filter, ProjectSet or Project computes random()."""
    exprs = (node.predicate,) if isinstance(node, pl.Filter) else (
        node.arrays if isinstance(node, pl.ProjectSet) else node.exprs)
    return any(ex.is_volatile(e) for e in exprs)


def _scan_locus(scan: pl.Scan, n: int) -> lc.Locus:
    policy = scan.table.policy
    width = scan.table.segment_count(n)
    if policy.kind is DistKind.REPLICATED:
        # A copy on every segment; a table an expansion has not copied to the new
        # segments yet is read from one copy (segment 0 always has one), as a table on
        # one segment. The rows a DELETE or UPDATE finds stay on each copy.
        if width < n and not any(c < 0 for c in scan.columns):  # system columns
            return lc.SINGLE_QE
        return lc.REPLICATED
    if policy.kind is DistKind.RANDOM:
        return lc.STREWN
    pos = {col: i for i, col in enumerate(scan.columns)}
    if all(k in pos for k in policy.keys):
        return lc.hashed(tuple(pos[k] for k in policy.keys), width)
    return lc.STREWN


# --- aggregation -----------------------------------------------------------------------
def _aggregate(agg: pl.Aggregate, n: int) -> pl.Node:
    child = agg.child
    if any(a.func is ex.AggFunc.ARRAY_AGG for a in agg.aggs):
        return _in_one_stage(agg, n)
    if not child.locus.on_segments or child.locus.kind in (LocusKind.SINGLE_QE,):
        return replace(agg, locus=child.locus)
    if child.locus.kind is LocusKind.REPLICATED:
        # Any one copy has all the rows: aggregate there.
        return replace(agg, child=_gather(child), locus=lc.ENTRY)
    out_locus = _through_keys(child.locus, agg.keys)
    if out_locus.kind is LocusKind.HASHED:
        return replace(agg, locus=out_locus)
    distinct = [a for a in agg.aggs if a.distinct]
    if not distinct:
        return _two_phase(agg, n)
    if len({a.arg for a in agg.aggs}) == 1 and all(a.distinct for a in agg.aggs):
        return _dedupe_then_aggregate(agg, n)
    # Several DISTINCT arguments, or DISTINCT beside plain aggregates: all rows of a
    # group must meet, so move rows by the group keys (or gather when there are none).
    if agg.keys and all(isinstance(k, ex.ColumnRef) for k in agg.keys):
        keys = tuple(k.index for k in agg.keys)
        moved = redistribute(child, keys, n)
        return replace(agg, child=moved, locus=_through_keys(moved.locus, agg.keys))
    return replace(agg, child=_gather(child), locus=lc.ENTRY)


def _in_one_stage(agg: pl.Aggregate, n: int) -> pl.Node:
    """An Aggregate with array_agg: one stage where all rows of a group meet (moved by
    the group keys, or gathered), over its input sorted by array_agg's ORDER BY on each
    process; array_agg collects in input order, and a group's rows all come from one
    sorted stream. (Greenplum does not split ordered aggregates either.)"""
    child = agg.child
    locus = child.locus
    if child.locus.on_segments and child.locus.kind is not LocusKind.SINGLE_QE:
        in_place = _through_keys(child.locus, agg.keys)
        if in_place.kind is LocusKind.HASHED:
            locus = in_place
        elif agg.keys and child.locus.kind is not LocusKind.REPLICATED and all(
                isinstance(k, ex.ColumnRef) for k in agg.keys):
            child = redistribute(child, tuple(k.index for k in agg.keys), n)
            locus = _through_keys(child.locus, agg.keys)
        else:
            child = _gather(child)
            locus = lc.ENTRY
    order = next((a.order for a in agg.aggs if a.order), ())
    if order:
        child = pl.Sort(child, tuple(pl.SortKey(e, desc, nf) for e, desc, nf in order),
                        child.fields, locus=child.locus)
    return replace(agg, child=child, locus=locus)


def _two_phase(agg: pl.Aggregate, n: int) -> pl.Node:
    nk = len(agg.keys)
    partial_aggs: list[ex.AggCall] = []
    final_aggs: list[ex.AggCall] = []
    finishers: list[ex.Expr] = []  # one per original aggregate, over the FINAL output

    def state(call: ex.AggCall, merge: ex.AggFunc, final_type: types.SqlType) -> ex.ColumnRef:
        partial_aggs.append(call)
        ref = ex.ColumnRef(nk + len(partial_aggs) - 1, call.type, call.sql())
        final_aggs.append(ex.AggCall(merge, ref, False, final_type))
        return ex.ColumnRef(nk + len(final_aggs) - 1, final_type, call.sql())

    for a in agg.aggs:
        if a.func in (ex.AggFunc.COUNT, ex.AggFunc.COUNT_STAR):
            finishers.append(state(a, ex.AggFunc.SUM, types.INT8))
        elif a.func in (ex.AggFunc.SUM, ex.AggFunc.MIN, ex.AggFunc.MAX):
            finishers.append(state(a, a.func, a.type))
        else:  # AVG = sum / count, exact for numerics
            sum_type = agg_result_type(ex.AggFunc.SUM, a.arg.type)
            s = state(ex.AggCall(ex.AggFunc.SUM, a.arg, False, sum_type), ex.AggFunc.SUM, sum_type)
            c = state(ex.AggCall(ex.AggFunc.COUNT, a.arg, False, types.INT8), ex.AggFunc.SUM,
                      types.INT8)
            divisor = functions.bind_call(ex.Func.NULLIF, [c, ex.Literal(0, types.INT8)])
            # Divide the exact sum first: casting a large sum to the avg's scale first
            # would overflow 38 digits before the division brings it back down.
            numer = s if s.type.is_numeric or s.type.is_float else functions.bind_cast(
                s, types.numeric(None, 0))
            finishers.append(functions.bind_cast(
                functions.bind_call(ex.Func.DIV, [numer, divisor]), a.type))

    key_fields = agg.fields[:nk]
    partial_fields = key_fields + tuple(pl.Field(c.sql(), c.type) for c in partial_aggs)
    partial = pl.Aggregate(agg.child, agg.keys, tuple(partial_aggs), pl.AggMode.PARTIAL,
                           partial_fields, locus=_through_keys(agg.child.locus, agg.keys))
    final_keys = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(key_fields))
    final_fields = key_fields + tuple(pl.Field(f"{c.func.value}({c.arg.name})", c.type)
                                      for c in final_aggs)
    moved, out_locus = _combine_partials(partial, nk, n)
    final = pl.Aggregate(moved, final_keys, tuple(final_aggs), pl.AggMode.FINAL,
                         final_fields, locus=out_locus)
    exprs = final_keys + tuple(finishers)
    if all(isinstance(e, ex.ColumnRef) and e.index == i for i, e in enumerate(exprs)) \
            and len(exprs) == len(final_fields):
        return replace(final, fields=agg.fields)
    return pl.Project(final, exprs, agg.fields, locus=out_locus)


def _combine_partials(partial: pl.Aggregate, nk: int, n: int) -> tuple[pl.Node, lc.Locus]:
    """Bring the partial states of each group together: Redistribute by the group keys so
    the final stage runs on every segment, or Gather them when groups are few."""
    if nk == 0 or estimate.rows(partial) <= GATHER_GROUPS_MAX:
        return _gather(partial), lc.ENTRY
    keys = tuple(range(nk))
    moved = redistribute(partial, keys, n)
    return moved, lc.hashed(keys, moved.locus.segments)


def redistribute(node: pl.Node, keys: tuple[int, ...], segments: int) -> pl.Node:
    """`node` unchanged when already hashed on `keys` over `segments` segments; else a
    Redistribute Motion hashing them over the first `segments` segments."""
    if keys in node.locus.key_sets() and node.locus.segments == segments:
        return node
    return pl.Motion(node, pl.MotionKind.REDISTRIBUTE, node.fields, hash_keys=keys,
                     locus=lc.hashed(keys, segments))


def _dedupe_then_aggregate(agg: pl.Aggregate, n: int) -> pl.Node:
    """count(DISTINCT x) and friends: drop duplicate (keys, x) on each segment first."""
    nk = len(agg.keys)
    arg = agg.aggs[0].arg
    keys = agg.keys + (arg,)
    fields = agg.fields[:nk] + (pl.Field(ex.show(arg), arg.type),)
    local = _through_keys(agg.child.locus, keys)
    refs = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields))
    aggs = tuple(replace(a, arg=refs[nk], distinct=False) for a in agg.aggs)
    if local.kind is LocusKind.HASHED:
        # The input is hashed on some of (group, argument) already (count(DISTINCT
        # UserID) over a table distributed by UserID): every copy of a pair is on one
        # segment, so one de-duplication there is complete, and the aggregates over its
        # rows take two phases as any (Greenplum plans it so): no rows move but the
        # partial states. (ClickBench Q9: 1.6M pairs moved and de-duplicated again.)
        distinct_rows = pl.Aggregate(agg.child, keys, (), pl.AggMode.SINGLE, fields,
                                     locus=local)
        return _aggregate(pl.Aggregate(distinct_rows, refs[:nk], aggs, pl.AggMode.SINGLE,
                                       agg.fields), n)
    dedupe = pl.Aggregate(agg.child, keys, (), pl.AggMode.PARTIAL, fields, locus=local)
    # Redistribute so that every copy of a (group, argument) pair meets on one segment,
    # where a second de-duplication makes the rows distinct; the aggregates then need no
    # DISTINCT. Moved by the group keys alone when the groups are many (they spread over
    # the segments): each group is then whole on its segment and aggregates there, with
    # no second Motion. Else by (group, argument), and the counts combine in two phases.
    groups = pl.Aggregate(agg.child, agg.keys, (), pl.AggMode.SINGLE, agg.fields[:nk])
    spread = nk > 0 and estimate.rows(groups) >= SPREAD_GROUPS_MIN
    by = tuple(range(nk if spread else nk + 1))
    moved = redistribute(dedupe, by, n)
    distinct_rows = pl.Aggregate(moved, refs, (), pl.AggMode.SINGLE, fields,
                                 locus=moved.locus)
    return _aggregate(pl.Aggregate(distinct_rows, refs[:nk], aggs, pl.AggMode.SINGLE,
                                   agg.fields), n)


# --- window functions -------------------------------------------------------------------
def _window(w: pl.WindowAgg, n: int) -> pl.Node:
    """Every partition's rows must meet in one process: none moves when the input is
    hashed on a subset of the PARTITION BY columns; else Redistribute by them; a window
    without PARTITION BY (one partition) or over one copy of replicated rows runs on the
    coordinator after a Gather, as Greenplum's does. Output columns keep the child's
    positions, so its locus stays."""
    child = w.child
    loc = child.locus
    if not loc.on_segments or loc.kind is LocusKind.SINGLE_QE:
        return replace(w, locus=loc)
    if loc.kind is LocusKind.REPLICATED:
        return replace(w, child=_gather(child), locus=lc.ENTRY)
    if loc.kind is LocusKind.HASHED and w.partition and all(k in w.partition for k in loc.keys):
        return replace(w, locus=loc)
    if w.keep is not None:
        child = _top_n_per_segment(w)
    if not w.partition:
        return replace(w, child=_gather(child), locus=lc.ENTRY)
    child = redistribute(child, w.partition, n)
    return replace(w, child=child, locus=child.locus)


def _top_n_per_segment(w: pl.WindowAgg) -> pl.Node:
    """A top-N filter's WindowAgg ranks each segment's rows before they move and keeps
    only those ranked within n there (planner/rules/window_top_n.py says why)."""
    child = w.child
    j, n = w.keep
    call = w.calls[j]
    local = pl.WindowAgg(child, w.partition, w.order, (call,),
                         child.fields + (pl.Field(call.sql(), call.type),), locus=child.locus,
                         keep=(0, n))
    refs = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(child.fields))
    return pl.Project(local, refs, child.fields, locus=child.locus)


def _onto_segments(node: pl.Node, n: int) -> pl.Node | None:
    """`node` (on the coordinator) with its grouped aggregate's final stage on the segments
    instead: the partial states redistributed by the group keys, where _combine_partials
    gathered them because the groups are few; through Projects and Filters above it.
    None when `node` is not such a result."""
    if isinstance(node, (pl.Project, pl.Filter)):
        inner = _onto_segments(node.child, n)
        if inner is None:
            return None
        if isinstance(node, pl.Filter):
            return replace(node, child=inner, locus=inner.locus)
        return replace(node, child=inner, locus=_through_keys(inner.locus, node.exprs))
    if not (isinstance(node, pl.Aggregate) and node.mode is pl.AggMode.FINAL and node.keys
            and isinstance(node.child, pl.Motion) and node.child.kind is pl.MotionKind.GATHER
            and isinstance(node.child.child, pl.Aggregate)
            and node.child.child.mode is pl.AggMode.PARTIAL
            and all(isinstance(k, ex.ColumnRef) and k.index == i
                    for i, k in enumerate(node.keys))):
        return None
    keys = tuple(range(len(node.keys)))
    child = redistribute(node.child.child, keys, n)
    return replace(node, child=child, locus=lc.hashed(keys, child.locus.segments))


# --- joins ------------------------------------------------------------------------------
_PRESERVES_LEFT = (pl.JoinType.LEFT, pl.JoinType.FULL, pl.JoinType.SEMI, pl.JoinType.ANTI,
                   pl.JoinType.ANTI_NULL_AWARE)
_PRESERVES_RIGHT = (pl.JoinType.RIGHT, pl.JoinType.FULL)


def _join(j: pl.HashJoin, n: int) -> pl.Node:
    """Place a join (DESIGN.md, after Greenplum): co-located when both sides are hashed on
    the join keys; else move the side that costs fewer bytes (redistribute it on the
    other's distribution, or broadcast a small build side, even one hashed on its
    keys, when that sends fewer bytes than redistributing the other side); else
    redistribute both.
    Never broadcast a side whose unmatched rows the join must keep."""
    left, right = j.left, j.right
    lk, rk = j.left_keys, j.right_keys
    ll, rl = left.locus, right.locus
    n_left, n_right = estimate.output_bytes(left), estimate.output_bytes(right)
    if not ll.on_segments and not rl.on_segments:
        return replace(j, locus=ll if ll.kind is LocusKind.ENTRY else rl)
    if ll.kind is LocusKind.ENTRY or rl.kind is LocusKind.ENTRY:
        # A few groups gathered to the coordinator meeting rows on the segments: their
        # final stage goes back onto the segments, so the join moves those few rows
        # rather than gathering the other side (TPC-DS q45's IN (subquery) under an OR).
        back = (_onto_segments(left, n) if ll.kind is LocusKind.ENTRY and rl.on_segments
                else _onto_segments(right, n) if rl.kind is LocusKind.ENTRY and ll.on_segments
                else None)
        if back is None:
            return replace(j, left=ensure_entry(left), right=ensure_entry(right),
                           locus=lc.ENTRY)
        if ll.kind is LocusKind.ENTRY:
            return _join(replace(j, left=back), n)
        return _join(replace(j, right=back), n)
    if not lk:  # no equality: a nested loop needs one side whole on every segment
        return _nested_loop(j)
    if j.join_type is pl.JoinType.ANTI_NULL_AWARE and rl.kind not in (
            LocusKind.REPLICATED, LocusKind.GENERAL):
        # NOT IN: a NULL anywhere in the subquery, and whether it is empty at all, decide
        # every outer row, so each segment needs the whole subquery result, not the rows
        # that hash to it.
        right = pl.Motion(right, pl.MotionKind.BROADCAST, right.fields, locus=lc.REPLICATED)
        if ll.kind in (LocusKind.REPLICATED, LocusKind.GENERAL):
            left = _gather_to_one(left, n)
        return replace(j, left=left, right=right, locus=_join_locus(j, left.locus))
    # Replicated or constant sides join in place with a partitioned other side, as long
    # as the replicated side's unmatched rows need not be kept.
    everywhere = (LocusKind.REPLICATED, LocusKind.GENERAL)
    if ll.kind in everywhere and rl.kind in everywhere:
        # Every segment computes the whole join, whatever rows it keeps: one result,
        # present everywhere (not one copy per segment).
        both_general = ll.kind is LocusKind.GENERAL and rl.kind is LocusKind.GENERAL
        return replace(j, locus=lc.GENERAL if both_general else lc.REPLICATED)
    if rl.kind in everywhere and j.join_type not in _PRESERVES_RIGHT:
        return replace(j, locus=_join_locus(j, ll))
    if ll.kind in everywhere and j.join_type not in _PRESERVES_LEFT:
        return replace(j, locus=_join_locus(j, _hashed_right_as_output(j, rl), rl))
    if ll.kind in everywhere:
        left = _gather_to_one(left, n)
    if rl.kind in everywhere:
        right = _gather_to_one(right, n)
    ll, rl = left.locus, right.locus
    lorders = _key_orders(ll, lk)
    rorders = _key_orders(rl, rk)
    lpos = lorders[0] if lorders else None
    rpos = rorders[0] if rorders else None
    # Copying a small right side to every segment may move fewer bytes than sending the
    # left side to where the right side's distribution put its rows.
    # (Not to meet a left side computable anywhere: that join would run on no segment.)
    broadcast_right = estimate.broadcast_bytes(right, n) < n_left and \
        j.join_type not in _PRESERVES_RIGHT and ll.kind is not LocusKind.GENERAL
    if set(lorders) & set(rorders) and ll.hashed_alike(rl):
        return replace(j, left=left, right=right, locus=_join_locus(j, ll, rl))
    if lpos is not None and (rpos is None or n_right <= n_left):
        # Left is hashed on its keys: send right rows to match it.
        right = redistribute(right, tuple(rk[i] for i in lpos), ll.segments)
    elif rpos is not None and not broadcast_right:
        left = redistribute(left, tuple(lk[i] for i in rpos), rl.segments)
    elif broadcast_right:
        right = pl.Motion(right, pl.MotionKind.BROADCAST, right.fields, locus=lc.REPLICATED)
        return replace(j, left=left, right=right, locus=_join_locus(j, ll))
    else:
        left = redistribute(left, lk, n)
        right = redistribute(right, rk, n)
    return replace(j, left=left, right=right, locus=_join_locus(j, left.locus, right.locus))


def _nested_loop(j: pl.HashJoin) -> pl.Node:
    left, right = j.left, j.right
    if j.join_type in _PRESERVES_RIGHT or right.locus.kind not in (
            LocusKind.REPLICATED, LocusKind.GENERAL) and \
            estimate.output_bytes(right) > estimate.output_bytes(left):
        return replace(j, left=ensure_entry(left), right=ensure_entry(right), locus=lc.ENTRY)
    if right.locus.kind not in (LocusKind.REPLICATED, LocusKind.GENERAL):
        right = pl.Motion(right, pl.MotionKind.BROADCAST, right.fields, locus=lc.REPLICATED)
    if left.locus.kind in (LocusKind.REPLICATED, LocusKind.GENERAL):
        # Constants joined to rows every segment has: the result is on every segment
        # (REPLICATED), not computable anywhere: the broadcast rows are only there.
        both_general = left.locus.kind is right.locus.kind is LocusKind.GENERAL
        return replace(j, right=right, locus=lc.GENERAL if both_general else lc.REPLICATED)
    return replace(j, right=right, locus=_join_locus(j, left.locus))


def _key_orders(locus: lc.Locus, keys: tuple[int, ...]) -> list[tuple[int, ...]]:
    """For a side hashed on a subset of its join keys: which join key each distribution
    key is (so the other side can be hashed the same way), one tuple per equivalent key
    set the side is hashed on; empty when it is hashed on none."""
    out = []
    for key_set in locus.key_sets():
        if all(k in keys for k in key_set):
            out.append(tuple(keys.index(k) for k in key_set))
    return out


def _join_locus(j: pl.HashJoin, left_locus: lc.Locus,
                right_locus: lc.Locus | None = None) -> lc.Locus:
    """Rows of the join stay where the left side's distribution put them, except that
    right and full joins may put NULL-extended rows anywhere (Greenplum's HashedOJ). A
    right join of a right side hashed where it is joined makes every row (matched, or
    unmatched and NULL-extended on the left) where that right row is: hashed on its
    key columns."""
    if j.join_type is pl.JoinType.RIGHT and right_locus is not None \
            and right_locus.kind is LocusKind.HASHED:
        return _hashed_right_as_output(j, right_locus)
    if j.join_type in _PRESERVES_RIGHT:
        return lc.STREWN
    if j.join_type is pl.JoinType.INNER and left_locus.kind is LocusKind.HASHED:
        return _with_join_equalities(j, left_locus, right_locus)
    return left_locus


def _with_join_equalities(j: pl.HashJoin, left_locus: lc.Locus,
                          right_locus: lc.Locus | None) -> lc.Locus:
    """An inner join's rows hashed on left columns are hashed on the right columns its
    keys equal as well (of one type: equal values hash alike), and on the right side's
    own distribution when that is where the rows already were (co-located)."""
    nl = len(j.left.fields)
    equal = {lk: nl + rk for lk, rk in zip(j.left_keys, j.right_keys)
             if j.left.fields[lk].type == j.right.fields[rk].type}
    sets = list(left_locus.key_sets())
    sets += [tuple(equal.get(k, k) for k in keys) for keys in left_locus.key_sets()]
    if right_locus is not None and left_locus.hashed_alike(right_locus) and \
            set(_key_orders(left_locus, j.left_keys)) & set(_key_orders(right_locus,
                                                                        j.right_keys)):
        sets += [tuple(nl + k for k in keys) for keys in right_locus.key_sets()]
    return lc.hashed_on_any(sets, left_locus.segments)


def _hashed_right_as_output(j: pl.HashJoin, rl: lc.Locus) -> lc.Locus:
    if rl.kind is not LocusKind.HASHED or j.join_type in _PRESERVES_LEFT:
        return lc.STREWN if rl.on_segments else rl
    nl = len(j.left.fields)
    return lc.hashed_on_any([tuple(nl + k for k in keys) for keys in rl.key_sets()],
                            rl.segments)


def _gather_to_one(node: pl.Node, n: int) -> pl.Node:
    """A replicated side whose rows the join must keep: take one copy of it, spread."""
    if node.locus.kind is LocusKind.REPLICATED:
        keys = tuple(range(len(node.fields))) or (0,)
        return pl.Motion(node, pl.MotionKind.REDISTRIBUTE, node.fields, hash_keys=keys,
                         locus=lc.hashed(keys, n))
    return node


def _through_keys(locus: lc.Locus, keys: tuple[ex.Expr, ...]) -> lc.Locus:
    """The locus of rows computed in place as `keys` (a per-segment aggregate's group
    keys, a Project's expressions): hashed key columns where `keys` pass them on."""
    mapping = {}
    for i, k in enumerate(keys):
        if isinstance(k, ex.ColumnRef) and k.index not in mapping:
            mapping[k.index] = i
    return locus.remap(mapping)


# --- ordering and limits ---------------------------------------------------------------
def _sort(sort: pl.Sort) -> pl.Node:
    child = sort.child
    if not child.locus.on_segments:
        return replace(sort, locus=child.locus)
    local = replace(sort, locus=child.locus)
    if child.locus.kind is LocusKind.REPLICATED:
        return _gather(local)
    return pl.Motion(local, pl.MotionKind.GATHER_MERGE, sort.fields, sort_keys=sort.keys,
                     locus=lc.ENTRY)


def _limit(limit: pl.Limit, n: int) -> pl.Node:
    child = limit.child
    need = None if limit.limit is None else limit.limit + limit.offset
    if limit.ties:
        # Rows tying with the last one may lie past any per-segment cut: sort fully.
        need = None
    if isinstance(child, pl.Sort) and need is not None:
        child = replace(child, limit=need if child.limit is None else min(child.limit, need))
    child = _dist(child, n)
    if not child.locus.on_segments:
        return replace(limit, child=child, locus=child.locus)
    if isinstance(child, pl.Motion):  # a Gather Merge of per-segment top-K sorts
        return replace(limit, child=child, locus=lc.ENTRY)
    if need is not None:
        child = pl.Limit(child, need, 0, child.fields, locus=child.locus)
    return replace(limit, child=_gather(child), locus=lc.ENTRY)


def _gather(node: pl.Node) -> pl.Node:
    return ensure_entry(node)


def _number_slices(root: pl.Node) -> pl.Node:
    """Number Motions in pre-order: slice 0 is the top (coordinator) slice."""
    counter = [0]

    def visit(node):
        if isinstance(node, pl.Motion):
            counter[0] += 1
            sid = counter[0]
            return replace(node, slice_id=sid, child=visit(node.child))
        kids = tuple(visit(c) for c in node.children())
        return pl.with_children(node, kids) if kids else node
    return visit(root)
