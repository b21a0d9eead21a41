"""Sort: order all input rows by the node's keys; with `limit`, keep only the top K.

Key expressions are evaluated once per input batch and kept beside the rows. A full sort
holds its input under the query's memory budget (ExecContext.memory): when a batch does
not fit, what is held is sorted and written to disk as a run, and at the end the runs are
merged (sort_merge.py), so memory stays near the budget however large the input; without
a spill it sorts in memory as before. Top-K keeps the best K candidates of each batch and
re-selects among the candidates whenever they pile up, so it holds O(K + batch) rows
whatever the input size and never spills. Top-K keeps dictionary-encoded string columns
encoded (only its K output rows get decoded); a full sort decodes its input.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import expr as ex
from planner import plan
from segment import memory
from segment.operators import base
from segment.kernels import sort_order
from segment.operators import ordering
from segment.operators import sort_merge


class SortOp:
    def __init__(self, node: plan.Sort, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)
        self.memory: memory.Reservation | None = None  # (EXPLAIN ANALYZE reads it)
        # Keys that are not plain columns cost memory of their own.
        self._own_keys = [not isinstance(k.expr, ex.ColumnRef) for k in node.keys]

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        k = self.node.limit
        if k is not None and k <= 0:
            return iter(())
        return self._top_k(ctx, k) if k is not None else self._full(ctx)

    def _full(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        if not self.schema.names:  # no columns: only the number of rows matters
            n = sum(b.num_rows for b in self.child.execute(ctx))
            if n:
                yield base.rows_without_columns(n)
            return
        self.memory = res = ctx.memory.reservation()
        rows: list[pa.RecordBatch] = []
        keys: list[list[pa.Array]] = []
        runs: list[memory.SpillFile] = []
        try:
            for batch in self.child.execute(ctx):
                if not batch.num_rows:
                    continue
                b_keys = ordering.key_arrays(batch, self.node.keys, ctx.now)
                batch = base.conform(batch, self.schema)  # decoded: all rows go out
                size = batch.nbytes + sum(a.nbytes for a, own in zip(b_keys, self._own_keys)
                                          if own)
                if not res.try_grow(size):
                    if rows:  # what is held becomes a sorted run on disk
                        runs.append(sort_merge.write_run(res, rows, keys, self.node.keys,
                                                         self.schema))
                        rows, keys = [], []
                        res.free()
                    if not res.try_grow(size):
                        res.grow(size)  # one batch is always held, whatever the budget
                rows.append(batch)
                keys.append(b_keys)
            if not runs:
                if rows:
                    yield from self._emit(rows, keys, None)
                return
            if rows:
                runs.append(sort_merge.write_run(res, rows, keys, self.node.keys, self.schema))
                rows, keys = [], []
                res.free()
            yield from base.coalesce(((self._payload(b), b.num_rows) for b in sort_merge.merge(
                res, runs, self.node.keys, len(self.schema), ctx.check_cancel)), self.schema)
        finally:
            memory.close_all(runs)
            res.free()

    def _payload(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        n = len(self.schema)
        return pa.RecordBatch.from_arrays(batch.columns[:n], names=self.schema.names)

    def _top_k(self, ctx: base.ExecContext, k: int) -> Iterator[pa.RecordBatch]:
        rows: list[pa.RecordBatch] = []
        keys: list[list[pa.Array]] = []
        held = 0
        for batch in self.child.execute(ctx):
            if not batch.num_rows:
                continue
            b_keys = ordering.key_arrays(batch, self.node.keys, ctx.now)
            # Encoded strings stay so: only the K rows kept are decoded, above.
            batch = base.conform(batch, self.schema, dictionaries=True)
            if batch.num_rows > k:
                idx = sort_order.top_k_indices(b_keys, self.node.keys, k)
                batch, b_keys = _take(batch, idx), [a.take(idx) for a in b_keys]
            rows.append(batch)
            keys.append(b_keys)
            held += batch.num_rows
            if held > 2 * max(k, base.MIN_BATCH_ROWS):
                batch, b_keys = self._reduce(rows, keys, k)
                rows, keys, held = [batch], [b_keys], batch.num_rows
        if rows:
            yield from self._emit(rows, keys, k)

    def _reduce(self, rows, keys, k):
        """The best k rows among the candidates, as one batch and its keys."""
        batch = base.concat_batches(rows, self.schema)
        arrays = [_concat([ks[i] for ks in keys]) for i in range(len(self.node.keys))]
        idx = sort_order.top_k_indices(arrays, self.node.keys, k)
        return _take(batch, idx), [a.take(idx) for a in arrays]

    def _emit(self, rows, keys, k) -> Iterator[pa.RecordBatch]:
        arrays = [_concat([ks[i] for ks in keys]) for i in range(len(self.node.keys))]
        if k is None:
            idx = sort_order.sort_indices(arrays, self.node.keys)
        else:
            idx = sort_order.top_k_indices(arrays, self.node.keys, k)
        if not self.schema.names:
            yield base.rows_without_columns(len(idx))
            return
        if k is not None:  # few rows, maybe dictionary-encoded: concatenating unifies them
            yield _take(base.concat_batches(rows, self.schema), idx)
            return
        # Taking from the batches as they are saves concatenating them first.
        out = pa.Table.from_batches(rows, self.schema).take(idx)
        yield from out.to_batches(max_chunksize=base.BATCH_ROWS)


def _concat(arrays: list[pa.Array]) -> pa.Array:
    return arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)


def _take(batch: pa.RecordBatch, idx: pa.Array) -> pa.RecordBatch:
    if batch.num_columns == 0:
        return base.rows_without_columns(len(idx))
    return batch.take(idx)


@base.register(plan.Sort, dictionaries=True)
def _build(node: plan.Sort, build_child) -> SortOp:
    return SortOp(node, build_child(node.child))
