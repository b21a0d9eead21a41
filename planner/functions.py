"""Typing of scalar operators, functions and casts as PostgreSQL types them; constant folding.

The binder calls `bind_call(func, args)` for every operator and function, `bind_cast` for
CAST and `::`, `bind_assign` for values stored into columns (INSERT, UPDATE), and
`bind_case` / `bind_in` / `bind_like` / `bind_is_null` for the other nodes. Each returns a typed node of planner/expr.py with implicit Casts inserted. Quoted
constants are PostgreSQL's *unknown* literals: they take the type their context needs and
are converted right here ('1998-12-01' compared with a date is a date Literal; a bad one
raises 22P02/22007 at bind time). Calls whose arguments are all Literals are folded at once
(pure Python, see `fold_constants`); segment/expr.py evaluates everything else per batch.

Numeric results are typed statically (a batch column has one scale), following PostgreSQL's
display scales: add/sub max(s1, s2), mul s1 + s2, mod max(s1, s2), and division
select_div_scale when both operands are constants, otherwise max(s1, s2, 16)
(types.NUMERIC_DEFAULT_SCALE; PostgreSQL picks 16 to 20+ digits per value). A precision is
kept while it fits 18 digits, so the result stays a scaled int64; beyond that it is
numeric(None, s), a decimal128(38, s) column.

The module has three parts: values (Literal values, their text input and output and casts;
segment/expr.py shares them for its rare per-value paths), the typing rules, and the
pure-Python constant evaluator used for folding.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as dt
import decimal
import math
import re
import struct
from decimal import Decimal

from planner import errors, types
from planner import expr as ex
from planner.expr import Call, Cast, Func, Literal
from planner.types import Kind, SqlType

_TEMPORAL = (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ)
_TS_RANK = {Kind.DATE: 0, Kind.TIMESTAMP: 1, Kind.TIMESTAMPTZ: 2}
_INT_RANK = {Kind.INT2: 0, Kind.INT4: 1, Kind.INT8: 2}
_INT_DIGITS = {Kind.INT2: 5, Kind.INT4: 10, Kind.INT8: 19}
_ARITH = (Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD)
_COMPARE = (Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE)
_OP_NAMES = {Func.NEG: "-", Func.NOT: "NOT"}


# === values: the Python form of SQL values, their text I/O and casts ========================
# Literal.value is bool, int, float, Decimal (numeric, quantized to the type's scale), str,
# datetime.date, datetime.datetime (naive for timestamp, UTC-aware for timestamptz) or
# expr.Interval. segment/expr.py uses parse_text / format_text for the rare per-value paths.

DEC = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP, Emax=10**6, Emin=-10**6)
INT_RANGES = {Kind.INT2: (-2**15, 2**15 - 1), Kind.INT4: (-2**31, 2**31 - 1),
              Kind.INT8: (-2**63, 2**63 - 1)}
_WS = " \t\n\r\v\f"
_INT_RE = re.compile(r"\s*[+-]?\d+\s*\Z", re.A)
_NUM_RE = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*\Z", re.A)
_FLOAT_WORDS = {"nan": math.nan, "infinity": math.inf, "+infinity": math.inf, "inf": math.inf,
                "+inf": math.inf, "-infinity": -math.inf, "-inf": -math.inf}
_TS_RE = re.compile(r"\s*(\d{4,})-(\d{1,2})-(\d{1,2})(?:(?:\s+|T)(\d{1,2}):(\d{1,2})"
                    r"(?::(\d{1,2})(?:\.(\d*))?)?)?\s*(Z|[+-]\d{1,2}(?::?\d{2})?)?\s*\Z",
                    re.A | re.I)
_TYPE_WORD = {Kind.TIMESTAMP: "timestamp"}
UTC = dt.timezone.utc
USECS_PER_DAY = 86_400_000_000


class NotFoldable(Exception):
    """The pure-Python constant folder does not implement this node; it stays as it is."""


def literal(value) -> Literal:
    """A Literal typed as PostgreSQL types a constant: 42 int4, 3000000000 int8, larger
    ints and Decimals numeric with a tight precision (Decimal('1.5') is numeric(2,1)),
    float float8, str text (an unknown literal), date, datetime (aware: timestamptz),
    Interval, None unknown."""
    if value is None:
        return Literal(None, types.UNKNOWN)
    if isinstance(value, bool):
        return Literal(value, types.BOOL)
    if isinstance(value, int):
        if int_fits(value, types.INT4):
            return Literal(value, types.INT4)
        if int_fits(value, types.INT8):
            return Literal(value, types.INT8)
        value = Decimal(value)
    if isinstance(value, float):
        return Literal(value, types.FLOAT8)
    if isinstance(value, Decimal):
        return Literal(value, numeric_type_of(value))
    if isinstance(value, str):
        return Literal(value, types.TEXT)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return Literal(value.astimezone(UTC), types.TIMESTAMPTZ)
        return Literal(value, types.TIMESTAMP)
    if isinstance(value, dt.date):
        return Literal(value, types.DATE)
    if isinstance(value, ex.Interval):
        return Literal(value, types.INTERVAL)
    raise TypeError(f"no SQL literal for {type(value).__name__}")


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


def fit_numeric(d: Decimal, t: SqlType) -> Decimal:
    """d rounded half away from zero to t's scale; 22003 when it exceeds t's precision."""
    if not d.is_finite():
        raise errors.NumericOutOfRange("numeric field overflow",
                                       detail="raympp numerics cannot hold NaN or infinity")
    q = DEC.quantize(d, Decimal(1).scaleb(-t.scale))
    p = t.precision or 38
    if abs(q) >= DEC.scaleb(Decimal(1), p - t.scale):
        if t.precision is None:
            raise errors.NumericOutOfRange("value overflows numeric format",
                                           detail="raympp numerics hold at most 38 digits")
        raise errors.NumericOutOfRange(
            "numeric field overflow", detail=f"A field with precision {p}, scale {t.scale} "
            f"must round to an absolute value less than 10^{p - t.scale}.")
    return abs(q) if q == 0 else q


def fit_string(s: str, t: SqlType) -> str:
    """Explicit casts to varchar(n) / char(n) truncate; char values keep no padding."""
    if t.length is not None and t.kind in (Kind.VARCHAR, Kind.CHAR):
        s = s[:t.length]
    return s.rstrip(" ") if t.kind is Kind.CHAR else s


def _syntax(t: SqlType, text: str) -> errors.QueryError:
    name = _TYPE_WORD.get(t.kind, t.kind.value)
    cls = errors.InvalidDatetimeFormat if t.kind in _TEMPORAL + (Kind.INTERVAL,) \
        else errors.InvalidTextRepresentation
    return cls(f'invalid input syntax for type {name}: "{text}"')


def parse_text(text: str, t: SqlType):
    """A value of type t from its text form, with PostgreSQL's input rules and errors."""
    k = t.kind
    if t.is_string or k is Kind.UNKNOWN:
        return fit_string(text, t)
    if k is Kind.BOOL:
        return _parse_bool(text)
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
        return fit_numeric(to_decimal(text), t)
    if k in _TEMPORAL:
        v = _parse_timestamp(text, t)
        return v.date() if k is Kind.DATE else v
    if k is Kind.INTERVAL:
        return parse_interval(text)
    raise errors.FeatureNotSupported(f"input of type {t}")


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


def _parse_timestamp(text: str, t: SqlType) -> dt.datetime:
    m = _TS_RE.match(text)
    if not m:
        raise _syntax(t, text)
    y, mo, d, hh, mi, ss, frac, tz = m.groups()
    h, minute, sec = int(hh or 0), int(mi or 0), int(ss or 0)
    micros = int(round(Decimal("0." + frac) * 10**6)) if frac else 0
    try:
        if h > 24 or minute > 59 or sec > 60 or (h == 24 and (minute or sec or micros)):
            raise ValueError
        v = dt.datetime(int(y), int(mo), int(d)) + dt.timedelta(
            hours=h, minutes=minute, seconds=sec, microseconds=micros)
    except (ValueError, OverflowError):
        raise errors.QueryError(f'date/time field value out of range: "{text}"', "22008")
    if t.kind is Kind.TIMESTAMPTZ:
        offset = 0
        if tz and tz.upper() != "Z":
            digits = tz[1:].replace(":", "")
            offset = int(digits[:2]) * 3600 + (int(digits[2:]) * 60 if len(digits) > 2 else 0)
            offset = -offset if tz[0] == "-" else offset
        v = (v - dt.timedelta(seconds=offset)).replace(tzinfo=UTC)
    return v


_IV_UNITS = {"microseconds": (0, 0, 1), "milliseconds": (0, 0, 1000), "second": (0, 0, 10**6),
             "minute": (0, 0, 60 * 10**6), "hour": (0, 0, 3600 * 10**6), "day": (0, 1, 0),
             "week": (0, 7, 0), "month": (1, 0, 0), "year": (12, 0, 0), "decade": (120, 0, 0),
             "century": (1200, 0, 0), "millennium": (12000, 0, 0)}
_IV_TOKEN = re.compile(r"\s*(?:([+-])?(\d+):(\d+)(?::(\d+(?:\.\d*)?))?|([+-]?(?:\d+\.?\d*|\.\d+))"
                       r"\s*([a-z]+)?)", re.A | re.I)


def parse_interval(text: str) -> ex.Interval:
    """PostgreSQL's interval input: '90 day', '1 year 2 mons', '-1 day +02:03:04.5',
    '@ 3 days ago', '1.5 months' (fractions spill down as PostgreSQL does)."""
    s = text.strip(_WS).lower()
    s = s[1:] if s.startswith("@") else s
    ago = s.endswith(" ago") or s == "ago"
    s = s[:-3] if ago else s
    months, days, micros, pos = 0, 0, Decimal(0), 0
    try:
        if not s.strip():
            raise ValueError
        while pos < len(s.rstrip(_WS)):
            m = _IV_TOKEN.match(s, pos)
            if not m or m.end() == pos:
                raise ValueError
            pos = m.end()
            if m.group(2) is not None:
                seconds = (int(m.group(2)) * 60 + int(m.group(3))) * 60 + Decimal(m.group(4) or 0)
                us = seconds * 10**6
                micros += -us if m.group(1) == "-" else us
                continue
            qty, unit = Decimal(m.group(5)), field_name(m.group(6) or "second")
            mo, d, us = _IV_UNITS[unit]
            if mo:
                whole = int(qty * mo)
                months += whole
                if unit == "month":
                    spill = (qty - whole) * 30
                    days += int(spill)
                    micros += (spill - int(spill)) * USECS_PER_DAY
                else:
                    months += int(round((qty * mo - whole)))
            elif d:
                whole = int(qty * d)
                days += whole
                micros += (qty * d - whole) * USECS_PER_DAY
            else:
                micros += qty * us
    except (ValueError, KeyError, decimal.InvalidOperation):
        raise errors.InvalidDatetimeFormat(f'invalid input syntax for type interval: "{text}"')
    iv = ex.Interval(months, days, int(round(micros)))
    return ex.Interval(-iv.months, -iv.days, -iv.micros) if ago else iv


def format_text(v, t: SqlType) -> str | None:
    """PostgreSQL's text output of a value (what `v::text` gives)."""
    if v is None:
        return None
    k = t.kind
    if k is Kind.BOOL:
        return "true" if v else "false"
    if t.is_float:
        return format_float(v, k is Kind.FLOAT4)
    if k is Kind.NUMERIC:
        q = DEC.quantize(v, Decimal(1).scaleb(-t.scale))
        return f"{abs(q) if q == 0 else q:f}"
    if k is Kind.DATE:
        return v.isoformat()
    if k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        s = f"{v.date().isoformat()} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
        s += f".{v.microsecond:06d}".rstrip("0") if v.microsecond else ""
        return s + ("+00" if k is Kind.TIMESTAMPTZ else "")
    if k is Kind.INTERVAL:
        return format_interval(v)
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


def format_interval(iv: ex.Interval) -> str:
    """EncodeInterval in IntervalStyle postgres: '1 year 2 mons -3 days +04:05:06.5'."""
    years = int(iv.months / 12) if abs(iv.months) < 2**52 else iv.months // 12
    parts, is_zero, is_before = [], True, False
    for value, unit in ((years, "year"), (iv.months - years * 12, "mon"), (iv.days, "day")):
        if value:
            parts.append(f"{'+' if is_before and value > 0 else ''}{value} {unit}"
                         f"{'' if value == 1 else 's'}")
            is_before, is_zero = value < 0, False
    if is_zero or iv.micros:
        sign = "-" if iv.micros < 0 else ("+" if is_before else "")
        hours, rest = divmod(abs(iv.micros), 3_600_000_000)
        minutes, rest = divmod(rest, 60_000_000)
        seconds, fraction = divmod(rest, 1_000_000)
        clock = f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
        parts.append(clock + (f".{fraction:06d}".rstrip("0") if fraction else ""))
    return " ".join(parts)


def cast_value(v, src: SqlType, dst: SqlType):
    """CAST of one value (the constant folder's and bind_cast's conversion)."""
    if v is None:
        return None
    s, d = src.kind, dst.kind
    if dst.is_string:
        return fit_string(v if isinstance(v, str) else format_text(v, src), dst)
    if isinstance(v, str):
        return parse_text(v, dst)
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
        return fit_numeric(to_decimal(v, s is Kind.FLOAT4), dst)
    if d is Kind.BOOL:
        return v != 0
    if d is Kind.DATE:
        return v.date() if isinstance(v, dt.datetime) else v
    if d in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        if not isinstance(v, dt.datetime):
            v = dt.datetime.combine(v, dt.time())
        return v.replace(tzinfo=UTC if d is Kind.TIMESTAMPTZ else None)
    if d is Kind.INTERVAL:
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


def add_interval(ts: dt.datetime, iv: ex.Interval, sign: int = 1) -> dt.datetime:
    """timestamp + interval as PostgreSQL: months on the calendar (clamped to the month's
    last day), then days, then microseconds."""
    y, m = divmod(ts.year * 12 + ts.month - 1 + sign * iv.months, 12)
    try:
        day = min(ts.day, calendar.monthrange(y, m + 1)[1])
        return ts.replace(year=y, month=m + 1, day=day) + dt.timedelta(
            days=sign * iv.days, microseconds=sign * iv.micros)
    except (ValueError, OverflowError, calendar.IllegalMonthError):
        raise errors.QueryError("timestamp out of range", "22008")


def interval_scale(iv: ex.Interval, factor: float, divide: bool) -> ex.Interval:
    """interval * float8 and interval / float8 (PostgreSQL's interval_mul/interval_div:
    fractional months spill into days, fractional days into time)."""
    if divide and factor == 0:
        raise errors.DivisionByZero("division by zero")
    if math.isnan(factor) or math.isinf(factor):
        raise errors.QueryError("interval out of range", "22008")
    op = (lambda x: x / factor) if divide else (lambda x: x * factor)
    months, days = int(op(iv.months)), int(op(iv.days))
    month_days = round((op(iv.months) - months) * 30 * 1e6) / 1e6
    secs = round((op(iv.days) - days + month_days - int(month_days)) * 86400 * 1e6) / 1e6
    if abs(secs) >= 86400:
        days += int(secs / 86400)
        secs -= int(secs / 86400) * 86400
    days += int(month_days)
    return ex.Interval(months, days, int(round(op(iv.micros) + secs * 1e6)))


def interval_key(iv: ex.Interval) -> int:
    """The total order PostgreSQL compares intervals by (a month is 30 days)."""
    return (iv.months * 30 + iv.days) * USECS_PER_DAY + iv.micros


# === constant evaluation ===================================================================
def evaluate_constant(e: ex.Expr, vals: list):
    """The value of node e whose children are the constants `vals` (NotFoldable when this
    pure-Python evaluator does not implement it)."""
    if isinstance(e, Cast):
        return cast_value(vals[0], e.arg.type, e.type)
    if isinstance(e, ex.IsNull):
        return (vals[0] is None) != e.negated
    if isinstance(e, ex.InList):
        x, items = vals[0], vals[1:]
        key = _sort_key(e.arg.type)
        if x is None:
            return None
        hit = True if any(v is not None and key(v) == key(x) for v in items) else (
            None if None in items else False)
        return hit if hit is None or not e.negated else not hit
    if not isinstance(e, Call):
        raise NotFoldable
    f = e.func
    if f in (Func.AND, Func.OR):
        stop = f is Func.OR
        if stop in vals:
            return stop
        return None if None in vals else not stop
    if f is Func.COALESCE:
        return next((v for v in vals if v is not None), None)
    if f in (Func.GREATEST, Func.LEAST):
        present = [v for v in vals if v is not None]
        pick = max if f is Func.GREATEST else min
        return pick(present, key=_sort_key(e.type)) if present else None
    if f is Func.CONCAT_FN:
        return "".join(v for v in vals if v is not None)
    if f is Func.NULLIF:
        key = _sort_key(e.type)
        return None if vals[1] is not None and vals[0] is not None and key(vals[0]) == key(
            vals[1]) else vals[0]
    if any(v is None for v in vals):
        return None
    impl = _CONST_CALLS.get(f)
    if impl is None:
        raise NotFoldable
    return impl(e, *vals)


def _sort_key(t: SqlType):
    if t.is_float:
        return lambda v: (1, 0.0) if math.isnan(v) else (0, v)  # NaN sorts last, equals NaN
    if t.kind is Kind.INTERVAL:
        return interval_key
    return lambda v: v


def _c_compare(e: Call, a, b) -> bool:
    key = _sort_key(e.args[0].type)
    a, b = key(a), key(b)
    return {Func.EQ: a == b, Func.NE: a != b, Func.LT: a < b, Func.LE: a <= b,
            Func.GT: a > b, Func.GE: a >= b}[e.func]


def _c_arith(e: Call, a, b):
    f, t = e.func, e.type
    ta, tb = e.args[0].type, e.args[1].type
    if t.is_integer and ta.is_integer:
        if f in (Func.DIV, Func.MOD) and b == 0:
            raise errors.DivisionByZero("division by zero")
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) if b else 0
        r = {Func.ADD: a + b, Func.SUB: a - b, Func.MUL: a * b, Func.DIV: q,
             Func.MOD: a - b * q if b else 0}[f]
        return check_int(r, t)
    if t.is_float:
        return float_arith(f, a, b, t.kind is Kind.FLOAT4)
    if t.is_numeric:
        if f in (Func.DIV, Func.MOD) and b == 0:
            raise errors.DivisionByZero("division by zero")
        r = {Func.ADD: DEC.add, Func.SUB: DEC.subtract, Func.MUL: DEC.multiply,
             Func.DIV: DEC.divide, Func.MOD: DEC.remainder}[f](a, b)
        return fit_numeric(r, t)
    if ta.kind is Kind.DATE and tb.kind is Kind.DATE:
        return (a - b).days
    if ta.kind is Kind.DATE:
        try:
            return a + dt.timedelta(days=b if f is Func.ADD else -b)
        except OverflowError:
            raise errors.QueryError("date out of range", "22008")
    if tb.kind is Kind.INTERVAL and ta.kind in _TEMPORAL:
        return add_interval(a, b, 1 if f is Func.ADD else -1)
    if ta.kind in _TEMPORAL:  # timestamp - timestamp: days and time, as justify_hours
        delta = a - b
        micros = (delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds
        days = int(micros / USECS_PER_DAY) if abs(micros) < 2**52 else micros // USECS_PER_DAY
        return ex.Interval(0, days, micros - days * USECS_PER_DAY)
    if ta.kind is tb.kind is Kind.INTERVAL:
        s = 1 if f is Func.ADD else -1
        return ex.Interval(a.months + s * b.months, a.days + s * b.days, a.micros + s * b.micros)
    return interval_scale(a, b, f is Func.DIV)


def float_arith(f: Func, a: float, b: float, float4: bool = False) -> float:
    """float8 arithmetic with PostgreSQL's checks (division by zero, overflow, underflow)."""
    if f is Func.DIV and b == 0:
        if math.isnan(a):
            return math.nan
        raise errors.DivisionByZero("division by zero")
    r = {Func.ADD: lambda: a + b, Func.SUB: lambda: a - b, Func.MUL: lambda: a * b,
         Func.DIV: lambda: a / b}[f]()
    if math.isinf(r) and not (math.isinf(a) or math.isinf(b)):
        raise errors.NumericOutOfRange("value out of range: overflow")
    if r == 0 and ((f is Func.MUL and a != 0 and b != 0) or (
            f is Func.DIV and a != 0 and not math.isinf(b))):
        raise errors.NumericOutOfRange("value out of range: underflow")
    return to_float4(r) if float4 else r


def _c_sign(e: Call, x):
    if e.type.kind is Kind.INTERVAL:
        return ex.Interval(-x.months, -x.days, -x.micros)
    r = -x if e.func is Func.NEG else abs(x)
    return check_int(r, e.type) if e.type.is_integer else r


_ROUNDING = {Func.ROUND: decimal.ROUND_HALF_UP, Func.TRUNC: decimal.ROUND_DOWN,
             Func.FLOOR: decimal.ROUND_FLOOR, Func.CEIL: decimal.ROUND_CEILING}


def _c_round(e: Call, x, n=0):
    if e.type.is_float:
        if math.isnan(x) or math.isinf(x):
            return x
        return float({Func.ROUND: round, Func.TRUNC: math.trunc, Func.FLOOR: math.floor,
                      Func.CEIL: math.ceil}[e.func](x))
    q = x.quantize(Decimal(1).scaleb(-n), rounding=_ROUNDING[e.func], context=DEC)
    return fit_numeric(q, e.type)


def float_math(f: Func, x: float, y: float = 0.0) -> float:
    """sqrt, ln, exp, power with PostgreSQL's errors."""
    if f is Func.SQRT and x < 0:
        raise errors.QueryError("cannot take square root of a negative number", "2201F")
    if f is Func.LN and x <= 0:
        raise errors.QueryError("cannot take logarithm of " + (
            "zero" if x == 0 else "a negative number"), "2201E")
    if f is Func.POWER and x == 0 and y < 0:
        raise errors.QueryError("zero raised to a negative power is undefined", "2201F")
    if f is Func.POWER and x < 0 and y != math.floor(y):
        raise errors.QueryError(
            "a negative number raised to a non-integer power yields a complex result", "2201F")
    try:
        r = {Func.SQRT: math.sqrt, Func.LN: math.log, Func.EXP: math.exp,
             Func.POWER: lambda v: math.pow(v, y)}[f](x)
    except OverflowError:
        raise errors.NumericOutOfRange("value out of range: overflow")
    if r == 0 and f in (Func.EXP, Func.POWER) and not math.isinf(x) and x != 0:
        raise errors.NumericOutOfRange("value out of range: underflow")
    return r


def substring(s: str, start: int, count: int | None = None) -> str:
    """substring(s from start [for count]) with PostgreSQL's handling of start < 1."""
    if count is not None and count < 0:
        raise errors.QueryError("negative substring length not allowed", "22011")
    begin = max(start - 1, 0)
    return s[begin:] if count is None else s[begin:max(start - 1 + count, 0)]


_CONST_CALLS = {
    **{f: _c_arith for f in (Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD)},
    **{f: _c_compare for f in (Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE)},
    Func.NOT: lambda e, x: not x,
    Func.NEG: _c_sign, Func.ABS: _c_sign,
    Func.ROUND: _c_round, Func.TRUNC: _c_round, Func.FLOOR: _c_round, Func.CEIL: _c_round,
    Func.SQRT: lambda e, x: float_math(e.func, x), Func.LN: lambda e, x: float_math(e.func, x),
    Func.EXP: lambda e, x: float_math(e.func, x),
    Func.POWER: lambda e, x, y: float_math(e.func, x, y),
    Func.CONCAT: lambda e, a, b: a + b,
    Func.LOWER: lambda e, s: s.lower(), Func.UPPER: lambda e, s: s.upper(),
    Func.LENGTH: lambda e, s: len(s), Func.OCTET_LENGTH: lambda e, s: len(s.encode()),
    Func.SUBSTRING: lambda e, s, *a: substring(s, *a),
    Func.POSITION: lambda e, s, sub: s.find(sub) + 1,
    Func.REPLACE: lambda e, s, a, b: s.replace(a, b) if a else s,
    Func.TRIM: lambda e, s, chars=" ": s.strip(chars),
    Func.LTRIM: lambda e, s, chars=" ": s.lstrip(chars),
    Func.RTRIM: lambda e, s, chars=" ": s.rstrip(chars),
    Func.LEFT: lambda e, s, n: s[:n] if n >= 0 else s[:max(len(s) + n, 0)],
    Func.RIGHT: lambda e, s, n: s[max(len(s) - n, 0):] if n >= 0 else s[min(-n, len(s)):],
    Func.STARTS_WITH: lambda e, s, p: s.startswith(p),
    Func.FIT_STRING: lambda e, s: fit_length(s, e.type),
}


# === typing ================================================================================
def is_unknown(e: ex.Expr) -> bool:
    """A quoted constant or bare NULL: takes the type its context asks for."""
    return isinstance(e, Literal) and (
        e.type.kind is Kind.UNKNOWN or (e.type.kind is Kind.TEXT and isinstance(e.value, str)))


# --- casts --------------------------------------------------------------------------------
def cast_type_ok(src: SqlType, dst: SqlType) -> bool:
    """Whether CAST(src AS dst) exists (PostgreSQL's pg_cast plus I/O casts via text)."""
    s, d = src.kind, dst.kind
    if s is Kind.UNKNOWN or s is d or src.is_string or dst.is_string:
        return True
    if src.is_number and dst.is_number:
        return True
    if {s, d} == {Kind.BOOL, Kind.INT4}:
        return True
    return s in _TEMPORAL and d in _TEMPORAL and not (s is d is Kind.DATE)


def bind_cast(e: ex.Expr, dst: SqlType) -> ex.Expr:
    """CAST(e AS dst). Literals convert now (bad input raises at bind time). `numeric`
    without a typmod (numeric(None, 0)) keeps the source's scale."""
    if not cast_type_ok(e.type, dst):
        raise errors.QueryError(f"cannot cast type {e.type} to {dst}", "42846")
    if dst.kind is Kind.NUMERIC and dst.precision is None and dst.scale == 0:
        if isinstance(e, Literal) and e.value is not None:
            value = to_decimal(e.value, e.type.kind is Kind.FLOAT4)
            t = numeric_type_of(value)
            return Literal(fit_numeric(value, t), t)
        dst = _unconstrained(e.type)
        if e.type == dst:
            return e
    if isinstance(e, Literal):
        return Literal(cast_value(e.value, e.type, dst), dst)
    if e.type == dst or (e.type.is_string and dst.kind is Kind.TEXT):
        return e
    return Cast(e, dst)


def bind_assign(e: ex.Expr, dst: SqlType, column: str = "") -> ex.Expr:
    """e converted for storing into a column of type dst (INSERT, UPDATE, COPY targets):
    PostgreSQL's assignment casts. Numbers convert among themselves (with the explicit
    casts' rounding and range errors), anything converts to text, dates and timestamps
    among themselves, unknown literals to anything; other pairs raise 42804. A string
    longer than varchar(n)/char(n) raises 22001 unless the excess is spaces."""
    src = e.type
    allowed = (is_unknown(e) or src.kind is dst.kind or dst.is_string
               or (src.is_number and dst.is_number)
               or (src.kind in _TEMPORAL and dst.kind in _TEMPORAL))
    if not allowed:
        raise errors.DatatypeMismatch(
            f'column "{column}" is of type {dst} but expression is of type {_tname(e)}',
            hint="You will need to rewrite or cast the expression.")
    if not (dst.is_string and dst.length is not None and dst.kind is not Kind.TEXT):
        return bind_cast(e, dst)
    text = e if e.type.is_string else bind_cast(e, types.TEXT)
    if text.type == dst:
        return text
    return fold_constants(Call(Func.FIT_STRING, (text,), dst))


def fit_length(s: str, t: SqlType) -> str:
    """A string stored into varchar(n)/char(n): 22001 when longer, unless the excess is
    spaces (PostgreSQL truncates those); char values keep no trailing spaces."""
    if len(s) > t.length:
        if s[t.length:].strip(" "):
            raise errors.QueryError(f"value too long for type {t}", "22001")
        s = s[:t.length]
    return s.rstrip(" ") if t.kind is Kind.CHAR else s


def _unconstrained(src: SqlType) -> SqlType:
    """The static type of `x::numeric` for a non-constant x."""
    if src.is_numeric:
        return src
    if src.kind in (Kind.INT2, Kind.INT4):
        return types.numeric(_INT_DIGITS[src.kind], 0)
    if src.kind in (Kind.INT8, Kind.UNKNOWN):
        return types.numeric(None, 0)
    return types.numeric(None, types.NUMERIC_DEFAULT_SCALE)


def coerce(e: ex.Expr, t: SqlType) -> ex.Expr:
    """e as type t (an implicit conversion the typing rules chose)."""
    if e.type == t or (e.type.is_string and t.kind is Kind.TEXT):
        return e
    if isinstance(e, Literal):
        return Literal(cast_value(e.value, e.type, t), t)
    return Cast(e, t)


def _adopt(e: ex.Expr, t: SqlType) -> ex.Expr:
    """An unknown literal takes type t without its typmod, as PostgreSQL resolves it."""
    if t.is_numeric or t.is_integer and isinstance(e.value, str) and "." in e.value:
        return bind_cast(e, types.numeric(None, 0)) if t.is_numeric else coerce(e, t)
    if t.is_string or t.kind is Kind.UNKNOWN:
        return coerce(e, types.TEXT)
    return coerce(e, t)


def _as_numeric(e: ex.Expr) -> ex.Expr:
    if e.type.is_numeric:
        return e
    if isinstance(e, Literal):
        return bind_cast(e, types.numeric(None, 0))
    return Cast(e, _unconstrained(e.type))


# --- errors -------------------------------------------------------------------------------
def _tname(e: ex.Expr) -> str:
    return "unknown" if is_unknown(e) else e.type.sql()


def _no_operator(func: Func, args) -> errors.QueryError:
    op = _OP_NAMES.get(func, func.value)
    if len(args) == 1:
        return errors.UndefinedFunction(f"operator does not exist: {op} {_tname(args[0])}")
    return errors.UndefinedFunction(
        f"operator does not exist: {_tname(args[0])} {op} {_tname(args[1])}")


def _no_function(name: str, args) -> errors.QueryError:
    return errors.UndefinedFunction(
        f"function {name}({', '.join(_tname(a) for a in args)}) does not exist")


def _not_unique(func: Func, a, b) -> errors.QueryError:
    return errors.QueryError(
        f"operator is not unique: {_tname(a)} {func.value} {_tname(b)}", "42725")


# --- common types -------------------------------------------------------------------------
def _int_digits(t: SqlType) -> int | None:
    if t.is_integer:
        return _INT_DIGITS[t.kind]
    return None if t.precision is None else t.precision - t.scale


def _numeric_type(int_digits: int | None, scale: int) -> SqlType:
    if scale > 38:
        raise errors.FeatureNotSupported(f"numeric result scale {scale} exceeds 38")
    p = None if int_digits is None else max(int_digits + scale, 1)
    return types.numeric(p, scale) if p is not None and p <= 18 else types.numeric(None, scale)


def _common2(a: SqlType, b: SqlType, what: str) -> SqlType:
    if a == b:
        return a
    if a.is_number and b.is_number:
        if a.is_float or b.is_float:
            return types.FLOAT4 if a.kind is b.kind is Kind.FLOAT4 else types.FLOAT8
        if a.is_integer and b.is_integer:
            return a if _INT_RANK[a.kind] >= _INT_RANK[b.kind] else b
        scale = max(a.scale or 0, b.scale or 0)
        ia, ib = _int_digits(a), _int_digits(b)
        return _numeric_type(None if ia is None or ib is None else max(ia, ib), scale)
    if a.is_string and b.is_string:
        return types.TEXT
    if a.kind in _TEMPORAL and b.kind in _TEMPORAL:
        return a if _TS_RANK[a.kind] >= _TS_RANK[b.kind] else b
    raise errors.DatatypeMismatch(f"{what} types {a} and {b} cannot be matched")


def unify(exprs: list[ex.Expr], what: str) -> tuple[list[ex.Expr], SqlType]:
    """Coerce expressions to their common type (CASE, COALESCE, GREATEST, IN, UNION)."""
    known = [e.type for e in exprs if not is_unknown(e)]
    t = known[0] if known else types.TEXT
    for u in known[1:]:
        t = _common2(t, u, what)
    out = [(_adopt(e, t) if is_unknown(e) else e) for e in exprs]
    if t.is_numeric and not any(e.type.is_float for e in out):
        t = _common_numeric(out, t)
    return [coerce(e, t) for e in out], t


def _common_numeric(exprs, t: SqlType) -> SqlType:
    """Literals adopt tight numeric types; the common type must still hold them."""
    for e in exprs:
        if e.type.is_numeric or e.type.is_integer:
            t = _common2(t, e.type if e.type.is_numeric else _unconstrained(e.type), "")
    return t


# --- operators and functions ---------------------------------------------------------------
def bind_call(func: Func, args: list[ex.Expr]) -> ex.Expr:
    """A typed Call of func over args, implicit casts inserted; folded when all args are
    Literals (a folding error is left for run time, where the row may never be reached)."""
    rule = _RULES.get(func)
    if rule is None:
        raise errors.FeatureNotSupported(f"function {func.value} is not supported")
    e = rule(func, list(args))
    return fold_constants(e) if isinstance(e, Call) and _all_literal(e.args) else e


def _all_literal(args) -> bool:
    return all(isinstance(a, Literal) for a in args)


def _arity(func: Func, args, *counts: int) -> None:
    if len(args) not in counts:
        raise _no_function(func.value, args)


def _binary_unknowns(func: Func, a: ex.Expr, b: ex.Expr):
    ua, ub = is_unknown(a), is_unknown(b)
    if ua and ub:
        if func in _COMPARE or func is Func.CONCAT:
            return coerce(a, types.TEXT), coerce(b, types.TEXT)
        raise _not_unique(func, a, b)
    if ua or ub:
        known = b if ua else a
        if func in _ARITH and known.type.kind in _TEMPORAL + (Kind.INTERVAL,):
            raise _not_unique(func, a, b)
        if ua:
            a = _adopt(a, b.type)
        else:
            b = _adopt(b, a.type)
    return a, b


def _rule_arith(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    a, b = _binary_unknowns(func, *args)
    ta, tb = a.type, b.type
    if ta.is_number and tb.is_number:
        if ta.is_float or tb.is_float:
            if func is Func.MOD:
                raise _no_operator(func, (a, b))
            t = types.FLOAT4 if ta.kind is tb.kind is Kind.FLOAT4 else types.FLOAT8
            return Call(func, (coerce(a, t), coerce(b, t)), t)
        if ta.is_numeric or tb.is_numeric:
            a, b = _as_numeric(a), _as_numeric(b)
            return Call(func, (a, b), _numeric_result(func, a, b))
        t = _common2(ta, tb, "")
        return Call(func, (coerce(a, t), coerce(b, t)), t)
    e = _temporal_arith(func, a, b)
    if e is None:
        raise _no_operator(func, (a, b))
    return e


def _numeric_result(func: Func, a: ex.Expr, b: ex.Expr) -> SqlType:
    sa, sb = a.type.scale, b.type.scale
    ia, ib = _int_digits(a.type), _int_digits(b.type)
    both = ia is not None and ib is not None
    if func in (Func.ADD, Func.SUB):
        return _numeric_type(max(ia, ib) + 1 if both else None, max(sa, sb))
    if func is Func.MUL:
        return _numeric_type(ia + ib if both else None, sa + sb)
    if func is Func.MOD:
        return _numeric_type(min(ia, ib) if both else None, max(sa, sb))
    if isinstance(a, Literal) and isinstance(b, Literal) and a.value and b.value:
        scale = div_scale(a.value, b.value, sa, sb)
    else:
        scale = max(sa, sb, types.NUMERIC_DEFAULT_SCALE)
    return _numeric_type(ia + sb if ia is not None else None, scale)


def _temporal_arith(func: Func, a: ex.Expr, b: ex.Expr) -> ex.Expr | None:
    ka, kb = a.type.kind, b.type.kind
    small_int = (Kind.INT2, Kind.INT4)
    if func is Func.ADD and (ka in small_int or ka is Kind.INTERVAL) and kb in _TEMPORAL:
        a, b, ka, kb = b, a, kb, ka  # addition commutes: keep the date/timestamp first
    if func in (Func.ADD, Func.SUB):
        if ka is Kind.DATE and kb in small_int:
            return Call(func, (a, coerce(b, types.INT4)), types.DATE)
        if ka in _TEMPORAL and kb is Kind.INTERVAL:
            t = types.TIMESTAMP if ka is Kind.DATE else a.type
            return Call(func, (coerce(a, t), b), t)
        if ka is kb is Kind.INTERVAL:
            return Call(func, (a, b), types.INTERVAL)
    if func is Func.SUB and ka in _TEMPORAL and kb in _TEMPORAL:
        if ka is kb is Kind.DATE:
            return Call(func, (a, b), types.INT4)
        t = _common2(a.type, b.type, "")
        return Call(func, (coerce(a, t), coerce(b, t)), types.INTERVAL)
    if func is Func.MUL and kb is Kind.INTERVAL and a.type.is_number:
        a, b, ka, kb = b, a, kb, ka
    if func in (Func.MUL, Func.DIV) and ka is Kind.INTERVAL and b.type.is_number:
        return Call(func, (a, coerce(b, types.FLOAT8)), types.INTERVAL)
    return None


def _rule_compare(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    a, b = _binary_unknowns(func, *args)
    a, b = compare_operands(func, a, b)
    return Call(func, (a, b), types.BOOL)


def compare_operands(func: Func, a: ex.Expr, b: ex.Expr) -> tuple[ex.Expr, ex.Expr]:
    """Both sides of a comparison in comparable types. Numerics of different scales stay as
    they are (the evaluator aligns them); a literal fitting the other side's integer type
    is folded to it rather than casting the column."""
    ta, tb = a.type, b.type
    if ta.is_number and tb.is_number:
        if ta.is_float or tb.is_float:
            t = types.FLOAT4 if ta.kind is tb.kind is Kind.FLOAT4 else types.FLOAT8
            return coerce(a, t), coerce(b, t)
        if ta.is_numeric or tb.is_numeric:
            return _as_numeric(a), _as_numeric(b)
        if ta != tb:
            for x, y in ((a, b), (b, a)):
                if isinstance(y, Literal) and int_fits(y.value, x.type):
                    return (x, coerce(y, x.type)) if x is a else (coerce(y, x.type), x)
            t = _common2(ta, tb, "")
            return coerce(a, t), coerce(b, t)
        return a, b
    if ta.is_string and tb.is_string:
        return a, b
    if ta.kind in _TEMPORAL and tb.kind in _TEMPORAL:
        for x, y in ((a, b), (b, a)):  # date vs midnight: compare dates, not every row cast
            if x.type.kind is Kind.DATE and isinstance(y, Literal) and y.value is not None \
                    and y.type.kind is not Kind.DATE and y.value.time() == dt.time(0):
                day = Literal(y.value.date(), types.DATE)
                return (x, day) if x is a else (day, x)
        t = _common2(ta, tb, "")
        return coerce(a, t), coerce(b, t)
    if ta.kind is tb.kind and ta.kind in (Kind.BOOL, Kind.INTERVAL):
        return a, b
    raise _no_operator(func, (a, b))


def _as_bool(e: ex.Expr, what: str) -> ex.Expr:
    if e.type.kind is Kind.BOOL:
        return e
    if is_unknown(e):
        return coerce(e, types.BOOL)
    raise errors.DatatypeMismatch(f"argument of {what} must be type boolean, not type {e.type}")


def _rule_bool(func: Func, args) -> ex.Expr:
    if func is Func.NOT:
        _arity(func, args, 1)
    elif len(args) < 2:
        raise _no_function(func.value, args)
    return Call(func, tuple(_as_bool(a, func.value.upper()) for a in args), types.BOOL)


def _rule_sign(func: Func, args) -> ex.Expr:
    """NEG and ABS keep their argument's type."""
    _arity(func, args, 1)
    a = args[0]
    if is_unknown(a) and a.value is not None:
        a = bind_cast(a, types.numeric(None, 0))
    if a.type.is_number or (func is Func.NEG and a.type.kind is Kind.INTERVAL):
        return Call(func, (a,), a.type)
    raise _no_operator(func, args) if func is Func.NEG else _no_function(func.value, args)


def _rule_rounding(func: Func, args) -> ex.Expr:
    """round/trunc(x[, n]), floor, ceil: float8 for integers and floats, numeric stays
    numeric with scale n (a constant n) or 0."""
    two = func in (Func.ROUND, Func.TRUNC)
    _arity(func, args, *((1, 2) if two else (1,)))
    x = _adopt(args[0], types.numeric(None, 0)) if is_unknown(args[0]) else args[0]
    if len(args) == 2:
        n = _adopt(args[1], types.INT4) if is_unknown(args[1]) else args[1]
        if not (n.type.is_integer and (x.type.is_numeric or x.type.is_integer)):
            raise _no_function(func.value, (x, n))
        x, n = _as_numeric(x), coerce(n, types.INT4)
        digits = _int_digits(x.type)
        if isinstance(n, Literal) and n.value is not None:
            scale = max(n.value, 0)
        else:
            scale = x.type.scale
        grow = 1 if func is Func.ROUND else 0
        return Call(func, (x, n), _numeric_type(None if digits is None else digits + grow, scale))
    if x.type.is_numeric:
        digits = _int_digits(x.type)
        grow = 0 if func is Func.TRUNC else 1
        return Call(func, (x,), _numeric_type(None if digits is None else digits + grow, 0))
    if x.type.is_number:
        return Call(func, (coerce(x, types.FLOAT8),), types.FLOAT8)
    raise _no_function(func.value, args)


def _rule_float_math(func: Func, args) -> ex.Expr:
    """sqrt, ln, exp, power: float8 (numeric inputs are computed in float8 too)."""
    _arity(func, args, 2 if func is Func.POWER else 1)
    out = []
    for a in args:
        a = _adopt(a, types.FLOAT8) if is_unknown(a) else a
        if not a.type.is_number:
            raise _no_function(func.value, args)
        out.append(coerce(a, types.FLOAT8))
    return Call(func, tuple(out), types.FLOAT8)


def _rule_variadic(func: Func, args) -> ex.Expr:
    if not args or (func is Func.NULLIF and len(args) != 2):
        raise _no_function(func.value, args)
    out, t = unify(args, func.value.upper())
    return Call(func, tuple(out), t)


def _text_arg(func: Func, e: ex.Expr, args) -> ex.Expr:
    if is_unknown(e):
        return coerce(e, types.TEXT)
    if not e.type.is_string:
        raise _no_function(func.value, args)
    return e


def _int_arg(func: Func, e: ex.Expr, args) -> ex.Expr:
    if is_unknown(e):
        return coerce(e, types.INT4)
    if not e.type.is_integer:
        raise _no_function(func.value, args)
    return coerce(e, types.INT4)


# signatures of string functions: s = text, i = integer; optional trailing arguments in []
_STRING_SIGS = {
    Func.LOWER: ("s", types.TEXT), Func.UPPER: ("s", types.TEXT),
    Func.LENGTH: ("s", types.INT4), Func.OCTET_LENGTH: ("s", types.INT4),
    Func.SUBSTRING: ("si[i]", types.TEXT), Func.POSITION: ("ss", types.INT4),
    Func.REPLACE: ("sss", types.TEXT), Func.REGEXP_REPLACE: ("sss[s]", types.TEXT),
    Func.TRIM: ("s[s]", types.TEXT), Func.LTRIM: ("s[s]", types.TEXT),
    Func.RTRIM: ("s[s]", types.TEXT), Func.LEFT: ("si", types.TEXT),
    Func.RIGHT: ("si", types.TEXT), Func.STARTS_WITH: ("ss", types.BOOL),
}


def _rule_string(func: Func, args) -> ex.Expr:
    sig, result = _STRING_SIGS[func]
    required = sig.split("[")[0]
    kinds = sig.replace("[", "").replace("]", "")
    if not len(required) <= len(args) <= len(kinds):
        raise _no_function(func.value, args)
    out = tuple((_text_arg if k == "s" else _int_arg)(func, a, args) for k, a in zip(kinds, args))
    return Call(func, out, result)


def _rule_concat(func: Func, args) -> ex.Expr:
    """`||` casts a non-text side to text; concat() casts every argument."""
    if func is Func.CONCAT:
        _arity(func, args, 2)
        if not any(is_unknown(a) or a.type.is_string for a in args):
            raise _no_operator(func, args)
    elif not args:
        raise _no_function("concat", args)
    out = tuple(coerce(a, types.TEXT) if is_unknown(a) else _bool_output(a)
                if func is Func.CONCAT_FN and a.type.kind is Kind.BOOL else bind_cast(a, types.TEXT)
                for a in args)
    return Call(func, out, types.TEXT)


def _bool_output(a: ex.Expr) -> ex.Expr:
    """concat() prints with output functions: a boolean is 't' or 'f', not 'true'."""
    text = lambda v: Literal(v, types.TEXT)  # noqa: E731
    return fold_constants(ex.Case(((a, text("t")), (Call(Func.NOT, (a,), types.BOOL), text("f"))),
                                  Literal(None, types.TEXT), types.TEXT))


# EXTRACT result types: (precision for date/timestamp input, scale); integer fields are
# tight numerics so that they stay scaled int64 (PostgreSQL returns unconstrained numeric)
_EXTRACT = {
    "year": (7, 0), "isoyear": (7, 0), "decade": (6, 0), "century": (5, 0),
    "millennium": (4, 0), "quarter": (1, 0), "month": (2, 0), "week": (2, 0), "day": (2, 0),
    "doy": (3, 0), "dow": (1, 0), "isodow": (1, 0), "hour": (2, 0), "minute": (2, 0),
    "second": (8, 6), "milliseconds": (8, 3), "microseconds": (8, 0), "epoch": (18, 6),
    "julian": (10, 0),
}
_TIME_FIELDS = ("hour", "minute", "second", "milliseconds", "microseconds")
_INTERVAL_FIELDS = ("year", "month", "day", "hour", "minute", "second", "milliseconds",
                    "microseconds", "epoch", "quarter", "decade", "century", "millennium")
TRUNC_FIELDS = ("microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
                "month", "quarter", "year", "decade", "century", "millennium")
_FIELD_ALIASES = {
    "years": "year", "yr": "year", "yrs": "year", "y": "year", "months": "month",
    "mon": "month", "mons": "month", "days": "day", "d": "day", "hours": "hour", "hr": "hour",
    "hrs": "hour", "h": "hour", "minutes": "minute", "min": "minute", "mins": "minute",
    "m": "minute", "seconds": "second", "sec": "second", "secs": "second", "s": "second",
    "millisecond": "milliseconds", "ms": "milliseconds", "msec": "milliseconds",
    "msecs": "milliseconds", "microsecond": "microseconds", "us": "microseconds",
    "usec": "microseconds", "usecs": "microseconds", "weeks": "week", "w": "week",
    "decades": "decade", "dec": "decade", "centuries": "century", "c": "century",
    "millennia": "millennium", "millenniums": "millennium", "mil": "millennium",
    "qtr": "quarter", "epoch": "epoch", "j": "julian",
}


def field_name(raw: str) -> str:
    """The canonical name of an EXTRACT / date_trunc field ('years' -> 'year')."""
    key = raw.strip().lower()
    return _FIELD_ALIASES.get(key, key)


def _rule_datetime(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    f, x = args
    if not (isinstance(f, Literal) and isinstance(f.value, str)):
        if func is Func.DATE_PART and f.type.is_string:
            raise errors.FeatureNotSupported("date_part needs a constant field name")
        raise _no_function(func.value, args)
    name = field_name(f.value)
    if is_unknown(x):
        x = coerce(x, types.TIMESTAMP)
    k = x.type.kind
    if k not in _TEMPORAL + (Kind.INTERVAL,):
        raise _no_function(func.value, args)
    field = Literal(name, types.TEXT)
    if func is Func.DATE_TRUNC:
        if k is Kind.INTERVAL:
            raise errors.FeatureNotSupported("date_trunc of interval")
        if name not in TRUNC_FIELDS:
            raise _unit_error(f.value, x.type, False)
        t = types.TIMESTAMP if k is Kind.DATE else x.type
        return Call(func, (field, coerce(x, t)), t)
    ok = _INTERVAL_FIELDS if k is Kind.INTERVAL else _EXTRACT
    if name not in ok:
        raise _unit_error(f.value, x.type, False)
    if func is Func.DATE_PART:
        x = coerce(x, types.TIMESTAMP) if k is Kind.DATE else x
        return Call(func, (field, x), types.FLOAT8)
    if k is Kind.DATE and name in _TIME_FIELDS:
        raise _unit_error(f.value, x.type, True)
    precision, scale = _EXTRACT[name]
    if k is Kind.INTERVAL:
        precision = None if name == "epoch" else 18
    elif k is Kind.DATE and name == "epoch":
        precision, scale = 15, 0
    return Call(func, (field, x), types.numeric(precision, scale))


def _unit_error(unit: str, t: SqlType, known: bool) -> errors.QueryError:
    if known:
        return errors.FeatureNotSupported(f'unit "{unit}" not supported for type {t}')
    return errors.InvalidParameterValue(f'unit "{unit}" not recognized for type {t}')


def _rule_now(func: Func, args) -> ex.Expr:
    _arity(func, args, 0)
    return Call(func, (), types.TIMESTAMPTZ)


_RULES = {
    **{f: _rule_arith for f in _ARITH},
    **{f: _rule_compare for f in _COMPARE},
    Func.AND: _rule_bool, Func.OR: _rule_bool, Func.NOT: _rule_bool,
    Func.NEG: _rule_sign, Func.ABS: _rule_sign,
    Func.ROUND: _rule_rounding, Func.TRUNC: _rule_rounding, Func.FLOOR: _rule_rounding,
    Func.CEIL: _rule_rounding,
    Func.SQRT: _rule_float_math, Func.LN: _rule_float_math, Func.EXP: _rule_float_math,
    Func.POWER: _rule_float_math,
    Func.COALESCE: _rule_variadic, Func.NULLIF: _rule_variadic,
    Func.GREATEST: _rule_variadic, Func.LEAST: _rule_variadic,
    **{f: _rule_string for f in _STRING_SIGS},
    Func.CONCAT: _rule_concat, Func.CONCAT_FN: _rule_concat,
    Func.EXTRACT: _rule_datetime, Func.DATE_PART: _rule_datetime,
    Func.DATE_TRUNC: _rule_datetime, Func.NOW: _rule_now,
}


# --- other nodes --------------------------------------------------------------------------
def bind_case(whens: list[tuple[ex.Expr, ex.Expr]], else_: ex.Expr | None) -> ex.Expr:
    """Searched CASE; results coerced to their common type, a missing ELSE is NULL."""
    conds = [_as_bool(c, "CASE/WHEN") for c, _ in whens]
    results = [r for _, r in whens] + ([else_] if else_ is not None else [])
    results, t = unify(results, "CASE")
    default = results.pop() if else_ is not None else Literal(None, t)
    return fold_constants(ex.Case(tuple(zip(conds, results)), default, t))


def bind_in(arg: ex.Expr, vals: list[ex.Expr], negated: bool = False) -> ex.Expr:
    """arg [NOT] IN (values): literals that fit arg's type are converted to it; otherwise
    everything goes to the common type."""
    if not vals:
        raise errors.SyntaxError_("syntax error at or near \")\"")
    fitted = [_fit_literal(v, arg.type) for v in vals] if not is_unknown(arg) else [None]
    if all(v is not None for v in fitted):
        return fold_constants(ex.InList(arg, tuple(fitted), negated))
    out, _ = unify([arg] + list(vals), "IN")
    return fold_constants(ex.InList(out[0], tuple(out[1:]), negated))


def _fit_literal(v: ex.Expr, t: SqlType) -> Literal | None:
    """v converted to t when v is a literal that t represents exactly, else None."""
    if not isinstance(v, Literal):
        return None
    if v.value is None:
        return Literal(None, t)
    if v.type == t or (v.type.is_string and t.is_string):
        return v
    try:
        if is_unknown(v):
            return coerce(_adopt(v, t), t)
        if v.type.is_integer and t.is_integer:
            return coerce(v, t) if int_fits(v.value, t) else None
        if (v.type.is_integer or v.type.is_numeric) and t.is_numeric:
            w = _as_numeric(v)
            fits = w.type.scale <= t.scale and (
                t.precision is None or _int_digits(w.type) <= _int_digits(t))
            return coerce(w, t) if fits else None
        if v.type.kind in _TEMPORAL and t.kind in _TEMPORAL:
            return coerce(v, t) if _TS_RANK[t.kind] >= _TS_RANK[v.type.kind] else None
    except errors.QueryError:
        return None
    return None


def bind_like(arg: ex.Expr, pattern: ex.Expr, negated: bool = False,
              case_insensitive: bool = False) -> ex.Expr:
    """arg [NOT] LIKE/ILIKE pattern (both text; backslash escapes as PostgreSQL)."""
    op = "~~*" if case_insensitive else "~~"
    if not (is_unknown(arg) or arg.type.is_string) or not (
            is_unknown(pattern) or pattern.type.is_string):
        op = ("!" if negated else "") + op
        raise errors.UndefinedFunction(
            f"operator does not exist: {_tname(arg)} {op} {_tname(pattern)}")
    arg, pattern = coerce(arg, types.TEXT), coerce(pattern, types.TEXT)
    if isinstance(pattern, Literal) and pattern.value is not None:
        check_like_pattern(pattern.value)
    return ex.Like(arg, pattern, negated, case_insensitive)


def bind_is_null(arg: ex.Expr, negated: bool = False) -> ex.Expr:
    return fold_constants(ex.IsNull(arg, negated))


# --- constant folding ---------------------------------------------------------------------
def fold_constants(e: ex.Expr) -> ex.Expr:
    """Replace constant subtrees by Literals, bottom up. A subtree whose evaluation raises
    (1/0) or that the pure-Python folder does not implement stays as it is; CASE branches
    with constant conditions are pruned."""
    if isinstance(e, (Literal, ex.ColumnRef)):
        return e
    if isinstance(e, ex.Case):
        return _fold_case(e)
    kids = e.children()
    folded = tuple(fold_constants(k) for k in kids)
    if folded != kids:
        e = _with_children(e, folded)
    if not _all_literal(folded) or (isinstance(e, Call) and e.func is Func.NOW):
        return e
    try:
        return Literal(evaluate_constant(e, [k.value for k in folded]), e.type)
    except (errors.QueryError, NotFoldable):
        return e


def _with_children(e: ex.Expr, kids: tuple) -> ex.Expr:
    if isinstance(e, Call):
        return dataclasses.replace(e, args=kids)
    if isinstance(e, Cast):
        return dataclasses.replace(e, arg=kids[0])
    if isinstance(e, ex.InList):
        return dataclasses.replace(e, arg=kids[0], values=kids[1:])
    if isinstance(e, ex.Like):
        return dataclasses.replace(e, arg=kids[0], pattern=kids[1])
    if isinstance(e, ex.IsNull):
        return dataclasses.replace(e, arg=kids[0])
    return e


def _fold_case(e: ex.Case) -> ex.Expr:
    whens = []
    for cond, result in e.whens:
        cond, result = fold_constants(cond), fold_constants(result)
        if isinstance(cond, Literal):
            if cond.value is True:
                if not whens:
                    return result
                return ex.Case(tuple(whens), result, e.type)
            continue  # false or NULL: the branch is never taken
        whens.append((cond, result))
    default = fold_constants(e.else_)
    return ex.Case(tuple(whens), default, e.type) if whens else default
