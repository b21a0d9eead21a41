"""Views read in FROM: the view's query bound anew, as a subquery with the view's columns.

PostgreSQL rewrites a view reference into its stored query tree; raympp keeps the query's
text (planner.schema.ViewDef) and binds it wherever the view is read: in a binder of its
own (the outer query's CTEs and parameters are not the view's), with names resolved
through the search path of the view's creation (`CatalogView.for_view`). The result is
the view's columns, fixed at creation. When the query now yields other columns (a
`SELECT *` over a view that was replaced with columns added, which CREATE OR REPLACE
allows), the view's own are picked by the names the query gave them at creation, as
PostgreSQL's stored tree keeps reading the columns it was made with; but only where the
extra columns cannot have changed the rows: a query with DISTINCT, a set operation,
positional ORDER BY / GROUP BY or a star inside an expression is refused (0A000: the
view must be recreated) rather than answered differently. A view whose expansion reaches
itself (CREATE OR REPLACE VIEW v AS ... FROM v) fails as PostgreSQL's rewriter does
(42P17).
"""

from __future__ import annotations

import functools

from sqlglot import exp

from planner import errors, functions, types
from planner import expr as ex
from planner import plan as pl
from planner import statements
from planner.schema import ViewDef


@functools.lru_cache(maxsize=256)
def _parsed(query: str) -> exp.Expression:
    return statements.parse_one(query)


def parse(query: str) -> exp.Expression:
    """A view's query parsed (a copy of the one kept: binding may change a tree)."""
    return _parsed(query).copy()


def bind_view(binder, view: ViewDef) -> pl.Node:
    """The rows of `view` for `binder` (a planner.bind.QueryBinder), its columns the
    view's."""
    if view.id in binder.expanding:
        raise errors.QueryError(
            f'infinite recursion detected in rules for relation "{view.name}"', "42P17")
    catalog = binder.catalog
    for_view = getattr(catalog, "for_view", None)
    inner = binder.view_binder(for_view(view) if for_view is not None else catalog, view.id)
    tree = parse(view.query)
    bq = inner.bind(tree)
    # Its names resolve by schema name and search_path each time, where PostgreSQL's view
    # holds the relations' oids: a name that finds another relation now (one created
    # since in a schema searched earlier) is refused rather than read.
    moved = [r for r in inner.reads if r.id not in view.depends]
    if moved:
        raise _changed(view, f'"{moved[0].name}" names another relation now')
    return project(view, bq.node, bq.names, tree)


def project(view: ViewDef, node: pl.Node, names: tuple[str, ...],
            tree: exp.Expression) -> pl.Node:
    """`node` (the view's query `tree` bound now, its output `names`) as the view's
    columns."""
    if len(names) == len(view.columns):
        positions = list(range(len(names)))
    else:
        if not rows_kept(tree):
            raise _changed(view, "the relations it reads have other columns now")
        positions = []
        for n in view.query_names:
            found = [i for i, m in enumerate(names) if m == n]
            if len(found) != 1:
                raise _changed(view, f'its query yields {"no" if not found else "more than one"}'
                               f' column "{n}" now')
            positions.append(found[0])
    if positions == list(range(len(node.fields))) and all(
            f.name == c.name and f.type == c.type for f, c in zip(node.fields, view.columns)):
        return node  # the query's columns are the view's: no projection to add
    exprs = []
    for col, p in zip(view.columns, positions):
        e: ex.Expr = ex.ColumnRef(p, node.fields[p].type, names[p])
        if e.type != col.type:
            if e.type.kind is not types.Kind.UNKNOWN:
                raise _changed(view, f'its column "{col.name}" is {e.type} now, not {col.type}')
            e = functions.bind_cast(e, col.type)  # an unknown literal: text, as at creation
        exprs.append(e)
    return pl.Project(node, tuple(exprs), tuple(pl.Field(c.name, c.type) for c in view.columns))


def rows_kept(tree: exp.Expression) -> bool:
    """Whether columns added to what the query's stars read change nothing but its
    output columns: no DISTINCT, set operation, positional ORDER BY / GROUP BY, nor a
    star other than a select list item (or count(*))."""
    if tree.find(exp.Distinct, exp.Union, exp.Intersect, exp.Except) is not None:
        return False
    for clause in tree.find_all(exp.Order, exp.Group):
        for item in clause.expressions:
            key = item.this if isinstance(item, exp.Ordered) else item
            if isinstance(key, exp.Literal) and not key.is_string:
                return False
    for star in tree.find_all(exp.Star):
        item = star.parent if isinstance(star.parent, exp.Column) else star
        if not isinstance(item.parent, (exp.Select, exp.Count)):
            return False
    return True


def _changed(view: ViewDef, why: str) -> errors.QueryError:
    return errors.FeatureNotSupported(
        f'view "{view.name}" cannot be read: {why}',
        hint=f'Recreate the view (CREATE OR REPLACE VIEW {view.name} ...).')
