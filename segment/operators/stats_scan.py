"""StatsScan: per-chunk statistics of this segment's shard, one row per chunk.

The manifest already holds each chunk's rows and per-column null counts and bounds
(segment/storage/stats.py), so count(*), count(col), min(col) and max(col) over a whole
table cost a look at the snapshot's chunk list, not a read. A bound the statistics do not
know (a string longer than they keep, a column with no statistics) is computed by reading
that one column of that one chunk, as are the bounds of a chunk with deleted rows
(its statistics may name a deleted row's value). The first row is neutral (0 rows, NULL bounds): an
empty shard then still gives count 0, and it changes no sum, min or max.
"""

from __future__ import annotations

import decimal
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner import plan
from segment.operators import base
from segment.storage import stats as stats_mod

ChunkStat = plan.ChunkStat


class StatsScanOp:
    def __init__(self, node: plan.StatsScan):
        self.node = node
        self.schema = base.schema_of(node.fields)
        self.counters = {"chunks": 0, "chunks_read": 0}

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        if ctx.store is None:
            raise errors.InternalError("stats scan needs a shard store in the execution context")
        chunks = [c for c in base.table_snapshot(ctx, self.node.table) if c.live_rows]
        self.counters["chunks"] = len(chunks)
        columns: list[list] = [[0 if kind in (ChunkStat.ROWS, ChunkStat.NON_NULL) else None]
                               for kind, _ in self.node.stats]
        for chunk in chunks:
            ctx.check_cancel()
            read: dict[str, pa.Array] = {}
            for out, (kind, column) in zip(columns, self.node.stats):
                out.append(self._figure(ctx, chunk, kind, column, read))
        arrays = [_array(values, f.type) for values, f in zip(columns, self.schema)]
        yield pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _figure(self, ctx, chunk, kind: ChunkStat, column: int | None, read: dict):
        if kind is ChunkStat.ROWS:
            return chunk.live_rows
        col = self.node.table.columns[column]
        # A chunk's statistics describe its stored rows; after deletes they are bounds of
        # rows some of which are gone, so the live rows are read instead.
        st = chunk.stats.get(col.name) if not chunk.deleted else None
        if kind is ChunkStat.NON_NULL:
            return chunk.live_rows - st.null_count if st is not None else \
                chunk.live_rows - self._column(ctx, chunk, col.name, read).null_count
        if st is not None and st.null_count == chunk.live_rows:
            return None
        bound = None if st is None else (st.min if kind is ChunkStat.MIN else st.max)
        if bound is not None and not _maybe_truncated(bound):
            return bound
        arr = self._column(ctx, chunk, col.name, read)
        value = (pc.min if kind is ChunkStat.MIN else pc.max)(arr)
        return _physical(value)

    def _column(self, ctx, chunk, name: str, read: dict) -> pa.Array:
        if name not in read:
            self.counters["chunks_read"] += 1
            col = ctx.store.read_live(chunk, [name]).column(0).combine_chunks()
            read[name] = col.dictionary_decode() if pa.types.is_dictionary(col.type) else col
        return read[name]


def _maybe_truncated(bound) -> bool:
    """Statistics keep a string min as a prefix of MAX_STRING_CHARS characters."""
    return isinstance(bound, str) and len(bound) >= stats_mod.MAX_STRING_CHARS


def _physical(value: pa.Scalar):
    """A scalar read from a chunk in the physical form statistics use."""
    if not value.is_valid:
        return None
    t = value.type
    if pa.types.is_date32(t):
        return value.cast(pa.int32()).as_py()
    if pa.types.is_timestamp(t):
        return value.cast(pa.int64()).as_py()
    if pa.types.is_decimal(t):
        return str(value.as_py())
    return value.as_py()


def _array(values: list, t: pa.DataType) -> pa.Array:
    """Statistics values (physical: days, microseconds, decimal strings) as an array of t."""
    if pa.types.is_date32(t):
        return pa.array(values, pa.int32()).cast(t)
    if pa.types.is_timestamp(t):
        return pa.array(values, pa.int64()).cast(t)
    if pa.types.is_decimal(t):
        return pa.array([None if v is None else decimal.Decimal(v) for v in values], t)
    return pa.array(values, t)


@base.register(plan.StatsScan)
def _build(node: plan.StatsScan, build_child) -> StatsScanOp:
    return StatsScanOp(node)
