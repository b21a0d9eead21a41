"""Schema statements as PostgreSQL 15's grammar reads them:

    CREATE SCHEMA [IF NOT EXISTS] name [AUTHORIZATION role_spec]
    CREATE SCHEMA [IF NOT EXISTS] AUTHORIZATION role_spec     (named like the role)
    DROP SCHEMA [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
    ALTER SCHEMA name RENAME TO new_name
    ALTER SCHEMA name OWNER TO role_spec

`parse` returns a SchemaStatement; coordinator/schema_ddl.py applies it in the session's
transaction. Syntax errors are PostgreSQL's (42601); schema elements (CREATE SCHEMA s
CREATE TABLE ...) are refused with 0A000 before anything is created, and with IF NOT
EXISTS with PostgreSQL's own 0A000.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

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
        st = _create(p)
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


def _create(p: _Parser) -> SchemaStatement:
    if_not_exists = _if(p, "if", "not", "exists")
    name = None
    if not p.is_word("authorization"):
        name = _name(p)
    role = None
    if p.is_word("authorization"):
        p.next()
        role = p.role_spec()
    t = p.peek()
    if t.kind != "end" and not (t.kind == "other" and t.value == ";"):
        if not p.is_word("create", "grant"):
            raise _syntax_error(t)
        if if_not_exists:
            raise errors.FeatureNotSupported(
                "CREATE SCHEMA IF NOT EXISTS cannot include schema elements")
        raise errors.FeatureNotSupported(
            "CREATE SCHEMA with schema elements (create the schema, then its objects)")
    return SchemaStatement(Action.CREATE, (name,), role=role, if_exists=if_not_exists)


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
