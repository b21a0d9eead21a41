"""A semi or anti join that hashes its left side (`HashJoin.build_left`): the left rows are
read into one JoinTable on the left keys, every right batch probes it and marks the left
rows it matches (through the residual, when there is one), and at the end the marked
(SEMI) or unmarked (ANTI) left rows come out, in their input order. The answer is the
plain hash join's: only which side is held in memory differs.

The planner chooses this when the left side is estimated the smaller. When the left rows
outgrow the budget after all, the join goes back to the usual orientation (build the
right side, spilling as it needs; the left rows read so far probe first). Those rows stay
in memory meanwhile, outside the budget: at most the budget's worth.
"""

from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np
import pyarrow as pa

from planner import plan
from segment import memory
from segment.operators import base
from segment.operators import join_grace
from segment.operators import join_table

J = plan.JoinType


def run(op, ctx: base.ExecContext, res: memory.Reservation) -> Iterator:
    """(output batch, input rows) pairs of `op` (a HashJoinOp of a build_left node)."""
    node: plan.HashJoin = op.node
    left_schema = base.schema_of(node.left.fields)
    held: list[pa.RecordBatch] = []
    left_rows = op.left.execute(ctx)
    for b in left_rows:
        if not b.num_rows:
            continue
        b = base.conform(b, left_schema)
        held.append(b)
        if not res.try_grow(join_grace.held_bytes(b)):
            res.free()
            op.counters["build_left_fallback"] = 1
            yield from op.run_right_built(ctx, res, itertools.chain(held, left_rows))
            return
    if not held:
        return  # no left row: nothing to keep, and the right side need not be read
    left = base.concat_batches(held, left_schema)
    held = []
    table = join_table.JoinTable(
        left, node.left_keys, tuple(node.left.fields[i].type for i in node.left_keys),
        tuple(node.right.fields[i].type for i in node.right_keys))
    op.counters["build_rows"] = table.n
    matched = _match(op, ctx, table, left)
    yield None, 0
    keep = matched if node.join_type is J.SEMI else ~matched
    for start in range(0, table.n, base.BATCH_ROWS):
        part = keep[start:start + base.BATCH_ROWS]
        yield op._rows(left.slice(start, len(part)), part), len(part)


def _match(op, ctx: base.ExecContext, table: join_table.JoinTable,
           left: pa.RecordBatch) -> np.ndarray:
    """Which left rows some right row matches (bool per left row)."""
    node: plan.HashJoin = op.node
    matched = np.zeros(table.n, np.bool_)
    if table.mode == "none":
        return matched  # a NULL or unmatchable key on every left row
    # Without a residual a match marks the left key's whole group; the rows of each group
    # are table.order[offsets[g]:offsets[g + 1]].
    group_hit = None if node.residual is not None else np.zeros(len(table.offsets) - 1,
                                                                np.bool_)
    for batch in op.right.execute(ctx):
        if not batch.num_rows:
            continue
        ctx.check_cancel()
        batch = base.conform(batch, op.right_schema)
        keys = table.encode_probe([batch.column(i) for i in node.right_keys])
        groups = table.groups(keys, batch.num_rows)
        if group_hit is not None:
            group_hit[groups[groups >= 0]] = True
            continue
        for ri, li in table.pairs(groups, base.BATCH_ROWS):
            ctx.check_cancel()
            keep = op.qualifies(ctx, left, batch, li, ri)
            matched[li[keep]] = True
    if group_hit is not None:
        sizes = np.diff(table.offsets)
        matched[table.order] = np.repeat(group_hit, sizes)
    return matched
