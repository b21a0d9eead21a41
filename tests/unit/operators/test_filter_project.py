"""filter and project on hand-built batches: NULL predicates, empty input, one row, many
batches, small results coalesced, and output types cast to the node's fields."""

from __future__ import annotations

import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from segment.operators import base

F = ex.Func


def _src(n=10, batch_rows=None):
    t = pa.table({"a": pa.array([i if i % 3 else None for i in range(n)], pa.int32()),
                  "s": pa.array([f"r{i}" for i in range(n)])})
    return k.source(t, [T.INT4, T.TEXT], batch_rows)


def test_filter_drops_false_and_null():
    src = _src()
    pred = k.call(F.GT, k.col(0, T.INT4), k.lit(4, T.INT4))
    out = k.run(plan.Filter(src, pred, src.fields))
    assert out.column(0).to_pylist() == [5, 7, 8]
    assert out.schema == pa.schema([("a", pa.int32()), ("s", pa.string())])


def test_filter_many_small_batches_are_coalesced(monkeypatch):
    monkeypatch.setattr(base, "MIN_BATCH_ROWS", 50)
    src = _src(1000, batch_rows=10)
    pred = k.call(F.LT, k.col(0, T.INT4), k.lit(900, T.INT4))
    batches = list(_batches(plan.Filter(src, pred, src.fields)))
    assert sum(b.num_rows for b in batches) == len([i for i in range(900) if i % 3])
    # one output per 50 input rows (5 input batches) while rows still pass
    assert len(batches) == 18 and all(b.num_rows >= 33 for b in batches)


def test_limit_over_selective_filter_reads_little_ahead(monkeypatch):
    """Coalescing counts input rows, so a LIMIT does not wait for many matches."""
    monkeypatch.setattr(base, "MIN_BATCH_ROWS", 50)
    src = _src(10_000, batch_rows=10)
    pred = k.call(F.EQ, k.col(0, T.INT4), k.lit(7, T.INT4))  # one match, in batch 0
    op = base.build(plan.Limit(plan.Filter(src, pred, src.fields), 1, 0, src.fields))
    assert sum(b.num_rows for b in op.execute(k.ctx())) == 1
    assert op.child.child.pulled == 5


@pytest.mark.parametrize("value,rows", [(True, 10), (False, 0), (None, 0)])
def test_filter_constant_predicates(value, rows):
    src = _src()
    out = k.run(plan.Filter(src, k.lit(value, T.BOOL), src.fields))
    assert out.num_rows == rows


def test_filter_empty_and_one_row():
    empty = k.Source((), _src().fields)
    pred = k.call(F.GT, k.col(0, T.INT4), k.lit(0, T.INT4))
    assert k.run(plan.Filter(empty, pred, empty.fields)).num_rows == 0
    one = k.Source((_src(2).batches[0].slice(1, 1),), _src().fields)
    assert k.run(plan.Filter(one, pred, one.fields)).to_pylist() == [{"a": 1, "s": "r1"}]


def test_project_expressions_refs_and_casts():
    src = _src(4)
    exprs = (k.col(1, T.TEXT), k.call(F.ADD, k.col(0, T.INT4), k.lit(1, T.INT4), t=T.INT4),
             k.lit(7, T.INT8), k.col(0, T.INT4))
    fields = plan.fields_of([("s", T.TEXT), ("a1", T.INT4), ("seven", T.INT8), ("a8", T.INT8)])
    out = k.run(plan.Project(src, exprs, fields))
    assert out.schema == pa.schema([("s", pa.string()), ("a1", pa.int32()),
                                    ("seven", pa.int64()), ("a8", pa.int64())])
    assert out.to_pydict() == {"s": ["r0", "r1", "r2", "r3"], "a1": [None, 2, 3, None],
                               "seven": [7] * 4, "a8": [None, 1, 2, None]}


def test_project_no_expressions_keeps_row_count():
    src = _src(5, batch_rows=2)
    batches = list(_batches(plan.Project(src, (), ())))
    assert sum(b.num_rows for b in batches) == 5 and all(b.num_columns == 0 for b in batches)


def test_project_empty_input():
    empty = k.Source((), _src().fields)
    node = plan.Project(empty, (k.col(0, T.INT4),), plan.fields_of([("a", T.INT4)]))
    assert k.run(node).num_rows == 0


def _batches(node):
    from segment import executor

    return executor.run(node, k.ctx())


def test_now_is_the_statement_time_from_the_context():
    import datetime as dt

    when = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)
    src = _src(30, batch_rows=7)
    node = plan.Project(src, (ex.Call(F.NOW, (), T.TIMESTAMPTZ),),
                        plan.fields_of([("now", T.TIMESTAMPTZ)]))
    out = k.run(node, k.ctx(now=when))
    assert set(out.column(0).to_pylist()) == {when}
