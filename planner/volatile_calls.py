"""Where gen_random_uuid() (a new value every time it runs) may appear.

PostgreSQL evaluates such a call once per row of the query level that holds it. raympp
may decorrelate a subquery in an expression into a join that evaluates it per distinct
outer value rather than per row, or an uncorrelated one per segment: either would give
other values than PostgreSQL's. `check` refuses (0A000) the call in any query that is
not the statement's own, a FROM item, a set operation's branch, a WITH query (those that
call a volatile function are materialized once, planner/bind.py) or the query of an
INSERT, CREATE TABLE AS or COPY, before anything is planned.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors

_QUERIES = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values)
# What a query may sit in (through parentheses) and still run once per its own rows
_ALLOWED_PARENTS = (exp.From, exp.Join, exp.Union, exp.Intersect, exp.Except, exp.Insert,
                    exp.Create, exp.Copy, exp.CTE)


def check(tree: exp.Expression) -> None:
    """Raise 0A000 when a gen_random_uuid() call in `tree` could run other than once per
    row of its query level, as in PostgreSQL."""
    for call in tree.find_all(exp.Uuid):
        node = call.parent
        while node is not None:
            if isinstance(node, _QUERIES):
                parent = node.parent
                while isinstance(parent, (exp.Subquery, exp.Paren)):
                    parent = parent.parent
                if parent is not None and not isinstance(parent, _ALLOWED_PARENTS):
                    raise errors.FeatureNotSupported(
                        "gen_random_uuid() in a subquery expression or LATERAL")
            node = node.parent
