"""Array values as Python values: PostgreSQL's array_in / array_out for one value.

An array value is a tuple of its elements' values (planner/values.py conventions, None for
a NULL element); int2vector and oidvector values are tuples too, printed space-separated.
Only one-dimensional arrays with the default lower bound exist: a nested or dimension-
decorated literal is 0A000. The batch kernels (segment/kernels/expr_pgarray.py) use these
for the rare values their vectorized paths do not take.
"""

from __future__ import annotations

from planner import errors
from planner.catalog_functions import reg_names, reg_oid
from planner.types import REG_KINDS, Kind, SqlType
from planner.values import cast_value, format_text, parse_text

_SPACE = " \t\n\r\v\f"
_SPECIAL = set('{}",\\') | set(_SPACE)


def _malformed(text: str, detail: str) -> errors.QueryError:
    return errors.QueryError(f'malformed array literal: "{text}"', "22P02", detail=detail)


def split_array_text(text: str) -> list[str | None]:
    """The element texts of a one-dimensional array literal ('{a,"b c",NULL}'), None for
    NULL, with PostgreSQL's 22P02 errors."""
    s = text.strip(_SPACE)
    if s.startswith("["):
        raise errors.FeatureNotSupported("array literals with explicit bounds ([lo:hi]={...})")
    if not s.startswith("{"):
        raise _malformed(text, 'Array value must start with "{" or dimension information.')
    items: list[str | None] = []
    i, n = 1, len(s)
    while i < n and s[i] in _SPACE:
        i += 1
    if i < n and s[i] == "}":
        if s[i + 1:].strip(_SPACE):
            raise _malformed(text, "Junk after closing right brace.")
        return items
    while True:
        while i < n and s[i] in _SPACE:
            i += 1
        if i >= n:
            raise _malformed(text, "Unexpected end of input.")
        c = s[i]
        if c == "{":
            raise errors.FeatureNotSupported("multidimensional arrays")
        if c in ",}":
            raise _malformed(text, f'Unexpected "{c}" character.')
        buf, quoted_any, pending = [], False, []  # pending: white space not yet kept
        while i < n:
            c = s[i]
            if c in _SPACE:
                pending.append(c)
                i += 1
                continue
            if c not in ",}" and pending:
                buf += pending
                pending = []
            if c == '"':
                quoted_any = True
                i += 1
                while i < n and s[i] != '"':
                    if s[i] == "\\" and i + 1 < n:
                        i += 1
                    buf.append(s[i])
                    i += 1
                if i >= n:
                    raise _malformed(text, "Unexpected end of input.")
                i += 1
            elif c == "\\":
                if i + 1 >= n:
                    raise _malformed(text, "Unexpected end of input.")
                buf.append(s[i + 1])
                quoted_any = True
                i += 2
            elif c in ",}":
                break
            elif c == "{":
                raise _malformed(text, 'Unexpected "{" character.')
            else:
                buf.append(c)
                i += 1
        value = "".join(buf)
        if not quoted_any:
            items.append(None if value.upper() == "NULL" else value)
        else:
            items.append(value)
        if i >= n:
            raise _malformed(text, "Unexpected end of input.")
        if s[i] == "}":
            if s[i + 1:].strip(_SPACE):
                raise _malformed(text, "Junk after closing right brace.")
            return items
        i += 1  # ','


def parse_array(text: str, t: SqlType) -> tuple:
    """array_in (int2vectorin / oidvectorin for vectors): the value of `text` as t."""
    if t.kind in (Kind.INT2VECTOR, Kind.OIDVECTOR):
        return tuple(parse_text(p, t.elem) for p in text.split())
    parse = parse_text
    if t.elem.kind in REG_KINDS:  # regtype[] of names: each as 'x'::regtype reads it

        def parse(p, et):
            oid = reg_oid(et.kind, p)
            return reg_names(et.kind).get(oid, str(oid))
    return tuple(None if p is None else parse(p, t.elem) for p in split_array_text(text))


def quote_element(s: str) -> str:
    """An element's text as array_out writes it: quoted when empty, NULL, or holding
    braces, quotes, commas, backslashes or white space."""
    if s == "" or s.upper() == "NULL" or any(c in _SPECIAL for c in s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def element_text(v, t: SqlType) -> str:
    """The element's output function: booleans print t/f in arrays."""
    if t.kind is Kind.BOOL:
        return "t" if v else "f"
    return format_text(v, t)


def format_array(value: tuple, t: SqlType) -> str:
    """array_out (int2vectorout / oidvectorout for vectors)."""
    if t.kind in (Kind.INT2VECTOR, Kind.OIDVECTOR):
        return " ".join(str(v) for v in value)
    return "{" + ",".join("NULL" if v is None else quote_element(element_text(v, t.elem))
                          for v in value) + "}"


def cast_array(value: tuple, src: SqlType, dst: SqlType) -> tuple:
    """An array cast element by element (the element cast's errors)."""
    if src.elem == dst.elem:
        return value
    return tuple(cast_value(v, src.elem, dst.elem) for v in value)
