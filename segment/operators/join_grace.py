"""Grace hash join: the hash join of hash_join.py when its build side outgrows the budget.

Both sides are split by a hash of their join keys into partitions on disk
(spill_partition.py; both sides' keys hash alike exactly when they are equal, as the join
compares them), and each pair of partitions is joined by HashJoinOp._join with a
JoinTable of that build partition alone: a match never crosses partitions, and every
build and probe row is in exactly one, so inner, outer (unmatched rows of either side per
partition), semi and anti joins come out as in memory (in another row order). A build
partition that still does not fit is split again, both sides, one level down; when one
does not fit at the deepest level (one key's rows alone exceed the budget) the query
fails with 53200 out of memory rather than taking memory without bound. Rows with a NULL
key column match nothing, so they are not partitioned at all (they would all land in one
partition): build ones are dropped, or kept in a file for a RIGHT / FULL join's unmatched
rows at the end; probe ones are dropped or, for LEFT / FULL / ANTI, go out at once.

NOT IN (ANTI_NULL_AWARE) compares NULLs across partitions: build rows with a NULL key
column are kept in memory aside and joined into every partition's table, and probe rows
with a NULL key column (few, as a rule) go to a file of their own that is checked against
every partition; such a row is rejected if any partition rejects it, and the rest come
out at the end. Whether a NULL build key rejects everything is decided once, up front.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner import plan
from segment import memory
from segment.operators import base
from segment.operators import join_null_aware
from segment.operators import join_table
from segment.operators import spill_partition as sp

J = plan.JoinType
BUILD, PROBE = 0, 1
# Bytes a build row costs in a JoinTable beyond its columns: codes, groups, order, slots.
TABLE_BYTES_PER_ROW = 40


def held_bytes(batch: pa.RecordBatch) -> int:
    """What holding a build batch in a JoinTable costs."""
    return batch.nbytes + TABLE_BYTES_PER_ROW * batch.num_rows


def can_spill(node: plan.HashJoin) -> bool:
    return bool(node.right_keys) and sp.hashable(
        [node.right.fields[i].type.arrow_type() for i in node.right_keys]
        + [node.left.fields[i].type.arrow_type() for i in node.left_keys])


class GraceJoin:
    """The partitions of one join: fed the build rows, then the probe rows, then run."""

    def __init__(self, op, res: memory.Reservation):
        self.op = op
        self.node: plan.HashJoin = op.node
        self.res = res
        self.left_schema = base.schema_of(self.node.left.fields)
        self.parts = sp.Partitioned(res, [self.node.right_keys, self.node.left_keys], 0)
        self.null_aware = self.node.join_type is J.ANTI_NULL_AWARE
        self.build_null: list[pa.RecordBatch] = []  # NOT IN: build rows with a NULL key
        self.probe_null: memory.SpillFile | None = None  # NOT IN: probe rows with one
        self.build_unmatched: memory.SpillFile | None = None  # RIGHT/FULL: NULL-key rows
        self.build_rows = 0
        self.levels = 1

    def close(self) -> None:
        self.parts.close()
        memory.close_all([self.probe_null, self.build_unmatched])

    # --- input ----------------------------------------------------------------------------
    def add_build(self, batch: pa.RecordBatch) -> None:
        self.build_rows += batch.num_rows
        null = _null_key_rows(batch, self.node.right_keys)
        if null.any():
            nulls = batch.filter(pa.array(null))
            if self.null_aware:
                self.build_null.append(nulls)
                self.res.grow(held_bytes(nulls))
            elif self.node.join_type in (J.RIGHT, J.FULL):
                if self.build_unmatched is None:
                    self.build_unmatched = self.res.spill_file()
                self.build_unmatched.write(nulls)
            batch = batch.filter(pa.array(~null))
        self.parts.add(BUILD, batch)

    def run(self, ctx: base.ExecContext, probe: Iterator[pa.RecordBatch]):
        """(output batch, work) pairs, as HashJoinOp._join gives them."""
        if self.null_aware and self._rejects_all():
            return
        for batch in probe:
            ctx.check_cancel()
            if not batch.num_rows:
                continue
            batch = base.conform(batch, self.left_schema)
            null = _null_key_rows(batch, self.node.left_keys)
            if null.any():
                nulls = batch.filter(pa.array(null))
                if self.null_aware:
                    if self.probe_null is None:
                        self.probe_null = self.res.spill_file()
                    self.probe_null.write(nulls)
                else:
                    yield self._probe_unmatched(nulls)
                batch = batch.filter(pa.array(~null))
            self.parts.add(PROBE, batch)
        self.parts.finish()
        rejected = (np.zeros(self.probe_null.rows, np.bool_)
                    if self.probe_null is not None else None)
        yield from self._partitions(ctx, self.parts, rejected)
        if rejected is not None:
            yield from self._probe_null_rows(rejected)
        if self.build_unmatched is not None:
            left_types = [f.type for f in self.left_schema]
            for b in self.build_unmatched.batches():
                n = b.num_rows
                yield self.op._batch([pa.nulls(n, t) for t in left_types] + b.columns, n), n

    def _probe_unmatched(self, rows: pa.RecordBatch):
        """Probe rows that match nothing: what the join type keeps of them."""
        n = rows.num_rows
        everything = np.ones(n, np.bool_)
        jt = self.node.join_type
        if jt in (J.LEFT, J.FULL):
            return self.op._left_only(rows, everything), n
        if jt is J.ANTI:
            return self.op._rows(rows, everything), n
        return None, n

    def _rejects_all(self) -> bool:
        """NOT IN without a residual: a NULL build key (in every column of a composite
        key) makes every probe row unknown, so nothing comes out."""
        if self.node.residual is not None or not self.build_null:
            return False
        if len(self.node.right_keys) == 1:
            return True
        return any(_all_null_rows(b, self.node.right_keys).any() for b in self.build_null)

    # --- partitions -----------------------------------------------------------------------
    def _partitions(self, ctx, parts: sp.Partitioned, rejected):
        jt = self.node.join_type
        for build, probe in parts.parts:
            if not build.rows and not self.build_null and jt in (J.INNER, J.RIGHT, J.SEMI):
                continue  # nothing can match and no left row is kept
            if not probe.rows and rejected is None and jt not in (J.RIGHT, J.FULL):
                continue  # no probe rows, and no build rows to keep
            cost = build.nbytes + TABLE_BYTES_PER_ROW * build.rows
            if self.res.try_grow(cost):
                try:
                    yield from self._join_pair(ctx, build, probe, rejected)
                finally:
                    self.res.shrink(cost)
                continue
            if parts.level + 1 >= sp.MAX_DEPTH:
                raise errors.QueryError(
                    "out of memory", "53200",
                    detail=f"a hash join partition of {build.rows} build rows ({cost} bytes) "
                           f"does not fit the memory budget of {self.res.budget.limit} "
                           f"bytes after {sp.MAX_DEPTH} levels of partitioning",
                    hint="Increase work_mem, or join on keys with fewer duplicates.")
            sub = sp.Partitioned(self.res, parts.keys, parts.level + 1)
            self.levels = max(self.levels, parts.level + 2)
            try:
                for stream, part in ((BUILD, build), (PROBE, probe)):
                    for batch in _read(part, self.res.budget):
                        ctx.check_cancel()
                        sub.add(stream, batch)
                    part.close()
                sub.finish()
                yield from self._partitions(ctx, sub, rejected)
            finally:
                sub.close()

    def _join_pair(self, ctx, build: sp.Partition, probe: sp.Partition, rejected):
        batches = [b for b, _ in build.batches()] + self.build_null
        batch = base.concat_batches(batches, self.op.right_schema)
        table = self.op.make_table(batch)
        yield from self.op._join(ctx, table, _read(probe, self.res.budget))
        if rejected is not None:
            self._reject_probe_nulls(ctx, table, rejected)

    # --- NOT IN's probe rows with a NULL key -----------------------------------------------
    def _reject_probe_nulls(self, ctx, table: join_table.JoinTable, rejected: np.ndarray):
        if table.n == 0:
            return  # (NOT IN of nothing rejects nothing)
        na = join_null_aware.NullAware(table, len(self.node.left_keys),
                                       self.node.residual is not None)
        start = 0
        for batch in self.probe_null.batches():
            n = batch.num_rows
            if not rejected[start:start + n].all():
                keys = table.encode_probe([batch.column(i) for i in self.node.left_keys])
                matched = np.zeros(n, np.bool_)  # a NULL key matches nothing
                rejected[start:start + n] |= na.rejected(ctx, batch, keys, matched,
                                                         self.op.qualifies)
            start += n

    def _probe_null_rows(self, rejected: np.ndarray):
        start = 0
        for batch in self.probe_null.batches():
            n = batch.num_rows
            yield self.op._rows(batch, ~rejected[start:start + n]), n
            start += n


def _read(part: sp.Partition, budget: memory.MemoryBudget) -> Iterator[pa.RecordBatch]:
    """A partition's batches, consecutive small ones concatenated (up to a share of the
    budget), so that probing pays its per-batch cost on batches of useful size."""
    target = min(max(budget.limit // 16, 64 << 10), 16 << 20)
    held: list[pa.RecordBatch] = []
    size = 0
    for b, _ in part.batches():
        held.append(b)
        size += b.nbytes
        if size >= target:
            yield _concat(held)
            held, size = [], 0
    if held:
        yield _concat(held)


def _concat(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    return batches[0] if len(batches) == 1 else base.concat_batches(batches, batches[0].schema)


def _null_key_rows(batch: pa.RecordBatch, keys) -> np.ndarray:
    out = np.zeros(batch.num_rows, np.bool_)
    for i in keys:
        col = batch.column(i)
        if col.null_count:
            out |= pc.is_null(col).to_numpy(zero_copy_only=False)
    return out


def _all_null_rows(batch: pa.RecordBatch, keys) -> np.ndarray:
    out = np.ones(batch.num_rows, np.bool_)
    for i in keys:
        out &= pc.is_null(batch.column(i)).to_numpy(zero_copy_only=False)
    return out
