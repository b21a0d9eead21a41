"""Numeric columns from text or typed Arrow input, with PostgreSQL's rounding and errors.

A numeric(p, s) column is a scaled int64 while p <= 18 and a decimal128(38, s) beyond; an
unconstrained one holds each value with the scale it is written with (numeric_dscale). Text is cast by Arrow at scale s+1 and rounded half away from zero;
rows Arrow could misread (exponents, long digit strings, spaces, NaN) are parsed exactly
with Python's Decimal. Then the precision is checked: 22003 'numeric field overflow' with
PostgreSQL's detail. Part of segment/ingest/convert.py's `convert`.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner.types import SqlType
from planner.values import scale_of
from segment.ingest.base import WS, null, raise_at, try_cast
from segment.kernels.numeric_dscale import build, too_many_digits

_NUM_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def numeric_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    if t.is_dynamic:
        return _dynamic_from_text(arr, t)
    s = t.scale
    # The fast path parses at scale s+1 and rounds the last digit: only the first dropped
    # digit decides rounding half away from zero. Rows Arrow could misread (exponents,
    # more digits than decimal128 holds, spaces, NaN) go through Python's Decimal instead.
    slow = pc.or_(pc.greater(pc.binary_length(arr), 36 - s),
                  pc.match_substring_regex(arr, r"[eEnNiI \t\n\r\v\f]")).fill_null(False)
    any_slow = s + 1 > 38 or pc.any(slow).as_py()
    if s + 1 > 38:
        slow = pa.array(np.ones(len(arr), bool))
    fast_in = pc.if_else(slow, null(pa.string()), arr) if any_slow else arr
    dec = try_cast(fast_in, pa.decimal128(38, s))
    if dec is None:
        wide = try_cast(fast_in, pc.CastOptions(pa.decimal128(38, s + 1),
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
                raise_at(e, int(r))
        dec = pc.replace_with_mask(dec, slow, pa.array(exact, dec.type))
    return _numeric_finish(dec, t)


def _dynamic_from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """An unconstrained numeric column: the values at its storage scale, each with the
    scale it is written with ('1.50' 2, '1e3' 0, '1.5e-3' 4); more fractional digits than
    the storage scale are 22003 at that row."""
    values = numeric_from_text(arr, SqlType(t.kind, None, t.scale))
    trimmed = pc.utf8_trim(arr, characters=WS)
    frac = pc.struct_field(pc.extract_regex(trimmed, r"^[+-]?[0-9]*\.?(?P<frac>[0-9]*)$"),
                           [0])
    dscale = pc.fill_null(pc.utf8_length(frac), 0).to_numpy(zero_copy_only=False).astype(
        np.int64)
    written = pc.and_(pc.is_valid(arr), pc.is_null(frac)).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(written)  # exponents: what Decimal makes of them
    for r, v in zip(rows, arr.take(pa.array(rows, pa.int64())).to_pylist()):
        dscale[r] = scale_of(Decimal(v.strip(WS)))
    valid = pc.is_valid(values).to_numpy(zero_copy_only=False)
    over = np.flatnonzero(valid & (dscale > t.scale))
    if len(over):
        raise_at(too_many_digits(int(dscale[over[0]]), t.scale), int(over[0]))
    return build(values, np.where(valid, dscale, 0), t.scale)


def _py_numeric(text: str, t: SqlType) -> Decimal:
    s = text.strip(WS)
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
        raise_at(errors.NumericOutOfRange("numeric field overflow", detail=_overflow_detail(t)),
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


def numeric_from_typed(arr: pa.Array, t: SqlType) -> pa.Array:
    src, s = arr.type, t.scale
    if t.is_dynamic and (pa.types.is_decimal(src) or pa.types.is_integer(src)):
        scale = src.scale if pa.types.is_decimal(src) else 0
        if scale > s and arr.null_count < len(arr):
            raise_at(too_many_digits(scale, s), 0)
        return build(numeric_from_typed(arr, SqlType(t.kind, None, s)), scale, s)
    if t.is_dynamic:
        return numeric_from_text(arr.cast(pa.string()), t)
    if pa.types.is_decimal(src):
        if src.scale > s:
            arr = pc.round(arr, ndigits=s, round_mode="half_towards_infinity")
        dec = try_cast(arr, pa.decimal128(38, s))
    elif pa.types.is_integer(src):
        dec = try_cast(arr, pa.decimal128(38, s))
    else:
        # Floats (and the rest) go through their shortest text, close to float8_numeric.
        return numeric_from_text(arr.cast(pa.string()), t)
    if dec is None:
        raise_at(errors.NumericOutOfRange("numeric field overflow", detail=_overflow_detail(t)), 0)
    return _numeric_finish(dec, t)
