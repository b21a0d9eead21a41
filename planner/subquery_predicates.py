"""EXISTS, IN, ANY and ALL over a subquery anywhere in an expression, as scalar subqueries.

Where such a predicate is a condition AND-ed into WHERE, bind_subquery.py turns it into a
SEMI or ANTI join. Anywhere else (under OR or NOT, in the SELECT list, correlated IN) it
becomes a scalar subquery of one boolean, which bind_subquery.py runs once ahead when it
is uncorrelated and decorrelates otherwise:

    EXISTS (SELECT ... FROM f WHERE w)   ->  (SELECT count(*) > 0 FROM f WHERE w)
    x op ANY (SELECT v FROM f WHERE w)   ->  (SELECT CASE max(CASE WHEN x op v THEN 2
                                                  WHEN (x op v) IS NULL THEN 1 ELSE 0 END)
                                               WHEN 2 THEN true WHEN 1 THEN NULL
                                               ELSE false END FROM f WHERE w)

x op ALL (...) is the same fold with false and true swapped (any false row decides, then
any NULL). x IN (...), x = ANY (...) and x <> ALL (...) take `_membership`'s form
instead, whose equality becomes a hash join key. Over no rows the aggregate is NULL and
the answer false (ANY, EXISTS) or true (ALL), as SQL says. A row on the left,
(x1, ..., xn) op ANY|ALL (SELECT v1, ..., vn ...), folds the row comparison
(planner/row_comparison.py: PostgreSQL's, left to right, the first pair not equal
deciding) the
same way; row-valued IN / = ANY / <> ALL take `_row_membership`'s form. `x` belongs to the outer
query: its column references are replaced by markers of their outer positions
(subquery_domain.outer_marker), so a subquery column of the same name cannot capture them.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors, row_comparison
from planner import expr as ex
from planner.bind_expr import ExprBinder, find_aggregate
from planner.subquery_domain import outer_marker

_COMPARISONS = {exp.EQ: exp.EQ, exp.NEQ: exp.NEQ, exp.LT: exp.LT, exp.LTE: exp.LTE,
                exp.GT: exp.GT, exp.GTE: exp.GTE}


def quantified(node: exp.Expression) -> tuple[type, str, exp.Expression] | None:
    """(comparison class, 'any' | 'all', the subquery's SELECT) when `node` is
    `x op ANY|SOME|ALL (subquery)`; None otherwise."""
    if type(node) not in _COMPARISONS:
        return None
    q = node.expression
    if not isinstance(q, (exp.Any, exp.All)):
        return None
    inner = q.this
    while isinstance(inner, (exp.Paren, exp.Subquery)):
        inner = inner.this
    if not isinstance(inner, (exp.Select, exp.Union, exp.Intersect, exp.Except)):
        return None
    return type(node), ("all" if isinstance(q, exp.All) else "any"), inner


def is_predicate(node: exp.Expression) -> bool:
    """Whether `node` is EXISTS, IN or a quantified comparison over a subquery."""
    return isinstance(node, exp.Exists) or (
        isinstance(node, exp.In) and node.args.get("query") is not None) or \
        quantified(node) is not None


def scalar_form(node: exp.Expression, outer_scope, params, hook=None) -> exp.Expression:
    """What `node` (see is_predicate) equals: a scalar subquery of one boolean, or for
    x IN / = ANY / <> ALL an expression over scalar subqueries whose equality can be a
    join key (`_membership`). Above an Aggregate, `hook` (bind.py's) maps the left
    operand's aggregates and group keys to the Aggregate's output columns."""
    if isinstance(node, exp.Exists):
        select = _plain_select(node.this, "EXISTS", exists=True)
        select.set("expressions", [exp.GT(this=exp.Count(this=exp.Star()),
                                          expression=exp.Literal.number(0))])
        return exp.Subquery(this=select)
    if isinstance(node, exp.In):
        cmp, kind, query, x = exp.EQ, "any", node.args["query"], node.this
        what = "IN (subquery)"
    else:
        cmp, kind, query = quantified(node)
        x, what = node.this, f"{kind.upper()} (subquery)"
    select = _plain_select(query, what)
    row = _strip(x)
    membership = (cmp, kind) in ((exp.EQ, "any"), (exp.NEQ, "all"))
    if isinstance(row, exp.Tuple):
        if any(isinstance(e, exp.Star) or isinstance(e.this, exp.Star)
               for e in select.expressions):
            raise errors.FeatureNotSupported(f"row-valued {what} over SELECT * in this "
                                             "position")
        check_width(len(select.expressions), len(row.expressions))
        values = [e.this if isinstance(e, exp.Alias) else e for e in select.expressions]
        marked = [_outer(e, outer_scope, params, hook) for e in row.expressions]
        if membership:
            member = _row_membership(select, values, marked)
            return member if kind == "any" else exp.Not(this=exp.Paren(this=member))
        test = row_comparison.compare(cmp, marked, values)
    else:
        check_width(len(select.expressions), 1)
        value = select.expressions[0]
        value = value.this if isinstance(value, exp.Alias) else value
        marked = _outer(x, outer_scope, params, hook)
        if membership:
            member = _membership(select, value, marked)
            return member if kind == "any" else exp.Not(this=exp.Paren(this=member))
        test = cmp(this=marked, expression=value.copy())
    decides, other = (exp.false(), exp.true()) if kind == "all" else (exp.true(), exp.false())
    row = exp.Case(ifs=[exp.If(this=exp.Not(this=test.copy()) if kind == "all" else test.copy(),
                               true=exp.Literal.number(2)),
                        exp.If(this=exp.Is(this=exp.Paren(this=test.copy()), expression=exp.Null()),
                               true=exp.Literal.number(1))],
                   default=exp.Literal.number(0))
    fold = exp.Case(this=exp.Max(this=row),
                    ifs=[exp.If(this=exp.Literal.number(2), true=decides),
                         exp.If(this=exp.Literal.number(1), true=exp.Null())],
                    default=other)
    select.set("expressions", [fold])
    return exp.Subquery(this=select)


def _membership(select: exp.Select, value: exp.Expression, x: exp.Expression) -> exp.Expression:
    """x IN (SELECT value FROM ... WHERE w), with the equality a join key rather than a
    condition inside an aggregate: true when a row equals x; else NULL when x is NULL
    and there are rows, or when a row's value is NULL; else false."""
    def exists(extra):
        sub = select.copy()
        where = sub.args.get("where")
        cond = extra if where is None else exp.and_(exp.Paren(this=where.this.copy()), extra)
        sub.set("where", exp.Where(this=cond))
        sub.set("expressions", [exp.GT(this=exp.Count(this=exp.Star()),
                                       expression=exp.Literal.number(0))])
        return exp.Subquery(this=sub)
    # One subquery for what the rows are like when none equals x (one InitPlan, or one
    # decorrelated aggregate, rather than two): 0 none, 1 some and no NULL value, 2 some
    # with a NULL value.
    shape = select.copy()
    rows, values = exp.Count(this=exp.Star()), exp.Count(this=exp.Paren(this=value.copy()))
    shape.set("expressions", [exp.Case(ifs=[
        exp.If(this=exp.EQ(this=rows, expression=exp.Literal.number(0)),
               true=exp.Literal.number(0)),
        exp.If(this=exp.LT(this=values, expression=rows.copy()), true=exp.Literal.number(2))],
        default=exp.Literal.number(1))])
    x_null = exp.Is(this=exp.Paren(this=x.copy()), expression=exp.Null())
    otherwise = exp.Case(this=exp.Subquery(this=shape), ifs=[
        exp.If(this=exp.Literal.number(0), true=exp.false()),
        exp.If(this=exp.Literal.number(2), true=exp.Null())],
        default=exp.Case(ifs=[exp.If(this=x_null, true=exp.Null())], default=exp.false()))
    return exp.Case(ifs=[
        exp.If(this=exists(exp.EQ(this=value.copy(), expression=x.copy())), true=exp.true())],
        default=otherwise)


def check_width(columns: int, row: int) -> None:
    """The subquery of `row IN (subquery)` has as many columns as the row (42601)."""
    if columns != row:
        raise errors.SyntaxError_("subquery has too many columns" if columns > row
                                  else "subquery has too few columns")


def _row_membership(select: exp.Select, values: list[exp.Expression],
                    xs: list[exp.Expression]) -> exp.Expression:
    """(x1, ..., xn) IN (SELECT v1, ..., vn FROM ... WHERE w), PostgreSQL's row
    comparison: true when a row equals, every pair equal (the equalities are join keys);
    else NULL when a row compares NULL (no pair unequal, some pair NULL); else false."""
    def exists(cond):
        sub = select.copy()
        where = sub.args.get("where")
        sub.set("where", exp.Where(this=cond if where is None else exp.and_(
            exp.Paren(this=where.this.copy()), cond)))
        sub.set("expressions", [exp.GT(this=exp.Count(this=exp.Star()),
                                       expression=exp.Literal.number(0))])
        return exp.Subquery(this=sub)
    pairs = [exp.EQ(this=v.copy(), expression=x.copy()) for v, x in zip(values, xs)]
    not_false = [exp.Coalesce(this=exp.Paren(this=p.copy()), expressions=[exp.true()])
                 for p in pairs]
    return exp.Case(ifs=[exp.If(this=exists(exp.and_(*pairs)), true=exp.true()),
                         exp.If(this=exists(exp.and_(*not_false)), true=exp.Null())],
                    default=exp.false())


def _strip(tree: exp.Expression) -> exp.Expression:
    while isinstance(tree, exp.Paren):
        tree = tree.this
    return tree


def _plain_select(query: exp.Expression, what: str, exists: bool = False) -> exp.Select:
    """A copy of the subquery as one SELECT without what cannot change the answer
    (DISTINCT and ORDER BY; for EXISTS also a positive LIMIT without OFFSET). A set
    operation, or a SELECT that groups, aggregates, limits or has a WITH, becomes a
    derived table read by a plain SELECT of its columns."""
    while isinstance(query, (exp.Paren, exp.Subquery)):
        query = query.this
    if isinstance(query, exp.Select):
        distinct = query.args.get("distinct")
        limited = not no_op_limit(query) if exists else bool(
            query.args.get("limit") or query.args.get("offset"))
        if not (any(query.args.get(k) for k in ("group", "having", "with_", "with"))
                or any(find_aggregate(e) for e in query.expressions)
                or (distinct is not None and distinct.args.get("on")) or limited):
            out = query.copy()
            for k in ("distinct", "order", "limit"):
                out.set(k, None)
            return out
    return _derived(query, what)


def no_op_limit(select: exp.Select) -> bool:
    """Whether the LIMIT/OFFSET of a subquery cannot change whether it has rows: none,
    or LIMIT n with a constant n > 0 and no OFFSET. (Which rows it has, it can: only an
    existence test may ignore such a limit.)"""
    if select.args.get("offset") is not None:
        return False
    lim = select.args.get("limit")
    if lim is None:
        return True
    n = lim.expression if isinstance(lim, exp.Limit) else lim.args.get("count")
    return isinstance(n, exp.Literal) and not n.is_string and n.this.isdigit() and int(n.this) > 0


def _derived(query: exp.Expression, what: str) -> exp.Select:
    """SELECT "?s"."?c1", ... FROM (query) AS "?s"("?c1", ...)."""
    first = query
    while isinstance(first, (exp.Union, exp.Intersect, exp.Except)):
        first = first.this
    while isinstance(first, (exp.Paren, exp.Subquery)):
        first = first.this
    if not isinstance(first, exp.Select) or any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in first.expressions):
        raise errors.FeatureNotSupported(f"{what} over this subquery in this position")
    names = [f"?c{i}" for i in range(len(first.expressions))]
    alias = exp.TableAlias(this=exp.to_identifier("?s", quoted=True),
                           columns=[exp.to_identifier(n, quoted=True) for n in names])
    return exp.Select(expressions=[exp.column(n, "?s", quoted=True) for n in names],
                      **{"from" if "from" in exp.Select.arg_types else "from_": exp.From(
                          this=exp.Subquery(this=query.copy(), alias=alias))})


def _outer(x: exp.Expression, scope, params, hook=None) -> exp.Expression:
    """`x` with each column reference (and, through `hook`, each aggregate or group
    key) replaced by the marker of its outer position. An aggregate the hook binds by
    rewriting (`hook.rewrite`: avg of numerics, stddev, string_agg, ...) is replaced by
    its rewrite, whose plain aggregates are marked."""
    if x.find(exp.Subquery, exp.Select, exp.Exists) is not None or (
            hook is None and find_aggregate(x)):
        raise errors.FeatureNotSupported(
            "subqueries or aggregates on the left of IN/ANY/ALL (subquery) in this position")
    expand = getattr(hook, "rewrite", None)

    def mark(node):
        if hook is not None and not isinstance(node, (exp.Literal, exp.Null, exp.Boolean)):
            simple = expand(node) if expand is not None else None
            if simple is not None:
                return _outer(simple, scope, params, hook)
            ref = hook(node)
            if isinstance(ref, ex.ColumnRef):
                return outer_marker(scope, ref.index)
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            return outer_marker(scope, ExprBinder(scope, params).bind(node).index)
        return node
    return x.transform(mark, copy=True)


def is_array_subquery(node: exp.Expression) -> bool:
    """ARRAY(subquery)."""
    return isinstance(node, exp.Array) and len(node.expressions) == 1 and isinstance(
        node.expressions[0], (exp.Select, exp.Subquery, exp.Union, exp.Intersect, exp.Except))


def array_form(node: exp.Expression) -> exp.Subquery:
    """ARRAY(SELECT v FROM ... ORDER BY k) as the scalar subquery
    (SELECT COALESCE(array_agg(v ORDER BY k), '{}') FROM ...): its rows' values in its
    order, an empty array (not NULL) when it has none. A subquery that groups, limits,
    combines or de-duplicates is read as a derived table (then without ORDER BY)."""
    query = node.expressions[0]
    while isinstance(query, (exp.Paren, exp.Subquery)):
        query = query.this
    plain = isinstance(query, exp.Select) and not (
        any(query.args.get(k) for k in ("group", "having", "limit", "offset", "with_", "with",
                                         "distinct"))
        or any(find_aggregate(e) for e in query.expressions))
    if plain:
        select = query.copy()
    else:
        if query.args.get("order") is not None:
            raise errors.FeatureNotSupported(
                "ARRAY(subquery) with ORDER BY over a grouped, limited or combined subquery")
        select = _derived(query, "ARRAY(subquery)")
    if len(select.expressions) != 1:
        raise errors.SyntaxError_("subquery must return only one column")
    item = select.expressions[0]
    value = item.this if isinstance(item, exp.Alias) else item
    keys = []
    order = select.args.get("order")
    for o in (order.expressions if order is not None else []):
        k = o.this
        if isinstance(k, exp.Literal) and not k.is_string and k.this == "1":
            k = value  # ORDER BY 1: the one output column
        elif isinstance(k, exp.Column) and not k.table and isinstance(item, exp.Alias) \
                and k.name.lower() == item.alias.lower():
            k = value
        keys.append(exp.Ordered(this=k.copy(), desc=o.args.get("desc"),
                                nulls_first=o.args.get("nulls_first")))
    agg_arg = value.copy() if not keys else exp.Order(this=value.copy(), expressions=keys)
    select.set("order", None)
    select.set("expressions", [exp.Coalesce(this=exp.ArrayAgg(this=agg_arg),
                                            expressions=[exp.Literal.string("{}")])])
    return exp.Subquery(this=select)
