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
_PRECEDENCE = {exp.Or: 1, exp.And: 2, exp.Not: 3, exp.EQ: 4, exp.NEQ: 4, exp.LT: 4,
               exp.LTE: 4, exp.GT: 4, exp.GTE: 4, exp.Like: 5, exp.ILike: 5, exp.Add: 6,
               exp.Sub: 6, exp.DPipe: 6, exp.Mul: 7, exp.Div: 7, exp.Mod: 7}
_OPERATORS = {exp.Or: "OR", exp.And: "AND", exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<",
              exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=", exp.Like: "~~", exp.ILike: "~~*",
              exp.Add: "+", exp.Sub: "-", exp.DPipe: "||", exp.Mul: "*", exp.Div: "/",
              exp.Mod: "%"}


def pretty(sql: str) -> str:
    """A stored expression text (operators in parentheses) as PostgreSQL's pretty mode
    prints it: parentheses only where precedence needs them."""
    try:
        tree = sqlglot.parse_one(f"SELECT {_NOW.sub('pg_catalog.now()', sql)}",
                                 dialect=RaymppPostgres).expressions[0]
    except sqlglot.errors.ParseError:
        return sql
    return _pretty(tree, 0)


def _pretty(node: exp.Expression, outer: int) -> str:
    while isinstance(node, exp.Paren):
        node = node.this
    prec = _PRECEDENCE.get(type(node))
    if prec is None:
        return _operand(node)
    if isinstance(node, exp.Not):
        text = f"NOT {_pretty(node.this, prec)}"
    else:
        # Left-associative: a right operand of the same precedence keeps its parentheses.
        text = f"{_pretty(node.this, prec)} {_OPERATORS[type(node)]} " \
               f"{_pretty(node.expression, prec + 1)}"
    return f"({text})" if prec < outer else text


_KEYWORDS = {exp.CurrentTimestamp: "CURRENT_TIMESTAMP", exp.CurrentDate: "CURRENT_DATE",
             exp.CurrentTime: "CURRENT_TIME", exp.Localtimestamp: "LOCALTIMESTAMP"}


def _operand(node: exp.Expression) -> str:
    """What is no operator: constants, columns, casts, function calls, as ruleutils."""
    if type(node) in _KEYWORDS:
        return _KEYWORDS[type(node)]
    if isinstance(node, exp.Dot) and node.this.name == "pg_catalog":
        return _operand(node.expression)  # pg_catalog.now(): see statements.py
    if isinstance(node, exp.Cast):
        to = node.to
        name = to.this.lower() if isinstance(to, exp.ObjectIdentifier) else sql_type(to).sql()
        return f"{_pretty(node.this, 99)}::{name}"
    if isinstance(node, exp.Neg):
        return f"(- {_pretty(node.this, 99)})"
    if isinstance(node, exp.Literal):
        return "'" + node.this.replace("'", "''") + "'" if node.is_string else str(node.this)
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, exp.Null):
        return "NULL"
    if isinstance(node, exp.Column) and not node.table:
        return quote_ident(node.name if node.this.quoted else node.name.lower())
    if isinstance(node, exp.Anonymous):
        args = ", ".join(_pretty(a, 0) for a in node.expressions)
        return f"{node.name.lower()}({args})"
    return node.sql(dialect="postgres")
