"""Block nested-loop join: a join whose build side outgrows the budget and cannot be
split by key hash (no keys, as a nested loop or a decorrelated subquery's non-equality
join; or keys motion.hashing cannot hash).

The build rows go to a spill file. The probe side is read once into another; then the
build rows are read back in blocks, each as big as the budget grants (at least one
batch), and each block is joined with every probe row read back from disk. What a row
needs across blocks is kept as a bitmap over all probe rows (one byte a row, not counted
in the budget):

- INNER, and the pairs of LEFT / RIGHT / FULL: emitted per block.
- RIGHT / FULL: a block's unmatched build rows come after that block's pass, since every
  probe row has been seen by then.
- LEFT / FULL / ANTI: the probe rows no block matched, after the last block.
- SEMI: each probe row once, in the block that first matches it.

ANTI_NULL_AWARE (NOT IN) is not run this way: whether one NULL anywhere on the build side
rejects everything needs the whole side at once, so that join still holds it.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

from planner import plan
from segment import memory
from segment.operators import base
from segment.operators.join_grace import held_bytes

J = plan.JoinType


def can_run(node: plan.HashJoin) -> bool:
    return node.join_type is not J.ANTI_NULL_AWARE


class BlockJoin:
    """One join's spilled build side: fed the build rows, then run over the probe rows."""

    def __init__(self, op, res: memory.Reservation):
        self.op = op
        self.node: plan.HashJoin = op.node
        self.res = res
        self.build = res.spill_file()
        self.probe: memory.SpillFile | None = None
        self.build_rows = 0
        self.levels = 1
        self.blocks = 0

    def close(self) -> None:
        memory.close_all([self.build, self.probe])

    def add_build(self, batch: pa.RecordBatch) -> None:
        self.build_rows += batch.num_rows
        self.build.write(batch)

    def run(self, ctx: base.ExecContext, probe: Iterator[pa.RecordBatch]):
        """(output batch, work) pairs, as HashJoinOp._join gives them."""
        left_schema = base.schema_of(self.node.left.fields)
        self.probe = self.res.spill_file()
        for batch in probe:
            ctx.check_cancel()
            if batch.num_rows:
                self.probe.write(base.conform(batch, left_schema))
        jt = self.node.join_type
        matched = np.zeros(self.probe.rows, np.bool_)
        for block in self._blocks():
            self.blocks += 1
            table = self.op.make_table(block)
            build_matched = np.zeros(table.n, np.bool_) if jt in (J.RIGHT, J.FULL) else None
            yield from self._pass(ctx, table, matched, build_matched)
            if build_matched is not None:
                yield from self.op._unmatched_build(table, build_matched)
            self.res.free()
        if jt in (J.LEFT, J.FULL, J.ANTI):
            start = 0
            for batch in self.probe.batches():
                n = batch.num_rows
                keep = ~matched[start:start + n]
                start += n
                yield (self.op._left_only(batch, keep) if jt is not J.ANTI
                       else self.op._rows(batch, keep)), n

    def _blocks(self) -> Iterator[pa.RecordBatch]:
        """The build rows in blocks the budget holds (a block has at least one batch)."""
        held: list[pa.RecordBatch] = []
        for b in self.build.batches():
            size = held_bytes(b)
            if held and not self.res.try_grow(size):
                yield base.concat_batches(held, held[0].schema)
                held = []
                self.res.free()
            if not held:
                self.res.grow(size)
            held.append(b)
        if held:
            yield base.concat_batches(held, held[0].schema)

    def _pass(self, ctx, table, matched: np.ndarray, build_matched: np.ndarray | None):
        """Every probe row (read back from disk) against one block's table."""
        jt = self.node.join_type
        emits = jt in (J.INNER, J.LEFT, J.RIGHT, J.FULL)
        start = 0
        for batch in self.probe.batches():
            n = batch.num_rows
            keys = table.encode_probe([batch.column(i) for i in self.node.left_keys])
            groups = table.groups(keys, n)
            mine = np.zeros(n, np.bool_)
            for pi, bi in table.pairs(groups, base.BATCH_ROWS):
                ctx.check_cancel()
                work = len(pi)
                if self.node.residual is not None:
                    keep = self.op.qualifies(ctx, batch, table.batch, pi, bi)
                    pi, bi = pi[keep], bi[keep]
                mine[pi] = True
                if build_matched is not None:
                    build_matched[bi] = True
                if emits:
                    yield (self.op._pairs_batch(batch, table.batch, pi, bi)
                           if len(pi) else None), work
            if jt is J.SEMI:
                yield self.op._rows(batch, mine & ~matched[start:start + n]), n
            matched[start:start + n] |= mine
            start += n
