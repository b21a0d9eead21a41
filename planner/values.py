"""SQL values as Python values: their text input and output, casts, and numeric fitting.

Literal.value is bool, int, float, Decimal (numeric, quantized to the type's scale), str,
datetime.date, datetime.datetime (naive for timestamp, UTC-aware for timestamptz),
expr.Interval or bytes (bytea, uuid). `parse_text` / `format_text` are PostgreSQL's input
and output functions, `cast_value` is CAST of one value, `fit_numeric` / `fit_string` /
`fit_length` bring a value to a type's typmod with PostgreSQL's errors. The typing rules
convert literals with these at bind time, planner/fold.py folds constants with them, and
segment/kernels use them for their rare per-value paths. Dates, timestamps and intervals
are planner/temporal.py's, bytea and uuid planner/binary_values.py's.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from decimal import Decimal

from planner import (array_text, binary_values, catalog_names, errors, json_values, temporal,
                     time_values, types)
from planner.temporal import TEMPORAL, UTC, format_interval, parse_interval
from planner.timestamp_text import parse_timestamp
from planner.types import Kind, SqlType

DEC = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP, Emax=10**6, Emin=-10**6)
INT_RANGES = {Kind.INT2: (-2**15, 2**15 - 1), Kind.INT4: (-2**31, 2**31 - 1),
              Kind.INT8: (-2**63, 2**63 - 1)}
_WS = " \t\n\r\v\f"
_INT_RE = re.compile(r"\s*[+-]?\d+\s*\Z", re.A)
_NUM_RE = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*\Z", re.A)
_FLOAT_WORDS = {"nan": math.nan, "infinity": math.inf, "+infinity": math.inf, "inf": math.inf,
                "+inf": math.inf, "-infinity": -math.inf, "-inf": -math.inf}


def int_fits(v, t: SqlType) -> bool:
    return t.kind in INT_RANGES and isinstance(v, int) and not isinstance(v, bool) and (
        INT_RANGES[t.kind][0] <= v <= INT_RANGES[t.kind][1])


def check_int(v: int, t: SqlType) -> int:
    lo, hi = INT_RANGES[t.kind]
    if not lo <= v <= hi:
        raise errors.NumericOutOfRange(f"{t.kind.value} out of range")
    return v


def numeric_type_of(d: Decimal) -> SqlType:
    """The tightest numeric(p, s) holding d (numeric(None, s) beyond 18 digits)."""
    if not d.is_finite():
        raise errors.FeatureNotSupported("numeric NaN and Infinity are not supported")
    scale = max(0, -d.as_tuple().exponent)
    p = max(len(str(abs(int(DEC.scaleb(d, scale))))), scale, 1)
    if p > 38:
        raise errors.NumericOutOfRange("value overflows numeric format",
                                       detail="raympp numerics hold at most 38 digits")
    return types.numeric(p, scale) if p <= 18 else types.numeric(None, scale)


def min_scale_of(d: Decimal) -> int:
    """The fewest decimal places that hold d exactly (PostgreSQL's min_scale)."""
    return 0 if d == 0 else max(0, -DEC.normalize(d).as_tuple().exponent)


def fit_numeric(d: Decimal, t: SqlType) -> Decimal:
    """d rounded half away from zero to t's scale; 22003 when it exceeds t's precision."""
    if not d.is_finite():
        raise errors.NumericOutOfRange("numeric field overflow",
                                       detail="raympp numerics cannot hold NaN or infinity")
    q = DEC.quantize(d, Decimal(1).scaleb(-t.scale))
    p = t.precision or 38
    if DEC.abs(q) >= DEC.scaleb(Decimal(1), p - t.scale):  # abs(): 28 digits, would round
        if t.precision is None:
            raise errors.NumericOutOfRange("value overflows numeric format",
                                           detail="raympp numerics hold at most 38 digits")
        raise errors.NumericOutOfRange(
            "numeric field overflow", detail=f"A field with precision {p}, scale {t.scale} "
            f"must round to an absolute value less than 10^{p - t.scale}.")
    return abs(q) if q == 0 else q


def scale_of(d: Decimal) -> int:
    """The display scale numeric_in gives a value as written ('1.50' 2, '1e3' 0)."""
    return max(0, -d.as_tuple().exponent)


def from_value_and_scale(v: dict) -> Decimal:
    """The Decimal of an unconstrained numeric read from a batch ({value, dscale}), at its
    display scale."""
    return DEC.quantize(v[types.NUMERIC_VALUE_FIELD],
                        Decimal(1).scaleb(-v[types.NUMERIC_SCALE_FIELD]))


def fit_dynamic(d: Decimal, t: SqlType) -> Decimal:
    """d as a value of an unconstrained numeric: its own display scale, which (like its
    integer digits) must fit the storage scale (22003)."""
    if not d.is_finite():
        raise errors.NumericOutOfRange("numeric field overflow",
                                       detail="raympp numerics cannot hold NaN or infinity")
    if d.as_tuple().exponent > 0:  # 1e3: 1000 at scale 0
        d = DEC.quantize(d, Decimal(1))
    scale = scale_of(d)
    if scale > t.scale or DEC.abs(d) >= DEC.scaleb(Decimal(1), 38 - t.scale):
        raise errors.NumericOutOfRange(
            "value overflows numeric format",
            detail=f"raympp's unconstrained numerics hold at most {38 - t.scale} integer and "
                   f"{t.scale} fractional digits here")
    return abs(d) if d == 0 else d


def fit_string(s: str, t: SqlType) -> str:
    """Explicit casts to varchar(n) / char(n) truncate; char values keep no padding."""
    if t.length is not None and t.kind in (Kind.VARCHAR, Kind.CHAR):
        s = s[:t.length]
    return s.rstrip(" ") if t.kind is Kind.CHAR and not t.padded else s


def bpchar_spaces_refused() -> errors.QueryError:
    """Storing a value with trailing spaces into a bpchar column without a length: PostgreSQL
    keeps and prints them; raympp keeps char values without trailing spaces (char(n) prints
    padded to n, so nothing is lost there), which would print it differently."""
    return errors.FeatureNotSupported(
        "trailing spaces in a value stored as bpchar without a length (use char(n) or text)")


def fit_length(s: str, t: SqlType) -> str:
    """A string stored into varchar(n)/char(n): 22001 when longer, unless the excess is
    spaces (PostgreSQL truncates those); char values keep no trailing spaces. Into a bpchar
    without a length, trailing spaces are 0A000 (bpchar_spaces_refused). An array's
    elements each (t an array of them)."""
    if t.kind is Kind.ARRAY:
        return tuple(None if x is None else fit_length(x, t.element) for x in s)
    if t.length is None:
        if t.kind is Kind.CHAR and s.endswith(" "):
            raise bpchar_spaces_refused()
        return s
    if len(s) > t.length:
        if s[t.length:].strip(" "):
            raise errors.QueryError(f"value too long for type {t}", "22001")
        s = s[:t.length]
    return s.rstrip(" ") if t.kind is Kind.CHAR else s


def _syntax(t: SqlType, text: str) -> errors.QueryError:
    """Bad input for a non-temporal type (planner/temporal.py words its own)."""
    return errors.InvalidTextRepresentation(
        f'invalid input syntax for type {t.kind.value}: "{text}"')


def parse_text(text: str, t: SqlType):
    """A value of type t from its text form, with PostgreSQL's input rules and errors."""
    k = t.kind
    if t.is_string or k is Kind.UNKNOWN:
        return fit_string(text, t)
    if t.is_array:
        return parse_array(text, t)
    if k is Kind.BOOL:
        return _parse_bool(text)
    if k in (Kind.OID, Kind.XID):  # array elements of the catalog's arrays
        if not _INT_RE.match(text) or not -2**31 <= int(text.strip(_WS)) < 2**32:
            raise _syntax(t, text)
        return int(text.strip(_WS)) % 2**32
    if k in INT_RANGES:
        if not _INT_RE.match(text):
            raise _syntax(t, text)
        v = int(text.strip(_WS))
        if not int_fits(v, t):
            raise errors.NumericOutOfRange(f'value "{text}" is out of range for type {k.value}')
        return v
    if t.is_float:
        return _parse_float(text, t)
    if k is Kind.NUMERIC:
        return fit_dynamic(to_decimal(text), t) if t.is_dynamic else fit_numeric(
            to_decimal(text), t)
    if k in TEMPORAL:
        v = parse_timestamp(text, t)
        if k is Kind.DATE:
            return v.date() if isinstance(v, dt.datetime) else v
        return temporal.round_timestamp(v, t.precision)
    if k is Kind.INTERVAL:
        return temporal.round_interval(parse_interval(text), t.precision)
    if k is Kind.TIME:
        return time_values.round_time(time_values.parse_time(text), t.precision)
    if k is Kind.TIMETZ:
        return time_values.round_timetz(time_values.parse_timetz(text), t.precision)
    if k in (Kind.JSON, Kind.JSONB):
        return json_values.to_json_kind(text, types.TEXT, t)
    if k is Kind.BYTEA:
        return binary_values.parse_bytea(text)
    if k is Kind.UUID:
        return binary_values.parse_uuid(text)
    raise errors.FeatureNotSupported(f"input of type {t}")


def text_in(text: str, t: SqlType, zone, order: str):
    """A date/time type's input function of `text` in a session's zone (a
    planner.time_zones.Zone) and DateStyle field order (Func.TEXT_IN)."""
    if t.kind in TEMPORAL:
        return parse_timestamp(text, t, zone, order)
    if t.kind is Kind.TIME:
        return time_values.parse_time(text, order, zone)
    return time_values.parse_timetz(text, order, zone)


def _parse_bool(text: str) -> bool:
    s = text.strip(_WS).lower()
    if s in ("1", "0"):
        return s == "1"
    for word, value in (("true", True), ("false", False), ("yes", True), ("no", False)):
        if s and word.startswith(s):
            return value
    if s in ("on", "off", "of"):
        return s == "on"
    raise errors.InvalidTextRepresentation(f'invalid input syntax for type boolean: "{text}"')


def _parse_float(text: str, t: SqlType) -> float:
    s = text.strip(_WS).lower()
    if s in _FLOAT_WORDS:
        return _FLOAT_WORDS[s]
    if not _NUM_RE.match(s):
        raise _syntax(t, text)
    v = float(s)
    if t.kind is Kind.FLOAT4 and not math.isinf(v):
        v = _f32(v) if abs(v) < 3.5e38 else math.inf
    if math.isinf(v) or (v == 0 and any(c in "123456789" for c in s.split("e")[0])):
        raise errors.NumericOutOfRange(f'"{text}" is out of range for type {t.kind.value}')
    return v


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def to_float4(x: float) -> float:
    """x rounded to float32; 22003 when a finite value overflows or underflows."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        r = _f32(x)
    except OverflowError:
        raise errors.NumericOutOfRange("value out of range: overflow")
    if math.isinf(r):
        raise errors.NumericOutOfRange("value out of range: overflow")
    if r == 0 and x != 0:
        raise errors.NumericOutOfRange("value out of range: underflow")
    return r


def format_text(v, t: SqlType) -> str | None:
    """PostgreSQL's text output of a value (what `v::text` gives)."""
    if v is None:
        return None
    k = t.kind
    if t.is_array:
        return format_array(v, t)
    if k is Kind.BOOL:
        return "true" if v else "false"
    if t.is_float:
        return format_float(v, k is Kind.FLOAT4)
    if k is Kind.NUMERIC:
        q = v if t.is_dynamic else DEC.quantize(v, Decimal(1).scaleb(-t.scale))
        return f"{abs(q) if q == 0 else q:f}"
    if isinstance(v, temporal.Infinite):
        return str(v)
    if k is Kind.DATE:
        return v.isoformat()
    if k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        s = f"{v.date().isoformat()} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
        s += f".{v.microsecond:06d}".rstrip("0") if v.microsecond else ""
        return s + ("+00" if k is Kind.TIMESTAMPTZ else "")
    if k is Kind.INTERVAL:
        return format_interval(v)
    if k is Kind.TIME:
        return time_values.format_time(v)
    if k is Kind.TIMETZ:  # a Python value, or the packed int64 a batch holds
        return time_values.format_timetz(time_values.TimeTz.unpack(v) if isinstance(v, int) else v)
    if k is Kind.BYTEA:
        return binary_values.format_bytea(v)
    if k is Kind.UUID:
        return binary_values.format_uuid(v)
    return v if isinstance(v, str) else str(v)


def format_float(x: float, float4: bool = False) -> str:
    """float8out / float4out: shortest round-trip digits, exponent form outside
    1e-4 <= |x| < 1e15 (1e6 for real)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    if float4:
        x = _f32(x)
        r = next(s for s in (f"{x:.{n}g}" for n in range(1, 10)) if _f32(float(s)) == x)
    else:
        r = repr(x)
    d = Decimal(r).normalize()
    e = d.adjusted()
    if -4 <= e < (6 if float4 else 15):
        return f"{d:f}"
    digits = "".join(map(str, d.as_tuple().digits))
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{'-' if x < 0 else ''}{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"


def cast_value(v, src: SqlType, dst: SqlType):
    """CAST of one value (the constant folder's and bind_cast's conversion)."""
    if v is None:
        return None
    s, d = src.kind, dst.kind
    if d in (Kind.JSON, Kind.JSONB):
        return json_values.to_json_kind(v, src, dst)
    if s is Kind.JSONB and not dst.is_string:  # a scalar's value, then cast as its own type
        x, xt = json_values.scalar_of(v, dst)
        if dst.is_numeric and dst.precision is None and dst.scale == 0:
            return x  # a constant's unconstrained numeric keeps its own scale
        return cast_value(x, xt, dst)
    if dst.is_string:
        return fit_string(v if isinstance(v, str) else format_text(v, src), dst)
    if isinstance(v, str):
        return parse_text(v, dst)
    if src.is_array and dst.is_array:
        return cast_array(v, src, dst)
    if d in INT_RANGES:
        if isinstance(v, float):
            if math.isnan(v) or math.isinf(v):
                raise errors.NumericOutOfRange(f"{d.value} out of range")
            v = round(v)  # rint: half to even, as PostgreSQL's float-to-int casts
        elif isinstance(v, Decimal):
            v = int(DEC.quantize(v, Decimal(1)))
        return check_int(int(v), dst)
    if dst.is_float:
        return to_float4(float(v)) if d is Kind.FLOAT4 else float(v)
    if d is Kind.NUMERIC:
        value = to_decimal(v, s is Kind.FLOAT4)
        return fit_dynamic(value, dst) if dst.is_dynamic else fit_numeric(value, dst)
    if d is Kind.BOOL:
        return v != 0
    if d in TEMPORAL and isinstance(v, temporal.Infinite):
        return v
    if d is Kind.DATE:
        return v.date() if isinstance(v, dt.datetime) else v
    if d in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        if not isinstance(v, dt.datetime):
            v = dt.datetime.combine(v, dt.time())
        return temporal.round_timestamp(v.replace(tzinfo=UTC if d is Kind.TIMESTAMPTZ else None),
                                        dst.precision)
    if d is Kind.TIME:
        return time_values.round_time(time_values.to_time(v, s), dst.precision)
    if d is Kind.TIMETZ:
        return time_values.round_timetz(time_values.to_timetz(v), dst.precision)
    if d is Kind.INTERVAL:
        return temporal.round_interval(time_values.time_interval(v) if s is Kind.TIME else v,
                                       dst.precision)
    if s is d:  # bytea, uuid
        return v
    raise errors.QueryError(f"cannot cast type {src} to {dst}", "42846")


def to_decimal(v, float4: bool = False) -> Decimal:
    """The exact numeric value of an int, float (15 significant digits, as PostgreSQL's
    float8-to-numeric cast; 6 for real), Decimal or numeric text."""
    if isinstance(v, str):
        if not _NUM_RE.match(v):
            if v.strip(_WS).lower() in _FLOAT_WORDS:
                raise errors.FeatureNotSupported("numeric NaN and Infinity are not supported")
            raise _syntax(types.numeric(None, 0), v)
        return Decimal(v.strip(_WS))
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise errors.FeatureNotSupported("numeric NaN and Infinity are not supported")
        return Decimal(f"{v:.{6 if float4 else 15}g}")
    return Decimal(v)


def div_scale(a: Decimal, b: Decimal, sa: int, sb: int) -> int:
    """PostgreSQL's select_div_scale for two known operands (at least 16 significant
    digits, from the weights and first base-10000 digits of the operands)."""
    def weight_first(x: Decimal) -> tuple[int, int]:
        if not x:  # no digits: weight 0, first digit 0
            return 0, 0
        w = abs(x).adjusted() // 4
        return w, int(DEC.scaleb(abs(x), -4 * w))
    w1, f1 = weight_first(a)
    w2, f2 = weight_first(b)
    qweight = w1 - w2 - (1 if f1 <= f2 else 0)
    return min(max(16 - qweight * 4, sa, sb, 0), 1000)


def check_like_pattern(p: str) -> None:
    i = 0
    while i < len(p):
        if p[i] == "\\":
            if i + 1 == len(p):
                raise errors.QueryError("LIKE pattern must not end with escape character", "22025")
            i += 1
        i += 1


# --- arrays ------------------------------------------------------------------------------
# An array value is a tuple of its elements' values (None for a NULL element); int2vector
# and oidvector values are tuples too, printed space-separated. The batch kernels
# (segment/kernels/expr_pgarray.py) use these for the rare values their vectorized paths
# do not take.
def parse_array(text: str, t: SqlType) -> tuple:
    """array_in (int2vectorin / oidvectorin for vectors): the value of `text` as t."""
    if t.kind in (Kind.INT2VECTOR, Kind.OIDVECTOR):
        return tuple(parse_text(p, t.elem) for p in text.split())
    parse = parse_text
    if t.elem.kind in types.REG_KINDS:  # regtype[] of names: each as 'x'::regtype reads it

        def parse(p, et):
            oid = catalog_names.reg_oid(et.kind, p)
            return catalog_names.reg_names(et.kind).get(oid, str(oid))
    return tuple(None if p is None else parse(p, t.elem)
                 for p in array_text.split_array_text(text))


def element_text(v, t: SqlType) -> str:
    """The element's output function: booleans print t/f in arrays."""
    if t.kind is Kind.BOOL:
        return "t" if v else "f"
    return format_text(v, t)


def format_array(value: tuple, t: SqlType) -> str:
    """array_out (int2vectorout / oidvectorout for vectors)."""
    if t.kind in (Kind.INT2VECTOR, Kind.OIDVECTOR):
        return " ".join(str(v) for v in value)
    quote = array_text.quote_element
    return "{" + ",".join("NULL" if v is None else quote(element_text(v, t.elem))
                          for v in value) + "}"


def cast_array(value: tuple, src: SqlType, dst: SqlType) -> tuple:
    """An array cast element by element (the element cast's errors)."""
    if src.elem == dst.elem:
        return value
    return tuple(cast_value(v, src.elem, dst.elem) for v in value)
