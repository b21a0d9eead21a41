"""ALTER TABLE with column defaults and CHECK constraints (planner/alter_table.py), and
the DEFAULT keyword of UPDATE and MERGE (planner/default_values.py)."""

import pytest

from planner import alter_table, constraints, errors, statements, types
from planner import default_values as dv
from planner import expr as ex
from planner.schema import CheckDef, ColumnDef, DistKind, DistPolicy, Identity, TableDef


def _table(checks=(), cols=None) -> TableDef:
    cols = cols or (ColumnDef("k", types.INT4), ColumnDef("x", types.INT4, default="5"),
                    ColumnDef("y", types.INT4))
    defs = tuple(CheckDef(n, sql, constraints.bind_check(sql, cols, "t")) for n, sql in checks)
    return TableDef(1, "t", cols, DistPolicy(DistKind.HASHED, (0,)), checks=defs)


def _alter(table: TableDef, sql: str, owns=lambda c: False) -> alter_table.Change:
    return alter_table.plan(table, statements.classify(sql).tree, owns)


def test_set_and_drop_default_change_only_the_catalog():
    change = _alter(_table(), "ALTER TABLE t ALTER COLUMN y SET DEFAULT 3")
    assert change.new.columns[2].default == "3"
    assert not change.rewrites
    change = _alter(_table(), "ALTER TABLE t ALTER COLUMN x DROP DEFAULT")
    assert change.new.columns[1].default is None
    assert not change.rewrites


def test_add_column_default_fills_existing_rows():
    change = _alter(_table(), "ALTER TABLE t ADD COLUMN z int4 DEFAULT 2 + 3")
    assert change.rewrites
    assert change.new.columns[3].default is not None
    assert isinstance(change.exprs[3], ex.Literal) and change.exprs[3].value == 5


def test_drop_column_drops_the_checks_reading_it_and_rebinds_the_rest():
    table = _table((("t_y_check", "(y > 0)"), ("t_x_check", "(x > 0)")))
    change = _alter(table, "ALTER TABLE t DROP COLUMN k")
    assert [k.name for k in change.new.checks] == ["t_y_check", "t_x_check"]
    change = _alter(table, "ALTER TABLE t DROP COLUMN y")
    assert [k.name for k in change.new.checks] == ["t_x_check"]
    # the CHECK left is bound again over the columns that remain
    change = _alter(change.new, "ALTER TABLE t DROP COLUMN k")
    assert change.new.checks[0].expr == constraints.bind_check(
        "(x > 0)", change.new.columns, "t")


@pytest.mark.parametrize("sql", [
    "ALTER TABLE t RENAME COLUMN y TO y2",           # a CHECK reads y
    "ALTER TABLE t ALTER COLUMN x TYPE int8",        # x has a default
    "ALTER TABLE t ADD COLUMN s serial",
    "ALTER TABLE t ADD COLUMN c int4 CHECK (c > 0)",
])
def test_refused(sql):
    table = _table((("t_y_check", "(y > 0)"),))
    with pytest.raises(errors.FeatureNotSupported):
        _alter(table, sql)


def test_dropping_a_column_that_owns_a_sequence_is_refused():
    with pytest.raises(errors.FeatureNotSupported):
        _alter(_table(), "ALTER TABLE t DROP COLUMN k", lambda c: c == "k")


def test_identity_column_default_is_42601():
    cols = (ColumnDef("id", types.INT4, True, identity=Identity.ALWAYS),
            ColumnDef("v", types.TEXT))
    with pytest.raises(errors.QueryError) as e:
        _alter(_table(cols=cols), "ALTER TABLE t ALTER COLUMN id DROP DEFAULT")
    assert e.value.sqlstate == "42601"


def test_default_keyword_and_values():
    update = statements.classify("UPDATE t SET x = DEFAULT, y = 1").tree
    assert [dv.is_default(e.expression) for e in update.expressions] == [True, False]
    table = _table()
    assert dv.value_of(None, table, 2, True, "UPDATE") == ex.Literal(None, types.INT4)
    nextval = ex.SequenceCall(ex.SeqFunc.NEXTVAL, 1, "s", (), types.INT8)
    with pytest.raises(errors.FeatureNotSupported):
        dv.value_of(lambda t: [None, nextval, None], table, 1, True, "UPDATE")
    assert dv.value_of(lambda t: [None, nextval, None], table, 1, False, "MERGE") is nextval


def test_update_of_an_always_identity_column_is_428c9():
    cols = (ColumnDef("id", types.INT4, True, identity=Identity.ALWAYS),)
    item = statements.classify("UPDATE t SET id = 5").tree.expressions[0].expression
    with pytest.raises(errors.QueryError) as e:
        dv.refuse_update_always(_table(cols=cols), 0, item)
    assert e.value.sqlstate == "428C9"
