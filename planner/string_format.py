"""format(), quote_literal(), quote_nullable() and overlay() over Python strings, as PostgreSQL.

Constant folding (planner/fold.py) calls these directly and the segments once per distinct
argument tuple (segment/kernels/expr_regex.py).
"""

from __future__ import annotations

from planner import errors
from planner.catalog_names import quote_ident

_HINT = 'For a single "%" use "%%".'


def quote_literal(s: str) -> str:
    """s as a string literal: quotes doubled, and E'' with doubled backslashes when s has
    a backslash."""
    body = s.replace("'", "''")
    if "\\" in s:
        return "E'" + body.replace("\\", "\\\\") + "'"
    return "'" + body + "'"


def quote_nullable(s: str | None) -> str:
    """quote_literal, or the text NULL for NULL."""
    return "NULL" if s is None else quote_literal(s)


def overlay(s: str, placing: str, start: int, count: int | None = None) -> str:
    """overlay(s PLACING r FROM start [FOR count]): s with `count` characters (r's length
    by default) from `start` replaced by r."""
    if count is None:
        count = len(placing)
    if start - 1 < 0:
        raise errors.QueryError("negative substring length not allowed", "22011")
    if start + count > 2**31 - 1 or start + count < -2**31:
        raise errors.NumericOutOfRange("integer out of range")
    rest = start + count
    return s[:start - 1] + placing + s[max(rest - 1, 0):]


def _arg_position(fmt: str, i: int) -> tuple[int | None, int]:
    """An `n$` argument position at i (1-based) and the index after it; (None, i) when
    there is none."""
    position, j = _number(fmt, i)
    if position is None or j >= len(fmt) or fmt[j] != "$":
        return None, i
    if position == 0:
        raise errors.InvalidParameterValue(
            "format specifies argument 0, but arguments are numbered from 1")
    return position, j + 1


def _number(fmt: str, i: int) -> tuple[int | None, int]:
    j = i
    while j < len(fmt) and fmt[j].isdigit():
        j += 1
    if j == i:
        return None, i
    value = int(fmt[i:j])
    if value > 2**31 - 1:
        raise errors.InvalidParameterValue("number is out of range")
    return value, j


def format_text(fmt: str, args: list[str | None]) -> str:
    """format(fmt, args...) with %s, %I, %L, %%, positions n$ and widths (* and *n$ read
    the width from an argument; a negative width left-aligns). `args` are the values'
    texts (None for NULL)."""
    out, i, next_arg = [], 0, 0

    def arg(k: int):
        if k >= len(args):
            raise errors.InvalidParameterValue("too few arguments for format()")
        return args[k]

    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(fmt):
            raise errors.InvalidParameterValue("unterminated format() type specifier",
                                               hint=_HINT)
        if fmt[i] == "%":
            out.append("%")
            i += 1
            continue
        # [argpos$][-][width|*|*argpos$]type
        position, i = _arg_position(fmt, i)
        left = False
        while i < len(fmt) and fmt[i] == "-":
            left = True
            i += 1
        width = 0
        if i < len(fmt) and fmt[i] == "*":
            wpos, i = _arg_position(fmt, i + 1)
            if wpos is not None:
                w = arg(wpos - 1)
                next_arg = wpos
            else:
                w = arg(next_arg)
                next_arg += 1
            width = _width(w)
        else:
            w, j = _number(fmt, i)
            if w is not None:
                width, i = w, j
        if width < 0:
            left, width = True, -width
        if i >= len(fmt):
            raise errors.InvalidParameterValue("unterminated format() type specifier",
                                               hint=_HINT)
        kind = fmt[i]
        i += 1
        if kind not in "sIL":
            raise errors.InvalidParameterValue(
                f'unrecognized format() type specifier "{kind}"', hint=_HINT)
        if position is not None:
            value = arg(position - 1)
            next_arg = position
        else:
            value = arg(next_arg)
            next_arg += 1
        if kind == "s":
            text = "" if value is None else value
        elif kind == "I":
            if value is None:
                raise errors.QueryError("null values cannot be formatted as an SQL identifier",
                                        "22004")
            text = quote_ident(value)
        else:
            text = quote_nullable(value)
        pad = " " * max(width - len(text), 0)
        out.append(text + pad if left else pad + text)
    return "".join(out)


def _width(w: str | None) -> int:
    """A width argument's value (NULL counts as 0)."""
    if w is None:
        return 0
    try:
        value = int(w)
    except ValueError:
        raise errors.InvalidTextRepresentation(
            f'invalid input syntax for type integer: "{w}"') from None
    if not -2**31 <= value <= 2**31 - 1:
        raise errors.NumericOutOfRange(f'value "{w}" is out of range for type integer')
    return value
