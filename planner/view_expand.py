"""Views read in FROM: the view's query bound anew, as a subquery with the view's columns.

PostgreSQL rewrites a view reference into its stored query tree; raympp keeps the query's
text (planner.schema.ViewDef) and binds it wherever the view is read: in a binder of its
own (the outer query's CTEs and parameters are not the view's), with names resolved
through the search path of the view's creation (`CatalogView.for_view`). The result is
the view's columns, fixed at creation: when the query now yields more columns (a view it
reads was replaced with columns added, which CREATE OR REPLACE allows), the view's own
are picked by the names the query gave them at creation, as PostgreSQL's stored tree
keeps reading the columns it was made with. A view whose expansion reaches itself (CREATE
OR REPLACE VIEW v AS ... FROM v) fails as PostgreSQL's rewriter does (42P17).
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
    bq = inner.bind(parse(view.query))
    return project(view, bq.node, bq.names)


def project(view: ViewDef, node: pl.Node, names: tuple[str, ...]) -> pl.Node:
    """`node` (the view's query bound now, its output `names`) as the view's columns."""
    if len(names) == len(view.columns):
        positions = list(range(len(names)))
    else:
        positions = []
        for n in view.query_names:
            found = [i for i, m in enumerate(names) if m == n]
            if len(found) != 1:
                raise errors.FeatureNotSupported(
                    f'view "{view.name}" cannot be read: its query now yields '
                    f'{"no" if not found else "more than one"} column "{n}"; recreate the view')
            positions.append(found[0])
    if positions == list(range(len(node.fields))) and all(
            f.name == c.name and f.type == c.type for f, c in zip(node.fields, view.columns)):
        return node  # the query's columns are the view's: no projection to add
    exprs = []
    for col, p in zip(view.columns, positions):
        e: ex.Expr = ex.ColumnRef(p, node.fields[p].type, names[p])
        if e.type != col.type:
            if e.type.kind is not types.Kind.UNKNOWN:
                raise errors.InternalError(
                    f'view "{view.name}": column "{col.name}" is {e.type} now, not {col.type}')
            e = functions.bind_cast(e, col.type)  # an unknown literal: text, as at creation
        exprs.append(e)
    return pl.Project(node, tuple(exprs), tuple(pl.Field(c.name, c.type) for c in view.columns))
