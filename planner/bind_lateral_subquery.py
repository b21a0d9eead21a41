"""LATERAL subqueries in FROM that read the FROM items before them, decorrelated into joins.

`FROM l..., LATERAL (SELECT ... l.c ...) s` is the subquery evaluated once per row of the
items before it (l). As for correlated scalar subqueries (subquery_domain.py), it is
evaluated once per distinct value of the columns of l it reads, all at once:

    D = SELECT DISTINCT c1..ck FROM l                  -- the domain of those columns
    R = SELECT <its list>, D.c1..D.ck FROM D, <its FROM> WHERE <its WHERE>
                                                       -- l's columns read D's instead
    l [LEFT] JOIN R ON (c1..ck) IS NOT DISTINCT FROM (R.c1..R.ck) [AND <ON condition>]

so its conditions on l (equalities or not) become ordinary join conditions between D and
its own relations. What is per outer row in the subquery is made per D row in R:
GROUP BY also groups by D's columns, DISTINCT (ON) de-duplicates within each, window
functions are partitioned by them, and LIMIT / OFFSET keep the rows that row_number()
over D's columns (in the subquery's ORDER BY) numbers within bounds (FETCH ... WITH
TIES: the rank bounds the upper end, so the last row's peers stay). An aggregate without
GROUP BY gives one row per outer row even where nothing matches: R is grouped by D's
columns, LEFT joined to l, and the rows it has no group for take the list's value over
no rows (count() 0, other aggregates NULL; HAVING likewise, and it decides whether the
row is there). bind.py's _lateral_parts places the join in the FROM clause; set-
returning functions that read earlier items are bind_lateral.py's.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from planner import (bind_join, errors, functions, grouping_sets, lateral_values,
                     subquery_domain, types)
from planner import expr as ex
from planner import plan as pl
from planner.bind_expr import ExprBinder, find_aggregate, over_no_rows
from planner.schema import identifier
from planner.scope import Scope, ScopeColumn

_CORRELATED = (errors.UndefinedColumn, errors.UndefinedTable)
_SET_OPERATIONS = (exp.Union, exp.Intersect, exp.Except)
_DOMAIN = subquery_domain.DOMAIN
_MATCHED = "?matched"
_HAVING = "?having"
_RANK = "?rn"
_TIES = "?rk"


@dataclass(frozen=True, slots=True)
class Item:
    """A LATERAL subquery that reads earlier FROM items: its columns start at `base` in
    the FROM's scope; `positions` are the earlier columns it reads (D's, in order);
    `query` is the subquery rewritten to read D (its list's columns, then a HAVING
    column where `having`, D's columns, then for `one_row` a column true where R has a
    group, for `bounds` (offset, limit, with ties) a row number, and with ties a rank);
    `empties` are the list's values
    over no rows, reading D's columns (`one_row` only)."""

    base: int
    columns: tuple[ScopeColumn, ...]
    positions: tuple[int, ...]
    query: exp.Select
    one_row: bool
    having: bool
    bounds: tuple[int, int | None, bool] | None
    empties: tuple[exp.Expression, ...]
    grand_total: bool  # `one_row` from an empty grouping set: other rows too
    table: str  # an earlier item it reads, for PostgreSQL's 42P10 on RIGHT / FULL joins


def is_subquery(rel: exp.Expression) -> bool:
    """Whether a FROM item is LATERAL (subquery)."""
    return isinstance(rel, exp.Lateral) and isinstance(rel.this, exp.Subquery)


def derived(rel: exp.Lateral) -> exp.Subquery:
    """`LATERAL (query) AS a(...)` as the derived table `(query) AS a(...)`."""
    _alias_of(rel)
    sub = rel.this.copy()
    sub.set("alias", rel.args["alias"].copy())
    return sub


def _alias_of(rel: exp.Lateral) -> tuple[str, list[str]]:
    alias = rel.args.get("alias")
    if alias is None or not alias.name:
        raise errors.SyntaxError_("subquery in FROM must have an alias",
                                  hint="For example, FROM (SELECT ...) [AS] foo.")
    name = alias.this.name if alias.this.quoted else alias.name.lower()
    return name, [c.name if c.quoted else c.name.lower() for c in alias.columns]


def describe(qb, rel: exp.Lateral, before: Scope, base: int) -> Item | None:
    """The LATERAL subquery `rel` over the columns `before` it, or None when it reads
    none of them (then it is a derived table like any other)."""
    alias, col_aliases = _alias_of(rel)
    body = _unwrapped(rel.this.this)
    probe = qb.child()
    probe.run_plan = None  # types only: no InitPlan runs twice
    try:
        probe.bind(body)
        return None
    except _CORRELATED as e:
        undefined = e
    body = lateral_values.as_selects(body)
    set_op = isinstance(body, _SET_OPERATIONS)
    refs = set_refs(probe, body, before) if set_op else select_refs(probe, body, before)
    positions = sorted({i for _, i in refs})
    if not positions:
        raise undefined  # reads no earlier item: undefined, or the enclosing query's
    table = before.columns[positions[0]].qualifier or ""
    for col, i in refs:
        d = subquery_domain.domain_column(positions.index(i))
        # A list item keeps its name (the earlier item's column's), not D's.
        col.replace(exp.alias_(d, identifier(col.this), quoted=True)
                    if isinstance(col.parent, exp.Select) and col.arg_key == "expressions"
                    else d)
    placeholder = pl.Values(rows=(), fields=tuple(
        pl.Field(f"k{j}", before.columns[i].type) for j, i in enumerate(positions)))
    sub = probe.child()
    sub.with_relation(_DOMAIN, placeholder, tuple(f.name for f in placeholder.fields))
    if set_op:
        query, bounds = _rewrite_set(qb, sub, body, len(positions))
        one_row, having, empties, grand_total = False, False, (), False
    else:
        grouped = body.args.get("group") is not None
        query, one_row, having, bounds, empties = _rewrite(qb, body, len(positions))
        grand_total = one_row and grouped
    try:
        bq = sub.bind(query.copy())
    except _CORRELATED:
        if query.find(exp.Subquery, exp.Exists, exp.With) is not None:
            raise errors.FeatureNotSupported(
                "LATERAL subqueries whose nested subqueries or WITH queries read other "
                "FROM items") from None
        raise
    width = len(bq.node.fields) - len(positions) - int(having) - int(one_row) \
        - (0 if bounds is None else 1 + int(bounds[2]))
    if len(col_aliases) > width:
        raise errors.QueryError(f'table "{alias}" has {width} columns available but '
                                f"{len(col_aliases)} columns specified", "42P10")
    names = col_aliases + list(bq.names[len(col_aliases):width])
    columns = tuple(ScopeColumn(alias, n, f.type) for n, f in zip(names, bq.node.fields))
    return Item(base, columns, tuple(positions), query, one_row, having, bounds, empties,
                grand_total, table)


def select_refs(qb, select: exp.Select, before: Scope) -> list[tuple[exp.Column, int]]:
    """The references of `select` (its own and its nested subqueries') to the columns
    `before` it, with their positions; its FROM subqueries holding any become LATERAL."""
    nested = nested_references(qb, select, before)
    lateral_from_subqueries(select, [c for c, _ in nested])
    inner = subquery_domain.inner_scope(qb, select, before)
    return subquery_domain.outer_references(select, inner, before, qb.params) + nested


def set_refs(qb, tree: exp.Expression, before: Scope) -> list[tuple[exp.Column, int]]:
    """select_refs of every SELECT that is an operand of the set operation `tree`."""
    if isinstance(tree, _SET_OPERATIONS):
        return set_refs(qb, tree.this, before) + set_refs(qb, tree.expression, before)
    if isinstance(tree, exp.Subquery):
        return set_refs(qb, tree.this, before)
    return select_refs(qb, tree, before)


_MODIFIERS = ("order", "limit", "offset")


def _unwrapped(body: exp.Expression) -> exp.Expression:
    """The query in parentheses `body`, with the ORDER BY / LIMIT / OFFSET written
    after the parentheses moved onto it (a copy when there are any)."""
    while isinstance(body, (exp.Paren, exp.Subquery)):
        outer = {k: body.args[k] for k in _MODIFIERS if body.args.get(k) is not None}
        body = body.this
        if outer:
            if any(body.args.get(k) is not None for k in _MODIFIERS):
                raise errors.FeatureNotSupported(
                    "a LATERAL (query) with ORDER BY or LIMIT both inside and after its "
                    "parentheses")
            body = body.copy()
            for k, v in outer.items():
                body.set(k, v.copy())
    return body


def nested_references(qb, select: exp.Select, before: Scope) -> list[tuple[exp.Column, int]]:
    """The column references inside subqueries nested in `select` that read an earlier
    FROM item, with their positions in `before`: qualified by a name no FROM item of a
    query between them and `select` (inclusive) has, or unqualified and a column of
    none of those FROM clauses."""
    found, scopes = [], {}

    def own_column(s: exp.Select, name: str) -> bool:
        if id(s) not in scopes:
            try:
                scopes[id(s)] = subquery_domain.inner_scope(qb, s, Scope([]))
            except errors.QueryError:
                scopes[id(s)] = None
        scope = scopes[id(s)]
        return scope is None or any(c.name == name for c in scope.columns)

    for col in select.find_all(exp.Column):
        if col.args.get("db") is not None or isinstance(col.this, exp.Star):
            continue
        chain, p = [], col.parent
        while p is not None and p is not select:
            if isinstance(p, exp.Select):
                chain.append(p)
            p = p.parent
        if not chain:
            continue  # select's own: subquery_domain.outer_references
        name = identifier(col.this)
        q = identifier(col.args["table"]) if col.table else None
        if q is not None and any(q in _item_names(s) for s in chain + [select]):
            continue
        if q is None and any(own_column(s, name) for s in chain + [select]):
            continue
        try:
            found.append((col, before.resolve(name, q)))
        except _CORRELATED:
            continue
    return found


def _item_names(select: exp.Select) -> set[str]:
    """The names a query's FROM items are referenced by."""
    from_ = select.args.get("from_") or select.args.get("from")
    rels = ([from_.this] if from_ is not None else []) + [
        j.this for j in select.args.get("joins") or []]
    names = set()
    for rel in rels:
        alias = rel.args.get("alias")
        if alias is not None and alias.name:
            names.add(identifier(alias.this))
        elif isinstance(rel, exp.Table) and isinstance(rel.this, exp.Identifier):
            names.add(identifier(rel.this))
    return names


def lateral_from_subqueries(select: exp.Select, cols: list[exp.Column]) -> None:
    """Make the FROM subqueries of `select` that hold any of `cols` (references to
    earlier FROM items, about to read D, which is an item of the same FROM) LATERAL."""
    from_ = select.args.get("from_") or select.args.get("from")
    rels = ([from_.this] if from_ is not None else []) + [
        j.this for j in select.args.get("joins") or []]
    for rel in rels:
        if isinstance(rel, exp.Subquery) and any(_within(c, rel) for c in cols):
            alias = rel.args.get("alias")
            rel.replace(exp.Lateral(this=exp.Subquery(this=rel.this),
                                    alias=alias.copy() if alias is not None else None))


def _within(node: exp.Expression, top: exp.Expression) -> bool:
    p = node.parent
    while p is not None:
        if p is top:
            return True
        p = p.parent
    return False


def _rewrite_set(qb, sub, tree: exp.Expression, n_keys: int):
    """R for a set operation whose operands read D: each operand (a SELECT or a
    parenthesized query) becomes `SELECT "?l".*, D's columns FROM D CROSS JOIN LATERAL
    (operand) "?l"`, so the set operation sees D's columns as columns of every row and
    de-duplicates, intersects and subtracts within each D row. Its own ORDER BY with
    LIMIT / OFFSET is a row number over D's columns, as for a SELECT: (query, bounds)."""
    tree = tree.copy()
    modifiers = {k: tree.args.get(k) for k in ("order", "limit", "offset")}
    for k in modifiers:
        tree.set(k, None)
    keys = [exp.alias_(subquery_domain.domain_column(j), f"?k{j}", quoted=True)
            for j in range(n_keys)]

    def operands(node):
        if isinstance(node, _SET_OPERATIONS):
            operands(node.this)
            operands(node.expression)
            return
        operand = exp.select(exp.column(exp.Star(), "?l", quoted=True), *[k.copy() for k in keys])
        operand = operand.from_(exp.Table(this=exp.to_identifier(_DOMAIN, quoted=True))).join(
            exp.Lateral(this=exp.Subquery(this=node.copy()),
                        alias=exp.TableAlias(this=exp.to_identifier("?l", quoted=True))),
            join_type="CROSS")
        node.replace(operand)

    operands(tree)
    ties = _with_ties(exp.Select(limit=modifiers["limit"]))
    try:
        limit, offset = qb._limit(exp.Select(**{k: v for k, v in modifiers.items() if v}))
    except _CORRELATED:
        raise errors.FeatureNotSupported("LIMIT or OFFSET reading other FROM items in a "
                                         "LATERAL subquery") from None
    if limit is None and not offset:
        return tree, None  # ORDER BY alone orders nothing that the join keeps
    names = sub.bind(tree.copy()).names
    orders = []
    for o in modifiers["order"].expressions if modifiers["order"] is not None else []:
        o = o.copy()
        t = o.this
        if isinstance(t, exp.Literal) and not t.is_string and t.name.isdigit():
            p = int(t.name)
            if not 1 <= p <= len(names) - n_keys:
                raise errors.QueryError(f"ORDER BY position {p} is not in select list",
                                        "42P10")
            if names.count(names[p - 1]) > 1:
                raise errors.FeatureNotSupported(
                    "ORDER BY the position of a column whose name repeats in a LATERAL set "
                    "operation with LIMIT")
            o.set("this", exp.column(names[p - 1], "?r", quoted=True))
        orders.append(o)
    ranks = _ranks([exp.column(f"?k{j}", "?r", quoted=True) for j in range(n_keys)],
                   orders, ties)
    query = exp.select(exp.column(exp.Star(), "?r", quoted=True), *ranks).from_(
        exp.Subquery(this=tree, alias=exp.TableAlias(this=exp.to_identifier("?r", quoted=True))))
    return query, (offset, limit, ties)


def _ranks(partition: list[exp.Expression], orders: list[exp.Ordered],
           ties: bool) -> list[exp.Expression]:
    """The row number that LIMIT / OFFSET bound, within each D row in the subquery's
    order; with WITH TIES also the rank, which extends the last row kept to its peers."""
    if ties and not orders:
        raise errors.SyntaxError_("WITH TIES cannot be specified without ORDER BY clause")
    out = []
    for fn, name in [(exp.RowNumber(), _RANK)] + ([(exp.Rank(), _TIES)]
                                                   if ties else []):
        w = exp.Window(this=fn, partition_by=[k.copy() for k in partition],
                       order=exp.Order(expressions=[o.copy() for o in orders])
                       if orders else None, over="OVER")
        out.append(exp.alias_(w, name, quoted=True))
    return out


def _rewrite(qb, select: exp.Select, n_keys: int):
    """R (see the module docstring) from the subquery whose outer references already
    read D's columns: (query, one_row, having, bounds, empties)."""
    keys = [subquery_domain.domain_column(j) for j in range(n_keys)]
    group = select.args.get("group")
    # Grouping sets with the empty set, like an aggregate without GROUP BY, give a row
    # (the grand total) for every outer row, also where nothing matches.
    set_keys = grouping_sets.expand(group)[0] if grouping_sets.has_sets(group) else None
    grand_total = set_keys is not None and any(
        not s for s in grouping_sets.expand(group)[1])
    items = list(select.expressions)
    order = select.args.get("order")
    order_items = list(order.expressions) if order is not None else []
    one_row = grand_total or group is None and (
        any(find_aggregate(e) for e in items) or select.args.get("having") is not None
        or any(find_aggregate(o.this) for o in order_items))
    for w in _own(select, exp.Window):
        if one_row:
            raise errors.FeatureNotSupported("window functions in LATERAL subqueries that "
                                             "aggregate without GROUP BY or with an empty "
                                             "grouping set")
        if w.args.get("alias") is None:  # `OVER w`, `OVER (w ...)`: w's PARTITION BY
            w.set("partition_by", [k.copy() for k in keys]
                  + list(w.args.get("partition_by") or []))
    try:
        limit, offset = qb._limit(select)
    except _CORRELATED:
        raise errors.FeatureNotSupported("LIMIT or OFFSET reading other FROM items in a "
                                         "LATERAL subquery") from None
    ties = _with_ties(select)
    from_ = select.args.get("from_") or select.args.get("from")
    joins = [exp.Join(this=from_.this)] + list(select.args.get("joins") or []) \
        if from_ is not None else []
    select.set("from_" if "from_" in select.arg_types else "from",
               exp.From(this=exp.Table(this=exp.to_identifier(_DOMAIN, quoted=True))))
    select.set("joins", joins or None)
    key_items = [exp.alias_(k.copy(), f"?k{j}", quoted=True) for j, k in enumerate(keys)]
    select.set("limit", None)
    select.set("offset", None)
    if one_row:
        having = select.args.get("having")
        cond = having.this.copy() if having is not None else None
        if grand_total and (limit is not None or offset or select.args.get("distinct")):
            raise errors.FeatureNotSupported(
                "DISTINCT, LIMIT or OFFSET with grouping sets that include the empty set "
                "in LATERAL subqueries that read other FROM items")
        if limit == 0 or offset > 0:  # its one row is never there
            cond = exp.false()
        select.set("having", None)
        if group is None:
            select.set("group", exp.Group(expressions=[k.copy() for k in keys]))
        else:
            group.set("expressions", list(group.expressions) + [k.copy() for k in keys])
        extra = [exp.alias_(cond, _HAVING, quoted=True)] if cond is not None else []
        empties = tuple(_over_no_rows(e, set_keys or []) for e in items + [e.this for e in extra])
        select.set("expressions", items + extra + key_items
                   + [exp.alias_(exp.true(), _MATCHED, quoted=True)])
        return select, True, cond is not None, None, empties
    if group is not None:
        group.set("expressions", list(group.expressions) + [k.copy() for k in keys])
    distinct = select.args.get("distinct")
    if distinct is not None and distinct.args.get("on") is not None:
        on = distinct.args["on"]
        on.set("expressions", [k.copy() for k in keys] + list(on.expressions))
        ordered = [exp.Ordered(this=k.copy(), nulls_first=False) for k in keys]
        select.set("order", exp.Order(expressions=ordered + order_items))
    bounds = None
    if limit is not None or offset:
        window_order = _window_order(items, order_items)
        if distinct is not None:
            _distinct_as_group(select, items, window_order, keys)
        bounds = (offset, limit, ties)
        key_items += _ranks(keys, window_order if order_items else [], ties)
        select.set("order", None)
    select.set("expressions", items + key_items)
    return select, False, False, bounds, ()


def _own(select: exp.Select, kind) -> list[exp.Expression]:
    """The `kind` nodes of `select` itself, not of subqueries nested in it."""
    out = []
    for node in select.find_all(kind):
        p = node.parent
        while p is not None and p is not select and not isinstance(p, (exp.Select, exp.Subquery)):
            p = p.parent
        if p is select:
            out.append(node)
    return out


def _with_ties(select: exp.Select) -> bool:
    lim = select.args.get("limit")
    opts = lim.args.get("limit_options") if isinstance(lim, exp.Fetch) else None
    return opts is not None and bool(opts.args.get("with_ties"))


def _window_order(items: list[exp.Expression], order_items) -> list[exp.Ordered]:
    """The subquery's ORDER BY as a window's: positions and output names (which ORDER BY
    reads before input columns) become the list's expressions."""
    out = []
    for o in order_items:
        o = o.copy()
        t = o.this
        if isinstance(t, exp.Literal) and not t.is_string and t.name.isdigit():
            p = int(t.name)
            if any(isinstance(e, exp.Star) or isinstance(e.this, exp.Star) for e in items):
                raise errors.FeatureNotSupported(
                    "ORDER BY a position of SELECT * in LATERAL subqueries with LIMIT")
            if not 1 <= p <= len(items):
                raise errors.QueryError(f"ORDER BY position {p} is not in select list",
                                        "42P10")
            o.set("this", _unaliased(items[p - 1]).copy())
        elif isinstance(t, exp.Column) and not t.table:
            name = t.name if t.this.quoted else t.name.lower()
            match = [e for e in items if isinstance(e, exp.Alias) and name == (
                e.alias if e.args["alias"].quoted else e.alias.lower())]
            if match:
                o.set("this", match[0].this.copy())
        out.append(o)
    return out


def _unaliased(e: exp.Expression) -> exp.Expression:
    return e.this if isinstance(e, exp.Alias) else e


def _distinct_as_group(select: exp.Select, items, window_order, keys) -> None:
    """SELECT DISTINCT with LIMIT as GROUP BY its list (the same rows), so that the row
    number, computed after grouping and before DISTINCT, numbers distinct rows.
    PostgreSQL orders such a query only by expressions of its list."""
    if select.args["distinct"].args.get("on") is not None:
        raise errors.FeatureNotSupported("DISTINCT ON with LIMIT or OFFSET in LATERAL "
                                         "subqueries that read other FROM items")
    if select.args.get("group") is not None or any(
            find_aggregate(e) or e.find(exp.Window) or isinstance(_unaliased(e), exp.Star)
            or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
            for e in items):
        raise errors.FeatureNotSupported(
            "SELECT DISTINCT with GROUP BY, aggregates, window functions or * and LIMIT "
            "in LATERAL subqueries that read other FROM items")
    listed = [_unaliased(e) for e in items]
    if any(all(o.this != e for e in listed) for o in window_order):
        raise errors.FeatureNotSupported(
            "ORDER BY expressions not written as in the select list of a SELECT DISTINCT "
            "with LIMIT in a LATERAL subquery")
    select.set("distinct", None)
    select.set("group", exp.Group(expressions=[exp.Literal.number(p + 1)
                                               for p in range(len(items))]
                                  + [k.copy() for k in keys]))


def _over_no_rows(item: exp.Expression, set_keys: list[exp.Expression]) -> exp.Expression:
    """A list item's value over no rows: count() is 0, other aggregates NULL, and in
    the empty grouping set (`set_keys`: the grouping sets' keys) those keys NULL and
    grouping(...) all ones; what stays reads D's columns (the outer row's, at the join)."""
    def rolled_up(node):
        if isinstance(node, exp.Grouping):
            return exp.Literal.number(2 ** len(node.expressions) - 1)
        if any(node == k for k in set_keys):
            return exp.Null()
        return node
    item = _unaliased(item)
    if set_keys:
        item = item.transform(rolled_up, copy=True)
    return over_no_rows(item)


def bound(qb, item: Item, domain: pl.Node) -> pl.Node:
    """R over the real domain `domain`: the subquery's columns, then the extra columns
    Item describes (the row number applied and dropped)."""
    sub = qb.child()
    sub.with_relation(_DOMAIN, domain, tuple(f.name for f in domain.fields))
    node = sub.bind(item.query.copy()).node
    if item.bounds is None:
        return node
    offset, limit, ties = item.bounds
    rn_i = len(node.fields) - 1 - int(ties)
    rn = ex.ColumnRef(rn_i, node.fields[rn_i].type, _RANK)
    conds = [functions.bind_call(ex.Func.GT, [rn, ex.Literal(offset, types.INT8)])]
    if limit is not None:
        # WITH TIES: a row past the last one kept is its peer exactly when its rank (one
        # more than the rows before it) is within the bound too.
        last = ex.ColumnRef(rn_i + 1, node.fields[rn_i + 1].type, _TIES) if ties else rn
        conds.append(functions.bind_call(ex.Func.LE, [last, ex.Literal(offset + limit,
                                                                        types.INT8)]))
    node = pl.Filter(node, bind_join.conjoin(conds), node.fields)
    keep = node.fields[:rn_i]
    return pl.Project(node, tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(keep)),
                      keep)


def check_join(join: exp.Join) -> bool:
    """Whether a LATERAL subquery that reads earlier items is LEFT joined by `join` (its
    ON, USING or NATURAL condition is bound with the FROM's other joins)."""
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if side in ("RIGHT", "FULL"):
        return False  # the caller raises PostgreSQL's 42P10
    if kind not in ("", "CROSS", "INNER", "OUTER"):
        raise errors.FeatureNotSupported(f"{kind} JOIN to a LATERAL subquery")
    return side == "LEFT"


def invalid_join(item: Item) -> errors.QueryError:
    """PostgreSQL's error for a RIGHT or FULL join to a LATERAL subquery reading the
    items on its left."""
    return errors.QueryError(
        f'invalid reference to FROM-clause entry for table "{item.table}"', "42P10",
        detail="The combining JOIN type must be INNER or LEFT for a LATERAL reference.")


def join(qb, left: pl.Node, item: Item, before: list[ScopeColumn], outer: bool,
         on: list[ex.Expr]) -> pl.Node:
    """The join of `left` (the FROM items before the subquery, columns `before`) with
    the subquery's rows: its columns follow left's. `on` (conditions over those columns)
    decides which rows join; with `outer` a left row none joins keeps NULLs (LEFT JOIN)."""
    base, width = item.base, len(item.columns)
    dom = subquery_domain.domain(left, list(item.positions))
    r = bound(qb, item, dom)
    n_keys = len(item.positions)
    keys_at = width + int(item.having)  # R's first key column
    extra = [ScopeColumn(None, f"?lateral{base}_{i}", f.type, hidden=True)
             for i, f in enumerate(r.fields[width:])]
    gscope = Scope(list(before) + list(item.columns) + extra)
    total = base + len(r.fields)
    preds = subquery_domain.join_back_keys(left.fields, list(item.positions), base + keys_at,
                                           r.fields[keys_at:keys_at + n_keys])
    planner = bind_join.JoinPlanner(gscope)
    lpart = bind_join.Part(left, list(range(base)))
    rpart = bind_join.Part(r, list(range(base, total)))
    if not item.one_row:
        jt = pl.JoinType.LEFT if outer else pl.JoinType.INNER
        part = planner.join(lpart, rpart, jt, preds + on)
        return bind_join.output_project(part, base + width, gscope)
    # One row per outer row: the groups R has, or the values over no rows.
    part = planner.join(lpart, rpart, pl.JoinType.LEFT, preds)
    node = bind_join.output_project(part, total, gscope)
    dscope = Scope([ScopeColumn(_DOMAIN, f"k{j}", left.fields[i].type)
                    for j, i in enumerate(item.positions)])
    to_left = dict(enumerate(item.positions))
    missing = ex.IsNull(ex.ColumnRef(total - 1, node.fields[total - 1].type), False)
    values = []
    for j, tree in enumerate(item.empties):
        f = r.fields[j]
        ref = ex.ColumnRef(base + j, f.type, f.name)
        e = ex.map_columns(ExprBinder(dscope, qb.params).bind(tree), to_left)
        e = functions.fold_constants(functions.bind_cast(e, f.type) if e.type != f.type else e)
        values.append(ref if isinstance(e, ex.Literal) and e.value is None
                      else functions.bind_case([(missing, e)], ref))
    keep = [ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(node.fields[:base])]
    fields = tuple(node.fields[:base + len(values)])
    node = pl.Project(node, tuple(keep + values), fields)
    conds = [c for c in on if not (isinstance(c, ex.Literal) and c.value is True)]
    if item.having:
        conds.insert(0, ex.ColumnRef(base + width, types.BOOL, _HAVING))
    if outer and conds and item.grand_total:
        # A left row keeps NULLs only when none of its rows passes: not a per-row CASE.
        raise errors.FeatureNotSupported(
            "LEFT JOIN ... ON or HAVING with grouping sets that include the empty set in "
            "a LATERAL subquery that reads other FROM items")
    out = fields[:base + width]
    cond = bind_join.conjoin(conds)
    if cond is None:
        return node if len(fields) == len(out) else _project(node, out)
    if not outer:
        return _project(pl.Filter(node, functions.fold_constants(cond), fields), out)
    nulled = [functions.bind_case([(cond, ex.ColumnRef(base + j, f.type, f.name))], None)
              for j, f in enumerate(out[base:])]
    return pl.Project(node, tuple(keep + nulled), out)


def _project(node: pl.Node, fields) -> pl.Node:
    return pl.Project(node, tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields)),
                      tuple(fields))
