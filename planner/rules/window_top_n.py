"""Top-N per group: a filter `rn <= n` (or `< n`, `= n`, `n >= rn`) right above the
WindowAgg (or a Project right above it) that computes rn = row_number(), rank() or
dense_rank() marks that WindowAgg `keep=(call, n)`: rows ranked past n are dropped as
soon as they are ranked, and distribute.py ranks each segment's rows first, before the
Motion that brings a partition together, so only each segment's top n per partition
moves. The Filter stays.

Sound because a row's rank over all rows is at least its rank over one segment's: a row
whose segment ranks it past n is past n everywhere, and every row before (or tied with)
a row that passes is kept, so the kept rows' ranks are exact. Marked only when every
call of the WindowAgg is a ranking (their values for the kept rows are then exact too)
and, for row_number, when all of them are row_number (ties among peers are arbitrary).
"""

from __future__ import annotations

from dataclasses import replace

from planner import expr as ex
from planner import plan as pl
from planner import window as wn

_RANKING = (wn.WindowFunc.ROW_NUMBER, wn.WindowFunc.RANK, wn.WindowFunc.DENSE_RANK)


def window_top_n(node: pl.Node) -> pl.Node:
    return pl.transform(node, _mark)


def _mark(node: pl.Node) -> pl.Node:
    if not isinstance(node, pl.Filter):
        return node
    if isinstance(node.child, pl.WindowAgg):
        # The filter right on the WindowAgg (pushdown_filters moved it through the
        # Project of columns that was between them).
        w = node.child
        proj = pl.Project(w, tuple(ex.ColumnRef(i, f.type, f.name)
                                   for i, f in enumerate(w.fields)), w.fields)
    elif isinstance(node.child, pl.Project) and isinstance(node.child.child, pl.WindowAgg):
        proj, w = node.child, node.child.child
    else:
        return node
    if w.keep is not None or not all(c.func in _RANKING for c in w.calls):
        return node
    nc = len(w.child.fields)
    best = None
    for c in _conjuncts(node.predicate):
        bound = _upper_bound(c)
        if bound is None:
            continue
        col, n = bound
        e = proj.exprs[col]
        if not (isinstance(e, ex.ColumnRef) and e.index >= nc):
            continue
        j = e.index - nc
        func = w.calls[j].func
        if func is wn.WindowFunc.ROW_NUMBER and any(
                c.func is not wn.WindowFunc.ROW_NUMBER for c in w.calls):
            continue
        if best is None or n < best[1]:
            best = (j, n)
    if best is None:
        return node
    if node.child is w:
        return replace(node, child=replace(w, keep=best))
    return replace(node, child=replace(proj, child=replace(w, keep=best)))


def _conjuncts(e: ex.Expr):
    if isinstance(e, ex.Call) and e.func is ex.Func.AND:
        for a in e.args:
            yield from _conjuncts(a)
    else:
        yield e


_FLIP = {ex.Func.GE: ex.Func.LE, ex.Func.GT: ex.Func.LT, ex.Func.EQ: ex.Func.EQ}


def _upper_bound(c: ex.Expr) -> tuple[int, int] | None:
    """(column, n) when `c` says column <= n (column < n: n - 1; column = n: n)."""
    if not (isinstance(c, ex.Call) and len(c.args) == 2):
        return None
    a, b = c.args
    func = c.func
    if isinstance(a, ex.Literal) and isinstance(b, ex.ColumnRef):
        a, b = b, a
        func = _FLIP.get(func)
    if not (isinstance(a, ex.ColumnRef) and isinstance(b, ex.Literal)
            and b.type.is_integer and isinstance(b.value, int)):
        return None
    if func in (ex.Func.LE, ex.Func.EQ):
        return a.index, b.value
    if func is ex.Func.LT:
        return a.index, b.value - 1
    return None
