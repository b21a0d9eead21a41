"""string_agg(value, delimiter [ORDER BY ...]) as an expression over array_agg, so that it
distributes as array_agg does (its input gathered in order per group; with DISTINCT over
array_agg(DISTINCT ...), planner/ordered_aggregates.py):

    string_agg(x, d ORDER BY o) = CASE WHEN count(x) > 0
                                       THEN array_to_string(array_agg(x ORDER BY o), d) END

array_to_string skips NULL elements as string_agg skips NULL inputs, and a group with no
non-NULL input is NULL, as in PostgreSQL. The delimiter must be a constant (PostgreSQL
reads it per row, before each value but the first: the same for a constant).
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors, ordered_aggregates


def rewrite(tree: exp.GroupConcat, bind) -> exp.Expression:
    """The expression string_agg `tree` equals; `bind` binds a sqlglot expression of the
    query level (to check the argument types)."""
    inner = tree.this
    distinct = None
    if isinstance(inner.this if isinstance(inner, exp.Order) else inner, exp.Distinct):
        # string_agg(DISTINCT x, d [ORDER BY x]): over array_agg(DISTINCT x ...), which
        # checks the ORDER BY as PostgreSQL does.
        order = inner if isinstance(inner, exp.Order) else None
        distinct = order.this if order is not None else inner
        inner = distinct.expressions[0]
        if order is not None:
            if any(k.this != inner for k in order.expressions):
                raise errors.QueryError("in an aggregate with DISTINCT, ORDER BY expressions "
                                        "must appear in argument list", "42P10")
            inner = exp.Order(this=inner, expressions=[k.copy() for k in order.expressions])
    value = inner.this if isinstance(inner, exp.Order) else inner
    sep = tree.args.get("separator")
    if sep is None:
        raise errors.UndefinedFunction("function string_agg(text) does not exist")
    v, d = bind(value), bind(sep)
    if v.type.kind.name == "BYTEA":  # string_agg(bytea, bytea) is bytea in PostgreSQL
        raise errors.FeatureNotSupported("string_agg of bytea values")
    for e in (v, d):
        if not (e.type.is_string or e.type.kind.name == "UNKNOWN"):
            raise errors.UndefinedFunction(
                f"function string_agg({_type(v, value)}, {_type(d, sep)}) does not exist",
                hint="No function matches the given name and argument types. You might "
                     "need to add explicit type casts.")
    if sep.find(exp.Column) is not None:
        raise errors.FeatureNotSupported("string_agg with a delimiter that is not a constant")
    text = exp.DataType.build("text")
    x = exp.Cast(this=exp.Paren(this=value.copy()), to=text)
    agg_arg = x
    if isinstance(inner, exp.Order):
        agg_arg = inner.copy()
        agg_arg.set("this", x)
    array = exp.ArrayAgg(this=agg_arg)
    if distinct is not None:
        keys = list(agg_arg.expressions) if isinstance(agg_arg, exp.Order) else []
        array = ordered_aggregates.distinct_list(x, keys)
    joined = exp.Anonymous(this="array_to_string", expressions=[
        array, exp.Cast(this=sep.copy(), to=text)])
    some = exp.GT(this=exp.Count(this=x.copy()), expression=exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=some, true=joined)])


def _type(e, tree: exp.Expression) -> str:
    """The type PostgreSQL names: a quoted literal is still of type unknown there."""
    if e.type.kind.name == "UNKNOWN" or isinstance(tree, exp.Literal) and tree.is_string:
        return "unknown"
    return str(e.type)
