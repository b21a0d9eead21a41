"""Typing of the formatting functions: to_char, to_date, to_timestamp, to_number.

PostgreSQL's signatures: to_char(timestamp | timestamptz | interval | int4 | int8 | numeric
| float4 | float8, text) -> text (a date is taken as timestamptz, an int2 as int4, an
unknown literal is ambiguous, 42725); to_date(text, text) -> date; to_timestamp(text, text)
and to_timestamp(float8) -> timestamptz; to_number(text, text) -> numeric. Templates are
read by planner/formatting.py when a value is formatted, so a bad template fails only when
a row reaches it, as in PostgreSQL (planner/format_values.py formats one value).

to_number's result takes the scale of the digits it read (16 with V, which divides by
numeric's power(10, n)): a batch column has one scale, so the template must be a constant
(its decimal places fix the column's scale) and a value read with fewer decimal places
than the template has is refused at run time (0A000) rather than shown with PostgreSQL's
other scale; constant arguments are typed by their value.
"""

from __future__ import annotations

import re

from planner import errors, types, zone_rules
from planner import expr as ex
from planner.coercion import (coerce, is_unknown, no_function, numeric_type, text_arg,
                              type_name)
from planner.expr import Call, Cast, Func, Literal
from planner.format_values import DATETIME_KINDS as _DATETIME, NUMBER_KINDS
from planner.number_format import parse_number_template
from planner.number_input import V_SCALE_DIGITS, to_number
from planner.types import Kind
from planner.values import numeric_type_of


def _arity(func: Func, args, *counts: int) -> None:
    if len(args) not in counts:
        raise no_function(func.value, args)


def _rule_to_char(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    x, fmt = args
    if is_unknown(x):
        raise errors.QueryError(
            f"function to_char({type_name(x)}, {type_name(fmt)}) is not unique", "42725",
            hint="Could not choose a best candidate function. You might need to add explicit "
            "type casts.")
    k = x.type.kind
    if k is Kind.DATE:
        x = coerce(x, types.TIMESTAMPTZ)
    elif k is Kind.INT2:
        x = coerce(x, types.INT4)
    elif k not in _DATETIME and k not in NUMBER_KINDS:
        raise no_function(func.value, args)
    fmt = text_arg(func, fmt, args)
    zone = zone_rules.zoned() if x.type.kind is Kind.TIMESTAMPTZ else None
    if zone is not None:
        # The fields of the wall clock in the session's zone; the zone's own patterns
        # (TZ, tz, TZH, TZM, OF) would need its abbreviation and offset at each value.
        if not isinstance(fmt, Literal) or fmt.value is None or _ZONE_PATTERN.search(fmt.value):
            raise errors.FeatureNotSupported(
                "to_char() of timestamp with time zone with a zone pattern or a template "
                "that is not a constant, in a time zone other than UTC")
        x = zone_rules.to_local(x, zone)
    return Call(func, (x, fmt), types.TEXT)


_ZONE_PATTERN = re.compile(r"(?i)tz|of")


def _rule_to_date(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    return Call(func, tuple(text_arg(func, a, args) for a in args), types.DATE)


def _rule_to_timestamp(func: Func, args) -> ex.Expr:
    _arity(func, args, 1, 2)
    if len(args) == 2:
        text, fmt = (text_arg(func, a, args) for a in args)
        read = Call(func, (text, fmt), types.TIMESTAMPTZ)
        zone = zone_rules.zoned()
        if zone is None:
            return read
        # Fields read without an offset are a wall clock in the session's zone.
        if not isinstance(fmt, Literal) or fmt.value is None or _ZONE_PATTERN.search(fmt.value):
            raise errors.FeatureNotSupported(
                "to_timestamp() with a zone pattern or a template that is not a constant, in "
                "a time zone other than UTC")
        return zone_rules.from_local(Cast(read, types.TIMESTAMP), zone)
    x = args[0]
    if not (is_unknown(x) or x.type.is_number):
        raise no_function(func.value, args)
    return Call(func, (coerce(x, types.FLOAT8),), types.TIMESTAMPTZ)


def _rule_to_number(func: Func, args) -> ex.Expr:
    _arity(func, args, 2)
    text, fmt = (text_arg(func, a, args) for a in args)
    if not isinstance(fmt, Literal):
        raise errors.FeatureNotSupported("to_number() with a template that is not a constant")
    if fmt.value is None or fmt.value == "":  # PostgreSQL returns NULL for an empty one
        return Literal(None, types.numeric(None, 0))
    try:
        _, desc = parse_number_template(fmt.value)
    except errors.QueryError:
        return Call(func, (text, fmt), types.numeric(None, 0))  # fails when a row comes
    if isinstance(text, Literal):
        if text.value is None:
            return Literal(None, numeric_type(desc.pre, V_SCALE_DIGITS if "V" in desc.flags
                                              else desc.post))
        try:
            value, _ = to_number(text.value, fmt.value)
            return Literal(value, numeric_type_of(value))
        except errors.QueryError:
            pass  # left for run time, where the row may never be reached
    scale = V_SCALE_DIGITS if "V" in desc.flags else desc.post
    return Call(func, (text, fmt), numeric_type(desc.pre, scale))


RULES = {Func.TO_CHAR: _rule_to_char, Func.TO_DATE: _rule_to_date,
         Func.TO_TIMESTAMP: _rule_to_timestamp, Func.TO_NUMBER: _rule_to_number}
