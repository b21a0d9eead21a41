"""VALUES lists that read columns, as SELECTs: how LATERAL (VALUES (t.a), (t.b)) decorrelates.

A VALUES list whose rows read other FROM items' columns (the unpivot idiom `CROSS JOIN
LATERAL (VALUES (t.a, 'a'), (t.b, 'b')) v(x, k)`) cannot be a Values leaf of constant
rows. It is the same rows as a SELECT over a constant list of row numbers:

    SELECT CASE "?i" WHEN 1 THEN t.a WHEN 2 THEN t.b END AS column1,
           CASE "?i" WHEN 1 THEN 'a' WHEN 2 THEN 'b' END AS column2
    FROM (VALUES (1), (2)) AS "?row"("?i")

which bind_lateral_subquery decorrelates like any LATERAL SELECT (D crossed with the
row numbers: one pass over the domain, no per-row evaluation). Each column's type is
the common type of its rows, as PostgreSQL resolves CASE and VALUES alike.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors

_ROW = "?row"
_INDEX = "?i"


def as_selects(tree: exp.Expression) -> exp.Expression:
    """`tree` (a copy) with every VALUES list that reads columns a SELECT: the tree
    itself when it is one, a FROM item's as a derived table of the same alias."""
    tree = tree.copy()
    if _reads_columns(tree):
        return values_select(tree)
    for values in [v for v in tree.find_all(exp.Values) if _reads_columns(v)]:
        alias = values.args.get("alias")
        select = values_select(values)
        if isinstance(values.parent, exp.Subquery) or alias is None:
            values.replace(select)
        else:
            values.replace(exp.Subquery(this=select, alias=alias.copy()))
    return tree


def _reads_columns(node: exp.Expression) -> bool:
    return isinstance(node, exp.Values) and node.find(exp.Column) is not None


def values_select(values: exp.Values) -> exp.Select:
    """The VALUES list `values` as a SELECT of the same rows, columns column1..n, with
    its ORDER BY / LIMIT / OFFSET."""
    rows = [list(r.expressions) if isinstance(r, exp.Tuple) else [r]
            for r in values.expressions]
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise errors.SyntaxError_("VALUES lists must all be the same length")
    index = exp.column(_INDEX, _ROW, quoted=True)
    items = []
    for c in range(width):
        value = rows[0][c].copy() if len(rows) == 1 else exp.Case(
            this=index.copy(), ifs=[exp.If(this=exp.Literal.number(r + 1), true=row[c].copy())
                                    for r, row in enumerate(rows)])
        items.append(exp.alias_(value, f"column{c + 1}"))
    select = exp.Select(expressions=items)
    if len(rows) > 1:
        numbers = exp.Values(
            expressions=[exp.Tuple(expressions=[exp.Literal.number(r + 1)])
                         for r in range(len(rows))],
            alias=exp.TableAlias(this=exp.to_identifier(_ROW, quoted=True),
                                 columns=[exp.to_identifier(_INDEX, quoted=True)]))
        select.set("from_" if "from_" in exp.Select.arg_types else "from",
                   exp.From(this=numbers))
    for k in ("order", "limit", "offset"):
        if values.args.get(k) is not None:
            select.set(k, values.args[k].copy())
    return select
