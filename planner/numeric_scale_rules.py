"""Typing rules of the internal functions that aggregates over unconstrained numerics are
bound over (planner/numeric_aggregates.py); no query spells them, so their argument types
are fixed."""

from __future__ import annotations

from planner import types
from planner import expr as ex
from planner.coercion import no_function
from planner.expr import Call, Func
from planner.types import Kind


def _rule(func: Func, args) -> ex.Expr:
    t = args[0].type if args else None
    if func is Func.NUMERIC_VALUE and len(args) == 1 and t.is_dynamic:
        return Call(func, tuple(args), types.numeric(None, t.scale))
    if func is Func.NUMERIC_DSCALE and len(args) == 1 and t.is_dynamic:
        return Call(func, tuple(args), types.INT4)
    if func is Func.NUMERIC_WITH_SCALE and len(args) == 2 and t.is_numeric \
            and not t.is_dynamic and args[1].type.is_integer:
        return Call(func, tuple(args), types.dynamic_numeric(t.scale))
    if func is Func.NUMERIC_KEYED and len(args) == 1 and t.is_dynamic:
        return Call(func, tuple(args), types.SqlType(Kind.BYTEA))
    if func is Func.NUMERIC_UNKEYED and len(args) == 2 and t.kind is Kind.BYTEA \
            and isinstance(args[1], ex.Literal) and isinstance(args[1].value, int):
        return Call(func, tuple(args), types.dynamic_numeric(args[1].value))
    raise no_function(func.value, args)


RULES = {f: _rule for f in (Func.NUMERIC_VALUE, Func.NUMERIC_DSCALE, Func.NUMERIC_WITH_SCALE,
                            Func.NUMERIC_KEYED, Func.NUMERIC_UNKEYED)}
