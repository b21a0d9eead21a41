"""stddev / stddev_samp / stddev_pop / variance / var_samp / var_pop as expressions over
the aggregates raympp has, so that they distribute as those do (two phases):

    var_samp(x) = (sum(x*x) - sum(x)*sum(x)/count(x)) / (count(x) - 1)   (NULL below 2 rows)
    var_pop(x)  = (sum(x*x) - sum(x)*sum(x)/count(x)) / count(x)         (NULL for no rows)
    stddev_*    = sqrt(var_*)

over x as numeric, where the sums are exact (PostgreSQL's result type for integer and
numeric arguments is numeric too). The quotients have the scale of raympp's numeric
division and the square root is a double's, so results agree with PostgreSQL's to about
15 significant digits. Floating-point arguments are refused: this formula loses
precision by cancellation where PostgreSQL's (Youngs-Cramer) does not.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors

_SAMPLE = (exp.Stddev, exp.StddevSamp, exp.Variance)
_ROOT = (exp.Stddev, exp.StddevSamp, exp.StddevPop)


def rewrite(tree: exp.Expression, arg_is_float: bool) -> exp.Expression:
    """The expression over count/sum that the statistics aggregate `tree` equals."""
    name = tree.sql_name().lower()
    if arg_is_float:
        raise errors.FeatureNotSupported(f"aggregate function {name}() of floating-point values")
    if isinstance(tree.this, exp.Distinct):
        raise errors.FeatureNotSupported(f"aggregate function {name}(DISTINCT ...)")
    x = exp.Cast(this=exp.Paren(this=tree.this.copy()), to=exp.DataType.build("numeric"))
    n = exp.Count(this=x.copy())
    s = exp.Sum(this=x.copy())
    q = exp.Sum(this=exp.Mul(this=x.copy(), expression=x.copy()))
    spread = exp.Sub(this=q, expression=exp.Div(this=exp.Mul(this=s, expression=s.copy()),
                                                expression=n.copy()))
    sample = isinstance(tree, _SAMPLE)
    den = exp.Sub(this=n.copy(), expression=exp.Literal.number(1)) if sample else n.copy()
    least = exp.Literal.number(2 if sample else 1)
    enough = exp.GTE(this=n.copy(), expression=least)
    quotient = exp.Div(this=exp.Paren(this=spread), expression=exp.Paren(this=den))
    if isinstance(tree, _ROOT):
        # Rounding of the quotients could make a variance of equal values a hair below 0.
        quotient = exp.Cast(this=exp.Sqrt(this=exp.Greatest(
            this=quotient, expressions=[exp.Literal.number(0)])),
            to=exp.DataType.build("numeric"))
    return exp.Case(ifs=[exp.If(this=enough, true=quotient)])
