"""GROUP BY ROLLUP, CUBE and GROUPING SETS, with PostgreSQL 15's semantics.

A GROUP BY list is the cross product of its items' grouping sets: a plain expression is
one set of itself, ROLLUP (a, b) is (a, b), (a), (), CUBE (a, b) every subset, and
GROUPING SETS lists sets (a parenthesized list is one set, () the empty one; ROLLUP and
CUBE inside it add theirs). The query is then one Aggregate over an Expand node
(plan.Expand): each input row once per set, with the keys outside that set NULL, the
set's number (so that a NULL key of one set and the NULL of a key rolled up in another
stay apart, and duplicate sets give duplicate rows, as in PostgreSQL) and the value of
each grouping(...) call in that set (bit i set for an argument not in the set, first
argument highest). The Aggregate groups by all of them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sqlglot import exp

from planner import errors, types
from planner import expr as ex
from planner import plan as pl

MAX_SETS = 4096  # PostgreSQL's limit too


def has_sets(group: exp.Group | None) -> bool:
    return group is not None and any(
        isinstance(g, (exp.Rollup, exp.Cube, exp.GroupingSets)) for g in group.expressions)


def expand(group: exp.Group) -> tuple[list[exp.Expression], list[tuple[int, ...]]]:
    """The distinct key expressions of the GROUP BY list and its grouping sets, each a
    tuple of positions in that list."""
    keys: list[exp.Expression] = []

    def key(e: exp.Expression) -> int:
        while isinstance(e, exp.Paren):
            e = e.this
        for i, k in enumerate(keys):
            if k == e:
                return i
        keys.append(e)
        return len(keys) - 1

    def element(e) -> tuple[int, ...]:  # one set: a key, (a, b) or ()
        if isinstance(e, exp.Tuple):
            return tuple(key(x) for x in e.expressions)
        return (key(e),)

    def sets_of(item) -> list[tuple[int, ...]]:
        if isinstance(item, exp.Rollup):
            parts = [element(e) for e in item.expressions]
            return [sum(parts[:n], ()) for n in range(len(parts), -1, -1)]
        if isinstance(item, exp.Cube):
            parts = [element(e) for e in item.expressions]
            out = []
            for mask in range(2 ** len(parts) - 1, -1, -1):
                out.append(sum((p for i, p in enumerate(parts)
                                if mask >> (len(parts) - 1 - i) & 1), ()))
            return out
        if isinstance(item, exp.GroupingSets):
            out = []
            for e in item.expressions:
                out += sets_of(e) if isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets)) \
                    else [element(e)]
            return out
        return [(key(item),)]

    product: list[tuple[int, ...]] = [()]
    for item in group.expressions:
        product = [a + b for a, b in itertools.product(product, sets_of(item))]
        if len(product) > MAX_SETS:
            raise errors.QueryError("too many grouping sets present (maximum 4096)", "54000")
    return keys, [tuple(dict.fromkeys(s)) for s in product]


@dataclass
class Grouping:
    """The grouping(...) calls of a query with grouping sets, as positions of the keys
    they name; each becomes a column of the Expand, constant within a set."""

    calls: list[tuple[int, ...]]

    def position(self, args: tuple[int, ...]) -> int:
        if args not in self.calls:
            self.calls.append(args)
        return self.calls.index(args)


def grouping_value(args: tuple[int, ...], grouping_set: tuple[int, ...]) -> int:
    value = 0
    for k in args:
        value = (value << 1) | (0 if k in grouping_set else 1)
    return value


def plan(child: pl.Node, keys: list[ex.Expr], sets: list[tuple[int, ...]],
         grouping: Grouping) -> tuple[pl.Node, tuple[ex.Expr, ...], tuple[pl.Field, ...]]:
    """The Expand over `child` and the Aggregate's keys over it: the key expressions (NULL
    outside each set), the set number, then the grouping() values, with their fields."""
    n = len(child.fields)
    passed = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(child.fields))
    rows = []
    for j, s in enumerate(sets):
        row = [k if i in s else ex.Literal(None, k.type) for i, k in enumerate(keys)]
        row.append(ex.Literal(j, types.INT4))
        row += [ex.Literal(grouping_value(c, s), types.INT4) for c in grouping.calls]
        rows.append(passed + tuple(row))
    key_fields = tuple(pl.Field(ex.show(k), k.type) for k in keys) + (
        pl.Field("?grouping_set", types.INT4),) + tuple(
        pl.Field(f"?grouping{i}", types.INT4) for i in range(len(grouping.calls)))
    fields = child.fields + key_fields
    expand = pl.Expand(child, tuple(rows), fields)
    agg_keys = tuple(ex.ColumnRef(n + i, f.type, f.name) for i, f in enumerate(key_fields))
    return expand, agg_keys, key_fields
