"""CAST between SQL types over batches, with PostgreSQL's rounding, range checks and text
formats.

Numbers: float -> int rounds half to even (rint), numeric -> int half away from zero,
numeric(p, s) targets round to s and check p (22003 'numeric field overflow'), float ->
numeric keeps 15 significant digits (6 for real) as float8_numeric does. Text input is
parsed by vectorized fast paths for the common forms; anything they do not accept is
re-parsed value by value with planner.values.parse_text, which either understands the
rarer form or raises PostgreSQL's exact error (date/time text: once per distinct value,
segment/kernels/datetime_text.py). Text output matches PostgreSQL's *out
functions (booleans true/false, shortest round-trip floats with PostgreSQL's exponent
rules, numerics with their scale, timestamps without trailing zeros).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, temporal
from planner.temporal import TEMPORAL, Infinite
from planner.values import DEC, parse_text
from planner.types import BINARY_KINDS, PRECISION_KINDS, Kind, SqlType
from segment.kernels import eras
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_binary as xbin
from segment.kernels import expr_datetime as xd
from segment.kernels import expr_kernels as xk
from segment.kernels import expr_numeric as xn
from segment.kernels import numeric_dscale as nd
from segment.kernels import expr_timetz as xtz
from segment.kernels import datetime_text, infinite, zone_offsets

_WS = " \t\n\r\v\f"
_INT64_NUMERIC = SqlType(Kind.NUMERIC, 18, 0)  # int64 layout at scale 0


# Array values and casts are segment/kernels/expr_pgarray.py's, which casts their
# elements through this module: it registers itself here when imported (segment/expr.py
# imports both), so that neither imports the other back.
_ARRAY_KERNELS = None


def register_arrays(kernels) -> None:
    """Make `kernels` (a module with to_arrow and cast of arrays) the array casts."""
    global _ARRAY_KERNELS
    _ARRAY_KERNELS = kernels


def _arrays():
    if _ARRAY_KERNELS is None:
        raise errors.InternalError("array casts used before segment.kernels.expr_pgarray "
                                   "was imported")
    return _ARRAY_KERNELS


class _Reparse(Exception):
    """The fast text parser gave up: parse value by value."""


def to_arrow(values: list, t: SqlType) -> pa.Array:
    """Python values (planner.values conventions) as an array of t's layout."""
    if t.is_array:
        return _arrays().to_arrow(values, t)
    at = t.arrow_type()
    if t.is_dynamic:
        return nd.from_decimals(values, t.scale)
    if t.is_numeric:
        if t.is_scaled_int:
            return pa.array([None if v is None else int(DEC.scaleb(v, t.scale)) for v in values],
                            pa.int64())
        return pa.array(values, at)
    if t.kind is Kind.INTERVAL:
        return pa.array([None if v is None else pa.MonthDayNano([v.months, v.days, v.micros * 1000])
                         for v in values], at)
    if t.kind is Kind.TIMETZ:
        return pa.array([None if v is None else v.pack() for v in values], pa.int64())
    if t.kind in TEMPORAL and any(isinstance(v, Infinite) for v in values):
        return infinite.with_infinities(values, t)
    return pa.array(values, at)


def cast(arr: pa.Array, src: SqlType, dst: SqlType) -> pa.Array:
    """CAST(arr AS dst) for an array of type src."""
    out = _cast(arr, src, dst)
    return out if dst.precision is None or dst.kind not in PRECISION_KINDS else \
        round_fraction(out, dst)


def round_fraction(arr: pa.Array, t: SqlType) -> pa.Array:
    """Values of time(p), timetz(p), timestamp(p), timestamptz(p) or interval(p) rounded
    to p digits as PostgreSQL stores them (timestamps half away from zero from 2000-01-01,
    an interval's time part from 0, times half up from midnight; +/-infinity kept)."""
    if t.kind is Kind.TIME:
        return round_time(arr, t.precision)
    if t.kind is Kind.INTERVAL:  # its time part, half away from zero
        m, d, us, valid = xd.interval_parts(arr)
        q = 10 ** (6 - t.precision)
        return xd.interval_array(m, d, np.sign(us) * ((np.abs(us) + q // 2) // q * q), valid,
                                 len(arr))
    if t.kind is Kind.TIMETZ:
        local, zone, valid = xtz.unpack(arr)
        times = round_time(xa.from_numpy(local, pa.time64("us"), valid), t.precision)
        return xtz.pack(xa.np_view(times, np.int64), zone, valid, len(arr))
    inf = infinite.infinities(arr)
    us = xa.np_view(infinite.finite(arr, inf), np.int64)
    q, epoch = 10 ** (6 - t.precision), temporal.PG_EPOCH_MICROS
    rel = us - epoch
    out = epoch + np.sign(rel) * ((np.abs(rel) + q // 2) // q * q)
    return infinite.put(xa.from_numpy(out, arr.type, xa.valid_mask(arr)), inf)


def round_time(arr: pa.Array, precision: int) -> pa.Array:
    """time values rounded to `precision` fractional digits, half up, as time(p) stores
    them (24:00:00, where 23:59:59.9... rounds up to, is 0A000)."""
    q = 10 ** (6 - precision)
    us = xa.np_view(arr, np.int64)
    out = (us + q // 2) // q * q
    valid = xa.valid_mask(arr)
    if ((out >= temporal.USECS_PER_DAY) & (True if valid is None else valid)).any():
        raise errors.FeatureNotSupported("time 24:00:00 is not supported")
    return xa.from_numpy(out, pa.time64("us"), valid)


def _cast(arr: pa.Array, src: SqlType, dst: SqlType) -> pa.Array:
    n = len(arr)
    if src.kind is Kind.UNKNOWN or arr.null_count == n:
        return pa.nulls(n, dst.arrow_type())
    if src.is_array or dst.is_array:
        return _arrays().cast(arr, src, dst)
    if src.kind is dst.kind and src.kind in BINARY_KINDS:
        return arr
    if dst.is_string:
        return _fit_strings(to_text(arr, src), dst)
    if src.is_string:
        return from_text(arr, dst)
    if src.is_number and dst.is_number:
        return _number(arr, src, dst, n)
    if dst.kind is Kind.BOOL:
        return pc.not_equal(arr, 0)
    if src.kind is Kind.BOOL:
        return pc.cast(arr, dst.arrow_type())
    if src.kind is dst.kind is Kind.INTERVAL:
        return arr
    if Kind.TIMETZ in (src.kind, dst.kind):
        return xtz.cast(arr, src.kind, dst.kind)
    if Kind.TIME in (src.kind, dst.kind):
        return xd.time_cast(arr, src.kind, dst.kind)
    # between date, timestamp and timestamptz (UTC)
    return infinite.cast(arr, dst.arrow_type())


def _fit_strings(arr: pa.Array, t: SqlType) -> pa.Array:
    if t.length is not None and t.kind in (Kind.VARCHAR, Kind.CHAR):
        arr = pc.utf8_slice_codeunits(arr, 0, t.length)
    if t.kind is Kind.CHAR and not t.padded:  # BPCHAR_PADDED keeps them (types.SqlType)
        return pc.utf8_rtrim(arr, characters=" ")
    return arr


# --- numbers -------------------------------------------------------------------------------
def _out_of_range(t: SqlType) -> errors.QueryError:
    return errors.NumericOutOfRange(f"{t.kind.value} out of range")


def _number(arr: pa.Array, src: SqlType, dst: SqlType, n: int) -> pa.Array:
    if dst.is_numeric:
        if src.is_float:
            return _float_to_numeric(arr, src, dst, n)
        return xn.to_array(xn.to_num(arr, src), dst, n, check=True)
    if dst.is_float:
        f = xn.to_float(xn.to_num(arr, src), n) if src.is_numeric else pc.cast(
            arr, pa.float64(), safe=False)
        if dst.kind is Kind.FLOAT8:
            return f
        r = pc.cast(f, pa.float32(), safe=False)
        if pc.any(pc.and_(pc.is_inf(r), pc.is_finite(f))).as_py():
            raise errors.NumericOutOfRange("value out of range: overflow")
        if pc.any(pc.and_(pc.equal(r, 0), pc.not_equal(f, 0))).as_py():
            raise errors.NumericOutOfRange("value out of range: underflow")
        return r
    if src.is_numeric:  # round half away from zero, then range-check
        try:
            arr = xn.to_array(xn.rescale(xn.to_num(arr, src), 0), _INT64_NUMERIC, n, check=False)
        except errors.NumericOutOfRange:
            raise _out_of_range(dst)
    elif src.is_float:
        arr = pc.round(arr, round_mode="half_to_even")
    try:
        return pc.cast(arr, dst.arrow_type())
    except pa.ArrowInvalid:
        raise _out_of_range(dst)


def _float_to_numeric(arr: pa.Array, src: SqlType, dst: SqlType, n: int) -> pa.Array:
    """float -> numeric: round to 15 (real: 6) significant digits, then to dst's scale;
    an unconstrained dst keeps the digits float8_numeric's %.15g prints (1.5 at scale 1)."""
    if dst.is_dynamic:
        values, dscale = _float_digits(arr, src, SqlType(Kind.NUMERIC, None, dst.scale), n)
        return nd.build(values, dscale, dst.scale)
    return _float_digits(arr, src, dst, n)[0]


def _float_digits(arr: pa.Array, src: SqlType, dst: SqlType, n: int):
    """(the floats as numerics of dst, their scales in %.15g form) for _float_to_numeric."""
    vals = pc.fill_null(pc.cast(arr, pa.float64()), 0.0).to_numpy(zero_copy_only=False)
    valid = xa.valid_mask(arr)
    live = vals if valid is None else vals[valid]
    if np.isnan(live).any():
        raise errors.FeatureNotSupported("numeric NaN is not supported")
    if np.isinf(live).any():
        raise errors.NumericOutOfRange("cannot convert infinity to numeric")
    vals = np.where(np.isfinite(vals), vals, 0.0)
    digits = 6 if src.kind is Kind.FLOAT4 else 15
    nz = vals != 0
    k = np.zeros(n, np.int64)
    k[nz] = digits - 1 - np.floor(np.log10(np.abs(vals[nz]))).astype(np.int64)
    m = _scaled_rint(vals, k)
    for adjust, cond in ((-1, lambda: np.abs(m) >= 10.0**digits),
                         (1, lambda: nz & (np.abs(m) < 10.0**(digits - 1)))):
        fix = cond()
        if fix.any():
            k[fix] += adjust
            m[fix] = _scaled_rint(vals[fix], k[fix])
    m = m.astype(np.int64)
    dscale = _printed_scale(m, k)
    shift = dst.scale - k  # value = m * 10^-k; wanted: the integers at dst.scale
    out = np.zeros(n, dtype=np.int64)
    down = shift < 0
    if down.any():  # round away digits; beyond 18 of them |m| < 10^15 rounds to 0
        divisor = np.where(down, 10 ** np.minimum(np.abs(shift), 18), 1).astype(np.int64)
        q = xn.divide_ints(xn.Num(pa.array(np.where(down, m, 0)), 0), xn.Num(pa.array(divisor), 0),
                           xn.MODE_HALF_AWAY, 0)
        quotient = q.lo if q.lo is not None else xa.np_view(q.fast, np.int64)
        out = np.where(down & (shift >= -18), quotient, 0)
    up = ~down
    if not up.any() or shift[up].max() <= 3:  # |m| < 10^15: still fits int64
        out[up] = m[up] * 10 ** shift[up]
        return xn.to_array(xn.Num(xa.from_numpy(out, pa.int64(), valid), dst.scale), dst,
                           n), dscale
    wide = out.astype(object)
    wide[up] = m[up].astype(object) * (10 ** shift[up].astype(object))
    if valid is not None:
        wide[~valid] = 0
    return xn.to_array(xn.Num(scale=dst.scale, wide=wide, valid=valid), dst, n), dscale


def _printed_scale(m: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The scale of m * 10^-k written without trailing fractional zeros (as %g)."""
    m, k = m.copy(), k.copy()
    for _ in range(16):
        strip = (m != 0) & (m % 10 == 0) & (k > 0)
        if not strip.any():
            break
        m[strip] //= 10
        k[strip] -= 1
    return np.where(m == 0, 0, np.maximum(k, 0))


def _scaled_rint(vals: np.ndarray, k: np.ndarray) -> np.ndarray:
    half = k // 2
    return np.rint(vals * np.power(10.0, half) * np.power(10.0, k - half))


# --- text output ---------------------------------------------------------------------------
def to_text(arr: pa.Array, src: SqlType) -> pa.Array:
    """PostgreSQL's text form of every value."""
    k = src.kind
    if src.is_string:
        return arr
    if k is Kind.BOOL:
        return pc.if_else(arr, "true", "false")
    if src.is_float:
        return _float_text(arr, k is Kind.FLOAT4)
    if src.is_dynamic:
        return nd.per_scale_text(arr, _numeric_text)
    if k is Kind.NUMERIC:
        return _numeric_text(arr, src.scale)
    if k is Kind.DATE:
        return infinite.text(arr, date_text)
    if k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        return infinite.text(arr, lambda a: timestamp_text(
            pc.cast(a, pa.timestamp("us")), "+00" if k is Kind.TIMESTAMPTZ else None))
    if k is Kind.INTERVAL:
        return xd.format_intervals(arr)
    if k is Kind.TIMETZ:
        return xtz.to_text(arr)
    if k is Kind.TIME:
        return pc.replace_substring_regex(pc.cast(arr, pa.string()), r"(\.\d*[1-9])0+$|\.0+$",
                                          r"\1")
    if k in BINARY_KINDS:
        return xbin.to_text(arr, src)
    return pc.cast(arr, pa.string())


def _text_era(trimmed: pa.Array, dst: SqlType, given: pa.Array) -> pa.Array:
    """ISO dates / timestamps of any year, and 'infinity' / '-infinity' (eras.parsing
    around Arrow's cast; a timestamptz without offsets in UTC, as every caller's text is
    in a UTC session or has its offset); other spellings are left to the value-by-value
    parser."""
    def iso(a: pa.Array) -> pa.Array | None:
        if dst.kind is not Kind.TIMESTAMPTZ:
            return pc.cast(a, dst.arrow_type())
        with_offsets = zone_offsets.instants(a, lambda c: pc.cast(c, pa.timestamp("us")))
        if with_offsets is not None:
            return with_offsets
        return pc.cast(a, pa.timestamp("us")).cast(dst.arrow_type())  # no offset: UTC
    # The common case: Arrow reads it all (four-digit years, within range). Where it
    # cannot, the era-aware parse below reads it (or refuses it, value by value).
    with contextlib.suppress(pa.ArrowInvalid):
        return iso(trimmed)
    per_day = 1 if dst.kind is Kind.DATE else eras.US_PER_DAY
    word = pc.utf8_lower(trimmed)
    pos, neg = (np.asarray(pc.fill_null(pc.equal(word, w), False), dtype=bool)
                for w in ("infinity", "-infinity"))
    rest = pc.if_else(pa.array(pos | neg), pa.scalar(None, pa.string()), trimmed)
    try:
        out = eras.parsing(iso, per_day)(rest)
    except pa.ArrowInvalid:
        out = None
    if out is None:
        raise _Reparse
    eras.check_range(out, per_day, given)
    return infinite.put(out, (pos, neg)) if (pos | neg).any() else out


def date_text(arr: pa.Array) -> pa.Array:
    """date_out of finite dates (any year: '0044-03-15 BC', '10000-01-01')."""
    return eras.text(arr, 1, lambda a: pc.cast(a, pa.string()))


def timestamp_text(arr: pa.Array, suffix=None) -> pa.Array:
    """timestamp_out of finite timestamp[us] values, without trailing fractional zeros;
    `suffix` (the zone offset of a timestamptz) goes before a ' BC'."""
    return eras.text(arr, eras.US_PER_DAY, lambda a: pc.replace_substring_regex(
        pc.cast(a, pa.string()), r"(\.\d*[1-9])0+$|\.0+$", r"\1"), suffix)


def _numeric_text(arr: pa.Array, s: int) -> pa.Array:
    """numeric_out at a fixed scale, never with an exponent (Arrow's decimal formatting
    writes 0E-10), by a numba kernel over the integers."""
    n = len(arr)
    valid = xa.valid_mask(arr)
    if pa.types.is_decimal(arr.type):
        words = xa.np_view(arr, np.int64)
        lo, hi, wide = np.ascontiguousarray(words[0::2]), np.ascontiguousarray(words[1::2]), True
    else:
        lo = xa.np_view(arr, np.int64)
        hi, wide = lo, False
    offsets, data = xk.format_numeric(lo, hi, xa.all_valid(n) if valid is None else valid, s, wide)
    return pa.Array.from_buffers(pa.string(), n, [xa.validity_buffer(arr), pa.py_buffer(offsets),
                                                  pa.py_buffer(data)], null_count=arr.null_count)


def _float_text(arr: pa.Array, float4: bool) -> pa.Array:
    """float8out / float4out: shortest round-trip digits (Arrow's), in plain notation for
    decimal exponents -4 <= e < 15 (real: 6), else d.ddde+XX. Arrow writes plain notation
    for -6 <= e < 10, so only rows of magnitude below 1e-4 or in [1e10, 1e15) (real:
    [1e6, 1e10)) are laid out again."""
    raw = out = pc.cast(arr, pa.string())
    if pc.any(pc.invert(pc.is_finite(arr))).as_py():
        out = pc.if_else(pc.is_nan(arr), "NaN", pc.if_else(
            pc.is_inf(arr), pc.if_else(pc.greater(arr, 0), "Infinity", "-Infinity"), raw))
    x = np.abs(pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False).astype(np.float64))
    band = (0.999e6, 1.001e10) if float4 else (0.999e10, 1.001e15)
    redo = np.isfinite(x) & (x != 0) & ((x < 1.001e-4) | ((x >= band[0]) & (x < band[1])))
    if not redo.any():
        return out
    mask = pa.array(redo)
    return pc.replace_with_mask(out, mask, _layout_floats(raw.filter(mask), float4))


def _layout_floats(raw: pa.Array, float4: bool) -> pa.Array:
    """Re-lay Arrow's shortest digits (any notation) the PostgreSQL way, per exponent."""
    parts = pc.extract_regex(
        raw, r"^(?P<sign>-?)(?P<int>\d+)(?:\.(?P<frac>\d+))?(?:e(?P<exp>[+-]?\d+))?$")
    sign, ipart, frac, exp = (pc.struct_field(parts, [i]) for i in range(4))
    all_digits = pc.binary_join_element_wise(ipart, frac, "")
    stripped = pc.utf8_ltrim(all_digits, characters="0")
    lead = pc.subtract(pc.utf8_length(all_digits), pc.utf8_length(stripped))
    digits = pc.utf8_rtrim(stripped, characters="0")
    exp = pc.replace_substring(pc.if_else(pc.equal(exp, ""), "0", exp), "+", "")
    e = pc.subtract(pc.add(pc.cast(exp, pa.int64()), pc.utf8_length(ipart)), pc.add(lead, 1))
    e_np = e.to_numpy(zero_copy_only=False)
    out = raw
    high = 6 if float4 else 15
    for ev in np.unique(e_np):
        mask = pa.array(e_np == ev)
        d = digits.filter(mask)
        ev = int(ev)
        if 0 <= ev < high:
            whole = pc.utf8_slice_codeunits(pc.utf8_rpad(d, ev + 1, "0"), 0, ev + 1)
            rest = pc.utf8_slice_codeunits(d, ev + 1)
            text = pc.if_else(pc.equal(rest, ""), whole,
                              pc.binary_join_element_wise(whole, rest, "."))
        elif -4 <= ev < 0:
            text = pc.binary_join_element_wise("0." + "0" * (-ev - 1), d, "")
        else:
            head, tail = pc.utf8_slice_codeunits(d, 0, 1), pc.utf8_slice_codeunits(d, 1)
            mant = pc.if_else(pc.equal(tail, ""), head,
                              pc.binary_join_element_wise(head, tail, "."))
            text = pc.binary_join_element_wise(mant, f"e{'-' if ev < 0 else '+'}{abs(ev):02d}", "")
        text = pc.binary_join_element_wise(sign.filter(mask), text, "")
        out = pc.replace_with_mask(out, mask, text)
    return out


# --- text input ----------------------------------------------------------------------------
def from_text(arr: pa.Array, dst: SqlType) -> pa.Array:
    """Parse text as dst; fast paths for the common forms, value by value otherwise."""
    k = dst.kind
    if k in BINARY_KINDS:
        return xbin.from_text(arr, dst)
    if k in DATETIME_KINDS:
        return datetime_text.column(arr, dst, lambda a: datetime_fast(a, dst))
    try:
        if k is Kind.INTERVAL:
            return xd.parse_intervals(arr)
        trimmed = pc.utf8_trim(arr, characters=_WS)
        if k is Kind.BOOL:
            return _text_bool(trimmed)
        if dst.is_integer:
            if not _all(pc.match_substring_regex(trimmed, r"^[+-]?[0-9]+$")):
                raise _Reparse
            return pc.cast(pc.cast(pc.replace_substring_regex(trimmed, r"^\+", ""), pa.int64()),
                           dst.arrow_type())
        if dst.is_float:
            return _text_float(trimmed, dst)
        if dst.is_numeric:
            return _text_numeric(trimmed, dst)
        return pc.cast(trimmed, dst.arrow_type())
    except (_Reparse, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    values = [None if v is None else parse_text(v, dst) for v in arr.to_pylist()]
    return to_arrow(values, dst)


DATETIME_KINDS = (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIME, Kind.TIMETZ)


def datetime_fast(arr: pa.Array, dst: SqlType) -> pa.Array | None:
    """Date/time text in its common forms, vectorized (ISO dates and timestamps of any
    year, 'infinity', offsets; times 'hh:mm[:ss[.f]]'); None, or an error, when some value
    is in another form or bad (segment/kernels/datetime_text.py reads those)."""
    if dst.kind is Kind.TIME:
        return fast_time(arr)
    if dst.kind is Kind.TIMETZ:
        return None
    try:
        return _text_era(pc.utf8_trim(arr, characters=_WS), dst, arr)
    except _Reparse:
        return None


def fast_time(arr: pa.Array) -> pa.Array | None:
    """time from text in its common forms, vectorized; None when some value needs
    segment/kernels/datetime_text.py (a rarer form, or an error to report)."""
    try:
        return _text_time(arr)
    except (_Reparse, pa.ArrowInvalid):
        return None


def _text_time(arr: pa.Array) -> pa.Array:
    """HH:MM[:SS[.frac]] (the common form of time input) without a Python loop; others
    go through segment/kernels/datetime_text.py."""
    parts = pc.extract_regex(arr, r"^[ \t\n\r\v\f]*(?P<h>[0-9]{1,2}):(?P<m>[0-9]{1,2})"
                                  r"(?::(?P<s>[0-9]{1,2})(?:\.(?P<f>[0-9]{0,6}))?)?"
                                  r"[ \t\n\r\v\f]*$")
    if parts.null_count != arr.null_count:
        raise _Reparse
    h, m, sec, frac = (pc.struct_field(parts, [i]) for i in range(4))

    def ints(x, default):
        return pc.cast(pc.if_else(pc.equal(x, ""), default, x), pa.int64())
    h, m, sec = ints(h, "0"), ints(m, "0"), ints(sec, "0")
    if not _all(pc.and_(pc.less(h, 24), pc.and_(pc.less(m, 60), pc.less(sec, 60)))):
        raise _Reparse  # out of range (or 24:00:00): the slow path's error
    micros = ints(pc.utf8_rpad(frac, 6, "0"), "0")
    total = pc.add(pc.multiply(pc.add(pc.multiply(pc.add(pc.multiply(h, 60), m), 60), sec),
                               1_000_000), micros)
    return pc.cast(total, pa.time64("us"))


def _all(d) -> bool:
    return bool(pc.all(d).as_py() in (True, None))


_TRUE = ["1", "t", "tr", "tru", "true", "y", "ye", "yes", "on"]
_FALSE = ["0", "f", "fa", "fal", "fals", "false", "n", "no", "of", "off"]


def _text_bool(trimmed: pa.Array) -> pa.Array:
    idx = pc.index_in(pc.utf8_lower(trimmed), value_set=pa.array(_TRUE + _FALSE))
    if idx.null_count != trimmed.null_count:
        raise _Reparse
    return pc.less(idx, len(_TRUE))


def _text_float(trimmed: pa.Array, dst: SqlType) -> pa.Array:
    low = pc.utf8_lower(trimmed)
    number = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?$"
    word = r"^[+-]?(inf|infinity|nan)$"
    if not _all(pc.or_(pc.match_substring_regex(low, number), pc.match_substring_regex(low, word))):
        raise _Reparse
    v = pc.cast(pc.replace_substring(low, "infinity", "inf"), pa.float64())
    is_word = pc.match_substring_regex(low, word)
    nonzero_mantissa = pc.match_substring_regex(low, r"^[^e]*[1-9]")
    if not _all(pc.invert(pc.and_(pc.is_inf(v), pc.invert(is_word)))) or not _all(
            pc.invert(pc.and_(pc.equal(v, 0), nonzero_mantissa))):
        raise _Reparse  # out of range: the slow path raises PostgreSQL's message
    if dst.kind is Kind.FLOAT4:
        r = pc.cast(v, pa.float32(), safe=False)
        if not _all(pc.invert(pc.and_(pc.is_inf(r), pc.invert(pc.is_inf(v))))):
            raise _Reparse
        return r
    return v


def _text_numeric(trimmed: pa.Array, dst: SqlType) -> pa.Array:
    parts = pc.extract_regex(trimmed, r"^(?P<sign>[+-]?)(?P<int>[0-9]*)\.?(?P<frac>[0-9]*)$")
    if parts.null_count != trimmed.null_count:
        raise _Reparse  # exponents, NaN, garbage
    sign, ipart, frac = (pc.struct_field(parts, [i]) for i in range(3))
    if dst.is_dynamic:  # each value at the scale it is written with
        dscale = pc.fill_null(pc.utf8_length(frac), 0).to_numpy(zero_copy_only=False)
        if len(dscale) and dscale.max() > dst.scale:
            raise _Reparse  # the value by value path says 22003
        values = _text_numeric(trimmed, SqlType(Kind.NUMERIC, None, dst.scale))
        return nd.build(values, dscale.astype(np.int64), dst.scale)
    if not _all(pc.greater(pc.add(pc.utf8_length(ipart), pc.utf8_length(frac)), 0)):
        raise _Reparse
    s = dst.scale
    frac = pc.utf8_rpad(pc.utf8_slice_codeunits(frac, 0, s + 1), s + 1, "0")
    digits = pc.utf8_ltrim(pc.binary_join_element_wise(ipart, frac, ""), characters="0")
    digits = pc.if_else(pc.equal(digits, ""), "0", digits)
    longest = pc.max(pc.utf8_length(digits)).as_py() or 1
    if longest > 38:
        raise _Reparse
    ints = pc.cast(digits, pa.int64() if longest <= 18 else pa.decimal128(38, 0))
    ints = pc.if_else(pc.equal(sign, "-"), pc.negate(ints), ints)
    num = xn.to_num(ints, dst)
    num.scale = s + 1
    return xn.to_array(num, dst, len(trimmed), check=True)
