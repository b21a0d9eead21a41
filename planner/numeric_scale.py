"""scale(), min_scale() and trim_scale() of numerics, PostgreSQL 15's.

A constrained numeric(p, s) has display scale s in every value, an unconstrained one its
own per value (planner/types.py `dynamic`): scale() reads it, trim_scale() gives each
value the fewest decimal places that hold it (min_scale(), which depends on the value
alone), as an unconstrained numeric.
"""

from __future__ import annotations

from decimal import Decimal

from planner import types
from planner import expr as ex
from planner.coercion import adopt, is_unknown, no_function
from planner.expr import Call, Func, Literal
from planner.math_rules import display_scale
from planner.values import DEC, min_scale_of, numeric_type_of


def _argument(func: Func, args) -> ex.Expr:
    """The one numeric argument: integers are numerics of scale 0; floats are 42883
    (float8 -> numeric is no implicit cast)."""
    if len(args) != 1:
        raise no_function(func.value, args)
    a = adopt(args[0], types.numeric(None, 0)) if is_unknown(args[0]) else args[0]
    if not (a.type.is_integer or a.type.is_numeric):
        raise no_function(func.value, args)
    return a


def rule_scale(func: Func, args) -> ex.Expr:
    """scale(x): x's display scale, int4."""
    a = _argument(func, args)
    if isinstance(a, Literal):
        return Literal(None if a.value is None else display_scale(a), types.INT4)
    if a.type.is_dynamic:
        return Call(Func.NUMERIC_DSCALE, (a,), types.INT4)
    return ex.Case(((ex.IsNull(a, False), Literal(None, types.INT4)),),
                   Literal(a.type.scale if a.type.is_numeric else 0, types.INT4), types.INT4)


def rule_min_scale(func: Func, args) -> ex.Expr:
    """min_scale(x), int4."""
    a = _argument(func, args)
    if isinstance(a, Literal):
        return Literal(None if a.value is None else min_scale_of(a.value), types.INT4)
    return Call(func, (_value(a),), types.INT4)


def _value(a: ex.Expr) -> ex.Expr:
    """A numeric's values without their display scales, as decimal128(38, S)."""
    if a.type.is_dynamic:
        return Call(Func.NUMERIC_VALUE, (a,), types.numeric(None, a.type.scale))
    return a


def rule_trim_scale(func: Func, args) -> ex.Expr:
    """trim_scale(x): x at its min_scale (a constant's type follows its value)."""
    a = _argument(func, args)
    if not isinstance(a, Literal):
        if a.type.is_integer:
            return ex.Cast(a, types.numeric(None, 0))
        value = _value(a) if a.type.is_dynamic else ex.Cast(a, types.numeric(None, a.type.scale))
        return Call(Func.NUMERIC_WITH_SCALE, (value, Call(Func.MIN_SCALE, (value,), types.INT4)),
                    types.dynamic_numeric(a.type.scale))
    if a.value is None:
        return Literal(None, types.numeric(None, 0))
    value = DEC.quantize(a.value, Decimal(1).scaleb(-min_scale_of(a.value)))
    value = DEC.add(value, 0)  # no negative zero
    return Literal(value, numeric_type_of(value))


RULES = {Func.SCALE: rule_scale, Func.MIN_SCALE: rule_min_scale,
         Func.TRIM_SCALE: rule_trim_scale}
