"""scale(), min_scale() and trim_scale() of numerics, PostgreSQL 15's.

raympp keeps one scale per numeric column (planner/types.py), not PostgreSQL's scale per
value, so what depends on a value's display scale is known only for constants (their own
scale) and integers (0): scale() and trim_scale() of other values are 0A000. min_scale()
depends on the value alone (the fewest decimal places that hold it: trailing zeros do not
count), so it is computed over columns too (segment/kernels/expr_math.py min_scale).
"""

from __future__ import annotations

from decimal import Decimal

from planner import errors, types
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


def _refused(name: str) -> errors.QueryError:
    return errors.FeatureNotSupported(
        f"{name}() of numeric values that are not constants (raympp keeps one scale per "
        "column, PostgreSQL one per value)")


def rule_scale(func: Func, args) -> ex.Expr:
    """scale(x): x's display scale, int4."""
    a = _argument(func, args)
    if isinstance(a, Literal):
        return Literal(None if a.value is None else display_scale(a), types.INT4)
    if a.type.is_integer:
        return ex.Case(((ex.IsNull(a, False), Literal(None, types.INT4)),),
                       Literal(0, types.INT4), types.INT4)
    raise _refused("scale")


def rule_min_scale(func: Func, args) -> ex.Expr:
    """min_scale(x), int4."""
    a = _argument(func, args)
    if isinstance(a, Literal):
        return Literal(None if a.value is None else min_scale_of(a.value), types.INT4)
    return Call(func, (a,), types.INT4)


def rule_trim_scale(func: Func, args) -> ex.Expr:
    """trim_scale(x): x at its min_scale (a constant's type follows its value)."""
    a = _argument(func, args)
    if not isinstance(a, Literal):
        if a.type.is_integer:
            return ex.Cast(a, types.numeric(None, 0))
        raise _refused("trim_scale")
    if a.value is None:
        return Literal(None, types.numeric(None, 0))
    value = DEC.quantize(a.value, Decimal(1).scaleb(-min_scale_of(a.value)))
    value = DEC.add(value, 0)  # no negative zero
    return Literal(value, numeric_type_of(value))


RULES = {Func.SCALE: rule_scale, Func.MIN_SCALE: rule_min_scale,
         Func.TRIM_SCALE: rule_trim_scale}
