"""Push WHERE predicates into the Scan below them, where chunk statistics can skip chunks
and the predicate runs on each chunk as it is read."""

from __future__ import annotations

from dataclasses import replace

from planner import functions
from planner import plan as pl
from planner.expr import Func


def pushdown_filters(node: pl.Node) -> pl.Node:
    if isinstance(node, pl.Filter):
        child = pushdown_filters(node.child)
        if isinstance(child, pl.Scan):
            pred = node.predicate if child.filter is None else functions.bind_call(
                Func.AND, [child.filter, node.predicate])
            return replace(child, filter=pred)
        return replace(node, child=child)
    if isinstance(node, (pl.HashJoin, pl.Append)):
        return pl.with_children(node, tuple(pushdown_filters(c) for c in node.children()))
    if hasattr(node, "child"):
        return replace(node, child=pushdown_filters(node.child))
    return node
