"""Typing rules of log, log10, ln, exp, sqrt and power over numerics, div, factorial,
width_bucket, random() and setseed(), as PostgreSQL 15 resolves them.

PostgreSQL has numeric and float8 versions of ln, log, exp, sqrt and power: an integer
argument resolves to float8 (the preferred type), a numeric one to numeric. The numeric
versions pick their result's scale per value (planner/numeric_math.py), which a batch
column keeps as an unconstrained numeric: folded here over constants, computed per distinct
value over columns (segment/kernels/expr_numeric_math.py).
log(b, x) exists for numerics only. Batch kernels: segment/kernels/expr_math.py.
"""

from __future__ import annotations

from decimal import Decimal

from planner import errors, numeric_math, types
from planner import expr as ex
from planner.coercion import adopt, as_numeric, bind_cast, coerce, common_type, int_digits, \
    is_unknown, no_function, numeric_type
from planner.expr import Call, Func, Literal
from planner.fold import fold_constants
from planner.session_info import SESSION_INFO
from planner.temporal import TEMPORAL
from planner.types import Kind
from planner.values import numeric_type_of


def _number(func_name: str, a: ex.Expr, args, default: types.SqlType) -> ex.Expr:
    a = adopt(a, default) if is_unknown(a) else a
    if not a.type.is_number:
        raise no_function(func_name, args)
    return a


def _numeric_args(func_name: str, args) -> list[ex.Expr]:
    """Arguments of a numeric-only signature: integers and numerics (floats are 42883:
    float8 -> numeric is no implicit cast)."""
    out = []
    for a in args:
        a = adopt(a, types.numeric(None, 0)) if is_unknown(a) else a
        if not (a.type.is_integer or a.type.is_numeric):
            raise no_function(func_name, args)
        out.append(as_numeric(a))
    return out


def _wants_numeric(args) -> bool:
    """PostgreSQL's choice between f(float8...) and f(numeric...): numeric when an argument
    is numeric and none is a float."""
    return any(a.type.is_numeric for a in args) and not any(a.type.is_float for a in args)


def _constant_numeric(func: Func, args, compute) -> ex.Expr:
    """A numeric function of per-value scale: folded over constants; over columns a Call
    typed as an unconstrained numeric, whose kernel (segment/kernels/expr_numeric_math.py)
    gives each value its own scale. power holds 18 integer digits beside 20 fractional
    ones, the others 14 beside 24 (types.DIVISION_SCALE: exp of up to 32)."""
    if not all(isinstance(a, Literal) for a in args):
        storage = 20 if func is Func.POWER else types.DIVISION_SCALE
        return Call(func, tuple(_as_decimal(a) for a in args), types.dynamic_numeric(storage))
    if any(a.value is None for a in args):
        return Literal(None, types.numeric(None, numeric_math.MIN_SIG_DIGITS))
    value = compute(*[x for a in args for x in (a.value, display_scale(a))])
    return Literal(value, numeric_type_of(value))


def _as_decimal(a: ex.Expr) -> ex.Expr:
    """A numeric argument as the kernel reads it: an unconstrained numeric as it is, others
    as decimal128 at their own scale (a constant at its display scale)."""
    if a.type.is_dynamic:
        return a
    if isinstance(a, Literal):
        return Literal(a.value, types.numeric(None, 0 if a.value is None else display_scale(a)))
    return a if a.type.precision is None else bind_cast(a, types.numeric(None, a.type.scale))


def display_scale(a: Literal) -> int:
    """A constant's display scale as PostgreSQL keeps it: its type's, or the digits it
    was written with ('2.50'::numeric has 2)."""
    written = -a.value.as_tuple().exponent if isinstance(a.value, Decimal) else 0
    return max(a.type.scale or 0, written, 0)


_UNARY = {Func.LN: numeric_math.ln, Func.EXP: numeric_math.exp, Func.SQRT: numeric_math.sqrt}


def rule_unary(func: Func, args) -> ex.Expr | None:
    """ln, exp and sqrt of a numeric: numeric; None for the float8 versions
    (typing_rules' float math)."""
    if len(args) == 1 and _wants_numeric(args):
        return _constant_numeric(func, args, _UNARY[func])
    return None


def rule_power(func: Func, args) -> ex.Expr | None:
    """power(numeric, numeric) and numeric ^ numeric; None for the float8 version."""
    if len(args) == 2 and _wants_numeric(args):
        return _constant_numeric(Func.POWER, _numeric_args("power", args), numeric_math.power)
    return None


def rule_log(func: Func, args) -> ex.Expr:
    """log(x) and log10(x): float8 or numeric (log(10, x)); log(b, x): numeric only."""
    if func is Func.LOG and len(args) == 2:
        return _constant_numeric(Func.LOG, _numeric_args("log", args), numeric_math.log)
    if len(args) != 1:
        raise no_function(func.value, args)
    x = _number(func.value, args[0], args, types.FLOAT8)
    if x.type.is_numeric:
        ten = Literal(Decimal(10), types.numeric(2, 0))
        return _constant_numeric(func, [ten, x], numeric_math.log)
    return Call(func, (coerce(x, types.FLOAT8),), types.FLOAT8)


def rule_div(func: Func, args) -> ex.Expr:
    """div(a, b): the quotient of numerics truncated toward zero, at scale 0."""
    if len(args) != 2:
        raise no_function("div", args)
    a, b = _numeric_args("div", args)
    ia = int_digits(a.type)
    return Call(func, (a, b), numeric_type(None if ia is None else ia + b.type.scale, 0))


def rule_factorial(func: Func, args) -> ex.Expr:
    """factorial(int8) -> numeric."""
    if len(args) != 1:
        raise no_function(func.value, args)
    x = adopt(args[0], types.INT8) if is_unknown(args[0]) else args[0]
    if not x.type.is_integer:
        raise no_function(func.value, args)
    return Call(func, (coerce(x, types.INT8),), types.numeric(None, 0))


def rule_width_bucket(func: Func, args) -> ex.Expr:
    """width_bucket(op, low, high, count int4) over float8 or numeric, and
    width_bucket(op, thresholds) of numbers, dates and timestamps or text (in the C
    collation's order): op and the array's elements in their common type."""
    if len(args) == 2:
        return _rule_width_bucket_array(func, args)
    if len(args) != 4:
        raise no_function(func.value, args)
    bounds = [adopt(a, types.FLOAT8) if is_unknown(a) else a for a in args[:3]]
    count = adopt(args[3], types.INT4) if is_unknown(args[3]) else args[3]
    if not all(a.type.is_number for a in bounds) or count.type.kind not in (Kind.INT2, Kind.INT4):
        raise no_function(func.value, args)
    if _wants_numeric(bounds):
        bounds = [as_numeric(a) for a in bounds]
    else:
        bounds = [coerce(a, types.FLOAT8) for a in bounds]
    return Call(func, tuple(bounds) + (coerce(count, types.INT4),), types.INT4)


def _rule_width_bucket_array(func: Func, args) -> ex.Expr:
    op, arr = args
    if not arr.type.is_array:
        raise no_function(func.value, args)
    elem = arr.type.elem
    op = adopt(op, elem) if is_unknown(op) else op
    kinds = {op.type.kind, elem.kind}
    if not ((op.type.is_number and elem.is_number) or kinds <= set(TEMPORAL)
            or kinds <= {Kind.TEXT, Kind.VARCHAR}):
        raise errors.FeatureNotSupported(
            "width_bucket(operand, thresholds) of other than numbers, dates and "
            "timestamps, or text")
    t = common_type(op.type, elem, "width_bucket")
    if t.is_numeric:  # one scale holding both exactly
        t = types.numeric(None, max(x.scale for x in (op.type, elem) if x.is_numeric))
    arr = arr if elem == t else bind_cast(arr, types.array_of(t))
    return Call(func, (coerce(op, t), arr), types.INT4)


def bind_setseed(args) -> ex.Expr:
    """setseed(x), x in [-1, 1] (22023 outside): the random() calls bound after it in the
    session draw repeatable sequences (session_info.RandomSeed; not PostgreSQL's numbers,
    whose sequence is its own). Done when the statement is bound, as set_config() is;
    the value is an empty text (PostgreSQL's void prints as nothing)."""
    if len(args) != 1:
        raise no_function("setseed", args)
    x = _number("setseed", args[0], args, types.FLOAT8)
    x = fold_constants(coerce(x, types.FLOAT8))
    if not isinstance(x, Literal):
        raise errors.FeatureNotSupported("setseed() of a value that is not a constant")
    if x.value is None:
        return Literal(None, types.TEXT)
    if not -1.0 <= x.value <= 1.0:
        raise errors.InvalidParameterValue(
            f"setseed parameter {x.value:g} is out of allowed range [-1,1]")
    state = SESSION_INFO.get().get("random")
    if state is None:
        raise errors.FeatureNotSupported("setseed() outside a session")
    state.set(x.value)
    return Literal("", types.TEXT)


def rule_random(func: Func, args) -> ex.Expr:
    """random(): a new value per row; after setseed(), the call carries its seed and
    number (int8 Literals, session_info.RandomSeed) from which segments draw a
    repeatable sequence."""
    if args:
        raise no_function(func.value, args)
    state = SESSION_INFO.get().get("random")
    seeded = state.next_call() if state is not None else None
    return Call(func, tuple(Literal(v, types.INT8) for v in seeded or ()), types.FLOAT8)


RULES = {
    Func.LOG: rule_log, Func.LOG10: rule_log, Func.DIV_INT: rule_div,
    Func.FACTORIAL: rule_factorial, Func.WIDTH_BUCKET: rule_width_bucket,
    Func.RANDOM: rule_random,
}
