"""The smaller side of a join is the one hashed: a LEFT JOIN whose preserved side is much
the smaller becomes a RIGHT JOIN with the sides swapped, and a SEMI or ANTI join whose
left side is the smaller builds its left side (`HashJoin.build_left`).

The join's right child is built into memory (segment/operators/hash_join.py). For
`customer LEFT JOIN orders` (TPC-H Q13) that is 1.5M orders with their comments, held
and spilled, to probe 150K customers; as `orders RIGHT JOIN customer` it is 150K keys,
and the customers that matched nothing come out at the end (the hash join tracks which
build rows matched, residual included). The result is the same rows: a Project puts the
columns back in the order the query wrote, and the residual reads the swapped positions.
Only with estimates that say so (SWAP_RATIO) and join keys; other outer joins keep their
sides.

A semi or anti join cannot swap its children (it outputs its left side), so it keeps
them and hashes the left one: TPC-H Q21's EXISTS and NOT EXISTS over lineitem hashed 6M
and 2M lineitem rows (spilling both) to look up 80K; built the other way they hash the
80K and the lineitems stream past, marking what they match. NOT IN (null-aware) keeps
its right side built: its NULL rules read the whole subquery side first.
"""

from __future__ import annotations

from dataclasses import replace

from planner import estimate
from planner import expr as ex
from planner import plan as pl

SWAP_RATIO = 2.0  # the right side must be estimated this many times the left


def build_side(node: pl.Node) -> pl.Node:
    return pl.transform(node, _choose)


def _choose(node: pl.Node) -> pl.Node:
    if not (isinstance(node, pl.HashJoin) and node.left_keys):
        return node
    if node.join_type in (pl.JoinType.SEMI, pl.JoinType.ANTI):
        small_left = estimate.rows(node.left) * SWAP_RATIO < estimate.rows(node.right)
        return replace(node, build_left=small_left) if small_left != node.build_left else node
    if node.join_type is not pl.JoinType.LEFT:
        return node
    if estimate.rows(node.left) * SWAP_RATIO >= estimate.rows(node.right):
        return node
    nl, nr = len(node.left.fields), len(node.right.fields)
    moved = {i: nr + i for i in range(nl)}
    moved.update({nl + j: j for j in range(nr)})
    residual = ex.map_columns(node.residual, moved) if node.residual is not None else None
    join = pl.HashJoin(node.right, node.left, pl.JoinType.RIGHT, node.right_keys,
                       node.left_keys, residual, node.right.fields + node.left.fields)
    exprs = tuple(ex.ColumnRef(moved[i], f.type, f.name) for i, f in enumerate(node.fields))
    return pl.Project(join, exprs, node.fields)
