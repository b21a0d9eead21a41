"""Fetch: late materialization, the columns a top-K did not need read for its rows alone.

Each input row carries a row id (planner/schema.py ROW_ID: chunk number << 32 | position
in the chunk) made by a Scan below in the same slice (planner/rules/late_fetch.py builds
the shape). The rows are grouped by chunk, each chunk's `columns` are read as the scan
reads them (memory-mapped, dictionary-encoded strings kept) and the rows' positions
taken; the input order is then restored. The chunk behind a number is the one the Scan
read, which it noted in `ExecContext.row_id_chunks`: the same snapshot, so the fetched
values belong to the very rows the scan let through (its deletion files and filter
applied), whatever commits meanwhile (chunk files never change, and none that a running
slice may read is deleted: storage's vacuum waits for idle).

Choosing the rows is the child's business; this operator never drops or reorders any.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

from planner import errors
from planner import plan
from segment.operators import base

_POSITION = np.int64(0xFFFF_FFFF)


class FetchOp:
    def __init__(self, node: plan.Fetch, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)
        n_in = len(node.child.fields)
        self._fetched = base.schema_of(node.fields[n_in:])
        self._read = [node.table.column(c).name for c in node.columns]
        self._names = list(dict.fromkeys(self._read))
        self.counters = {"fetched_rows": 0, "fetched_chunks": 0}

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        for batch in self.child.execute(ctx):
            if batch.num_rows:
                yield self._fetch(ctx, batch)

    def _fetch(self, ctx: base.ExecContext, batch: pa.RecordBatch) -> pa.RecordBatch:
        ids = batch.column(self.node.row_id).to_numpy(zero_copy_only=False)
        numbers = ids >> 32
        order = np.argsort(numbers, kind="stable")
        by_chunk = numbers[order]
        starts = np.flatnonzero(np.r_[True, by_chunk[1:] != by_chunk[:-1]])
        chunks = ctx.row_id_chunks.get(self.node.table.id, {})
        pieces = []
        for lo, hi in zip(starts, np.r_[starts[1:], len(order)]):
            chunk = chunks.get(int(by_chunk[lo]))
            if chunk is None:
                raise errors.InternalError(
                    f"fetch of {self.node.table.name}: chunk {int(by_chunk[lo])} was not "
                    "scanned in this slice")
            ctx.check_cancel()
            positions = pa.array(ids[order[lo:hi]] & _POSITION)
            got = ctx.store.read(chunk, self._names).take(positions)
            cols = [_decoded(got.column(name).combine_chunks()) for name in self._read]
            pieces.append(base.conform(pa.RecordBatch.from_arrays(
                cols, names=self._fetched.names), self._fetched, dictionaries=True))
        self.counters["fetched_rows"] += batch.num_rows
        self.counters["fetched_chunks"] += len(pieces)
        fetched = base.concat_batches(pieces, self._fetched)
        if len(pieces) > 1:  # (one chunk's rows were taken in their input order)
            back = np.empty(len(order), dtype=np.int64)
            back[order] = np.arange(len(order), dtype=np.int64)  # sorted place of each row
            fetched = fetched.take(pa.array(back))
        return pa.RecordBatch.from_arrays(batch.columns + fetched.columns,
                                          names=self.schema.names)


def _decoded(column: pa.Array) -> pa.Array:
    """A dictionary-encoded column of fewer rows than its dictionary has values, decoded:
    the rows of a chunk keep that chunk's whole dictionary, and putting the pieces of
    several chunks together unified their dictionaries (ClickBench Q24: 700 ms to fetch
    20 rows, Motion sending dictionaries of 100,000s of URLs for them)."""
    if pa.types.is_dictionary(column.type) and len(column.dictionary) > len(column):
        return column.dictionary_decode()
    return column


@base.register(plan.Fetch, dictionaries=True)
def _build(node: plan.Fetch, build_child) -> FetchOp:
    return FetchOp(node, build_child(node.child))
