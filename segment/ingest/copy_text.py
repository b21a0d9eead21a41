"""COPY FROM in PostgreSQL's TEXT and CSV formats: CopyData bytes in, conformed batches out.

`CopyParser` takes the client's bytes cut anywhere (inside a quoted field, inside a UTF-8
character) and parses only whole records: it waits until a block of about 8 MB has
arrived, cuts it after the last record ending, hands the block to pyarrow's multithreaded
CSV reader with every column read as a string, and passes the strings to convert.conform.
TEXT format goes through the same reader with quoting off; its backslash escapes are
protected before the split (an escaped delimiter or newline must not split) and undone
per column afterwards with Arrow string kernels, only when the block has a backslash.
Errors carry PostgreSQL's SQLSTATE and say where: 'COPY t, line 5: extra data after last
expected column'. Record errors are found by a slow Python pass only once pyarrow has
refused a block. Binary format is copy_binary's, the options copy_options's, the
TEXT escapes copy_escapes's.
"""

from __future__ import annotations

import csv
import io
import re

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from planner import errors
from planner.copy_options import CopyFormat, CopyOptions, force_columns
from planner.schema import ColumnDef
from segment.ingest import convert, copy_escapes

BLOCK_BYTES = 8 << 20   # parse when this much has arrived: big enough for pyarrow's threads
BATCH_ROWS = 1 << 18    # rows per returned batch


class CopyParser:
    """Streaming parser of COPY FROM data in TEXT or CSV format (see module docstring).

    `feed` returns the batches completed so far, `finish` the rest; `rows` counts the data
    rows parsed. `table` names the relation in error messages.
    """

    def __init__(self, columns: list[ColumnDef], fmt: CopyFormat, options: CopyOptions,
                 table: str | None = None, block_bytes: int = BLOCK_BYTES,
                 batch_rows: int = BATCH_ROWS):
        if fmt not in (CopyFormat.TEXT, CopyFormat.CSV):
            raise errors.InternalError(f"CopyParser reads TEXT and CSV, not {fmt.name}")
        self.rows = 0
        self._columns, self._table = list(columns), table
        self._csv = fmt is CopyFormat.CSV
        self._opts = options
        self._delim, self._quote = options.delimiter.encode(), options.quote.encode()
        self._escape = options.escape.encode()
        self._names = [f"c{i}" for i in range(len(columns))]
        self._block, self._batch_rows = block_bytes, batch_rows
        self._pending: list[bytes] = []
        self._size, self._want = 0, block_bytes
        self._lines = 0              # records consumed, header included: PostgreSQL's lines
        self._header = options.header
        self._done = False           # the end-of-data marker was seen
        names = [c.name for c in columns]
        self._not_null = force_columns("FORCE_NOT_NULL", options.force_not_null, names)
        self._force_null = force_columns("FORCE_NULL", options.force_null, names)
        q, e = re.escape(self._quote), re.escape(self._escape)
        self._tokens = re.compile(  # quoted fields and newlines, for a CSV escape != quote
            b"(?P<quoted>" + q + b"(?:[^" + q + e + b"]++|" + e + b".)*+(?:(?P<close>" + q
            + b")|\\Z))|\n", re.S)

    # --- streaming ----------------------------------------------------------------------
    def feed(self, data: bytes) -> list[pa.RecordBatch]:
        if self._done or not data:
            return []
        self._pending.append(bytes(data))
        self._size += len(data)
        if self._size < self._want:
            return []
        buf = b"".join(self._pending)
        out, pos = [], 0
        while not self._done and len(buf) - pos >= self._block:
            end = self._last_end(buf, pos, min(len(buf), pos + 2 * self._block))
            if end < 0:
                end = self._last_end(buf, pos, len(buf))
            if end < 0:
                break
            out += self._parse(buf[pos:end], final=False)
            pos = end
        rest = buf[pos:]
        self._pending, self._size = ([rest] if rest else []), len(rest)
        # A record longer than a block: wait for twice as much rather than rescan each feed.
        self._want = self._block if pos else 2 * self._size
        return out

    def finish(self) -> list[pa.RecordBatch]:
        buf = b"".join(self._pending)
        self._pending, self._size = [], 0
        if self._done or not buf:
            return []
        if self._csv and self._quote_open(buf):
            raise self._at(errors.BadCopyFileFormat("unterminated CSV quoted field"),
                           self._lines + 1 + self._records_before(buf, len(buf)))
        return self._parse(buf, final=True)

    # --- record boundaries --------------------------------------------------------------
    # A newline ends a record unless it is data: backslash-escaped (TEXT) or inside quotes
    # (CSV). Blocks always start at a record start, so quote state is known there.
    def _last_end(self, buf: bytes, start: int, stop: int) -> int:
        """Offset just past the last record ending in buf[start:stop], or -1."""
        if self._csv and self._escape != self._quote:
            ends = [m.end() for m in self._scan(buf, start, stop)]
            return ends[-1] if ends else -1
        nl = buf.rfind(b"\n", start, stop)
        if nl < 0 or not self._csv:
            while nl >= 0 and copy_escapes.is_escaped(buf, start, nl):
                nl = buf.rfind(b"\n", start, nl)
            return nl + 1 if nl >= 0 else -1
        quotes = buf.count(self._quote, start, nl)
        while quotes % 2:  # doubled quotes keep the parity, so counting suffices
            prev = buf.rfind(b"\n", start, nl)
            if prev < 0:
                return -1
            quotes -= buf.count(self._quote, prev, nl)
            nl = prev
        return nl + 1

    def _ends(self, buf: bytes):
        """Offsets just past each record ending of buf, in order."""
        if self._csv and self._escape != self._quote:
            yield from (m.end() for m in self._scan(buf, 0, len(buf)))
            return
        nl, prev, quotes = buf.find(b"\n"), 0, 0
        while nl >= 0:
            if self._csv:
                quotes, prev = quotes + buf.count(self._quote, prev, nl), nl
            if not (quotes % 2 if self._csv else copy_escapes.is_escaped(buf, 0, nl)):
                yield nl + 1
            nl = buf.find(b"\n", nl + 1)

    def _scan(self, buf: bytes, start: int, stop: int):
        """Record-ending newlines when the CSV escape is not the quote (a Python regex)."""
        for m in self._tokens.finditer(buf, start, stop):
            if m.group("quoted") is not None and m.group("close") is None:
                return  # an open quoted field runs to the end
            if m.group("quoted") is None:
                yield m

    def _quote_open(self, buf: bytes) -> bool:
        ends = self._last_end(buf, 0, len(buf))
        rest = buf[max(ends, 0):]
        if self._escape == self._quote:
            return rest.count(self._quote) % 2 == 1
        return any(m.group("close") is None for m in self._tokens.finditer(rest)
                   if m.group("quoted") is not None)

    def _records_before(self, buf: bytes, pos: int) -> int:
        """How many records end before offset pos."""
        return sum(1 for end in self._ends(buf[:pos]))

    def _marker(self, block: bytes, final: bool) -> int:
        """Offset where the end-of-data marker '\\.' cuts the block, or -1.

        As in PostgreSQL 15: in CSV the marker must be alone on its line; in TEXT an
        unescaped backslash-dot ends the data wherever it stands, the line's text before it
        is its last row, and anything but a newline after it is an error.
        """
        i = -1
        while True:
            i = block.find(b"\\.", i + 1)
            if i < 0:
                return -1
            after = block[i + 2:i + 4]
            ends_line = after[:1] == b"\n" or after == b"\r\n" or (final and after in (b"", b"\r"))
            if self._csv:
                if ends_line and (i == 0 or (block[i - 1] == 0x0A
                                             and self._last_end(block, 0, i) == i)):
                    return i
                continue
            if not copy_escapes.is_escaped(block, 0, i + 1):
                continue  # the backslash is itself escaped: data
            if not ends_line and (after or final):
                raise self._at(errors.BadCopyFileFormat("end-of-copy marker corrupt"),
                               self._lines + 1 + self._records_before(block, i))
            if ends_line:
                return i

    # --- blocks -------------------------------------------------------------------------
    def _parse(self, block: bytes, final: bool) -> list[pa.RecordBatch]:
        cut = self._marker(block, final)
        if cut >= 0:
            block, self._done = block[:cut], True
        if self._header and block:
            end = next(self._ends(block), len(block))
            head, block = block[:end], block[end:]
            self._header = False
            self._lines += 1
            if self._opts.header_match:
                self._match_header(head)
        if not block:
            return []
        table = self._read(block)
        batch = self._conform(table)
        n = batch.num_rows
        self._lines += n
        self.rows += n
        return [batch.slice(i, self._batch_rows) for i in range(0, n, self._batch_rows)]

    def _conform(self, table: pa.Table) -> pa.RecordBatch:
        try:
            return convert.conform(table, self._columns, self._table, self._opts.time_zone,
                                   self._opts.date_order)
        except errors.QueryError as e:
            raise self._at(e, self._lines + getattr(e, "row", 0) + 1,
                           getattr(e, "column", None)) from None

    def _prepare(self, block: bytes) -> tuple[bytes, str, pacsv.ParseOptions]:
        """What pyarrow reads for a block: its bytes (escapes made harmless), the null
        string as it appears there, and the parse options."""
        if b"\x00" in block:
            self._bad_encoding(block, block.index(b"\x00"), b"\x00")
        if self._csv:
            raw = block
            if self._escape != self._quote and self._escape in block:
                raw = self._tokens.sub(self._undo_csv_escapes, block)
            return raw, self._opts.null, pacsv.ParseOptions(
                delimiter=self._opts.delimiter, quote_char=self._opts.quote, double_quote=True,
                escape_char=False, newlines_in_values=self._quote in block,
                ignore_empty_lines=False)
        raw, null = block, self._opts.null
        if b"\\" in block:
            raw, null = self._protect(block), self._protect(null.encode()).decode()
        return raw, null, pacsv.ParseOptions(
            delimiter=self._opts.delimiter, quote_char=False, double_quote=False,
            escape_char=False, newlines_in_values=False, ignore_empty_lines=False)

    def _read(self, block: bytes, skip_bad: bool = False) -> pa.Table:
        """The block's records as a table of string columns (nulls already recognized)."""
        raw, null, po = self._prepare(block)
        if skip_bad:
            po.invalid_row_handler = lambda row: "skip"
        try:
            table = pacsv.read_csv(
                pa.py_buffer(raw),
                read_options=pacsv.ReadOptions(column_names=self._names, use_threads=True),
                parse_options=po,
                convert_options=pacsv.ConvertOptions(
                    column_types={n: pa.string() for n in self._names}, null_values=[null],
                    strings_can_be_null=True, quoted_strings_can_be_null=False))
        except pa.ArrowInvalid as e:
            if skip_bad:
                raise
            self._diagnose(block, raw, e)
            raise
        # pyarrow turns an empty line into a row of NULLs; PostgreSQL sees one empty field.
        if len(self._names) > 1 and not skip_bad and _has_empty_line(raw):
            self._diagnose(block, raw, None)
        if self._not_null or self._force_null:
            table = self._apply_force(table)
        if not self._csv and b"\\" in block:
            try:
                table = pa.table([copy_escapes.unescape(c.combine_chunks(), self._opts.delimiter)
                                  for c in table.columns], names=self._names)
            except errors.QueryError as e:
                raise self._at(e, self._lines + getattr(e, "row", 0) + 1) from None
        return table

    def _apply_force(self, table: pa.Table) -> pa.Table:
        """FORCE_NOT_NULL: an unquoted null string is that string; FORCE_NULL: a quoted
        one is NULL (pyarrow only left quoted null strings as strings)."""
        null = self._opts.null
        columns = list(table.columns)
        for i in set(self._not_null) | set(self._force_null):
            c = columns[i]
            nulls = pc.is_null(c)
            if i in self._force_null:
                c = pc.if_else(pc.equal(c, null).fill_null(False), _null_str(), c)
            columns[i] = pc.if_else(nulls, null if i in self._not_null else _null_str(), c)
        return pa.table(columns, names=self._names)

    def _protect(self, block: bytes) -> bytes:
        return copy_escapes.protect(block, self._delim)

    def _undo_csv_escapes(self, m: re.Match) -> bytes:
        # Inside quotes, escape+quote is a literal quote and escape+escape a literal
        # escape: rewrite them so pyarrow's doubled-quote rule reads them the same way.
        if m.group("quoted") is None:
            return m.group(0)
        q, e = self._quote, self._escape
        return re.sub(re.escape(e) + b"([" + re.escape(q) + re.escape(e) + b"])",
                      lambda x: q + q if x.group(1) == q else e, m.group(0))

    # --- errors -------------------------------------------------------------------------
    def _at(self, e: errors.QueryError, line: int, column: str | None = None):
        where = f"COPY {self._table}, line {line}" if self._table else f"COPY, line {line}"
        return e.with_context(where + (f", column {column}" if column else ""))

    def _bad_encoding(self, block: bytes, pos: int, bad: bytes):
        text = " ".join(f"0x{b:02x}" for b in bad)
        line = self._lines + 1 + self._records_before(block, pos)
        raise self._at(errors.QueryError(f'invalid byte sequence for encoding "UTF8": {text}',
                                         "22021"), line)

    def _diagnose(self, block: bytes, raw: bytes, cause: Exception | None):
        """Find the first bad record of a block pyarrow refused (or might have misread)."""
        try:
            block.decode("utf-8")
        except UnicodeDecodeError as u:
            self._bad_encoding(block, u.start, u.object[u.start:u.end])
        want = len(self._columns)
        for i, fields in enumerate(self._py_records(raw)):
            if len(fields) == want:
                continue
            # PostgreSQL reads row by row: bad values in earlier rows come first, and in
            # a short row the fields present are converted before the missing one is noticed.
            self._conform(self._read(block, skip_bad=True).slice(0, i))
            line = self._lines + i + 1
            if len(fields) > want:
                raise self._at(errors.BadCopyFileFormat("extra data after last expected column"),
                               line)
            for col, value in zip(self._columns, fields):
                try:
                    convert.convert(self._field_array(value), col.type)
                except errors.QueryError as e:
                    raise self._at(e, line, col.name) from None
            missing = self._columns[len(fields)].name
            raise self._at(errors.BadCopyFileFormat(f'missing data for column "{missing}"'), line)
        if cause is not None:
            raise self._at(errors.BadCopyFileFormat(str(cause)), self._lines + 1) from None

    def _py_records(self, raw: bytes) -> list[list[str]]:
        """The fields of a prepared block's records, by a slow Python pass."""
        if not self._csv:
            text = raw.decode("utf-8", "replace")
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            return [line.removesuffix("\r").split(self._opts.delimiter) for line in lines]
        reader = csv.reader(io.StringIO(raw.decode("utf-8", "replace"), newline=""),
                            delimiter=self._opts.delimiter, quotechar=self._opts.quote,
                            doublequote=True, strict=False)
        return [r or [""] for r in reader]

    def _field_array(self, value: str) -> pa.Array:
        """One field of _py_records as the string column pyarrow would have made of it."""
        if self._csv:
            return pa.array([None if value == self._opts.null else value], pa.string())
        null = self._protect(self._opts.null.encode()).decode()
        if value == null:
            return pa.array([None], pa.string())
        return copy_escapes.unescape(pa.array([value], pa.string()), self._opts.delimiter)

    def _match_header(self, head: bytes):
        records = self._py_records(self._prepare(head)[0])
        got = len(records[0]) if records else 0
        if got != len(self._columns):
            raise self._at(errors.BadCopyFileFormat(
                f"wrong number of fields in header line: got {got}, "
                f"expected {len(self._columns)}"), self._lines)
        row = self._read(head).to_pylist()[0]
        for i, (col, got) in enumerate(zip(self._columns, row.values()), start=1):
            if got is None:
                raise self._at(errors.BadCopyFileFormat(
                    f"column name mismatch in header line field {i}: got null value "
                    f'("{self._opts.null}"), expected "{col.name}"'), self._lines)
            if got != col.name:
                raise self._at(errors.BadCopyFileFormat(
                    f'column name mismatch in header line field {i}: got "{got}", '
                    f'expected "{col.name}"'), self._lines)


def _null_str() -> pa.Scalar:
    return pa.scalar(None, pa.string())


def _has_empty_line(raw: bytes) -> bool:
    return raw.startswith((b"\n", b"\r\n")) or b"\n\n" in raw or b"\n\r\n" in raw
