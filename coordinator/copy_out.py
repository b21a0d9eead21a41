"""COPY ... TO STDOUT: result batches -> CopyData payloads in TEXT, CSV or BINARY format.

Values are formatted by pgwire's column encoders (coordinator/pgwire/values.py), so COPY
prints exactly what a query result would: numeric at its scale ('12.30'), shortest
round-trip floats, 't'/'f', ISO dates, timestamps without trailing zeros. This module adds
only COPY's framing, column by column with Arrow string kernels: TEXT's backslash escapes
and null marker, CSV's quoting, the PGCOPY header, tuples and trailer. Rows are joined in
one kernel call per slice of a batch and cut into chunks of whole rows between 64 KB and
1 MB. Counting rows for the command tag is the caller's job.
"""

from __future__ import annotations

import re
import struct
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from coordinator.pgwire import codec, values
from planner.copy_options import CopyFormat, CopyOptions, force_columns
from planner.types import SqlType
from segment.ingest import copy_binary

SLICE_ROWS = 1 << 16        # rows joined per kernel call: keeps string offsets far from 2 GiB
_TEXT_ESCAPES = (("\\", "\\\\"), ("\b", "\\b"), ("\f", "\\f"), ("\n", "\\n"),
                 ("\r", "\\r"), ("\t", "\\t"), ("\v", "\\v"))


def encode_copy(batches: Iterable[pa.RecordBatch], types: list[SqlType], fmt: CopyFormat,
                options: CopyOptions, names: list[str] | None = None,
                zone=None) -> Iterator[bytes]:
    """CopyData payloads for the rows of `batches` (columns laid out as `types` say).
    `names` label the header line (default: the first batch's column names); timestamptz
    text is shown in `zone` (a planner.time_zones.Zone, None: UTC)."""
    out = _Chunker()
    header = fmt is not CopyFormat.BINARY and options.header
    if fmt is CopyFormat.BINARY:
        out.add(copy_binary.HEADER)
    elif header and names is not None:
        yield _header_line(names, fmt, options)
        header = False
    forced = None
    if fmt is CopyFormat.CSV and options.force_quote and names is not None:
        forced = force_columns("FORCE_QUOTE", options.force_quote, list(names))
    for batch in batches:
        if header:
            yield _header_line(batch.schema.names, fmt, options)
            header = False
        if forced is None and fmt is CopyFormat.CSV:
            forced = force_columns("FORCE_QUOTE", options.force_quote,
                                             batch.schema.names)
        for start in range(0, batch.num_rows, SLICE_ROWS):
            part = batch.slice(start, SLICE_ROWS)
            with values.text_zone(zone):
                rows = _binary_rows(part, types) if fmt is CopyFormat.BINARY else \
                    _text_rows(part, types, fmt, options, forced or [])
            yield from out.add_rows(rows)
    if fmt is CopyFormat.BINARY:
        out.add(copy_binary.TRAILER)
    yield from out.rest()


class _Chunker:
    """Hands out one CopyData payload per row, as PostgreSQL sends them: drivers such as
    psycopg parse each CopyData message as exactly one row. Bytes given to `add` (the
    binary header, the trailer) travel with the next row, or alone at the end."""

    def __init__(self):
        self._prefix = b""

    def add(self, data: bytes):
        self._prefix += data

    def add_rows(self, rows: pa.Array) -> Iterator[bytes]:
        offsets = np.frombuffer(rows.buffers()[1], np.int32)
        offsets = offsets[rows.offset:rows.offset + len(rows) + 1].tolist()
        if len(offsets) < 2:
            return
        # Offsets index the whole data buffer; copy only the span these rows use.
        base = offsets[0]
        data = rows.buffers()[2].slice(base, offsets[-1] - base).to_pybytes()
        if self._prefix:
            yield self._prefix + data[0:offsets[1] - base]
            self._prefix = b""
            offsets = offsets[1:]
        for start, end in zip(offsets, offsets[1:]):
            yield data[start - base:end - base]

    def rest(self) -> Iterator[bytes]:
        if self._prefix:
            yield self._prefix
            self._prefix = b""


# --- TEXT and CSV -------------------------------------------------------------------------
def _text_rows(batch: pa.RecordBatch, types: list[SqlType], fmt: CopyFormat,
               options: CopyOptions, forced: list[int]) -> pa.Array:
    cells = []
    for i, t in enumerate(types):
        c = values.encode_column(batch.column(i), t, codec.TEXT)
        if c.type != pa.string():
            c = c.cast(pa.string())
        cells.append(_cells(c, fmt, options, single=len(types) == 1, force=i in forced))
    return _join(cells, options.delimiter, batch.num_rows)


def _header_line(names: list[str], fmt: CopyFormat, options: CopyOptions) -> bytes:
    cells = [_cells(pa.array([n], pa.string()), fmt, options, single=len(names) == 1)
             for n in names]
    return _join(cells, options.delimiter, 1).buffers()[2].to_pybytes()


def _cells(c: pa.Array, fmt: CopyFormat, options: CopyOptions, single: bool,
           force: bool = False) -> pa.Array:
    """One column's text cells framed for TEXT (escaped) or CSV (quoted where needed)."""
    if fmt is CopyFormat.CSV:
        c = _quote_csv(c, options, single, force)
    else:
        c = _escape_text(c, options.delimiter)
    return c.fill_null(options.null)


def _escape_text(c: pa.Array, delim: str) -> pa.Array:
    special = "\\\\\b\f\n\r\t\v" + ("" if delim == "\t" else re.escape(delim))
    if not pc.any(pc.match_substring_regex(c, f"[{special}]")).as_py():
        return c
    for char, escaped in _TEXT_ESCAPES:
        c = pc.replace_substring(c, char, escaped)
    if delim != "\t":  # PostgreSQL escapes any other delimiter with a backslash
        c = pc.replace_substring(c, delim, "\\" + delim)
    return c


def _quote_csv(c: pa.Array, options: CopyOptions, single: bool, force: bool) -> pa.Array:
    q, e = options.quote, options.escape
    special = re.escape(options.delimiter) + re.escape(q) + "\r\n"
    # Quote what a reader could misread: delimiter, quote or newline inside, the null
    # string itself, and (for one column) the end-of-data marker.
    need = pc.or_(pc.match_substring_regex(c, f"[{special}]"), pc.equal(c, options.null))
    if single:
        need = pc.or_(need, pc.equal(c, "\\."))
    if force:
        need = pc.is_valid(c)
    need = need.fill_null(False)
    if not pc.any(need).as_py():
        return c
    inner = c
    if e != q:
        inner = pc.replace_substring(inner, e, e + e)
    inner = pc.replace_substring(inner, q, e + q)
    quoted = pc.binary_join_element_wise(q, inner, q, "")
    return pc.if_else(need, quoted, c)


def _join(cells: list[pa.Array], delim: str, n: int) -> pa.Array:
    if not cells:
        return pa.array(["\n"] * n, pa.string())
    line = cells[0] if len(cells) == 1 else pc.binary_join_element_wise(*cells, delim)
    return pc.binary_join_element_wise(line, "\n", "")


# --- BINARY -------------------------------------------------------------------------------
def _fixed(big_endian: np.ndarray) -> pa.Array:
    return pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(big_endian.dtype.itemsize), len(big_endian),
        [None, pa.py_buffer(big_endian.tobytes())]).cast(pa.binary())


def _binary_rows(batch: pa.RecordBatch, types: list[SqlType]) -> pa.Array:
    """PGCOPY tuples: Int16 field count, then per field Int32 length (-1 NULL) and bytes."""
    parts = [pa.scalar(struct.pack("!h", len(types)), pa.binary())]
    for i, t in enumerate(types):
        arr = batch.column(i)
        if t.is_scaled_int and pa.types.is_int64(arr.type):  # vectorized numeric_send
            cells = copy_binary.numeric_cells(arr, t.scale)
        else:
            cells = values.encode_column(arr, t, codec.BINARY).cast(pa.binary())
        lengths = pc.binary_length(cells).fill_null(-1).to_numpy(zero_copy_only=False)
        parts += [_fixed(lengths.astype(">i4")), cells.fill_null(b"")]
    if len(parts) == 1:
        return pa.array([parts[0].as_py()] * batch.num_rows, pa.binary())
    return pc.binary_join_element_wise(*parts, b"")
