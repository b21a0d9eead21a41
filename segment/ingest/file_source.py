"""COPY ... FROM '<server file>': read a file on this host as conformed batches.

CSV and TEXT files stream through the same parser as COPY FROM STDIN (copy_text), so
escapes, headers, the end-of-data marker and error messages with line numbers are
identical; binary COPY files go through copy_binary. Parquet files are read row group by
row group with pyarrow.parquet, table columns matched to file columns by name (case
insensitively, as unquoted SQL names), then conformed like any other input. Deciding which
segment keeps which row is the caller's business.
"""

from __future__ import annotations

import errno
import os
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from planner.copy_options import CopyFormat, CopyOptions
from planner import errors
from planner.schema import ColumnDef
from segment.ingest import convert, copy_binary, copy_text

READ_BYTES = 8 << 20
PARQUET_BATCH_ROWS = 1 << 18


def read_file(path: str, options: CopyOptions, columns: list[ColumnDef],
              table: str | None = None) -> Iterator[pa.RecordBatch]:
    """Batches of the file's rows, in `options.format`, in the physical layout of
    `columns`. A file that cannot be opened raises before the first batch; the rest is
    read lazily.
    """
    if options.format is CopyFormat.PARQUET:
        return _parquet(_open(path), path, columns, table)
    return _stream(_open(path), options, columns, table)


def _open(path: str):
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        return open(path, "rb")
    except OSError as e:
        reason = e.strerror or str(e)
        if e.errno == errno.ENOENT:
            raise errors.UndefinedFile(
                f'could not open file "{path}" for reading: {reason}') from None
        if e.errno == errno.EISDIR:
            raise errors.QueryError(f'"{path}" is a directory', "42809") from None
        state = "42501" if e.errno in (errno.EACCES, errno.EPERM) else "58030"
        raise errors.QueryError(f'could not open file "{path}" for reading: {reason}',
                                state) from None


def _stream(f, options: CopyOptions, columns: list[ColumnDef],
            table: str | None) -> Iterator[pa.RecordBatch]:
    if options.format is CopyFormat.BINARY:
        parser = copy_binary.BinaryCopyParser(columns, table=table)
    else:
        parser = copy_text.CopyParser(columns, options.format, options, table=table)
    with f:
        while True:
            data = f.read(READ_BYTES)
            if not data:
                break
            yield from parser.feed(data)
        yield from parser.finish()


def _parquet(f, path: str, columns: list[ColumnDef],
             table: str | None) -> Iterator[pa.RecordBatch]:
    with f:
        try:
            pf = pq.ParquetFile(f)
        except (pa.ArrowInvalid, OSError) as e:
            raise errors.BadCopyFileFormat(f'could not read Parquet file "{path}": {e}') from None
        names = pf.schema_arrow.names
        by_name: dict[str, str] = {}
        for name in names:
            by_name.setdefault(name.lower(), name)
        chosen = []
        for col in columns:
            name = col.name if col.name in names else by_name.get(col.name.lower())
            if name is None:
                raise errors.UndefinedColumn(
                    f'column "{col.name}" does not exist in Parquet file "{path}"')
            chosen.append(name)
        done = 0
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=chosen):
            # Reorder to the table's column order: iter_batches keeps the file's order.
            arrays = [batch.column(batch.schema.get_field_index(n)) for n in chosen]
            try:
                yield convert.conform(pa.RecordBatch.from_arrays(arrays, names=chosen),
                                     columns, table)
            except errors.QueryError as e:
                column = getattr(e, "column", None)
                raise e.with_context(f"COPY {table or path}, row {done + getattr(e, 'row', 0) + 1}"
                                     + (f", column {column}" if column else "")) from None
            done += batch.num_rows
