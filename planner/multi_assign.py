"""UPDATE's (and MERGE's) multiple-column assignment, `SET (a, b) = <source>`, as one value
per column; planner/modify.py `assignments` binds the columns.

PostgreSQL takes three sources: a row constructor, `(x, y)` or `ROW(x, y)` (its items go
to the columns in order, DEFAULT among them); and a sub-SELECT, `(SELECT x, y ...)`, run
once per updated row: more than one row is 21000, none sets every column NULL. A
sub-SELECT of nothing but a select list is its one row, read as a row constructor. Any
other becomes one scalar subquery per column, each the same query with only that
column's item selected (or, when the select list matters to the rows it yields, DISTINCT,
a set operation, or an ORDER BY or GROUP BY naming an output column, the query as a FROM
item read by position): a scalar subquery gives 21000 and NULL exactly as the whole one
does, since each yields the same rows. A sub-SELECT calling a volatile function would then
run it once per column, where PostgreSQL runs it once; that is refused (0A000).
"""

from __future__ import annotations

from sqlglot import exp

from planner import default_values as dv
from planner import errors

# Functions whose value differs from call to call (PostgreSQL's VOLATILE ones raympp knows).
_VOLATILE = frozenset(("random", "setseed", "nextval", "setval", "clock_timestamp",
                       "timeofday", "gen_random_uuid", "uuid", "rand"))
_COLUMN = "\x00c{}"
# What may make `SELECT x, y` other than one row of x, y: aggregates (of an outer level
# too), window functions, set-returning functions (known or not), subqueries.
_MANY_OR_FOLDED = tuple(t for t in (exp.AggFunc, exp.Window, exp.Anonymous, exp.Explode,
                                    exp.Unnest, exp.Posexplode, exp.Subquery, exp.Select,
                                    getattr(exp, "GenerateSeries", None),
                                    getattr(exp, "ExplodingGenerateSeries", None))
                        if t is not None)


def pairs(lhs: exp.Expression, rhs: exp.Expression) -> list[tuple[exp.Expression, exp.Expression]]:
    """(column as written, value) for `SET (columns) = rhs`."""
    columns = list(lhs.expressions) if isinstance(lhs, exp.Tuple) else [lhs.this]
    if isinstance(rhs, exp.Subquery) and not rhs.args.get("alias"):
        values = _subquery_values(rhs.this, len(columns))
    elif isinstance(rhs, exp.Anonymous) and rhs.name.upper() == "ROW":
        values = list(rhs.expressions)
    elif isinstance(rhs, exp.Tuple) and isinstance(lhs, exp.Tuple):
        values = list(rhs.expressions)
    else:
        raise errors.FeatureNotSupported(
            "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() "
            "expression")
    if len(values) != len(columns):
        raise errors.SyntaxError_("number of columns does not match number of values")
    return list(zip(columns, values))


def _subquery_values(query: exp.Expression, n: int) -> list[exp.Expression]:
    if isinstance(query, exp.Select):
        items = query.expressions
        if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column)
                                           and isinstance(e.this, exp.Star)) for e in items):
            raise errors.FeatureNotSupported("UPDATE ... SET (columns) = (SELECT * ...)")
        if len(items) != n:
            raise errors.SyntaxError_("number of columns does not match number of values")
        if any(dv.is_default(e) for e in items):
            raise errors.SyntaxError_("DEFAULT is not allowed in this context")
        if _one_row(query):  # each item appears once: a volatile call still runs once
            return [e.unalias().copy() for e in items]
    if any(_volatile(f) for f in query.find_all(exp.Func)):
        raise errors.FeatureNotSupported(
            "UPDATE ... SET (columns) = (SELECT ...) calling a volatile function")
    if not isinstance(query, exp.Select):
        return _by_position(query, _width(query), n)
    if query.args.get("distinct") or _names_outputs(query):
        return _by_position(query, len(query.expressions), n)
    out = []
    for item in query.expressions:
        one = query.copy()
        one.set("expressions", [item.copy()])
        out.append(exp.Subquery(this=one))
    return out


def _by_position(query: exp.Expression, width: int, n: int) -> list[exp.Expression]:
    """One scalar subquery per column reading `query` as a FROM item by position."""
    if width != n:
        raise errors.SyntaxError_("number of columns does not match number of values")
    names = [_COLUMN.format(i) for i in range(width)]
    alias = exp.TableAlias(this=exp.to_identifier("\x00row", quoted=True),
                           columns=[exp.to_identifier(c, quoted=True) for c in names])
    return [exp.Subquery(this=exp.select(exp.column(c, table="\x00row", quoted=True))
                         .from_(exp.Subquery(this=query.copy(), alias=alias.copy())))
            for c in names]


def _width(query: exp.Expression) -> int:
    """The number of columns of a set operation (its leftmost branch's)."""
    while isinstance(query, (exp.Union, exp.Intersect, exp.Except)):
        query = query.this
    while isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select) or any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in query.expressions):
        raise errors.FeatureNotSupported(
            f"UPDATE ... SET (columns) = ({query.sql(dialect='postgres')})")
    return len(query.expressions)


def _one_row(query: exp.Select) -> bool:
    """Whether `query` is `SELECT x, y` and nothing else: exactly one row, whose values
    are its items (as a row constructor's; a scalar subquery would also be one, but its
    outer references are planned as a join, which raympp may not place)."""
    if any(query.args.get(k) for k in query.args if k != "expressions"):
        return False
    return not any(isinstance(node, _MANY_OR_FOLDED)
                   for e in query.expressions for node in e.walk())


def _names_outputs(query: exp.Select) -> bool:
    """Whether ORDER BY or GROUP BY names an output column by position or alias (which
    a query selecting one item would read differently)."""
    aliases = {e.alias_or_name.lower() for e in query.expressions if e.alias}
    keys = list((query.args.get("group") or exp.Group()).expressions)
    order = query.args.get("order")
    keys += [o.this for o in (order.expressions if order is not None else [])]
    for key in keys:
        if isinstance(key, exp.Literal) and not key.is_string:
            return True
        if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            return True
    return False


def _volatile(f: exp.Func) -> bool:
    name = f.name if isinstance(f, exp.Anonymous) else f.sql_name()
    return name.lower() in _VOLATILE
