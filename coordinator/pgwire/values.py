"""Result values: Arrow columns -> PostgreSQL text/binary cells -> DataRow messages, in bulk.

Each column is encoded once per batch by one encoder chosen by its SqlType (never a type
test per value): pyarrow.compute does the work where its output matches PostgreSQL's
(integers, most floats, dates, timestamps, numeric digits), numpy packs the binary
fixed-width formats, and plain Python handles only what Arrow cannot print the PostgreSQL
way (float exponents and specials, intervals, binary numeric). `encode_data_rows` then frames a whole batch of DataRows with
Arrow string kernels, or, for a batch of a few rows, in Python (`_FEW_ROWS`). Decoding
client parameters is params.py's job.
"""

from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from coordinator.pgwire import backend, codec, numeric
from planner import errors, temporal
from planner.types import BINARY_KINDS, CATALOG_KINDS, Kind, SqlType
from segment.kernels import expr_binary as xbin
from segment.kernels import expr_cast as xcast
from segment.kernels import expr_pgarray as xpa
from segment.kernels import expr_timezone as xzone
from segment.kernels import expr_timetz as xtz
from segment.kernels import infinite
from segment.kernels import numeric_dscale as nd

PG_EPOCH_DAYS = 10_957                          # 2000-01-01 in days since 1970-01-01
PG_EPOCH_MICROS = PG_EPOCH_DAYS * 86_400 * 10**6
_NULL_CELL = pa.scalar(None, pa.binary())
_TRAILING_ZEROS = r"(\.\d*[1-9])0+$|\.0+$"      # fractional seconds print without them
_ROW_SLICE_BYTES = 32 << 20                     # keeps a framed slice far below 2 GiB
# Up to this many rows a batch is framed row by row in Python: every Arrow kernel call
# costs tens of microseconds whatever its size, the whole of a one-row result's encoding.
_FEW_ROWS = 16


# --- text format ------------------------------------------------------------------------

def float8_text(x: float) -> str:
    """float8out of PostgreSQL 12+: shortest round-trip digits, exponent outside 1e-4..1e15."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    r = repr(x)  # shortest round-trip; exponent form below 1e-4 and from 1e16, as PostgreSQL
    if "e" in r:
        return r
    if r.endswith(".0"):
        r = r[:-2]
    if abs(x) >= 1e15:  # repr stays positional up to 1e16, PostgreSQL only up to 1e15
        sign, digits = ("-", r[1:]) if r[0] == "-" else ("", r)
        digits = digits.replace(".", "").rstrip("0")
        return f"{sign}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e+15"
    return r


def float4_text(x: float) -> str:
    """float4out: the shortest digits that round-trip through float32; exponent outside
    1e-4..1e6."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    f = np.float32(x)
    sci = np.format_float_scientific(f, unique=True, trim="-", exp_digits=2)
    if -4 <= int(sci.rsplit("e", 1)[1]) < 6:
        return np.format_float_positional(f, unique=True, trim="-")
    return sci


def interval_text(months: int, days: int, micros: int) -> str:
    """EncodeInterval with IntervalStyle 'postgres': '1 year 2 mons -3 days +04:05:06.5'."""
    years = int(months / 12)  # C division truncates toward zero
    parts, is_zero, is_before = [], True, False
    for value, unit in ((years, "year"), (months - years * 12, "mon"), (days, "day")):
        if value == 0:
            continue
        plus = "+" if is_before and value > 0 else ""
        parts.append(f"{plus}{value} {unit}{'' if value == 1 else 's'}")
        is_before, is_zero = value < 0, False
    if is_zero or micros != 0:
        sign = "-" if micros < 0 else ("+" if is_before else "")
        hours, rest = divmod(abs(micros), 3_600_000_000)
        minutes, rest = divmod(rest, 60_000_000)
        seconds, fraction = divmod(rest, 1_000_000)
        clock = f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
        if fraction:
            clock += "." + f"{fraction:06d}".rstrip("0")
        parts.append(clock)
    return " ".join(parts)


def _interval_fields(arr: pa.Array) -> np.ndarray:
    """months, days, nanoseconds of a month_day_nano array, read straight off its buffer."""
    layout = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])
    if len(arr) == 0:
        return np.empty(0, dtype=layout)
    return np.frombuffer(arr.buffers()[1], dtype=layout, count=arr.offset + len(arr))[arr.offset:]


def _micros(nanos: np.ndarray) -> np.ndarray:
    return np.sign(nanos) * (np.abs(nanos) // 1000)  # truncate toward zero, as C does


def _float_text(fmt, positional_limit: float):
    """Encoder of a float column: Arrow prints the shortest round-trip digits as PostgreSQL
    does wherever both print them positionally; Python fixes the rest (exponents,
    Infinity, NaN), which are few in real data."""
    def encode(arr: pa.Array, t: SqlType) -> pa.Array:
        text = pc.cast(arr, pa.string())
        x = np.abs(arr.fill_null(0).to_numpy(zero_copy_only=False))
        with np.errstate(invalid="ignore"):
            odd = ~np.isfinite(x) | ((x < 1e-4) & (x != 0)) | (x >= positional_limit)
        has_exponent = pc.match_substring(text, "e")
        if pc.any(has_exponent).as_py():
            odd |= has_exponent.fill_null(False).to_numpy(zero_copy_only=False)
        if arr.null_count:
            odd &= arr.is_valid().to_numpy(zero_copy_only=False)
        if not odd.any():
            return text
        fixed = [fmt(v) for v in arr.filter(pa.array(odd)).to_pylist()]
        return pc.replace_with_mask(text, pa.array(odd), pa.array(fixed, pa.string()))
    return encode


def _unscaled(arr: pa.Array) -> tuple[pa.Array, int | None]:
    """A decimal column as its integer digits (scale 0) and its scale; None for int64."""
    if pa.types.is_decimal(arr.type):
        make = pa.decimal256 if arr.type.bit_width == 256 else pa.decimal128
        as_int = make(arr.type.precision, 0)
        return pa.Array.from_buffers(as_int, len(arr), arr.buffers(), offset=arr.offset), \
            arr.type.scale
    return arr, None


def _numeric_text(arr: pa.Array, t: SqlType) -> pa.Array:
    if nd.is_dynamic(arr):  # each value with its own display scale
        return nd.per_scale_text(arr, lambda dec, scale: _numeric_text(dec, t))
    digits, scale = _unscaled(arr)
    if scale is None:
        scale = t.scale or 0
    digits = pc.cast(digits, pa.string())
    if scale == 0:
        return digits
    # Insert the point by string slicing: exact for every precision, and vectorized.
    sign = pc.if_else(pc.starts_with(digits, "-"), "-", "")
    magnitude = pc.utf8_lpad(pc.utf8_ltrim(digits, "-"), width=scale + 1, padding="0")
    whole = pc.binary_join_element_wise(sign, pc.utf8_slice_codeunits(magnitude, 0, -scale), "")
    return pc.binary_join_element_wise(whole, pc.utf8_slice_codeunits(magnitude, -scale), ".")


# The zone timestamptz values print in (a planner.time_zones.Zone; None: UTC): the
# session's TimeZone, set around the encoding of a statement's rows (`text_zone`).
_TEXT_ZONE: contextvars.ContextVar = contextvars.ContextVar("text_zone", default=None)


@contextlib.contextmanager
def text_zone(zone):
    """timestamptz values encoded as text inside this block print in `zone`."""
    token = _TEXT_ZONE.set(zone)
    try:
        yield
    finally:
        _TEXT_ZONE.reset(token)


def _timestamp_text(arr: pa.Array, t: SqlType) -> pa.Array:
    zone = _TEXT_ZONE.get()
    if t.kind is Kind.TIMESTAMPTZ and zone is not None and not zone.is_utc:
        return xzone.tstz_out(None, [arr, pa.scalar(zone.spec)], len(arr))
    return infinite.text(arr, lambda a: _finite_timestamp_text(a, t))


def _finite_timestamp_text(arr: pa.Array, t: SqlType) -> pa.Array:
    naive = pa.Array.from_buffers(pa.timestamp("us"), len(arr), arr.buffers(), offset=arr.offset)
    # timestamptz values are UTC instants, shown in UTC
    return xcast.timestamp_text(naive, "+00" if t.kind is Kind.TIMESTAMPTZ else None)


def _interval_text_column(arr: pa.Array, t: SqlType) -> pa.Array:
    f = _interval_fields(arr)
    micros = _micros(f["nanos"])
    texts = [interval_text(m, d, us) for m, d, us in
             zip(f["months"].tolist(), f["days"].tolist(), micros.tolist())]
    return pc.if_else(arr.is_valid(), pa.array(texts, pa.string()), pa.scalar(None, pa.string()))


def _char_padded(arr: pa.Array, t: SqlType) -> pa.Array:
    # bpchar values print blank-padded to their declared length.
    return pc.utf8_rpad(arr, width=t.length, padding=" ") if t.length else arr


_TEXT = {
    Kind.BOOL: lambda a, t: pc.if_else(a, "t", "f"),
    Kind.INT2: lambda a, t: pc.cast(a, pa.string()),
    Kind.INT4: lambda a, t: pc.cast(a, pa.string()),
    Kind.INT8: lambda a, t: pc.cast(a, pa.string()),
    Kind.FLOAT4: _float_text(float4_text, 1e6),
    Kind.FLOAT8: _float_text(float8_text, 1e15),
    Kind.NUMERIC: _numeric_text,
    Kind.TEXT: lambda a, t: a,
    Kind.VARCHAR: lambda a, t: a,
    Kind.CHAR: _char_padded,
    Kind.DATE: lambda a, t: infinite.text(a, xcast.date_text),
    Kind.TIMESTAMP: _timestamp_text,
    Kind.TIMESTAMPTZ: _timestamp_text,
    Kind.INTERVAL: _interval_text_column,
    Kind.TIME: lambda a, t: pc.replace_substring_regex(pc.cast(a, pa.string()),
                                                       _TRAILING_ZEROS, r"\1"),
    Kind.TIMETZ: lambda a, t: xtz.to_text(a),
}


# --- binary format ----------------------------------------------------------------------

def _fixed(values: np.ndarray, nulls_from: pa.Array | None = None) -> pa.Array:
    """Cells from a numpy array of big-endian scalars or records; NULL where `nulls_from`
    has NULLs."""
    cells = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(values.dtype.itemsize), len(values),
        [None, pa.py_buffer(values.tobytes())]).cast(pa.binary())
    if nulls_from is not None and nulls_from.null_count:
        return pc.if_else(nulls_from.is_valid(), cells, _NULL_CELL)
    return cells


def _packed(big_endian: str, shift: int = 0, physical: pa.DataType | None = None,
            infinities: tuple[int, int] | None = None):
    """Encoder of a fixed-width type: its values (seen as `physical` integers, minus
    `shift` to move the epoch to 2000-01-01) in network byte order; the `infinities`
    (+/-infinity of dates and timestamps) are sent as they are, as PostgreSQL's."""
    def encode(arr: pa.Array, t: SqlType) -> pa.Array:
        values = arr.view(physical) if physical is not None else arr
        raw = values.fill_null(0).to_numpy(zero_copy_only=False)
        out = raw - shift if shift else raw
        if infinities is not None:
            out = np.where((raw == infinities[0]) | (raw == infinities[1]), raw, out)
        return _fixed(out.astype(big_endian), arr)
    return encode


def _bool_binary(arr: pa.Array, t: SqlType) -> pa.Array:
    return _fixed(arr.fill_null(False).to_numpy(zero_copy_only=False).astype(np.uint8), arr)


def _numeric_binary(arr: pa.Array, t: SqlType) -> pa.Array:
    if nd.is_dynamic(arr):  # dscale in each value's header
        value, dscale = nd.parts(arr)
        digits, storage = _unscaled(value)
        # a scale beyond the storage scale has zeros there (numeric_dscale.build)
        ints = [None if d is None else int(d) // 10**(storage - int(s)) if s <= storage
                else int(d) * 10**(int(s) - storage) for d, s in zip(digits.to_pylist(), dscale)]
        return pa.array([None if u is None else numeric.encode(u, int(s))
                         for u, s in zip(ints, dscale)], pa.binary())
    digits, scale = _unscaled(arr)
    if scale is None:
        scale = t.scale or 0
    ints = digits.to_pylist()
    if pa.types.is_decimal(digits.type):
        ints = [None if d is None else int(d) for d in ints]
    return pa.array([None if u is None else numeric.encode(u, scale) for u in ints], pa.binary())


def _interval_binary(arr: pa.Array, t: SqlType) -> pa.Array:
    f = _interval_fields(arr)
    out = np.empty(len(f), dtype=[("micros", ">i8"), ("days", ">i4"), ("months", ">i4")])
    out["micros"], out["days"], out["months"] = _micros(f["nanos"]), f["days"], f["months"]
    return _fixed(out, arr)


def _timetz_binary(arr: pa.Array, t: SqlType) -> pa.Array:
    """timetz_send: int64 local microseconds, int32 zone seconds west."""
    local, zone, _ = xtz.unpack(arr.fill_null(0))
    out = np.empty(len(arr), dtype=[("micros", ">i8"), ("zone", ">i4")])
    out["micros"], out["zone"] = local, zone
    return _fixed(out, arr)


def _utf8(arr: pa.Array, t: SqlType) -> pa.Array:
    return (_char_padded(arr, t) if t.kind is Kind.CHAR else arr).cast(pa.binary())


_BINARY = {
    Kind.BOOL: _bool_binary,
    Kind.INT2: _packed(">i2"),
    Kind.INT4: _packed(">i4"),
    Kind.INT8: _packed(">i8"),
    Kind.FLOAT4: _packed(">f4"),
    Kind.FLOAT8: _packed(">f8"),
    Kind.NUMERIC: _numeric_binary,
    Kind.TEXT: _utf8,
    Kind.VARCHAR: _utf8,
    Kind.CHAR: _utf8,
    Kind.DATE: _packed(">i4", PG_EPOCH_DAYS, pa.int32(), temporal.INFINITE_DAYS),
    Kind.TIMESTAMP: _packed(">i8", PG_EPOCH_MICROS, pa.int64(), temporal.INFINITE_MICROS),
    Kind.TIMESTAMPTZ: _packed(">i8", PG_EPOCH_MICROS, pa.int64(), temporal.INFINITE_MICROS),
    Kind.INTERVAL: _interval_binary,
    Kind.TIME: _packed(">i8", 0, pa.int64()),  # microseconds since midnight
    Kind.TIMETZ: _timetz_binary,
}

# The system catalog's types (planner/types.py CATALOG_KINDS): oid and xid are integers
# (unsigned 4 bytes in binary); the others are held as the text they print as. Binary
# output of reg* and arrays is their text (PostgreSQL's is an oid or an array structure):
# clients read catalogs in text.
for _k in CATALOG_KINDS:
    if _k in (Kind.OID, Kind.XID):
        _TEXT[_k], _BINARY[_k] = _TEXT[Kind.INT8], _packed(">u4")
    else:
        _TEXT[_k], _BINARY[_k] = _TEXT[Kind.TEXT], _utf8

# bytea and uuid: text as byteaout (hex) and uuid_out write it, binary their bytes.
for _k in BINARY_KINDS:
    _TEXT[_k], _BINARY[_k] = xbin.to_text, lambda a, t: a


# json is its text in both formats; jsonb's binary format is a version byte (1) + its text.
_TEXT[Kind.JSON] = _TEXT[Kind.JSONB] = _TEXT[Kind.TEXT]
_BINARY[Kind.JSON] = _utf8
_BINARY[Kind.JSONB] = lambda a, t: pc.binary_join_element_wise(
    pa.scalar(b"\x01"), a.cast(pa.binary()), pa.scalar(b""))

# Arrays (Kind.ARRAY, int2vector, oidvector): text as array_out writes it, each element
# by its type's own text encoder; binary as array_send: ndim (0 when empty), has-null flag,
# element oid, then length and lower bound of the dimension, then each element as Int32
# length (-1 for NULL) and its binary cell.
def _array_text(arr: pa.Array, t: SqlType) -> pa.Array:
    return xpa.to_text(arr, t, elem_text=lambda v, et: encode_column(v, et, codec.TEXT))


def _array_binary(arr: pa.Array, t: SqlType) -> pa.Array:
    p = xpa.Parts(arr)
    n = len(arr)
    values = xpa.flat(p)
    cells = encode_column(values, t.elem, codec.BINARY) if len(values) else \
        pa.array([], pa.binary())
    body = pc.binary_join(xpa.build(_length_prefixed(cells) if len(values) else cells,
                                    p.lengths, p.valid, pa.binary()), b"")
    has_null = np.zeros(n, dtype=np.int32)
    if cells.null_count:
        rows = xpa.parents(p.lengths)[np.asarray(cells.is_null(), dtype=bool)]
        has_null[np.unique(rows)] = 1
    full = np.empty(n, dtype=[("ndim", ">i4"), ("null", ">i4"), ("oid", ">u4"),
                              ("len", ">i4"), ("lb", ">i4")])
    full["ndim"], full["null"], full["oid"] = 1, has_null, t.elem.oid
    full["len"], full["lb"] = p.lengths, t.lower_bound
    empty = np.empty(n, dtype=[("ndim", ">i4"), ("null", ">i4"), ("oid", ">u4")])
    empty["ndim"], empty["null"], empty["oid"] = 0, 0, t.elem.oid
    header = pc.if_else(pa.array(p.lengths > 0), _fixed(full), _fixed(empty))
    return pc.binary_join_element_wise(header, body, b"")


for _k in (Kind.ARRAY, Kind.INT2VECTOR, Kind.OIDVECTOR):
    _TEXT[_k], _BINARY[_k] = _array_text, _array_binary


# Records: text as record_out writes it, `(a,b)`: a NULL field empty, a field quoted with
# "" when it is empty or holds a quote, backslash, comma, parenthesis or white space
# (quotes and backslashes doubled). The binary form is 0A000.
def _record_text(arr: pa.Array, t: SqlType) -> pa.Array:
    parts = []
    for i, (_, ft) in enumerate(t.fields):
        cell = encode_column(pc.struct_field(arr, [i]), ft, codec.TEXT).cast(pa.string())
        quoted = pc.binary_join_element_wise(
            '"', pc.replace_substring(pc.replace_substring(cell, "\\", "\\\\"), '"', '""'),
            '"', "")
        needs = pc.or_(pc.equal(pc.binary_length(cell), 0),
                       pc.match_substring_regex(cell, r'[",()\\\s]'))
        parts.append(pc.fill_null(pc.if_else(needs, quoted, cell), ""))
    body = pc.binary_join_element_wise(*parts, ",") if len(parts) > 1 else parts[0]
    out = pc.binary_join_element_wise("(", body, ")", "")
    return pc.if_else(arr.is_valid(), out, pa.scalar(None, pa.string()))


def _record_binary(arr: pa.Array, t: SqlType) -> pa.Array:
    raise errors.FeatureNotSupported("binary output of record values")


_TEXT[Kind.RECORD], _BINARY[Kind.RECORD] = _record_text, _record_binary


# --- columns and rows -------------------------------------------------------------------

def _conform(arr: pa.Array, t: SqlType) -> pa.Array:
    """The column in the layout t.arrow_type() promises; tolerates dictionary, large and
    view strings, and decimals where a scaled int64 was expected."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if t.kind is Kind.NUMERIC and (pa.types.is_decimal(arr.type) or nd.is_dynamic(arr)):
        return arr  # carries its own scale
    expected = t.arrow_type()
    if t.kind is Kind.UNKNOWN or arr.type == expected:
        return arr
    try:
        return arr.cast(expected)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise errors.InternalError(
            f"result column of type {t} arrived as Arrow {arr.type}: {e}") from None


def encode_column(arr: pa.Array, t: SqlType, fmt: int) -> pa.Array:
    """One column's cells as a string/binary array, null for SQL NULL."""
    if t.kind is Kind.UNKNOWN or pa.types.is_null(arr.type):
        return pa.nulls(len(arr), pa.binary())
    if fmt not in (codec.TEXT, codec.BINARY):
        raise errors.ProtocolViolation(f"unsupported format code: {fmt}")
    arr = _conform(arr, t)
    return (_BINARY if fmt == codec.BINARY else _TEXT)[t.kind](arr, t)


def _length_prefixed(cells: pa.Array) -> pa.Array:
    """Each cell as Int32 length + bytes; a NULL becomes length -1 and no bytes."""
    cells = cells.cast(pa.binary())
    lengths = pc.binary_length(cells).fill_null(codec.NULL_LENGTH)
    prefix = _fixed(lengths.to_numpy(zero_copy_only=False).astype(">i4"), lengths)
    return pc.binary_join_element_wise(prefix, cells.fill_null(b""), b"")


def _frame_rows(batch: pa.RecordBatch, types: list[SqlType], formats: list[int]) -> bytes:
    n = batch.num_rows
    columns = [_length_prefixed(encode_column(batch.column(i), t, f))
               for i, (t, f) in enumerate(zip(types, formats))]
    lengths = np.full(n, 4 + 2, dtype=np.int64)  # Int32 length and Int16 column count
    for col in columns:
        lengths += pc.binary_length(col).to_numpy(zero_copy_only=False)
    header = np.empty(n, dtype=[("type", "S1"), ("length", ">i4"), ("ncols", ">i2")])
    header["type"], header["length"] = codec.Backend.DATA_ROW, lengths
    header["ncols"] = len(columns)
    rows = pc.binary_join_element_wise(_fixed(header), *columns, b"")
    # The joined rows are contiguous in the data buffer: hand it over whole.
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int32)[rows.offset:rows.offset + n + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    return rows.buffers()[2].slice(start, end - start).to_pybytes()


def _cell_bytes(cells: pa.Array) -> list[bytes | None]:
    if pa.types.is_string(cells.type) or pa.types.is_large_string(cells.type):
        return [None if c is None else c.encode() for c in cells.to_pylist()]
    if not (pa.types.is_binary(cells.type) or pa.types.is_large_binary(cells.type)):
        cells = cells.cast(pa.binary())
    return cells.to_pylist()


def _frame_few_rows(batch: pa.RecordBatch, types: list[SqlType], formats: list[int]) -> bytes:
    columns = [_cell_bytes(encode_column(batch.column(i), t, f))
               for i, (t, f) in enumerate(zip(types, formats))]
    rows = zip(*columns) if columns else [()] * batch.num_rows
    return b"".join(backend.DataRow(row).encode() for row in rows)


def encode_data_rows(batch: pa.RecordBatch, types: list[SqlType], formats: list[int]) -> bytes:
    """All rows of `batch` as consecutive DataRow messages."""
    if batch.num_rows == 0:
        return b""
    if batch.num_rows <= _FEW_ROWS:
        return _frame_few_rows(batch, types, formats)
    per_row = max(1, batch.nbytes // batch.num_rows)
    step = max(1, _ROW_SLICE_BYTES // per_row)
    if batch.num_rows <= step:
        return _frame_rows(batch, types, formats)
    return b"".join(_frame_rows(batch.slice(i, step), types, formats)
                    for i in range(0, batch.num_rows, step))
