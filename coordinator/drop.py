"""DROP TABLE and DROP VIEW, with the views that depend on what is dropped.

Each named relation must be of the statement's kind (PostgreSQL: 42809 `"v" is not a
table`, HINT `Use DROP VIEW to remove a view.`), exist (42P01 `table "t" does not
exist`), or be skipped with IF EXISTS (a NOTICE). The views that read a dropped relation,
directly or through other views (ViewDef.depends), are dropped with it under CASCADE
(NOTICE `drop cascades to view v`); without it the statement fails with 2BP01 listing
them, as PostgreSQL's dependency check does. Everything dropped is hidden from the
transaction until COMMIT (`Transaction.drop_table`), its name ((schema oid, name): a
LockTag) locked until then. A name is resolved as PostgreSQL resolves it (qualified, or
through search_path); the relations named in messages are qualified with their schema
when search_path would not find them by their name alone, as PostgreSQL's
getObjectDescription does.
"""

from __future__ import annotations

from sqlglot import exp

from coordinator.pgwire.boundary import Notice, QueryResult, ResultKind
from planner import errors
from coordinator import sequence_ddl
from coordinator.ddl import lock_table
from coordinator.transaction import relation_tag
from planner.schema import Relation, TableDef, ViewDef, relation_name

_HINTS = {"table": "Use DROP TABLE to remove a table.", "view": "Use DROP VIEW to remove a view."}


def kind_word(r: Relation) -> str:
    return "view" if isinstance(r, ViewDef) else "table"


def shown_name(catalog, r: Relation) -> str:
    """`r`'s name as PostgreSQL's messages give it: bare when search_path finds it by
    that name, else schema-qualified."""
    found = catalog.get_table(r.name)
    if found is not None and found.id == r.id:
        return r.name
    return f"{catalog.schema_name(r.namespace)}.{r.name}"


def drop(session, st, txn, word: str) -> QueryResult:
    """DROP TABLE (`word` "table") or DROP VIEW ("view") [IF EXISTS] name, ...
    [CASCADE | RESTRICT]."""
    catalog = session.catalog_view(txn)
    notices: list[Notice] = []
    names: list[Relation] = []
    for t in st.tree.find_all(exp.Table):
        rel = relation_name(t)
        catalog.check_database(rel)
        if rel.schema is not None and not catalog.schema_exists(rel.schema):
            if st.if_not_exists:
                notices.append(_notice(f'schema "{rel.schema}" does not exist, skipping'))
                continue
            catalog.check_schema(rel)
        found = catalog.lookup(rel)
        if found is None:
            if catalog.lookup_sequence(rel) is not None:
                raise errors.QueryError(f'"{rel.name}" is not a {word}', "42809",
                                        hint="Use DROP SEQUENCE to remove a sequence.")
            if st.if_not_exists:
                notices.append(_notice(f'{word} "{rel.name}" does not exist, skipping'))
                continue
            raise errors.UndefinedTable(f'{word} "{rel.name}" does not exist')
        _check_kind(found, word)
        names.append(found)
    targets: list[Relation] = []
    for named in names:
        lock_table(session, txn, catalog, named)
        # whatever holds the name now that it is ours
        found = catalog.visible(named.namespace, named.name)
        if found is None:
            if st.if_not_exists:
                continue
            raise errors.UndefinedTable(f'{word} "{named.name}" does not exist')
        _check_kind(found, word)
        if all(t.id != found.id for t in targets):
            targets.append(found)
    edges = locked_dependents(session, txn, catalog, targets)
    if edges:
        if not st.tree.args.get("cascade"):
            raise errors.QueryError(
                f"cannot drop {kind_word(targets[0])} {shown_name(catalog, targets[0])} "
                "because other "
                "objects depend on it" if len(targets) == 1 else
                "cannot drop desired object(s) because other objects depend on them", "2BP01",
                detail="\n".join(f"view {shown_name(catalog, v)} depends on {kind_word(on)} "
                                 f"{shown_name(catalog, on)}" for v, on in edges),
                hint="Use DROP ... CASCADE to drop the dependent objects too.")
        notices.append(_cascade_notice([shown_name(catalog, v) for v, _on in edges]))
    dropping = {r.id for r in targets}
    for r in targets + [v for v, _on in edges]:
        if isinstance(r, TableDef):  # its SERIAL/identity sequences go with it
            sequence_ddl.drop_owned(session, txn, catalog, r, dropping)
        txn.drop_table(r)
    shown = notices if session.wants_notices() else []
    return QueryResult(ResultKind.COMMAND, tag=lambda: f"DROP {word.upper()}", notices=shown)


def dependents(views: list[ViewDef], targets: list[Relation]) -> list[tuple[ViewDef, Relation]]:
    """(view, the relation it reads) for every view among `views` that reads one of
    `targets` directly or through other views; a view once, the targets never. In
    PostgreSQL's order (findDependentObjects, then reported backwards): the reverse of a
    depth-first post-order that visits the newest dependents first."""
    newest_first = sorted(views, key=lambda v: v.id, reverse=True)
    post: list[tuple[ViewDef, Relation]] = []
    seen = {t.id for t in targets}

    def visit(r: Relation) -> None:
        for v in newest_first:
            if r.id in v.depends and v.id not in seen:
                seen.add(v.id)
                visit(v)
                post.append((v, r))
    for t in targets:
        visit(t)
    return post[::-1]


def locked_dependents(session, txn, catalog, targets) -> list[tuple[ViewDef, Relation]]:
    """The dependents of `targets` with their names locked by `txn`: locking waits for
    transactions creating views over them, whose views are then seen, so look again
    until nothing new appears."""
    while True:
        edges = dependents(catalog.views(), targets)
        fresh = [v for v, _on in edges if relation_tag(
            v.namespace, catalog.schema_name(v.namespace), v.name) not in txn.held]
        if not fresh:
            return edges
        for v in fresh:
            lock_table(session, txn, catalog, v)


def _check_kind(found: Relation, word: str) -> None:
    if kind_word(found) != word:
        raise errors.QueryError(f'"{found.name}" is not a {word}', "42809",
                                hint=_HINTS[kind_word(found)])


def _cascade_notice(dropped: list[str]) -> Notice:
    lines = [f"drop cascades to view {v}" for v in dropped]
    if len(lines) == 1:
        return _notice(lines[0])
    return _notice(f"drop cascades to {len(lines)} other objects", detail="\n".join(lines))


def _notice(message: str, detail: str | None = None) -> Notice:
    return Notice(message, detail)

