"""COMMENT ON as PostgreSQL 15's grammar reads it, for the objects raympp has:

    COMMENT ON { TABLE | VIEW | SEQUENCE | INDEX } name IS { 'text' | NULL }
    COMMENT ON COLUMN relation.column IS ...
    COMMENT ON SCHEMA name IS ...
    COMMENT ON CONSTRAINT name ON table IS ...

coordinator/comments.py stores the comment with its object, in the transaction. An empty
string removes the comment, as NULL does (PostgreSQL's CreateComments). The other object
kinds PostgreSQL can comment on are 0A000 naming the kind; syntax errors are 42601.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from planner import errors
from planner.index_statement import ident as _name, qualified_name
from planner.role_statement import _Parser
from planner.schema import RelationName


class Target(enum.Enum):
    TABLE = "TABLE"
    VIEW = "VIEW"
    SEQUENCE = "SEQUENCE"
    INDEX = "INDEX"
    COLUMN = "COLUMN"
    SCHEMA = "SCHEMA"
    CONSTRAINT = "CONSTRAINT"


# The object kinds of PostgreSQL 15's COMMENT ON that raympp has none of (first word, and
# the words that may follow it in the kind's name).
_OTHER_KINDS = {
    "access": "ACCESS METHOD", "aggregate": "AGGREGATE", "cast": "CAST",
    "collation": "COLLATION", "conversion": "CONVERSION", "database": "DATABASE",
    "domain": "DOMAIN", "extension": "EXTENSION", "event": "EVENT TRIGGER",
    "foreign": "FOREIGN", "function": "FUNCTION", "large": "LARGE OBJECT",
    "materialized": "MATERIALIZED VIEW", "operator": "OPERATOR", "policy": "POLICY",
    "procedure": "PROCEDURE", "procedural": "PROCEDURAL LANGUAGE",
    "publication": "PUBLICATION", "role": "ROLE", "routine": "ROUTINE", "rule": "RULE",
    "server": "SERVER", "statistics": "STATISTICS", "subscription": "SUBSCRIPTION",
    "tablespace": "TABLESPACE", "text": "TEXT SEARCH", "transform": "TRANSFORM",
    "trigger": "TRIGGER", "type": "TYPE", "language": "LANGUAGE",
}


@dataclass(frozen=True)
class Comment:
    """`name`: the object (for COLUMN the relation, `column` its column; for CONSTRAINT
    `constraint` on the table `name`); `text`: the comment, None to remove it."""

    target: Target
    name: RelationName
    text: str | None
    column: str | None = None
    constraint: str | None = None


def parse(text: str) -> Comment:
    p = _Parser(text)
    p.expect_word("comment")
    p.expect_word("on")
    t = p.peek()
    if t.kind == "word" and t.value in _OTHER_KINDS:
        kind = _OTHER_KINDS[t.value]
        if t.value == "foreign":
            kind = "FOREIGN TABLE" if p.is_word("table", ahead=1) else \
                "FOREIGN DATA WRAPPER"
        elif t.value == "operator" and p.is_word("class", "family", ahead=1):
            kind = f"OPERATOR {p.peek(1).value.upper()}"
        raise errors.FeatureNotSupported(f"COMMENT ON {kind} is not supported")
    word = p.expect_word(*(k.value.lower() for k in Target))
    target = Target(word.upper())
    column = constraint = None
    if target is Target.SCHEMA:
        name = RelationName(_name(p))
    elif target is Target.CONSTRAINT:
        constraint = _name(p)
        p.expect_word("on")
        if p.is_word("domain"):
            raise errors.FeatureNotSupported("COMMENT ON CONSTRAINT ... ON DOMAIN is not "
                                             "supported")
        name = qualified_name(p)
    elif target is Target.COLUMN:
        parts = [_name(p)]
        while _is_dot(p):
            p.next()
            parts.append(_name(p))
        if len(parts) == 1:
            raise errors.SyntaxError_("column name must be qualified")
        if len(parts) > 4:
            raise errors.SyntaxError_(
                f"improper qualified name (too many dotted names): {'.'.join(parts)}")
        column = parts[-1]
        rel = parts[:-1]
        name = RelationName(rel[-1], rel[-2] if len(rel) > 1 else None,
                            rel[-3] if len(rel) > 2 else None)
    else:
        name = qualified_name(p)
    p.expect_word("is")
    if p.is_word("null"):
        p.next()
        value = None
    else:
        value = p.string()
    p.end()
    return Comment(target, name, value or None, column, constraint)


def _is_dot(p: _Parser) -> bool:
    t = p.peek()
    return t.kind == "other" and t.value == "."
