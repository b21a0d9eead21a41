"""Where a volatile call (gen_random_uuid(), a new value every time it runs) may appear.

PostgreSQL evaluates such a call once per row of the query level that holds it, and a
WITH query once however often it is read. raympp reads a WITH query by planning it at
every reference, and may decorrelate a subquery in an expression into a join that
evaluates it per distinct outer value rather than per row, or an uncorrelated one per
segment: either would give other values than PostgreSQL's. `check` refuses (0A000) a
volatile call in a WITH query read more than once, and in any query that is not the
statement's own, a FROM item, a set operation's branch or the query of an INSERT,
CREATE TABLE AS or COPY, before anything is planned.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors
from planner.schema import identifier

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
                if isinstance(parent, exp.CTE) and _reads(tree, parent.args["alias"].this) > 1:
                    raise errors.FeatureNotSupported(
                        "gen_random_uuid() in a WITH query read more than once")
            node = node.parent


def _reads(tree: exp.Expression, name: exp.Identifier) -> int:
    """How many FROM items of `tree` name the WITH query `name` (unqualified)."""
    key = identifier(name)
    return sum(1 for t in tree.find_all(exp.Table)
               if not t.db and isinstance(t.this, exp.Identifier) and identifier(t.this) == key)
