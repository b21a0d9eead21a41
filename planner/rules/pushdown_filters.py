"""Push filter conjuncts down the bound plan as far as they keep their meaning, into the
Scan at the bottom where chunk statistics can skip chunks and the predicate runs on each
chunk as it is read.

A conjunct moves through a Project when the columns it reads are columns or constants
there (it is rewritten over the Project's input); into every input of an Append (UNION
ALL); below an Aggregate when it reads only group keys (a HAVING or outer WHERE on keys:
it keeps or drops whole groups either way), but not into grouping sets' Expand, whose keys
are NULL in other sets; through a Sort without a limit; and into the side of a join that
the join preserves (either side of an inner join, the left of LEFT, SEMI and ANTI joins,
the right of RIGHT). Elsewhere it stays where it is.

A conjunct calling random() stays where it is. A conjunct that folds to false or NULL
empties its input: an Append input so filtered is
dropped, so a query over a view or CTE that unions branches tagged with constants reads
only the branches its WHERE asks for (TPC-DS q04/q11/q74 filter `sale_type = 's'` over a
UNION ALL of store, catalog and web sales).
"""

from __future__ import annotations

from dataclasses import replace

from planner import expr as ex
from planner import functions
from planner import plan as pl
from planner.expr import Func

_PRESERVED = {pl.JoinType.INNER: (True, True), pl.JoinType.LEFT: (True, False),
              pl.JoinType.RIGHT: (False, True), pl.JoinType.SEMI: (True, False),
              pl.JoinType.ANTI: (True, False), pl.JoinType.ANTI_NULL_AWARE: (True, False)}


def pushdown_filters(node: pl.Node) -> pl.Node:
    return _push(node, [])


def _conjuncts(e: ex.Expr) -> list[ex.Expr]:
    if isinstance(e, ex.Call) and e.func is Func.AND:
        return [c for a in e.args for c in _conjuncts(a)]
    return [e]


def _and(preds: list[ex.Expr]) -> ex.Expr:
    out = preds[0]
    for p in preds[1:]:
        out = functions.bind_call(Func.AND, [out, p])
    return out


def _never(pred: ex.Expr) -> bool:
    return isinstance(pred, ex.Literal) and pred.value is not True


def _empty(node: pl.Node) -> pl.Values:
    return pl.Values(rows=(), fields=node.fields)


def _is_empty(node: pl.Node) -> bool:
    """A leaf `_empty` made (a system relation's Values are filled in later)."""
    return isinstance(node, pl.Values) and not node.rows and not node.system


def _on_top(node: pl.Node, preds: list[ex.Expr]) -> pl.Node:
    if not preds:
        return node
    return pl.Filter(node, _and(preds), node.fields)


def _push(node: pl.Node, preds: list[ex.Expr]) -> pl.Node:
    """`node` with `preds` (conjuncts over its output, constants folded) applied, as deep
    as they may go."""
    if any(_never(p) for p in preds):
        return _empty(node)
    preds = [p for p in preds if not (isinstance(p, ex.Literal) and p.value is True)]
    if any(ex.is_volatile(p) for p in preds):
        # random() is drawn where the query asked: once per row of this node's output
        # (not per row of a join side, nor as a scan filter that chunk statistics read).
        steady = [p for p in preds if not ex.is_volatile(p)]
        return _on_top(_push(node, steady), [p for p in preds if ex.is_volatile(p)])
    if isinstance(node, pl.Filter):
        own = [functions.fold_constants(c) for c in _conjuncts(node.predicate)]
        return _push(node.child, own + preds)
    if isinstance(node, pl.Scan):
        if not preds:
            return node
        pred = _and(preds) if node.filter is None else _and([node.filter, *preds])
        return replace(node, filter=pred)
    if isinstance(node, pl.Project):
        return _through_project(node, preds)
    if isinstance(node, pl.Append):
        kept = [c for c in (_push(c, list(preds)) for c in node.inputs) if not _is_empty(c)]
        if not kept:
            return _empty(node)
        if len(kept) == 1 and kept[0].fields == node.fields:
            return kept[0]
        return replace(node, inputs=tuple(kept))
    if isinstance(node, pl.Aggregate):
        return _through_aggregate(node, preds)
    if isinstance(node, pl.Sort) and node.limit is None:
        return replace(node, child=_push(node.child, preds))
    if isinstance(node, pl.HashJoin):
        return _into_join(node, preds)
    return _on_top(_rewrite_children(node), preds)


def _rewrite_children(node: pl.Node) -> pl.Node:
    kids = node.children()
    if not kids:
        return node
    return pl.with_children(node, tuple(_push(c, []) for c in kids))


def _through_project(node: pl.Project, preds: list[ex.Expr]) -> pl.Node:
    movable, stay = [], []
    for p in preds:
        used = ex.columns_used(p)
        if all(isinstance(node.exprs[i], (ex.ColumnRef, ex.Literal)) for i in used):
            movable.append(_substitute(p, node.exprs))
        else:
            stay.append(p)
    child = _push(node.child, movable)
    if _is_empty(child):
        return _empty(node)
    return _on_top(replace(node, child=child), stay)


def _substitute(e: ex.Expr, exprs: tuple[ex.Expr, ...]) -> ex.Expr:
    """`e` over a Project's output, rewritten over its input (column i becomes exprs[i],
    a column or a constant there)."""
    def value(c: ex.ColumnRef) -> ex.Expr:
        target = exprs[c.index]
        if isinstance(target, ex.Literal) and target.type != c.type:
            return functions.bind_cast(target, c.type)
        return target
    return functions.fold_constants(ex.replace_columns(e, value))


def _through_aggregate(node: pl.Aggregate, preds: list[ex.Expr]) -> pl.Node:
    n_keys = len(node.keys)
    movable, stay = [], []
    for p in preds:
        used = ex.columns_used(p)
        # Keys only, of a grouped aggregate whose input is not grouping sets' Expand (an
        # ungrouped aggregate makes its one row from no rows too).
        if (node.keys and used and all(i < n_keys for i in used)
                and node.mode is pl.AggMode.SINGLE and not isinstance(node.child, pl.Expand)
                and all(isinstance(node.keys[i], (ex.ColumnRef, ex.Literal)) for i in used)):
            movable.append(_substitute(p, node.keys))
        else:
            stay.append(p)
    child = _push(node.child, movable)
    if node.keys and _is_empty(child):
        return _empty(node)  # no groups (an ungrouped aggregate still makes its one row)
    return _on_top(replace(node, child=child), stay)


def _into_join(node: pl.HashJoin, preds: list[ex.Expr]) -> pl.Node:
    n_left = len(node.left.fields)
    keep_left, keep_right = _PRESERVED.get(node.join_type, (False, False))
    to_left, to_right, stay = [], [], []
    for p in preds:
        used = ex.columns_used(p)
        if used and keep_left and all(i < n_left for i in used):
            to_left.append(p)
        elif used and keep_right and all(i >= n_left for i in used) \
                and node.join_type not in (pl.JoinType.SEMI, pl.JoinType.ANTI,
                                           pl.JoinType.ANTI_NULL_AWARE):
            to_right.append(ex.map_columns(p, {i: i - n_left for i in used}))
        else:
            stay.append(p)
    left, right = _push(node.left, to_left), _push(node.right, to_right)
    return _on_top(replace(node, left=left, right=right), stay)
