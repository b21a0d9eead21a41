"""One value through the formatting functions: what constant folding and segments share.

`to_char_value` formats one date, time, interval or number of a given SQL type;
`to_number_value` reads one number into a result column whose scale it must have;
`constant_call` evaluates a formatting Call over constants (planner/fold.py).
"""

from __future__ import annotations

from planner import errors
from planner.expr import Call, Func
from planner.format_input import epoch_to_timestamp, to_date, to_timestamp
from planner.formatting import datetime_fields, dch_pieces, format_datetime
from planner.number_format import format_number
from planner.number_input import to_number
from planner.types import Kind, SqlType

NUMBER_KINDS = {Kind.INT4: "int4", Kind.INT8: "int8", Kind.NUMERIC: "numeric",
                Kind.FLOAT4: "float4", Kind.FLOAT8: "float8"}
DATETIME_KINDS = (Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.INTERVAL)


def to_char_value(value, t: SqlType, fmt: str):
    """to_char of one value of type t: text, or None for an empty date/time template."""
    if t.kind in DATETIME_KINDS:
        if not fmt:
            return None
        is_interval = t.kind is Kind.INTERVAL
        pieces = dch_pieces(fmt, is_interval, "UTC" if t.kind is Kind.TIMESTAMPTZ else None)
        return format_datetime(pieces, datetime_fields(value, is_interval))
    return format_number(value, NUMBER_KINDS[t.kind], fmt)


def to_number_value(text: str, fmt: str, t: SqlType):
    """to_number of one string into a column of type t, whose scale it must have."""
    value, scale = to_number(text, fmt)
    if scale != t.scale:
        raise errors.FeatureNotSupported(
            f"to_number() read {scale} decimal places where its template has {t.scale} "
            "(raympp keeps one scale per result column)")
    return value


def constant_call(e: Call, vals: list):
    """The value of a formatting call over constants (fold.py)."""
    f = e.func
    if f is Func.TO_CHAR:
        return to_char_value(vals[0], e.args[0].type, vals[1])
    if f is Func.TO_DATE:
        return to_date(*vals)
    if f is Func.TO_TIMESTAMP:
        return to_timestamp(*vals) if len(vals) == 2 else epoch_to_timestamp(vals[0])
    return to_number_value(vals[0], vals[1], e.type)
