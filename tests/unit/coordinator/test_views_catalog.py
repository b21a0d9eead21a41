"""Without Ray: views in the catalog (stored with the tables, one namespace, committed with
the transaction, dependencies checked at the commit point), in SessionCatalog, the
dependents DROP finds, CREATE VIEW's parsing, and binding a view (columns fixed at
creation, recursion, the relations a statement reads)."""

from __future__ import annotations

import pytest

from coordinator.catalog import Catalog, SessionCatalog
from coordinator.drop import dependents
from planner import errors, statements, types, view_expand, view_statement
from planner import plan as pl
from planner.bind import QueryBinder
from dataclasses import replace

from planner.schema import (ColumnDef, DistKind, DistPolicy, Namespace, RelationName,
                            TableDef, ViewDef)


def _table(tid, name):
    return TableDef(tid, name, (ColumnDef("k", types.INT8), ColumnDef("s", types.TEXT)),
                    DistPolicy(DistKind.HASHED, (0,)))


def _view(vid, name, query, columns, depends, names=None):
    cols = tuple(ColumnDef(n, t) for n, t in columns)
    return ViewDef(vid, name, cols, query, tuple(names or (c.name for c in cols)),
                   ("public",), tuple(depends), query)


class Txn:
    """What SessionCatalog reads of a transaction."""

    def __init__(self):
        self.created, self.dropped, self.held, self.namespaces = {}, {}, set(), {}


@pytest.fixture
def cat(tmp_path):
    c = Catalog(str(tmp_path))
    c.add_table(_table(1, "t"))
    yield c
    c.close()


def error(fn, *args) -> errors.QueryError:
    with pytest.raises(errors.QueryError) as e:
        fn(*args)
    return e.value


# --- the catalog -------------------------------------------------------------------------------
def test_views_are_stored_with_the_tables_and_survive_a_restart(tmp_path, cat):
    v = _view(2, "v", "SELECT k FROM t", [("k", types.INT8)], [1])
    cat.commit_transaction(5, False, [v], [])
    assert cat.get_relation("v") == v
    assert cat.get_table("v") is None and [t.name for t in cat.tables()] == ["t"]
    cat.close()
    again = Catalog(str(tmp_path))
    assert again.get_relation("v") == v and [x.name for x in again.views()] == ["v"]
    assert again.storage_rows() == []  # a view has no storage, created or dropped
    again.commit_transaction(6, False, [], [v])
    assert again.get_relation("v") is None and again.storage_rows() == []
    again.close()


def test_tables_and_views_share_names(cat):
    cat.commit_transaction(5, False, [_view(2, "v", "SELECT 1", [("x", types.INT4)], [])], [])
    assert error(cat.add_table, _table(3, "v")).sqlstate == "42P07"
    e = error(cat.commit_transaction, 6, False, [_view(4, "t", "SELECT 1",
                                                       [("x", types.INT4)], [])], [])
    assert e.sqlstate == "42P07"


def test_views_in_a_schema(tmp_path, cat):
    """A view is keyed by (schema oid, name) as a table is: the same name in two schemas
    is two relations, the namespace survives a restart, names resolve through the path,
    and a schema dropped under a committed view is 2BP01 naming the view."""
    ns = Namespace(cat.new_schema_oid(), "s")
    cat.commit_transaction(4, False, [], [], {ns.oid: ns})
    v = replace(_view(2, "v", "SELECT k FROM t", [("k", types.INT8)], [1]), namespace=ns.oid)
    w = _view(3, "v", "SELECT 1", [("x", types.INT4)], [])
    cat.commit_transaction(5, False, [v, w], [])
    assert cat.get_relation("v", ns.oid) == v and cat.get_relation("v") == w
    e = error(cat.commit_transaction, 6, False, [replace(_table(9, "v"), namespace=ns.oid)], [])
    assert e.sqlstate == "42P07"
    cat.close()
    again = Catalog(str(tmp_path))
    assert again.get_relation("v", ns.oid) == v
    path = SessionCatalog(again, None, ["s", "public"])
    assert path.get_table("v") == v and path.lookup(RelationName("v", "public")) == w
    assert path.relations_in(ns.oid) == [v]
    e = error(again.commit_transaction, 7, False, [], [w], {ns.oid: None})
    assert e.sqlstate == "2BP01" and e.detail == "view s.v depends on schema s"
    again.commit_transaction(8, False, [], [v, w], {ns.oid: None})
    assert again.views() == []
    again.close()


def test_commit_refuses_a_view_over_a_dropped_relation(cat):
    v = _view(2, "v", "SELECT k FROM t", [("k", types.INT8)], [1])
    # created over a relation that is not there after the commit
    assert error(cat.commit_transaction, 5, False, [v], [cat.get_table("t")]).sqlstate == "40001"
    assert error(cat.commit_transaction, 5, False,
                 [_view(2, "v", "q", [("k", types.INT8)], [99])], []).sqlstate == "40001"
    cat.commit_transaction(5, False, [v], [])
    # dropping what a committed view reads, without the view
    assert error(cat.commit_transaction, 6, False, [], [cat.get_table("t")]).sqlstate == "40001"
    assert cat.get_table("t") is not None
    # replaced (same id dropped and created), and dropped together with its table
    v2 = _view(2, "v", "SELECT k, s FROM t", [("k", types.INT8), ("s", types.TEXT)], [1])
    cat.commit_transaction(7, False, [v2], [v])
    assert cat.get_relation("v") == v2
    cat.commit_transaction(8, False, [], [v2, cat.get_table("t")])
    assert cat.get_relation("v") is None and cat.get_relation("t") is None


def test_session_catalog_sees_views_of_its_transaction(cat):
    v = _view(2, "v", "SELECT k FROM t", [("k", types.INT8)], [1])
    txn = Txn()
    txn.created[v.key] = v
    mine = SessionCatalog(cat, txn, ["public"])
    other = SessionCatalog(cat, None, ["public"])
    assert mine.lookup(RelationName("v")) == v and other.lookup(RelationName("v")) is None
    assert [x.name for x in mine.views()] == ["v"] and [t.name for t in mine.tables()] == ["t"]
    # a view's query reads through the search path of its creation
    shadow = SessionCatalog(cat, txn, ["pg_catalog"])
    assert shadow.get_table("t") is None
    assert shadow.for_view(v).get_table("t").id == 1


# --- DROP's dependents ---------------------------------------------------------------------------
def test_dependents_in_postgresql_order_once_each():
    t, u = _table(1, "t"), _table(2, "u")
    v = _view(3, "v", "", [], [1])
    w = _view(4, "w", "", [], [2])
    x = _view(5, "x", "", [], [3])
    # PostgreSQL 15: DROP TABLE t, u -> "view w depends on table u", "view v depends on
    # table t", "view x depends on view v"
    got = dependents([v, w, x], [t, u])
    assert [(a.name, on.name) for a, on in got] == [("w", "u"), ("v", "t"), ("x", "v")]
    v2 = _view(4, "v2", "", [], [1])
    v3 = _view(5, "v3", "", [], [4])
    self_reading = _view(6, "s", "", [], [6, 1])
    # DROP TABLE t -> v on t, v2 on t, v3 on v2 (then the newest, reading itself too)
    got = dependents([v3, v2, v, self_reading], [t])
    assert [(a.name, on.name) for a, on in got] == [("v", "t"), ("v2", "t"), ("v3", "v2"),
                                                   ("s", "t")]
    # what is named itself is no dependent
    assert [a.name for a, _ in dependents([v2, v3], [t, v2])] == ["v3"]
    assert dependents([self_reading], [self_reading]) == []


# --- CREATE VIEW's text ---------------------------------------------------------------------------
def _parse(text):
    return view_statement.parse(text, statements.parse_one)


def test_create_view_forms():
    st = _parse('CREATE OR REPLACE VIEW s."V" (a, "B") AS SELECT 1, 2')
    assert st.relation == RelationName("V", "s") and st.columns == ("a", "B") and st.replace
    assert st.query == "SELECT 1, 2"
    rec = _parse("CREATE RECURSIVE VIEW r (n) AS VALUES (1) UNION ALL SELECT n + 1 FROM r")
    assert rec.query.startswith('WITH RECURSIVE "r" ("n") AS (VALUES (1)')
    commented = _parse("CREATE RECURSIVE VIEW r (n) AS VALUES (1) -- one row")
    assert isinstance(commented.tree, statements.exp.Select)
    assert error(_parse, "CREATE RECURSIVE VIEW r AS SELECT 1").sqlstate == "42601"
    assert error(_parse, "CREATE VIEW v AS").sqlstate == "42601"


@pytest.mark.parametrize("text", [
    "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1",
    "CREATE MATERIALIZED VIEW v AS SELECT 1",
    "CREATE VIEW v WITH (security_barrier) AS SELECT 1",
    "CREATE VIEW v AS SELECT 1 WITH LOCAL CHECK OPTION",
    "CREATE VIEW v AS SELECT 1 WITH CHECK OPTION",
])
def test_refused_forms(text):
    assert error(statements.classify, text).sqlstate == "0A000"


def test_classify_drop_view():
    st = statements.classify("DROP VIEW IF EXISTS a, b CASCADE")
    assert st.kind is statements.Kind.DROP_VIEW and st.if_not_exists
    assert st.tree.args.get("cascade")
    assert statements.classify("CREATE VIEW v AS SELECT 1").kind is statements.Kind.CREATE_VIEW
    assert error(statements.classify, "DROP MATERIALIZED VIEW m").sqlstate == "0A000"


# --- binding ---------------------------------------------------------------------------------------
class Catalog_:
    """A planner CatalogView of a few relations."""

    def __init__(self, *relations):
        self.by_name = {r.name: r for r in relations}

    def get_table(self, name):
        return self.by_name.get(name)


def _bind(catalog, sql):
    binder = QueryBinder(catalog, [])
    return binder, binder.bind(statements.parse_one(sql))


def test_a_view_binds_as_its_columns():
    t = _table(1, "t")
    v = _view(2, "v", "SELECT k AS key, 'x' AS lit FROM t", [("key", types.INT8),
                                                          ("lit", types.TEXT)], [1])
    binder, bq = _bind(Catalog_(t, v), "SELECT * FROM v AS w(a) WHERE a > 1")
    assert bq.names == ("a", "lit")
    assert [f.type for f in bq.node.fields] == [types.INT8, types.TEXT]
    assert [r.name for r in binder.reads] == ["v"]  # not the view's own reads


def test_a_view_keeps_its_columns_when_its_query_yields_more():
    t = _table(1, "t")
    inner = _view(2, "vin", "SELECT k, s FROM t", [("k", types.INT8), ("s", types.TEXT)], [1])
    outer = _view(3, "vout", "SELECT * FROM vin", [("k", types.INT8)], [2], names=["k"])
    _b, bq = _bind(Catalog_(t, inner, outer), "SELECT * FROM vout")
    assert bq.names == ("k",) and len(bq.node.fields) == 1


def test_project_by_name_and_its_limits():
    v = _view(3, "v", "", [("x", types.INT8)], [], names=["k"])
    node = pl.Values(((), ), (pl.Field("s", types.TEXT), pl.Field("k", types.INT8)))
    star = statements.parse_one("SELECT * FROM w")
    out = view_expand.project(v, node, ("s", "k"), star)
    assert out.exprs[0].index == 1 and out.fields[0].name == "x"
    e = error(view_expand.project, v, node, ("k", "k"), star)
    assert e.sqlstate == "0A000" and "more than one" in e.message
    distinct = statements.parse_one("SELECT DISTINCT * FROM w")
    assert error(view_expand.project, v, node, ("s", "k"), distinct).sqlstate == "0A000"
    same = _view(4, "w", "", [("s", types.TEXT), ("k", types.INT8)], [])
    assert view_expand.project(same, node, ("s", "k"), distinct) is node


@pytest.mark.parametrize(("sql", "kept"), [
    ("SELECT * FROM v WHERE a > 1 ORDER BY a", True),
    ("SELECT v.*, count(*) OVER () FROM v JOIN u USING (a)", True),
    ("SELECT * FROM (SELECT * FROM v) s WHERE EXISTS (SELECT * FROM u)", True),
    ("SELECT DISTINCT * FROM v", False),
    ("SELECT * FROM (SELECT DISTINCT ON (a) * FROM v) s", False),
    ("SELECT * FROM v UNION ALL SELECT * FROM u", False),
    ("SELECT * FROM v ORDER BY 2", False),
    ("SELECT a, count(*) FROM (SELECT * FROM v) s GROUP BY 1", False),
    ("SELECT to_json(v.*) FROM v", False),
])
def test_rows_kept_when_stars_read_more_columns(sql, kept):
    assert view_expand.rows_kept(statements.parse_one(sql)) is kept


def test_a_view_reaching_itself_is_42p17():
    v = _view(2, "v", "SELECT * FROM v", [("x", types.INT4)], [2])
    assert error(_bind, Catalog_(v), "SELECT * FROM v").sqlstate == "42P17"


@pytest.mark.parametrize("sql", [
    "SELECT k FROM t WHERE k IN (SELECT k FROM u)",
    "SELECT k, (SELECT max(k) FROM u) FROM t",
    "SELECT k FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k)",
    "WITH c AS (SELECT k FROM u) SELECT t.k FROM t JOIN c ON c.k = t.k",
    "SELECT t.k, x.k FROM t, LATERAL (SELECT k FROM u WHERE u.k = t.k LIMIT 1) x",
    "SELECT k FROM t UNION SELECT k FROM u",
    "WITH RECURSIVE r(n) AS (SELECT k FROM t UNION ALL SELECT n + 1 FROM r, u "
    "WHERE n < u.k) SELECT n FROM r",
])
def test_reads_are_every_relation_the_statement_names(sql):
    binder, _bq = _bind(Catalog_(_table(1, "t"), _table(2, "u")), sql)
    assert {r.name for r in binder.reads} == {"t", "u"}, sql


def test_array_and_numeric_columns_survive_a_restart(tmp_path):
    c = Catalog(str(tmp_path))
    v = _view(1, "v", "SELECT 1.5 AS n, array[1] AS a",
              [("n", types.numeric(2, 1)), ("a", types.array_of(types.INT4))], [])
    c.commit_transaction(5, False, [v], [])
    c.close()
    again = Catalog(str(tmp_path))
    assert again.get_relation("v") == v
    again.close()
