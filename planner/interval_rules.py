"""Typing rules of the internal functions that interval aggregates are bound over
(planner/interval_aggregates.py); no query spells them, so their argument types are fixed."""

from __future__ import annotations

from planner import types
from planner import expr as ex
from planner.coercion import no_function
from planner.expr import Call, Func
from planner.types import Kind

PARTS = ("months", "days", "micros")


def _rule(func: Func, args) -> ex.Expr:
    kinds = tuple(a.type.kind for a in args)
    if func is Func.INTERVAL_PART and kinds[:1] == (Kind.INTERVAL,) and len(args) == 2 \
            and isinstance(args[1], ex.Literal) and args[1].value in PARTS:
        return Call(func, tuple(args), types.INT8)
    if func is Func.INTERVAL_FROM_SUMS and len(args) == 3 and all(
            a.type.is_integer or a.type.is_numeric for a in args):
        return Call(func, tuple(args), types.INTERVAL)
    if func is Func.INTERVAL_KEYED and kinds == (Kind.INTERVAL,):
        return Call(func, tuple(args), types.SqlType(Kind.BYTEA))
    if func is Func.INTERVAL_UNKEYED and kinds == (Kind.BYTEA,):
        return Call(func, tuple(args), types.INTERVAL)
    raise no_function(func.value, args)


RULES = {f: _rule for f in (Func.INTERVAL_PART, Func.INTERVAL_FROM_SUMS, Func.INTERVAL_KEYED,
                            Func.INTERVAL_UNKEYED)}
