"""Projection pushdown: a Scan reads only the columns something above it uses (a system
relation's Values leaf, too).

Walks down with the set of output positions the parent needs; Project and Aggregate
compute their own outputs, so below them only the columns their expressions use are
needed. Nodes that pass their child's columns through (Filter, Sort, Limit) shrink with it.
A join's inputs keep only what the join and the nodes above it use: columns a filter
below them read are dropped by a Project (the build side is held in memory, and either
side may cross a Motion).
"""

from __future__ import annotations

from dataclasses import replace

from planner import expr as ex
from planner import plan as pl


def prune_columns(node: pl.Node) -> pl.Node:
    pruned, _ = _prune(node, set(range(len(node.fields))))
    return pruned


def _prune(node: pl.Node, needed: set[int]) -> tuple[pl.Node, dict[int, int]]:
    """(node reading fewer columns, mapping old output position -> new position)."""
    if isinstance(node, pl.Scan):
        used = set(needed)
        if node.filter is not None:
            used |= ex.columns_used(node.filter)
        if not used:
            used = {0}  # count(*) still needs rows: read the cheapest way we have, one column
        keep = sorted(used)
        mapping = {old: new for new, old in enumerate(keep)}
        filt = ex.map_columns(node.filter, mapping) if node.filter is not None else None
        return replace(node, columns=tuple(node.columns[i] for i in keep),
                       fields=tuple(node.fields[i] for i in keep), filter=filt), mapping
    if isinstance(node, pl.Values) and node.system and node.rows:
        # A system relation's cells are literals (nothing to evaluate for its effects):
        # only the columns used are turned into Arrow (information_schema.columns has 44).
        keep = sorted(needed) or [0]
        return replace(node, rows=tuple(tuple(row[i] for i in keep) for row in node.rows),
                       fields=tuple(node.fields[i] for i in keep)), \
            {old: new for new, old in enumerate(keep)}
    if isinstance(node, pl.Filter):
        child, mapping = _prune(node.child, needed | ex.columns_used(node.predicate))
        return replace(node, child=child, predicate=ex.map_columns(node.predicate, mapping),
                       fields=child.fields), mapping
    if isinstance(node, pl.Sort):
        used = set(needed)
        for k in node.keys:
            used |= ex.columns_used(k.expr)
        child, mapping = _prune(node.child, used)
        keys = tuple(replace(k, expr=ex.map_columns(k.expr, mapping)) for k in node.keys)
        return replace(node, child=child, keys=keys, fields=child.fields), mapping
    if isinstance(node, pl.Limit):
        used = set(needed)
        for k in node.ties:
            used |= ex.columns_used(k.expr)
        child, mapping = _prune(node.child, used)
        ties = tuple(replace(k, expr=ex.map_columns(k.expr, mapping)) for k in node.ties)
        return replace(node, child=child, fields=child.fields, ties=ties), mapping
    if isinstance(node, pl.Project):
        keep = sorted(needed) if needed else [0] if node.exprs else []
        kept = [node.exprs[i] for i in keep]
        used = set().union(*(ex.columns_used(e) for e in kept)) if kept else set()
        child, mapping = _prune(node.child, used)
        exprs = tuple(ex.map_columns(e, mapping) for e in kept)
        fields = tuple(node.fields[i] for i in keep)
        return replace(node, child=child, exprs=exprs, fields=fields), \
            {old: new for new, old in enumerate(keep)}
    if isinstance(node, pl.Expand):
        keep = sorted(needed) if needed else [0]
        used = set()
        for row in node.sets:
            for i in keep:
                used |= ex.columns_used(row[i])
        child, mapping = _prune(node.child, used)
        sets = tuple(tuple(ex.map_columns(row[i], mapping) for i in keep) for row in node.sets)
        return replace(node, child=child, sets=sets, fields=tuple(node.fields[i] for i in keep)), \
            {old: new for new, old in enumerate(keep)}
    if isinstance(node, pl.HashJoin):
        return _prune_join(node, needed)
    if isinstance(node, pl.Append):
        # Every input must keep the same columns; keep them all.
        kids = tuple(_prune(c, set(range(len(c.fields))))[0] for c in node.inputs)
        return replace(node, inputs=kids), _identity(node)
    if isinstance(node, pl.Aggregate):
        used = set()
        for k in node.keys:
            used |= ex.columns_used(k)
        for a in node.aggs:
            if a.arg is not None:
                used |= ex.columns_used(a.arg)
            for e, _, _ in a.order:
                used |= ex.columns_used(e)
        child, mapping = _prune(node.child, used)
        keys = tuple(ex.map_columns(k, mapping) for k in node.keys)
        aggs = tuple(replace(a, arg=ex.map_columns(a.arg, mapping) if a.arg is not None
                             else None,
                             order=tuple((ex.map_columns(e, mapping), d, nf)
                                         for e, d, nf in a.order))
                     for a in node.aggs)
        return replace(node, child=child, keys=keys, aggs=aggs), _identity(node)
    if isinstance(node, pl.WindowAgg):
        return _prune_window(node, needed)
    if isinstance(node, pl.ProjectSet):
        return _prune_project_set(node, needed)
    if hasattr(node, "child"):
        child, _ = _prune(node.child, set(range(len(node.child.fields))))
        return replace(node, child=child), _identity(node)
    return node, _identity(node)


_LEFT_ONLY = (pl.JoinType.SEMI, pl.JoinType.ANTI, pl.JoinType.ANTI_NULL_AWARE)


def _narrowed(child: pl.Node, mapping: dict[int, int],
              wanted: set[int]) -> tuple[pl.Node, dict[int, int]]:
    """A join input without the columns only a filter below it read: the build side is
    held in memory, and either side may cross a Motion (TPC-H Q13 sent each order's
    comment, read only by its NOT LIKE, through the Redistribute: 95 MB of its 100)."""
    if len(child.fields) <= len(wanted):
        return child, mapping
    keep = sorted(mapping[i] for i in wanted)
    child = pl.Project(child, tuple(ex.ColumnRef(p, child.fields[p].type, child.fields[p].name)
                                    for p in keep), tuple(child.fields[p] for p in keep))
    narrowed = {old: new for new, old in enumerate(keep)}
    return child, {i: narrowed[mapping[i]] for i in wanted}


def _prune_join(node: pl.HashJoin, needed: set[int]) -> tuple[pl.Node, dict[int, int]]:
    nl = len(node.left.fields)
    used = set(needed)
    if node.residual is not None:
        used |= ex.columns_used(node.residual)
    left_wanted = {i for i in used if i < nl} | set(node.left_keys)
    left, lmap = _narrowed(*_prune(node.left, left_wanted), left_wanted)
    wanted = {i - nl for i in used if i >= nl} | set(node.right_keys)
    right, rmap = _narrowed(*_prune(node.right, wanted), wanted)
    joined = dict(lmap)
    joined.update({nl + j: len(left.fields) + k for j, k in rmap.items()})
    residual = ex.map_columns(node.residual, joined) if node.residual is not None else None
    left_only = node.join_type in _LEFT_ONLY
    fields = left.fields if left_only else left.fields + right.fields
    out = replace(node, left=left, right=right, residual=residual, fields=fields,
                  left_keys=tuple(lmap[k] for k in node.left_keys),
                  right_keys=tuple(rmap[k] for k in node.right_keys))
    return out, (dict(lmap) if left_only else joined)


def _prune_window(node: pl.WindowAgg, needed: set[int]) -> tuple[pl.Node, dict[int, int]]:
    """A WindowAgg passes its child's columns and appends one per call: the child keeps
    what is needed above plus what the window reads; every call is kept (they are few)."""
    nc = len(node.child.fields)
    used = {i for i in needed if i < nc} | set(node.partition)
    for k in node.order:
        used |= ex.columns_used(k.expr)
    for c in node.calls:
        used |= {i for i in (c.arg, c.default, c.n_col, c.arg2) if i is not None}
    child, mapping = _prune(node.child, used)
    calls = tuple(replace(c, arg=None if c.arg is None else mapping[c.arg],
                          default=None if c.default is None else mapping[c.default],
                          n_col=None if c.n_col is None else mapping[c.n_col],
                          arg2=None if c.arg2 is None else mapping[c.arg2])
                  for c in node.calls)
    order = tuple(replace(k, expr=ex.map_columns(k.expr, mapping)) for k in node.order)
    fields = child.fields + node.fields[nc:]
    out = dict(mapping)
    out.update({nc + j: len(child.fields) + j for j in range(len(node.calls))})
    return replace(node, child=child, partition=tuple(mapping[i] for i in node.partition),
                   order=order, calls=calls, fields=fields), out


def _prune_project_set(node: pl.ProjectSet, needed: set[int]) -> tuple[pl.Node, dict[int, int]]:
    """A ProjectSet passes its child's columns and appends one per array: the child keeps
    what is needed above plus what the arrays read; every array is kept (lockstep)."""
    nc = len(node.child.fields)
    used = {i for i in needed if i < nc}.union(*(ex.columns_used(e) for e in node.arrays))
    child, mapping = _prune(node.child, used)
    arrays = tuple(ex.map_columns(e, mapping) for e in node.arrays)
    out = dict(mapping)
    out.update({nc + j: len(child.fields) + j for j in range(len(node.arrays))})
    return replace(node, child=child, arrays=arrays,
                   fields=child.fields + node.fields[nc:]), out


def _identity(node: pl.Node) -> dict[int, int]:
    return {i: i for i in range(len(node.fields))}
