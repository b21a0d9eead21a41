"""sum, avg, min and max keeping PostgreSQL's display scales, as expressions over the
aggregates raympp has, so that they distribute in two phases as those do.

An unconstrained numeric's values each carry a display scale (planner/types.py
`dynamic_numeric`). sum(x) is the exact sum of the values with the largest display scale
of the rows (PostgreSQL's add_var keeps the larger dscale): Func.NUMERIC_WITH_SCALE of
sum(NUMERIC_VALUE(x)) and max(NUMERIC_DSCALE(x)). min and max take bytes that order as
the value and hold its scale (NUMERIC_KEYED), turned back (NUMERIC_UNKEYED); of equal
values of different scales (1.5, 1.50) one is returned, as in PostgreSQL, where which one
depends on the order rows arrive in.

avg of an integer or numeric is PostgreSQL's numeric_avg: sum / count as numeric division,
whose scale select_div_scale picks per value (the division is dynamic, typing_rules.py);
NULL over no rows.
"""

from __future__ import annotations

from sqlglot import exp

from planner import types
from planner import expr as ex
from planner.coercion import int_digits
from planner.interval_aggregates import NODES, argument


def applies(tree: exp.Expression, t) -> bool:
    """Whether `tree`, whose argument_type is `t`, is sum/min/max over an unconstrained
    numeric, or avg over an integer or numeric."""
    if t is None:
        return False
    if isinstance(tree, exp.Avg):
        return t.is_integer or t.is_numeric
    return t.is_dynamic


def _call(func: ex.Func, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=func.value, expressions=list(args))


def rewrite(tree: exp.Expression, bind) -> exp.Expression:
    """The expression over plain aggregates that `tree` (see `applies`) equals."""
    x = exp.Paren(this=argument(tree).copy())
    distinct = isinstance(tree.this, exp.Distinct)

    def over(agg, arg):
        return agg(this=exp.Distinct(expressions=[arg]) if distinct else arg)

    if isinstance(tree, (exp.Min, exp.Max)):  # DISTINCT changes neither
        agg = exp.Min if isinstance(tree, exp.Min) else exp.Max
        scale = exp.Literal.number(bind(argument(tree)).type.scale)
        return _call(ex.Func.NUMERIC_UNKEYED, agg(this=_call(ex.Func.NUMERIC_KEYED, x.copy())),
                     scale)
    if isinstance(tree, exp.Sum):
        return _call(ex.Func.NUMERIC_WITH_SCALE,
                     over(exp.Sum, _call(ex.Func.NUMERIC_VALUE, x.copy())),
                     exp.Max(this=_call(ex.Func.NUMERIC_DSCALE, x.copy())))
    total = exp.Cast(this=over(exp.Sum, x.copy()), to=exp.DataType.build("numeric"))
    count = exp.Nullif(this=over(exp.Count, x.copy()), expression=exp.Literal.number(0))
    scale = avg_storage_scale(bind(argument(tree)).type)
    return _call(ex.Func.NUMERIC_QUOTIENT_AT, total, count, exp.Literal.number(scale))


def avg_storage_scale(t: types.SqlType) -> int:
    """The storage scale of avg(x)'s quotient for x of type t: the fractional digits that
    decimal128's 38 leave beside the integer digits an average of t can have (it lies
    between the least and the greatest value), so that avg(int8) holds every int8 (19
    fractional digits), at most 28 (avg(int4)); DIVISION_SCALE where t does not bound
    them (unconstrained)."""
    digits = None if t.is_dynamic else int_digits(t)
    if digits is None or 38 - digits < 16:  # 16: NUMERIC_MIN_SIG_DIGITS
        return max(t.scale or 0, types.DIVISION_SCALE)
    return max(min(38 - digits, 28), t.scale or 0)
