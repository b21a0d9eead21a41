"""Conform incoming Arrow data to a table's physical column types, with PostgreSQL's checks.

Every load path (COPY text/CSV/binary, server-side files, Parquet) ends here: strings from
a CSV parse, or typed columns from Parquet, become the layout `SqlType.arrow_type()` names,
with PostgreSQL's input rules and errors (SQLSTATE and message text): integer range,
numeric rounding half away from zero and precision, varchar(n) length, char(n) padding,
boolean spellings, NOT NULL. The work is vectorized with pyarrow.compute; Python loops run
only over rows that fail the fast path (to name the first bad value, or for rare spellings
such as exponents in numerics).

Errors raised by `conform` carry `row` (index in the input) and, for bad values, `column`,
so a caller that knows line numbers (copy_text) can say where the value was. Numerics
and intervals are ingest_numeric's and ingest_interval's; ingest_base holds what they
share. Parsing the COPY framing itself is left to copy_text and copy_binary.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, values
from planner.schema import ColumnDef
from planner.types import BINARY_KINDS, PRECISION_KINDS, Kind, SqlType
from segment.ingest import interval, numeric
from segment.ingest.base import fail_at, first_true, null, raise_at, to_string, trim, try_cast
from planner.time_zones import Zone
from segment.kernels import expr_arrays as xa
from segment.kernels import (datetime_text, eras, expr_binary, expr_cast, expr_json, expr_pgarray,
                             expr_string, expr_timetz, expr_timezone, infinite, zone_offsets)

_INT_LIMITS = {Kind.INT2: (-2**15, 2**15 - 1), Kind.INT4: (-2**31, 2**31 - 1),
               Kind.INT8: (-2**63, 2**63 - 1)}
_INT_RE = re.compile(r"[ \t\n\r\v\f]*[+-]?[0-9]+[ \t\n\r\v\f]*")
_TRUE = ["t", "tr", "tru", "true", "y", "ye", "yes", "on", "1"]
_FALSE = ["f", "fa", "fal", "fals", "false", "n", "no", "of", "off", "0"]
# A zone offset after a time of day; timestamp without time zone ignores it, as PostgreSQL.
_OFFSET = r"(?:[zZ]|(?i:utc|gmt)|[+-][0-9]{1,2}(?::?[0-9]{2}(?::?[0-9]{2})?)?)$"
_TIME_OFFSET = r"([0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]*)?)?) *" + _OFFSET
_TIME_OFFSET_BC = _TIME_OFFSET[:-1] + r"(?: *(?i:BC))?$"   # '... 23:00:00+00 BC'


def conform(data: pa.Table | pa.RecordBatch, columns: list[ColumnDef],
            relation: str | None = None, zone: str | None = None,
            order: str = "mdy") -> pa.RecordBatch:
    """Cast `data` (columns by position) to the physical types of `columns`. timestamptz
    text without an offset is read in `zone` (a planner.time_zones.Zone spec; None: UTC),
    dates in DateStyle's field `order`.

    When several values are bad, the error is the one PostgreSQL's row-at-a-time load
    would meet first: lowest row, then conversion before NOT NULL, then leftmost column.
    """
    if data.num_columns != len(columns):
        raise errors.InternalError(
            f"conform: {data.num_columns} input columns for {len(columns)} table columns")
    arrays, fields, failures = [], [], []
    for i, col in enumerate(columns):
        arr = data.column(i)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
        if col.not_null and arr.null_count:
            where = f' of relation "{relation}"' if relation else ""
            e = errors.NotNullViolation(
                f'null value in column "{col.name}"{where} violates not-null constraint')
            e.row = first_true(arr.is_null())
            failures.append((e.row, 1, i, e))
        try:
            out = convert(arr, col.type, zone, order)
        except errors.QueryError as e:
            e.column = col.name
            failures.append((getattr(e, "row", 0), 0, i, e))
            continue
        arrays.append(out)
        fields.append(pa.field(col.name, out.type, nullable=not col.not_null))
    if failures:
        raise min(failures, key=lambda f: f[:3])[3]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def convert(arr: pa.Array, t: SqlType, zone: str | None = None,
            order: str = "mdy") -> pa.Array:
    """One column to the physical type of `t` (see module docstring). An error names the
    first bad row (`row`)."""
    try:
        return _convert(arr, t, zone, order)
    except errors.QueryError as e:
        row = getattr(e, "row", 0)
        if row > 0:  # checks run in phases (parse, then range): an earlier row may fail too
            convert(arr.slice(0, row), t, zone, order)
        raise


def _convert(arr: pa.Array, t: SqlType, zone: str | None = None,
             order: str = "mdy") -> pa.Array:
    target = t.arrow_type()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), target)
    if t.kind in BINARY_KINDS and (pa.types.is_binary(arr.type)
                                   or pa.types.is_large_binary(arr.type)):
        return _binary_values(arr, t)  # bytes as they are (binary COPY, Parquet)
    if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type) \
            or pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
        arr = to_string(arr)
    if not pa.types.is_string(arr.type):
        out = _from_typed(arr, t, target)
    elif t.kind in expr_cast.DATETIME_KINDS:  # text without a zone is read in `zone`
        out = _datetime_from_text(arr, t, zone, order)
    else:
        out = _FROM_TEXT[t.kind](arr, t)
    if t.precision is not None and t.kind in PRECISION_KINDS:  # time(p), timestamp(p), ...
        return expr_cast.round_fraction(out, t)
    return out


# --- text input ---------------------------------------------------------------------------
def _parse_int(arr: pa.Array) -> pa.Array | None:
    v = try_cast(arr, pa.int64())
    if v is None:  # PostgreSQL also takes surrounding space and a leading plus
        v = try_cast(pc.replace_substring_regex(trim(arr), r"^\+([0-9])", r"\1"), pa.int64())
    if v is not None and pc.any(pc.match_substring(arr, "x", ignore_case=True)).as_py():
        return None  # Arrow reads 0x10 as hex; PostgreSQL 15 does not
    return v


def _int_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    v = _parse_int(arr)
    if v is None:
        fail_at(arr, _parse_int, lambda s: _int_error(s, t))
    return _int_range(v, t, arr)


def _int_error(s: str, t: SqlType) -> errors.QueryError:
    if _INT_RE.fullmatch(s):
        return errors.NumericOutOfRange(f'value "{s}" is out of range for type {t.sql()}')
    return errors.InvalidTextRepresentation(f'invalid input syntax for type {t.sql()}: "{s}"')


def _int_range(v: pa.Array, t: SqlType, text: pa.Array | None = None) -> pa.Array:
    """int64 to the column's width, with PostgreSQL's range errors."""
    lo, hi = _INT_LIMITS[t.kind]
    if t.kind is not Kind.INT8 and len(v) - v.null_count:
        mm = pc.min_max(v)
        if mm["min"].as_py() < lo or mm["max"].as_py() > hi:
            row = first_true(pc.or_(pc.less(v, lo), pc.greater(v, hi)))
            msg = (f'value "{text[row].as_py()}" is out of range for type {t.sql()}'
                   if text is not None else f"{t.sql()} out of range")
            raise_at(errors.NumericOutOfRange(msg), row)
    return v.cast(t.arrow_type())


def _parse_float(arr: pa.Array) -> pa.Array | None:
    v = try_cast(arr, pa.float64())
    return v if v is not None else try_cast(trim(arr), pa.float64())


def _float_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    v = _parse_float(arr)
    if v is None:
        fail_at(arr, _parse_float, lambda s: errors.InvalidTextRepresentation(
            f'invalid input syntax for type {t.sql()}: "{s}"'))
    out = v
    bad = pa.array(np.zeros(len(v), bool))
    if t.kind is Kind.FLOAT4:
        out = v.cast(pa.float32(), safe=False)
        bad = pc.or_(pc.and_(pc.is_inf(out), pc.invert(pc.is_inf(v))),
                     pc.and_(pc.equal(out, 0), pc.not_equal(v, 0)))
        v = out
    # Overflow, and underflow to zero, are errors unless the text spelled infinity or zero.
    spelled_inf = pc.match_substring_regex(arr, r"(?i)^\s*[+-]?inf(inity)?\s*$")
    spelled_zero = pc.match_substring_regex(arr, r"^\s*[+-]?0*\.?0*([eE][+-]?[0-9]+)?\s*$")
    bad = pc.or_(bad, pc.or_(pc.and_(pc.is_inf(v), pc.invert(spelled_inf)),
                             pc.and_(pc.equal(v, 0), pc.invert(spelled_zero))))
    if pc.any(bad).as_py():
        row = first_true(bad)
        raise_at(errors.NumericOutOfRange(
            f'"{arr[row].as_py()}" is out of range for type {t.sql()}'), row)
    return out


def _bool_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    low = pc.utf8_lower(trim(arr))
    is_true, is_false = pc.is_in(low, pa.array(_TRUE)), pc.is_in(low, pa.array(_FALSE))
    bad = pc.and_(pc.is_valid(arr), pc.invert(pc.or_(is_true, is_false)))
    if pc.any(bad).as_py():
        row = first_true(bad)
        raise_at(errors.InvalidTextRepresentation(
            f'invalid input syntax for type boolean: "{arr[row].as_py()}"'), row)
    return pc.if_else(pc.is_valid(arr), is_true, pa.scalar(None, pa.bool_()))


def _string_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """text as it is; varchar(n)/char(n) checked for length (trailing spaces beyond n
    dropped, as PostgreSQL does); char values kept without trailing spaces, as every
    other path stores them (they print padded to n); bpchar without a length refuses
    them (expr_string.check_bpchar)."""
    if t.kind is Kind.CHAR and t.length is None:
        return expr_string.check_bpchar(arr)
    if t.length is None or t.kind is Kind.TEXT:
        return arr
    n = t.length
    long = pc.greater(pc.utf8_length(arr), n)
    if pc.any(long).as_py():
        # PostgreSQL drops excess characters silently when they are all spaces.
        tail_blank = pc.match_substring_regex(pc.utf8_slice_codeunits(arr, n), r"^ *$")
        bad = pc.and_(long, pc.invert(tail_blank))
        if pc.any(bad).as_py():
            raise_at(errors.QueryError(f"value too long for type {t.sql()}", "22001"),
                     first_true(bad))
        arr = pc.if_else(long, pc.utf8_slice_codeunits(arr, 0, n), arr)
    if t.kind is Kind.CHAR:
        arr = pc.utf8_rtrim(arr, characters=" ")
    return arr


def _iso_date(arr: pa.Array) -> pa.Array:
    """Spellings PostgreSQL reads as dates that Arrow does not, rewritten to ISO:
    one-digit month or day, YYYYMMDD, 'epoch'."""
    arr = pc.replace_substring_regex(trim(arr), r"^([0-9]{4})-([0-9])([^0-9])", r"\1-0\2\3")
    arr = pc.replace_substring_regex(arr, r"^([0-9]{4}-[0-9]{2})-([0-9])([^0-9]|$)", r"\1-0\2\3")
    arr = pc.replace_substring_regex(arr, r"^([0-9]{4})([0-9]{2})([0-9]{2})([ T]|$)",
                                     r"\1-\2-\3\4")
    return pc.replace_substring_regex(arr, r"(?i)^epoch$", "1970-01-01")


def _parse_iso_date(arr: pa.Array) -> pa.Array | None:
    v = try_cast(arr, pa.date32())
    if v is None:
        iso = _iso_date(arr)
        v = try_cast(iso, pa.date32())
        if v is None:  # a timestamp is a date too, as in PostgreSQL's date_in
            ts = _parse_naive(iso)
            v = None if ts is None else pc.floor_temporal(ts, unit="day").cast(pa.date32())
    return v


def _fast_date(arr: pa.Array, t: SqlType) -> pa.Array | None:
    v = _parse_date(arr)
    if v is not None:
        eras.check_range(v, 1, arr)
    return v


def _parse_iso_naive(arr: pa.Array) -> pa.Array | None:
    v = try_cast(arr, pa.timestamp("us"))
    if v is None:
        arr = pc.replace_substring_regex(_iso_date(arr), _TIME_OFFSET, r"\1")
        v = try_cast(arr, pa.timestamp("us"))
    if v is None:  # more than six fractional digits: round to microseconds as PostgreSQL
        ns = try_cast(arr, pa.timestamp("ns"))
        if ns is not None:
            v = pc.round_temporal(ns, unit="microsecond").cast(pa.timestamp("us"))
    return v


# Years outside 1..9999 ('0044-03-15 BC', '10000-01-01') read too (segment/kernels/eras.py).
_parse_date = eras.parsing(_parse_iso_date, 1)
_parse_naive = eras.parsing(_parse_iso_naive, eras.US_PER_DAY)
# offsets with seconds too (local mean time, '+05:53:28': segment/kernels/zone_offsets.py)
_parse_offset = eras.parsing(lambda a: zone_offsets.instants(a, _parse_naive), eras.US_PER_DAY)


def _parse_aware(arr: pa.Array, zone: str | None = None) -> pa.Array | None:
    """timestamptz: an explicit zone offset is honoured; none means the session's zone
    (`zone`, a Zone spec; None: UTC)."""
    trimmed = pc.replace_substring_regex(_iso_date(arr), r"(?i) *(utc|gmt)$", "+00")
    trimmed = pc.replace_substring_regex(trimmed, r"(?i) *(utc|gmt)( *BC *)$", r"+00\2")
    has_offset = pc.match_substring_regex(trimmed, _TIME_OFFSET_BC)
    aware = _parse_offset(pc.if_else(has_offset, trimmed, null(pa.string())))
    naive = _parse_naive(pc.if_else(has_offset, null(pa.string()), trimmed))
    if aware is None or naive is None:
        return None
    if zone is not None and not Zone.from_spec(zone).is_utc:
        naive = expr_timezone.from_local(None, [naive, pa.scalar(zone)], len(naive))
    return pc.coalesce(aware, naive.cast(pa.timestamp("us", tz="UTC")))


def _fast_timestamp(arr: pa.Array, t: SqlType, zone: str | None = None) -> pa.Array | None:
    v = _parse_naive(arr) if t.kind is Kind.TIMESTAMP else _parse_aware(arr, zone)
    if v is not None:
        eras.check_range(v, eras.US_PER_DAY, arr)
    return v


def _datetime_from_text(arr: pa.Array, t: SqlType, zone: str | None = None,
                        order: str = "mdy") -> pa.Array:
    """date, timestamp[tz], time and timetz columns: their ISO text vectorized, other
    spellings (and errors, with their row) once per distinct value
    (segment/kernels/datetime_text.py); a timestamptz or timetz without a zone is read in
    `zone` (a Zone spec; None: UTC), which 'today' and 'now' also read."""
    k = t.kind

    def fast(a: pa.Array) -> pa.Array | None:
        if k is Kind.TIME:
            return expr_cast.fast_time(a)
        if k is Kind.TIMETZ:
            return None  # zones make the forms many: all decoded
        if k is Kind.DATE:
            return _keeping_infinity(_fast_date)(a, t)
        return _keeping_infinity(lambda b, tt: _fast_timestamp(b, tt, zone))(a, t)
    return datetime_text.column(arr, t, fast, zone, order)


# The struct binary COPY reads a timetz as: local microseconds, zone seconds west.
TIMETZ_PARTS = ("timetz_local", "timetz_zone")


def _keeping_infinity(parse):
    """A date/timestamp column parser that also reads 'infinity' and '-infinity' (any
    case, spaces around), stored as the layout's extreme integers (kernels/infinite.py)."""
    def run(arr: pa.Array, t: SqlType) -> pa.Array:
        word = pc.utf8_lower(trim(arr))
        pos, neg = (pc.fill_null(pc.equal(word, w), False) for w in ("infinity", "-infinity"))
        if not (pc.any(pos).as_py() or pc.any(neg).as_py()):
            return parse(arr, t)
        rest = pc.if_else(pc.or_(pos, neg), null(arr.type), arr)
        v = parse(rest, t)
        return None if v is None else infinite.put(v, (np.asarray(pos), np.asarray(neg)))
    return run


_FROM_TEXT = {
    Kind.INT2: _int_from_text, Kind.INT4: _int_from_text, Kind.INT8: _int_from_text,
    Kind.FLOAT4: _float_from_text, Kind.FLOAT8: _float_from_text,
    Kind.BOOL: _bool_from_text, Kind.TEXT: _string_from_text,
    Kind.VARCHAR: _string_from_text, Kind.CHAR: _string_from_text,
    **{k: _datetime_from_text for k in expr_cast.DATETIME_KINDS},
    Kind.INTERVAL: interval.interval_from_text, Kind.NUMERIC: numeric.numeric_from_text,
}
def _array_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """array_in with the column's element typmod: varchar(n)[] / char(n)[] elements are
    read without a length, then held to it as a column's strings are (22001 when too long,
    unless the excess is spaces), where a cast would cut them."""
    elem = t.elem
    if t.kind is not Kind.ARRAY or elem.kind not in (Kind.VARCHAR, Kind.CHAR) \
            or elem.length is None:
        return expr_pgarray.from_text(arr, t)
    wide = SqlType(Kind.ARRAY, element=SqlType(elem.kind))
    parts = expr_pgarray.Parts(expr_pgarray.from_text(arr, wide))
    values = expr_pgarray.flat(parts)
    try:
        fitted = _string_from_text(values, elem)
    except errors.QueryError as e:
        e.row = int(expr_pgarray.parents(parts.lengths)[getattr(e, "row", 0)])
        raise
    return expr_pgarray.build(fitted, parts.lengths, parts.valid, elem.arrow_type())


for _k in (Kind.ARRAY, Kind.INT2VECTOR, Kind.OIDVECTOR):  # '{1,2,NULL}' (array_in)
    _FROM_TEXT[_k] = _array_from_text
for _k in (Kind.JSON, Kind.JSONB):  # validated (json) or made canonical (jsonb)
    _FROM_TEXT[_k] = lambda arr, t: expr_json.cast(arr, SqlType(Kind.TEXT), t)


def _binary_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """byteain (hex or escape format) / uuid_in; an error names the first bad row."""
    def attempt(a: pa.Array) -> pa.Array | None:
        try:
            return expr_binary.from_text(a, t)
        except errors.QueryError:
            return None
    out = attempt(arr)
    if out is None:
        fail_at(arr, attempt, lambda s: _binary_error(s, t))
    return out


def _binary_error(s: str, t: SqlType) -> errors.QueryError:
    try:
        values.parse_text(s, t)
    except errors.QueryError as e:
        return e
    raise errors.InternalError(f"{t} input accepted {s!r} alone but not in its column")


for _k in BINARY_KINDS:
    _FROM_TEXT[_k] = _binary_from_text


def _binary_values(arr: pa.Array, t: SqlType) -> pa.Array:
    """Bytes loaded as bytea or uuid: a uuid must have 16 (22P03 as PostgreSQL's
    uuid_recv, which reads 16 and then finds the field too long or short)."""
    if t.kind is Kind.UUID:
        wrong = pc.fill_null(pc.not_equal(pc.binary_length(arr), 16), False)
        if pc.any(wrong).as_py():
            raise_at(errors.QueryError("incorrect binary data format", "22P03"),
                     first_true(wrong))
    return arr.cast(pa.binary())


# --- typed input (Parquet, binary COPY) ---------------------------------------------------
def _from_typed(arr: pa.Array, t: SqlType, target: pa.DataType) -> pa.Array:
    src = arr.type
    if t.is_array and src == target:  # binary COPY's, elements conformed already
        return arr
    if t.is_integer and (pa.types.is_integer(src) or pa.types.is_boolean(src)):
        v = try_cast(arr, pa.int64())
        if v is None:  # uint64 beyond int64
            raise_at(errors.NumericOutOfRange(f"{t.sql()} out of range"), 0)
        return _int_range(v, t)
    if t.is_integer and pa.types.is_floating(src):
        # PostgreSQL rounds half to even (rint) and rejects NaN and out-of-range values.
        r = pc.round(arr.cast(pa.float64()), round_mode="half_to_even")
        lo, hi = _INT_LIMITS[t.kind]
        bad = pc.invert(pc.and_(pc.greater_equal(r, float(lo)), pc.less(r, -float(lo))))
        if pc.any(pc.and_(bad, pc.is_valid(r))).as_py():
            raise_at(errors.NumericOutOfRange(f"{t.sql()} out of range"), first_true(bad))
        return r.cast(target, safe=False)
    if t.is_float and (pa.types.is_integer(src) or pa.types.is_floating(src)
                       or pa.types.is_decimal(src)):
        return arr.cast(target, safe=False)
    if t.is_numeric:
        return numeric.numeric_from_typed(arr, t)
    if t.kind is Kind.BOOL and pa.types.is_integer(src):
        return pc.not_equal(arr, 0)
    if t.kind is Kind.TIMESTAMP and pa.types.is_timestamp(src) or \
            t.kind is Kind.TIMESTAMPTZ and pa.types.is_timestamp(src):
        if src.unit == "ns":  # round, as PostgreSQL keeps microseconds
            arr = pc.round_temporal(arr, unit="microsecond")
        return arr.cast(pa.timestamp(src.unit, tz=target.tz)).cast(target)
    if t.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ) and pa.types.is_date(src):
        return arr.cast(pa.timestamp("us")).cast(target)
    if t.kind is Kind.DATE and pa.types.is_timestamp(src):
        day = pc.floor_temporal(arr, unit="day").cast(pa.timestamp(src.unit))
        return day.cast(target, safe=False)
    if t.kind is Kind.DATE and pa.types.is_date(src):
        return arr.cast(target)
    if t.kind is Kind.INTERVAL and pa.types.is_interval(src):
        return arr.cast(target)
    if t.kind is Kind.TIME and pa.types.is_time(src):
        return arr.cast(target)
    if t.kind is Kind.TIMETZ and pa.types.is_struct(src) and \
            tuple(f.name for f in src) == TIMETZ_PARTS:  # binary COPY's (copy_binary.py)
        local, zone = (arr.field(i).to_numpy(zero_copy_only=False) for i in range(2))
        return expr_timetz.pack(local, zone, xa.valid_mask(arr), len(arr))
    # Anything else goes through text, like PostgreSQL's I/O conversion on assignment.
    text = try_cast(arr, pa.string())
    if text is None:
        raise errors.DatatypeMismatch(f"cannot load a column of type {src} into {t.sql()}")
    return _FROM_TEXT[t.kind](text, t)


def widen(batch: pa.RecordBatch, table, positions: list[int]) -> pa.RecordBatch:
    """A batch of some of a table's columns (COPY t (b, a) ...) as a batch of all of them,
    in table order, NULL where a column was not given."""
    arrays = []
    for i, c in enumerate(table.columns):
        if i in positions:
            arrays.append(batch.column(positions.index(i)))
        else:
            arrays.append(pa.nulls(batch.num_rows, c.type.arrow_type()))
    return pa.record_batch(arrays, schema=table.arrow_schema())
