"""The typing rule of each operator and function, as PostgreSQL resolves them.

RULES maps a Func to its rule: the rule checks the arguments (42883 when no signature
fits), inserts implicit casts (planner/coercion.py) and picks the result type. Numeric
results over numerics of one scale each are typed statically, following PostgreSQL's display
scales: add/sub max(s1, s2), mul s1 + s2, mod max(s1, s2). Division (select_div_scale,
16 to 20+ digits per value) and anything over an unconstrained numeric are dynamic: each
value carries its own display scale (types.dynamic_numeric), computed by the segment; a
quotient of two constants is folded at its scale. A precision is kept while it fits 18
digits, so the result stays a scaled int64; beyond that it is numeric(None, s), a
decimal128(38, s) column. planner/functions.py's `bind_call` applies the rules.
"""

from __future__ import annotations

from decimal import Decimal

from planner import (array_rules, binary_rules, datetime_rules, errors, format_rules,
                     interval_rules, json_rules, math_rules, numeric_scale,
                     numeric_scale_rules, padded_bpchar, regex_rules, types, zone_rules)
from planner import expr as ex
from planner.coercion import (
    adopt, as_bool, as_bpchar, as_numeric, bind_cast, bpchar_padded, coerce, common_type,
    int_digits, is_unknown, type_name,
    compare_operands, no_function, no_operator, not_unique, numeric_type, text_arg, unify)
from planner.expr import Call, Func, Literal
from planner.fold import fold_constants
from planner.temporal import TEMPORAL, field_name
from planner.time_zones import session_zone
from planner.types import Kind, SqlType
from planner.values import div_scale

_ARITH = (Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD)
_COMPARE = (Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE)


def _arity(func: Func, args, *counts: int) -> None:
    if len(args) not in counts:
        raise no_function(func.value, args)


def _binary_unknowns(func: Func, a: ex.Expr, b: ex.Expr):
    ua, ub = is_unknown(a), is_unknown(b)
    if ua and ub:
        if func in _COMPARE or func is Func.CONCAT:
            return coerce(a, types.TEXT), coerce(b, types.TEXT)
        raise not_unique(func, a, b)
    if ua or ub:
        known = b if ua else a
        if func in _ARITH and known.type.kind in TEMPORAL + (Kind.INTERVAL, Kind.TIME,
                                                             Kind.TIMETZ):
            raise not_unique(func, a, b)
        if ua:
            a = adopt(a, b.type)
        else:
            b = adopt(b, a.type)
    return a, b


def _rule_arith(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    if func is Func.SUB and json_rules.involved(*args):
        return json_rules.rule_delete(*args)
    a, b = _binary_unknowns(func, *args)
    ta, tb = a.type, b.type
    if ta.is_number and tb.is_number:
        if ta.is_float or tb.is_float:
            if func is Func.MOD:
                raise no_operator(func, (a, b))
            t = types.FLOAT4 if ta.kind is tb.kind is Kind.FLOAT4 else types.FLOAT8
            return Call(func, (coerce(a, t), coerce(b, t)), t)
        if ta.is_numeric or tb.is_numeric:
            a, b = as_numeric(a), as_numeric(b)
            return Call(func, (a, b), _numeric_result(func, a, b))
        t = common_type(ta, tb, "")
        return Call(func, (coerce(a, t), coerce(b, t)), t)
    e = _temporal_arith(func, a, b)
    if e is None:
        raise no_operator(func, (a, b))
    return e


def _numeric_result(func: Func, a: ex.Expr, b: ex.Expr) -> SqlType:
    sa, sb = a.type.scale, b.type.scale
    constants = isinstance(a, Literal) and isinstance(b, Literal) and a.value and b.value
    if func is Func.DIV and not constants:  # select_div_scale: a scale per value
        return types.dynamic_numeric(max(sa, sb, types.DIVISION_SCALE))
    if a.type.is_dynamic or b.type.is_dynamic:
        return _dynamic_result(func, sa, sb)
    ia, ib = int_digits(a.type), int_digits(b.type)
    both = ia is not None and ib is not None
    if func in (Func.ADD, Func.SUB):
        return numeric_type(max(ia, ib) + 1 if both else None, max(sa, sb))
    if func is Func.MUL:
        return numeric_type(ia + ib if both else None, sa + sb)
    if func is Func.MOD:
        return numeric_type(min(ia, ib) if both else None, max(sa, sb))
    scale = div_scale(a.value, b.value, sa, sb)
    return numeric_type(ia + sb if ia is not None else None, scale)


def _rule_quotient_at(func: Func, args) -> ex.Expr:
    """Func.NUMERIC_QUOTIENT_AT (internal): a numeric quotient held at a storage scale the
    caller chose (numeric_aggregates.avg_storage_scale), not DIVISION_SCALE."""
    if len(args) != 3 or not isinstance(args[2], Literal):
        raise no_function(func.value, args)
    e = _rule_arith(Func.DIV, args[:2])
    if not (isinstance(e, Call) and e.type.is_dynamic):
        raise no_function(func.value, args)
    return Call(Func.DIV, e.args, types.dynamic_numeric(
        max(args[2].value, e.args[0].type.scale, e.args[1].type.scale)))


def _dynamic_result(func: Func, sa: int, sb: int) -> SqlType:
    """The storage scale of + - * % over an unconstrained numeric: what the values' display
    scales can reach (* at most the larger of the operands' and 16; a product with more
    digits than that is 22003 when it occurs)."""
    if func is Func.MUL:
        return types.dynamic_numeric(min(sa + sb, max(sa, sb, types.NUMERIC_DEFAULT_SCALE)))
    return types.dynamic_numeric(max(sa, sb))


def _time_arith(func: Func, a: ex.Expr, b: ex.Expr) -> ex.Expr | None:
    """time + interval, interval + time, time - interval -> time; time - time ->
    interval; date + time, time + date, date - time -> timestamp; timetz +/- interval ->
    timetz."""
    ka, kb = a.type.kind, b.type.kind
    if Kind.TIMETZ in (ka, kb):
        if func is Func.ADD and kb is Kind.TIMETZ and ka is Kind.INTERVAL:
            a, b, ka, kb = b, a, kb, ka
        if func in (Func.ADD, Func.SUB) and ka is Kind.TIMETZ and kb is Kind.INTERVAL:
            return Call(func, (a, b), types.TIMETZ)
        if func is Func.ADD and Kind.DATE in (ka, kb):
            raise errors.FeatureNotSupported("date + time with time zone")
        return None
    if func is Func.ADD and kb is Kind.TIME and ka in (Kind.INTERVAL, Kind.DATE):
        a, b, ka, kb = b, a, kb, ka  # addition commutes: keep the time first
    if func in (Func.ADD, Func.SUB) and ka is Kind.TIME and kb is Kind.INTERVAL:
        return Call(func, (a, b), types.TIME)
    if func is Func.SUB and ka is kb is Kind.TIME:
        return Call(func, (a, b), types.INTERVAL)
    if func in (Func.ADD, Func.SUB) and ka is Kind.DATE and kb is Kind.TIME:
        return Call(func, (a, b), types.TIMESTAMP)
    if func is Func.ADD and ka is Kind.TIME and kb is Kind.DATE:
        return Call(func, (b, a), types.TIMESTAMP)
    if func is Func.ADD and ka is kb is Kind.TIME:  # PostgreSQL: several candidates
        raise not_unique(func, a, b)
    if func is Func.ADD and ka is Kind.TIME and kb in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        a, b, ka, kb = b, a, kb, ka
    if func in (Func.ADD, Func.SUB) and kb is Kind.TIME and ka in (
            Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.INTERVAL):
        # no such operators: PostgreSQL casts the time to interval (implicit, pg_cast 'i')
        return _temporal_arith(func, a, bind_cast(b, types.INTERVAL))
    if func is Func.MUL and kb is Kind.TIME and a.type.is_number:
        a, b, ka, kb = b, a, kb, ka
    if func in (Func.MUL, Func.DIV) and ka is Kind.TIME and b.type.is_number:
        # time casts to interval implicitly (pg_cast 'i'): interval * / float8
        return Call(func, (bind_cast(a, types.INTERVAL), coerce(b, types.FLOAT8)),
                    types.INTERVAL)
    return None


def _temporal_arith(func: Func, a: ex.Expr, b: ex.Expr) -> ex.Expr | None:
    ka, kb = a.type.kind, b.type.kind
    if Kind.TIME in (ka, kb) or Kind.TIMETZ in (ka, kb):
        return _time_arith(func, a, b)
    small_int = (Kind.INT2, Kind.INT4)
    if func is Func.ADD and (ka in small_int or ka is Kind.INTERVAL) and kb in TEMPORAL:
        a, b, ka, kb = b, a, kb, ka  # addition commutes: keep the date/timestamp first
    if func in (Func.ADD, Func.SUB):
        if ka is Kind.DATE and kb in small_int:
            return Call(func, (a, coerce(b, types.INT4)), types.DATE)
        if ka in TEMPORAL and kb is Kind.INTERVAL:
            t = types.TIMESTAMP if ka is Kind.DATE else a.type
            zone = zone_rules.zoned() if ka is Kind.TIMESTAMPTZ else None
            if zone is not None:
                return zone_rules.add_interval(func, a, b, zone)
            return Call(func, (coerce(a, t), b), t)
        if ka is kb is Kind.INTERVAL:
            return Call(func, (a, b), types.INTERVAL)
    if func is Func.SUB and ka in TEMPORAL and kb in TEMPORAL:
        if ka is kb is Kind.DATE:
            return Call(func, (a, b), types.INT4)
        t = common_type(a.type, b.type, "")
        return Call(func, (coerce(a, t), coerce(b, t)), types.INTERVAL)
    if func is Func.MUL and kb is Kind.INTERVAL and a.type.is_number:
        a, b, ka, kb = b, a, kb, ka
    if func in (Func.MUL, Func.DIV) and ka is Kind.INTERVAL and b.type.is_number:
        return Call(func, (a, coerce(b, types.FLOAT8)), types.INTERVAL)
    return None


def _rule_compare(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    a, b = args
    if a.type.is_array or b.type.is_array:
        return array_rules.rule_compare(func, a, b)
    if json_rules.involved(a, b):
        return json_rules.rule_compare(func, a, b)
    a, b = _binary_unknowns(func, as_bpchar(a, b.type), as_bpchar(b, a.type))
    a, b = compare_operands(func, a, b)
    return Call(func, (a, b), types.BOOL)


def _rule_bool(func: Func, args) -> ex.Expr:
    if func is Func.NOT:
        _arity(func, args, 1)
    elif len(args) < 2:
        raise no_function(func.value, args)
    return Call(func, tuple(as_bool(a, func.value.upper()) for a in args), types.BOOL)


def _rule_sign(func: Func, args) -> ex.Expr:
    """NEG and ABS keep their argument's type. An untyped literal (or NULL) is float8,
    numeric's preferred type, for abs and @; prefix minus has as many candidates as
    numeric types and intervals, and PostgreSQL picks none."""
    _arity(func, args, 1)
    a = args[0]
    if is_unknown(a):
        if func is Func.NEG:
            raise errors.QueryError("operator is not unique: - unknown", "42725")
        a = adopt(a, types.FLOAT8) if a.value is None else bind_cast(a, types.FLOAT8)
    if a.type.is_number or (func is Func.NEG and a.type.kind is Kind.INTERVAL):
        return Call(func, (a,), a.type)
    raise no_operator(func, args) if func is Func.NEG else no_function(func.value, args)


def _rule_bitwise(func: Func, args) -> ex.Expr:
    """& | # of two integers of one type (the wider), ~ of one; << >> keep the left
    operand's type and take an int4 shift count. Other operand types are 42883."""
    known = next((a.type for a in args if not is_unknown(a) and a.type.is_integer),
                 types.INT4)
    args = [(Literal(None, known) if a.value is None else coerce(adopt(a, types.INT4),
                                                                  types.INT4))
            if is_unknown(a) else a for a in args]
    if func is Func.BIT_NOT:
        _arity(func, args, 1)
        if not args[0].type.is_integer:
            raise no_operator(func, args)
        return Call(func, (args[0],), args[0].type)
    _arity(func, args, 2)
    a, b = args
    if not (a.type.is_integer and b.type.is_integer):
        raise no_operator(func, (a, b))
    if func in (Func.SHIFT_LEFT, Func.SHIFT_RIGHT):
        return Call(func, (a, coerce(b, types.INT4)), a.type)
    t = common_type(a.type, b.type, "")
    return Call(func, (coerce(a, t), coerce(b, t)), t)


def _rule_rounding(func: Func, args) -> ex.Expr:
    """round/trunc(x[, n]), floor, ceil: float8 for integers and floats, numeric stays
    numeric with scale n (a constant n) or 0."""
    two = func in (Func.ROUND, Func.TRUNC)
    _arity(func, args, *((1, 2) if two else (1,)))
    x = adopt(args[0], types.numeric(None, 0)) if is_unknown(args[0]) else args[0]
    if len(args) == 2:
        n = adopt(args[1], types.INT4) if is_unknown(args[1]) else args[1]
        if not (n.type.is_integer and (x.type.is_numeric or x.type.is_integer)):
            raise no_function(func.value, (x, n))
        x, n = as_numeric(x), coerce(n, types.INT4)
        digits = int_digits(x.type)
        if isinstance(n, Literal) and n.value is not None:
            scale = max(n.value, 0)
        else:
            scale = x.type.scale
        grow = 1 if func is Func.ROUND else 0
        return Call(func, (x, n), numeric_type(None if digits is None else digits + grow, scale))
    if x.type.is_numeric:
        digits = int_digits(x.type)
        grow = 0 if func is Func.TRUNC else 1
        return Call(func, (x,), numeric_type(None if digits is None else digits + grow, 0))
    if x.type.is_number:
        return Call(func, (coerce(x, types.FLOAT8),), types.FLOAT8)
    raise no_function(func.value, args)


def _rule_float_math(func: Func, args) -> ex.Expr:
    """sqrt, ln, exp, power of non-numerics, cbrt, the trigonometric functions: float8
    (PostgreSQL has only float8 versions of cbrt and the trigonometric functions)."""
    _arity(func, args, 2 if func in (Func.POWER, Func.ATAN2) else 1)
    out = []
    for a in args:
        a = adopt(a, types.FLOAT8) if is_unknown(a) else a
        if not a.type.is_number:
            raise no_function(func.value, args)
        out.append(coerce(a, types.FLOAT8))
    return Call(func, tuple(out), types.FLOAT8)


def _rule_numeric_or_float(func: Func, args) -> ex.Expr:
    """ln, exp, sqrt and power: the numeric versions for numeric arguments
    (planner/math_rules.py), else float8."""
    e = (math_rules.rule_power if func is Func.POWER else math_rules.rule_unary)(func, args)
    return e if e is not None else _rule_float_math(func, args)


def _rule_sign_fn(func: Func, args) -> ex.Expr:
    """sign(): float8 for integers and floats (float8 is the preferred numeric type), and
    for numeric -1, 0 or 1 at scale 0, bound as a CASE over comparisons with zero."""
    _arity(func, args, 1)
    x = adopt(args[0], types.FLOAT8) if is_unknown(args[0]) else args[0]
    if x.type.is_numeric:
        zero = Literal(Decimal(0), types.numeric(1, 0))
        one = lambda v: Literal(Decimal(v), types.numeric(1, 0))  # noqa: E731
        whens = tuple((_rule_compare(f, [x, zero]), one(v))
                      for f, v in ((Func.GT, 1), (Func.LT, -1), (Func.EQ, 0)))
        return fold_constants(ex.Case(whens, Literal(None, types.numeric(1, 0)),
                                      types.numeric(1, 0)))
    if not x.type.is_number:
        raise no_function(func.value, args)
    return Call(func, (coerce(x, types.FLOAT8),), types.FLOAT8)


def _rule_gcd(func: Func, args) -> ex.Expr:
    """gcd/lcm of int4 or int8 (int2 promotes to int4). PostgreSQL also has a numeric
    version; raympp refuses it rather than compute it in another type."""
    _arity(func, args, 2)
    args = [adopt(a, types.INT4) if is_unknown(a) else a for a in args]
    if any(a.type.is_numeric for a in args):
        raise errors.FeatureNotSupported(f"{func.value}() of numeric values")
    if not all(a.type.is_integer for a in args):
        raise no_function(func.value, args)
    t = types.INT8 if any(a.type.kind is Kind.INT8 for a in args) else types.INT4
    return Call(func, tuple(coerce(a, t) for a in args), t)


def _rule_to_hex(func: Func, args) -> ex.Expr:
    """to_hex(int4) and to_hex(int8): an int2 or unknown argument is int4, a negative
    value shows its two's complement in the argument's width (PostgreSQL's to_hex32/64)."""
    _arity(func, args, 1)
    a = args[0]
    if is_unknown(a) or a.type.kind is Kind.INT2:  # int2 casts to int4 and int8 alike
        raise errors.QueryError(f"function {func.value}({type_name(a)}) is not unique",
                                "42725", hint="Could not choose a best candidate function. "
                                "You might need to add explicit type casts.")
    if not a.type.is_integer:
        raise no_function(func.value, args)
    t = types.INT8 if a.type.kind is Kind.INT8 else types.INT4
    return Call(func, (coerce(a, t),), types.TEXT)


def _rule_numeric_root(func: Func, args) -> ex.Expr:
    """Func.NUMERIC_ROOT (internal): a numeric's root in its own type."""
    if len(args) != 1 or not args[0].type.is_numeric:
        raise no_function(func.value, args)
    return Call(func, (args[0],), args[0].type)


def _rule_variadic(func: Func, args) -> ex.Expr:
    if not args or (func is Func.NULLIF and len(args) != 2):
        raise no_function(func.value, args)
    strings = all(a.type.is_string or is_unknown(a) for a in args)
    if func is Func.NULLIF and strings and not all(is_unknown(a) for a in args):
        return padded_bpchar.nullif(*args)
    out, t = unify(args, func.value.upper())
    return Call(func, tuple(out), t)


def _rule_num_nulls(func: Func, args) -> ex.Expr:
    """num_nulls / num_nonnulls(VARIADIC "any"): the number of arguments that are (not)
    NULL, as the sum of their IS [NOT] NULL tests (folded when constant)."""
    if not args:
        raise no_function(func.value, args)
    tests = [fold_constants(bind_cast(ex.IsNull(a, func is Func.NUM_NONNULLS), types.INT4))
             for a in args]
    total = tests[0]
    for t in tests[1:]:
        total = fold_constants(Call(Func.ADD, (total, t), types.INT4))
    return total


def _int_arg(func: Func, e: ex.Expr, args) -> ex.Expr:
    if is_unknown(e):
        return coerce(e, types.INT4)
    if not e.type.is_integer:
        raise no_function(func.value, args)
    return coerce(e, types.INT4)


# signatures of string functions: s = text, i = integer; optional trailing arguments in []
_STRING_SIGS = {
    Func.LOWER: ("s", types.TEXT), Func.UPPER: ("s", types.TEXT),
    Func.LENGTH: ("s", types.INT4), Func.OCTET_LENGTH: ("s", types.INT4),
    Func.SUBSTRING: ("si[i]", types.TEXT), Func.POSITION: ("ss", types.INT4),
    Func.REPLACE: ("sss", types.TEXT),
    Func.TRIM: ("s[s]", types.TEXT), Func.LTRIM: ("s[s]", types.TEXT),
    Func.RTRIM: ("s[s]", types.TEXT), Func.LEFT: ("si", types.TEXT),
    Func.RIGHT: ("si", types.TEXT), Func.STARTS_WITH: ("ss", types.BOOL),
    Func.REPEAT: ("si", types.TEXT), Func.REVERSE: ("s", types.TEXT),
    Func.LPAD: ("si[s]", types.TEXT), Func.RPAD: ("si[s]", types.TEXT),
    Func.SPLIT_PART: ("ssi", types.TEXT), Func.INITCAP: ("s", types.TEXT),
    Func.MD5: ("s", types.TEXT), Func.ASCII: ("s", types.INT4), Func.CHR: ("i", types.TEXT),
    Func.TRANSLATE: ("sss", types.TEXT), Func.UNISTR: ("s", types.TEXT),
}


def _rule_string(func: Func, args) -> ex.Expr:
    if binary_rules.takes_bytea(func, args):
        return binary_rules.rule_bytea(func, args)
    sig, result = _STRING_SIGS[func]
    required = sig.split("[")[0]
    kinds = sig.replace("[", "").replace("]", "")
    if not len(required) <= len(args) <= len(kinds):
        raise no_function(func.value, args)
    out = tuple((text_arg if k == "s" else _int_arg)(func, a, args) for k, a in zip(kinds, args))
    return Call(func, out, result)


def _rule_concat(func: Func, args) -> ex.Expr:
    """`||` casts a non-text side to text; concat() casts every argument. `||` with an
    array side is array_cat, array_append or array_prepend."""
    if func is Func.CONCAT:
        _arity(func, args, 2)
        a, b = args
        if json_rules.jsonb_concat(a, b):
            return json_rules.rule_concat(a, b)
        if binary_rules.bytea_operands(a, b):
            return binary_rules.rule_concat(a, b)
        if a.type.is_array or b.type.is_array:
            if (a.type.is_array or is_unknown(a)) and (b.type.is_array or is_unknown(b)):
                return array_rules.RULES[Func.ARRAY_CAT](Func.ARRAY_CAT, args)
            f = Func.ARRAY_APPEND if a.type.is_array else Func.ARRAY_PREPEND
            return array_rules.RULES[f](f, args)
        if not any(is_unknown(a) or a.type.is_string for a in args):
            raise no_operator(func, args)
    elif not args:
        raise no_function("concat", args)
    elif func is Func.CONCAT_WS:
        if len(args) < 2:  # the separator and at least one VARIADIC argument
            raise no_function(func.value, args)
        rest = _rule_concat(Func.CONCAT_FN, args[1:])
        return Call(func, (text_arg(func, args[0], args),) + rest.args, types.TEXT)
    out = tuple(coerce(a, types.TEXT) if is_unknown(a) else _output(a)
                if func is Func.CONCAT_FN else bind_cast(a, types.TEXT) for a in args)
    return Call(func, out, types.TEXT)


def _output(a: ex.Expr) -> ex.Expr:
    """An argument of concat() / concat_ws() as text: they print with output functions (a
    char(n) padded to n)."""
    if a.type.kind is Kind.BOOL:
        return _bool_output(a)
    return bpchar_padded(a) if a.type.kind is Kind.CHAR else bind_cast(a, types.TEXT)


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
_ZONE_FIELDS = ("timezone", "timezone_hour", "timezone_minute")
_TIME_FIELDS = ("hour", "minute", "second", "milliseconds", "microseconds")
_INTERVAL_FIELDS = ("year", "month", "day", "hour", "minute", "second", "milliseconds",
                    "microseconds", "epoch", "quarter", "decade", "century", "millennium")
TRUNC_FIELDS = ("microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
                "month", "quarter", "year", "decade", "century", "millennium")


def date_trunc(f: Literal, x: ex.Expr, zone) -> ex.Expr:
    """date_trunc(f, x) (f a constant field name as written); a timestamptz is truncated on
    `zone`'s wall clock (None: UTC's), the session's or date_trunc(f, x, zone)'s."""
    k = x.type.kind
    if k is Kind.TIMETZ:  # (no implicit cast makes it an interval or a timestamp)
        raise no_function("date_trunc", (f, x))
    name = field_name(f.value)
    if k in (Kind.INTERVAL, Kind.TIME):  # a time is truncated as the interval it casts to
        if name not in TRUNC_FIELDS or name == "week":
            raise _unit_error(f.value, types.INTERVAL, name == "week")
        return Call(Func.DATE_TRUNC, (Literal(name, types.TEXT), coerce(x, types.INTERVAL)),
                    types.INTERVAL)
    if name not in TRUNC_FIELDS:
        raise _unit_error(f.value, x.type, False)
    field = Literal(name, types.TEXT)
    # PostgreSQL has no date_trunc(date): the date becomes timestamptz.
    t = types.TIMESTAMPTZ if k is Kind.DATE else x.type
    x = coerce(x, t)
    if t.kind is Kind.TIMESTAMPTZ and zone is not None:
        return zone_rules.date_trunc(field, x, zone)
    return Call(Func.DATE_TRUNC, (field, x), t)


def _rule_datetime(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    f, x = args
    if isinstance(f, Literal) and f.value is None and (is_unknown(f) or f.type.is_string):
        # a NULL field: NULL of the type the call has (the function is strict)
        typed = _rule_datetime(func, [Literal("day", types.TEXT), x])
        return Literal(None, typed.type)
    if not (isinstance(f, Literal) and isinstance(f.value, str)):
        if func in (Func.DATE_PART, Func.DATE_TRUNC) and f.type.is_string:
            raise errors.FeatureNotSupported(f"{func.value} needs a constant field name")
        raise no_function(func.value, args)
    name = field_name(f.value)
    if is_unknown(x):  # a timestamp, a timestamptz, an interval, ...: PostgreSQL won't pick
        which = "pg_catalog.extract" if func is Func.EXTRACT else func.value
        first = "unknown" if func is Func.EXTRACT else type_name(f)
        raise errors.QueryError(f"function {which}({first}, unknown) is not unique", "42725")
    k = x.type.kind
    if k not in TEMPORAL + (Kind.INTERVAL, Kind.TIME, Kind.TIMETZ):
        raise no_function(func.value, args)
    field = Literal(name, types.TEXT)
    if func is Func.DATE_TRUNC:
        return date_trunc(f, x, zone_rules.zoned())
    if k is Kind.TIMESTAMPTZ and name in _ZONE_FIELDS:
        return _zone_field(func, name, x)
    ok = _INTERVAL_FIELDS if k is Kind.INTERVAL else _EXTRACT
    if name not in ok:  # (an interval has no day of week, but 'dow' is a unit)
        raise _unit_error(f.value, x.type,
                          k is Kind.INTERVAL and (name in _EXTRACT or name in _ZONE_FIELDS))
    if k in (Kind.TIME, Kind.TIMETZ) and name not in _TIME_FIELDS + ("epoch",):
        raise _unit_error(f.value, x.type, True)
    zone = zone_rules.zoned() if k is Kind.TIMESTAMPTZ and name != "epoch" else None
    if zone is not None:  # the fields of the wall clock in the session's zone
        x, k = zone_rules.to_local(x, zone), Kind.TIMESTAMP
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


def _zone_field(func: Func, name: str, x: ex.Expr) -> ex.Expr:
    """EXTRACT(timezone[_hour|_minute] FROM timestamptz): the session zone's UTC offset
    at x (seconds east), the difference of the wall clock's and the instant's epochs;
    its hours and minutes truncated toward zero, as PostgreSQL's C division."""
    zone = session_zone()
    epoch = Literal("epoch", types.TEXT)
    local = _rule_datetime(Func.EXTRACT, [epoch, zone_rules.to_local(x, zone)])
    offset = coerce(_rule_arith(Func.SUB, [local, _rule_datetime(Func.EXTRACT, [epoch, x])]),
                    types.INT4)
    if name == "timezone_hour":
        offset = _rule_arith(Func.DIV, [offset, Literal(3600, types.INT4)])
    elif name == "timezone_minute":
        minutes = _rule_arith(Func.DIV, [offset, Literal(60, types.INT4)])
        offset = _rule_arith(Func.MOD, [minutes, Literal(60, types.INT4)])
    return coerce(offset, types.FLOAT8 if func is Func.DATE_PART else types.numeric(6, 0))


def _unit_error(unit: str, t: SqlType, known: bool) -> errors.QueryError:
    unit = unit.lower()  # (PostgreSQL names the unit as it looked it up)
    if known:
        return errors.FeatureNotSupported(f'unit "{unit}" not supported for type {t}')
    return errors.InvalidParameterValue(f'unit "{unit}" not recognized for type {t}')


def _rule_isfinite(func: Func, args) -> ex.Expr:
    _arity(func, args, 1)
    (x,) = args
    if is_unknown(x):
        raise not_unique_function(func, args)
    if x.type.kind not in TEMPORAL + (Kind.INTERVAL,):
        raise no_function(func.value, args)
    return Call(func, (x,), types.BOOL)


def not_unique_function(func: Func, args) -> errors.QueryError:
    return errors.QueryError(f"function {func.value}(unknown) is not unique", "42725")


def _rule_now(func: Func, args) -> ex.Expr:
    _arity(func, args, 0)
    return Call(func, (), types.TIMESTAMPTZ)


RULES = {
    **{f: _rule_arith for f in _ARITH},
    Func.NUMERIC_QUOTIENT_AT: _rule_quotient_at,
    **{f: _rule_compare for f in _COMPARE},
    Func.AND: _rule_bool, Func.OR: _rule_bool, Func.NOT: _rule_bool,
    Func.NEG: _rule_sign, Func.ABS: _rule_sign,
    **{f: _rule_bitwise for f in (Func.BIT_AND, Func.BIT_OR, Func.BIT_XOR, Func.BIT_NOT,
                                  Func.SHIFT_LEFT, Func.SHIFT_RIGHT)},
    Func.ROUND: _rule_rounding, Func.TRUNC: _rule_rounding, Func.FLOOR: _rule_rounding,
    Func.CEIL: _rule_rounding,
    **{f: _rule_numeric_or_float for f in (Func.SQRT, Func.LN, Func.EXP, Func.POWER)},
    **math_rules.RULES,
    **numeric_scale.RULES,
    **{f: _rule_float_math for f in (Func.CBRT, Func.SIN, Func.COS, Func.TAN, Func.ASIN,
                                     Func.ACOS, Func.ATAN, Func.ATAN2)},
    Func.SIGN: _rule_sign_fn, Func.GCD: _rule_gcd, Func.LCM: _rule_gcd,
    Func.TO_HEX: _rule_to_hex, Func.NUMERIC_ROOT: _rule_numeric_root,
    Func.COALESCE: _rule_variadic, Func.NULLIF: _rule_variadic,
    Func.NUM_NULLS: _rule_num_nulls, Func.NUM_NONNULLS: _rule_num_nulls,
    Func.GREATEST: _rule_variadic, Func.LEAST: _rule_variadic,
    **{f: _rule_string for f in _STRING_SIGS},
    Func.CONCAT: _rule_concat, Func.CONCAT_FN: _rule_concat, Func.CONCAT_WS: _rule_concat,
    Func.EXTRACT: _rule_datetime, Func.DATE_PART: _rule_datetime,
    Func.DATE_TRUNC: _rule_datetime, Func.NOW: _rule_now, **datetime_rules.RULES,
    Func.ISFINITE: _rule_isfinite,
    **array_rules.RULES,
    **interval_rules.RULES,
    **numeric_scale_rules.RULES,
    **format_rules.RULES,
    **regex_rules.RULES,
    **binary_rules.RULES,
}


def agg_result_type(func: ex.AggFunc, t: types.SqlType) -> types.SqlType:
    """Result types as PostgreSQL's: sum(int4) bigint, sum(int8) numeric, avg(int) numeric."""
    if func in (ex.AggFunc.COUNT, ex.AggFunc.COUNT_STAR):
        return types.INT8
    if t.is_dynamic:  # sum/avg/min/max are bound over others (planner/numeric_aggregates.py)
        raise errors.FeatureNotSupported(
            f"{func.value}() of an unconstrained numeric (each value's own scale) here")
    if func is ex.AggFunc.ARRAY_AGG:
        return types.array_of(types.TEXT if t.kind is types.Kind.UNKNOWN else t)
    if func in (ex.AggFunc.MIN, ex.AggFunc.MAX):
        if t.kind is types.Kind.UNKNOWN:
            return types.TEXT
        return t
    if t.kind is types.Kind.INTERVAL:  # as aggregates: planner/interval_aggregates.py
        raise errors.FeatureNotSupported(f"{func.value}(interval) here")
    if not (t.is_number or t.kind is types.Kind.UNKNOWN):
        raise errors.UndefinedFunction(f"function {func.value}({t}) does not exist")
    if func is ex.AggFunc.SUM:
        if t.kind in (types.Kind.INT2, types.Kind.INT4):
            return types.INT8
        if t.kind is types.Kind.INT8:
            return types.numeric(38, 0)
        if t.is_numeric:
            return types.numeric(38, t.scale)
        return t if t.is_float else types.FLOAT8
    # AVG
    if t.is_float:
        return types.FLOAT8
    scale = max(t.scale if t.is_numeric else 0, types.NUMERIC_DEFAULT_SCALE)
    return types.numeric(38, scale)
