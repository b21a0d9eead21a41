"""The FROM clause of DELETE's and UPDATE's finding query (planner/modify.py): the target
and DELETE's USING or UPDATE's FROM items, with the joins inside an item.

sqlglot hangs an item's joins, and the items after the first, on the first item (`USING
a JOIN b ON ..., c` is `a` with joins `b` and `c`, the latter without a kind or
condition: the next item); a FROM of raympp's takes no parenthesized
join, so the relations are joined in one row: `FROM target, a JOIN b ON ..., c`. For
inner and LEFT joins whose ON reads only the item's relations that gives PostgreSQL's rows
(target x (a JOIN b) = (target x a) JOIN b). A RIGHT, FULL, NATURAL or USING join would
also read the target on its left, so the first item may have them when it comes before
the target (`FROM a FULL JOIN b ON ..., target, c`); then a RETURNING * would list the
columns in another order than PostgreSQL's, and is refused, as are such joins in a later
item (0A000). The target in such an ON is PostgreSQL's 42P01.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors
from planner.schema import identifier


def joined(tree, marked: exp.Table, q: str, target_names: set[str], others: list[exp.Expression],
           items: list[exp.Expression]) -> tuple[exp.Expression, list[exp.Join]]:
    """(first relation, joins) of FROM: the target (`marked`, named `q`) and `others`;
    `items` are the select list (a bare * among them refuses an item that must lead)."""
    words = "DELETE ... USING" if isinstance(tree, exp.Delete) else "UPDATE ... FROM"
    pieces: list[tuple[exp.Expression, list[exp.Join]]] = []
    for other in others:
        item = other.copy()
        joins = list(item.args.get("joins") or [])
        item.set("joins", None)
        pieces.append((item, []))
        for join in joins:
            if _comma(join):
                pieces.append((join.this, []))
                continue
            _check_on(join, q, target_names, words)
            pieces[-1][1].append(join)
    leading = [(k, how) for k, (_, joins) in enumerate(pieces) for how in map(_own_left, joins)
               if how]
    order = [(marked, [])] + pieces
    if leading:
        k, how = leading[-1]
        if k != 0:
            raise errors.FeatureNotSupported(
                f"{how} JOIN inside an item of {words} other than the first")
        if any(isinstance(i, exp.Star) for i in items):
            raise errors.FeatureNotSupported(f"{words} with a {how} JOIN ... RETURNING *")
        order = [pieces[0], (marked, [])] + pieces[1:]
    first, joins = order[0][0], list(order[0][1])
    for relation, its_joins in order[1:]:
        joins.append(exp.Join(this=relation))
        joins.extend(its_joins)
    return first, joins


def _comma(join: exp.Join) -> bool:
    """Whether `join` is the next item of a comma list (sqlglot's Join with nothing but
    the relation)."""
    return not any(join.args.get(k) for k in ("side", "kind", "on", "using", "method"))


def _own_left(join: exp.Join) -> str | None:
    """The kind of a join whose left side must be the item's alone (None: any left)."""
    side = (join.args.get("side") or "").upper()
    if (join.args.get("kind") or "").upper() == "NATURAL":
        return "NATURAL"
    if join.args.get("using"):
        return "USING"
    return side if side in ("RIGHT", "FULL") else None


def _check_on(join: exp.Join, q: str, target_names: set[str], words: str) -> None:
    for col in (join.args.get("on") or exp.true()).find_all(exp.Column):
        if col.table and identifier(col.args["table"]) == q:
            raise errors.QueryError(
                f'invalid reference to FROM-clause entry for table "{q}"', "42P01",
                hint=f'There is an entry for table "{q}", but it cannot be referenced '
                     "from this part of the query.")
        if not col.table and col.name in target_names:
            # PostgreSQL reads it as a column of the item's relations or fails; joined
            # after the target, the target's column would be in reach.
            raise errors.FeatureNotSupported(
                f'unqualified column "{col.name}", a column of the target too, in the ON '
                f"of a join inside an item of {words}")
