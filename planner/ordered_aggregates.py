"""Aggregate FILTER (WHERE ...) and the ordered-set aggregates percentile_cont,
percentile_disc and mode(), as expressions over the aggregates raympp has, so that they
distribute as those do.

    agg(x) FILTER (WHERE c)   = agg(CASE WHEN c THEN x END)     (count(*): count(CASE ... 1))

which every aggregate that ignores NULL inputs answers alike (count, sum, avg, min, max,
bool_and/or, the statistics, string_agg, the percentiles: their sort key); array_agg and
the json aggregates keep NULLs, so FILTER on them is 0A000.

    percentile_disc(f) WITHIN GROUP (ORDER BY x) = a[greatest(ceil(f * n), 1)]
    percentile_cont(f) WITHIN GROUP (ORDER BY x) = a[lo + 1] + (a[hi + 1] - a[lo + 1]) * (p - lo)

with a = array_agg(x ORDER BY x NULLS LAST) (x as float8 for percentile_cont), n = count(x),
p = f * (n - 1), lo = floor(p), hi = ceil(p): PostgreSQL's definitions, NULL over no
non-NULL input. The fraction must be a constant in [0, 1] (22003 otherwise, as
PostgreSQL); arrays of fractions, interval inputs and the hypothetical-set aggregates
are 0A000.

    mode() WITHIN GROUP (ORDER BY x) = ?sorted_mode(array_agg(x ORDER BY x NULLS LAST))

the most frequent non-NULL element of the sorted array, the first of equally frequent
ones (segment/kernels/expr_list_sort.py).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from planner import errors, expr as ex
from planner.bind_array import mark_subscripts

_IGNORING_NULLS = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.LogicalAnd,
                   exp.LogicalOr, exp.Stddev, exp.StddevSamp, exp.StddevPop, exp.Variance,
                   exp.VariancePop, exp.GroupConcat)


def filtered(tree: exp.Filter) -> exp.Expression:
    """The aggregate of `tree` with its argument NULL where the FILTER condition is not
    true."""
    agg = tree.this.copy()
    cond = tree.expression.this if isinstance(tree.expression, exp.Where) else tree.expression
    if isinstance(agg, exp.WithinGroup) and isinstance(agg.expression, exp.Order):
        for key in agg.expression.expressions:  # the percentiles ignore NULL keys too
            key.set("this", exp.Case(ifs=[exp.If(this=exp.Paren(this=cond.copy()),
                                                 true=key.this)]))
        return agg
    if not isinstance(agg, _IGNORING_NULLS):
        name = agg.sql(dialect="postgres").split("(", 1)[0].lower()
        raise errors.FeatureNotSupported(f"FILTER (WHERE ...) on {name}()")

    def when(x: exp.Expression) -> exp.Expression:
        return exp.Case(ifs=[exp.If(this=exp.Paren(this=cond.copy()), true=x)])

    arg = agg.this
    if isinstance(agg, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
        agg.set("this", when(exp.Literal.number(1)))
    elif isinstance(arg, exp.Distinct):
        arg.set("expressions", [when(e) for e in arg.expressions])
    elif isinstance(arg, exp.Order):  # string_agg(x, d ORDER BY ...)
        arg.set("this", when(arg.this))
    else:
        agg.set("this", when(arg))
    return agg


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
    if not isinstance(fraction, ex.Literal) or fraction.type.is_array:
        raise errors.FeatureNotSupported(f"{name}() of a fraction that is not one constant")
    if fraction.value is None:
        return exp.Null()
    f = float(fraction.value)
    if not 0 <= f <= 1:
        raise errors.NumericOutOfRange(f"percentile value {f:g} is not between 0 and 1")
    key = order[0]
    x = key.this.sql(dialect="postgres")
    direction = "DESC" if key.args.get("desc") else "ASC"
    if name == "percentile_cont":
        t = bind(key.this).type
        if not t.is_number:
            raise errors.FeatureNotSupported(f"percentile_cont() WITHIN GROUP over {t}")
        a = f"(array_agg(({x})::float8 ORDER BY {x} {direction} NULLS LAST))"
        p = f"({f!r}::float8 * (count({x}) - 1))"
        value = (f"{a}[floor({p})::int + 1] + ({a}[ceil({p})::int + 1] - "
                 f"{a}[floor({p})::int + 1]) * ({p} - floor({p}))")
    else:
        a = f"(array_agg({x} ORDER BY {x} {direction} NULLS LAST))"
        value = f"{a}[greatest(ceil({f!r}::float8 * count({x})), 1)::int]"
    out = sqlglot.parse_one(f"CASE WHEN count({x}) > 0 THEN {value} END", read="postgres")
    mark_subscripts(out)  # as statements.py does after parsing: a[i] is 1-based
    return out


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
                            read="postgres")
    return exp.Anonymous(this=ex.Func.SORTED_MODE.value, expressions=[arr])
