"""Subqueries in GROUP BY keys: `GROUP BY (SELECT 1)`, `GROUP BY a + (SELECT max(x) FROM
u)`, `GROUP BY (SELECT y FROM u WHERE u.x = t.a)`.

A key's subqueries are evaluated before the rows are grouped, as PostgreSQL does: an
uncorrelated one once ahead (an InitPlan: a constant key), a correlated one per input row
(joined to the FROM rows by bind_subquery.SubqueryBinder, whose columns the key then
reads). More than one row is 21000 either way. The SELECT list, HAVING and ORDER BY may
repeat a key's expression, subqueries included: `KeySubqueries.lookup` gives the same
bound value for a subquery written as one of the keys' (sqlglot trees compare by
structure), so the expression matches its key and the subquery is not run again; any
other subquery there is bound after the grouping, as before (bind_subquery, bind.py).

What it leaves to others: the grouping itself and the hook that maps expressions to
keys (bind.py `_aggregate`), evaluating and decorrelating subqueries (bind_subquery.py).
"""

from __future__ import annotations

from sqlglot import exp

from planner import bind_subquery, errors, functions
from planner import plan as pl
from planner.bind_expr import ExprBinder
from planner.scope import Scope


class KeySubqueries:
    """The subqueries of one query level's GROUP BY keys, bound over its FROM rows."""

    def __init__(self, qb, node: pl.Node, scope: Scope):
        self._binder = bind_subquery.SubqueryBinder(qb, node, scope)
        self._params = qb.params
        self._bound: dict[exp.Expression, object] = {}

    @property
    def node(self) -> pl.Node:
        """The FROM rows with the correlated subqueries' columns joined."""
        return self._binder.node

    @property
    def scope(self) -> Scope:
        """The columns of `node`: the FROM's, then the joined ones (hidden)."""
        return self._binder.scope

    def bind_keys(self, trees: list[exp.Expression]) -> list:
        """The GROUP BY keys `trees`, bound with their subqueries evaluated."""
        binder = ExprBinder(self.scope, self._params, subquery=self._evaluate)
        return [functions.fold_constants(binder.bind(t)) for t in trees]

    def _evaluate(self, tree: exp.Expression):
        value = self._bound.get(tree)
        if value is None:
            value = self._bound[tree] = self._binder.scalar(tree)
        return value

    def lookup(self, tree: exp.Expression):
        """The value of a subquery written as in a key; 0A000 for any other, which the
        caller binds after the grouping instead."""
        value = self._bound.get(tree)
        if value is None:
            raise errors.FeatureNotSupported("subqueries in this position")
        return value


def has_subquery(trees: list[exp.Expression]) -> bool:
    """Whether any of the GROUP BY keys `trees` holds a subquery."""
    return any(bind_subquery.has_subquery(t) for t in trees)
