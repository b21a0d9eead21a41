"""INTERVAL [(p)] 'text' [fields [(p)]]: the value of an interval literal.

The text is read by the one interval parser (planner/temporal.py parse_interval) with the
qualifier's fields, cut to them (restrict_interval) and rounded to the precision, as
PostgreSQL's interval_in with the literal's typmod. planner/sql_dialect.py reads the
literal as written; an exp.Interval of sqlglot's own making (a generate_series step '1.5
days' it split into INTERVAL '1.5' DAYS) is read as its text and unit together.
"""

from __future__ import annotations

import re

from sqlglot import exp

from planner import errors, temporal
from planner.sql_dialect import INTERVAL_FIELDS
from planner.temporal import Interval

# The qualifiers PostgreSQL's grammar has (opt_interval): a field alone, or these spans.
_SPANS = {("YEAR", "MONTH"), ("DAY", "HOUR"), ("DAY", "MINUTE"), ("DAY", "SECOND"),
          ("HOUR", "MINUTE"), ("HOUR", "SECOND"), ("MINUTE", "SECOND")}
MAX_PRECISION = 6


def interval_literal(node: exp.Interval) -> Interval:
    """The value of an INTERVAL literal (22007/22015 as interval_in, 42601 for a qualifier
    PostgreSQL's grammar does not have)."""
    text = node.this.name if node.this is not None else ""
    unit = node.args.get("unit")
    if node.args.get("fraction_in_string") or (
            isinstance(unit, exp.Var) and _field(unit)[0] not in INTERVAL_FIELDS):
        return temporal.parse_interval(f"{text} {unit.name}")  # sqlglot's split text
    fields, precision = _fields(unit)
    value = temporal.restrict_interval(temporal.parse_interval(text, fields), fields)
    # PostgreSQL warns and takes its maximum for a larger precision.
    return temporal.round_interval(value, None if precision is None
                                   else min(precision, MAX_PRECISION))


def _field(var: exp.Expression) -> tuple[str, int | None]:
    """A qualifier's field and the precision SECOND(p) carries."""
    m = re.fullmatch(r"(\w+)(?:\((\d+)\))?", var.name)
    if m is None:
        return var.name.upper(), None
    return m.group(1).upper(), None if m.group(2) is None else int(m.group(2))


def _fields(unit: exp.Expression | None) -> tuple[tuple[str, str] | None, int | None]:
    if unit is None:
        return None, None
    if isinstance(unit, exp.IntervalSpan):
        (first, _), (last, precision) = _field(unit.this), _field(unit.expression)
        if (first, last) not in _SPANS:
            raise errors.QueryError(f'syntax error at or near "{unit.expression.name}"', "42601")
        return (first, last), precision
    field, precision = _field(unit)
    return (field, field), precision
