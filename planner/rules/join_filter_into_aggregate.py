"""An inner join of a grouped aggregate with a small filtered relation on group keys also
filters the aggregate's input: a semi join of the input with that relation's keys goes
below the aggregate.

Sound because the join drops whole groups: every row of a group has the group's keys, so
a group the join drops is one whose rows the semi join drops, and a group it keeps keeps
all its rows. TPC-DS q02 and q59 aggregate two years of sales by week and then join a
year's 53 weeks; with the semi join the aggregate sees a year's rows instead of all.
The relation is read twice (the join and the semi join), so only a relation that is
cheap to read again qualifies: a scan, filtered and projected, with fewer estimated rows
than the aggregate's groups (`_pays`). The aggregate may be under projections of columns
and filters; grouping sets (Expand) are passed over (their keys are NULL in other sets).
semi_join_pushdown, after this rule, moves the semi join further down to the relation
the keys come from.
"""

from __future__ import annotations

from dataclasses import replace

from planner import estimate
from planner import expr as ex
from planner import plan as pl

SELECTIVITY = 0.5  # the relation must be estimated to keep at most this share of groups


def join_filter_into_aggregate(node: pl.Node) -> pl.Node:
    return pl.transform(node, _rewrite)


def _rewrite(node: pl.Node) -> pl.Node:
    if not (isinstance(node, pl.HashJoin) and node.join_type is pl.JoinType.INNER
            and node.left_keys):
        return node
    for agg_side, keys, other, other_keys in (
            (node.left, node.left_keys, node.right, node.right_keys),
            (node.right, node.right_keys, node.left, node.left_keys)):
        filtered = _filtered(agg_side, keys, other, other_keys)
        if filtered is not None:
            if agg_side is node.left:
                return replace(node, left=filtered)
            return replace(node, right=filtered)
    return node


def _filtered(side: pl.Node, keys, other: pl.Node, other_keys) -> pl.Node | None:
    """`side` with a semi join by `other`'s keys below the aggregate it holds, or None."""
    if not _cheap(other):
        return None
    pairs = []  # (column of the aggregate's input, column of other)
    for k, o in zip(keys, other_keys):
        col = _group_key_input(side, k)
        if col is not None:
            pairs.append((col, o))
    if not pairs:
        return None
    return _below(side, pairs, other)


def _cheap(node: pl.Node) -> bool:
    """A relation read again at little cost: one scan under filters and projections."""
    while isinstance(node, (pl.Filter, pl.Project)):
        node = node.child
    return isinstance(node, pl.Scan)


def _group_key_input(node: pl.Node, col: int) -> int | None:
    """The aggregate input column whose group key output column `col` of `node` is, through
    projections of columns and filters; None when it is not one."""
    while True:
        if isinstance(node, pl.Project):
            e = node.exprs[col]
            if not isinstance(e, ex.ColumnRef):
                return None
            node, col = node.child, e.index
        elif isinstance(node, pl.Filter):
            node = node.child
        elif isinstance(node, pl.Aggregate):
            if (node.mode is not pl.AggMode.SINGLE or col >= len(node.keys)
                    or isinstance(node.child, pl.Expand)):
                return None
            k = node.keys[col]
            return k.index if isinstance(k, ex.ColumnRef) else None
        else:
            return None


def _below(node: pl.Node, pairs, other: pl.Node) -> pl.Node | None:
    if isinstance(node, (pl.Project, pl.Filter)):
        inner = _below(node.child, pairs, other)
        return None if inner is None else replace(node, child=inner)
    assert isinstance(node, pl.Aggregate)
    if any(node.child.fields[c].type != other.fields[o].type for c, o in pairs):
        return None  # the keys would not hash alike
    keys = tuple(o for _, o in pairs)
    probe = pl.Project(other, tuple(ex.ColumnRef(o, other.fields[o].type, other.fields[o].name)
                                    for o in keys), tuple(other.fields[o] for o in keys))
    child_keys = tuple(c for c, _ in pairs)
    below = node.child
    if (isinstance(below, pl.HashJoin) and below.join_type is pl.JoinType.SEMI
            and below.right == probe and below.left_keys == child_keys):
        return None  # there already
    if not _pays(node, probe):
        return None
    semi = pl.HashJoin(below, probe, pl.JoinType.SEMI, child_keys, tuple(range(len(pairs))),
                       None, below.fields)
    return replace(node, child=semi)


def _pays(agg: pl.Aggregate, probe: pl.Node) -> bool:
    """The relation keeps few of the groups: fewer estimated rows than a share of them."""
    return estimate.rows(probe) < SELECTIVITY * estimate.rows(agg)
