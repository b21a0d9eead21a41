"""json and jsonb values: input, canonical output, to_json of SQL values, order, casts.

A json value is held as the text the user gave (validated on input); a jsonb value as the
text PostgreSQL's jsonb_out prints: keys deduplicated (the last wins) and ordered as
jsonb stores them (shorter keys first, then by bytes), `{"a": 1, "b": [1, 2]}` spacing,
numbers as numeric text (1.50 stays 1.50, 1e2 is 100), strings with PostgreSQL's
escapes. Both are Arrow strings in batches, so every other layer treats them as text.

Values are parsed by Python's json module (its C scanner follows the same grammar as
PostgreSQL's: no leading zeros, NaN or trailing commas) into plain Python values: dict,
list, str, Decimal, bool, None. `sort_key` gives the bytes that order jsonb values as
PostgreSQL's btree does (see `sort_key`). The operators and functions over these values
are planner/json_ops.py's; segment/kernels/expr_json.py applies both to columns.
"""

from __future__ import annotations

import json
import math
import struct
from decimal import Decimal

from planner import errors
from planner.types import Kind, SqlType

JSON_KINDS = (Kind.JSON, Kind.JSONB)


class _Bad(ValueError):
    """NaN, Infinity and -Infinity: Python's json module reads them, PostgreSQL does not."""


def _reject(token: str):
    raise _Bad(token)


def _syntax(detail: str | None = None) -> errors.QueryError:
    return errors.InvalidTextRepresentation("invalid input syntax for type json", detail=detail)


def _sorted_object(pairs: list) -> dict:
    d = dict(pairs)  # a repeated key keeps its last value, as jsonb does
    return {k: d[k] for k in sorted(d, key=key_order)}


def key_order(k: str) -> tuple[int, bytes]:
    """jsonb's storage order of object keys: by length in bytes, then by bytes."""
    b = k.encode()
    return len(b), b


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, parse_constant=_reject,
                            object_pairs_hook=_sorted_object)
_PAIRS_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal,
                                  parse_constant=_reject, object_pairs_hook=list)


def _decode(text: str, decoder: json.JSONDecoder):
    try:
        return decoder.decode(text)
    except _Bad as e:
        raise _syntax(f'Token "{e}" is invalid.') from None
    except json.JSONDecodeError as e:
        if e.pos >= len(text.rstrip(" \t\n\r")):
            raise _syntax("The input string ended unexpectedly.") from None
        raise _syntax() from None
    except RecursionError:
        raise errors.QueryError("stack depth limit exceeded", "54001") from None


def check_json(text: str) -> str:
    """json input: the text itself once it is valid JSON (22P02 otherwise)."""
    _decode(text, _PAIRS_DECODER)
    return text


def parse(text: str):
    """jsonb input: the Python value of a JSON text (objects as key-ordered dicts). As
    jsonb, a \\u0000 escape is 22P05 and a lone surrogate 22P02."""
    v = _decode(text, _DECODER)
    if "\\u" in text:
        _check_strings(v)
    return v


def _check_strings(v) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _check_string(k)
            _check_strings(x)
    elif isinstance(v, list):
        for x in v:
            _check_strings(x)
    elif isinstance(v, str):
        _check_string(v)


def _check_string(s: str) -> None:
    if "\x00" in s:
        raise errors.QueryError("unsupported Unicode escape sequence", "22P05",
                                detail="\\u0000 cannot be converted to text.")
    if any("\ud800" <= c <= "\udfff" for c in s):
        raise _syntax("Unicode low surrogate must follow a high surrogate.")


def canonical(text: str) -> str:
    """jsonb_in then jsonb_out of a text."""
    return dump(parse(text))


# --- output --------------------------------------------------------------------------------
def quote(s: str) -> str:
    """PostgreSQL's escape_json: \\" \\\\ \\b \\f \\n \\r \\t, other controls as \\u00xx."""
    return json.dumps(s, ensure_ascii=False)


def number_text(d: Decimal) -> str:
    """numeric_out of a JSON number: its own scale, no exponent, no negative zero."""
    return f"{abs(d) if d == 0 else d:f}"


def dump(v) -> str:
    """jsonb_out: `{"a": 1, "b": [1, 2]}`."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, Decimal):
        return number_text(v)
    if isinstance(v, list):
        return "[" + ", ".join(dump(x) for x in v) + "]"
    return "{" + ", ".join(f"{quote(k)}: {dump(x)}" for k, x in v.items()) + "}"


def as_jsonb_object(pairs) -> dict:
    """An object built from (key, value) pairs as jsonb keeps it."""
    return _sorted_object(list(pairs))


def type_name(v) -> str:
    """json_typeof's word for a value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, str):
        return "string"
    if isinstance(v, Decimal):
        return "number"
    return "array" if isinstance(v, list) else "object"


# --- SQL values as JSON ----------------------------------------------------------------------
def scalar_json(text: str | None, t: SqlType) -> str:
    """to_json of one SQL value given as its text output: numbers bare (NaN and Infinity
    quoted), booleans true/false, dates and timestamps in ISO 8601 with a T, json as is,
    jsonb as its text, anything else a JSON string. NULL is null."""
    if text is None:
        return "null"
    k = t.kind
    if t.is_number:
        if t.is_float and text in ("NaN", "Infinity", "-Infinity"):
            return quote(text)
        return text
    if k is Kind.BOOL:
        return "true" if text in ("t", "true") else "false"
    if k in JSON_KINDS:
        return text
    if k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        text = text.replace(" ", "T", 1)
        if k is Kind.TIMESTAMPTZ and len(text) > 3 and text[-3] in "+-":
            text += ":00"
    return quote(text)


def pad_char(text: str | None, t: SqlType) -> str | None:
    """char(n) values are kept without their padding; their output has it."""
    if text is None or t.kind is not Kind.CHAR or t.length is None:
        return text
    return text.ljust(t.length)


# --- order ---------------------------------------------------------------------------------
_NULL, _STRING, _NUMBER, _BOOL, _ARRAY, _OBJECT = b"\x00", b"\x01", b"\x02", b"\x03", b"\x10", b"\x11"


def sort_key(text: str) -> bytes:
    """Bytes whose order is PostgreSQL's order of jsonb values (compareJsonbContainers):
    Object > Array > Boolean > Number > String > Null; arrays and objects by their number
    of elements or pairs first, then element by element (pairs key, value in storage
    order); numbers by value (1.5 = 1.50), strings by bytes (the C collation). A scalar
    at the top is a one-element pseudo array there: it sorts after an empty array and
    before any array of one element. Equal keys are exactly the equal values."""
    v = parse(text)
    if isinstance(v, (list, dict)):
        return _key(v)
    return _ARRAY + struct.pack(">I", 1) + b"\x00" + _key(v)


def _key(v) -> bytes:
    if v is None:
        return _NULL
    if isinstance(v, bool):
        return _BOOL + (b"\x01" if v else b"\x00")
    if isinstance(v, str):
        return _STRING + _string_key(v)
    if isinstance(v, Decimal):
        return _NUMBER + _number_key(v)
    if isinstance(v, list):
        return _ARRAY + struct.pack(">I", len(v)) + b"\x01" + b"".join(_key(x) for x in v)
    return _OBJECT + struct.pack(">I", len(v)) + b"".join(
        _string_key(k) + _key(x) for k, x in v.items())


def _string_key(s: str) -> bytes:
    """Self-delimiting and order-preserving: 0x00 escaped as 00 FF, ended by 00 00."""
    return s.encode().replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def _number_key(d: Decimal) -> bytes:
    if d == 0:
        return b"\x02"
    sign, digits, _exp = d.normalize().as_tuple()
    body = struct.pack(">I", d.normalize().adjusted() + 2**31) + bytes(x + 1 for x in digits) + b"\x00"
    if sign:
        return b"\x01" + bytes(255 - x for x in body)
    return b"\x03" + body


# --- casts ---------------------------------------------------------------------------------
def scalar_of(text: str, dst: SqlType):
    """jsonb -> boolean / integer / numeric / float: (value, its type) of a scalar of the
    right kind, which planner/values.py casts on to dst; 22023 `cannot cast jsonb object
    to type integer` for other values."""
    v = parse(text)
    if dst.kind is Kind.BOOL:
        if not isinstance(v, bool):
            raise _cannot_cast(v, dst)
        return v, SqlType(Kind.BOOL)
    if not isinstance(v, Decimal):
        raise _cannot_cast(v, dst)
    if dst.is_float:
        f = float(v)
        if math.isinf(f):
            raise errors.NumericOutOfRange(f'"{number_text(v)}" is out of range for type {dst}')
        return f, SqlType(Kind.FLOAT8)
    return v, SqlType(Kind.NUMERIC, None, max(0, -v.as_tuple().exponent))


def _cannot_cast(v, dst: SqlType) -> errors.QueryError:
    name = "numeric" if isinstance(v, Decimal) else type_name(v)  # JsonbTypeName's words
    return errors.InvalidParameterValue(f"cannot cast jsonb {name} to type {dst}")


def to_json_kind(v: str, src: SqlType, dst: SqlType) -> str:
    """CAST of text, json or jsonb to json or jsonb (one value)."""
    if dst.kind is Kind.JSON:
        return v if src.kind is Kind.JSONB else check_json(v)
    return canonical(v)
