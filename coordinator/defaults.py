"""Column defaults as INSERT and COPY FROM use them.

A column's default is bound for each statement that needs it (planner/constraints.py
`bind_default`): nextval resolves its sequence then, and now() is the statement's time.
An identity column's default is nextval of its own sequence. GENERATED ALWAYS refuses an
explicit value (428C9) unless the INSERT says OVERRIDING SYSTEM VALUE; OVERRIDING USER
VALUE replaces given values of identity columns by their defaults, as in PostgreSQL.
"""

from __future__ import annotations

from coordinator import sequence_ddl
from planner import catalog_names as cn
from planner import constraints, errors
from planner import expr as ex
from planner.schema import Identity, TableDef
from planner.string_format import quote_literal


def column_defaults(view, table: TableDef) -> list[ex.Expr | None]:
    """Each column's default bound (None: the column has none, NULL goes in)."""
    out: list[ex.Expr | None] = []
    for c in table.columns:
        text = c.default
        if c.identity is not Identity.NONE:
            seq = sequence_ddl.identity_sequence(view, table, c.name)
            if seq is None:
                raise errors.InternalError(f'identity column "{c.name}" has no sequence')
            text = f"nextval({quote_literal(cn.quote_ident(seq.name))}::regclass)"
        out.append(constraints.bind_default(text, c) if text else None)
    return out


def refuse_explicit(table: TableDef, column: int, overriding: str | None) -> None:
    """428C9 for a value given for a GENERATED ALWAYS identity column."""
    c = table.columns[column]
    if c.identity is Identity.ALWAYS and overriding != "system":
        raise errors.QueryError(
            f'cannot insert a non-DEFAULT value into column "{c.name}"', "428C9",
            detail=f'Column "{c.name}" is an identity column defined as GENERATED ALWAYS.',
            hint="Use OVERRIDING SYSTEM VALUE to override.")


def user_value_ignored(table: TableDef, column: int, overriding: str | None) -> bool:
    """OVERRIDING USER VALUE: a given value of an identity column gives way to its default."""
    return overriding == "user" and table.columns[column].identity is not Identity.NONE
