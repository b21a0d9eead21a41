"""Name resolution: the columns visible to an expression and how names map to positions."""

from __future__ import annotations

from dataclasses import dataclass

from planner import errors
from planner.types import SqlType


@dataclass(frozen=True, slots=True)
class ScopeColumn:
    qualifier: str | None  # table name or alias the column is reachable through
    name: str
    type: SqlType
    hidden: bool = False   # not expanded by SELECT *
    # The other copy of a JOIN ... USING column: reachable as t.col and by t.*, while
    # the unqualified name and SELECT * mean the merged column.
    qualified_only: bool = False
    # The schema of an unaliased table or system relation: `schema.table.column` needs it.
    schema: str | None = None
    # A FULL JOIN ... USING column: COALESCE of the two copies at these positions, a
    # column of its own (bind.py computes it once the join has both).
    merged: tuple[int, int] | None = None


class Scope:
    """The columns of a FROM clause, by position. Names are case-folded like PostgreSQL.
    `star_order` is the order SELECT * shows them in when it is not positional (USING
    and NATURAL joins put the merged columns first)."""

    def __init__(self, columns: list[ScopeColumn], star_order: list[int] | None = None,
                 marker: str | None = None):
        self.columns = columns
        self.star_order = star_order
        # The qualifier of column references already resolved to this scope's positions
        # (`"<marker>"."c<i>"` means position i; subquery_domain.outer_marker makes them).
        # Unique per scope, so a subquery's own scope never takes its outer's markers.
        self.marker = marker

    def resolve(self, name: str, qualifier: str | None = None,
                schema: str | None = None) -> int:
        """The position of column `name` (of the table or alias `qualifier`, of the table
        in `schema` for `schema.table.column`)."""
        if qualifier is not None and qualifier == self.marker:
            return int(name[1:])
        matches = [i for i, c in enumerate(self.columns)
                   if c.name == name and (qualifier is not None or not c.qualified_only)
                   and (qualifier is None or c.qualifier == qualifier)
                   and (schema is None or c.schema == schema)]
        if not matches:
            if qualifier is not None and not any(
                    c.qualifier == qualifier and (schema is None or c.schema == schema)
                    for c in self.columns):
                raise errors.UndefinedTable(
                    f'missing FROM-clause entry for table "{qualifier}"')
            shown = f"{qualifier}.{name}" if qualifier else name
            raise errors.UndefinedColumn(f'column "{shown}" does not exist')
        if len(matches) > 1:
            if qualifier is not None and schema is None and \
                    len({self.columns[i].schema for i in matches}) > 1:
                # Two tables of one name from two schemas (FROM a.t, b.t): `t.c` names neither.
                raise errors.QueryError(f'table reference "{qualifier}" is ambiguous', "42P09")
            raise errors.AmbiguousColumn(f'column reference "{name}" is ambiguous')
        return matches[0]

    def star(self, qualifier: str | None = None) -> list[int]:
        if qualifier is None:
            order = list(self.star_order) if self.star_order is not None else []
            order += [i for i in range(len(self.columns)) if i not in set(order)]
            out = [i for i in order
                   if not self.columns[i].hidden and not self.columns[i].qualified_only]
        else:
            out = [i for i, c in enumerate(self.columns)
                   if not c.hidden and c.qualifier == qualifier]
        if qualifier is not None and not out:
            raise errors.UndefinedTable(f'missing FROM-clause entry for table "{qualifier}"')
        return out


EMPTY = Scope([])


class LayeredScope(Scope):
    """A subquery's scope over its outer query's: names resolve in the inner scope first,
    then in the outer one. Positions: outer columns first, then inner ones (the layout of
    a join of the outer query with the subquery)."""

    def __init__(self, inner: Scope, outer: Scope):
        super().__init__(outer.columns + inner.columns)
        self.inner = inner
        self.outer = outer

    def resolve(self, name: str, qualifier: str | None = None,
                schema: str | None = None) -> int:
        try:
            return len(self.outer.columns) + self.inner.resolve(name, qualifier, schema)
        except (errors.UndefinedColumn, errors.UndefinedTable):
            return self.outer.resolve(name, qualifier, schema)
