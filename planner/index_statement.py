"""CREATE INDEX and DROP INDEX as PostgreSQL 15's grammar reads them:

    CREATE [UNIQUE] INDEX [CONCURRENTLY] [[IF NOT EXISTS] name] ON [ONLY] table
        [USING method] ( column [ASC] [NULLS LAST] [, ...] )
        [INCLUDE (...)] [NULLS [NOT] DISTINCT] [WITH (...)] [TABLESPACE t] [WHERE ...]
    DROP INDEX [CONCURRENTLY] [IF EXISTS] name [, ...] [CASCADE | RESTRICT]

raympp builds no index structure (scans skip chunks by their min/max), so an index is
only recorded in the catalog (coordinator/indexes.py): what is accepted is what the
catalog can show faithfully, a btree over plain columns in ascending order. Everything
else is parsed and refused with 0A000 naming the clause: UNIQUE (a new key over rows that
are already there is not enforced by anything yet), CONCURRENTLY, ONLY, another access
method, expressions, COLLATE, operator classes, DESC, NULLS FIRST, INCLUDE, NULLS [NOT]
DISTINCT, WITH, TABLESPACE and WHERE (partial indexes). Syntax errors are PostgreSQL's
(42601).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner import errors
from planner.role_statement import _Parser, _syntax_error
from planner.schema import RelationName


@dataclass(frozen=True)
class CreateIndex:
    name: str | None  # None: named as PostgreSQL names it (t_a_b_idx)
    table: RelationName
    columns: tuple[str, ...]
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropIndex:
    names: tuple[RelationName, ...]
    if_exists: bool = False
    cascade: bool = False


def _refuse(clause: str) -> errors.QueryError:
    return errors.FeatureNotSupported(f"CREATE INDEX ... {clause} is not supported")


def _is_other(p: _Parser, value: str) -> bool:
    t = p.peek()
    return t.kind == "other" and t.value == value


def _expect_other(p: _Parser, value: str) -> None:
    t = p.next()
    if t.kind != "other" or t.value != value:
        raise _syntax_error(t)


def ident(p: _Parser) -> str:
    t = p.next()
    if t.kind not in ("word", "ident"):
        raise _syntax_error(t)
    return t.value


def qualified_name(p: _Parser) -> RelationName:
    """[[catalog.]schema.]name"""
    parts = [ident(p)]
    while _is_other(p, "."):
        p.next()
        parts.append(ident(p))
    if len(parts) > 3:
        raise errors.SyntaxError_(
            f"improper qualified name (too many dotted names): {'.'.join(parts)}")
    return RelationName(parts[-1], parts[-2] if len(parts) > 1 else None,
                        parts[-3] if len(parts) > 2 else None)


def parse(text: str) -> CreateIndex | DropIndex:
    p = _Parser(text)
    verb = p.expect_word("create", "drop")
    if verb == "drop":
        return _drop(p)
    if p.is_word("unique"):
        p.next()
        p.expect_word("index")
        raise errors.FeatureNotSupported(
            "CREATE UNIQUE INDEX is not supported: declare the key as a PRIMARY KEY or "
            "UNIQUE constraint in CREATE TABLE")
    p.expect_word("index")
    if p.is_word("concurrently"):
        raise _refuse("CONCURRENTLY")
    if_not_exists = False
    if p.is_word("if"):
        p.next()
        p.expect_word("not")
        p.expect_word("exists")
        if_not_exists = True
    name = None
    if not p.is_word("on") or if_not_exists:
        name = ident(p)
    p.expect_word("on")
    if p.is_word("only"):
        raise _refuse("ON ONLY")
    table = qualified_name(p)
    if p.is_word("using"):
        p.next()
        method = ident(p)
        if method != "btree":
            raise _refuse(f"USING {method}")
    _expect_other(p, "(")
    columns = [_column(p)]
    while _is_other(p, ","):
        p.next()
        columns.append(_column(p))
    _expect_other(p, ")")
    t = p.peek()
    if t.kind == "word" and t.value in ("include", "nulls", "with", "tablespace", "where"):
        raise _refuse({"include": "INCLUDE", "nulls": "NULLS [NOT] DISTINCT",
                       "with": "WITH (storage parameters)", "tablespace": "TABLESPACE",
                       "where": "WHERE (a partial index)"}[t.value])
    p.end()
    return CreateIndex(name, table, tuple(columns), if_not_exists)


def _column(p: _Parser) -> str:
    t = p.peek()
    if t.kind == "other" and t.value == "(" or (
            t.kind == "word" and p.peek(1).kind == "other" and p.peek(1).value == "("):
        raise _refuse("on an expression")
    name = ident(p)
    if p.is_word("collate"):
        raise _refuse("COLLATE")
    if p.peek().kind in ("word", "ident") and not p.is_word("asc", "desc", "nulls"):
        raise _refuse(f"with operator class {p.peek().text}")
    if p.is_word("desc"):
        raise _refuse("DESC")
    if p.is_word("asc"):
        p.next()
    if p.is_word("nulls"):
        p.next()
        if p.expect_word("first", "last") == "first":
            raise _refuse("NULLS FIRST")
    return name


def _drop(p: _Parser) -> DropIndex:
    p.expect_word("index")
    if p.is_word("concurrently"):
        raise errors.FeatureNotSupported("DROP INDEX CONCURRENTLY is not supported")
    if_exists = False
    if p.is_word("if"):
        p.next()
        p.expect_word("exists")
        if_exists = True
    names = [qualified_name(p)]
    while _is_other(p, ","):
        p.next()
        names.append(qualified_name(p))
    cascade = False
    if p.is_word("cascade", "restrict"):
        cascade = p.next().value == "cascade"
    p.end()
    return DropIndex(tuple(names), if_exists, cascade)
