"""Conform incoming Arrow data to a table's physical column types, with PostgreSQL's checks.

Every load path (COPY text/CSV/binary, server-side files, Parquet) ends here: strings from
a CSV parse, or typed columns from Parquet, become the layout `SqlType.arrow_type()` names,
with PostgreSQL's input rules and errors (SQLSTATE and message text): integer range,
numeric rounding half away from zero and precision, varchar(n) length, char(n) padding,
boolean spellings, NOT NULL. The work is vectorized with pyarrow.compute; Python loops run
only over rows that fail the fast path (to name the first bad value, or for rare spellings
such as exponents in numerics).

Errors raised by `conform` carry `row` (index in the input) and, for bad values, `column`,
so a caller that knows line numbers (copy_text) can say where the value was. Parsing the
COPY framing itself is left to copy_text and copy_binary.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner.schema import ColumnDef
from planner.types import Kind, SqlType

_WS = " \t\n\r\v\f"  # what PostgreSQL's scanners treat as skippable space
_INT_LIMITS = {Kind.INT2: (-2**15, 2**15 - 1), Kind.INT4: (-2**31, 2**31 - 1),
               Kind.INT8: (-2**63, 2**63 - 1)}
_INT_RE = re.compile(r"[ \t\n\r\v\f]*[+-]?[0-9]+[ \t\n\r\v\f]*")
_NUM_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_TRUE = ["t", "tr", "tru", "true", "y", "ye", "yes", "on", "1"]
_FALSE = ["f", "fa", "fal", "fals", "false", "n", "no", "of", "off", "0"]
# A zone offset after a time of day; timestamp without time zone ignores it, as PostgreSQL.
_OFFSET = r"(?:[zZ]|(?i:utc|gmt)|[+-][0-9]{1,2}(?::?[0-9]{2}(?::?[0-9]{2})?)?)$"
_TIME_OFFSET = r"([0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]*)?)?) *" + _OFFSET


def conform(data: pa.Table | pa.RecordBatch, columns: list[ColumnDef],
            relation: str | None = None) -> pa.RecordBatch:
    """Cast `data` (columns by position) to the physical types of `columns`.

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
            e.row = _first(arr.is_null())
            failures.append((e.row, 1, i, e))
        try:
            out = convert(arr, col.type)
        except errors.QueryError as e:
            e.column = col.name
            failures.append((getattr(e, "row", 0), 0, i, e))
            continue
        arrays.append(out)
        fields.append(pa.field(col.name, out.type, nullable=not col.not_null))
    if failures:
        raise min(failures, key=lambda f: f[:3])[3]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def convert(arr: pa.Array, t: SqlType) -> pa.Array:
    """One column to the physical type of `t` (see module docstring). An error names the
    first bad row (`row`)."""
    try:
        return _convert(arr, t)
    except errors.QueryError as e:
        row = getattr(e, "row", 0)
        if row > 0:  # checks run in phases (parse, then range): an earlier row may fail too
            convert(arr.slice(0, row), t)
        raise


def _convert(arr: pa.Array, t: SqlType) -> pa.Array:
    target = t.arrow_type()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), target)
    if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type) \
            or pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
        arr = _to_string(arr)
    if pa.types.is_string(arr.type):
        return _FROM_TEXT[t.kind](arr, t)
    return _from_typed(arr, t, target)


# --- errors -------------------------------------------------------------------------------
def _raise(exc: errors.QueryError, row: int):
    exc.row = row
    raise exc


def _first(mask: pa.Array) -> int:
    """Index of the first true value of a boolean array (nulls count as false)."""
    return int(np.flatnonzero(mask.fill_null(False).to_numpy(zero_copy_only=False))[0])


def _locate(arr: pa.Array, attempt) -> int:
    """Row of the first value on which `attempt` (a vectorized cast returning None on
    failure) fails, by bisecting prefixes: exact for whatever the fast path accepts."""
    lo, hi = 0, len(arr)  # attempt(arr[:lo]) succeeds, attempt(arr[:hi]) fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if attempt(arr.slice(0, mid)) is None:
            hi = mid
        else:
            lo = mid
    return lo


def _fail_at(arr: pa.Array, attempt, explain) -> None:
    """Raise the error `explain(text)` builds for the first value `attempt` rejects."""
    row = _locate(arr, attempt)
    _raise(explain(arr[row].as_py()), row)


def _to_string(arr: pa.Array) -> pa.Array:
    try:
        return arr.cast(pa.string())
    except pa.ArrowInvalid:
        for i, v in enumerate(arr.cast(pa.large_binary()).to_pylist()):
            try:
                v is None or v.decode("utf-8")
            except UnicodeDecodeError as u:
                bad = " ".join(f"0x{b:02x}" for b in v[u.start:u.end])
                _raise(errors.QueryError(
                    f'invalid byte sequence for encoding "UTF8": {bad}', "22021"), i)
        raise


def _try_cast(arr: pa.Array, target: pa.DataType | pc.CastOptions) -> pa.Array | None:
    try:
        if isinstance(target, pc.CastOptions):
            return pc.cast(arr, options=target)
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _trim(arr: pa.Array) -> pa.Array:
    return pc.utf8_trim(arr, _WS)


# --- text input ---------------------------------------------------------------------------
def _null(t: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, t)


def _parse_int(arr: pa.Array) -> pa.Array | None:
    v = _try_cast(arr, pa.int64())
    if v is None:  # PostgreSQL also takes surrounding space and a leading plus
        v = _try_cast(pc.replace_substring_regex(_trim(arr), r"^\+([0-9])", r"\1"), pa.int64())
    if v is not None and pc.any(pc.match_substring(arr, "x", ignore_case=True)).as_py():
        return None  # Arrow reads 0x10 as hex; PostgreSQL 15 does not
    return v


def _int_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    v = _parse_int(arr)
    if v is None:
        _fail_at(arr, _parse_int, lambda s: _int_error(s, t))
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
            row = _first(pc.or_(pc.less(v, lo), pc.greater(v, hi)))
            msg = (f'value "{text[row].as_py()}" is out of range for type {t.sql()}'
                   if text is not None else f"{t.sql()} out of range")
            _raise(errors.NumericOutOfRange(msg), row)
    return v.cast(t.arrow_type())


def _parse_float(arr: pa.Array) -> pa.Array | None:
    v = _try_cast(arr, pa.float64())
    return v if v is not None else _try_cast(_trim(arr), pa.float64())


def _float_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    v = _parse_float(arr)
    if v is None:
        _fail_at(arr, _parse_float, lambda s: errors.InvalidTextRepresentation(
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
        row = _first(bad)
        _raise(errors.NumericOutOfRange(
            f'"{arr[row].as_py()}" is out of range for type {t.sql()}'), row)
    return out


def _bool_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    low = pc.utf8_lower(_trim(arr))
    is_true, is_false = pc.is_in(low, pa.array(_TRUE)), pc.is_in(low, pa.array(_FALSE))
    bad = pc.and_(pc.is_valid(arr), pc.invert(pc.or_(is_true, is_false)))
    if pc.any(bad).as_py():
        row = _first(bad)
        _raise(errors.InvalidTextRepresentation(
            f'invalid input syntax for type boolean: "{arr[row].as_py()}"'), row)
    return pc.if_else(pc.is_valid(arr), is_true, pa.scalar(None, pa.bool_()))


def _string_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    if t.length is None or t.kind is Kind.TEXT:
        return arr
    n = t.length
    long = pc.greater(pc.utf8_length(arr), n)
    if pc.any(long).as_py():
        # PostgreSQL drops excess characters silently when they are all spaces.
        tail_blank = pc.match_substring_regex(pc.utf8_slice_codeunits(arr, n), r"^ *$")
        bad = pc.and_(long, pc.invert(tail_blank))
        if pc.any(bad).as_py():
            _raise(errors.QueryError(f"value too long for type {t.sql()}", "22001"), _first(bad))
        arr = pc.if_else(long, pc.utf8_slice_codeunits(arr, 0, n), arr)
    if t.kind is Kind.CHAR:
        arr = pc.utf8_rpad(arr, width=n, padding=" ")
    return arr


def _iso_date(arr: pa.Array) -> pa.Array:
    """Spellings PostgreSQL reads as dates that Arrow does not, rewritten to ISO:
    one-digit month or day, YYYYMMDD, 'epoch'."""
    arr = pc.replace_substring_regex(_trim(arr), r"^([0-9]{4})-([0-9])([^0-9])", r"\1-0\2\3")
    arr = pc.replace_substring_regex(arr, r"^([0-9]{4}-[0-9]{2})-([0-9])([^0-9]|$)", r"\1-0\2\3")
    arr = pc.replace_substring_regex(arr, r"^([0-9]{4})([0-9]{2})([0-9]{2})([ T]|$)",
                                     r"\1-\2-\3\4")
    return pc.replace_substring_regex(arr, r"(?i)^epoch$", "1970-01-01")


def _parse_date(arr: pa.Array) -> pa.Array | None:
    v = _try_cast(arr, pa.date32())
    if v is None:
        iso = _iso_date(arr)
        v = _try_cast(iso, pa.date32())
        if v is None:  # a timestamp is a date too, as in PostgreSQL's date_in
            ts = _parse_naive(iso)
            v = None if ts is None else pc.floor_temporal(ts, unit="day").cast(pa.date32())
    return v


def _date_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    v = _parse_date(arr)
    if v is None:
        _fail_at(arr, _parse_date, lambda s: _datetime_error(s, "date"))
    return v


def _parse_naive(arr: pa.Array) -> pa.Array | None:
    v = _try_cast(arr, pa.timestamp("us"))
    if v is None:
        arr = pc.replace_substring_regex(_iso_date(arr), _TIME_OFFSET, r"\1")
        v = _try_cast(arr, pa.timestamp("us"))
    if v is None:  # more than six fractional digits: round to microseconds as PostgreSQL
        ns = _try_cast(arr, pa.timestamp("ns"))
        if ns is not None:
            v = pc.round_temporal(ns, unit="microsecond").cast(pa.timestamp("us"))
    return v


def _parse_aware(arr: pa.Array) -> pa.Array | None:
    """timestamptz: an explicit zone offset is honoured; none means UTC (the session zone)."""
    trimmed = pc.replace_substring_regex(_iso_date(arr), r"(?i) *(utc|gmt)$", "+00")
    has_offset = pc.match_substring_regex(trimmed, _TIME_OFFSET)
    target = pa.timestamp("us", tz="UTC")
    aware = _try_cast(pc.if_else(has_offset, trimmed, _null(pa.string())), target)
    naive = _parse_naive(pc.if_else(has_offset, _null(pa.string()), trimmed))
    if aware is None or naive is None:
        return None
    return pc.coalesce(aware, naive.cast(target))


def _timestamp_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    parse = _parse_naive if t.kind is Kind.TIMESTAMP else _parse_aware
    v = parse(arr)
    if v is None:
        _fail_at(arr, parse, lambda s: _datetime_error(s, t.sql()))
    return v


def _datetime_error(s: str, type_name: str) -> errors.QueryError:
    m = re.fullmatch(r"(-?[0-9]{4,})-([0-9]{1,2})-([0-9]{1,2})"
                     r"(?:[ T]([0-9]{1,2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]*)?)?.*)?",
                     s.strip(_WS))
    if m is not None:
        try:
            dt.datetime(*(int(g) for g in m.groups() if g is not None))
        except ValueError:
            return errors.QueryError(f'date/time field value out of range: "{s}"', "22008")
    return errors.InvalidDatetimeFormat(f'invalid input syntax for type {type_name}: "{s}"')


def _interval_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    # Interval columns are rare and their syntax is rich: parsed value by value.
    values = []
    for i, s in enumerate(arr.to_pylist()):
        try:
            values.append(None if s is None else parse_interval(s))
        except errors.QueryError as e:
            _raise(e, i)
    return pa.array(values, pa.month_day_nano_interval())


_UNITS = {  # unit -> (months, days, microseconds) per one
    "millennium": (12000, 0, 0), "century": (1200, 0, 0), "decade": (120, 0, 0),
    "year": (12, 0, 0), "month": (1, 0, 0), "week": (0, 7, 0), "day": (0, 1, 0),
    "hour": (0, 0, 3_600_000_000), "minute": (0, 0, 60_000_000), "second": (0, 0, 1_000_000),
    "millisecond": (0, 0, 1000), "microsecond": (0, 0, 1)}
_UNIT_ALIASES = {"millennia": "millennium", "centuries": "century", "decades": "decade",
                 "y": "year", "yr": "year", "yrs": "year", "years": "year", "mon": "month",
                 "mons": "month", "months": "month", "w": "week", "weeks": "week", "d": "day",
                 "days": "day", "h": "hour", "hr": "hour", "hrs": "hour", "hours": "hour",
                 "m": "minute", "min": "minute", "mins": "minute", "minutes": "minute",
                 "s": "second", "sec": "second", "secs": "second", "seconds": "second",
                 "ms": "millisecond", "msec": "millisecond", "milliseconds": "millisecond",
                 "us": "microsecond", "usec": "microsecond", "microseconds": "microsecond"}
_INTERVAL_TOKEN = re.compile(
    r"\s*(?:(?P<clock>[+-]?\d+:\d{1,2}(?::\d{1,2}(?:\.\d*)?)?)"
    r"|(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))\s*(?P<unit>[a-z]+)?|(?P<word>@|ago))", re.I)


def parse_interval(text: str) -> tuple[int, int, int]:
    """PostgreSQL-style interval text ('1 year 2 mons -3 days 04:05:06.5', '@ 2 hours
    ago') as (months, days, nanoseconds). Fractions spill down as in PostgreSQL (a month is
    30 days, a day 24 hours)."""
    months = days = micros = 0
    negate, pos, s = False, 0, text.strip(_WS)
    bad = errors.InvalidDatetimeFormat(f'invalid input syntax for type interval: "{text}"')
    while pos < len(s):
        m = _INTERVAL_TOKEN.match(s, pos)
        if m is None or m.end() == pos:
            raise bad
        pos = m.end()
        if m["word"]:
            negate = negate or m["word"].lower() == "ago"
        elif m["clock"]:
            clock = m["clock"]
            sign = -1 if clock.startswith("-") else 1
            parts = clock.lstrip("+-").split(":")
            secs = Decimal(parts[2]) if len(parts) > 2 else Decimal(0)
            micros += sign * int((int(parts[0]) * 3600 + int(parts[1]) * 60 + secs) * 1_000_000)
        else:
            unit = (m["unit"] or "second").lower()
            unit = _UNIT_ALIASES.get(unit, unit)
            if unit not in _UNITS:
                raise bad
            n = Decimal(m["num"])
            per_month, per_day, per_micro = _UNITS[unit]
            whole_months = int(n * per_month)
            day_part = (n * per_month - whole_months) * 30 + n * per_day
            months += whole_months
            days += int(day_part)
            micros += int((day_part - int(day_part)) * 86_400_000_000 + n * per_micro)
    if negate:
        months, days, micros = -months, -days, -micros
    return months, days, micros * 1000


_FROM_TEXT = {
    Kind.INT2: _int_from_text, Kind.INT4: _int_from_text, Kind.INT8: _int_from_text,
    Kind.FLOAT4: _float_from_text, Kind.FLOAT8: _float_from_text,
    Kind.BOOL: _bool_from_text, Kind.TEXT: _string_from_text,
    Kind.VARCHAR: _string_from_text, Kind.CHAR: _string_from_text,
    Kind.DATE: _date_from_text, Kind.TIMESTAMP: _timestamp_from_text,
    Kind.TIMESTAMPTZ: _timestamp_from_text, Kind.INTERVAL: _interval_from_text,
}


# --- numeric ------------------------------------------------------------------------------
def _numeric_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    s = t.scale
    # The fast path parses at scale s+1 and rounds the last digit: only the first dropped
    # digit decides rounding half away from zero. Rows Arrow could misread (exponents,
    # more digits than decimal128 holds, spaces, NaN) go through Python's Decimal instead.
    slow = pc.or_(pc.greater(pc.binary_length(arr), 36 - s),
                  pc.match_substring_regex(arr, r"[eEnNiI \t\n\r\v\f]")).fill_null(False)
    any_slow = s + 1 > 38 or pc.any(slow).as_py()
    if s + 1 > 38:
        slow = pa.array(np.ones(len(arr), bool))
    fast_in = pc.if_else(slow, _null(pa.string()), arr) if any_slow else arr
    dec = _try_cast(fast_in, pa.decimal128(38, s))
    if dec is None:
        wide = _try_cast(fast_in, pc.CastOptions(pa.decimal128(38, s + 1),
                                                 allow_decimal_truncate=True))
        if wide is None:  # a bad value somewhere: let the exact path find and name it
            slow, any_slow = pc.is_valid(arr), True
            dec = pa.nulls(len(arr), pa.decimal128(38, s))
        else:
            dec = pc.round(wide, ndigits=s, round_mode="half_towards_infinity").cast(
                pa.decimal128(38, s))
    if any_slow:
        rows = np.flatnonzero(slow.to_numpy(zero_copy_only=False))
        exact = []
        for r, v in zip(rows, arr.take(pa.array(rows, pa.int64())).to_pylist()):
            try:
                exact.append(_py_numeric(v, t))
            except errors.QueryError as e:
                _raise(e, int(r))
        dec = pc.replace_with_mask(dec, slow, pa.array(exact, dec.type))
    return _numeric_finish(dec, t)


def _py_numeric(text: str, t: SqlType) -> Decimal:
    s = text.strip(_WS)
    if s.lower() in ("nan", "infinity", "+infinity", "-infinity", "inf", "+inf", "-inf"):
        if s.lower() == "nan":
            raise errors.FeatureNotSupported("NaN cannot be stored in a numeric column")
        raise errors.NumericOutOfRange("numeric field overflow",
                                       detail=_overflow_detail(t, infinite=True))
    if not _NUM_RE.fullmatch(s):
        raise errors.InvalidTextRepresentation(f'invalid input syntax for type numeric: "{text}"')
    d = Decimal(s)
    limit = 38 if t.precision is None else t.precision
    if d and d.adjusted() >= limit - t.scale:
        raise errors.NumericOutOfRange("numeric field overflow", detail=_overflow_detail(t))
    with localcontext() as ctx:
        ctx.prec = 100
        try:
            return d.quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP)
        except InvalidOperation:
            raise errors.NumericOutOfRange("numeric field overflow",
                                           detail=_overflow_detail(t)) from None


def _overflow_detail(t: SqlType, infinite: bool = False) -> str | None:
    if t.precision is None:
        return None
    if infinite:
        return (f"A field with precision {t.precision}, scale {t.scale} cannot hold an "
                "infinite value.")
    return (f"A field with precision {t.precision}, scale {t.scale} must round to an "
            f"absolute value less than {'1' if t.precision == t.scale else '10^'}"
            f"{'' if t.precision == t.scale else t.precision - t.scale}.")


def _numeric_finish(dec: pa.Array, t: SqlType) -> pa.Array:
    """decimal128(38, scale) to the column layout, checking the precision."""
    if t.precision is None:
        return dec  # decimal128 itself bounds the value at 38 digits
    valid = dec.is_valid().to_numpy(zero_copy_only=False)
    if not t.is_scaled_int:
        fits = _wide_fits(dec, t.precision)
    else:
        # The scaled int64 is the low word of the 128-bit value when the high word is
        # only its sign extension.
        words = np.frombuffer(dec.buffers()[1], dtype=np.int64)
        words = words[2 * dec.offset:2 * (dec.offset + len(dec))]
        lo, hi = words[0::2], words[1::2]
        fits = (hi == (lo >> 63)) & (np.abs(lo) < 10 ** t.precision)
    bad = valid & ~fits
    if bad.any():
        _raise(errors.NumericOutOfRange("numeric field overflow", detail=_overflow_detail(t)),
               int(np.flatnonzero(bad)[0]))
    if not t.is_scaled_int:
        return dec
    return pa.array(np.ascontiguousarray(lo), mask=None if dec.null_count == 0 else ~valid)


def _wide_fits(dec: pa.Array, precision: int) -> np.ndarray:
    if precision >= 38:
        return np.ones(len(dec), bool)
    limit = pa.scalar(Decimal(10) ** (precision - dec.type.scale), pa.decimal128(38, 0))
    return pc.less(pc.abs(dec), limit.cast(dec.type)).fill_null(True).to_numpy(
        zero_copy_only=False)


_FROM_TEXT[Kind.NUMERIC] = _numeric_from_text


# --- typed input (Parquet, binary COPY) ---------------------------------------------------
def _from_typed(arr: pa.Array, t: SqlType, target: pa.DataType) -> pa.Array:
    src = arr.type
    if t.is_integer and (pa.types.is_integer(src) or pa.types.is_boolean(src)):
        v = _try_cast(arr, pa.int64())
        if v is None:  # uint64 beyond int64
            _raise(errors.NumericOutOfRange(f"{t.sql()} out of range"), 0)
        return _int_range(v, t)
    if t.is_integer and pa.types.is_floating(src):
        # PostgreSQL rounds half to even (rint) and rejects NaN and out-of-range values.
        r = pc.round(arr.cast(pa.float64()), round_mode="half_to_even")
        lo, hi = _INT_LIMITS[t.kind]
        bad = pc.invert(pc.and_(pc.greater_equal(r, float(lo)), pc.less(r, -float(lo))))
        if pc.any(pc.and_(bad, pc.is_valid(r))).as_py():
            _raise(errors.NumericOutOfRange(f"{t.sql()} out of range"), _first(bad))
        return r.cast(target, safe=False)
    if t.is_float and (pa.types.is_integer(src) or pa.types.is_floating(src)
                       or pa.types.is_decimal(src)):
        return arr.cast(target, safe=False)
    if t.is_numeric:
        return _numeric_from_typed(arr, t)
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
    # Anything else goes through text, like PostgreSQL's I/O conversion on assignment.
    text = _try_cast(arr, pa.string())
    if text is None:
        raise errors.DatatypeMismatch(f"cannot load a column of type {src} into {t.sql()}")
    return _FROM_TEXT[t.kind](text, t)


def _numeric_from_typed(arr: pa.Array, t: SqlType) -> pa.Array:
    src, s = arr.type, t.scale
    if pa.types.is_decimal(src):
        if src.scale > s:
            arr = pc.round(arr, ndigits=s, round_mode="half_towards_infinity")
        dec = _try_cast(arr, pa.decimal128(38, s))
    elif pa.types.is_integer(src):
        dec = _try_cast(arr, pa.decimal128(38, s))
    else:
        # Floats (and the rest) go through their shortest text, close to float8_numeric.
        return _numeric_from_text(arr.cast(pa.string()), t)
    if dec is None:
        _raise(errors.NumericOutOfRange("numeric field overflow", detail=_overflow_detail(t)), 0)
    return _numeric_finish(dec, t)


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
