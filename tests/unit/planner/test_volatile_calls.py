"""volatile_calls.check: gen_random_uuid() where it runs once per row of its query level
passes (a WITH query read twice is materialized); in a subquery expression or LATERAL it
is refused."""

from __future__ import annotations

import pytest
import sqlglot

from planner import errors, volatile_calls


@pytest.mark.parametrize("sql", [
    "SELECT gen_random_uuid() FROM t",
    "SELECT * FROM (SELECT gen_random_uuid() FROM t) s WHERE 1 = 1",
    "WITH c AS (SELECT gen_random_uuid() AS x) SELECT x FROM c",
    "SELECT gen_random_uuid() UNION ALL SELECT gen_random_uuid()",
    "INSERT INTO t SELECT gen_random_uuid()",
    "INSERT INTO t VALUES (gen_random_uuid()), (gen_random_uuid())",
    "CREATE TABLE t AS SELECT gen_random_uuid()",
    "COPY (SELECT gen_random_uuid()) TO STDOUT",
    "WITH c AS (SELECT 1) SELECT gen_random_uuid() FROM c a, c b",
    "WITH c AS (SELECT gen_random_uuid() AS x) SELECT * FROM c a, c b",
])
def test_once_per_row(sql):
    volatile_calls.check(sqlglot.parse_one(sql, read="postgres"))


@pytest.mark.parametrize("sql,what", [
    ("SELECT (SELECT gen_random_uuid())", "subquery"),
    ("SELECT 1 WHERE EXISTS (SELECT gen_random_uuid())", "subquery"),
    ("SELECT * FROM t WHERE u IN (SELECT gen_random_uuid())", "subquery"),
    ("SELECT * FROM t, LATERAL (SELECT gen_random_uuid()) s", "LATERAL"),
])
def test_refused(sql, what):
    with pytest.raises(errors.FeatureNotSupported, match=what):
        volatile_calls.check(sqlglot.parse_one(sql, read="postgres"))
