"""Statement splitting and classification, including the Greenplum DDL clauses."""

import pytest

from planner import errors, statements, types
from planner.schema import DistKind
from planner.statements import Kind


def test_split_respects_quotes_and_comments():
    sql = "select 'a;b'; select 2 ;; -- c;\n select \"x;y\" from t"
    assert statements.split(sql) == ["select 'a;b'", "select 2", '-- c;\n select "x;y" from t']


@pytest.mark.parametrize("text,kind", [
    ("BEGIN", Kind.BEGIN), ("start transaction", Kind.BEGIN), ("commit", Kind.COMMIT),
    ("END", Kind.COMMIT), ("rollback", Kind.ROLLBACK), ("SHOW DateStyle", Kind.SHOW),
    ("reset all", Kind.RESET), ("DEALLOCATE ALL", Kind.DEALLOCATE), ("discard all", Kind.DISCARD),
    ("close all", Kind.CLOSE), ("select 1", Kind.QUERY), ("values (1)", Kind.QUERY),
    ("insert into t values (1)", Kind.INSERT), ("copy t from stdin", Kind.COPY),
    ("drop table if exists t", Kind.DROP_TABLE), ("analyze t", Kind.ANALYZE),
    ("truncate t", Kind.TRUNCATE), ("", Kind.EMPTY),
])
def test_classify_kinds(text, kind):
    assert statements.classify(text).kind is kind


def test_set_forms():
    st = statements.classify("SET datestyle TO 'ISO, MDY'")
    assert (st.name, st.value) == ("datestyle", "ISO, MDY")
    st = statements.classify("set extra_float_digits = 3")
    assert (st.name, st.value) == ("extra_float_digits", "3")
    st = statements.classify("SET TIME ZONE 'UTC'")
    assert (st.name, st.value) == ("timezone", "UTC")


@pytest.mark.parametrize("text, name, args, default, local", [
    ("SET LOCAL statement_timeout = '1s'", "statement_timeout", ("1s",), False, True),
    ("SET SESSION work_mem TO '4MB'", "work_mem", ("4MB",), False, False),
    ('SET search_path = "$user", public', "search_path", ("$user", "public"), False, False),
    ("SET application_name = Foo", "application_name", ("foo",), False, False),
    ("SET application_name = 'it''s'", "application_name", ("it's",), False, False),
    ("SET myapp.x TO DEFAULT", "myapp.x", (), True, False),
    ("SET extra_float_digits = 03", "extra_float_digits", ("3",), False, False),
    ("SET TIME ZONE LOCAL", "timezone", (), True, False),
    ("SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE", "timezone", ("INTERVAL '+00:00'",),
     False, False),
    ("SET NAMES 'UTF8'", "client_encoding", ("UTF8",), False, False),
    ("SET SCHEMA 'public'", "search_path", ("public",), False, False),
    ("SET ROLE none", "role", ("none",), False, False),
    ("SET SESSION AUTHORIZATION DEFAULT", "session_authorization", (), True, False),
])
def test_set_arguments(text, name, args, default, local):
    st = statements.classify(text)
    assert (st.kind, st.name, st.args, st.default, st.local) == (Kind.SET, name, args, default,
                                                                  local)


def test_set_transaction_modes():
    st = statements.classify("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    assert st.name == "transaction"
    assert st.modes == (("transaction_isolation", "repeatable read"),
                        ("transaction_read_only", "on"))
    st = statements.classify(
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE NOT DEFERRABLE")
    assert st.name == "session characteristics"
    assert st.modes == (("transaction_read_only", "off"), ("transaction_deferrable", "off"))


@pytest.mark.parametrize("text", ["SET", "SET x", "SET x =", "SET a b = 1", "SET x = 1 2",
                                  "SET TRANSACTION ISOLATION LEVEL SOMETIMES",
                                  "SET x = 'unterminated"])
def test_set_syntax_errors(text):
    with pytest.raises(errors.SyntaxError_):
        statements.classify(text)


def test_create_table_with_distribution():
    st = statements.classify(
        "CREATE TABLE t (k bigint NOT NULL, x numeric(15,2), s varchar(10), d date) "
        "DISTRIBUTED BY (k, d)")
    assert st.kind is Kind.CREATE_TABLE
    assert [c.name for c in st.columns] == ["k", "x", "s", "d"]
    assert st.columns[0].not_null and not st.columns[1].not_null
    assert st.columns[1].type == types.numeric(15, 2)
    assert st.columns[2].type == types.varchar(10)
    policy = statements.dist_policy(st.policy_clause, st.columns)
    assert policy.kind is DistKind.HASHED and policy.keys == (0, 3)


def test_distribution_defaults_and_kinds():
    st = statements.classify("create table t (a int, b int)")
    assert statements.dist_policy(st.policy_clause, st.columns).keys == (0,)
    st = statements.classify("create table t (a int) distributed randomly")
    assert statements.dist_policy(st.policy_clause, st.columns).kind is DistKind.RANDOM
    st = statements.classify("create table t (a int) DISTRIBUTED REPLICATED")
    assert statements.dist_policy(st.policy_clause, st.columns).kind is DistKind.REPLICATED


def test_distribution_on_missing_column():
    st = statements.classify("create table t (a int) distributed by (zz)")
    with pytest.raises(errors.UndefinedColumn):
        statements.dist_policy(st.policy_clause, st.columns)


def test_ctas_and_explain():
    st = statements.classify("create table t2 as select 1 as a distributed randomly")
    assert st.kind is Kind.CREATE_TABLE_AS and st.policy_clause == (DistKind.RANDOM, ())
    st = statements.classify("EXPLAIN ANALYZE select 1")
    assert st.kind is Kind.EXPLAIN and st.analyze and st.inner.kind is Kind.QUERY
    st = statements.classify("explain (analyze false, costs off) select 1")
    assert not st.analyze


def test_syntax_error_has_sqlstate():
    with pytest.raises(errors.QueryError) as e:
        statements.classify("selec 1")
    assert e.value.sqlstate in ("42601", "0A000")
    with pytest.raises(errors.SyntaxError_):
        statements.classify("select (1")
