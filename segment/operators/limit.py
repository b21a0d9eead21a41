"""Limit: skip `offset` rows, then pass at most `limit` rows (None: no limit); with ties
(FETCH ... WITH TIES) also the rows after those whose sort keys equal the last one's.

The child is not pulled once the limit is reached: its generator is closed, so work below
(scans, motions) stops early.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from planner import plan
from segment.operators import base


class LimitOp:
    def __init__(self, node: plan.Limit, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        limit, skip = self.node.limit, max(0, self.node.offset)
        if limit is not None and limit <= 0:
            return
        it = self.child.execute(ctx)
        try:
            for batch in it:
                n = batch.num_rows
                if skip >= n:
                    skip -= n
                    continue
                if skip:
                    batch, skip = batch.slice(skip), 0
                    n = batch.num_rows
                if limit is not None and n >= limit:
                    yield base.conform(batch.slice(0, limit), self.schema)
                    if self.node.ties and limit > 0:
                        yield from self._ties(batch, limit, it)
                    return
                if limit is not None:
                    limit -= n
                yield base.conform(batch, self.schema)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()


    def _ties(self, batch: pa.RecordBatch, passed: int, it) -> Iterator[pa.RecordBatch]:
        """The rows after the first `passed` of `batch` (and of later batches) that are
        peers of row passed-1 under the sort keys; NULLs are peers of NULLs."""
        cols = [k.expr.index for k in self.node.ties]
        last = [_plain(batch.column(c))[passed - 1] for c in cols]
        rest = batch.slice(passed)
        while True:
            if rest.num_rows:
                same = None
                for c, value in zip(cols, last):
                    col = _plain(rest.column(c))
                    eq = pc.is_null(col) if not value.is_valid else \
                        pc.fill_null(pc.equal(col, value), False)
                    same = eq if same is None else pc.and_(same, eq)
                stop = pc.index(same, False).as_py()
                if stop != 0:
                    yield base.conform(rest if stop < 0 else rest.slice(0, stop), self.schema)
                if stop >= 0:
                    return
            rest = next(it, None)
            if rest is None:
                return


def _plain(col: pa.Array) -> pa.Array:
    return col.dictionary_decode() if pa.types.is_dictionary(col.type) else col


@base.register(plan.Limit)
def _build(node: plan.Limit, build_child) -> LimitOp:
    return LimitOp(node, build_child(node.child))
