"""Incoming batches -> tables of a chunk's size, in exactly the table's schema.

Writers (INSERT, COPY, CREATE TABLE AS, motion receivers) hand the store batches of any
size whose columns are named like the table's; here they are cast to the table's types
(safely: overflow is an error, never a wrap), checked against NOT NULL, and regrouped into
tables of exactly `chunk_rows` rows (the last one smaller) without copying the data.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

from planner import errors


def chunked(batches: Iterable[pa.RecordBatch | pa.Table], schema: pa.Schema,
            chunk_rows: int) -> Iterator[pa.Table]:
    """Tables of exactly chunk_rows rows, then the rest, from batches conformed to schema."""
    pending: list[pa.RecordBatch] = []
    rows = 0
    for item in batches:
        for batch in item.to_batches() if isinstance(item, pa.Table) else (item,):
            batch = conform(batch, schema)
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            rows += batch.num_rows
            while rows >= chunk_rows:
                table = pa.Table.from_batches(pending, schema)
                yield table.slice(0, chunk_rows)
                rest = table.slice(chunk_rows)
                pending, rows = rest.to_batches(), rest.num_rows
    if rows:
        yield pa.Table.from_batches(pending, schema)


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """The batch with the table's schema: same column names, types cast safely."""
    if not isinstance(batch, pa.RecordBatch):
        raise TypeError(f"expected pyarrow RecordBatch, got {type(batch).__name__}")
    if batch.schema.names != schema.names:
        raise errors.DatatypeMismatch(
            f"columns {batch.schema.names} do not match the table's columns {schema.names}")
    columns = []
    for arr, f in zip(batch.columns, schema):
        if arr.type != f.type:
            try:
                arr = arr.cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                numbers = _is_number(arr.type) and _is_number(f.type)
                if numbers and isinstance(exc, pa.ArrowInvalid):  # a value out of range
                    raise errors.NumericOutOfRange(
                        f"column {f.name!r}: value out of range for {f.type}: {exc}") from None
                raise errors.DatatypeMismatch(
                    f"column {f.name!r} is of type {f.type} but the value is of type "
                    f"{arr.type}: {exc}") from None
        if not f.nullable and arr.null_count:
            raise errors.NotNullViolation(
                f'null value in column "{f.name}" violates not-null constraint')
        columns.append(arr)
    return batch if batch.schema == schema else pa.RecordBatch.from_arrays(columns, schema=schema)


def _is_number(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
