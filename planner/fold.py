"""Constant folding: a pure-Python evaluator of planner/expr.py nodes over constant arguments.

`fold_constants` replaces constant subtrees by Literals bottom up and prunes CASE branches
with constant conditions; `evaluate_constant` computes one node from its children's values
with PostgreSQL's semantics and errors (values as planner/values.py describes them). A node
it does not implement raises NotFoldable and stays for segment/expr.py to evaluate per batch.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import hashlib
import math
from decimal import Decimal

from planner import binary_values as bv
from planner import datetime_values, errors, math_values, numeric_math, pg_regex, string_format
from planner import expr as ex
from planner.expr import Call, Cast, Func, Literal
from planner import time_zones
from planner.timestamp_text import parse_timestamp
from planner.format_values import constant_call as formatting_call
from planner.row_functions import call_row
from planner.temporal import (TEMPORAL, Infinite, USECS_PER_DAY, add_interval, interval_key,
                              interval_scale)
from planner.time_values import time_arith
from planner.types import TIMESTAMPTZ, Kind, SqlType
from planner.values import (DEC, cast_value, check_int, div_scale, fit_dynamic, fit_length,
                            fit_numeric, scale_of, text_in, to_float4)


_ARRAY_FUNCS = frozenset({
    Func.ARRAY, Func.SUBSCRIPT, Func.SLICE, Func.ARRAY_LENGTH, Func.CARDINALITY,
    Func.ARRAY_UPPER, Func.ARRAY_LOWER, Func.ARRAY_NDIMS, Func.ARRAY_DIMS,
    Func.ARRAY_TO_STRING, Func.STRING_TO_ARRAY, Func.ARRAY_CAT, Func.ARRAY_APPEND,
    Func.ARRAY_PREPEND, Func.ARRAY_POSITION, Func.ARRAY_POSITIONS, Func.ARRAY_REMOVE,
    Func.ARRAY_REPLACE, Func.ARRAY_CONTAINS, Func.ARRAY_CONTAINED,
    Func.ARRAY_OVERLAP, Func.ARRAY_EQ, Func.ARRAY_NE, Func.ANY_OF, Func.ALL_OF,
    Func.ARRAY_SORT_KEY, Func.ROW, Func.FIELD, Func.ROW_KEY, Func.SORT_LIST,
    Func.SORTED_MODE, Func.LIST_FILTER, Func.LIST_DISTINCT, Func.PERCENTILE_CONT_MULTI, Func.PERCENTILE_DISC_MULTI,
    Func.REGR})


class NotFoldable(Exception):
    """The pure-Python constant folder does not implement this node; it stays as it is."""


def fold_constants(e: ex.Expr) -> ex.Expr:
    """Replace constant subtrees by Literals, bottom up. A subtree whose evaluation raises
    (1/0) or that the pure-Python folder does not implement stays as it is; CASE branches
    with constant conditions are pruned."""
    if isinstance(e, (Literal, ex.ColumnRef)):
        return e
    if isinstance(e, ex.Case):
        return _fold_case(e)
    if isinstance(e, ex.SequenceCall):  # changes a counter every time it runs
        return dataclasses.replace(e, args=tuple(fold_constants(a) for a in e.args))
    kids = e.children()
    folded = tuple(fold_constants(k) for k in kids)
    if folded != kids:
        e = _with_children(e, folded)
    constant = all(isinstance(k, Literal) for k in folded)
    if not constant or (isinstance(e, Call) and e.func in ex.NOT_CONSTANT):
        return _at_column_scale(e) if isinstance(e, Call) and e.func in _ORDERED else e
    try:
        return Literal(evaluate_constant(e, [k.value for k in folded]), e.type)
    except (errors.QueryError, NotFoldable):
        return e


# An order comparison: the same with its operands swapped, and how `x op K` rounds K.
_ORDERED = {Func.LT: (Func.GT, decimal.ROUND_CEILING), Func.LE: (Func.GE, decimal.ROUND_FLOOR),
            Func.GT: (Func.LT, decimal.ROUND_FLOOR), Func.GE: (Func.LE, decimal.ROUND_CEILING)}


def _at_column_scale(e: Call) -> Call:
    """`x < K` for a numeric x of scale s and a constant K of more decimal places, as the
    same comparison with K rounded to scale s (up or down by the operator: x > 5003.6857
    is x > 5003.68 for x of scale 2), so the comparison runs at x's scale. TPC-H Q22's
    InitPlan average (scale 16) against c_acctbal (scale 2) otherwise rescaled every
    value to 128-bit decimals, 6x slower."""
    x, k = e.args
    func = e.func
    if isinstance(x, Literal):
        x, k = k, x
        func = _ORDERED[func][0]
    if isinstance(x, Literal) or not isinstance(k, Literal) or k.type.kind is not Kind.NUMERIC \
            or x.type.kind is not Kind.NUMERIC or x.type.scale < 0 \
            or not isinstance(k.value, Decimal) or not k.value.is_finite():
        return e
    scale = x.type.scale
    if -k.value.as_tuple().exponent <= scale:
        return e
    bound = k.value.quantize(Decimal(1).scaleb(-scale), rounding=_ORDERED[func][1],
                             context=decimal.Context(prec=1000))
    digits = max(len(bound.as_tuple().digits), scale + 1)
    return Call(func, (x, Literal(bound, SqlType(Kind.NUMERIC, digits, scale))), e.type)


def _with_children(e: ex.Expr, kids: tuple) -> ex.Expr:
    if isinstance(e, (Call, ex.RowCall)):
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


def evaluate_constant(e: ex.Expr, vals: list):
    """The value of node e whose children are the constants `vals` (NotFoldable when this
    pure-Python evaluator does not implement it)."""
    if isinstance(e, Cast):
        return cast_value(vals[0], e.arg.type, e.type)
    if isinstance(e, ex.RowCall):
        return call_row(e, vals)
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
    if f not in _ORDER_ONLY and any(isinstance(v, Infinite) for v in vals):
        raise NotFoldable  # arithmetic on +/-infinity: the kernels' (PostgreSQL's rules)
    if f in _ARRAY_FUNCS:  # computed by the batch kernels (several take NULL arguments)
        if f is Func.ARRAY:
            return tuple(vals)
        raise NotFoldable
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
    if f is Func.CONCAT_WS:
        return None if vals[0] is None else vals[0].join(v for v in vals[1:] if v is not None)
    if f in NON_STRICT:
        return NON_STRICT[f](e, *vals)
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
    if t.padded:  # bpchar compares without its trailing spaces (types.BPCHAR_PADDED)
        return lambda v: v.rstrip(" ")
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
        if not t.is_dynamic:
            return fit_numeric(r, t)
        # each value's own display scale: Decimal keeps PostgreSQL's for + - * %
        if f is Func.DIV:
            scale = div_scale(a, b, scale_of(a), scale_of(b))
            r = DEC.quantize(r, Decimal(1).scaleb(-scale))
        return fit_dynamic(r, t)
    if Kind.TIME in (ta.kind, tb.kind) or ta.kind is Kind.TIMETZ:
        return time_arith(f is Func.ADD, a, b)
    if ta.kind is Kind.DATE and tb.kind is Kind.DATE:
        return (a - b).days
    if ta.kind is Kind.DATE:
        try:
            return a + dt.timedelta(days=b if f is Func.ADD else -b)
        except OverflowError:
            raise errors.QueryError("date out of range", "22008")
    if tb.kind is Kind.INTERVAL and ta.kind in TEMPORAL:
        return add_interval(a, b, 1 if f is Func.ADD else -1)
    if ta.kind in TEMPORAL:  # timestamp - timestamp: days and time, as justify_hours
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
    if e.type.is_integer:
        return check_int(-x if e.func is Func.NEG else abs(x), e.type)
    if isinstance(x, Decimal):  # in DEC: Python's - and abs() round to 28 digits
        return DEC.minus(x) if e.func is Func.NEG else DEC.abs(x)
    return -x if e.func is Func.NEG else abs(x)


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


_BITS = {Kind.INT2: 16, Kind.INT4: 32, Kind.INT8: 64}


def bitwise(f: Func, kind: Kind, a: int, b: int | None = None) -> int:
    """PostgreSQL's int2/int4/int8 bitwise operators on Python ints: results wrap to the
    type's width; a shift count is taken modulo the width, as the C shift PostgreSQL
    runs does on x86-64."""
    bits = _BITS[kind]
    if f is Func.BIT_NOT:
        r = ~a
    elif f is Func.BIT_AND:
        r = a & b
    elif f is Func.BIT_OR:
        r = a | b
    elif f is Func.BIT_XOR:
        r = a ^ b
    elif f is Func.SHIFT_LEFT:
        r = a << (b % bits)
    else:
        r = a >> (b % bits)
    r &= (1 << bits) - 1
    return r - (1 << bits) if r >> (bits - 1) else r


# Calls that only compare or pick their arguments: they fold over +/-infinity too.
_ORDER_ONLY = frozenset((Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE, Func.AND,
                         Func.OR, Func.COALESCE, Func.GREATEST, Func.LEAST, Func.NULLIF,
                         Func.ISFINITE))

_CONST_CALLS = {
    Func.ISFINITE: lambda e, x: not isinstance(x, Infinite),
    **{f: _c_arith for f in (Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD)},
    **{f: _c_compare for f in (Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE)},
    Func.NOT: lambda e, x: not x,
    **{f: lambda e, *v: bitwise(e.func, e.type.kind, *v) for f in (
        Func.BIT_AND, Func.BIT_OR, Func.BIT_XOR, Func.BIT_NOT, Func.SHIFT_LEFT,
        Func.SHIFT_RIGHT)},
    Func.NEG: _c_sign, Func.ABS: _c_sign,
    Func.ROUND: _c_round, Func.TRUNC: _c_round, Func.FLOOR: _c_round, Func.CEIL: _c_round,
    Func.SQRT: lambda e, x: float_math(e.func, x), Func.LN: lambda e, x: float_math(e.func, x),
    Func.EXP: lambda e, x: float_math(e.func, x),
    Func.POWER: lambda e, x, y: float_math(e.func, x, y),
    Func.CONCAT: lambda e, a, b: a + b,
    Func.LOWER: lambda e, s: _simple_case(s, str.lower), Func.UPPER: lambda e, s: _simple_case(s, str.upper),
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
    Func.REPEAT: lambda e, s, k: repeat_text(s, k),
    Func.REVERSE: lambda e, s: s[::-1],
    Func.LPAD: lambda e, s, k, fill=" ": pad_text(s, k, fill, True),
    Func.RPAD: lambda e, s, k, fill=" ": pad_text(s, k, fill, False),
    Func.SPLIT_PART: lambda e, s, d, k: split_part(s, d, k),
    Func.INITCAP: lambda e, s: initcap(s),
    Func.MD5: lambda e, s: hashlib.md5(s.encode()).hexdigest(),
    Func.UNISTR: lambda e, s: unistr(s),
    Func.ASCII: lambda e, s: ord(s[0]) if s else 0,
    Func.CHR: lambda e, k: chr_text(k),
    Func.NUMERIC_ROOT: lambda e, x: numeric_math.fixed_sqrt(
        x, scale_of(x) if e.type.is_dynamic else e.type.scale),
    Func.TO_HEX: lambda e, k: format(k & (0xFFFFFFFF if e.args[0].type.kind is Kind.INT4
                                          else 0xFFFFFFFFFFFFFFFF), "x"),
    Func.TRANSLATE: lambda e, s, a, b: s.translate(translate_table(a, b)),
    **{f: (lambda fn: lambda e, *v: fn(*v))(fn) for f, fn in (
        (Func.REGEXP_MATCH, pg_regex.match), (Func.REGEXP_MATCHES, pg_regex.matches),
        (Func.REGEXP_LIKE, pg_regex.like), (Func.REGEXP_COUNT, pg_regex.count),
        (Func.REGEXP_INSTR, pg_regex.instr), (Func.REGEXP_SUBSTR, pg_regex.substr),
        (Func.SIMILAR, pg_regex.similar), (Func.SUBSTRING_REGEX, pg_regex.substring_posix),
        (Func.SUBSTRING_SIMILAR, pg_regex.substring_similar),
        (Func.QUOTE_LITERAL, string_format.quote_literal),
        (Func.OVERLAY, string_format.overlay))},
    Func.REGEXP_SPLIT: lambda e, s, p, flags=None: pg_regex.split(s, p, flags),
    Func.REGEXP_SPLIT_ROWS: lambda e, s, p, flags=None: pg_regex.split(
        s, p, flags, "regexp_split_to_table"),
    Func.REGEXP_REPLACE: lambda e, *v: regexp_replace(e, *v),
    Func.CBRT: lambda e, x: math.cbrt(x),
    Func.SIGN: lambda e, x: 1.0 if x > 0 else (-1.0 if x < 0 else 0.0),
    **{f: lambda e, *v: trig(e.func, *v) for f in (
        Func.SIN, Func.COS, Func.TAN, Func.ASIN, Func.ACOS, Func.ATAN, Func.ATAN2)},
    Func.GCD: lambda e, a, b: gcd_lcm(e.func, e.type, a, b),
    Func.LCM: lambda e, a, b: gcd_lcm(e.func, e.type, a, b),
    Func.TO_LOCAL: lambda e, v, z: time_zones.to_local(v, time_zones.Zone.from_spec(z)),
    Func.FROM_LOCAL: lambda e, v, z: time_zones.from_local(v, time_zones.Zone.from_spec(z)),
    Func.TSTZ_OUT: lambda e, v, z: time_zones.text_in_zone(v, time_zones.Zone.from_spec(z)),
    # timestamptz_in in zone z: text with its own offset is that instant, text without
    # one is a wall clock in z
    Func.TSTZ_IN: lambda e, s, z: parse_timestamp(s, TIMESTAMPTZ,
                                                  time_zones.Zone.from_spec(z)),
    Func.TEXT_IN: lambda e, s, z, order: text_in(s, e.type, time_zones.Zone.from_spec(z), order),
    **{f: lambda e, *v: formatting_call(e, list(v)) for f in (
        Func.TO_CHAR, Func.TO_DATE, Func.TO_TIMESTAMP, Func.TO_NUMBER)},
    Func.LOG: lambda e, x: math_values.log10(x), Func.LOG10: lambda e, x: math_values.log10(x),
    Func.DIV_INT: lambda e, a, b: fit_numeric(math_values.div(a, b), e.type),
    Func.FACTORIAL: lambda e, n: math_values.factorial(n),
    Func.WIDTH_BUCKET: lambda e, *v: math_values.width_bucket(*v),
    Func.MAKE_DATE: lambda e, *v: datetime_values.make_date(*v),
    Func.MAKE_TIMESTAMP: lambda e, *v: datetime_values.make_timestamp(*v),
    Func.MAKE_INTERVAL: lambda e, *v: datetime_values.make_interval(*v),
    Func.JUSTIFY_DAYS: lambda e, iv: datetime_values.justify("days", iv),
    Func.JUSTIFY_HOURS: lambda e, iv: datetime_values.justify("hours", iv),
    Func.JUSTIFY_INTERVAL: lambda e, iv: datetime_values.justify("interval", iv),
    Func.AGE: lambda e, a, b: datetime_values.age(a, b),
    Func.DATE_BIN: lambda e, *v: datetime_values.date_bin(*v),
    Func.BYTEA_LENGTH: lambda e, v: len(v), Func.BYTEA_CONCAT: lambda e, a, b: a + b,
    Func.BYTEA_SUBSTRING: lambda e, v, *a: bv.substring(v, *a),
    Func.BYTEA_MD5: lambda e, v: hashlib.md5(v).hexdigest(),
    Func.BYTEA_POSITION: lambda e, v, sub: v.find(sub) + 1,
    Func.BYTEA_TRIM: lambda e, v, cut: v.strip(cut),
    Func.BYTEA_LTRIM: lambda e, v, cut: v.lstrip(cut),
    Func.BYTEA_RTRIM: lambda e, v, cut: v.rstrip(cut),
    Func.BYTEA_LIKE: lambda e, v, pattern: bv.like(v, pattern),
    **{f: lambda e, v: bv.DIGESTS[e.func.value](v).digest() for f in (
        Func.SHA224, Func.SHA256, Func.SHA384, Func.SHA512)},
    Func.ENCODE: lambda e, v, fmt: bv.encode(v, fmt),
    Func.DECODE: lambda e, s, fmt: bv.decode(s, fmt),
    Func.GET_BYTE: lambda e, v, k: bv.get_byte(v, k),
    Func.SET_BYTE: lambda e, v, k, b: bv.set_byte(v, k, b),
    Func.GET_BIT: lambda e, v, k: bv.get_bit(v, k),
    Func.SET_BIT: lambda e, v, k, b: bv.set_bit(v, k, b),
    Func.CONVERT_TO: lambda e, s, name: s.encode(),
    Func.CONVERT_FROM: lambda e, v, name: bv.convert_from_utf8(v),
}

# Functions that take NULL arguments (the others give NULL for any).
NON_STRICT = {
    Func.FORMAT: lambda e, fmt, *args: None if fmt is None else string_format.format_text(
        fmt, list(args)),
    Func.QUOTE_NULLABLE: lambda e, s: string_format.quote_nullable(s),
}


def regexp_replace(e: Call, s: str, pattern: str, replacement: str, *rest):
    """regexp_replace's overloads by their argument types: (flags), (start [, N [, flags]])."""
    if rest and isinstance(rest[0], str):
        return pg_regex.replace(s, pattern, replacement, flags=rest[0])
    return pg_regex.replace(s, pattern, replacement, *rest)


MAX_ALLOC = 0x3FFFFFFF  # PostgreSQL's MaxAllocSize: no value is larger
VARHDRSZ = 4


def repeat_text(s: str, k: int) -> str:
    if max(k, 0) * len(s.encode()) + VARHDRSZ > MAX_ALLOC:
        raise errors.QueryError("requested length too large", "54000")
    return s * max(k, 0)


def check_pad_length(k: int) -> None:
    """lpad/rpad allocate 4 bytes per requested character (UTF-8's maximum) first."""
    if k * 4 > 2**31 - 1:
        raise errors.QueryError("requested length too large", "54000")
    if k * 4 + VARHDRSZ > MAX_ALLOC:
        raise errors.InternalError(f"invalid memory alloc request size {k * 4 + VARHDRSZ}")


def pad_text(s: str, k: int, fill: str, left: bool) -> str:
    """lpad/rpad: s cut to k characters, or filled to k with fill repeated (an empty fill
    leaves s as it is)."""
    k = max(k, 0)
    check_pad_length(k)
    body = s[:k]
    need = k - len(body) if fill else 0
    padding = (fill * (need // len(fill) + 1))[:need] if need else ""
    return padding + body if left else body + padding


def split_part(s: str, delim: str, k: int) -> str:
    if k == 0:
        raise errors.InvalidParameterValue("field position must not be zero")
    if not s:
        return ""
    fields = s.split(delim) if delim else [s]
    return fields[k - 1] if 0 < k <= len(fields) else (
        fields[k] if 0 < -k <= len(fields) else "")


def initcap(s: str) -> str:
    """The first letter or digit of each run of them upper case, the others lower case,
    one character at a time as PostgreSQL's initcap does with towupper/towlower."""
    out, inside = [], False
    for c in s:
        out.append(_simple_case(c, str.lower if inside else str.upper))
        inside = c.isalnum()
    return "".join(out)


_UNISTR_FORMS = (("", 4), ("u", 4), ("+", 6), ("U", 8))  # \XXXX \uXXXX \+XXXXXX \UXXXXXXXX


def unistr(s: str) -> str:
    r"""unistr(text): \\ is a backslash, and \XXXX, \uXXXX, \+XXXXXX, \UXXXXXXXX are the code
    points of their hex digits, a UTF-16 surrogate pair becoming one (varlena.c's unistr,
    its errors too)."""
    out, i, pair_first = [], 0, 0
    hexdigits = "0123456789abcdefABCDEF"

    def bad_pair() -> errors.QueryError:
        return errors.SyntaxError_("invalid Unicode surrogate pair")
    while i < len(s):
        c = s[i]
        if c != "\\":
            if pair_first:
                raise bad_pair()
            out.append(c)
            i += 1
            continue
        if s[i + 1:i + 2] == "\\":
            if pair_first:
                raise bad_pair()
            out.append("\\")
            i += 2
            continue
        for marker, width in _UNISTR_FORMS:
            start = i + 1 + len(marker)
            digits = s[start:start + width]
            if s[i + 1:start] == marker and len(digits) == width \
                    and all(d in hexdigits for d in digits):
                break
        else:
            raise errors.SyntaxError_(
                "invalid Unicode escape",
                hint="Unicode escapes must be \\XXXX, \\+XXXXXX, \\uXXXX, or \\UXXXXXXXX.")
        code = int(digits, 16)
        if not 0 < code <= 0x10FFFF:
            raise errors.InvalidParameterValue(f"invalid Unicode code point: {code:04X}")
        i = start + width
        if pair_first:
            if not 0xDC00 <= code <= 0xDFFF:
                raise bad_pair()
            code = 0x10000 + ((pair_first - 0xD800) << 10) + (code - 0xDC00)
            pair_first = 0
        elif 0xDC00 <= code <= 0xDFFF:
            raise bad_pair()
        if 0xD800 <= code <= 0xDBFF:
            pair_first = code
        else:
            out.append(chr(code))
    if pair_first:
        raise bad_pair()
    return "".join(out)


def translate_table(frm: str, to: str) -> dict:
    """str.translate's table for translate(s, from, to): a character's first position in
    `from` decides; one past the end of `to` is deleted."""
    table = {}
    for i, c in enumerate(frm):
        table.setdefault(ord(c), to[i] if i < len(to) else None)
    return table


def chr_text(k: int) -> str:
    check_chr([k])
    return chr(k)


def check_chr(codes) -> None:
    """chr()'s errors for the first bad code point among `codes` (UTF-8 database)."""
    for k in codes:
        if k < 0:
            raise errors.QueryError("character number must be positive", "54000")
        if k == 0:
            raise errors.InvalidParameterValue("null character not permitted")
        if k > 0x10FFFF:
            raise errors.QueryError(f"requested character too large for encoding: {k}", "54000")
        if 0xD800 <= k <= 0xDFFF:
            raise errors.QueryError(f"requested character not valid for encoding: {k}", "54000")


def trig(f: Func, x: float, y: float = 0.0) -> float:
    """PostgreSQL's dsin & co.: NaN in, NaN out; 22003 outside the domain."""
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if (f in (Func.SIN, Func.COS, Func.TAN) and math.isinf(x)) or (
            f in (Func.ASIN, Func.ACOS) and not -1.0 <= x <= 1.0):
        raise errors.NumericOutOfRange("input is out of range")
    if f is Func.ATAN2:
        return math.atan2(x, y)
    return {Func.SIN: math.sin, Func.COS: math.cos, Func.TAN: math.tan, Func.ASIN: math.asin,
            Func.ACOS: math.acos, Func.ATAN: math.atan}[f](x)


def gcd_lcm(f: Func, t: SqlType, a: int, b: int) -> int:
    """gcd/lcm of int4 or int8; a result the type cannot hold (gcd(INT_MIN, 0)) is 22003."""
    if f is Func.LCM and (a == 0 or b == 0):
        return 0
    r = math.gcd(a, b) if f is Func.GCD else abs(a * b) // math.gcd(a, b)
    return check_int(r, t)


def _simple_case(s: str, convert) -> str:
    """Case mapping one letter at a time, as the C library's towupper/towlower (and so
    PostgreSQL) do: a letter whose full mapping is several letters (ß -> SS) keeps its
    single-letter mapping where one exists (İ -> i), else stays as it is."""
    out = []
    for c in s:
        m = convert(c)
        out.append(m if len(m) == 1 else (m[0] if convert is str.lower else c))
    return "".join(out)
