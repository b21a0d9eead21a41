"""Schema statements as PostgreSQL 15's grammar reads them:

    CREATE SCHEMA [IF NOT EXISTS] name [AUTHORIZATION role_spec] [schema_element ...]
    CREATE SCHEMA [IF NOT EXISTS] AUTHORIZATION role_spec     (named like the role)
    DROP SCHEMA [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
    ALTER SCHEMA name RENAME TO new_name
    ALTER SCHEMA name OWNER TO role_spec

`parse` returns a SchemaStatement; coordinator/schema_ddl.py applies it in the session's
transaction. Syntax errors are PostgreSQL's (42601). The schema elements of CREATE SCHEMA s
CREATE TABLE ... CREATE TABLE ... are kept as the text of each (statements.classify reads
them when they run); with IF NOT EXISTS they are PostgreSQL's 0A000.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from sqlglot import tokens as sqltokens

from planner import errors
# The lexer and role names of the role statements: schema statements share their grammar.
from planner.role_statement import RESERVED, RoleSpec, _Parser, _syntax_error


class Action(enum.Enum):
    CREATE = "create"
    DROP = "drop"
    RENAME = "rename"   # ALTER SCHEMA ... RENAME TO
    OWNER = "owner"     # ALTER SCHEMA ... OWNER TO


@dataclass(frozen=True)
class SchemaStatement:
    """One schema statement. `names`: the schema created (None: named like `role`),
    altered, or the ones dropped; `role`: AUTHORIZATION or OWNER TO; `new_name`: RENAME
    TO; `if_exists`: IF NOT EXISTS (CREATE) or IF EXISTS (DROP)."""

    action: Action
    names: tuple[str | None, ...]
    role: RoleSpec | None = None
    new_name: str | None = None
    if_exists: bool = False
    cascade: bool = False
    elements: tuple[str, ...] = ()  # CREATE SCHEMA's schema elements, as written

    @property
    def command(self) -> str:
        """The command tag, and the name in "cannot execute ... in a read-only transaction"."""
        return {Action.CREATE: "CREATE SCHEMA", Action.DROP: "DROP SCHEMA"}.get(
            self.action, "ALTER SCHEMA")


def parse(text: str) -> SchemaStatement:
    p = _Parser(text)
    verb = p.expect_word("create", "drop", "alter")
    p.expect_word("schema")
    if verb == "create":
        st = _create(p, text)
    elif verb == "drop":
        st = _drop(p)
    else:
        st = _alter(p)
    p.end()
    return st


def _name(p: _Parser) -> str:
    """A ColId: a quoted identifier or a word that is not a reserved key word."""
    t = p.next()
    if t.kind == "ident" or (t.kind == "word" and t.value not in RESERVED
                             and t.value != "authorization"):
        return t.value
    raise _syntax_error(t)


def _if(p: _Parser, *words: str) -> bool:
    """`IF [NOT] EXISTS` when the next words are these."""
    if not all(p.is_word(w, ahead=i) for i, w in enumerate(words)):
        return False
    for _ in words:
        p.next()
    return True


def _create(p: _Parser, text: str) -> SchemaStatement:
    if_not_exists = _if(p, "if", "not", "exists")
    name = None
    if not p.is_word("authorization"):
        name = _name(p)
    role = None
    if p.is_word("authorization"):
        p.next()
        role = p.role_spec()
    t = p.peek()
    elements: tuple[str, ...] = ()
    if t.kind != "end" and not (t.kind == "other" and t.value == ";"):
        if not p.is_word("create", "grant"):
            raise _syntax_error(t)
        if if_not_exists:
            raise errors.FeatureNotSupported(
                "CREATE SCHEMA IF NOT EXISTS cannot include schema elements")
        elements = _elements(text)
        while p.peek().kind != "end":  # the elements' own grammar is theirs
            p.next()
    return SchemaStatement(Action.CREATE, (name,), role=role, if_exists=if_not_exists,
                           elements=elements)


_ELEMENT_STARTS = (sqltokens.TokenType.CREATE, sqltokens.TokenType.GRANT)


def _elements(text: str) -> tuple[str, ...]:
    """The text of each schema element: one starts at every CREATE or GRANT outside
    parentheses after the statement's own CREATE."""
    try:
        toks = sqltokens.Tokenizer().tokenize(text)
    except Exception as e:  # the tokenizer's own error type varies by version
        raise errors.SyntaxError_(f"syntax error: {e}") from None
    starts, depth = [], 0
    for i, t in enumerate(toks):
        if t.token_type is sqltokens.TokenType.L_PAREN:
            depth += 1
        elif t.token_type is sqltokens.TokenType.R_PAREN:
            depth -= 1
        elif i > 0 and depth == 0 and t.token_type in _ELEMENT_STARTS:
            starts.append(t.start)
    ends = starts[1:] + [len(text)]
    return tuple(text[a:b].strip().rstrip(";").strip() for a, b in zip(starts, ends))


def _drop(p: _Parser) -> SchemaStatement:
    if_exists = _if(p, "if", "exists")
    names = [_name(p)]
    while p.peek().kind == "other" and p.peek().value == ",":
        p.next()
        names.append(_name(p))
    cascade = False
    if p.is_word("cascade", "restrict"):
        cascade = p.next().value == "cascade"
    return SchemaStatement(Action.DROP, tuple(names), if_exists=if_exists, cascade=cascade)


def _alter(p: _Parser) -> SchemaStatement:
    name = _name(p)
    verb = p.expect_word("rename", "owner")
    p.expect_word("to")
    if verb == "rename":
        return SchemaStatement(Action.RENAME, (name,), new_name=_name(p))
    return SchemaStatement(Action.OWNER, (name,), role=p.role_spec())
