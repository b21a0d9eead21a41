"""The persistent catalog: tables survive reopening; ids are unique; the commit log."""

import pytest

from coordinator.catalog import Catalog
from planner import errors, types
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef, TableStats


def _table(tid=1, name="t"):
    cols = (ColumnDef("k", types.INT8, True), ColumnDef("x", types.numeric(15, 2)),
            ColumnDef("s", types.varchar(5)), ColumnDef("u", types.UNCONSTRAINED))
    return TableDef(tid, name, cols, DistPolicy(DistKind.HASHED, (0,)), TableStats(10))


def test_tables_persist(tmp_path):
    c = Catalog(str(tmp_path))
    c.add_table(_table())
    c.close()
    c2 = Catalog(str(tmp_path))
    t = c2.get_table("t")
    assert t == _table()
    assert t.arrow_schema().field("x").type.bit_width == 64  # scaled int64
    assert t.columns[3].type.is_dynamic  # numeric without typmod: a scale per value
    c2.drop_table("t")
    assert c2.get_table("t") is None


def test_duplicate_table(tmp_path):
    c = Catalog(str(tmp_path))
    c.add_table(_table())
    with pytest.raises(errors.DuplicateTable):
        c.add_table(_table(2))


def test_ids_and_commit_log(tmp_path):
    c = Catalog(str(tmp_path))
    ids = [c.next_id("txn") for _ in range(5)]
    assert ids == sorted(set(ids))
    c.record_commit(ids[1])
    c.close()
    c2 = Catalog(str(tmp_path))
    assert c2.next_id("txn") > ids[-1]
    assert c2.committed() == {ids[1]}
