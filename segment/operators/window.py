"""WindowAgg: window functions over partitions of the input.

The input is sorted by (PARTITION BY columns, ORDER BY keys) with the Sort operator
(sort.py), so large inputs spill as sorted runs and merge under the query's memory
budget. The sorted stream is cut at partition boundaries: each batch's rows up to its
last partition start are complete partitions and are evaluated at once
(window_eval.py); the rows of the partition still open wait for the next batch. An
open partition is held in memory whole (charged to the budget, beyond it if it must:
it is one partition), so a window without PARTITION BY holds its whole input.
distribute.py has already brought each partition to one process. Under a top-N
filter (`keep`) rows ranked past n are dropped as they are ranked, and row_number() over
one partition sorts only its top n rows (the Sort's top-K).
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from planner import expr as ex
from planner import plan
from planner import window
from segment.operators import base, sort, window_eval


class WindowAggOp:
    def __init__(self, node: plan.WindowAgg, child: base.Operator):
        self.node = node
        self.schema = base.schema_of(node.fields)
        self._in_schema = base.schema_of(node.child.fields)
        keys = tuple(plan.SortKey(ex.ColumnRef(i, node.child.fields[i].type)) for i in
                     node.partition) + node.order
        limit = None
        if node.keep is not None and not node.partition and all(
                c.func is window.WindowFunc.ROW_NUMBER for c in node.calls):
            limit = max(node.keep[1], 0)  # the first n rows of one partition: a top-K sort
        self.sort = sort.SortOp(plan.Sort(node.child, keys, node.child.fields, limit=limit),
                                child) if keys else None
        self.child = child
        self.memory = None  # the Sort's reservation (EXPLAIN ANALYZE reads it)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        source = self.sort if self.sort is not None else self.child
        res = ctx.memory.reservation()
        held: list[pa.RecordBatch] = []
        last: pa.RecordBatch | None = None  # the row before the batch being cut
        try:
            for batch in source.execute(ctx):
                self.memory = getattr(self.sort, "memory", None)
                if not batch.num_rows:
                    continue
                batch = base.conform(batch, self._in_schema)
                cut = self._last_start(last, batch)
                last = batch.slice(batch.num_rows - 1)
                if cut > 0 or (cut == 0 and held):
                    done = held + ([batch.slice(0, cut)] if cut else [])
                    held = []
                    res.free()
                    yield from self._emit(done)
                    batch = batch.slice(cut)
                held.append(batch)
                if not res.try_grow(batch.nbytes):
                    res.grow(batch.nbytes)  # one partition is held whole, whatever it costs
                ctx.check_cancel()
            if held:
                yield from self._emit(held)
        finally:
            res.free()

    def _last_start(self, last: pa.RecordBatch | None, batch: pa.RecordBatch) -> int:
        """Where the last partition that starts in `batch` starts (-1: none starts in it,
        it continues the partition of `last`)."""
        part = self.node.partition
        if not part:
            return -1 if last is not None else 0
        cols = [batch.column(i) for i in part]
        if last is not None:
            cols = [pa.concat_arrays([last.column(i), c]) for i, c in zip(part, cols)]
        flags = window_eval.change_flags(cols, len(cols[0]))
        if last is not None:
            flags = flags[1:]  # flags[0]: does the batch's first row differ from `last`?
        starts = flags.nonzero()[0]
        return int(starts[-1]) if len(starts) else -1

    def _emit(self, batches: list[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = base.concat_batches(batches, self._in_schema)
        if not rows.num_rows:
            return
        results = window_eval.evaluate(rows, self.node)
        cols = list(rows.columns) + [
            base.cast(r, f.type) if r.type != f.type else r
            for r, f in zip(results, list(self.schema)[len(rows.columns):])]
        out = pa.RecordBatch.from_arrays(cols, schema=self.schema)
        if self.node.keep is not None:  # a top-N filter above: rows ranked past n go now
            j, n = self.node.keep
            out = out.filter(pc.less_equal(results[j], n))
        for start in range(0, out.num_rows, base.BATCH_ROWS):
            yield out.slice(start, base.BATCH_ROWS)


@base.register(plan.WindowAgg)
def _build(node: plan.WindowAgg, build_child) -> WindowAggOp:
    return WindowAggOp(node, build_child(node.child))
