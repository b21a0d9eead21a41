"""Expressions written as SQL text over placeholder columns, parsed once and instantiated
with the caller's argument trees (the aggregates rewritten into others: bitwise_aggregates,
regression_aggregates).

Parsing a rewrite's text at every call cost more than binding it (a 64-bit bit_and is
~1,400 nodes: 15 ms to parse, 3 ms to copy), and the argument went through its SQL text
and back. `instantiate(sql, {"name": tree})` parses `sql` once per process, then returns
a copy in which each column `name` is `(tree)`, a copy of the argument as parsed (its
subscripts keep their marks, planner/bind_array.py `mark_subscripts`).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from planner.sql_dialect import RaymppPostgres

_PARSED: dict[str, exp.Expression] = {}
_MAX = 512  # distinct texts kept (they depend on the function and the argument types)


def instantiate(sql: str, args: dict[str, exp.Expression]) -> exp.Expression:
    """`sql` parsed (once) with each column named in `args` replaced by that tree."""
    template = _PARSED.get(sql)
    if template is None:
        template = sqlglot.parse_one(sql, read=RaymppPostgres)
        if len(_PARSED) >= _MAX:
            _PARSED.clear()
        _PARSED[sql] = template
    out = template.copy()
    for ref in list(out.find_all(exp.Column)):
        arg = args.get(ref.name) if not ref.table else None
        if arg is not None:
            ref.replace(exp.Paren(this=arg.copy()))
    return out
