"""Stored expression texts (defaults, CHECK constraints) in PostgreSQL's pretty form, as
pg_get_expr(adbin, rel, true) and pg_get_constraintdef(oid, true) print them (psql's \\d):
parentheses only where precedence needs them."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from planner.catalog_names import quote_ident
from planner.sql_dialect import RaymppPostgres
from planner.type_names import sql_type

_NOW = re.compile(r"(?i)(?<![.\w\"])now\(\)")  # kept apart from CURRENT_TIMESTAMP
_OPERATORS = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">",
              exp.GTE: ">=", exp.Like: "~~", exp.ILike: "~~*", exp.Add: "+", exp.Sub: "-",
              exp.DPipe: "||", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}
_LOW, _HIGH = (exp.Add, exp.Sub), (exp.Mul, exp.Div, exp.Mod)
_BOOL = {exp.And: "AND", exp.Or: "OR"}


def pretty(sql: str) -> str:
    """A stored expression text (operators in parentheses) as PostgreSQL's pretty mode
    prints it: parentheses only where ruleutils' isSimpleNode wants them."""
    tree = _parse(sql)
    return sql if tree is None else _text(tree, None, True, True)


def parenthesized(tree: exp.Expression) -> str:
    """An expression as PostgreSQL stores and prints it without pretty mode: every
    operator in parentheses, `((2 + 3) * 4)`."""
    return _text(tree, None, True, False)


def _parse(sql: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(f"SELECT {_NOW.sub('pg_catalog.now()', sql)}",
                                 dialect=RaymppPostgres).expressions[0]
    except sqlglot.errors.ParseError:
        return None


def _strip(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def is_operator(node: exp.Expression) -> bool:
    """Whether an expression (parentheses aside) is an operator or boolean expression."""
    return _kind(_strip(node)) != "leaf"


def _kind(node: exp.Expression) -> str:
    if type(node) in _OPERATORS or isinstance(node, exp.Is):
        return "op"
    if type(node) in _BOOL or isinstance(node, exp.Not):
        return "bool"
    return "leaf"


def _simple(node: exp.Expression, parent: exp.Expression | None, left: bool) -> bool:
    """ruleutils' isSimpleNode in pretty mode: no parentheses needed under `parent`."""
    if parent is None:
        return True
    kind, outer = _kind(node), _kind(parent)
    if kind == "leaf":
        return True
    if kind == "op":
        if outer == "bool":
            return True
        if outer == "op" and isinstance(node, _LOW + _HIGH) and isinstance(parent, _LOW + _HIGH):
            if isinstance(node, _HIGH) and isinstance(parent, _LOW):
                return True
            if isinstance(node, _LOW) and isinstance(parent, _HIGH):
                return False
            return left  # same priority: (a - b) - c, not a - (b - c)
        return outer == "leaf" and not isinstance(parent, exp.Cast)
    if outer == "bool":
        if isinstance(node, (exp.Not, exp.And)):
            return isinstance(parent, (exp.And, exp.Or))
        return isinstance(parent, exp.Or)
    return outer == "leaf" and not isinstance(parent, exp.Cast)


def _text(node: exp.Expression, parent, left: bool, pretty_mode: bool) -> str:
    node = _strip(node)
    kind = _kind(node)
    if kind == "leaf":
        return _operand(node, pretty_mode)
    if isinstance(node, exp.Not):
        text = f"NOT {_text(node.this, node, True, pretty_mode)}"
    elif isinstance(node, exp.Is):
        text = f"{_text(node.this, node, True, pretty_mode)} IS " + \
               ("NOT " if node.args.get("negate") else "") + \
               _operand(_strip(node.expression), pretty_mode).upper()
    else:
        op = _BOOL.get(type(node)) or _OPERATORS[type(node)]
        text = f"{_text(node.this, node, True, pretty_mode)} {op} " \
               f"{_text(node.expression, node, False, pretty_mode)}"
    if pretty_mode:
        return text if _simple(node, parent, left) else f"({text})"
    return f"({text})"


_KEYWORDS = {exp.CurrentTimestamp: "CURRENT_TIMESTAMP", exp.CurrentDate: "CURRENT_DATE",
             exp.CurrentTime: "CURRENT_TIME", exp.Localtimestamp: "LOCALTIMESTAMP"}


def _operand(node: exp.Expression, pretty_mode: bool = True) -> str:
    """What is no operator: constants, columns, casts, function calls, as ruleutils."""
    if type(node) in _KEYWORDS:
        return _KEYWORDS[type(node)]
    if isinstance(node, exp.Dot) and node.this.name == "pg_catalog":
        return _operand(node.expression, pretty_mode)  # pg_catalog.now(): statements.py
    if isinstance(node, exp.Cast):
        to = node.to
        name = to.this.lower() if isinstance(to, exp.ObjectIdentifier) else sql_type(to).sql()
        return f"{_text(node.this, node, True, pretty_mode)}::{name}"
    if isinstance(node, exp.Neg):
        return f"(- {_text(node.this, node, True, pretty_mode)})"
    if isinstance(node, exp.Literal):
        return "'" + node.this.replace("'", "''") + "'" if node.is_string else str(node.this)
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, exp.Null):
        return "NULL"
    if isinstance(node, exp.Column) and not node.table:
        return quote_ident(node.name if node.this.quoted else node.name.lower())
    if isinstance(node, exp.Anonymous):
        args = ", ".join(_text(a, None, True, pretty_mode) for a in node.expressions)
        return f"{node.name.lower()}({args})"
    if isinstance(node, exp.Any):
        return f"ANY ({_operand(_strip(node.this), pretty_mode)})"
    if isinstance(node, exp.Array):
        return "ARRAY[" + ", ".join(_text(a, None, True, pretty_mode)
                                    for a in node.expressions) + "]"
    if isinstance(node, (exp.Coalesce, exp.Greatest, exp.Least, exp.Nullif)):
        args = [node.this] + list(node.expressions) if not isinstance(node, exp.Nullif) \
            else [node.this, node.expression]
        return f"{node.sql_name()}(" + ", ".join(_text(a, None, True, pretty_mode)
                                                 for a in args) + ")"
    if isinstance(node, exp.Func) and node.this is not None and not node.expressions \
            and len([v for v in node.args.values() if v is not None]) == 1:
        # a function of one argument (length(c), upper(c)): its name as written, lower case
        return f"{node.sql_name().lower()}({_text(node.this, None, True, pretty_mode)})"
    return node.sql(dialect="postgres")
