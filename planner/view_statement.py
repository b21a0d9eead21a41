"""CREATE VIEW as PostgreSQL 15's grammar reads it:

    CREATE [OR REPLACE] [TEMP | TEMPORARY] [RECURSIVE] VIEW name [(column, ...)]
        [WITH (option, ...)] AS query [WITH [CASCADED | LOCAL] CHECK OPTION]

sqlglot does not read OR REPLACE, RECURSIVE, view options or CHECK OPTION, so the head and
the tail are read here and the query alone is parsed (planner/statements.py parse_one).
A RECURSIVE view is what PostgreSQL makes of it: `WITH RECURSIVE name (columns) AS
(query) SELECT columns FROM name`. Refused with 0A000: TEMP views (they would be shared
and persistent here, as temporary tables would), view options (security_barrier,
check_option, security_invoker) and WITH CHECK OPTION (views are not updatable here, so
there is nothing for it to check, and PostgreSQL refuses it on views that are not), and
CREATE MATERIALIZED VIEW.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from planner import errors
from planner.schema import RelationName

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*)'
_NAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})*"
_HEAD = re.compile(
    rf"(?is)^CREATE\s+(?P<replace>OR\s+REPLACE\s+)?(?P<temp>(?:TEMP|TEMPORARY)\s+)?"
    rf"(?P<recursive>RECURSIVE\s+)?VIEW\s+(?P<name>{_NAME})\s*"
    rf"(?:\((?P<columns>[^()]*)\)\s*)?(?P<options>WITH\s*\([^()]*\)\s*)?AS\b\s*(?P<query>.*)$")
_CHECK = re.compile(r"(?is)\s+WITH\s+(?:(?:CASCADED|LOCAL)\s+)?CHECK\s+OPTION\s*$")
_MATERIALIZED = re.compile(r"(?is)^CREATE\s+(?:OR\s+REPLACE\s+)?MATERIALIZED\s+VIEW\b")


@dataclass(frozen=True)
class ViewStatement:
    """A CREATE [OR REPLACE] VIEW: the view's name, its column list (empty: the query's
    names), the query as written and parsed."""

    relation: RelationName
    columns: tuple[str, ...]
    query: str
    tree: exp.Expression
    replace: bool


def is_create_view(text: str) -> bool:
    """Whether `text` is a CREATE ... VIEW statement (materialized ones included)."""
    return bool(_MATERIALIZED.match(text) or re.match(
        r"(?is)^CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:TEMP|TEMPORARY)\s+)?(?:RECURSIVE\s+)?VIEW\b",
        text))


def parse(text: str, parse_query) -> ViewStatement:
    """The CREATE VIEW statement `text`; `parse_query` parses its query (SQL text to a
    sqlglot tree, with PostgreSQL's syntax errors)."""
    if _MATERIALIZED.match(text):
        raise errors.FeatureNotSupported("materialized views are not supported")
    m = _HEAD.match(text)
    if not m:
        raise errors.SyntaxError_("syntax error in CREATE VIEW")
    if m.group("temp"):
        raise errors.FeatureNotSupported("temporary views are not supported")
    if m.group("options"):
        raise errors.FeatureNotSupported(
            f"view options {m.group('options').strip()[4:].strip()} are not supported")
    query = m.group("query").strip()
    if _CHECK.search(query):
        raise errors.FeatureNotSupported(
            "WITH CHECK OPTION is not supported: views are not updatable in raympp")
    relation = _relation(m.group("name"))
    columns = tuple(_identifier(c) for c in m.group("columns").split(",")) \
        if m.group("columns") is not None else ()
    if m.group("recursive"):
        if not columns:
            raise errors.SyntaxError_("syntax error at or near \"AS\"",
                                      hint="Recursive views need a column list.")
        cols = ", ".join(_quoted(c) for c in columns)
        # (a newline ends a -- comment the query may end with)
        query = (f"WITH RECURSIVE {_quoted(relation.name)} ({cols}) AS ({query}\n) "
                 f"SELECT {cols} FROM {_quoted(relation.name)}")
    if not query:
        raise errors.SyntaxError_("syntax error at end of input")
    return ViewStatement(relation, columns, query, parse_query(query), bool(m.group("replace")))


def _identifier(part: str) -> str:
    part = part.strip()
    if not re.fullmatch(_IDENT, part):
        near = part.split()[0] if part.split() else ")"
        raise errors.SyntaxError_(f'syntax error at or near "{near}"')
    return part[1:-1].replace('""', '"') if part.startswith('"') else part.lower()


def _relation(text: str) -> RelationName:
    parts = [_identifier(p) for p in re.findall(_IDENT, text)]
    if len(parts) > 3:
        raise errors.SyntaxError_(
            f"improper qualified name (too many dotted names): {'.'.join(parts)}")
    parts = [None] * (3 - len(parts)) + parts
    return RelationName(parts[2], parts[1], parts[0])


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
