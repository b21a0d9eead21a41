"""A join of a grouped aggregate with a small filtered relation on group keys also filters
the aggregate's input: a semi join of the input with that relation's keys goes below the
aggregate.

Sound because the join drops whole groups: every row of a group has the group's keys, so
a group the join drops is one whose rows the semi join drops, and a group it keeps keeps
all its rows. That holds for an inner join and for an outer join that preserves the other
side only (a decorrelated scalar subquery LEFT joined back to the outer rows: TPC-H Q17
averages lineitem per part for the 200 parts its outer query keeps, not for all 200,000).
TPC-DS q02 and q59 aggregate two years of sales by week and then join a year's 53 weeks;
with the semi join the aggregate sees a year's rows instead of all.

The keys need not be the other relation's own: a key column that comes, through joins of
any type, filters and projections of columns, from a smaller relation below has no
non-NULL value that relation lacks, so that relation's keys filter as well (a superset of
the join's keys drops fewer groups, never a wrong one; a NULL key matches nothing). So
does the relation on the other side of a join that matched the column on it.
That relation is read twice (in the join and in the semi join), so only one that is
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


# (left, right): whether a row of that side comes out of a join of this type only where
# the other side matched its keys (a side whose unmatched rows the join drops).
_MATCHED = {pl.JoinType.INNER: (True, True), pl.JoinType.LEFT: (False, True),
            pl.JoinType.RIGHT: (True, False), pl.JoinType.SEMI: (True, False)}
_REWRITTEN = (pl.JoinType.INNER, pl.JoinType.LEFT, pl.JoinType.RIGHT)


def _rewrite(node: pl.Node) -> pl.Node:
    if not (isinstance(node, pl.HashJoin) and node.join_type in _REWRITTEN
            and node.left_keys):
        return node
    left_filtered, right_filtered = _MATCHED[node.join_type]
    for filtered_side, agg_side, keys, other, other_keys in (
            (left_filtered, node.left, node.left_keys, node.right, node.right_keys),
            (right_filtered, node.right, node.right_keys, node.left, node.left_keys)):
        if not filtered_side:
            continue
        filtered = _filtered(agg_side, keys, other, other_keys)
        if filtered is not None:
            if agg_side is node.left:
                return replace(node, left=filtered)
            return replace(node, right=filtered)
    return node


def _filtered(side: pl.Node, keys, other: pl.Node, other_keys) -> pl.Node | None:
    """`side` with a semi join by `other`'s keys below the aggregate it holds, or None.

    Of the relations the keys can be traced to, the one estimated smallest filters, by
    every key traced to it."""
    sources: dict[int, tuple[pl.Node, list]] = {}  # id(relation) -> (relation, pairs)
    for k, o in zip(keys, other_keys):
        col = _group_key_input(side, k)
        if col is None:
            continue
        for node, src_col in _key_sources(other, o):
            sources.setdefault(id(node), (node, []))[1].append((col, src_col))
    if not sources:
        return None
    source, pairs = min(sources.values(), key=lambda entry: estimate.rows(entry[0]))
    return _below(side, pairs, source)


def _key_sources(node: pl.Node, col: int):
    """The cheap relations at or below `node` with a column that holds every non-NULL
    value of `node`'s column `col` (of its type), with that column.

    Every join outputs a column's values from one child, or NULL (outer joins), and a
    NULL key never matches; where the join matched the column's side on it, the other
    side's key holds its values too (TPC-H Q20: partsupp's part keys are among the
    parts named 'forest%')."""
    want = node.fields[col].type
    todo, seen = [(node, col)], set()
    while todo:
        node, col = todo.pop()
        if (id(node), col) in seen or node.fields[col].type != want:
            continue
        seen.add((id(node), col))
        if _cheap(node):
            yield node, col
        elif isinstance(node, pl.Project):
            e = node.exprs[col]
            if isinstance(e, ex.ColumnRef):
                todo.append((node.child, e.index))
        elif isinstance(node, pl.Filter):
            todo.append((node.child, col))
        elif isinstance(node, pl.HashJoin):
            width = len(node.left.fields)
            left_matched, right_matched = _MATCHED.get(node.join_type, (False, False))
            if col < width:
                todo.append((node.left, col))
                if col in node.left_keys and left_matched:
                    todo.append((node.right, node.right_keys[node.left_keys.index(col)]))
            else:
                todo.append((node.right, col - width))
                if col - width in node.right_keys and right_matched:
                    todo.append((node.left, node.left_keys[node.right_keys.index(col - width)]))


def _cheap(node: pl.Node) -> bool:
    """A relation read again at little cost: one scan under filters and projections."""
    while isinstance(node, (pl.Filter, pl.Project)):
        node = node.child
    return isinstance(node, pl.Scan)


def _group_key_input(node: pl.Node, col: int) -> int | None:
    """The aggregate input column whose group key output column `col` of `node` is, through
    projections of columns and filters; None when it is not one."""
    found = pl.column_source(node, col)
    if found is None or not isinstance(found[0], pl.Aggregate):
        return None
    node, col = found
    if node.mode is not pl.AggMode.SINGLE or col >= len(node.keys) \
            or isinstance(node.child, pl.Expand):
        return None
    k = node.keys[col]
    return k.index if isinstance(k, ex.ColumnRef) else None


def _below(node: pl.Node, pairs, other: pl.Node) -> pl.Node | None:
    if isinstance(node, (pl.Project, pl.Filter)):
        inner = _below(node.child, pairs, other)
        return None if inner is None else replace(node, child=inner)
    assert isinstance(node, pl.Aggregate)
    if any(node.child.fields[c].type != other.fields[o].type for c, o in pairs):
        return None  # the keys would not hash alike
    keys = tuple(o for _, o in pairs)
    fields = tuple(other.fields[o] for o in keys)
    exprs = tuple(ex.ColumnRef(o, f.type, f.name) for o, f in zip(keys, fields))
    if isinstance(other, pl.Project):  # one projection, not one over another
        exprs = tuple(other.exprs[o] for o in keys)
        other = other.child
    probe = pl.Project(other, exprs, fields)
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
