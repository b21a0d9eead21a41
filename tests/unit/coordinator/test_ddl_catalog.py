"""Without Ray: table names resolved as PostgreSQL resolves them (SessionCatalog), the
catalog's transactional commit and storage list, storage collection, the name locks
(timeout, cancel, deadlock) and ANALYZE's table list."""

from __future__ import annotations

import threading
import time

import pytest
import sqlglot
from sqlglot import exp

from coordinator.catalog import Catalog, SessionCatalog
from planner.analyze_statement import targets as analyze_targets
from coordinator.transaction import NameLocks, collect_garbage, relation_tag, schema_tag
from planner import errors, schema, system_tables, types
from planner.schema import ColumnDef, DistKind, DistPolicy, RelationName, TableDef


def _table(tid, name):
    return TableDef(tid, name, (ColumnDef("k", types.INT8),), DistPolicy(DistKind.HASHED, (0,)))


class Txn:
    """What SessionCatalog and NameLocks read of a transaction."""

    def __init__(self, pid=1):
        self.created, self.dropped, self.held, self.pid = {}, {}, set(), pid
        self.namespaces = {}


def _rel(sql_name: str) -> exp.Table:
    return sqlglot.parse_one(f"SELECT * FROM {sql_name}", dialect="postgres").find(exp.Table)


def error(fn, *args) -> errors.QueryError:
    with pytest.raises(errors.QueryError) as e:
        fn(*args)
    return e.value


@pytest.fixture
def cat(tmp_path):
    c = Catalog(str(tmp_path))
    c.add_table(_table(1, "t"))
    yield c
    c.close()


# --- names ---------------------------------------------------------------------------------
def test_qualified_names(cat):
    view = SessionCatalog(cat, None, ["$user", "public"], "alice", "db")
    for name in ("t", "public.t", '"public"."t"', "PUBLIC.T", "db.public.t"):
        assert system_tables.resolve_relation(view, _rel(name)).id == 1, name
    for name, message in (("other.t", 'relation "other.t" does not exist'),
                          ('"PUBLIC".t', 'relation "PUBLIC.t" does not exist'),
                          ("pg_catalog.t", 'relation "pg_catalog.t" does not exist'),
                          ('"T"', 'relation "T" does not exist')):
        e = error(system_tables.resolve_relation, view, _rel(name))
        assert (e.sqlstate, e.message) == ("42P01", message)
    e = error(system_tables.resolve_relation, view, _rel("otherdb.public.t"))
    assert (e.sqlstate, e.message) == (
        "0A000", 'cross-database references are not implemented: "otherdb.public.t"')
    e = error(schema.relation_name, _rel("a.b.c.d"))
    assert (e.sqlstate, e.message) == (
        "42601", "improper qualified name (too many dotted names): a.b.c.d")


def test_open_and_creation_names(cat):
    view = SessionCatalog(cat, None, None, "alice", "db")
    assert view.open(RelationName("t", "public")).id == 1
    e = error(view.open, RelationName("t", "nosuch"))
    assert (e.sqlstate, e.message) == ("3F000", 'schema "nosuch" does not exist')
    e = error(view.open, RelationName("x", "public"))
    assert (e.sqlstate, e.message) == ("42P01", 'relation "public.x" does not exist')
    public = schema.Namespace(schema.PUBLIC_OID, "public")
    assert view.creation_target(RelationName("x")) == (public, "x")
    assert view.creation_target(RelationName("x", "public", "db")) == (public, "x")
    e = error(view.creation_target, RelationName("x", "nosuch"))
    assert (e.sqlstate, e.message) == ("3F000", 'schema "nosuch" does not exist')
    e = error(view.creation_target, RelationName("x", "pg_catalog"))
    assert (e.sqlstate, e.message, e.detail) == (
        "42501", 'permission denied to create "pg_catalog.x"',
        "System catalog modifications are currently disallowed.")


@pytest.mark.parametrize("path, found, current, creates", [
    (["$user", "public"], True, "public", "public"),
    (["foo"], False, None, None),
    ([], False, None, None),
    (["foo", "public"], True, "public", "public"),
    (["pg_catalog"], False, "pg_catalog", "pg_catalog"),
    (["public", "pg_catalog"], True, "public", "public"),
    (["$user"], False, None, None),
    (["Public"], False, None, None),
])
def test_search_path(cat, path, found, current, creates):
    view = SessionCatalog(cat, None, path, "alice", "db")
    assert (view.get_table("t") is not None) == found
    assert view.current_schema == current
    if creates == "public":
        assert view.creation_target(RelationName("x"))[1] == "x"
    elif creates is None:
        e = error(view.creation_target, RelationName("x"))
        assert (e.sqlstate, e.message) == ("3F000", "no schema has been selected to create in")
    else:
        assert error(view.creation_target, RelationName("x")).sqlstate == "42501"


def test_user_named_public_has_its_schema(cat):
    assert SessionCatalog(cat, None, ["$user"], "public", "db").get_table("t") is not None


def test_a_transactions_own_ddl(cat):
    txn = Txn()
    view = SessionCatalog(cat, txn, None, "alice", "db")
    txn.dropped[(schema.PUBLIC_OID, "t")] = cat.get_table("t")
    txn.created[(schema.PUBLIC_OID, "n")] = _table(2, "n")
    assert view.get_table("t") is None and view.get_table("n").id == 2
    assert [t.name for t in view.tables()] == ["n"]
    other = SessionCatalog(cat, Txn(), None, "alice", "db")
    assert other.get_table("t").id == 1 and other.get_table("n") is None
    txn.created[(schema.PUBLIC_OID, "t")] = _table(3, "t")  # dropped, then created again
    assert view.get_table("t").id == 3


# --- the catalog's commit and storage list ---------------------------------------------------
def test_commit_transaction_is_one_change(tmp_path):
    c = Catalog(str(tmp_path))
    c.add_table(_table(1, "old"))
    c.note_storage(2, 77)
    assert c.storage_rows() == [(2, 77)]
    c.commit_transaction(77, True, [_table(2, "new")], [c.get_table("old")])
    assert c.get_table("old") is None and c.get_table("new").id == 2
    assert c.storage_rows() == [(1, 77)]  # the dropped table's storage, to be removed
    assert 77 in c.committed()
    c.close()
    c2 = Catalog(str(tmp_path))
    assert [t.name for t in c2.tables()] == ["new"]
    assert c2.storage_rows() == [(1, 77)]
    with pytest.raises(errors.DuplicateTable):
        c2.commit_transaction(78, False, [_table(3, "new")], [])
    assert c2.get_table("new").id == 2 and 78 not in c2.committed()
    c2.close()


class FakeCluster:
    def __init__(self, fail=()):
        self.undecided: set[int] = set()
        self.dropped: list[int] = []
        self.fail = set(fail)

    def call_each(self, method, table_id):
        assert method == "drop_table"
        if table_id in self.fail:
            return [None, errors.SegmentFailure("restarting")]
        self.dropped.append(table_id)
        return [None, None]


def test_collect_garbage(tmp_path):
    c = Catalog(str(tmp_path))
    c.add_table(_table(1, "kept"))
    c.note_storage(1, 5)     # owned (committed): only forgotten
    c.note_storage(2, 6)     # a live transaction's new table: left alone
    c.note_storage(3, 7)     # an ended transaction's: removed
    c.note_storage(4, 8)     # a segment fails to remove it: stays listed
    cluster = FakeCluster(fail={4})
    cluster.undecided = {6}
    assert collect_garbage(c, cluster) == [3]
    assert cluster.dropped == [3]
    assert c.storage_rows() == [(2, 6), (4, 8)]
    cluster.fail.clear()
    cluster.undecided.clear()
    assert collect_garbage(c, cluster) == [2, 4]
    assert c.storage_rows() == []
    c.close()


# --- name locks --------------------------------------------------------------------------------
T = relation_tag(schema.PUBLIC_OID, "public", "t")


def test_name_locks_wait_time_out_and_cancel():
    locks, a, b = NameLocks(), Txn(1), Txn(2)
    locks.acquire(a, T)
    locks.acquire(a, T)  # re-entrant for its holder
    started = time.monotonic()
    e = error(locks.acquire, b, T, 0.2)
    assert (e.sqlstate, e.message) == ("55P03", "canceling statement due to lock timeout")
    assert time.monotonic() - started >= 0.2
    cancel = threading.Event()
    cancel.reason = errors.STATEMENT_TIMEOUT
    threading.Timer(0.2, cancel.set).start()
    e = error(locks.acquire, b, T, None, cancel)
    assert (e.sqlstate, e.message) == ("57014", errors.STATEMENT_TIMEOUT)
    got = []
    th = threading.Thread(target=lambda: (locks.acquire(b, T), got.append("b")))
    th.start()
    time.sleep(0.2)
    assert got == []
    locks.release_all(a)
    th.join(5)
    assert got == ["b"] and b.held == {T} and a.held == set()


def test_name_locks_detect_a_deadlock():
    locks, a, b = NameLocks(), Txn(11), Txn(22)
    x, y = relation_tag(schema.PUBLIC_OID, "public", "x"), schema_tag("y")
    locks.acquire(a, x)
    locks.acquire(b, y)
    outcome = []
    th = threading.Thread(target=lambda: (locks.acquire(a, y), outcome.append("a")))
    th.start()
    time.sleep(0.2)
    e = error(locks.acquire, b, x)
    assert (e.sqlstate, e.message) == ("40P01", "deadlock detected")
    assert e.detail == \
        'Process 22 waits for a lock on relation "public.x"; blocked by process 11.'
    locks.release_all(b)
    th.join(5)
    assert outcome == ["a"]


# --- ANALYZE's tables ------------------------------------------------------------------------------
@pytest.mark.parametrize("sql, names", [
    ("ANALYZE", []),
    ("ANALYZE VERBOSE", []),
    ("ANALYZE t", [(None, None, "t")]),
    ("analyze T, public.u", [(None, None, "t"), (None, "public", "u")]),
    ('ANALYZE "Mixed"."Case" (a, b), db.public.x', [(None, "Mixed", "Case"),
                                                    ("db", "public", "x")]),
    ("ANALYZE (VERBOSE, SKIP_LOCKED) t (a)", [(None, None, "t")]),
    ("VACUUM FULL ANALYZE s . t", [(None, "s", "t")]),
])
def test_analyze_targets(sql, names):
    assert [(r.catalog, r.schema, r.name) for r in analyze_targets(sql)] == names


def test_analyze_targets_errors():
    assert error(analyze_targets, "ANALYZE a.b.c.d").sqlstate == "42601"
    assert error(analyze_targets, "ANALYZE t u").sqlstate == "42601"


# --- statements: TEMP, UNLOGGED, COPY's qualified names ---------------------------------------------
@pytest.mark.parametrize("sql", [
    "CREATE TEMP TABLE x (a int)", "create temporary table x as select 1",
    "CREATE LOCAL TEMP TABLE x (a int)", "CREATE GLOBAL TEMPORARY TABLE x (a int)",
    "CREATE TEMP TABLE x (a int) ON COMMIT PRESERVE ROWS"])
def test_temporary_tables_are_marked(sql):
    from planner import statements

    st = statements.classify(sql)
    assert st.temporary and st.kind in (statements.Kind.CREATE_TABLE,
                                        statements.Kind.CREATE_TABLE_AS)


@pytest.mark.parametrize("sql", ["CREATE TEMP TABLE x (a int) ON COMMIT DROP",
                                 "CREATE TEMP TABLE x (a int) ON COMMIT DELETE ROWS"])
def test_temporary_tables_other_on_commit_actions_are_refused(sql):
    from planner import statements

    e = error(statements.classify, sql)
    assert e.sqlstate == "0A000" and "ON COMMIT" in e.message


def test_unlogged_is_a_table():
    from planner import statements

    assert statements.classify("CREATE UNLOGGED TABLE x (a int)").kind is statements.Kind.CREATE_TABLE


@pytest.mark.parametrize("sql, name", [
    ("COPY t FROM STDIN", (None, None, "t")),
    ("COPY Public.T (a, \"B\") FROM STDIN", (None, "public", "t")),
    ('COPY "S"."T x" TO STDOUT', (None, "S", "T x")),
    ("COPY db . public.t FROM STDIN (FORMAT csv)", ("db", "public", "t")),
])
def test_copy_names(sql, name):
    from planner import copy_statement

    spec = copy_statement.parse(sql)
    assert (spec.catalog, spec.schema, spec.table) == name


def test_copy_too_many_names():
    from planner import copy_statement

    assert error(copy_statement.parse, "COPY a.b.c.d FROM STDIN").sqlstate == "42601"


def test_shared_name_locks():
    """CREATE TABLE holds its schema's name shared: other sharers go on, an exclusive
    request (DROP SCHEMA) waits for every one of them, and a cycle through a shared hold
    is a deadlock."""
    locks, a, b, c = NameLocks(), Txn(1), Txn(2), Txn(3)
    s, x = schema_tag("s"), relation_tag(schema.PUBLIC_OID, "public", "x")
    locks.acquire(a, s, shared=True)
    locks.acquire(b, s, shared=True)
    assert error(locks.acquire, c, s, 0.2).sqlstate == "55P03"
    assert error(locks.acquire, a, s, 0.2).sqlstate == "55P03"  # b shares it too
    locks.release_all(b)
    locks.acquire(a, s)  # the only sharer may take it exclusively
    assert error(locks.acquire, c, s, 0.2, None, True).sqlstate == "55P03"
    locks.release_all(a)
    # c shares s and waits for x (held by a); a waiting for s exclusively closes a cycle.
    locks.acquire(a, x)
    locks.acquire(c, s, shared=True)
    got = []
    th = threading.Thread(target=lambda: (locks.acquire(c, x, 5.0), got.append("c")))
    th.start()
    time.sleep(0.2)
    e = error(locks.acquire, a, s)
    assert (e.sqlstate, e.detail) == (
        "40P01", 'Process 1 waits for a lock on schema "s"; blocked by process 3.')
    locks.release_all(a)
    th.join(5)
    assert got == ["c"]  # the other one goes on once the chosen one ends


def test_a_queued_exclusive_request_goes_before_new_sharers():
    """An expansion waiting to take a table's placement lock is not starved by INSERTs
    that keep taking it shared: once it waits, new sharers queue behind it (a holder
    taking it again is not held up), as PostgreSQL's lock queue does."""
    locks, a, b, c = NameLocks(), Txn(1), Txn(2), Txn(3)
    p = schema_tag("placement")
    locks.acquire(a, p, shared=True)
    got = []
    th = threading.Thread(target=lambda: (locks.acquire(b, p, 5.0), got.append("b")))
    th.start()
    time.sleep(0.2)
    assert error(locks.acquire, c, p, 0.2, None, True).sqlstate == "55P03"
    locks.acquire(a, p, 0.2, None, True)  # already a sharer: granted
    locks.release_all(a)
    th.join(5)
    assert got == ["b"]
    locks.release_all(b)
    locks.acquire(c, p, 0.2, None, True)
