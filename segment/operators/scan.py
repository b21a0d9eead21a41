"""Scan: read this segment's shard of a table, chunk by chunk.

Only the columns the node outputs are read (projection pushdown); the node's filter is
evaluated on each chunk right after reading (its costlier conjuncts only on the rows the
cheaper ones kept: predicate_stages.py), and chunks whose statistics prove the filter
false are not read at all (chunk_pruning.py). A chunk becomes one batch (its column chunks
combined), and small chunks or heavily filtered ones are concatenated, so operators above
see large batches. Columns a chunk stores dictionary-encoded stay so (base.register says
who decodes them). Which chunks exist as of the query's snapshot is the store's business
(segment/storage); this operator only asks for `snapshot(table_id, txn_id)` and `read`.

Rows a DELETE or UPDATE removed are dropped as each chunk is read (its deletion file).
The system columns (planner/schema.py SYSTEM_COLUMNS, negative positions) are made here:
the segment's id and each row's id (chunk number and position), which DELETE and UPDATE
read to find their target rows again, and a Fetch above to read late columns
(fetch.py: the chunks behind row ids are noted in `ExecContext.row_id_chunks`).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

from planner import errors
from planner import plan
from planner.schema import ROW_ID, SEGMENT_ID
from segment.operators import base
from segment.operators import chunk_pruning
from segment.operators.predicate_stages import PredicateStages
from segment.storage import deletions


class ScanOp:
    def __init__(self, node: plan.Scan):
        self.node = node
        self.schema = base.schema_of(node.fields)
        cols = [node.table.column(c) for c in node.columns]
        self._col_types = [c.type for c in cols]
        self._col_names = [c.name for c in cols]
        # A column listed twice (SELECT a, a) is read once; system columns are made.
        self._read_names = list(dict.fromkeys(
            c.name for c, pos in zip(cols, node.columns) if pos >= 0))
        self.counters = {"chunks_read": 0, "chunks_skipped": 0}
        self.stages = PredicateStages(node.filter) if node.filter is not None else None
        # (output column, join_filter.KeyFilter): a hash join's build keys, set by the
        # join above before the first chunk is read
        self.key_filters: list = []

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        if ctx.store is None:
            raise errors.InternalError("scan needs a shard store in the execution context")
        chunks = base.table_snapshot(ctx, self.node.table)
        return base.coalesce(self._chunks(ctx, chunks), self.schema)

    def _chunks(self, ctx: base.ExecContext, chunks):
        """(batch of the chunk's passing rows or None, rows read) per chunk read."""
        for chunk in chunks:
            if chunk.live_rows == 0:
                continue
            if self._pruned(chunk):
                self.counters["chunks_skipped"] += 1
                continue
            ctx.check_cancel()
            self.counters["chunks_read"] += 1
            batch = self._read(ctx, chunk)
            if self.key_filters:
                batch = self._join_keys(batch)
                if batch.num_rows == 0:
                    yield None, chunk.rows
                    continue
            if self.stages is not None:
                batch = self.stages.apply(ctx, batch)
                self.stages.count_into(self.counters)
            yield batch, chunk.rows

    def _join_keys(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows whose join key is one of the build keys (join_filter.py)."""
        for column, kf in self.key_filters:
            if not kf.active or batch.num_rows == 0:
                continue
            kept = kf.positions(batch.column(column))
            if kept is not None:
                self.counters["key_filtered"] = self.counters.get("key_filtered", 0) + \
                    batch.num_rows - len(kept)
                batch = batch.take(pa.array(kept))
        return batch

    def _pruned(self, chunk) -> bool:
        """Whether the chunk's statistics prove the filter false, or put the key of a join
        above outside its build keys' range."""
        stats = getattr(chunk, "stats", None) or {}
        for column, kf in self.key_filters:
            st = stats.get(self._col_names[column])
            if st is not None and kf.disjoint(st.min, st.max):
                return True
        if self.node.filter is None:
            return False

        def stats_of(i: int):
            st = stats.get(self._col_names[i]) if self.node.columns[i] >= 0 else None
            return None if st is None else (st, self._col_types[i])

        return chunk_pruning.can_skip(self.node.filter, stats_of, chunk.rows)

    def _read(self, ctx: base.ExecContext, chunk) -> pa.RecordBatch:
        deleted = ctx.store.deleted_positions(chunk)
        if not self.node.columns:
            return base.rows_without_columns(chunk.live_rows)
        got = base.table_to_batch(ctx.store.read(chunk, self._read_names)) \
            if self._read_names else None
        table_id = self.node.table.id
        cols = [got.column(name) if pos >= 0 else _system_column(pos, ctx, chunk, table_id)
                for pos, name in zip(self.node.columns, self._col_names)]
        batch = base.conform(pa.RecordBatch.from_arrays(cols, names=self.schema.names),
                             self.schema, dictionaries=True)
        if deleted is not None:
            batch = batch.filter(pa.array(deletions.keep_mask(chunk.rows, deleted)))
        return batch


def _system_column(position: int, ctx: base.ExecContext, chunk, table_id: int) -> pa.Array:
    if position == SEGMENT_ID:
        return pa.array(np.full(chunk.rows, ctx.segment_id, np.int32))
    if position == ROW_ID:
        # A Fetch above may read this chunk's rows by these ids (segment/operators/fetch.py)
        ctx.row_id_chunks.setdefault(table_id, {})[chunk.number] = chunk
        first = chunk.number << 32
        return pa.array(np.arange(first, first + chunk.rows, dtype=np.int64))
    raise errors.InternalError(f"no system column at position {position}")


@base.register(plan.Scan, dictionaries=True)
def _build(node: plan.Scan, build_child) -> ScanOp:
    return ScanOp(node)
