"""The DEFAULT keyword where UPDATE and MERGE take a value, and the defaults of the
columns a MERGE INSERT leaves out.

The defaults themselves are bound by the coordinator (coordinator/defaults.py: an
identity column's is nextval of its sequence, found in the catalog) and handed to the
planner as a `ColumnDefaults`: per column of the target, its bound default or None (NULL).
A default that calls a sequence function runs on the coordinator only; the rows UPDATE
writes are computed on the segments, so there it is refused (0A000).
"""

from __future__ import annotations

from typing import Callable, Sequence

from sqlglot import exp

from planner import errors
from planner import expr as ex
from planner.schema import Identity, TableDef

# Per column of a table, its default bound for the running statement (None: NULL).
ColumnDefaults = Callable[[TableDef], Sequence["ex.Expr | None"]]


def is_default(value: exp.Expression) -> bool:
    """Whether a SET or VALUES item is the keyword DEFAULT (sqlglot reads it as a column
    in SET, a Var in MERGE's VALUES)."""
    if isinstance(value, exp.Var):
        return value.name.upper() == "DEFAULT"
    return isinstance(value, exp.Column) and not value.table and \
        not value.this.quoted and value.name.upper() == "DEFAULT"


def value_of(defaults: ColumnDefaults | None, table: TableDef, i: int,
             on_segments: bool, statement: str) -> ex.Expr:
    """Column `i`'s default (NULL when it has none) for a row `statement` writes;
    0A000 for one calling a sequence function where the row is computed on the segments."""
    col = table.columns[i]
    bound = defaults(table)[i] if defaults is not None else None
    if bound is None:
        if col.default is not None or col.identity is not Identity.NONE:
            raise errors.InternalError(f'default of column "{col.name}" not bound')
        return ex.Literal(None, col.type)
    if on_segments and ex.calls_sequence(bound):
        raise errors.FeatureNotSupported(
            f'{statement} setting column "{col.name}" to its default, which calls a sequence '
            "function (the new rows are computed on the segments)")
    return bound


def refuse_update_always(table: TableDef, i: int, value: exp.Expression) -> None:
    """428C9: a GENERATED ALWAYS identity column is updated to DEFAULT only."""
    col = table.columns[i]
    if col.identity is Identity.ALWAYS and not is_default(value):
        raise errors.QueryError(
            f'column "{col.name}" can only be updated to DEFAULT', "428C9",
            detail=f'Column "{col.name}" is an identity column defined as GENERATED ALWAYS.')
