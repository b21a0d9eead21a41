"""Parse COPY statements, in both option syntaxes PostgreSQL accepts.

psql's \\copy sends the pre-9.0 form (`COPY t FROM STDIN CSV HEADER DELIMITER ','`),
drivers send `COPY t FROM STDIN (FORMAT csv, HEADER true)`; sqlglot parses neither form
reliably, so COPY has its own small parser. The query of `COPY (query) TO` is parsed by
the caller. The options are checked by copy_options.parse_copy_options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planner import errors


@dataclass
class CopySpec:
    table: str | None            # COPY table ...
    columns: list[str] | None    # optional column list
    query: str | None            # COPY (query) TO ...
    is_from: bool
    target: str                  # "stdin", "stdout" or a file path
    to_std: bool
    options: dict[str, str | None] = field(default_factory=dict)
    schema: str | None = None    # COPY schema.table, database.schema.table
    catalog: str | None = None


_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*)'
_QUALIFIED = rf"{_IDENT}(?:\s*\.\s*{_IDENT})*"


def _ident(text: str) -> str:
    text = text.strip()
    if text.startswith('"'):
        return text[1:-1].replace('""', '"')
    return text.lower()


def _qualified(text: str) -> tuple[str | None, str | None, str]:
    """(catalog, schema, name) of `[[catalog.]schema.]name` (42601 for more parts)."""
    parts = [_ident(p) for p in re.findall(_IDENT, text)]
    if len(parts) > 3:
        raise errors.SyntaxError_("improper qualified name (too many dotted names): "
                                  + ".".join(parts))
    parts = [None] * (3 - len(parts)) + parts
    return parts[0], parts[1], parts[2]


def _matching_paren(text: str, start: int) -> int:
    depth, i, quote = 0, start, None
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c in ("'", '"'):
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise errors.SyntaxError_("syntax error in COPY: unbalanced parentheses")


def parse(text: str) -> CopySpec:
    m = re.match(r"(?is)^\s*COPY\s+", text)
    if not m:
        raise errors.SyntaxError_("syntax error: expected COPY")
    pos = m.end()
    table = query = catalog = schema = None
    columns = None
    if text[pos:pos + 1] == "(":
        end = _matching_paren(text, pos)
        query = text[pos + 1:end]
        pos = end + 1
    else:
        tm = re.compile(_QUALIFIED).match(text, pos)
        if not tm:
            raise errors.SyntaxError_("syntax error in COPY: expected a table name")
        catalog, schema, table = _qualified(tm.group(0))
        pos = tm.end()
        rest = text[pos:].lstrip()
        if rest.startswith("("):
            start = len(text) - len(rest)
            end = _matching_paren(text, start)
            columns = [_ident(c.strip()) for c in text[start + 1:end].split(",") if c.strip()]
            pos = end + 1
    dm = re.compile(r"(?is)\s*(FROM|TO)\s+(STDIN|STDOUT|'(?:[^']|'')*')").match(text, pos)
    if not dm:
        raise errors.SyntaxError_("syntax error in COPY: expected FROM or TO and a source")
    is_from = dm.group(1).upper() == "FROM"
    target = dm.group(2)
    to_std = target.upper() in ("STDIN", "STDOUT")
    target = target.lower() if to_std else target[1:-1].replace("''", "'")
    if query is not None and is_from:
        raise errors.SyntaxError_("COPY (query) FROM is not valid")
    options = _options(text[dm.end():].strip())
    return CopySpec(table, columns, query, is_from, target, to_std, options, schema, catalog)


def _options(rest: str) -> dict[str, str | None]:
    rest = re.sub(r"(?is)^WITH\s*", "", rest).strip().rstrip(";").strip()
    if not rest:
        return {}
    if rest.startswith("("):
        end = _matching_paren(rest, 0)
        out = {}
        for item in _split_commas(rest[1:end]):
            parts = item.strip().split(None, 1)
            if not parts:
                continue
            out[parts[0].lower()] = _value(parts[1]) if len(parts) > 1 else None
        return out
    return _legacy(rest)


def _split_commas(s: str) -> list[str]:
    out, cur, quote, depth = [], "", None, 0
    for c in s:
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += c
    out.append(cur)
    return out


def _value(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == "'" and v[-1] == "'":
        return v[1:-1].replace("''", "'")
    if v.upper().startswith("E'") and v.endswith("'"):
        return v[2:-1].encode().decode("unicode_escape")
    return v.strip('"').lower() if not v.startswith("(") else v


_LEGACY = re.compile(
    r"(?is)\s*(?:(BINARY|CSV|HEADER|FREEZE)\b|(DELIMITER|NULL|QUOTE|ESCAPE|ENCODING)\s+(?:AS\s+)?"
    r"(E?'(?:[^']|'')*')|FORCE\s+(QUOTE|NOT\s+NULL|NULL)\s+(\*|[^ ]+(?:\s*,\s*[^ ]+)*))")


def _legacy(rest: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    pos = 0
    while pos < len(rest):
        m = _LEGACY.match(rest, pos)
        if not m or m.end() == pos:
            word = rest[pos:].split()[0] if rest[pos:].split() else rest[pos:]
            raise errors.SyntaxError_(f'syntax error at or near "{word}"')
        if m.group(1):
            flag = m.group(1).lower()
            if flag in ("binary", "csv"):
                out["format"] = flag
            else:
                out[flag] = "true"
        elif m.group(2):
            out[m.group(2).lower()] = _value(m.group(3))
        else:
            key = "force_" + "_".join(m.group(4).lower().split())
            out[key] = m.group(5)
        pos = m.end()
    return out
