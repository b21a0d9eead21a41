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
                text = str(exc)
                error = (errors.NumericOutOfRange if "overflow" in text.lower()
                         or "out of bounds" in text.lower() else errors.DatatypeMismatch)
                raise error(f"column {f.name!r} of type {arr.type} does not fit {f.type}: "
                            f"{text}") from None
        if not f.nullable and arr.null_count:
            raise errors.NotNullViolation(
                f'null value in column "{f.name}" violates not-null constraint')
        columns.append(arr)
    return batch if batch.schema == schema else pa.RecordBatch.from_arrays(columns, schema=schema)
