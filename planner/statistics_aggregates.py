"""stddev / stddev_samp / stddev_pop / variance / var_samp / var_pop as expressions over
the aggregates raympp has, so that they distribute as those do (two phases):

    var_samp(x) = (count(x)*sum(x*x) - sum(x)*sum(x)) / (count(x) * (count(x) - 1))
    var_pop(x)  = (count(x)*sum(x*x) - sum(x)*sum(x)) / (count(x) * count(x))
    stddev_*    = the root of var_*                          (NULL below 2 rows / no rows)

over x as numeric, where the sums are exact (PostgreSQL's result type for integer and
numeric arguments is numeric too): one numeric division, as numeric_stddev_internal
divides, whose select_div_scale is PostgreSQL's (the quotient of unconstrained numerics
keeps each value's scale), and the root exact at the variance's scale (Func.NUMERIC_ROOT).
A numerator of 0 or below is the constant 0, as numeric_stddev_internal answers it.

Floating-point arguments (real, double precision; the result is double precision) would
lose precision by cancellation in that formula: there the sum of squared deviations is
PostgreSQL's own (float8_accum, Youngs-Cramer, with its NaN and infinity rules), the
kernel regr_sxx(x, x) of planner/regression_aggregates.py runs over the values gathered
per group (array_agg), and var_samp = Sxx / (n - 1), var_pop = Sxx / n.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors
from planner import expr as ex

_SAMPLE = (exp.Stddev, exp.StddevSamp, exp.Variance)
_ROOT = (exp.Stddev, exp.StddevSamp, exp.StddevPop)


def rewrite(tree: exp.Expression, arg_is_float: bool) -> exp.Expression:
    """The expression over count/sum that the statistics aggregate `tree` equals."""
    name = tree.sql_name().lower()
    if isinstance(tree.this, exp.Distinct):
        raise errors.FeatureNotSupported(f"aggregate function {name}(DISTINCT ...)")
    if arg_is_float:
        x = exp.Cast(this=exp.Paren(this=tree.this.copy()), to=exp.DataType.build("float8"))
        n = exp.Count(this=x.copy())
        spread = exp.Anonymous(this=ex.Func.REGR.value, expressions=[
            exp.ArrayAgg(this=x.copy()), exp.ArrayAgg(this=x.copy()),
            exp.Literal.string("regr_sxx")])
    else:
        x = exp.Cast(this=exp.Paren(this=tree.this.copy()), to=exp.DataType.build("numeric"))
        n = exp.Count(this=x.copy())
        s = exp.Sum(this=x.copy())
        q = exp.Sum(this=exp.Mul(this=x.copy(), expression=x.copy()))
        spread = exp.Sub(this=exp.Mul(this=n.copy(), expression=q),
                         expression=exp.Mul(this=s, expression=s.copy()))
    sample = isinstance(tree, _SAMPLE)
    den = exp.Sub(this=n.copy(), expression=exp.Literal.number(1)) if sample else n.copy()
    if not arg_is_float:  # N * (N - 1) or N * N, as numeric_stddev_internal
        den = exp.Mul(this=exp.Cast(this=n.copy(), to=exp.DataType.build("numeric")),
                      expression=exp.Paren(this=den))
    least = exp.Literal.number(2 if sample else 1)
    enough = exp.GTE(this=n.copy(), expression=least)
    quotient = exp.Div(this=exp.Paren(this=spread), expression=exp.Paren(this=den))
    if not arg_is_float:
        # numeric_stddev_internal's guard against a numerator rounded below 0: 0, scale 0
        quotient = exp.Case(ifs=[exp.If(
            this=exp.GT(this=exp.Paren(this=spread.copy()), expression=exp.Literal.number(0)),
            true=quotient)], default=exp.Literal.number(0))
    if isinstance(tree, _ROOT) and arg_is_float:
        quotient = exp.Sqrt(this=quotient)
    elif isinstance(tree, _ROOT):
        # The root at the variance's own scale, as numeric_stddev_internal's sqrt_var.
        quotient = exp.Anonymous(this=ex.Func.NUMERIC_ROOT.value, expressions=[quotient])
    return exp.Case(ifs=[exp.If(this=enough, true=quotient)])
