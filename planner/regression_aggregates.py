"""regr_count, regr_sxx, regr_syy, regr_sxy, regr_avgx, regr_avgy, regr_slope,
regr_intercept, regr_r2, corr, covar_pop and covar_samp(y, x) as expressions over the
aggregates raympp has. PostgreSQL casts both arguments to float8 and reads only the rows
where neither is NULL; the results are float8 (regr_count: bigint, 0 over no rows).

regr_count is count(CASE WHEN y IS NOT NULL AND x IS NOT NULL THEN 1 END): two phases.

Over smallint and integer arguments (exact as float8) the others are two phases too, over
exact numeric sums of the pairs (X, Y the values of the rows where both are non-NULL):

    n = count(X)    Sxx = (n*sum(X*X) - sum(X)^2) / n    (Syy, Sxy alike)

whose zero tests (a vertical or horizontal line) are exact, as PostgreSQL's are for such
inputs; the quotients are float8's, so results agree to rounding. Other arguments (bigint,
numeric, real, double precision) follow PostgreSQL's float8_regr_accum (Youngs-Cramer, with
its NaN and overflow rules) over the pairs gathered per group: Func.REGR over two array_agg
(segment/kernels/expr_list_agg.py), distributed as array_agg is.

Then PostgreSQL's final functions: NULL over no pairs (covar_samp: below 2); regr_slope,
regr_intercept, regr_r2 NULL where Sxx = 0, regr_r2 1 where Syy = 0; corr NULL where Sxx or
Syy is 0. DISTINCT is 0A000 (it would be over pairs).
"""

from __future__ import annotations

from sqlglot import exp

from planner import coercion, errors, sql_templates, types
from planner import expr as ex

NODES = {exp.RegrCount: "regr_count", exp.RegrSxx: "regr_sxx", exp.RegrSyy: "regr_syy",
         exp.RegrSxy: "regr_sxy", exp.RegrAvgx: "regr_avgx", exp.RegrAvgy: "regr_avgy",
         exp.RegrSlope: "regr_slope", exp.RegrIntercept: "regr_intercept",
         exp.RegrR2: "regr_r2", exp.Corr: "corr", exp.CovarPop: "covar_pop",
         exp.CovarSamp: "covar_samp"}
_EXACT = (types.Kind.INT2, types.Kind.INT4)


def rewrite(tree: exp.Expression, bind) -> exp.Expression:
    """The expression the aggregate `tree` (one of NODES) equals; `bind` binds a sqlglot
    expression of the query level (to check the argument types)."""
    name = NODES[type(tree)]
    y_tree, x_tree = tree.this, tree.expression
    if isinstance(y_tree, exp.Distinct) or isinstance(x_tree, exp.Distinct):
        raise errors.FeatureNotSupported(f"aggregate function {name}(DISTINCT ...)")
    if y_tree is None or x_tree is None:
        raise errors.UndefinedFunction(f"function {name}() does not exist")
    y, x = bind(y_tree), bind(x_tree)
    for e in (y, x):
        if not (e.type.is_number or coercion.is_unknown(e)):
            raise errors.UndefinedFunction(
                f"function {name}({_type(y)}, {_type(x)}) does not exist",
                hint="No function matches the given name and argument types. You might "
                     "need to add explicit type casts.")
    ys, xs = f"({_Y})", f"({_X})"  # the arguments' trees put in (planner/sql_templates)
    both = f"{ys} IS NOT NULL AND {xs} IS NOT NULL"
    args = {_Y: y_tree, _X: x_tree}
    if name == "regr_count":
        return sql_templates.instantiate(f"count(CASE WHEN {both} THEN 1 END)", args)
    if y.type.kind in _EXACT and x.type.kind in _EXACT:
        return sql_templates.instantiate(
            _exact(name, f"CASE WHEN {both} THEN {xs}::numeric END",
                   f"CASE WHEN {both} THEN {ys}::numeric END"), args)
    return exp.Anonymous(this=ex.Func.REGR.value, expressions=[
        sql_templates.instantiate(f"array_agg({xs}::float8)", args),
        sql_templates.instantiate(f"array_agg({ys}::float8)", args),
        exp.Literal.string(name)])


_Y, _X = "__regression_y__", "__regression_x__"


def _exact(name: str, x: str, y: str) -> str:
    """The final function `name` over exact sums of the pairs x, y (numeric)."""
    n = f"count({x})"

    def spread(a: str, b: str) -> str:  # n * Sab, exact
        return f"({n} * sum({a} * {b}) - sum({a}) * sum({b}))"

    def s(a: str, b: str) -> str:
        return f"({spread(a, b)}::float8 / {n})"

    sxx, syy, sxy = s(x, x), s(y, y), s(x, y)
    flat_x, flat_y = f"{spread(x, x)} = 0", f"{spread(y, y)} = 0"
    some = f"{n} >= 1"
    value = {
        "regr_sxx": sxx, "regr_syy": syy, "regr_sxy": sxy,
        "regr_avgx": f"sum({x})::float8 / {n}", "regr_avgy": f"sum({y})::float8 / {n}",
        "covar_pop": f"{sxy} / {n}",
        "covar_samp": f"{sxy} / ({n} - 1)",
        "corr": f"{sxy} / sqrt({sxx} * {syy})",
        "regr_r2": f"CASE WHEN {flat_y} THEN 1::float8 ELSE ({sxy} * {sxy}) / ({sxx} * {syy}) END",
        "regr_slope": f"{sxy} / {sxx}",
        "regr_intercept": f"(sum({y})::float8 - sum({x})::float8 * {sxy} / {sxx}) / {n}",
    }[name]
    if name == "covar_samp":
        some = f"{n} >= 2"
    elif name == "corr":
        some += f" AND NOT {flat_x} AND NOT {flat_y}"
    elif name in ("regr_r2", "regr_slope", "regr_intercept"):
        some += f" AND NOT {flat_x}"
    return f"CASE WHEN {some} THEN {value} END"


def _type(e) -> str:
    return coercion.type_name(e).split("(")[0]  # PostgreSQL names types without typmods
