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


class Scope:
    """The columns of a FROM clause, by position. Names are case-folded like PostgreSQL."""

    def __init__(self, columns: list[ScopeColumn]):
        self.columns = columns

    def resolve(self, name: str, qualifier: str | None = None) -> int:
        matches = [i for i, c in enumerate(self.columns)
                   if c.name == name and (qualifier is None or c.qualifier == qualifier)]
        if not matches:
            if qualifier is not None and not any(c.qualifier == qualifier for c in self.columns):
                raise errors.UndefinedTable(
                    f'missing FROM-clause entry for table "{qualifier}"')
            shown = f"{qualifier}.{name}" if qualifier else name
            raise errors.UndefinedColumn(f'column "{shown}" does not exist')
        if len(matches) > 1:
            raise errors.AmbiguousColumn(f'column reference "{name}" is ambiguous')
        return matches[0]

    def star(self, qualifier: str | None = None) -> list[int]:
        out = [i for i, c in enumerate(self.columns)
               if not c.hidden and (qualifier is None or c.qualifier == qualifier)]
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

    def resolve(self, name: str, qualifier: str | None = None) -> int:
        try:
            return len(self.outer.columns) + self.inner.resolve(name, qualifier)
        except (errors.UndefinedColumn, errors.UndefinedTable):
            return self.outer.resolve(name, qualifier)
