"""Without Ray: schema statements as PostgreSQL's grammar reads them, the catalog's
schemas (commit with the transaction's tables, conflicts met at commit, the upgrade of a
data directory made before schemas), and names resolved through user schemas."""

from __future__ import annotations

import json
import sqlite3

import pytest

from coordinator.catalog import Catalog, SessionCatalog
from planner import errors, schema, system_tables, types
from planner.role_statement import RoleSpec
from planner.schema import (ColumnDef, DistKind, DistPolicy, Namespace, RelationName,
                            TableDef)
from planner.schema_statement import Action, SchemaStatement, parse

PUBLIC = schema.PUBLIC_OID


def _table(tid, name, namespace=PUBLIC):
    return TableDef(tid, name, (ColumnDef("k", types.INT8),),
                    DistPolicy(DistKind.HASHED, (0,)), namespace=namespace)


class Txn:
    """What SessionCatalog reads of a transaction."""

    def __init__(self):
        self.created, self.dropped, self.namespaces = {}, {}, {}


def error(fn, *args) -> errors.QueryError:
    with pytest.raises(errors.QueryError) as e:
        fn(*args)
    return e.value


# --- statements ------------------------------------------------------------------------------
@pytest.mark.parametrize("sql, st", [
    ("CREATE SCHEMA s", SchemaStatement(Action.CREATE, ("s",))),
    ('create schema if not exists "My S"',
     SchemaStatement(Action.CREATE, ("My S",), if_exists=True)),
    ("CREATE SCHEMA S AUTHORIZATION bob",
     SchemaStatement(Action.CREATE, ("s",), role=RoleSpec("bob"))),
    ("CREATE SCHEMA AUTHORIZATION CURRENT_USER",
     SchemaStatement(Action.CREATE, (None,), role=RoleSpec(special="CURRENT_USER"))),
    ("CREATE SCHEMA IF NOT EXISTS AUTHORIZATION public;",
     SchemaStatement(Action.CREATE, (None,), role=RoleSpec(special="PUBLIC"),
                     if_exists=True)),
    ("DROP SCHEMA a, B cascade", SchemaStatement(Action.DROP, ("a", "b"), cascade=True)),
    ("DROP SCHEMA IF EXISTS a RESTRICT", SchemaStatement(Action.DROP, ("a",), if_exists=True)),
    ("ALTER SCHEMA a RENAME TO b", SchemaStatement(Action.RENAME, ("a",), new_name="b")),
    ("CREATE SCHEMA s CREATE TABLE t (a int, b text DEFAULT 'create') "
     "DISTRIBUTED BY (a) grant select on t to x CREATE TABLE \"create\" (c int);",
     SchemaStatement(Action.CREATE, ("s",), elements=(
         "CREATE TABLE t (a int, b text DEFAULT 'create') DISTRIBUTED BY (a)",
         "grant select on t to x", 'CREATE TABLE "create" (c int)'))),
    ("ALTER SCHEMA a OWNER TO SESSION_USER",
     SchemaStatement(Action.OWNER, ("a",), role=RoleSpec(special="SESSION_USER"))),
])
def test_parse(sql, st):
    assert parse(sql) == st


@pytest.mark.parametrize("sql, sqlstate", [
    ("CREATE SCHEMA", "42601"),
    ("CREATE SCHEMA select", "42601"),
    ("CREATE SCHEMA s AUTHORIZATION", "42601"),
    ("CREATE SCHEMA s extra", "42601"),
    ("CREATE SCHEMA IF NOT EXISTS s CREATE TABLE t (a int)", "0A000"),
    ("DROP SCHEMA", "42601"),
    ("DROP SCHEMA a RESTRICT, b", "42601"),
    ("DROP SCHEMA a CASCADE CASCADE", "42601"),
    ("ALTER SCHEMA a RENAME b", "42601"),
    ("ALTER SCHEMA a SET x", "42601"),
])
def test_parse_errors(sql, sqlstate):
    assert error(parse, sql).sqlstate == sqlstate


def test_commands():
    assert [parse(s).command for s in ("CREATE SCHEMA a", "DROP SCHEMA a",
                                       "ALTER SCHEMA a RENAME TO b", "ALTER SCHEMA a OWNER TO b")
            ] == ["CREATE SCHEMA", "DROP SCHEMA", "ALTER SCHEMA", "ALTER SCHEMA"]


# --- the catalog ---------------------------------------------------------------------------------
@pytest.fixture
def cat(tmp_path):
    c = Catalog(str(tmp_path))
    yield c
    c.close()


def _create_schema(c: Catalog, name: str, txn: int = 1) -> Namespace:
    ns = Namespace(c.new_schema_oid(), name)
    c.commit_transaction(txn, False, [], [], {ns.oid: ns})
    return ns


def test_schemas_commit_with_their_tables_and_survive_a_restart(tmp_path):
    c = Catalog(str(tmp_path))
    ns = Namespace(c.new_schema_oid(), "s")
    version = c.version
    c.commit_transaction(7, False, [_table(2, "t", ns.oid), _table(3, "t")], [],
                         {ns.oid: ns})
    assert c.version > version
    assert [n.name for n in c.schemas()] == ["pg_catalog", "public", "information_schema", "s"]
    assert c.get_table("t", ns.oid).id == 2 and c.get_table("t").id == 3
    assert c.table_by_id(2).namespace == ns.oid
    c.close()
    c = Catalog(str(tmp_path))
    assert c.schemas()[-1] == ns
    assert c.get_table("t", ns.oid).id == 2 and c.get_table("t").id == 3
    # Rename and owner: the tables keep their schema (by oid).
    c.commit_transaction(8, False, [], [], {ns.oid: Namespace(ns.oid, "s2", 16390)})
    assert c.schemas()[-1] == Namespace(ns.oid, "s2", 16390)
    assert c.get_table("t", ns.oid).id == 2
    # Dropped with its table, in one commit.
    c.commit_transaction(9, False, [], [c.get_table("t", ns.oid)], {ns.oid: None})
    assert len(c.schemas()) == 3 and c.get_table("t", ns.oid) is None
    assert c.storage_rows() == [(2, 9)]
    c.close()


def test_renames_that_swap_two_names(cat):
    a, b = _create_schema(cat, "a"), _create_schema(cat, "b")
    cat.commit_transaction(3, False, [], [], {a.oid: Namespace(a.oid, "b"),
                                              b.oid: Namespace(b.oid, "a")})
    assert {n.oid: n.name for n in cat.schemas()[3:]} == {a.oid: "b", b.oid: "a"}


def test_conflicts_met_at_commit(cat):
    s = _create_schema(cat, "s")
    # Another transaction committed a schema of that name first.
    e = error(cat.commit_transaction, 2, False, [], [], {99999: Namespace(99999, "s")})
    assert (e.sqlstate, e.message) == ("42P06", 'schema "s" already exists')
    e = error(cat.commit_transaction, 2, False, [], [], {99998: Namespace(99998, "public")})
    assert e.sqlstate == "42P06"
    # A table created in a schema another transaction dropped meanwhile.
    gone = _create_schema(cat, "gone")
    cat.commit_transaction(3, False, [], [], {gone.oid: None})
    e = error(cat.commit_transaction, 4, True, [_table(5, "t", gone.oid)], [])
    assert e.sqlstate == "3F000" and cat.get_table("t", gone.oid) is None
    assert 4 not in cat.committed()  # nothing of it committed
    # A schema dropped while another transaction committed a table into it.
    cat.commit_transaction(5, False, [_table(6, "t", s.oid)], [])
    e = error(cat.commit_transaction, 6, False, [], [], {s.oid: None})
    assert (e.sqlstate, e.message, e.detail) == (
        "2BP01", "cannot drop schema s because other objects depend on it",
        "table s.t depends on schema s")
    assert cat.schemas()[-1] == s


def test_upgrade_of_a_data_directory_made_before_schemas(tmp_path):
    db = sqlite3.connect(str(tmp_path / "catalog.sqlite"))
    db.execute("CREATE TABLE tables (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, "
               "definition TEXT NOT NULL)")
    old = {"id": 4, "name": "old", "columns": [
        {"name": "k", "kind": "INT8", "precision": None, "scale": None, "length": None,
         "not_null": False}], "policy": {"kind": "HASHED", "keys": [0]},
        "stats": {"rows": 12, "columns": {}}}
    db.execute("INSERT INTO tables VALUES (4, 'old', ?)", (json.dumps(old),))
    db.commit()
    db.close()
    c = Catalog(str(tmp_path))
    t = c.get_table("old")
    assert (t.id, t.namespace, t.stats.rows) == (4, PUBLIC, 12)
    s = _create_schema(c, "s")
    c.commit_transaction(2, False, [_table(5, "old", s.oid)], [])  # the same name elsewhere
    c.close()
    c = Catalog(str(tmp_path))  # opened again: already upgraded
    assert c.get_table("old").id == 4 and c.get_table("old", s.oid).id == 5
    c.close()


# --- names -------------------------------------------------------------------------------------
def test_names_through_user_schemas(cat):
    s = _create_schema(cat, "s")
    me = _create_schema(cat, "alice", 2)
    cat.commit_transaction(3, False, [_table(1, "t"), _table(2, "t", s.oid),
                                      _table(3, "u", me.oid)], [])
    view = SessionCatalog(cat, None, ["$user", "public"], "alice", "db")
    assert view.explicit == ["alice", "public"] and view.current_schema == "alice"
    assert view.get_table("t").id == 1 and view.get_table("u").id == 3
    assert view.creation_target(RelationName("x")) == (me, "x")
    view = SessionCatalog(cat, None, ["s", "public"], "alice", "db")
    assert view.get_table("t").id == 2
    assert view.lookup(RelationName("t", "public")).id == 1
    assert view.lookup(RelationName("t", "s", "db")).id == 2
    assert view.schema_name(view.get_table("t").namespace) == "s"
    assert [t.id for t in view.relations_in(s.oid)] == [2]
    e = error(view.open, RelationName("t", "nosuch"))
    assert (e.sqlstate, e.message) == ("3F000", 'schema "nosuch" does not exist')
    # A user table named like a catalog relation is found where the path puts it first.
    cat.commit_transaction(4, False, [_table(4, "pg_class", s.oid)], [])
    rel = RelationName("pg_class")
    assert system_tables.find(SessionCatalog(cat, None, ["s"], "alice"), rel) is not None
    assert system_tables.find(SessionCatalog(cat, None, ["s", "pg_catalog"], "alice"),
                              rel) is None


def test_a_transactions_own_schemas(cat):
    s = _create_schema(cat, "s")
    cat.commit_transaction(2, False, [_table(1, "t", s.oid)], [])
    txn = Txn()
    view = SessionCatalog(cat, txn, ["s"], "alice")
    txn.namespaces[s.oid] = Namespace(s.oid, "s2")  # renamed, uncommitted
    new = Namespace(50000, "fresh")
    txn.namespaces[new.oid] = new
    view = SessionCatalog(cat, txn, ["s2", "fresh"], "alice")
    assert view.explicit == ["s2", "fresh"] and view.get_table("t").id == 1
    assert not view.schema_exists("s") and view.namespace("fresh") == new
    other = SessionCatalog(cat, Txn(), ["s2", "s"], "alice")
    assert other.explicit == ["s"] and not other.schema_exists("fresh")
    txn.namespaces[s.oid] = None  # dropped (its tables are dropped with it)
    txn.dropped[(s.oid, "t")] = cat.get_table("t", s.oid)
    view = SessionCatalog(cat, txn, ["s2", "s"], "alice")
    assert view.explicit == [] and view.get_table("t") is None
