"""CREATE SCHEMA, DROP SCHEMA, ALTER SCHEMA ... RENAME TO / OWNER TO.

Transactional as CREATE/DROP TABLE are (coordinator/transaction.py): the change is kept in
the transaction (`Transaction.namespaces`, by schema oid) and seen by it alone until its
commit writes it to the catalog, with the tables it created and dropped, in one SQLite
transaction (catalog.py `commit_transaction`); ROLLBACK forgets it. Each statement holds
the names of the schemas it creates, drops or renames (and of the tables DROP ... CASCADE
drops) locked until its transaction ends, so another transaction's DDL on them waits and
then sees the outcome; CREATE TABLE holds its schema's name shared (coordinator/ddl.py),
so a DROP SCHEMA waits for the transactions creating tables in the schema, and they for
it. The commit checks again that every table is left in a schema that exists (catalog.py
`_check_namespaces`: 3F000 or 2BP01, and nothing of the transaction commits).

CREATE SCHEMA's schema elements (CREATE TABLE only; others 0A000) are made in the new
schema, as PostgreSQL makes them (42P15 for an element naming another schema).

Errors and NOTICEs are PostgreSQL 15's. The built-in schemas are not dropped or altered
here (0A000): pg_catalog and information_schema are computed, and public always exists.
"""

from __future__ import annotations

import re
from dataclasses import replace

from coordinator.ddl import create_table, lock_name, lock_table
from coordinator.drop import dependents, kind_word, locked_dependents, shown_name
from coordinator.pgwire.boundary import Notice, QueryResult, ResultKind
from coordinator.transaction import schema_tag
from planner import errors, statements
from planner import schema as sch
from planner.role_statement import RoleSpec
from planner.schema_statement import Action, SchemaStatement

_RESERVED_DETAIL = 'The prefix "pg_" is reserved for system schemas.'
_CASCADE_HINT = "Use DROP ... CASCADE to drop the dependent objects too."
_BUILTIN = frozenset(n.name for n in sch.BUILTIN_NAMESPACES)


def execute(session, st: SchemaStatement, txn) -> QueryResult:
    """Run a schema statement in `txn` (the session's transaction)."""
    notices: list[Notice] = []
    if st.action is Action.CREATE:
        _create(session, st, txn, notices)
    elif st.action is Action.DROP:
        _drop(session, st, txn, notices)
    elif st.action is Action.RENAME:
        _rename(session, st, txn)
    else:
        _owner(session, st, txn)
    tag = st.command
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag,
                       notices=notices if session.wants_notices() else [])


def _missing(name: str) -> errors.QueryError:
    return errors.QueryError(f'schema "{name}" does not exist', "3F000")


def _duplicate(name: str) -> errors.QueryError:
    return errors.QueryError(f'schema "{name}" already exists', "42P06")


def _check_name(name: str) -> None:
    if name.startswith("pg_"):
        raise errors.QueryError(f'unacceptable schema name "{name}"', "42939",
                                detail=_RESERVED_DETAIL)


def _builtin(name: str, what: str) -> None:
    if name in _BUILTIN:
        if name == sch.PG_CATALOG and what == "DROP SCHEMA":
            raise errors.QueryError(f"cannot drop schema {name} because it is required by "
                                    "the database system", "2BP01")
        raise errors.FeatureNotSupported(
            f"{what} of the built-in schema {name} is not supported")


def _role(session, spec: RoleSpec):
    """The role a RoleSpec designates (42704 when there is none: public is no role)."""
    if spec.special == "PUBLIC":
        name = "public"
    else:
        name = session.user if spec.special is not None else spec.name
    role = session.engine.catalog.get_role(name)
    if role is None:
        raise errors.UndefinedObject(f'role "{name}" does not exist')
    return role


def _me(session):
    return session.engine.catalog.get_role(session.user)


def _may_become(session, role) -> None:
    """PostgreSQL's check_is_member_of_role: without role membership, a role other than
    oneself only for a superuser."""
    me = _me(session)
    if role.name != session.user and not (me is not None and me.superuser):
        raise errors.QueryError(f'must be member of role "{role.name}"', "42501")


def _must_own(session, ns: sch.Namespace) -> None:
    me = _me(session)
    if me is None or not (me.superuser or me.oid == ns.owner):
        raise errors.QueryError(f"must be owner of schema {ns.name}", "42501")


def _locked_view(session, txn, name: str):
    """Lock schema name `name` for `txn`, then the view of the catalog after the wait."""
    lock_name(session, txn, schema_tag(name))
    return session.catalog_view(txn)


def _create(session, st: SchemaStatement, txn, notices: list[Notice]) -> None:
    owner = _role(session, st.role) if st.role is not None else _me(session)
    if owner is None:
        raise errors.UndefinedObject(f'role "{session.user}" does not exist')
    name = st.names[0] if st.names[0] is not None else owner.name
    _may_become(session, owner)
    view = session.catalog_view(txn)
    # A name taken is 42P06 before a reserved one is 42939, as PostgreSQL answers
    # CREATE SCHEMA pg_catalog.
    if view.schema_exists(name) or _locked_view(session, txn, name).schema_exists(name):
        if st.if_exists:
            notices.append(Notice(f'schema "{name}" already exists, skipping', code="42P06"))
            return
        raise _duplicate(name)
    _check_name(name)
    oid = session.engine.catalog.new_schema_oid()
    ns = sch.Namespace(oid, name, owner.oid)
    txn.change_namespace(oid, ns)
    for text in st.elements:
        notices.extend(_element(session, txn, ns, text))


def _element(session, txn, ns: sch.Namespace, text: str) -> list[Notice]:
    """One schema element of CREATE SCHEMA: a CREATE TABLE, made in the new schema; its
    NOTICEs."""
    el = statements.classify(text)  # GRANT, CREATE VIEW/INDEX/...: refused there (0A000)
    if el.kind is statements.Kind.CREATE_TABLE_AS:  # not a schema element
        written = re.search(r"(?i)\bas\b", text).group(0)
        raise errors.SyntaxError_(f'syntax error at or near "{written}"')
    if el.kind is not statements.Kind.CREATE_TABLE:
        raise errors.FeatureNotSupported(f"schema element {el.kind.value} in CREATE SCHEMA")
    rel = sch.relation_name(el.tree.this.this)
    session.catalog_view(txn).check_database(rel)
    if rel.schema is not None and rel.schema != ns.name:
        raise errors.QueryError(f"CREATE specifies a schema ({rel.schema}) different from the "
                                f"one being created ({ns.name})", "42P15")
    return create_table(session, el, txn, schema=ns).notices


def _drop(session, st: SchemaStatement, txn, notices: list[Notice]) -> None:
    view = session.catalog_view(txn)
    targets: list[sch.Namespace] = []
    for name in st.names:
        if not view.schema_exists(name):
            if st.if_exists:
                notices.append(Notice(f'schema "{name}" does not exist, skipping'))
                continue
            raise _missing(name)
        _builtin(name, "DROP SCHEMA")
        _must_own(session, view.namespace(name))
        view = _locked_view(session, txn, name)
        ns = view.namespace(name)  # whatever holds the name now that it is ours
        if ns is None:
            raise _missing(name)
        if all(t.oid != ns.oid for t in targets):  # named twice: dropped once
            targets.append(ns)
    # PostgreSQL reports the dependents of the last schema named first: each of the
    # schemas' tables and views, followed by the views elsewhere that read it.
    inside = [(ns, t) for ns in reversed(targets) for t in view.relations_in(ns.oid)]
    elsewhere = [v for v, _on in locked_dependents(session, txn, view, [t for _, t in inside])
                 if all(v.namespace != ns.oid for ns in targets)]
    dropped: list[sch.Relation] = []
    lines, reasons = [], []
    for ns, t in inside:
        dropped.append(t)
        lines.append(f"{kind_word(t)} {ns.name}.{t.name}")
        reasons.append(f"schema {ns.name}")
        for v, on in dependents(elsewhere, [t]):
            if v not in dropped:
                dropped.append(v)
                lines.append(f"view {shown_name(view, v)}")
                reasons.append(f"{kind_word(on)} {shown_name(view, on)}")
    if lines and not st.cascade:
        if len(targets) == 1:
            message = f"cannot drop schema {targets[0].name} because other objects depend on it"
        else:
            message = "cannot drop desired object(s) because other objects depend on them"
        raise errors.QueryError(message, "2BP01", hint=_CASCADE_HINT,
                                detail="\n".join(f"{line} depends on {reason}"
                                                 for line, reason in zip(lines, reasons)))
    for relation in dropped:
        lock_table(session, txn, view, relation)
        current = session.catalog_view(txn).visible(relation.namespace, relation.name)
        if current is not None:
            txn.drop_table(current)
    for ns in targets:
        txn.change_namespace(ns.oid, None)
    if len(lines) == 1:
        notices.append(Notice(f"drop cascades to {lines[0]}"))
    elif lines:
        notices.append(Notice(f"drop cascades to {len(lines)} other objects",
                              detail="\n".join(f"drop cascades to {line}" for line in lines)))


def _existing(session, txn, name: str, what: str) -> sch.Namespace:
    """The schema ALTER SCHEMA names, locked by `txn`."""
    view = session.catalog_view(txn)
    if not view.schema_exists(name):
        raise _missing(name)
    _builtin(name, what)
    ns = _locked_view(session, txn, name).namespace(name)
    if ns is None:
        raise _missing(name)
    return ns


def _rename(session, st: SchemaStatement, txn) -> None:
    ns = _existing(session, txn, st.names[0], "ALTER SCHEMA ... RENAME")
    new = st.new_name
    if session.catalog_view(txn).schema_exists(new) or \
            _locked_view(session, txn, new).schema_exists(new):
        raise _duplicate(new)
    _must_own(session, ns)
    _check_name(new)
    _check_views(session.catalog_view(txn), ns)
    txn.change_namespace(ns.oid, replace(ns, name=new))


def _check_views(view, ns: sch.Namespace) -> None:
    """Views resolve their names anew by schema name (their query's text and the
    search_path of their creation), where PostgreSQL's hold oids: a rename of a schema a
    view reads from or resolves names through is refused rather than leaving the view
    reading something else."""
    inside = {r.id for r in view.relations_in(ns.oid)}
    readers = [v.name for v in view.views()
               if ns.name in v.search_path or inside.intersection(v.depends)]
    if readers:
        raise errors.FeatureNotSupported(
            f'cannot rename schema "{ns.name}": views read from it ({", ".join(readers)})',
            hint="Drop the views, rename the schema, and create the views again.")


def _owner(session, st: SchemaStatement, txn) -> None:
    ns = _existing(session, txn, st.names[0], "ALTER SCHEMA ... OWNER TO")
    role = _role(session, st.role)
    if role.oid == ns.owner:
        return  # PostgreSQL: nothing to do, no permission checked
    _must_own(session, ns)
    _may_become(session, role)
    txn.change_namespace(ns.oid, replace(ns, owner=role.oid))
