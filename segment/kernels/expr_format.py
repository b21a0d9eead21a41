"""The formatting functions over batches: to_char, to_date, to_timestamp, to_number.

to_char of timestamps and intervals is vectorized: the template's pieces
(planner/formatting.py `dch_pieces`, parsed once per distinct template) name fields that
are computed for the whole batch in numpy with the planner's own formulas
(`derived_field` over `NumpyOps`), printed with Arrow's string kernels (zero padding by
utf8_lpad, names by a take from the table) and joined with binary_join_element_wise.
to_char of numbers and the functions that read text apply the planner's one-value
functions once per distinct value, the accepted fallback for string work; to_timestamp
of seconds is numpy arithmetic.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import types
from planner.expr import Call, Func
from planner.format_input import epoch_to_timestamp, to_date, to_timestamp
from planner.format_values import NUMBER_KINDS, to_number_value
from planner.formatting import Ops, Piece, dch_pieces, derived_field
from planner.number_format import format_number
from planner.types import Kind
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_cast as xcast
from segment.kernels import expr_datetime as xd
from segment.kernels.expr_string import per_pattern

US_PER_DAY = 86_400_000_000
UNIX_EPOCH_JD = 2440588


class NumpyOps(Ops):
    """The planner's field formulas over int64 arrays (C's truncating division)."""

    @staticmethod
    def where(cond, a, b):
        return np.where(cond, a, b)

    @staticmethod
    def cdiv(a, b: int):
        return np.where(a >= 0, a // b, -((-a) // b))


def _j2date(jd: np.ndarray):
    """PostgreSQL's j2date over an array of Julian days (all >= 0 for timestamps)."""
    julian = jd + 32044
    quad = julian // 146097
    extra = (julian - quad * 146097) * 4 + 3
    julian = julian + 60 + quad * 3 + extra // 146097
    quad = julian // 1461
    julian = julian - quad * 1461
    y = julian * 4 // 1461
    julian = np.where(y != 0, (julian + 305) % 365, (julian + 306) % 366) + 123
    y = y + quad * 4
    quad = julian * 2141 // 65536
    return y - 4800, (quad + 10) % 12 + 1, julian - 7834 * quad // 256


def _date2j(y: np.ndarray, m, d) -> np.ndarray:
    """PostgreSQL's date2j over arrays (years after 4800 BC: its divisions see positives)."""
    late = m > 2
    m2 = np.where(late, m + 1, m + 13)
    y2 = np.where(late, y + 4800, y + 4799)
    century = y2 // 100
    return y2 * 365 - 32167 + y2 // 4 - century + century // 4 + 7834 * m2 // 256 + d


class _TimestampFields(dict):
    """The base fields of a timestamp array, each computed when a piece first needs it
    (a template of dates only never divides out the time of day)."""

    def __init__(self, x: pa.Array):
        super().__init__(interval=False)
        self.us = pc.fill_null(x.cast(pa.int64()), 0).to_numpy(
            zero_copy_only=False).astype(np.int64)

    def __missing__(self, name: str):
        self.update(self._compute(name))
        return self[name]

    def _compute(self, name: str) -> dict:
        if name == "j":
            return {"j": self.us // US_PER_DAY + UNIX_EPOCH_JD}
        if name in ("year", "mon", "mday"):
            return dict(zip(("year", "mon", "mday"), _j2date(self["j"])))
        if name in ("hour", "min", "sec", "fsec"):
            tod = self.us % US_PER_DAY
            return {"hour": tod // 3_600_000_000, "min": tod // 60_000_000 % 60,
                    "sec": tod // 1_000_000 % 60, "fsec": tod % 1_000_000}
        if name == "yday":
            y = self["year"]
            return {"yday": self["j"] - _date2j(y, np.ones_like(y), np.ones_like(y)) + 1}
        if name in ("wday", "isodow"):
            wday = (self["j"] + 1) % 7
            return {"wday": wday, "isodow": np.where(wday == 0, 7, wday)}
        # ISO year and week: those of the week's Thursday
        thursday = self["j"] - self["isodow"] + 4
        isoyear = _j2date(thursday)[0]
        one = np.ones_like(isoyear)
        return {"isoyear": isoyear,
                "isoweek": (thursday - _date2j(isoyear, one, one)) // 7 + 1}


def _interval_fields(x: pa.Array) -> dict:
    months, days, micros, _ = xd.interval_parts(x)
    ops = NumpyOps()
    year, mon = ops.cdiv(months, 12), ops.cmod(months, 12)
    hour = ops.cdiv(micros, 3_600_000_000)
    rest = micros - hour * 3_600_000_000
    minute = ops.cdiv(rest, 60_000_000)
    rest = rest - minute * 60_000_000
    sec = ops.cdiv(rest, 1_000_000)
    return {"interval": True, "year": year, "mon": mon, "mday": days, "hour": hour,
            "min": minute, "sec": sec, "fsec": rest - sec * 1_000_000,
            "yday": (year * 12 + mon) * 30 + days}


def _c_int(v: np.ndarray, width: int, neg_width: int = 0, sign=None) -> pa.Array:
    """C's "%0*d" of each value: `width` wide, `neg_width` where `sign` (default v) is
    negative; a minus sign counts in the width."""
    digits = pc.cast(pa.array(np.abs(v)), pa.string())
    neg = v < 0
    wide = (v if sign is None else sign) < 0
    if not wide.any() and not neg.any():  # the common case: one width
        return pc.utf8_lpad(digits, width, "0") if width > 1 else digits
    pad = np.where(wide, neg_width, width) - neg
    out = digits
    for w in np.unique(pad):
        if w > 1:
            out = pc.if_else(pa.array(pad == w), pc.utf8_lpad(digits, int(w), "0"), out)
    if neg.any():
        out = pc.if_else(pa.array(neg), pc.binary_join_element_wise("-", out, ""), out)
    return out


def _ordinals(v: np.ndarray, upper: bool) -> pa.Array:
    a = np.abs(v)
    last, tens = a % 10, a // 10 % 10
    idx = np.where((tens == 1) | (last == 0) | (last > 3), 3, last - 1)
    table = ("ST", "ND", "RD", "TH") if upper else ("st", "nd", "rd", "th")
    return pa.array(table).take(pa.array(idx))


def _piece(p: Piece, f: dict, ops: NumpyOps, n: int):
    if p.kind == "lit":
        return pa.scalar(p.text)
    if p.kind == "rm":
        mon, year = f["mon"], f["year"]
        idx = np.where(mon == 0, np.where(year >= 0, 11, 0), np.where(mon > 0, mon - 1, 12 + mon))
        names = pa.array([t.ljust(p.width) for t in p.table]).take(pa.array(idx))
        return pc.if_else(pa.array((mon == 0) & (year == 0)), "", names)
    v = np.broadcast_to(np.asarray(derived_field(p.field, f, ops)), (n,))
    if p.kind == "pick":
        return pc.if_else(pa.array(v.astype(bool)), p.table[1], p.table[0])
    if p.kind == "name":
        return pa.array([t.ljust(p.width) for t in p.table]).take(pa.array(v - p.offset))
    if p.kind == "sep":
        thousands = ops.cdiv(v, 1000)
        s = pc.binary_join_element_wise(pc.cast(pa.array(thousands), pa.string()),
                                        _c_int(v - thousands * 1000, 3, 3), ",")
    elif p.kind == "q":
        s = pc.cast(pa.array(v), pa.string())
    else:
        sign = np.broadcast_to(np.asarray(derived_field(p.sign_field, f, ops)), (n,))
        s = _c_int(v, p.width, p.neg_width, sign)
    if p.th:
        s = pc.binary_join_element_wise(s, _ordinals(_th_value(p, v, ops), p.th == "TH"), "")
    if p.kind == "q":
        s = pc.if_else(pa.array(f["mon"] != 0), s, "")
    return s


def _th_value(p: Piece, v: np.ndarray, ops: NumpyOps) -> np.ndarray:
    """The number whose last two printed digits choose the ordinal suffix."""
    return v - ops.cdiv(v, 1000) * 1000 if p.kind == "sep" else v


def format_datetimes(x: pa.Array, kind: Kind, fmt: str) -> pa.Array:
    """to_char(x, fmt) of a timestamp, timestamptz or interval array."""
    n = len(x)
    if not fmt:  # PostgreSQL: NULL for an empty template
        return pa.nulls(n, pa.string())
    is_interval = kind is Kind.INTERVAL
    pieces = dch_pieces(fmt, is_interval, "UTC" if kind is Kind.TIMESTAMPTZ else None)
    f = _interval_fields(x) if is_interval else _TimestampFields(x)
    ops = NumpyOps()
    parts = [_piece(p, f, ops, n) for p in pieces]
    if not parts:
        out = xa.as_array(pa.scalar(""), n)
    else:
        out = xa.as_array(pc.binary_join_element_wise(*parts, ""), n)
    if x.null_count:
        out = pc.if_else(pc.is_valid(x), out, pa.scalar(None, pa.string()))
    return out


def _python_values(x: pa.Array, t) -> list:
    """The distinct values' Python forms (numeric scaled integers as Decimals)."""
    if t.is_numeric and pa.types.is_integer(x.type):
        return [None if v is None else Decimal(v).scaleb(-t.scale) for v in x.to_pylist()]
    return x.to_pylist()


def _per_distinct(x: pa.Array, fn, out_type: types.SqlType, in_type=None) -> pa.Array:
    """fn(value) once per distinct non-NULL value of x, spread back to the rows."""
    enc = pc.dictionary_encode(x)
    values = _python_values(enc.dictionary, in_type) if in_type is not None \
        else enc.dictionary.to_pylist()
    out = xcast.to_arrow([None if v is None else fn(v) for v in values], out_type)
    return out.take(enc.indices)


def to_char(e: Call, args: list, n: int) -> pa.Array:
    """to_char(x, template), once per distinct template."""
    t = e.args[0].type

    def one(x: pa.Array, fmt: pa.Scalar) -> pa.Array:
        f = fmt.as_py()
        if t.kind in NUMBER_KINDS:
            kind = NUMBER_KINDS[t.kind]
            return _per_distinct(x, lambda v: format_number(v, kind, f), types.TEXT, t)
        return format_datetimes(x, t.kind, f)
    return per_pattern(one, xa.as_array(args[0], n), [args[1]], n, pa.string())


def _reader(fn, out_type):
    """A kernel reading text with a template: fn(call, text, template) once per distinct
    string and template, into out_type(call)."""
    def run(e: Call, args: list, n: int) -> pa.Array:
        def one(x: pa.Array, fmt: pa.Scalar) -> pa.Array:
            f = fmt.as_py()
            return _per_distinct(x, lambda v: fn(e, v, f), out_type(e))
        return per_pattern(one, xa.as_array(args[0], n), [args[1]], n,
                           out_type(e).arrow_type())
    return run


_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300800  # years 1 to 9999


def epoch_seconds(e: Call, args: list, n: int) -> pa.Array:
    """to_timestamp(float8): seconds since 1970 -> timestamptz, as PostgreSQL rounds
    (shifted to its 2000 epoch, then to the nearest microsecond, ties to even)."""
    x = xa.as_array(args[0], n)
    s = pc.fill_null(x, 0.0).to_numpy(zero_copy_only=False)
    valid = xa.valid_mask(x)
    live = s if valid is None else s[valid]
    bad = ~np.isfinite(live) | (live < -210866803200.0) | (live >= 9224318016000.0)
    if bad.any():
        epoch_to_timestamp(float(live[np.argmax(bad)]))  # raises PostgreSQL's error
    micros = np.rint((s - 946684800.0) * 1e6).astype(np.int64) + 946684800 * 10**6
    live_us = micros if valid is None else micros[valid]
    out = (live_us < _MIN_SECONDS * 10**6) | (live_us >= _MAX_SECONDS * 10**6)
    if out.any():
        epoch_to_timestamp(float(live[np.argmax(out)]))  # raises the 0A000 refusal
    return xa.from_numpy(micros, e.type.arrow_type(), valid)


def _to_timestamp(e: Call, args: list, n: int) -> pa.Array:
    if len(e.args) == 1:
        return epoch_seconds(e, args, n)
    return _reader(lambda c, v, f: to_timestamp(v, f), lambda c: types.TIMESTAMPTZ)(e, args, n)


CALLS = {
    Func.TO_CHAR: to_char,
    Func.TO_DATE: _reader(lambda c, v, f: to_date(v, f), lambda c: types.DATE),
    Func.TO_TIMESTAMP: _to_timestamp,
    Func.TO_NUMBER: _reader(lambda c, v, f: to_number_value(v, f, c.type), lambda c: c.type),
}
