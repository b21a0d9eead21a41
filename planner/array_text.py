"""The text form of an array: array_in's splitting into element texts, array_out's
quoting of one element.

Only the syntax, for every element type: values.parse_text / format_text read and write
whole arrays with it, each element by its type's rules. Only one-dimensional arrays with
the default lower bound exist: a nested or dimension-decorated literal is 0A000.
"""

from __future__ import annotations

from planner import errors

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


def quote_element(s: str) -> str:
    """An element's text as array_out writes it: quoted when empty, NULL, or holding
    braces, quotes, commas, backslashes or white space."""
    if s == "" or s.upper() == "NULL" or any(c in _SPECIAL for c in s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s
