"""Column defaults and CHECK constraints of CREATE TABLE: bound, named and shown as
PostgreSQL 15 binds, names and shows them.

A default is kept as the text pg_get_expr(adbin) shows (`nextval('t_a_seq'::regclass)`,
`'x'::text`, `(1 + 2)`, `now()`, `CURRENT_TIMESTAMP`) and bound again by each INSERT or
COPY that needs it (`bind_default`), so nextval resolves the sequence then; a quoted
date/time constant is read once, here, and kept as its value (`'now'` is the creation's
time, as PostgreSQL's coercion of the constant makes it). A CHECK
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
from planner.bind_array import catalog_array_names, mark_subscripts
from planner.bind_expr import ExprBinder
from planner.coercion import bind_assign, is_unknown
from planner.fold import fold_constants
from planner.schema import ColumnDef
from planner.scope import EMPTY, Scope, ScopeColumn
from planner.sql_dialect import RaymppPostgres
from planner.values import format_text

NAME_LIMIT = 63  # NAMEDATALEN - 1: PostgreSQL truncates longer names


def _expression(sql: str) -> exp.Expression:
    """A stored expression text (written by this module) as a tree, read as
    statements.parse_one reads one (catalog array casts, subscripts sqlglot shifted)."""
    tree = sqlglot.parse_one(f"SELECT {catalog_array_names(sql)}", dialect=RaymppPostgres)
    mark_subscripts(tree)
    return tree.expressions[0]


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


def stored_check(sql: str, columns, table: str) -> ex.Expr:
    """The stored text of a CHECK bound: what every writer evaluates, and what a restarted
    coordinator binds again (catalog.py), so a text that would not bind is refused now."""
    try:
        return bind_check(sql, columns, table)
    except errors.QueryError:
        raise errors.FeatureNotSupported(
            f"CHECK ({sql}): raympp cannot store this expression") from None


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
    assigned = bind_assign(e, col.type, col.name)  # its errors now, as CREATE TABLE's
    if is_unknown(e) and col.type.kind in _DATETIME:
        # PostgreSQL reads a quoted date/time constant once, here: 'now' is now
        e = fold_constants(assigned)
    text = shown(e, tree, col.type)
    if not ex.calls_sequence(e):  # nextval binds where the sequence exists (INSERT)
        try:
            bind_default(text, col)  # every INSERT binds the stored text
        except errors.QueryError:
            raise errors.FeatureNotSupported(
                f"DEFAULT {text}: raympp cannot store this expression") from None
    return text


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
             types.Kind.TIMESTAMPTZ: "timestamp with time zone",
             types.Kind.TIME: "time without time zone",
             types.Kind.TIMETZ: "time with time zone"}
_DATETIME = (types.Kind.DATE, types.Kind.TIMESTAMP, types.Kind.TIMESTAMPTZ, types.Kind.TIME,
             types.Kind.TIMETZ)


_COMPARISONS = frozenset((ex.Func.EQ, ex.Func.NE, ex.Func.LT, ex.Func.LE, ex.Func.GT,
                          ex.Func.GE))
_UPPER = {ex.Func.COALESCE: "COALESCE", ex.Func.NULLIF: "NULLIF",
          ex.Func.GREATEST: "GREATEST", ex.Func.LEAST: "LEAST"}


def _typed_literals(e: ex.Expr, target: types.SqlType | None) -> ex.Expr:
    """`e` with what ex.show prints otherwise than ruleutils replaced by text: constants
    with their types, IN lists as `= ANY (ARRAY[...])`, LIKE as `~~`, COALESCE and the
    like in capitals."""
    if isinstance(e, ex.Literal):
        return _literal(e, target)
    if isinstance(e, ex.InList):
        arg = ex.show(_typed_literals(e.arg, None))
        items = "ARRAY[" + ", ".join(ex.show(_literal(v, e.arg.type)) for v in e.values) + "]"
        if e.arg.type.kind is types.Kind.VARCHAR:  # varchar compares as text
            arg, items = f"({arg})::text", f"({items})::text[]"
        op = "<> ALL" if e.negated else "= ANY"
        return _shown_as(f"({arg} {op} ({items}))")
    if isinstance(e, ex.Like):
        op = ("!" if e.negated else "") + ("~~*" if e.case_insensitive else "~~")
        return _shown_as(f"({ex.show(_typed_literals(e.arg, None))} {op} "
                         f"{ex.show(_literal(e.pattern, e.arg.type) if isinstance(e.pattern, ex.Literal) else _typed_literals(e.pattern, None))})")
    if isinstance(e, ex.Call):
        as_text = e.func in _COMPARISONS and any(
            a.type.kind is types.Kind.VARCHAR and not isinstance(a, ex.Literal) for a in e.args)
        if as_text:  # varchar has text's operators: PostgreSQL shows the casts
            args = tuple(_shown_as(f"({ex.show(_typed_literals(a, None))})::text")
                         if a.type.kind is types.Kind.VARCHAR and not isinstance(a, ex.Literal)
                         else _typed_literals(a, types.TEXT) if isinstance(a, ex.Literal)
                         else _typed_literals(a, None) for a in e.args)
        else:
            args = tuple(_typed_literals(a, None) for a in e.args)
        if e.func in _UPPER:
            return _shown_as(f"{_UPPER[e.func]}({', '.join(ex.show(a) for a in args)})")
        return dataclasses.replace(e, args=args)
    if isinstance(e, ex.Cast):
        if isinstance(e.arg, ex.Literal) and isinstance(e.arg.value, str):
            return _shown_as(f"'{e.arg.value.replace(chr(39), chr(39) * 2)}'::"
                             f"{_TYPE_SQL.get(e.type.kind, e.type.sql())}")
        return dataclasses.replace(e, arg=_typed_literals(e.arg, None))
    return e


def _literal(e: ex.Literal, target: types.SqlType | None) -> ex.Expr:
    """A constant as ruleutils prints it: `'x'::text`, `'-5'::integer`, `(0)::numeric`
    (an integer constant the comparison with a numeric casts), `'2020-01-01'::date`."""
    t = target or (e.type if e.type.kind is not types.Kind.UNKNOWN else types.TEXT)
    name = _TYPE_SQL.get(t.kind)
    v = e.value
    if v is None or name is None:
        return e
    if isinstance(v, bool):
        return _shown_as("true" if v else "false")
    if isinstance(v, str):
        return _shown_as(f"'{v.replace(chr(39), chr(39) * 2)}'::{name}")
    if isinstance(v, (int, float, decimal.Decimal)):
        if v < 0:
            return _shown_as(f"'{v}'::{name}")
        if t.kind is types.Kind.NUMERIC and target is None and (
                isinstance(v, int) or (isinstance(v, decimal.Decimal)
                                       and v.as_tuple().exponent == 0)):
            return _shown_as(f"({v})::numeric")
        return e
    if t.kind in _DATETIME:
        return _shown_as(f"'{format_text(v, t)}'::{name}")
    return e


def _shown_as(text: str) -> ex.Expr:
    """An expression ex.show prints as `text` (a column reference shows its name)."""
    return ex.ColumnRef(-1, types.TEXT, text)
