"""Column defaults and CHECK constraints of CREATE TABLE: bound, named and shown as
PostgreSQL 15 binds, names and shows them.

A default is kept as the text pg_get_expr(adbin) shows (`nextval('t_a_seq'::regclass)`,
`'x'::text`, `(1 + 2)`, `now()`, `CURRENT_TIMESTAMP`) and bound again by each INSERT or
COPY that needs it (`bind_default`), so nextval resolves the sequence then. A CHECK
constraint is kept as the text inside pg_get_constraintdef's `CHECK (...)` and bound once
over the table's columns (`bind_check`): a boolean expression the writers evaluate over
each batch (segment/check_constraints.py).
"""

from __future__ import annotations

import dataclasses
import decimal

import sqlglot
from sqlglot import exp

from planner import errors, pretty_expr, types
from planner import expr as ex
from planner.bind_expr import ExprBinder
from planner.coercion import bind_assign
from planner.fold import fold_constants
from planner.schema import ColumnDef
from planner.scope import EMPTY, Scope, ScopeColumn
from planner.sql_dialect import RaymppPostgres

NAME_LIMIT = 63  # NAMEDATALEN - 1: PostgreSQL truncates longer names


def _expression(sql: str) -> exp.Expression:
    """A stored expression text (written by this module) as a tree."""
    return sqlglot.parse_one(f"SELECT {sql}", dialect=RaymppPostgres).expressions[0]


def _refuse_in(tree: exp.Expression, where: str) -> None:
    """Subqueries and aggregates are not allowed in defaults and CHECK constraints."""
    if tree.find(exp.Select, exp.Subquery) is not None:
        raise errors.FeatureNotSupported(f"cannot use subquery in {where}")
    if tree.find(exp.AggFunc) is not None:
        raise errors.QueryError(f"aggregate functions are not allowed in {where}", "42803")
    if tree.find(exp.Window) is not None:
        raise errors.QueryError(f"window functions are not allowed in {where}", "42P20")


def _scope(columns, table: str) -> Scope:
    return Scope([ScopeColumn(table, c.name, c.type) for c in columns])


# --- CHECK ------------------------------------------------------------------------------------
def bind_check_tree(tree: exp.Expression, columns, table: str) -> ex.Expr:
    """A CHECK expression over the table's columns (ColumnRef i is column i)."""
    _refuse_in(tree, "check constraint")
    e = ExprBinder(_scope(columns, table)).bind(tree)
    if ex.calls_sequence(e):
        raise errors.FeatureNotSupported("sequence functions in a CHECK constraint")
    if e.type.kind is types.Kind.UNKNOWN:
        e = bind_assign(e, types.BOOL)
    if e.type.kind is not types.Kind.BOOL:
        raise errors.QueryError(
            f"argument of CHECK must be type boolean, not type {e.type.sql()}", "42804")
    return fold_constants(e)


def bind_check(sql: str, columns, table: str) -> ex.Expr:
    return bind_check_tree(_expression(sql), columns, table)


def check_text(tree: exp.Expression, columns, table: str) -> str:
    """The expression as pg_get_constraintdef shows it inside CHECK (...)."""
    _refuse_in(tree, "check constraint")
    return shown(ExprBinder(_scope(columns, table)).bind(tree), tree)


def check_name(table: str, tree: exp.Expression, columns, taken: set[str]) -> str:
    """PostgreSQL's name for an unnamed CHECK: `t_c_check` when it reads one column c,
    else `t_check`; a number appended while the name is taken (`t_check1`, ...)."""
    names = {c.name for c in columns}
    used = {c.name if c.this.quoted else c.name.lower() for c in tree.find_all(exp.Column)}
    used &= names
    base = f"{table}_{next(iter(used))}" if len(used) == 1 else table
    return choose_name(base, "check", taken)


def choose_name(base: str, label: str, taken: set[str]) -> str:
    """PostgreSQL's ChooseRelationName: `base_label`, then `base_label1`, ... (the base
    shortened so that the whole fits in 63 bytes)."""
    n = 0
    while True:
        suffix = f"_{label}" + (str(n) if n else "")
        name = base[:NAME_LIMIT - len(suffix)] + suffix
        if name not in taken:
            return name
        n += 1


# --- DEFAULT ----------------------------------------------------------------------------------
def default_text(tree: exp.Expression, col: ColumnDef) -> str | None:
    """The stored text of `DEFAULT tree` for column `col` (None for DEFAULT NULL, which
    PostgreSQL does not store), after checking it binds and assigns to the column."""
    _refuse_in(tree, "DEFAULT expressions")
    if tree.find(exp.Column) is not None:
        raise errors.QueryError("cannot use column reference in DEFAULT expression", "42P10")
    if isinstance(tree, exp.Null):
        return None
    e = ExprBinder(EMPTY).bind(tree)
    bind_assign(e, col.type, col.name)  # its errors now, as PostgreSQL's CREATE TABLE
    return shown(e, tree, col.type)


def bind_default(sql: str, col: ColumnDef) -> ex.Expr:
    """A column's default, bound for a statement that uses it, as the column's type."""
    e = ExprBinder(EMPTY).bind(_expression(sql))
    return fold_constants(bind_assign(e, col.type, col.name))


# --- text as PostgreSQL's ruleutils shows it ---------------------------------------------------
_SPECIAL = {exp.CurrentTimestamp: "CURRENT_TIMESTAMP", exp.CurrentDate: "CURRENT_DATE",
            exp.CurrentTime: "CURRENT_TIME"}


def shown(e: ex.Expr, tree: exp.Expression, target: types.SqlType | None = None) -> str:
    """`e` as pg_get_expr shows it: operators in parentheses, string constants with their
    type (`'x'::text`), negative numbers as `'-5'::integer`, nextval's argument as
    `'s'::regclass`."""
    special = _SPECIAL.get(type(tree))
    if special is not None:
        return special
    if isinstance(tree, exp.Dot) and tree.this.name == "pg_catalog" \
            and tree.expression.name.lower() == "now":
        return "now()"  # written now(): statements.py keeps it apart from CURRENT_TIMESTAMP
    if isinstance(e, ex.Literal) and pretty_expr.is_operator(tree):
        return pretty_expr.parenthesized(tree)  # the binder folded it: PostgreSQL does not
    return ex.show(_typed_literals(e, target))


_TYPE_SQL = {types.Kind.TEXT: "text", types.Kind.INT4: "integer", types.Kind.INT8: "bigint",
             types.Kind.INT2: "smallint", types.Kind.NUMERIC: "numeric",
             types.Kind.DATE: "date", types.Kind.BOOL: "boolean",
             types.Kind.FLOAT8: "double precision", types.Kind.FLOAT4: "real",
             types.Kind.VARCHAR: "character varying",
             types.Kind.TIMESTAMP: "timestamp without time zone",
             types.Kind.TIMESTAMPTZ: "timestamp with time zone"}


def _typed_literals(e: ex.Expr, target: types.SqlType | None) -> ex.Expr:
    if isinstance(e, ex.Literal):
        # A constant written for a column shows as the column's type ('ab'::character
        # varying), one inside an expression as its own.
        t = target or (e.type if e.type.kind is not types.Kind.UNKNOWN else types.TEXT)
        name = _TYPE_SQL.get(t.kind)
        if e.value is None or name is None:
            return e
        if isinstance(e.value, str):
            return _shown_as(f"'{e.value.replace(chr(39), chr(39) * 2)}'::{name}")
        if isinstance(e.value, bool):
            return _shown_as("true" if e.value else "false")
        if isinstance(e.value, (int, float, decimal.Decimal)) and e.value < 0:
            return _shown_as(f"'{e.value}'::{name}")
        return e
    if isinstance(e, ex.Call):
        return dataclasses.replace(e, args=tuple(_typed_literals(a, None) for a in e.args))
    if isinstance(e, ex.Cast):
        if isinstance(e.arg, ex.Literal) and isinstance(e.arg.value, str):
            return _shown_as(f"'{e.arg.value.replace(chr(39), chr(39) * 2)}'::"
                          f"{_TYPE_SQL.get(e.type.kind, e.type.sql())}")
        return dataclasses.replace(e, arg=_typed_literals(e.arg, None))
    return e


def _shown_as(text: str) -> ex.Expr:
    """An expression ex.show prints as `text` (a column reference shows its name)."""
    return ex.ColumnRef(-1, types.TEXT, text)
