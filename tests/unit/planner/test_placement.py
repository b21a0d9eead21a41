"""Tables an expansion has not moved yet: hashed over fewer segments than the cluster has,
so joins with them are co-located only with tables hashed alike (Greenplum's numsegments
in the locus), and rows sent to them hash over their segments."""

from __future__ import annotations


import pytest

from planner import distribute, expansion
from planner import locus as lc
from planner import plan as pl
from planner import types as T
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef


def _table(tid: int, name: str, numsegments: int, kind=DistKind.HASHED) -> TableDef:
    keys = (0,) if kind is DistKind.HASHED else ()
    return TableDef(tid, name, (ColumnDef("k", T.INT8), ColumnDef("v", T.INT8)),
                    DistPolicy(kind, keys), numsegments=numsegments)


def _scan(t: TableDef) -> pl.Scan:
    return pl.Scan(t, (0, 1), tuple(pl.Field(c.name, c.type) for c in t.columns))


def _join(a: TableDef, b: TableDef, n: int) -> pl.Node:
    left, right = _scan(a), _scan(b)
    fields = left.fields + right.fields
    j = pl.HashJoin(left, right, pl.JoinType.INNER, (0,), (0,), None, fields)
    return distribute.place(j, n)


def _motions(node: pl.Node) -> list[pl.Motion]:
    return [m for m in pl.walk(node) if isinstance(m, pl.Motion)]


def test_scan_of_a_table_not_moved_yet_is_hashed_over_its_segments():
    assert distribute.place(_scan(_table(1, "a", 2)), 4).locus == lc.hashed((0,), 2)
    assert distribute.place(_scan(_table(1, "a", 4)), 4).locus == lc.hashed((0,), 4)
    # A catalog from before expansions says 0: all of the cluster's segments.
    assert distribute.place(_scan(_table(1, "a", 0)), 3).locus == lc.hashed((0,), 3)


def test_tables_on_as_many_segments_join_in_place():
    assert not _motions(_join(_table(1, "a", 2), _table(2, "b", 2), 4))
    assert not _motions(_join(_table(1, "a", 4), _table(2, "b", 4), 4))


@pytest.mark.parametrize("a,b", [(2, 4), (4, 2)])
def test_tables_on_different_segments_redistribute(a, b):
    j = _join(_table(1, "a", a), _table(2, "b", b), 4)
    (m,) = _motions(j)
    assert m.kind is pl.MotionKind.REDISTRIBUTE
    # One side moves to where the other's rows are: hashed over that side's segments.
    assert m.locus.segments in (a, b)
    other = j.right if m is j.left else j.left
    assert other.locus.segments == m.locus.segments


def test_replicated_table_not_copied_yet_is_read_from_one_copy():
    rep = _table(1, "r", 2, DistKind.REPLICATED)
    assert distribute.place(_scan(rep), 4).locus == lc.SINGLE_QE
    assert distribute.place(_scan(rep), 2).locus == lc.REPLICATED


def test_insert_hashes_over_the_target_tables_segments():
    target = _table(1, "a", 2)
    src = _scan(_table(2, "b", 4))
    plan = distribute.distribute_insert(src, target, 4)
    (m,) = [m for m in _motions(plan) if m.kind is pl.MotionKind.REDISTRIBUTE]
    assert m.locus.segments == 2
    rep = _table(3, "r", 3, DistKind.REPLICATED)
    (b,) = [m for m in _motions(distribute.distribute_insert(src, rep, 4))
            if m.kind is pl.MotionKind.BROADCAST]
    assert b.buckets == 3


def test_move_plan_deletes_at_home_and_writes_through_an_explicit_motion():
    root = expansion.plan_move(_table(1, "a", 2), 2, 4)
    kinds = [type(n).__name__ for n in pl.walk(root)]
    assert {"Rehome", "DeleteRows", "Insert"} <= set(kinds)
    explicit = [m for m in _motions(root) if m.kind is pl.MotionKind.EXPLICIT]
    assert len(explicit) == 1
    rep_root = expansion.plan_move(_table(2, "r", 2, DistKind.REPLICATED), 2, 4)
    assert "DeleteRows" not in [type(n).__name__ for n in pl.walk(rep_root)]
    with pytest.raises(ValueError):
        expansion.plan_move(_table(1, "a", 4), 4, 4)


def test_a_hashed_locus_says_how_many_segments():
    with pytest.raises(ValueError):
        lc.Locus(lc.LocusKind.HASHED, (0,))
    assert lc.hashed((0,), 2).hashed_alike(lc.hashed((1,), 2))
    assert not lc.hashed((0,), 2).hashed_alike(lc.hashed((0,), 3))
    assert lc.hashed((0,), 3).remap({0: 5}).segments == 3
