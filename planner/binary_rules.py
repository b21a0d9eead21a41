"""Typing rules of the bytea and uuid functions, as PostgreSQL 15 resolves them.

length, octet_length, substring, md5, position, btrim/ltrim/rtrim, || and LIKE have bytea
versions next to their text ones: typing_rules hands a call whose (first) argument is
bytea to `rule_bytea` (|| and LIKE: `bytea_operands`), which binds the ?bytea_ Funcs.
The functions only bytea has (sha224..sha512, encode, decode, get_byte, set_byte,
get_bit, set_bit, convert_to, convert_from) and gen_random_uuid() are RULES here. An
unknown literal where a bytea is expected is read as bytea ('\\x01', 'abc'), as
PostgreSQL does.
The kernels are segment/kernels/expr_binary.py's, the folding planner/fold.py's over
planner/binary_values.py.
"""

from __future__ import annotations

from planner import binary_values, errors, types
from planner import expr as ex
from planner.coercion import coerce, is_unknown, no_function
from planner.expr import Call, Func, Literal
from planner.fold import fold_constants
from planner.types import Kind

_BYTEA_FORMS = {Func.LENGTH: Func.BYTEA_LENGTH, Func.OCTET_LENGTH: Func.BYTEA_LENGTH,
                Func.SUBSTRING: Func.BYTEA_SUBSTRING, Func.MD5: Func.BYTEA_MD5}


# Text functions of two arguments whose bytea versions take two bytea: (Func, result)
_PAIRS = {Func.POSITION: (Func.BYTEA_POSITION, types.INT4),
          Func.TRIM: (Func.BYTEA_TRIM, types.BYTEA), Func.LTRIM: (Func.BYTEA_LTRIM, types.BYTEA),
          Func.RTRIM: (Func.BYTEA_RTRIM, types.BYTEA)}


def takes_bytea(func: Func, args) -> bool:
    """Whether a text function's call is its bytea version (its first argument is bytea;
    any argument for position and the trims)."""
    if func in _PAIRS:
        return any(a.type.kind is Kind.BYTEA for a in args)
    return func in _BYTEA_FORMS and bool(args) and args[0].type.kind is Kind.BYTEA


def rule_bytea(func: Func, args) -> ex.Expr:
    """length/octet_length(bytea) int4, substring(bytea, int[, int]) bytea, md5(bytea)
    text, position(bytea in bytea) int4, btrim/ltrim/rtrim(bytea, bytea) bytea."""
    if func in _PAIRS:
        f, result = _PAIRS[func]
        if len(args) != 2:
            raise no_function(func.value, args)
        return Call(f, tuple(_arg(func, a, types.BYTEA, args) for a in args), result)
    f = _BYTEA_FORMS[func]
    if f is Func.BYTEA_SUBSTRING:
        if len(args) not in (2, 3):
            raise no_function(func.value, args)
        return Call(f, (args[0],) + tuple(_arg(func, a, types.INT4, args) for a in args[1:]),
                    types.BYTEA)
    if len(args) != 1:
        raise no_function(func.value, args)
    return Call(f, (args[0],), types.TEXT if f is Func.BYTEA_MD5 else types.INT4)


def bytea_operands(a: ex.Expr, b: ex.Expr) -> bool:
    """Whether `a || b` (`a LIKE b`) is bytea's: a bytea side and the other bytea or
    unknown."""
    return (a.type.kind is Kind.BYTEA or b.type.kind is Kind.BYTEA) and all(
        x.type.kind is Kind.BYTEA or is_unknown(x) for x in (a, b))


def rule_concat(a: ex.Expr, b: ex.Expr) -> ex.Expr:
    return Call(Func.BYTEA_CONCAT, (coerce(a, types.BYTEA), coerce(b, types.BYTEA)),
                types.BYTEA)


# integer arguments: the integer types that widen to them implicitly
_WIDENS = {Kind.INT4: (Kind.INT2, Kind.INT4), Kind.INT8: (Kind.INT2, Kind.INT4, Kind.INT8)}


def _arg(func: Func, e: ex.Expr, t: types.SqlType, args) -> ex.Expr:
    """e as an argument of type t: an unknown literal reads as t, a narrower integer
    widens; anything else is no such function (42883)."""
    if is_unknown(e):
        return coerce(e, t)
    if e.type.kind in _WIDENS.get(t.kind, ()):
        return coerce(e, t)
    if t.kind is Kind.TEXT and e.type.is_string:
        return e
    if e.type.kind is not t.kind:
        raise no_function(func.value, args)
    return e


def _signature(*arg_types: types.SqlType, result: types.SqlType):
    def rule(func: Func, args) -> ex.Expr:
        if len(args) != len(arg_types):
            raise no_function(func.value, args)
        out = tuple(_arg(func, a, t, args) for a, t in zip(args, arg_types))
        return Call(func, out, result)
    return rule


def _rule_convert(func: Func, args) -> ex.Expr:
    """convert_to(text, name) / convert_from(bytea, name): the database's UTF8 only, and
    the encoding a constant (checked now)."""
    src = types.TEXT if func is Func.CONVERT_TO else types.BYTEA
    result = types.BYTEA if func is Func.CONVERT_TO else types.TEXT
    call = _signature(src, types.TEXT, result=result)(func, args)
    name = call.args[1]
    if not isinstance(name, Literal):
        raise errors.FeatureNotSupported(
            f"{func.value}() with an encoding that is not a constant")
    if name.value is not None:
        binary_values.encoding_check(name.value, func.value)
    return call


# Keys that rewritten aggregates take min/max of (planner/interval_aggregates.py,
# numeric_aggregates.py)
_KEYS = (Func.INTERVAL_KEYED, Func.NUMERIC_KEYED)


def check_min_max(name: str, arg: ex.Expr) -> None:
    """PostgreSQL 15 has no min/max of bytea or uuid (42883); the internal keys other
    aggregates are bound over are bytea too, and take them."""
    if arg.type.kind in types.BINARY_KINDS and not (
            isinstance(arg, ex.Call) and arg.func in _KEYS):
        raise errors.UndefinedFunction(f"function {name}({arg.type}) does not exist")


def rule_overlay(args) -> ex.Expr:
    """overlay(bytes placing sub from start [for count]) as PostgreSQL's byteaoverlay
    builds it: substring(bytes, 1, start - 1) || sub || substring(bytes, start + count),
    count defaulting to length(sub) (so start < 1 is 22011, an overflowing start + count
    22003, as there)."""
    if len(args) not in (3, 4):
        raise no_function("overlay", args)
    b, sub = (_arg(Func.OVERLAY, a, types.BYTEA, args) for a in args[:2])
    start = _arg(Func.OVERLAY, args[2], types.INT4, args)
    count = _arg(Func.OVERLAY, args[3], types.INT4, args) if len(args) == 4 else \
        Call(Func.BYTEA_LENGTH, (sub,), types.INT4)
    one = Literal(1, types.INT4)
    head = Call(Func.BYTEA_SUBSTRING, (b, one, Call(Func.SUB, (start, one), types.INT4)),
                types.BYTEA)
    tail = Call(Func.BYTEA_SUBSTRING, (b, Call(Func.ADD, (start, count), types.INT4)),
                types.BYTEA)
    return fold_constants(Call(Func.BYTEA_CONCAT, (
        Call(Func.BYTEA_CONCAT, (head, sub), types.BYTEA), tail), types.BYTEA))


def _rule_gen_random_uuid(func: Func, args) -> ex.Expr:
    if args:
        raise no_function(func.value, args)
    return Call(func, (), types.UUID)


RULES = {
    **{f: _signature(types.BYTEA, result=types.BYTEA)
       for f in (Func.SHA224, Func.SHA256, Func.SHA384, Func.SHA512)},
    Func.ENCODE: _signature(types.BYTEA, types.TEXT, result=types.TEXT),
    Func.DECODE: _signature(types.TEXT, types.TEXT, result=types.BYTEA),
    Func.GET_BYTE: _signature(types.BYTEA, types.INT4, result=types.INT4),
    Func.SET_BYTE: _signature(types.BYTEA, types.INT4, types.INT4, result=types.BYTEA),
    Func.GET_BIT: _signature(types.BYTEA, types.INT8, result=types.INT4),
    Func.SET_BIT: _signature(types.BYTEA, types.INT8, types.INT4, result=types.BYTEA),
    Func.CONVERT_TO: _rule_convert, Func.CONVERT_FROM: _rule_convert,
    Func.BYTEA_LIKE: _signature(types.BYTEA, types.BYTEA, result=types.BOOL),
    Func.GEN_RANDOM_UUID: _rule_gen_random_uuid,
}
