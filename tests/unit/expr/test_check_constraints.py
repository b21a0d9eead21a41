"""NOT NULL and CHECK constraints over a batch (segment/check_constraints.py): the error
PostgreSQL's row-at-a-time executor raises first, NULL results passing."""

import pyarrow as pa
import pytest

from planner import constraints, errors, types
from planner.schema import CheckDef, ColumnDef, DistKind, DistPolicy, TableDef
from segment import check_constraints


def _table(*checks) -> TableDef:
    cols = (ColumnDef("a", types.INT4), ColumnDef("b", types.INT4, not_null=True))
    defs = tuple(CheckDef(name, sql, constraints.bind_check(sql, cols, "t"))
                 for name, sql in checks)
    return TableDef(1, "t", cols, DistPolicy(DistKind.RANDOM), checks=defs)


def _batch(a, b):
    return pa.record_batch([pa.array(a, pa.int32()), pa.array(b, pa.int32())], names=["a", "b"])


def test_null_passes_and_false_fails():
    t = _table(("t_a_check", "(a > 0)"))
    check_constraints.check(t, _batch([1, None, 3], [1, 1, 1]))
    with pytest.raises(errors.QueryError) as e:
        check_constraints.check(t, _batch([1, 0, 3], [1, 1, 1]))
    assert e.value.sqlstate == "23514"
    assert e.value.message == 'new row for relation "t" violates check constraint "t_a_check"'


def test_first_row_then_not_null_then_constraint_name():
    t = _table(("zz", "(a > 0)"), ("aa", "(a < 10)"))
    with pytest.raises(errors.QueryError) as e:  # row 0 fails both: aa sorts first
        check_constraints.check(t, _batch([20, -1], [1, 1]))
    assert "aa" in e.value.message
    with pytest.raises(errors.QueryError) as e:  # row 0: NOT NULL before CHECK
        check_constraints.check(t, _batch([-1, 5], [None, 1]))
    assert e.value.sqlstate == "23502"
    assert e.value.message == ('null value in column "b" of relation "t" violates not-null '
                               "constraint")
    with pytest.raises(errors.QueryError) as e:  # row 0's CHECK before row 1's NULL
        check_constraints.check(t, _batch([-1, 5], [1, None]))
    assert "zz" in e.value.message


def test_check_binding_errors():
    cols = (ColumnDef("a", types.INT4),)
    with pytest.raises(errors.QueryError) as e:
        constraints.bind_check("a + 1", cols, "t")
    assert e.value.sqlstate == "42804"
    with pytest.raises(errors.QueryError) as e:
        constraints.bind_check("nope > 0", cols, "t")
    assert e.value.sqlstate == "42703"


def test_failing_row_detail():
    t = _table(("t_a_check", "(a > 0)"))
    with pytest.raises(errors.QueryError) as e:
        check_constraints.check(t, _batch([1, -2], [1, 3]))
    assert e.value.detail == "Failing row contains (-2, 3)."
    with pytest.raises(errors.QueryError) as e:
        check_constraints.check(t, _batch([None], [None]))
    assert e.value.detail == "Failing row contains (null, null)."
