"""A filter's conjuncts in stages of rising cost, each evaluated only on the rows the ones
before it kept.

A compiled loop computes what it cannot hold in registers (a LIKE, a function of strings)
as leaves over every row of the batch before it runs (segment/jit). For `URL LIKE
'%google%' AND SearchPhrase <> ''` that is the LIKE over all 5M URLs of a segment, though
87% of the rows fail the comparison. So a predicate whose conjuncts differ in cost is
cut into stages: first every conjunct over numbers, dates and comparisons of columns
(one compiled loop, or the general evaluator), then each costlier conjunct alone, in the
order written, over the survivors of the stages before. A stage reads only its own
columns of the survivors (the other columns are null placeholders), and the batch's
columns are taken once, at the end, by the positions that passed every stage.

Rows stay exactly those where every conjunct is true. A conjunct is evaluated on fewer
rows than before, never more, so an error it raises was raised before as well: the same
short-circuit freedom PostgreSQL takes when it orders a scan's quals by cost.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from planner import expr as ex
from planner.bind_join import conjoin, conjuncts
from planner.expr import Func
from segment.jit import codegen
from segment.jit.evaluate import OperatorKernel
from segment.operators import base

_COMPARISONS = frozenset({Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE})
_CHEAP, _COMPARED, _COSTLY = 0, 1, 2


class PredicateStages:
    """The stages of one operator's predicate and their compiled kernels."""

    def __init__(self, predicate: ex.Expr):
        self.predicate = predicate
        parts = conjuncts(predicate)
        costly = [c for c in parts if _cost(c) == _COSTLY]
        cheap = [c for c in parts if c not in costly]
        if not cheap or not costly:  # nothing to gain: one stage, as before
            stages = [predicate]
        else:
            stages = [conjoin(cheap)] + costly
        self.stages = [(p, OperatorKernel([], p), sorted(ex.columns_used(p))) for p in stages]

    def apply(self, ctx: base.ExecContext, batch: pa.RecordBatch) -> pa.RecordBatch | None:
        """The rows of `batch` the predicate keeps, None when none."""
        if len(self.stages) == 1:
            pred, jit, _ = self.stages[0]
            kept = base.select(batch, jit.get(ctx, batch.num_rows), ctx.now)
            if kept is False:
                kept = base.filter_batch(batch, base.evaluate(pred, batch, ctx.now))
            return kept
        positions: np.ndarray | None = None  # None: every row so far
        for pred, jit, used in self.stages:
            part = batch if positions is None else _columns_at(batch, used, positions)
            passed = _passing(ctx, pred, jit, part)
            if passed is not None:
                if len(passed) == 0:
                    return None
                positions = passed if positions is None else positions[passed]
        if positions is None:
            return batch
        if batch.num_columns == 0:
            return base.rows_without_columns(len(positions))
        return batch.take(pa.array(positions))

    def count_into(self, counters: dict) -> None:
        """EXPLAIN ANALYZE's jit counters, summed over the stages' kernels."""
        total: dict[str, int] = {}
        for _, jit, _ in self.stages:
            own: dict[str, int] = {}
            jit.count_into(own)
            for k, v in own.items():
                total[k] = total.get(k, 0) + v
        counters.update(total)


def _passing(ctx, pred: ex.Expr, jit: OperatorKernel, batch: pa.RecordBatch):
    """Positions of the rows of `batch` where pred is true; None when all are."""
    compiled = jit.get(ctx, batch.num_rows)
    out = compiled.run(batch, ctx.now) if compiled is not None else None
    if out is not None:
        sel = out[0]
    else:
        mask = base.evaluate(pred, batch, ctx.now)
        if isinstance(mask, pa.ChunkedArray):
            mask = mask.combine_chunks()
        if isinstance(mask, pa.Scalar):
            return None if mask.as_py() is True else np.empty(0, np.int64)
        sel = np.flatnonzero(mask.fill_null(False).to_numpy(zero_copy_only=False))
    return None if len(sel) == batch.num_rows else sel


def _columns_at(batch: pa.RecordBatch, used: list[int], positions: np.ndarray):
    """The rows at `positions` of the columns `used`; the others as null placeholders
    (column positions stay those the expressions name)."""
    idx = pa.array(positions)
    n = len(positions)
    wanted = set(used)
    cols = [batch.column(i).take(idx) if i in wanted else pa.nulls(n)
            for i in range(batch.num_columns)]
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def _cost(e: ex.Expr) -> int:
    """_CHEAP: all in machine registers (one compiled loop, no leaf); _COMPARED: besides,
    only columns compared with each other or tested for NULL; _COSTLY: anything that
    computes over strings or other values the loop cannot hold (LIKE, functions)."""
    cost = _CHEAP
    for node in ex.walk(e):
        if isinstance(node, ex.Like):
            return _COSTLY
        if isinstance(node, (ex.ColumnRef, ex.Literal)):
            continue
        if codegen.machine_kind(node.type) is None:
            return _COSTLY  # a computed string, json, array, ...
        args = node.children()
        if all(codegen.machine_kind(a.type) is not None for a in args):
            continue
        plain = all(isinstance(a, (ex.ColumnRef, ex.Literal)) for a in args)
        if plain and (isinstance(node, (ex.IsNull, ex.InList))
                      or (isinstance(node, ex.Call) and node.func in _COMPARISONS)):
            cost = _COMPARED
            continue
        return _COSTLY
    return cost
