"""Comparisons of row constructors, (a, b) < (c, d) and ROW(a, b) = ROW(c, d), as
PostgreSQL 15 defines them, written as comparisons of their fields:

- `=` is the AND of the pairs' equalities and `<>` the OR of their inequalities, each
  three-valued (equal when every pair is equal, unequal when some non-NULL pair differs,
  else NULL);
- `<` `<=` `>` `>=` compare left to right and the first pair that is not equal decides:
  NULL when either of it is NULL, else that pair's comparison; rows of equal pairs satisfy
  `<=` and `>=`;
- IS DISTINCT FROM is the OR of the pairs' IS DISTINCT FROM, IS NOT DISTINCT FROM the AND.

Rows of different widths are 42601 as in PostgreSQL. planner/subquery_predicates.py folds
the same comparison for (x1, ..., xn) op ANY|ALL (subquery).
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors

_ORDERINGS = (exp.LT, exp.LTE, exp.GT, exp.GTE)


def fields(tree: exp.Expression) -> list[exp.Expression] | None:
    """The fields of a row constructor ((a, b) or ROW(a, ...)), None for anything else."""
    while isinstance(tree, exp.Paren):
        tree = tree.this
    if isinstance(tree, exp.Tuple):
        return list(tree.expressions)
    if isinstance(tree, exp.Anonymous) and tree.name.lower() == "row":
        return list(tree.expressions)
    return None


def compare(cmp: type, xs: list[exp.Expression], vs: list[exp.Expression]) -> exp.Expression:
    """(x1, ..., xn) cmp (v1, ..., vn) for cmp one of = <> < <= > >=."""
    pairs = list(zip(xs, vs))
    if cmp is exp.EQ:
        return exp.Paren(this=exp.and_(*(exp.EQ(this=x.copy(), expression=v.copy())
                                         for x, v in pairs)))
    if cmp is exp.NEQ:
        return exp.Paren(this=exp.or_(*(exp.NEQ(this=x.copy(), expression=v.copy())
                                        for x, v in pairs)))
    ifs = []
    for x, v in pairs:
        either_null = exp.or_(exp.Is(this=exp.Paren(this=x.copy()), expression=exp.Null()),
                              exp.Is(this=exp.Paren(this=v.copy()), expression=exp.Null()))
        ifs.append(exp.If(this=either_null, true=exp.Null()))
        ifs.append(exp.If(this=exp.NEQ(this=x.copy(), expression=v.copy()),
                          true=cmp(this=x.copy(), expression=v.copy())))
    return exp.Case(ifs=ifs, default=exp.Boolean(this=cmp in (exp.LTE, exp.GTE)))


def rewrite(node: exp.Expression) -> exp.Expression | None:
    """`node` as comparisons of fields when it compares two row constructors, else None."""
    if not isinstance(node, (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.NullSafeNEQ) + _ORDERINGS):
        return None
    xs, vs = fields(node.this), fields(node.expression)
    if xs is None or vs is None:
        return None
    if len(xs) != len(vs):
        raise errors.QueryError("unequal number of entries in row expressions", "42601")
    if not xs:
        raise errors.FeatureNotSupported("comparisons of rows without fields")
    if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
        kind = type(node)
        join = exp.and_ if kind is exp.NullSafeEQ else exp.or_
        return exp.Paren(this=join(*(kind(this=x.copy(), expression=v.copy())
                                     for x, v in zip(xs, vs))))
    return compare(type(node), xs, vs)
