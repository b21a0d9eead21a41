"""A table's NOT NULL and CHECK constraints over a batch of new rows, vectorized.

Every writer calls `check` before a batch leaves it (coordinator/writer.py for INSERT and
COPY FROM STDIN, the segments' insert_select and copy_from_file), so a statement whose rows
break a constraint fails before it commits anything. The error is the one PostgreSQL's
row-at-a-time executor raises first: the lowest failing row; in it NOT NULL (by column)
before CHECK (by constraint name, as PostgreSQL sorts them); a CHECK that is NULL passes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner.schema import TableDef
from planner.types import Kind
from segment.expr import evaluate
from segment.kernels.expr_cast import to_text


def check(table: TableDef, batch: pa.RecordBatch, now=None) -> None:
    """Raise 23502 or 23514 for the first row of `batch` (in the table's column order)
    that breaks a constraint of `table`."""
    if batch.num_rows == 0:
        return
    failures: list[tuple[int, int, errors.QueryError]] = []
    for i, col in enumerate(table.columns):
        if col.not_null and batch.column(i).null_count:
            row = _first(batch.column(i).is_null())
            failures.append((row, i, errors.NotNullViolation(
                f'null value in column "{col.name}" of relation "{table.name}" violates '
                "not-null constraint", detail=_failing_row(table, batch, row))))
    for order, k in enumerate(sorted(table.checks, key=lambda k: k.name), len(table.columns)):
        result = evaluate(k.expr, batch, now)
        if isinstance(result, pa.ChunkedArray):
            result = result.combine_chunks()
        if isinstance(result, pa.Scalar):
            if result.is_valid and not result.as_py():
                failures.append((0, order, _violation(table, k.name, batch, 0)))
            continue
        failed = pc.equal(result, False).fill_null(False)
        if pc.any(failed).as_py():
            row = _first(failed)
            failures.append((row, order, _violation(table, k.name, batch, row)))
    if failures:
        raise min(failures, key=lambda f: f[:2])[2]


def _violation(table: TableDef, name: str, batch: pa.RecordBatch, row: int
               ) -> errors.QueryError:
    return errors.QueryError(f'new row for relation "{table.name}" violates check '
                             f'constraint "{name}"', "23514",
                             detail=_failing_row(table, batch, row))


def _failing_row(table: TableDef, batch: pa.RecordBatch, row: int) -> str | None:
    """PostgreSQL's DETAIL: `Failing row contains (1, null, abc).`, each value as its
    type's text output (None when a value has no text form here)."""
    try:
        texts = [_text(batch.column(i).slice(row, 1), c.type) for i, c in enumerate(table.columns)]
    except (errors.QueryError, pa.ArrowException, KeyError, TypeError, ValueError):
        return None
    return "Failing row contains (" + ", ".join(
        "null" if t is None else t for t in texts) + ")."


def _text(value: pa.Array, t) -> str | None:
    if t.kind is Kind.BOOL:  # boolout's t/f, where a cast to text says true/false
        v = value[0].as_py()
        return None if v is None else ("t" if v else "f")
    return to_text(value, t)[0].as_py()


def _first(mask: pa.Array) -> int:
    return int(np.flatnonzero(mask.fill_null(False).to_numpy(zero_copy_only=False))[0])
