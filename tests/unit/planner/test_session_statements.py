"""Classification of the session commands of issue 11 (savepoints, cursors, LISTEN/NOTIFY,
PREPARE/EXECUTE, EXPLAIN options) and the `$1,$2` placeholder fix, in PostgreSQL's
grammar."""

import pytest

from planner import errors, statements, types
from planner.statements import Kind


@pytest.mark.parametrize("sql, kind, name", [
    ("SAVEPOINT a", Kind.SAVEPOINT, "a"),
    ('savepoint "My Point"', Kind.SAVEPOINT, "My Point"),
    ("RELEASE a", Kind.RELEASE, "a"),
    ("RELEASE SAVEPOINT A", Kind.RELEASE, "a"),
    ("ROLLBACK TO a", Kind.ROLLBACK_TO, "a"),
    ("ROLLBACK TRANSACTION TO SAVEPOINT a;", Kind.ROLLBACK_TO, "a"),
    ("ROLLBACK", Kind.ROLLBACK, ""),
    ("ROLLBACK WORK", Kind.ROLLBACK, ""),
    ("LISTEN Chan", Kind.LISTEN, "chan"),
    ("UNLISTEN *", Kind.UNLISTEN, "*"),
    ('UNLISTEN "Chan"', Kind.UNLISTEN, "Chan"),
    ("CLOSE ALL", Kind.CLOSE, "all"),
    ('CLOSE "Cur"', Kind.CLOSE, "Cur"),
    ('DEALLOCATE PREPARE "_pg3_0"', Kind.DEALLOCATE, "_pg3_0"),
    ("DEALLOCATE ALL", Kind.DEALLOCATE, "all"),
    ("SELECT pg_advisory_unlock_all()", Kind.UNLOCK_ALL, ""),
])
def test_names(sql, kind, name):
    st = statements.classify(sql)
    assert (st.kind, st.name) == (kind, name)


def test_declare_options():
    st = statements.classify('DECLARE "c1" BINARY NO SCROLL CURSOR WITH HOLD FOR SELECT 1')
    assert (st.kind, st.name) == (Kind.DECLARE, "c1")
    assert st.options == {"binary": True, "scroll": False, "hold": True}
    assert st.inner.kind is Kind.QUERY
    st = statements.classify("declare c insensitive cursor without hold for select $1,$2")
    assert st.options == {"binary": False, "scroll": None, "hold": False}
    with pytest.raises(errors.SyntaxError_):
        statements.classify("DECLARE c CURSOR FOR CREATE TABLE t (a int)")


@pytest.mark.parametrize("sql, direction, count", [
    ("FETCH c", "forward", 1),
    ("FETCH NEXT FROM c", "forward", 1),
    ("FETCH 5 IN c", "forward", 5),
    ("FETCH ALL c", "forward", None),
    ('FETCH FORWARD 10 FROM "c"', "forward", 10),
    ("FETCH FORWARD ALL c", "forward", None),
    ("FETCH -2 c", "backward", 2),
    ("FETCH BACKWARD -3 c", "forward", 3),
    ("FETCH PRIOR c", "backward", 1),
    ("FETCH FIRST c", "absolute", 1),
    ("FETCH LAST c", "absolute", -1),
    ("MOVE ABSOLUTE 7 c", "absolute", 7),
    ("MOVE RELATIVE -1 IN c", "relative", -1),
])
def test_fetch_directions(sql, direction, count):
    st = statements.classify(sql)
    assert st.name == "c" and st.options == {"direction": direction, "count": count}


def test_notify_payload():
    st = statements.classify("NOTIFY chan, 'it''s'")
    assert (st.kind, st.name, st.options["payload"]) == (Kind.NOTIFY, "chan", "it's")
    assert statements.classify("NOTIFY chan").options["payload"] == ""


def test_prepare_and_execute():
    st = statements.classify("PREPARE p (int8, numeric(15,2), varchar) AS "
                             "SELECT $1, $2, $3")
    assert (st.kind, st.name) == (Kind.PREPARE, "p")
    assert st.options["types"] == [types.INT8, types.numeric(15, 2), types.varchar(None)]
    assert st.inner.kind is Kind.QUERY
    assert statements.classify("PREPARE q AS INSERT INTO t VALUES ($1)").inner.kind is Kind.INSERT
    with pytest.raises(errors.SyntaxError_):
        statements.classify("PREPARE q AS CREATE TABLE t (a int)")
    st = statements.classify("EXECUTE p (1, 'x', 2.5)")
    assert (st.kind, st.name, len(st.options["args"])) == (Kind.EXECUTE, "p", 3)
    assert statements.classify("EXECUTE p").options["args"] == []


def test_explain_options():
    assert statements.classify("EXPLAIN (FORMAT TEXT, COSTS OFF) SELECT 1").kind is Kind.EXPLAIN
    for fmt in ("JSON", "XML", "YAML"):
        with pytest.raises(errors.FeatureNotSupported, match=f"FORMAT {fmt}"):
            statements.classify(f"EXPLAIN (FORMAT {fmt}) SELECT 1")
    with pytest.raises(errors.SyntaxError_, match='unrecognized EXPLAIN option "foo"'):
        statements.classify("EXPLAIN (foo) SELECT 1")


@pytest.mark.parametrize("sql", [
    "SELECT $1,$2",
    "SELECT * FROM t WHERE a IN ($1,$2,$3)",
    "INSERT INTO t VALUES ($1,$2)",
    "SELECT $1::int,$2::text",
])
def test_placeholders_without_spaces(sql):
    assert statements.classify(sql).tree is not None


def test_placeholder_fix_leaves_strings_alone():
    st = statements.classify("SELECT '$1,$2' AS s, $$x$1,$$ AS d, \"a$1\" FROM t WHERE b=$1")
    rendered = st.tree.sql(dialect="postgres")
    assert "'$1,$2'" in rendered and "'x$1,'" in rendered
