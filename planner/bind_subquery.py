"""Subqueries in WHERE: decorrelated into joins, or run once ahead (InitPlans).

- [NOT] EXISTS (correlated): a SEMI (ANTI) join of the outer rows with the subquery's
  FROM; the correlated conditions become the join's keys and residual.
- x [NOT] IN (subquery): a SEMI join on x = the subquery's column; NOT IN is the
  null-aware ANTI join (no rows at all when the subquery yields a NULL).
- A scalar subquery that does not mention the outer query runs once before the query
  (as PostgreSQL's InitPlan) and becomes a constant.
- A correlated scalar subquery with an aggregate, correlated by equalities
  (`WHERE inner.k = outer.k`), becomes a derived table grouped by the inner keys, LEFT
  joined to the outer rows; its value is a column of that join.
- Any other correlated scalar subquery is evaluated once per distinct outer value it
  reads (subquery_domain.py); EXISTS / IN / ANY / ALL that are not conditions AND-ed
  into WHERE become scalar subqueries of one boolean (subquery_predicates.py).
"""

from __future__ import annotations

import decimal
import itertools

from sqlglot import exp

from planner import (bind_join, bind_lateral_subquery, errors, functions, subquery_ctes,
                     subquery_domain, subquery_predicates, types)
from planner import expr as ex
from planner.values import from_value_and_scale
from planner import plan as pl
from planner.bind_expr import AGGREGATES, ExprBinder, find_aggregate, over_no_rows
from planner.scope import LayeredScope, Scope, ScopeColumn

_CORRELATED = (errors.UndefinedColumn, errors.UndefinedTable)
_MARKERS = itertools.count()  # makes each scope's outer-reference marker unique


def split_and(tree: exp.Expression) -> list[exp.Expression]:
    while isinstance(tree, exp.Paren):
        tree = tree.this
    if isinstance(tree, exp.And):
        return split_and(tree.this) + split_and(tree.expression)
    return [tree]


def has_subquery(tree: exp.Expression) -> bool:
    return tree.find(exp.Subquery, exp.Exists, exp.Select) is not None or any(
        n.args.get("query") is not None for n in tree.find_all(exp.In))


def _strip(tree: exp.Expression) -> exp.Expression:
    while isinstance(tree, exp.Paren):
        tree = tree.this
    return tree


class CorrelatedNotHere(errors.FeatureNotSupported):
    """A correlated subquery where the plan cannot take its join yet (the aggregates of
    a grouped query are still being collected): bind.py binds it again above them."""


class SubqueryBinder:
    """Applies the subquery conjuncts of one WHERE clause to the plan of its FROM, and
    joins the correlated scalar subqueries of an expression to `node`.

    Above an Aggregate, `scope` has the group keys and `ungrouped` the FROM's columns
    (an outer reference to one of those that is no key is 42803) and `hook` maps
    aggregates and keys to the Aggregate's columns; `initplans` shares another
    binder's InitPlans, so that a subquery bound twice runs once."""

    def __init__(self, qb, node: pl.Node, scope: Scope, correlated: bool = True,
                 ungrouped: Scope | None = None, initplans: "SubqueryBinder | None" = None,
                 hook=None):
        self.qb = qb
        self.node = node
        self.scope = Scope(list(scope.columns), scope.star_order,
                           marker=f"?outer{next(_MARKERS)}")
        # False where the plan cannot take a join (CorrelatedNotHere).
        self.correlated = correlated
        self.ungrouped = ungrouped
        self.hook = hook  # above an Aggregate: bind.py's map to its output columns
        self._initplans: dict[int, tuple[exp.Subquery, ex.Expr]] = \
            initplans._initplans if initplans else {}

    # --- WHERE conjuncts ---------------------------------------------------------------
    def where_conjunct(self, tree: exp.Expression) -> None:
        t = _strip(tree)
        negate = False
        if isinstance(t, exp.Not):
            negate, t = True, _strip(t.this)
        try:
            if isinstance(t, exp.Exists):
                return self._exists(_strip(t.this), negate)
            if isinstance(t, exp.In) and t.args.get("query") is not None:
                return self._in(t, negate)
        except errors.FeatureNotSupported:
            pass  # not as a join: evaluated as a value (subquery_predicates.py)
        e = self.binder().bind(tree)
        if e.type.kind is not types.Kind.BOOL:
            raise errors.DatatypeMismatch(
                f"argument of WHERE must be type boolean, not type {e.type}")
        self.node = pl.Filter(self.node, functions.fold_constants(e), self.node.fields)

    def binder(self) -> ExprBinder:
        return ExprBinder(self.scope, self.qb.params, subquery=self.scalar)

    def _exists(self, select: exp.Expression, negate: bool) -> None:
        if not isinstance(select, exp.Select) or select.args.get("group") or \
                select.args.get("having") or any(e.find(*AGGREGATES) for e in select.expressions) \
                or select.args.get("with_") or select.args.get("with") \
                or not subquery_predicates.no_op_limit(select):
            raise errors.FeatureNotSupported("EXISTS over a grouped or limited subquery")
        where = select.args.get("where")
        conj = split_and(where.this) if where is not None else []
        if any(has_subquery(c) for c in conj):
            raise errors.FeatureNotSupported("subqueries nested in an EXISTS subquery")
        try:
            inner, inner_scope, correlated = self.qb.child()._from(select, conj,
                                                                   outer=self.scope)
        except _CORRELATED:
            # Outer references inside a FROM subquery: not a join's condition; the
            # scalar form decorrelates them (or reports what is undefined).
            raise errors.FeatureNotSupported("outer references in a FROM subquery of "
                                             "EXISTS") from None
        n = len(self.scope.columns)
        planner = bind_join.JoinPlanner(LayeredScope(inner_scope, self.scope))
        left = bind_join.Part(self.node, list(range(n)))
        right = bind_join.Part(inner, list(range(n, n + len(inner_scope.columns))))
        jt = pl.JoinType.ANTI if negate else pl.JoinType.SEMI
        self.node = self._trim(planner.join(left, right, jt, correlated).node, n)

    def _in(self, tree: exp.In, negate: bool) -> None:
        left = _strip(tree.this)
        row = list(left.expressions) if isinstance(left, exp.Tuple) else [tree.this]
        qb = self.qb.child()
        try:
            bq = qb.bind(tree.args["query"].this)
        except _CORRELATED:
            raise errors.FeatureNotSupported("correlated IN (subquery)") from None
        subquery_predicates.check_width(len(bq.node.fields), len(row))
        outers = [self.binder().bind(e) for e in row]
        n = len(self.scope.columns)
        fields = bq.node.fields
        gscope = Scope(self.scope.columns + [ScopeColumn(None, name, f.type)
                                             for name, f in zip(bq.names, fields)])
        preds = [functions.bind_call(ex.Func.EQ, [o, ex.ColumnRef(n + j, f.type, f.name)])
                 for j, (o, f) in enumerate(zip(outers, fields))]
        planner = bind_join.JoinPlanner(gscope)
        jt = pl.JoinType.ANTI_NULL_AWARE if negate else pl.JoinType.SEMI
        if negate and (len(row) > 1 or not ex.columns_used(outers[0])):
            # Without one join key there is no null-aware hash join: a plain anti join
            # whose condition is "the row comparison is not false" (a NULL in either row
            # makes a pair of otherwise equal rows compare NULL) is NOT IN's rule. For
            # rows it compares every pair of rows (PostgreSQL's hashed SubPlan would
            # look up rows without NULLs instead).
            jt = pl.JoinType.ANTI
            preds = [functions.bind_call(ex.Func.COALESCE, [p, ex.Literal(True, types.BOOL)])
                     for p in preds]
        part = planner.join(bind_join.Part(self.node, list(range(n))),
                            bind_join.Part(bq.node, list(range(n, n + len(fields)))), jt, preds)
        self.node = self._trim(part.node, n)

    @staticmethod
    def _trim(node: pl.Node, n: int) -> pl.Node:
        """Drop key columns a join appended beyond the outer query's `n` columns."""
        if len(node.fields) == n:
            return node
        refs = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(node.fields[:n]))
        return pl.Project(node, refs, node.fields[:n])

    # --- scalar subqueries -------------------------------------------------------------
    def scalar(self, tree: exp.Subquery) -> ex.Expr:
        # The binder may bind one expression twice; run its InitPlan once. The entry keeps
        # the tree itself: an id is unique only while its object lives, and the
        # subqueries rewrites make (row IN's EXISTS forms) are freed once bound, so a
        # later one at the same address would take another's result.
        known = self._initplans.get(id(tree))
        if known is not None and known[0] is tree:
            return known[1]
        if subquery_predicates.is_array_subquery(tree):
            value = self._scalar(subquery_predicates.array_form(tree))
        elif subquery_predicates.is_predicate(tree):
            form = subquery_predicates.scalar_form(tree, self.scope, self.qb.params,
                                                   self.hook)
            value = self._scalar(form) if isinstance(form, exp.Subquery) \
                else self.binder().bind(form)
        else:
            value = self._scalar(tree)
        self._initplans[id(tree)] = (tree, value)
        return value

    def _scalar(self, tree: exp.Subquery) -> ex.Expr:
        select = _strip(tree.this)
        try:
            bq = self.qb.child().bind(select)
        except _CORRELATED:
            if not self.correlated:
                raise CorrelatedNotHere("correlated subqueries here") from None
            try:
                return self._correlated_scalar(select)
            except (errors.FeatureNotSupported, *_CORRELATED):
                # Not correlated by equalities alone (or through an ON clause).
                return self._domain_scalar(select)
        if len(bq.node.fields) != 1:
            raise errors.SyntaxError_("subquery must return only one column")
        t = bq.node.fields[0].type
        if self.qb.run_plan is None:  # describing only: the type is what matters
            return ex.Literal(None, t)
        rows = self.qb.run_plan(bq.node)
        if rows.num_rows > 1:
            raise errors.QueryError("more than one row returned by a subquery used as an "
                                    "expression", "21000")
        value = rows.column(0)[0].as_py() if rows.num_rows else None
        return ex.Literal(_python_value(value, t), t)

    def _correlated_scalar(self, select: exp.Expression) -> ex.Expr:
        """A correlated scalar subquery, correlated by equalities: grouped by its inner
        keys and LEFT joined. One aggregate is computed per group; a plain value is
        min(value) with count(*), and more than one row for an outer row is 21000."""
        if not isinstance(select, exp.Select) or len(select.expressions) != 1 or \
                select.args.get("group") or select.args.get("having"):
            raise errors.FeatureNotSupported(
                "correlated scalar subqueries other than one value or one aggregate")
        plain = find_aggregate(select.expressions[0]) is None
        if plain and any(select.args.get(k) for k in ("distinct", "order", "limit", "offset")):
            raise errors.FeatureNotSupported(
                "correlated scalar subqueries with DISTINCT, ORDER BY or LIMIT")
        where = select.args.get("where")
        conj = split_and(where.this) if where is not None else []
        inner_keys, outer_keys, local = [], [], []
        probe = self.qb.child()
        bare = select.copy()
        bare.set("where", None)
        _, inner_scope, _ = probe._from(bare)
        layered = LayeredScope(inner_scope, self.scope)
        n = len(self.scope.columns)
        for c in conj:
            used = ex.columns_used(ExprBinder(layered, self.qb.params).bind(c))
            if not any(i < n for i in used):
                local.append(c)
                continue
            c = _strip(c)
            if not isinstance(c, exp.EQ):
                raise errors.FeatureNotSupported("correlation other than by equality")
            sides = []
            for side in (c.this, c.expression):
                cols = ex.columns_used(ExprBinder(layered, self.qb.params).bind(side))
                sides.append("outer" if cols and all(i < n for i in cols) else
                             "inner" if cols and all(i >= n for i in cols) else "mixed")
            if sorted(sides) != ["inner", "outer"]:
                raise errors.FeatureNotSupported("correlation other than outer = inner")
            inner_t, outer_t = (c.this, c.expression) if sides[0] == "inner" else (
                c.expression, c.this)
            inner_keys.append(inner_t)
            outer_keys.append(outer_t)
        derived = select.copy()
        value = select.expressions[0]
        value = value.this if isinstance(value, exp.Alias) else value
        computed = [exp.Min(this=value.copy()), exp.Count(this=exp.Star())] if plain else \
            [value.copy()]
        derived.set("expressions", [k.copy() for k in inner_keys] + computed)
        derived.set("where", exp.Where(this=exp.and_(*local)) if local else None)
        derived.set("group", exp.Group(expressions=[k.copy() for k in inner_keys]))
        try:
            bq = self.qb.child().bind(derived)
        except _CORRELATED:
            raise errors.FeatureNotSupported(
                "correlated scalar subqueries whose value uses the outer query's columns") from None
        nk = len(inner_keys)
        base = len(self.scope.columns)
        preds = [functions.bind_call(ex.Func.EQ, [
            self.binder().bind(o), ex.ColumnRef(base + i, bq.node.fields[i].type)])
            for i, o in enumerate(outer_keys)]
        # Matched rows have non-NULL keys, since the keys matched by equality: the first
        # key tells an outer row with no inner rows.
        return self._join_back(bq.node, preds, nk, plain, value, 0)


    def _domain_scalar(self, select: exp.Expression) -> ex.Expr:
        """Any other correlated scalar subquery of one value or one aggregate, evaluated
        once per distinct outer value it reads (subquery_domain.py)."""
        if not isinstance(select, exp.Select) or len(select.expressions) != 1 or \
                select.args.get("group") or select.args.get("having"):
            raise errors.FeatureNotSupported(
                "correlated scalar subqueries other than one value or one aggregate")
        value = select.expressions[0]
        value = value.this if isinstance(value, exp.Alias) else value
        plain = find_aggregate(value) is None
        if plain and select.args.get("distinct"):
            raise errors.FeatureNotSupported("correlated scalar subqueries with DISTINCT")
        if not plain and any(select.args.get(k) for k in ("order", "limit", "offset")):
            raise errors.FeatureNotSupported(
                "correlated aggregate subqueries with ORDER BY, LIMIT or OFFSET")
        derived = select.copy()
        probe = self.qb.child()
        ctes = subquery_ctes.prepare(probe, derived, self.scope, self.qb.params,
                                     subquery_domain.inner_scope,
                                     subquery_domain.outer_references)
        # Outer references inside its own subqueries read D too; a FROM subquery holding
        # one becomes LATERAL, as D is an item of the same FROM then.
        nested = [] if ctes else bind_lateral_subquery.nested_references(probe, derived,
                                                                          self.scope)
        bind_lateral_subquery.lateral_from_subqueries(derived, [c for c, _ in nested])
        inner = subquery_domain.inner_scope(probe, derived, self.scope)
        refs = subquery_domain.outer_references(derived, inner, self.scope, self.qb.params,
                                                self.ungrouped) + nested
        positions = sorted({i for _, i in refs} | {
            i for parts in ctes.values() for _, got in parts for _, i in got})
        if not positions:
            if select.find(exp.Subquery, exp.Exists) is None:
                self.qb.child().bind(select)  # raises what is undefined, as written
            raise errors.FeatureNotSupported(
                "correlated subqueries whose outer references are nested in a subquery")
        dom = subquery_domain.domain(self.node, positions)
        if ctes:
            subquery_ctes.rewrite(derived, ctes, positions, subquery_domain.DOMAIN,
                                  subquery_domain.domain_column)
        derived = subquery_domain.rewrite(derived, refs, positions, plain)
        qb = self.qb.child()
        qb.with_relation(subquery_domain.DOMAIN, dom, tuple(f.name for f in dom.fields))
        try:
            bq = qb.bind(derived)
        except _CORRELATED:
            if derived.find(exp.Subquery, exp.Exists) is not None:
                raise errors.FeatureNotSupported(
                    "subqueries nested in a correlated subquery") from None
            raise
        k = len(positions)
        preds = subquery_domain.join_back_keys(self.node.fields, positions,
                                               len(self.scope.columns), bq.node.fields)
        return self._join_back(bq.node, preds, k, plain, value, k + 1)

    def _join_back(self, derived: pl.Node, preds, n_keys: int, plain: bool,
                   value: exp.Expression, matched: int) -> ex.Expr:
        """LEFT join the grouped subquery `derived` (its keys, then its value and, for a
        plain value, its row count) to the outer rows on `preds`; the subquery's value.
        An outer row with no inner rows gets the aggregate's value over no rows (count()
        is 0), not the NULL of the unmatched join: column `matched` of `derived` is NULL
        exactly for such rows."""
        base = len(self.scope.columns)
        fields = derived.fields
        new_cols = [ScopeColumn(None, f"?subquery{base}_{i}", f.type, hidden=True)
                    for i, f in enumerate(fields)]
        gscope = Scope(self.scope.columns + new_cols)
        planner = bind_join.JoinPlanner(gscope)
        part = planner.join(bind_join.Part(self.node, list(range(base))),
                            bind_join.Part(derived, list(range(base, base + len(fields)))),
                            pl.JoinType.LEFT, preds)
        self.node = self._trim(bind_join.output_project(part, len(gscope.columns), gscope),
                               len(gscope.columns))
        self.scope.columns.extend(new_cols)
        f = fields[n_keys]
        value_ref = ex.ColumnRef(base + n_keys, f.type, "?subquery")
        if plain:
            rows = ex.ColumnRef(base + n_keys + 1, fields[n_keys + 1].type)
            return ex.Call(ex.Func.ONE_ROW, (rows, value_ref), f.type)
        empty = self._over_no_rows(value, f.type)
        if empty is None:
            return value_ref
        unmatched = ex.IsNull(ex.ColumnRef(base + matched, fields[matched].type), False)
        return functions.bind_case([(unmatched, empty)], value_ref)

    def _over_no_rows(self, value: exp.Expression, t: types.SqlType) -> ex.Expr | None:
        """The constant `value` (an expression over aggregates) has when they aggregate
        no rows, cast to `t`; None when that is NULL."""
        try:
            e = ExprBinder(Scope([]), self.qb.params).bind(over_no_rows(value))
        except errors.QueryError:
            raise errors.FeatureNotSupported(
                "correlated scalar subqueries whose value uses columns outside its aggregates") from None
        e = functions.fold_constants(functions.bind_cast(e, t) if e.type != t else e)
        if isinstance(e, ex.Literal) and e.value is None:
            return None
        if not isinstance(e, ex.Literal):
            raise errors.FeatureNotSupported("correlated scalar subqueries of this form")
        return e


def _python_value(v, t: types.SqlType):
    """A value read from a result batch as the Python value a Literal of `t` holds."""
    if v is None:
        return None
    if t.is_array:  # planner/values.py: a tuple of the elements' values
        return tuple(_python_value(e, t.element) for e in v)
    if t.is_dynamic and isinstance(v, dict):
        return from_value_and_scale(v)
    if t.is_scaled_int and isinstance(v, int):
        return decimal.Decimal(v).scaleb(-t.scale)
    return v
