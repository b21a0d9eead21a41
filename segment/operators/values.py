"""Values: constant rows (SELECT without FROM, INSERT ... VALUES) as one batch.

A column of plain literals of the field's type is built in one call; otherwise each cell
is evaluated by segment.expr over a one-row batch without columns (they are constant), and
the column is concatenated and cast to its field's type.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from planner import expr as ex
from planner import plan
from planner.types import Kind, SqlType
from segment.operators import base


class ValuesOp:
    def __init__(self, node: plan.Values):
        self.node = node
        self.schema = base.schema_of(node.fields)

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        rows = self.node.rows
        if not rows:
            return
        if not self.schema.names:
            yield base.rows_without_columns(len(rows))
            return
        columns = []
        for j, f in enumerate(self.schema):
            cells = [row[j] for row in rows]
            col = _literal_column(cells, self.node.fields[j].type)
            columns.append(col if col is not None else _evaluated_column(cells, f.type, ctx.now))
        yield pa.RecordBatch.from_arrays(columns, schema=self.schema)


def _literal_column(exprs: list[ex.Expr], t: SqlType) -> pa.Array | None:
    """A column of plain literals built in one call (INSERT ... VALUES of many rows);
    None when some cell needs the evaluator (expressions, scaled numerics, intervals)."""
    if t.is_scaled_int or t.kind is Kind.INTERVAL or t.is_array and (
            t.elem.is_scaled_int or t.elem.kind is Kind.INTERVAL):
        return None
    if not all(isinstance(e, ex.Literal) and _same_kind(e, t) for e in exprs):
        return None
    try:
        return pa.array([e.value for e in exprs], t.arrow_type())
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def _same_kind(e: ex.Literal, t: SqlType) -> bool:
    return e.value is None or e.type is t or e.type == t or (e.type.is_integer and t.is_integer) \
        or (e.type.is_string and t.is_string)


def _evaluated_column(exprs: list[ex.Expr], to: pa.DataType, now) -> pa.Array:
    one = base.rows_without_columns(1)
    parts = [base.cast(_as_array(base.evaluate(e, one, now)), to) for e in exprs]
    return pa.concat_arrays(parts) if len(parts) > 1 else parts[0]


def _as_array(v) -> pa.Array:
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks()
    if isinstance(v, pa.Scalar):
        return pa.array([v.as_py()], v.type)
    return v


@base.register(plan.Values)
def _build(node: plan.Values, build_child) -> ValuesOp:
    return ValuesOp(node)
