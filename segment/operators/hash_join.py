"""Hash join (HashJoin nodes): every join type of plan.JoinType, with PostgreSQL's NULLs.

The right child is the build side: all its rows are read into one batch and hashed on the
right keys (join_table.JoinTable). Each left (probe) batch is looked up in one vectorized
call, and the (probe row, build row) pairs of its matches come out in chunks of at most
BATCH_ROWS, so a many-to-many join never holds its whole output. The residual is
evaluated on a chunk's pairs over just the columns it reads; pairs where it is true become
output rows (inner and outer joins) or mark their probe row (semi and anti joins). NULL
keys never match; without keys every pair is a candidate (a nested-loop join).

- LEFT / FULL: after a probe batch's matches, its unmatched rows with NULL right columns.
- RIGHT / FULL: a bitmap of matched build rows; the unmatched ones (NULL-key rows among
  them) come last, with NULL left columns.
- SEMI / ANTI: each qualifying left row once, in input order; without a residual no
  pairs are made at all (a row matches when its key's group is not empty).
- ANTI_NULL_AWARE (NOT IN): see join_null_aware.py.
- SEMI / ANTI with `build_left`: the left side is hashed and the right one probes it
  (join_build_left.py).

Memory: the build side is held under the query's budget (ExecContext.memory). When it
outgrows it, the join becomes a grace hash join (join_grace.py): both sides are split by
key hash into partitions on disk and `_join` runs once per partition with that
partition's JoinTable. A join that cannot be split by key (a nested loop without keys,
or keys that do not hash) becomes a block nested-loop join instead (join_blocks.py):
build blocks that fit, each joined with the probe rows spilled once and read back. Only
NOT IN without usable keys holds its build side whatever the budget.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner import expr as ex
from planner import plan
from segment import expr as sexpr
from segment import memory
from segment.operators import base
from segment.operators import join_blocks
from segment.operators import join_build_left
from segment.operators import join_filter
from segment.operators import join_grace
from segment.operators import join_null_aware
from segment.operators import join_table

J = plan.JoinType
_EMITS_PAIRS = (J.INNER, J.LEFT, J.RIGHT, J.FULL)
_FILTERS = (J.SEMI, J.ANTI, J.ANTI_NULL_AWARE)


class HashJoinOp:
    def __init__(self, node: plan.HashJoin, left: base.Operator, right: base.Operator):
        n_left, n_right = len(node.left.fields), len(node.right.fields)
        if len(node.left_keys) != len(node.right_keys):
            raise errors.InternalError("a hash join needs as many left keys as right keys")
        if not all(0 <= i < n_left for i in node.left_keys) or not all(
                0 <= i < n_right for i in node.right_keys):
            raise errors.InternalError("hash join key position out of range")
        self.node = node
        self.left = left
        self.right = right
        self.schema = base.schema_of(node.fields)
        self.right_schema = base.schema_of(node.right.fields)
        self.n_left = n_left
        self.residual_cols = (sorted(ex.columns_used(node.residual))
                              if node.residual is not None else [])
        self.counters: dict[str, int] = {}  # for EXPLAIN ANALYZE
        self.memory: memory.Reservation | None = None  # (EXPLAIN ANALYZE reads it)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        return base.coalesce(self._run(ctx), self.schema)

    def _run(self, ctx: base.ExecContext):
        self.memory = res = ctx.memory.reservation()
        try:
            if self.node.build_left:
                yield from join_build_left.run(self, ctx, res)
            else:
                yield from self.run_right_built(ctx, res, self.left.execute(ctx))
        finally:
            res.free()

    def run_right_built(self, ctx: base.ExecContext, res: memory.Reservation, probe):
        """The join with the right side built (in memory, or spilled) and `probe`, the
        left batches, probing it."""
        grace = None
        try:
            build = self._read_build(ctx, res)
            if isinstance(build, (join_grace.GraceJoin, join_blocks.BlockJoin)):
                grace = build
                self.counters["build_rows"] = grace.build_rows
                yield from grace.run(ctx, probe)
                self.counters["spill_levels"] = grace.levels
                if isinstance(grace, join_blocks.BlockJoin):
                    self.counters["blocks"] = grace.blocks
                return
            table = self.make_table(build)
            self.counters["build_rows"] = table.n
            self._push_key_filter(build)
            yield from self._join(ctx, table, probe)
        finally:
            if grace is not None:
                grace.close()

    def _push_key_filter(self, build: pa.RecordBatch) -> None:
        """Hand the build keys to the probe side's scan (join_filter.py), which has not
        read a row yet: the probe generator starts at the first probe batch."""
        target = join_filter.probe_scan(self.left, self.node.left, self.node.left_keys[0]) \
            if self.node.left_keys else None
        if target is not None:
            key_filter = join_filter.for_build(self.node, build)
            if key_filter is not None:
                target[0].key_filters.append((target[1], key_filter))

    def make_table(self, build: pa.RecordBatch) -> join_table.JoinTable:
        node = self.node
        return join_table.JoinTable(
            build, node.right_keys, tuple(node.right.fields[i].type for i in node.right_keys),
            tuple(node.left.fields[i].type for i in node.left_keys))

    def _read_build(self, ctx: base.ExecContext, res: memory.Reservation):
        """The build rows as one batch, or, once they outgrow the budget, a GraceJoin
        holding them in partitions on disk."""
        batches: list[pa.RecordBatch] = []
        grace = None
        try:
            for b in self.right.execute(ctx):
                if not b.num_rows:
                    continue
                b = base.conform(b, self.right_schema)
                if grace is not None:
                    grace.add_build(b)
                    continue
                size = join_grace.held_bytes(b)
                if not res.try_grow(size):
                    # From now on to disk: partitions by key hash, or blocks.
                    if join_grace.can_spill(self.node):
                        grace = join_grace.GraceJoin(self, res)
                    elif join_blocks.can_run(self.node):
                        grace = join_blocks.BlockJoin(self, res)
                    if grace is not None:
                        res.free()
                        for held in batches + [b]:
                            grace.add_build(held)
                        batches = []
                        continue
                    res.grow(size)  # NOT IN without keys to split by holds its build side
                batches.append(b)
        except BaseException:
            if grace is not None:
                grace.close()
            raise
        if grace is not None:
            return grace
        if not self.right_schema.names:
            return base.rows_without_columns(sum(b.num_rows for b in batches))
        return base.concat_batches(batches, self.right_schema)

    def _join(self, ctx: base.ExecContext, table: join_table.JoinTable,
              probe: Iterator[pa.RecordBatch]):
        """Join the probe batches against one build table: (output batch, work) pairs."""
        jt = self.node.join_type
        if table.n == 0 and jt in (J.INNER, J.RIGHT, J.SEMI):
            return  # nothing can match and no left row is kept: skip the probe side
        null_aware = None
        if jt is J.ANTI_NULL_AWARE:
            null_aware = join_null_aware.NullAware(table, len(self.node.left_keys),
                                                   self.node.residual is not None)
            if null_aware.rejects_all:
                return
        build_matched = np.zeros(table.n, np.bool_) if jt in (J.RIGHT, J.FULL) else None
        for batch in probe:
            if batch.num_rows:
                yield from self._probe(ctx, table, batch, build_matched, null_aware)
        if build_matched is not None:
            yield from self._unmatched_build(table, build_matched)

    def _probe(self, ctx, table, batch, build_matched, null_aware):
        jt = self.node.join_type
        n = batch.num_rows
        keys = table.encode_probe([batch.column(i) for i in self.node.left_keys])
        groups = table.groups(keys, n)
        if self.node.residual is None and jt in _FILTERS:
            matched = groups >= 0
        else:
            matched = None if jt in (J.INNER, J.RIGHT) else np.zeros(n, np.bool_)
            for pi, bi in table.pairs(groups, base.BATCH_ROWS):
                ctx.check_cancel()
                work = len(pi)
                if self.node.residual is not None:
                    keep = self.qualifies(ctx, batch, table.batch, pi, bi)
                    pi, bi = pi[keep], bi[keep]
                if matched is not None:
                    matched[pi] = True
                if build_matched is not None:
                    build_matched[bi] = True
                if jt in _EMITS_PAIRS:
                    yield (self._pairs_batch(batch, table.batch, pi, bi) if len(pi) else None), work
        if jt in (J.LEFT, J.FULL):
            yield self._left_only(batch, ~matched), n
        elif jt is J.SEMI:
            yield self._rows(batch, matched), n
        elif jt is J.ANTI:
            yield self._rows(batch, ~matched), n
        elif jt is J.ANTI_NULL_AWARE:
            rejected = null_aware.rejected(ctx, batch, keys, matched, self.qualifies)
            yield self._rows(batch, ~rejected), n

    def qualifies(self, ctx: base.ExecContext, probe: pa.RecordBatch, build: pa.RecordBatch,
                  pi: np.ndarray, bi: np.ndarray) -> np.ndarray:
        """Where the residual is true (not NULL) on the pairs (probe[pi], build[bi])."""
        cols: list = [None] * (self.n_left + build.num_columns)
        pia, bia = pa.array(pi), pa.array(bi)
        for c in self.residual_cols:
            cols[c] = (probe.column(c).take(pia) if c < self.n_left
                       else build.column(c - self.n_left).take(bia))
        r = sexpr.evaluate_columns(self.node.residual, cols, len(pi), ctx.now)
        return pc.fill_null(r, False).to_numpy(zero_copy_only=False)

    # --- output rows ----------------------------------------------------------------------
    def _batch(self, cols: list[pa.Array], n: int) -> pa.RecordBatch:
        if not self.schema.names:
            return base.rows_without_columns(n)
        return base.conform(pa.RecordBatch.from_arrays(cols, names=self.schema.names),
                            self.schema)

    def _pairs_batch(self, probe, build, pi, bi) -> pa.RecordBatch:
        pia, bia = pa.array(pi), pa.array(bi)
        return self._batch([c.take(pia) for c in probe.columns]
                           + [c.take(bia) for c in build.columns], len(pi))

    def _rows(self, batch: pa.RecordBatch, mask: np.ndarray) -> pa.RecordBatch | None:
        """The probe rows under mask (SEMI / ANTI output: left columns only)."""
        n = int(mask.sum())
        if n == 0:
            return None
        rows = batch if n == batch.num_rows else batch.filter(pa.array(mask))
        return self._batch(rows.columns, n)

    def _left_only(self, batch: pa.RecordBatch, mask: np.ndarray) -> pa.RecordBatch | None:
        n = int(mask.sum())
        if n == 0:
            return None
        rows = batch if n == batch.num_rows else batch.filter(pa.array(mask))
        return self._batch(rows.columns + [pa.nulls(n, f.type) for f in self.right_schema], n)

    def _unmatched_build(self, table: join_table.JoinTable, build_matched: np.ndarray):
        idx = np.flatnonzero(~build_matched)
        left_types = [f.type for f in base.schema_of(self.node.left.fields)]
        for start in range(0, len(idx), base.BATCH_ROWS):
            part = pa.array(idx[start:start + base.BATCH_ROWS])
            n = len(part)
            cols = ([pa.nulls(n, t) for t in left_types]
                    + [c.take(part) for c in table.batch.columns])
            yield self._batch(cols, n), n


@base.register(plan.HashJoin)
def _build(node: plan.HashJoin, build_child) -> HashJoinOp:
    return HashJoinOp(node, build_child(node.left), build_child(node.right))
