"""stddev / stddev_samp / stddev_pop / variance / var_samp / var_pop as expressions over
the aggregates raympp has, so that they distribute as those do (two phases):

    var_samp(x) = (N * sum(x*x) - sum(x)^2) / (N * (N - 1))   (NULL below 2 rows)
    var_pop(x)  = (N * sum(x*x) - sum(x)^2) / (N * N)         (NULL for no rows)
    stddev_*    = sqrt(var_*)

over x as numeric, N = count(x), where the sums are exact (PostgreSQL's result type for
integer and numeric arguments is numeric too): PostgreSQL's numeric_stddev_internal, whose
one division has select_div_scale's digits, as raympp's numeric division has. The square
root is a double's, so standard deviations agree with PostgreSQL's to about 15
significant digits.

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
    sample = isinstance(tree, _SAMPLE)
    if arg_is_float:
        x = exp.Cast(this=exp.Paren(this=tree.this.copy()), to=exp.DataType.build("float8"))
        n = exp.Count(this=x.copy())
        spread = exp.Anonymous(this=ex.Func.REGR.value, expressions=[
            exp.ArrayAgg(this=x.copy()), exp.ArrayAgg(this=x.copy()),
            exp.Literal.string("regr_sxx")])
        den = exp.Sub(this=n.copy(), expression=exp.Literal.number(1)) if sample else n.copy()
        quotient = exp.Div(this=exp.Paren(this=spread), expression=exp.Paren(this=den))
    else:
        # numeric_stddev_internal: (N * sum(x*x) - sum(x)^2) / (N * (N - 1)) (N * N for
        # the population), one numeric division, so its select_div_scale is PostgreSQL's
        x = exp.Cast(this=exp.Paren(this=tree.this.copy()), to=exp.DataType.build("numeric"))
        n = exp.Count(this=x.copy())
        big_n = exp.Cast(this=n.copy(), to=exp.DataType.build("numeric"))
        s = exp.Sum(this=x.copy())
        q = exp.Sum(this=exp.Mul(this=x.copy(), expression=x.copy()))
        spread = exp.Sub(this=exp.Mul(this=big_n.copy(), expression=q),
                         expression=exp.Mul(this=s, expression=s.copy()))
        den = exp.Mul(this=big_n.copy(), expression=exp.Paren(this=exp.Sub(
            this=big_n.copy(), expression=exp.Literal.number(1))) if sample else big_n.copy())
        # a numerator of 0 (or below, by rounding there) is the constant 0, scale 0
        quotient = exp.Case(ifs=[exp.If(
            this=exp.GT(this=exp.Paren(this=spread.copy()), expression=exp.Literal.number(0)),
            true=exp.Div(this=exp.Paren(this=spread), expression=exp.Paren(this=den)))],
            default=exp.Literal.number(0))
    least = exp.Literal.number(2 if sample else 1)
    enough = exp.GTE(this=n.copy(), expression=least)
    if isinstance(tree, _ROOT) and arg_is_float:
        quotient = exp.Sqrt(this=quotient)
    elif isinstance(tree, _ROOT):
        # Rounding of the quotients could make a variance of equal values a hair below 0.
        # The root is float8's (numeric sqrt keeps per-value scales a column cannot).
        quotient = exp.Cast(this=exp.Sqrt(this=exp.Cast(this=exp.Greatest(
            this=quotient, expressions=[exp.Literal.number(0)]),
            to=exp.DataType.build("float8"))), to=exp.DataType.build("numeric"))
    return exp.Case(ifs=[exp.If(this=enough, true=quotient)])
