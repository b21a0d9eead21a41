"""Aggregate FILTER (WHERE ...) and the ordered-set aggregates percentile_cont,
percentile_disc and mode(), as expressions over the aggregates raympp has, so that they
distribute as those do.

    agg(x) FILTER (WHERE c)   = agg(CASE WHEN c THEN x END)     (count(*): count(CASE ... 1))

which every aggregate that ignores NULL inputs answers alike (count, sum, avg, min, max,
bool_and/or, bit_and/or/xor, the statistics and regressions (both arguments), string_agg,
the percentiles: their sort key). array_agg and the json aggregates keep NULLs, so there

    array_agg(x ORDER BY o) FILTER (WHERE c)
        = ?list_filter(array_agg(x ORDER BY o), array_agg((c) IS TRUE ORDER BY o))

the elements of rows where c holds (one Aggregate keeps both arrays in the same order),
NULL where none does (segment/kernels/expr_list_agg.py); array_agg(DISTINCT x) FILTER
(WHERE c) is Func.LIST_DISTINCT of that over the arrays sorted by x. The hypothetical-set aggregates
take the condition into their counts (planner/hypothetical_aggregates.py).

    percentile_disc(f) WITHIN GROUP (ORDER BY x) = a[greatest(ceil(f * n), 1)]
    percentile_cont(f) WITHIN GROUP (ORDER BY x) = a[lo + 1] + (a[hi + 1] - a[lo + 1]) * (p - lo)

with a = array_agg(x ORDER BY x NULLS LAST) (x as float8 for percentile_cont), n = count(x),
p = f * (n - 1), lo = floor(p), hi = ceil(p): PostgreSQL's definitions, NULL over no
non-NULL input. The fraction must be a constant in [0, 1] (22003 otherwise, as
PostgreSQL). A constant array of fractions gives an array: Func.PERCENTILE_CONT_MULTI /
PERCENTILE_DISC_MULTI over the same sorted array (22003 for a fraction outside [0, 1]
only where the group has a non-NULL x, as PostgreSQL checks them). Fractions that are not
constant and interval inputs are 0A000.

    mode() WITHIN GROUP (ORDER BY x) = ?sorted_mode(array_agg(x ORDER BY x NULLS LAST))

the most frequent non-NULL element of the sorted array, the first of equally frequent
ones (segment/kernels/expr_list_sort.py).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from planner import (bitwise_aggregates, errors, expr as ex, regression_aggregates,
                     row_aggregates)
from planner.bind_array import mark_subscripts
from planner.sql_dialect import RaymppPostgres

_IGNORING_NULLS = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.LogicalAnd,
                   exp.LogicalOr, exp.Stddev, exp.StddevSamp, exp.StddevPop, exp.Variance,
                   exp.VariancePop, exp.GroupConcat) + tuple(bitwise_aggregates.NODES)
# Aggregates of (y, x) pairs that skip a pair with a NULL: both arguments are filtered.
_PAIRS = tuple(regression_aggregates.NODES)


def condition(tree: exp.Filter) -> exp.Expression:
    """The condition of a FILTER clause."""
    return tree.expression.this if isinstance(tree.expression, exp.Where) else tree.expression


def filtered(tree: exp.Filter) -> exp.Expression:
    """The aggregate of `tree` with its argument NULL where the FILTER condition is not
    true (array_agg: its array filtered by a second one of the condition's values)."""
    agg = tree.this.copy()
    cond = condition(tree)
    if isinstance(agg, exp.WithinGroup) and isinstance(agg.expression, exp.Order):
        for key in agg.expression.expressions:  # the percentiles ignore NULL keys too
            key.set("this", exp.Case(ifs=[exp.If(this=exp.Paren(this=cond.copy()),
                                                 true=key.this)]))
        return agg
    if isinstance(agg, exp.ArrayAgg):
        if is_distinct(agg):
            return distinct_array_agg(agg, cond)
        return filtered_array_agg(agg, cond)
    if not isinstance(agg, _IGNORING_NULLS + _PAIRS):
        name = agg.sql(dialect="postgres").split("(", 1)[0].lower()
        raise errors.FeatureNotSupported(f"FILTER (WHERE ...) on {name}()")

    def when(x: exp.Expression) -> exp.Expression:
        x = row_aggregates.argument(x)  # count((a, b)) FILTER: CASE ... THEN ROW(a, b)
        return exp.Case(ifs=[exp.If(this=exp.Paren(this=cond.copy()), true=x)])

    arg = agg.this
    if isinstance(agg, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
        agg.set("this", when(exp.Literal.number(1)))
    elif isinstance(arg, exp.Distinct):
        arg.set("expressions", [when(e) for e in arg.expressions])
    elif isinstance(arg, exp.Order) and isinstance(arg.this, exp.Distinct):
        # string_agg(DISTINCT x, d ORDER BY x): the keys stay the argument, as they must
        distinct = arg.this
        for k in arg.expressions:
            if k.this in distinct.expressions:
                k.set("this", when(k.this))
        distinct.set("expressions", [when(e) for e in distinct.expressions])
    elif isinstance(arg, exp.Order):  # string_agg(x, d ORDER BY ...)
        arg.set("this", when(arg.this))
    else:
        agg.set("this", when(arg))
    if isinstance(agg, _PAIRS) and agg.expression is not None:
        agg.set("expression", when(agg.expression))
    return agg


def filtered_array_agg(agg: exp.ArrayAgg, cond: exp.Expression) -> exp.Expression:
    """array_agg(x [ORDER BY ...]) FILTER (WHERE cond) over array_agg of x and of cond."""
    inner = agg.this
    keep = _kept(cond)
    if isinstance(inner, exp.Order):
        mask = inner.copy()
        mask.set("this", keep)
    else:
        mask = keep
    return exp.Anonymous(this=ex.Func.LIST_FILTER.value,
                         expressions=[agg.copy(), exp.ArrayAgg(this=mask)])


def _kept(cond: exp.Expression) -> exp.Expression:
    """Whether a FILTER keeps the row: its condition is true (not false, not NULL)."""
    return exp.Is(this=exp.Paren(this=cond.copy()), expression=exp.Boolean(this=True))


def is_distinct(tree: exp.Expression) -> bool:
    """agg(DISTINCT ...), with or without ORDER BY inside."""
    inner = tree.this
    return isinstance(inner.this if isinstance(inner, exp.Order) else inner, exp.Distinct)


def distinct_array_agg(tree: exp.ArrayAgg, cond: exp.Expression | None = None
                       ) -> exp.Expression:
    """array_agg(DISTINCT x [ORDER BY x ...]) [FILTER (WHERE cond)]: the runs of equal
    values of array_agg(x ORDER BY x ...) once each (Func.LIST_DISTINCT), of the
    elements the FILTER keeps. PostgreSQL sorts a DISTINCT aggregate's input by its
    argument (ascending, NULLs last, without ORDER BY), and its ORDER BY may name only
    the argument (42P10)."""
    inner = tree.this
    order = None
    if isinstance(inner, exp.Order):
        order, inner = inner, inner.this
    if len(inner.expressions) != 1:
        raise errors.UndefinedFunction("function array_agg with several arguments does "
                                       "not exist")
    x = inner.expressions[0]
    keys = order.expressions if order is not None else []
    if any(k.this != x for k in keys):
        raise errors.QueryError("in an aggregate with DISTINCT, ORDER BY expressions "
                                "must appear in argument list", "42P10")
    return distinct_list(x, keys, cond)


def distinct_list(x: exp.Expression, keys: list[exp.Ordered],
                  cond: exp.Expression | None = None) -> exp.Expression:
    """Func.LIST_DISTINCT(array_agg(x ORDER BY x [the direction of `keys`, ascending
    with NULLs last when none])): the distinct x, sorted. With a FILTER condition, the
    sorted array is filtered first by an array of the condition in the same order
    (array_agg keeps NULLs, so a NULL x is not a filtered-out row)."""
    keys = [exp.Ordered(this=x.copy(), desc=k.args.get("desc"),
                        nulls_first=k.args.get("nulls_first")) for k in keys] \
        or [exp.Ordered(this=x.copy(), nulls_first=False)]
    array = exp.ArrayAgg(this=exp.Order(this=x.copy(), expressions=keys))
    if cond is not None:
        mask = exp.ArrayAgg(this=exp.Order(this=_kept(cond),
                                           expressions=[k.copy() for k in keys]))
        array = exp.Anonymous(this=ex.Func.LIST_FILTER.value, expressions=[array, mask])
    return exp.Anonymous(this=ex.Func.LIST_DISTINCT.value, expressions=[array])


def within_group(tree: exp.WithinGroup, bind) -> exp.Expression:
    """percentile_cont / percentile_disc as an expression over array_agg and count;
    `bind` binds a sqlglot expression of the query level (to check the fraction)."""
    func = tree.this
    if isinstance(func, exp.Mode):
        return _mode(tree)
    if not isinstance(func, (exp.PercentileCont, exp.PercentileDisc)):
        name = func.sql(dialect="postgres").split("(", 1)[0].lower()
        raise errors.FeatureNotSupported(f"ordered-set aggregate {name}() WITHIN GROUP")
    name = "percentile_cont" if isinstance(func, exp.PercentileCont) else "percentile_disc"
    order = tree.expression.expressions if isinstance(tree.expression, exp.Order) else []
    if len(order) != 1:
        raise errors.FeatureNotSupported(f"{name}() WITHIN GROUP over {len(order)} keys")
    fraction = bind(func.this)
    if not isinstance(fraction, ex.Literal):
        raise errors.FeatureNotSupported(f"{name}() of a fraction that is not a constant")
    if fraction.type.is_array:
        return _multi(name, fraction, order, bind)
    if fraction.value is None:
        return exp.Null()
    f = float(fraction.value)
    if not 0 <= f <= 1:
        raise errors.NumericOutOfRange(f"percentile value {f:g} is not between 0 and 1")
    arg, x, direction = _sort_key(name, order[0], bind)
    a = f"(array_agg({arg} ORDER BY {x} {direction} NULLS LAST))"
    if name == "percentile_cont":
        p = f"({f!r}::float8 * (count({x}) - 1))"
        value = (f"{a}[floor({p})::int + 1] + ({a}[ceil({p})::int + 1] - "
                 f"{a}[floor({p})::int + 1]) * ({p} - floor({p}))")
    else:
        value = f"{a}[greatest(ceil({f!r}::float8 * count({x})), 1)::int]"
    out = sqlglot.parse_one(f"CASE WHEN count({x}) > 0 THEN {value} END", read=RaymppPostgres)
    mark_subscripts(out)  # as statements.py does after parsing: a[i] is 1-based
    return out


def _sort_key(name: str, key: exp.Ordered, bind) -> tuple[str, str, str]:
    """(the value aggregated, the ORDER BY expression, ASC or DESC) of a percentile's sort
    key: percentile_cont interpolates, so it takes numbers only, as float8."""
    x = key.this.sql(dialect="postgres")
    direction = "DESC" if key.args.get("desc") else "ASC"
    if name != "percentile_cont":
        return x, x, direction
    t = bind(key.this).type
    if not t.is_number:
        raise errors.FeatureNotSupported(f"percentile_cont() WITHIN GROUP over {t}")
    return f"({x})::float8", x, direction


def _multi(name: str, fractions: ex.Literal, order, bind) -> exp.Expression:
    """percentile_cont / percentile_disc of a constant array of fractions."""
    if len(order) != 1:
        raise errors.FeatureNotSupported(f"{name}() WITHIN GROUP over {len(order)} keys")
    if not (fractions.type.elem.is_number or fractions.type.elem.kind.name == "UNKNOWN"):
        raise errors.UndefinedFunction(
            f"function {name}({fractions.type}, {bind(order[0].this).type}) does not exist")
    arg, x, direction = _sort_key(name, order[0], bind)
    values = fractions.value
    text = "NULL" if values is None else "'{" + ",".join(
        "NULL" if v is None else repr(float(v)) for v in values) + "}'"
    out = sqlglot.parse_one(f"array_agg({arg} ORDER BY {x} {direction} NULLS LAST)",
                            read=RaymppPostgres)
    mark_subscripts(out)
    func = ex.Func.PERCENTILE_CONT_MULTI if name == "percentile_cont" \
        else ex.Func.PERCENTILE_DISC_MULTI
    return exp.Anonymous(this=func.value, expressions=[
        out, sqlglot.parse_one(f"{text}::float8[]", read=RaymppPostgres)])


def _mode(tree: exp.WithinGroup) -> exp.Expression:
    """mode() WITHIN GROUP (ORDER BY x): the most frequent non-NULL x, the first in the
    ORDER BY of equally frequent ones (PostgreSQL's mode_final), NULL over no non-NULL x."""
    args = [a for a in tree.this.args.values() if a is not None]
    if args:  # mode(x) WITHIN GROUP (...): PostgreSQL has no such signature
        raise errors.UndefinedFunction(
            f"function mode({', '.join(a.sql(dialect='postgres') for a in args)}) "
            "WITHIN GROUP does not exist")
    order = tree.expression.expressions if isinstance(tree.expression, exp.Order) else []
    if len(order) != 1:
        raise errors.FeatureNotSupported(f"mode() WITHIN GROUP over {len(order)} keys")
    key = order[0]
    x = key.this.sql(dialect="postgres")
    direction = "DESC" if key.args.get("desc") else "ASC"
    arr = sqlglot.parse_one(f"array_agg({x} ORDER BY {x} {direction} NULLS LAST)",
                            read=RaymppPostgres)
    return exp.Anonymous(this=ex.Func.SORTED_MODE.value, expressions=[arr])
