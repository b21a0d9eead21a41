"""A LEFT JOIN whose preserved side is much the smaller becomes a RIGHT JOIN with the
sides swapped, so the hash table holds the small side and the big one streams past it.

The join's right child is built into memory (segment/operators/hash_join.py). For
`customer LEFT JOIN orders` (TPC-H Q13) that is 1.5M orders with their comments, held
and spilled, to probe 150K customers; as `orders RIGHT JOIN customer` it is 150K keys,
and the customers that matched nothing come out at the end (the hash join tracks which
build rows matched, residual included). The result is the same rows: a Project puts the
columns back in the order the query wrote, and the residual reads the swapped positions.
Only with estimates that say so (SWAP_RATIO) and join keys; other outer joins and SEMI /
ANTI joins keep their sides.
"""

from __future__ import annotations

from planner import estimate
from planner import expr as ex
from planner import plan as pl

SWAP_RATIO = 2.0  # the right side must be estimated this many times the left


def outer_build_side(node: pl.Node) -> pl.Node:
    return pl.transform(node, _swap)


def _swap(node: pl.Node) -> pl.Node:
    if not (isinstance(node, pl.HashJoin) and node.join_type is pl.JoinType.LEFT
            and node.left_keys):
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
