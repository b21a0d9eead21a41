"""sum, avg, min and max of intervals as expressions over the aggregates raympp has, so
that they distribute in two phases as those do.

PostgreSQL's sum(interval) adds with interval_pl: months, days and microseconds apart,
never carried into each other. So sum(x) is the interval of the exact sums of the three
parts (Func.INTERVAL_FROM_SUMS, 22008 when a part leaves its range), NULL over no rows.
avg(x) is PostgreSQL's interval_avg: that sum divided by the count with interval_div
(interval / float8, which spills fractional months into days and days into time).

min and max order by the span (a month 30 days): each is min/max over bytes that order as
the interval and hold it (Func.INTERVAL_KEYED), turned back into the interval. Of equal
spans ('1 mon', '30 days') one is returned, as in PostgreSQL, where which one depends on
the order rows arrive in. sum(DISTINCT) and avg(DISTINCT) over intervals are 0A000.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors
from planner import expr as ex
from planner.types import Kind

NODES = (exp.Sum, exp.Avg, exp.Min, exp.Max)


def argument(tree: exp.Expression) -> exp.Expression | None:
    """The argument of one of NODES (under a one-argument DISTINCT), or None."""
    inner = tree.this
    if isinstance(inner, exp.Distinct):
        inner = inner.expressions[0] if len(inner.expressions) == 1 else None
    return inner


def argument_type(tree: exp.Expression, bind):
    """The type of the argument of one of NODES as `bind` binds it; None for another node
    or an argument that does not bind (the aggregate's own binding reports it)."""
    if not isinstance(tree, NODES):
        return None
    inner = argument(tree)
    if inner is None:
        return None
    try:
        return bind(inner).type
    except errors.QueryError:
        return None


def applies(t) -> bool:
    """Whether an aggregate whose argument_type is `t` is sum/avg/min/max over an
    interval."""
    return t is not None and t.kind is Kind.INTERVAL


def _call(func: ex.Func, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=func.value, expressions=list(args))


def rewrite(tree: exp.Expression) -> exp.Expression:
    """The expression over plain aggregates that `tree` (see `applies`) equals."""
    x = exp.Paren(this=argument(tree).copy())
    if isinstance(tree, (exp.Min, exp.Max)):  # DISTINCT changes neither
        agg = exp.Min if isinstance(tree, exp.Min) else exp.Max
        return _call(ex.Func.INTERVAL_UNKEYED,
                     agg(this=_call(ex.Func.INTERVAL_KEYED, x.copy())))
    name = "sum" if isinstance(tree, exp.Sum) else "avg"
    if isinstance(tree.this, exp.Distinct):
        raise errors.FeatureNotSupported(f"{name}(DISTINCT interval)")
    total = _call(ex.Func.INTERVAL_FROM_SUMS, *(
        exp.Sum(this=_call(ex.Func.INTERVAL_PART, x.copy(), exp.Literal.string(part)))
        for part in ("months", "days", "micros")))
    if isinstance(tree, exp.Sum):
        return total
    count = exp.Nullif(this=exp.Count(this=x.copy()), expression=exp.Literal.number(0))
    return exp.Div(this=total, expression=exp.Cast(this=count,
                                                    to=exp.DataType.build("float8")))
