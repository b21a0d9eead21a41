"""COPY FROM in PostgreSQL's binary format (PGCOPY): CopyData bytes in, conformed batches out.

The stream is an 11-byte signature, Int32 flags, an Int32-length header extension, then
tuples (Int16 field count; per field an Int32 length, -1 for NULL, and the value in the
type's send/recv format) and an Int16 -1 trailer. A numba kernel walks whole tuples and
records where every field starts; numpy then decodes each column in one go (big-endian
integers and floats, dates and timestamps from the 2000-01-01 epoch, interval, UTF-8 text,
json as its text, jsonb after its version byte); arrays are copy_binary_array's.
Numerics are rewritten by a second kernel into decimal text, so convert.conform rounds and
checks them exactly as it does for TEXT input. For COPY TO ... BINARY this module gives
the PGCOPY header and trailer and a vectorized numeric_send for scaled-int64 numerics;
coordinator/copy_out frames the tuples, with pgwire's binary cells for the other types.
"""

from __future__ import annotations

import struct

import numba
import numpy as np
import pyarrow as pa

from planner import errors, temporal
from planner.schema import ColumnDef
from planner.types import Kind
from segment.ingest import convert, copy_binary_array
from segment.kernels import eras

SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
HEADER = SIGNATURE + struct.pack("!ii", 0, 0)   # no OIDs, no header extension
TRAILER = struct.pack("!h", -1)
BLOCK_BYTES = 8 << 20
BATCH_ROWS = 1 << 18
PG_EPOCH_DAYS = 10_957                           # 2000-01-01 in days since 1970-01-01
PG_EPOCH_MICROS = PG_EPOCH_DAYS * 86_400_000_000
_FIXED = {Kind.INT2: ">i2", Kind.INT4: ">i4", Kind.INT8: ">i8", Kind.FLOAT4: ">f4",
          Kind.FLOAT8: ">f8", Kind.DATE: ">i4", Kind.TIMESTAMP: ">i8",
          Kind.TIMESTAMPTZ: ">i8", Kind.BOOL: "u1", Kind.TIME: ">i8"}
MORE, TRAILER_SEEN, BAD_COUNT, BAD_SIZE = 0, 1, 2, 3


@numba.njit(cache=True, nogil=True)
def _scan(buf, pos, ncols, starts, lengths):  # pragma: no cover - compiled
    """Walk whole tuples from buf[pos]: fill starts/lengths (rows x ncols) until the
    trailer, a tuple not wholly in buf, a malformed tuple, or full arrays.
    Returns (rows, position after them, state, detail)."""
    n = buf.shape[0]
    rows = 0
    while rows < starts.shape[0]:
        if pos + 2 > n:
            return rows, pos, MORE, 0
        count = (np.int32(buf[pos]) << 8) | np.int32(buf[pos + 1])
        if count >= 0x8000:
            count -= 0x10000
        if count == -1:
            return rows, pos + 2, TRAILER_SEEN, 0
        if count != ncols:
            return rows, pos, BAD_COUNT, count
        p = pos + 2
        for c in range(ncols):
            if p + 4 > n:
                return rows, pos, MORE, 0
            size = ((np.int64(buf[p]) << 24) | (np.int64(buf[p + 1]) << 16)
                    | (np.int64(buf[p + 2]) << 8) | np.int64(buf[p + 3]))
            if size >= 0x80000000:
                size -= 0x100000000
            p += 4
            if size < -1:
                return rows, pos, BAD_SIZE, size
            starts[rows, c] = p
            lengths[rows, c] = size
            if size > 0:
                if p + size > n:
                    return rows, pos, MORE, 0
                p += size
        pos = p
        rows += 1
    return rows, pos, MORE, 0


@numba.njit(cache=True, nogil=True)
def _gather(src, starts, lens, offsets):  # pragma: no cover - compiled
    """Concatenate src[starts[i]:starts[i]+lens[i]] (offsets: their prefix sums)."""
    out = np.empty(offsets[-1], np.uint8)
    for i in range(starts.shape[0]):
        o, s = offsets[i], starts[i]
        for k in range(lens[i]):
            out[o + k] = src[s + k]
    return out


_SPECIAL = {0xC000: b"NaN", 0xD000: b"Infinity", 0xF000: b"-Infinity"}
_NAN, _PINF, _NINF = (np.frombuffer(v, np.uint8) for v in _SPECIAL.values())


@numba.njit(cache=True, nogil=True)
def _int16(buf, p):  # pragma: no cover - compiled
    v = (np.int32(buf[p]) << 8) | np.int32(buf[p + 1])
    return v - 0x10000 if v >= 0x8000 else v


@numba.njit(cache=True, nogil=True)
def _numeric_text(buf, starts, lengths):  # pragma: no cover - compiled
    """Binary numerics (NBASE 10000 digits) as decimal text, as numeric_out writes them.
    Returns (row start offsets, text bytes, row end offsets, first malformed row or -1)."""
    n = starts.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    for r in range(n):  # pass 1: an upper bound of each text's length
        extra = 0
        if lengths[r] >= 8:
            weight = _int16(buf, starts[r] + 2)
            extra = 12 + 4 * max(weight + 1, 1) + (_int16(buf, starts[r] + 6) & 0xFFFF)
        offsets[r + 1] = offsets[r] + extra
    out = np.zeros(offsets[n], np.uint8)
    ends = offsets.copy()
    for r in range(n):
        size, s, o = lengths[r], starts[r], offsets[r]
        if size < 0:
            continue
        if size < 8:
            return offsets, out, ends, r
        ndigits, weight = _int16(buf, s), _int16(buf, s + 2)
        sign, dscale = _int16(buf, s + 4) & 0xFFFF, _int16(buf, s + 6)
        if ndigits < 0 or dscale < 0 or size != 8 + 2 * ndigits:
            return offsets, out, ends, r
        if sign == 0xC000 or sign == 0xD000 or sign == 0xF000:
            word = _NAN if sign == 0xC000 else (_PINF if sign == 0xD000 else _NINF)
            out[o:o + word.shape[0]] = word
            ends[r + 1] = o + word.shape[0]
            continue
        if sign == 0x4000:
            out[o] = 45  # '-'
            o += 1
        elif sign != 0:
            return offsets, out, ends, r
        if weight < 0:
            out[o] = 48
            o += 1
        for d in range(weight + 1):  # integer part; only the first digit drops its zeros
            dig = _int16(buf, s + 8 + 2 * d) if d < ndigits else 0
            if dig < 0 or dig >= 10000:
                return offsets, out, ends, r
            for div in (1000, 100, 10, 1):
                if d > 0 or dig >= div or div == 1:
                    out[o] = 48 + (dig // div) % 10
                    o += 1
        if dscale > 0:
            out[o] = 46  # '.'
            o += 1
            written, d = 0, weight + 1
            while written < dscale:
                dig = _int16(buf, s + 8 + 2 * d) if 0 <= d < ndigits else 0
                for div in (1000, 100, 10, 1):
                    if written < dscale:
                        out[o] = 48 + (dig // div) % 10
                        o += 1
                        written += 1
                d += 1
        ends[r + 1] = o
    return offsets, out, ends, -1


class BinaryCopyParser:
    """Streaming parser of COPY FROM data in binary format: `feed`, `finish`, `rows`,
    like copy_text.CopyParser."""

    def __init__(self, columns: list[ColumnDef], fmt=None, options=None,
                 table: str | None = None, block_bytes: int = BLOCK_BYTES,
                 batch_rows: int = BATCH_ROWS):
        self.rows = 0
        self._columns, self._table = list(columns), table
        self._block, self._batch_rows = block_bytes, batch_rows
        self._pending: list[bytes] = []
        self._size, self._want = 0, block_bytes
        self._header_done = False
        self._trailer_seen = False

    def feed(self, data: bytes) -> list[pa.RecordBatch]:
        if not data:
            return []
        if self._trailer_seen:
            raise errors.BadCopyFileFormat("received copy data after EOF marker")
        self._pending.append(bytes(data))
        self._size += len(data)
        if self._size < self._want:
            return []
        return self._drain(final=False)

    def finish(self) -> list[pa.RecordBatch]:
        out = self._drain(final=True)
        if self._size:
            raise self._at(errors.BadCopyFileFormat("unexpected EOF in COPY data"), self.rows + 1)
        if not self._header_done:
            raise errors.BadCopyFileFormat("COPY file signature not recognized")
        return out

    def _drain(self, final: bool) -> list[pa.RecordBatch]:
        buf = b"".join(self._pending)
        pos, out = 0, []
        if not self._header_done:
            pos = self._read_header(buf, final)
            if pos < 0:
                self._want = self._size + 1
                return []
        view = np.frombuffer(buf, np.uint8)
        ncols = len(self._columns)
        while pos < len(buf) and not self._trailer_seen:
            cap = min(self._batch_rows, (len(buf) - pos) // (2 + 4 * ncols) + 1)
            starts = np.empty((cap, ncols), np.int64)
            lengths = np.empty((cap, ncols), np.int64)
            rows, pos, state, detail = _scan(view, pos, ncols, starts, lengths)
            if rows:
                out.append(self._decode(view, starts[:rows], lengths[:rows]))
            if state == TRAILER_SEEN:
                self._trailer_seen = True
                if pos < len(buf):
                    raise errors.BadCopyFileFormat("received copy data after EOF marker")
            elif state == BAD_COUNT:
                raise self._at(errors.BadCopyFileFormat(
                    f"row field count is {detail}, expected {ncols}"), self.rows + 1)
            elif state == BAD_SIZE:
                raise self._at(errors.BadCopyFileFormat("invalid field size"), self.rows + 1)
            elif rows < cap:
                break  # the next tuple is not complete yet
        rest = buf[pos:]
        self._pending, self._size = ([rest] if rest else []), len(rest)
        self._want = self._block if out or not rest else 2 * len(rest)
        return out

    def _read_header(self, buf: bytes, final: bool) -> int:
        if len(buf) < 19:
            if final or (buf and not SIGNATURE.startswith(buf[:11])):
                raise errors.BadCopyFileFormat("COPY file signature not recognized")
            return -1
        if buf[:11] != SIGNATURE:
            raise errors.BadCopyFileFormat("COPY file signature not recognized")
        flags, ext = struct.unpack_from("!iI", buf, 11)
        if flags & (1 << 16):
            raise errors.BadCopyFileFormat("invalid COPY file header (WITH OIDS)")
        if flags & ~0xFFFF & ~(1 << 16):
            raise errors.BadCopyFileFormat("unrecognized critical flags in COPY file header")
        if ext >= 1 << 31:
            raise errors.BadCopyFileFormat("invalid COPY file header (missing length)")
        if len(buf) < 19 + ext:
            if final:
                raise errors.BadCopyFileFormat("invalid COPY file header (wrong length)")
            return -1
        self._header_done = True
        return 19 + ext

    # --- columns ------------------------------------------------------------------------
    def _decode(self, view: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
        try:
            batch = self._convert(view, starts, lengths)
        except errors.QueryError as e:
            raise self._at(e, self.rows + getattr(e, "row", 0) + 1,
                           getattr(e, "column", None)) from None
        self.rows += batch.num_rows
        return batch

    def _convert(self, view: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
        try:
            arrays = []
            for c, col in enumerate(self._columns):
                try:
                    arrays.append(_column(view, starts[:, c], lengths[:, c], col))
                except errors.QueryError as e:
                    e.column = col.name
                    raise
            batch = pa.RecordBatch.from_arrays(arrays, names=[c.name for c in self._columns])
            return convert.conform(batch, self._columns, self._table)
        except errors.QueryError as e:
            row = getattr(e, "row", 0)
            if row > 0:  # columns decode one after another: an earlier row may fail too
                self._convert(view, starts[:row], lengths[:row])
            raise

    def _at(self, e: errors.QueryError, line: int, column: str | None = None):
        where = f"COPY {self._table}, line {line}" if self._table else f"COPY, line {line}"
        return e.with_context(where + (f", column {column}" if column else ""))


def _bad(row: int) -> errors.QueryError:
    e = errors.QueryError("incorrect binary data format", "22P03")
    e.row = row
    return e


def _validity(valid: np.ndarray) -> pa.Buffer | None:
    return None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))


def _column(view: np.ndarray, starts: np.ndarray, lengths: np.ndarray, col: ColumnDef):
    """One column of a run of tuples, in the Arrow type nearest to the SQL type."""
    kind, n = col.type.kind, len(starts)
    valid = lengths >= 0
    if kind in _FIXED or kind in (Kind.INTERVAL, Kind.TIMETZ):
        width = {Kind.INTERVAL: 16, Kind.TIMETZ: 12}.get(kind) or np.dtype(_FIXED[kind]).itemsize
        wrong = valid & (lengths != width)
        if wrong.any():
            raise _bad(int(np.flatnonzero(wrong)[0]))
        live = starts[valid]
        raw = _gather(view, live, np.full(len(live), width, np.int64),
                      np.arange(len(live) + 1, dtype=np.int64) * width).reshape(-1, width)
        if kind is Kind.INTERVAL:
            return _interval(raw, valid)
        if kind is Kind.TIMETZ:
            return _timetz(raw, valid)
        values = np.zeros(n, np.dtype(_FIXED[kind]).newbyteorder("="))
        values[valid] = raw.view(_FIXED[kind]).ravel()
        if kind is Kind.BOOL:
            return pa.array(values != 0, mask=~valid)
        if kind is Kind.DATE:
            return _epoch(values, valid, PG_EPOCH_DAYS, pa.date32(), 2**31 - 1, -2**31)
        if kind is Kind.TIME:
            return _time(values, valid)
        if kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
            return _epoch(values, valid, PG_EPOCH_MICROS, col.type.arrow_type(),
                          2**63 - 1, -2**63)
        return pa.array(values, mask=None if valid.all() else ~valid)
    if kind is Kind.NUMERIC:
        offsets, data, ends, bad = _numeric_text(view, starts, lengths)
        if bad >= 0:
            raise _bad(int(bad))
        return _strings(data, offsets[:-1], ends[1:] - offsets[:-1], valid)
    if kind is Kind.JSONB:  # jsonb_recv: a version byte (1), then the text
        present = valid & (lengths > 0)
        version = np.where(present, view[np.where(present, starts, 0)], 1)
        wrong = (valid & ~present) | (version != 1)
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            e = errors.QueryError("insufficient data left in message", "08P01") \
                if not present[row] else \
                errors.InternalError(f"unsupported jsonb version number {int(version[row])}")
            e.row = row
            raise e
        starts, lengths = starts + valid, np.where(valid, lengths - 1, lengths)
    if kind in (Kind.TEXT, Kind.VARCHAR, Kind.CHAR, Kind.JSON, Kind.JSONB):
        lens = np.where(valid, lengths, 0)
        text = _strings(view, starts, lens, valid)
        try:
            text.validate(full=True)
        except pa.ArrowInvalid:
            for r, v in enumerate(text.cast(pa.large_binary()).to_pylist()):
                try:
                    v is None or v.decode("utf-8")
                except UnicodeDecodeError as u:
                    bad = " ".join(f"0x{b:02x}" for b in u.object[u.start:u.end])
                    e = errors.QueryError(f'invalid byte sequence for encoding "UTF8": {bad}',
                                          "22021")
                    e.row = r
                    raise e from None
        return text
    if kind in (Kind.BYTEA, Kind.UUID):  # bytearecv / uuid_recv: the bytes themselves
        lens = np.where(valid, lengths, 0)
        return _strings(view, starts, lens, valid, pa.large_binary())
    if col.type.is_array:  # arrays, int2vector, oidvector
        return copy_binary_array.decode(view, starts, lengths, col.type, _column)
    raise errors.FeatureNotSupported(f"binary COPY of type {col.type.sql()}")


def _strings(src: np.ndarray, starts: np.ndarray, lens: np.ndarray, valid: np.ndarray,
             layout: pa.DataType = pa.large_string()):
    """A large_string array of src[starts[i]:starts[i]+lens[i]], gathered with numpy
    (large_binary: any bytes, NUL too)."""
    offsets = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = _gather(src, starts.astype(np.int64), lens.astype(np.int64), offsets)
    if layout == pa.large_binary():
        return pa.Array.from_buffers(layout, len(lens), [
            _validity(valid), pa.py_buffer(offsets), pa.py_buffer(data)])
    if (data == 0).any():
        e = errors.QueryError('invalid byte sequence for encoding "UTF8": 0x00', "22021")
        e.row = int(np.searchsorted(offsets, np.flatnonzero(data == 0)[0], side="right") - 1)
        raise e
    return pa.LargeStringArray.from_buffers(len(lens), pa.py_buffer(offsets), pa.py_buffer(data),
                                            _validity(valid))


def _epoch(values: np.ndarray, valid: np.ndarray, shift: int, target: pa.DataType,
           plus_inf: int, minus_inf: int) -> pa.Array:
    # +/-infinity are the same extreme integers in raympp's layout (kernels/infinite.py)
    infinite = (values == plus_inf) | (values == minus_inf)
    raw = values.astype(np.int64)
    beyond = valid & ~infinite & (raw > np.iinfo(np.int64).max - shift)
    if beyond.any():  # a timestamp of PostgreSQL's last 30 years: not in raympp's int64
        e = eras.beyond_int64()
        e.row = int(np.flatnonzero(beyond)[0])
        raise e
    shifted = np.where(infinite, raw, raw + shift)
    physical = pa.int32() if pa.types.is_date(target) else pa.int64()
    arr = pa.array(shifted.astype(physical.to_pandas_dtype()), mask=None if valid.all() else ~valid)
    # date_recv / timestamp_recv: 22008 outside PostgreSQL's range (infinities aside)
    eras.check_range(pa.array(shifted.astype(physical.to_pandas_dtype()),
                              mask=~(valid & ~infinite)).view(target),
                     1 if pa.types.is_date(target) else eras.US_PER_DAY)
    return arr.view(target)


def _time(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    """time_recv: microseconds since midnight (24:00:00, which PostgreSQL has, is 0A000)."""
    day = 86_400_000_000
    out_of_range = errors.QueryError("time out of range", "22008")
    for bad, e in ((values == day, errors.FeatureNotSupported("time 24:00:00 is not supported")),
                   ((values < 0) | (values > day), out_of_range)):
        bad &= valid
        if bad.any():
            e.row = int(np.flatnonzero(bad)[0])
            raise e
    return pa.array(values.astype(np.int64), mask=None if valid.all() else ~valid).cast(
        pa.time64("us"))


def _timetz(raw: np.ndarray, valid: np.ndarray) -> pa.Array:
    """timetz_recv: int64 local microseconds and int32 zone seconds west, as a struct of
    the two that convert.py packs into raympp's layout (segment/kernels/expr_timetz.py)."""
    wire = raw.view(np.dtype([("micros", ">i8"), ("zone", ">i4")])).ravel()
    micros = np.zeros(len(valid), np.int64)
    zone = np.zeros(len(valid), np.int64)
    micros[valid], zone[valid] = wire["micros"], wire["zone"]
    day = 86_400_000_000
    for bad, e in ((micros == day, errors.FeatureNotSupported("time 24:00:00 is not supported")),
                   ((micros < 0) | (micros > day) | (np.abs(zone) > 57_599),
                    errors.QueryError("time with time zone out of range", "22008"))):
        bad &= valid
        if bad.any():
            e.row = int(np.flatnonzero(bad)[0])
            raise e
    mask = None if valid.all() else pa.array(~valid)
    return pa.StructArray.from_arrays(
        [pa.array(micros), pa.array(zone)], names=list(convert.TIMETZ_PARTS), mask=mask)


def _interval(raw: np.ndarray, valid: np.ndarray) -> pa.Array:
    wire = raw.view(np.dtype([("micros", ">i8"), ("days", ">i4"), ("months", ">i4")])).ravel()
    micros = wire["micros"].astype(np.int64)
    too_long = (micros > temporal.MAX_INTERVAL_MICROS) | (micros < -temporal.MAX_INTERVAL_MICROS)
    if too_long.any():
        e = temporal.interval_time_refused()
        e.row = int(np.flatnonzero(valid)[np.flatnonzero(too_long)[0]])
        raise e
    out = np.zeros(len(valid), np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")]))
    out["months"][valid], out["days"][valid] = wire["months"], wire["days"]
    out["nanos"][valid] = wire["micros"].astype(np.int64) * 1000
    return pa.Array.from_buffers(pa.month_day_nano_interval(), len(valid),
                                 [_validity(valid), pa.py_buffer(out.tobytes())])


# --- encoding (COPY TO ... BINARY) ----------------------------------------------------------
def numeric_cells(arr: pa.Array, scale: int) -> pa.Array:
    """numeric_send of scaled int64 values (numeric(p<=18, scale)), vectorized: a binary
    cell per value, NULL where the value is NULL. The value's base-10000 digits are laid
    out around the decimal point, leading and trailing zero digits dropped, as PostgreSQL
    stores them."""
    n = len(arr)
    v = arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    mag = np.abs(v)
    whole, frac = mag // 10**scale, mag % 10**scale
    groups = [(whole // 10000**k) % 10000 for k in range(4, -1, -1)]  # weights 4 .. 0
    for j in range(-(-scale // 4)):  # fraction groups: decimal places 4j+1 .. 4j+4
        shift = scale - 4 * (j + 1)
        groups.append((frac // 10**shift) % 10000 if shift >= 0 else
                      (frac % 10**(scale - 4 * j)) * 10**-shift)
    digits = np.stack(groups, axis=1)
    nonzero = digits != 0
    some = nonzero.any(axis=1)
    first = np.argmax(nonzero, axis=1)
    last = digits.shape[1] - 1 - np.argmax(nonzero[:, ::-1], axis=1)
    ndigits = np.where(some, last - first + 1, 0)
    cells = np.empty((n, 4 + digits.shape[1]), ">i2")
    cells[:, 0] = ndigits
    cells[:, 1] = np.where(some, 4 - first, 0)
    cells[:, 2] = np.where(v < 0, 0x4000, 0)
    cells[:, 3] = scale
    cells[:, 4:] = digits
    column = np.arange(digits.shape[1])
    keep = np.ones(cells.shape, bool)
    keep[:, 4:] = some[:, None] & (column >= first[:, None]) & (column <= last[:, None])
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(8 + 2 * ndigits, out=offsets[1:])
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    return pa.BinaryArray.from_buffers(pa.binary(), n, [
        _validity(valid), pa.py_buffer(offsets), pa.py_buffer(cells[keep].view(np.uint8))])
