"""A semi or anti join (EXISTS, IN, NOT EXISTS) moves below the inner joins and
projections under it, down to the relation its keys come from.

Such a join keeps or drops rows of its left side by their own columns, so it commutes
with an inner join of that side with another relation: (A JOIN B) SEMI S = (A SEMI S)
JOIN B when the semi join reads only A's columns. Below, it filters rows before they are
joined instead of after. TPC-H Q18's `o_orderkey IN (57 order keys)` then keeps 57 orders
before they meet 6M lineitems, instead of joining all 6M first. A Project in between is
passed when the columns the semi join reads are plain columns of it. A semi join whose
condition reads both sides of the join below stays where it is, and so does one whose
estimated rows below would not be fewer than the join's it filters now (`_pays`).
"""

from __future__ import annotations

from dataclasses import replace

from planner import estimate
from planner import expr as ex
from planner import plan as pl

_FILTERING = (pl.JoinType.SEMI, pl.JoinType.ANTI)


def semi_join_pushdown(node: pl.Node) -> pl.Node:
    return pl.transform(node, _push)


def _push(node: pl.Node) -> pl.Node:
    if not (isinstance(node, pl.HashJoin) and node.join_type in _FILTERING and node.left_keys):
        return node
    below = node.left
    nl = len(below.fields)
    used = set(node.left_keys) | {i for i in _residual_columns(node) if i < nl}
    if isinstance(below, pl.Project):
        if not all(isinstance(below.exprs[i], ex.ColumnRef) for i in used):
            return node
        inner = below.child
        to_child = {i: below.exprs[i].index for i in used}
        moved = _moved(node, inner, to_child)
        return replace(below, child=_push(moved))
    if isinstance(below, pl.HashJoin) and below.join_type is pl.JoinType.INNER:
        na = len(below.left.fields)
        if all(i < na for i in used):
            side = _moved(node, below.left, {i: i for i in used})
            if _pays(side, below):
                return replace(below, left=_push(side))
        elif all(i >= na for i in used):
            side = _moved(node, below.right, {i: i - na for i in used})
            if _pays(side, below):
                return replace(below, right=_push(side))
    return node


def _pays(moved: pl.HashJoin, join: pl.HashJoin) -> bool:
    """Whether the semi join below keeps fewer rows than the join it would leave: its
    probe side is then smaller than the join's output it probed before (TPC-H Q18), where
    a join that filters much (Q21's one nation) is better probed after."""
    return estimate.rows(moved) < estimate.rows(join)


def _residual_columns(node: pl.HashJoin) -> set[int]:
    return ex.columns_used(node.residual) if node.residual is not None else set()


def _moved(node: pl.HashJoin, onto: pl.Node, to_onto: dict[int, int]) -> pl.HashJoin:
    """The semi join over `onto`, its left columns renumbered by `to_onto` and the right
    side's columns (after the left ones in its residual) shifted to follow onto's."""
    nl, no = len(node.left.fields), len(onto.fields)
    residual = node.residual
    if residual is not None:
        mapping = dict(to_onto)
        mapping.update({nl + j: no + j for j in range(len(node.right.fields))})
        residual = ex.map_columns(residual, mapping)
    return replace(node, left=onto, left_keys=tuple(to_onto[k] for k in node.left_keys),
                   residual=residual, fields=onto.fields)
