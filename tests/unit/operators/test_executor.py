"""executor: registry and tree building, ANALYZE statistics keyed by pre-order index,
cancellation between batches, and exact output schemas."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

import opkit as k
from planner import errors
from planner import expr as ex
from planner import plan
from planner import types as T
from segment import executor
from segment.operators import base

F = ex.Func


def _tree():
    src = k.source(pa.table({"a": pa.array(range(100), pa.int64())}), [T.INT8], 10)
    filt = plan.Filter(src, k.call(F.GE, k.col(0, T.INT8), k.lit(50, T.INT8)), src.fields)
    proj = plan.Project(filt, (k.col(0, T.INT8),), plan.fields_of([("b", T.INT8)]))
    return plan.Limit(proj, 7, 0, proj.fields)


def test_node_stats_by_preorder_index():
    c = k.ctx(analyze=True)
    out = executor.collect(_tree(), c)
    assert out.column("b").to_pylist() == list(range(50, 57))
    nodes = base.slice_nodes(_tree())
    assert [type(n).__name__ for n in nodes] == ["Limit", "Project", "Filter", "Source"]
    assert sorted(c.node_stats) == [0, 1, 2, 3]
    assert c.node_stats[0].name == "Limit" and c.node_stats[0].rows == 7
    assert c.node_stats[3].name == "Source" and c.node_stats[3].rows == 100  # the filter read ahead to fill a batch
    assert all(s.seconds >= 0 for s in c.node_stats.values())
    assert c.node_stats[0].seconds >= c.node_stats[3].seconds  # inclusive times
    pickle.loads(pickle.dumps(c.node_stats))  # they travel back from segments


def test_no_stats_without_analyze():
    c = k.ctx()
    executor.collect(_tree(), c)
    assert c.node_stats == {}


def test_motion_is_a_leaf_of_the_slice():
    inner = _tree()
    m = plan.Motion(inner, plan.MotionKind.GATHER, inner.fields, slice_id=1)
    top = plan.Limit(m, 1, 0, m.fields)
    assert [type(n).__name__ for n in base.slice_nodes(top)] == ["Limit", "Motion"]
    c = k.ctx(analyze=True, receive=lambda motion: iter(executor.run(motion.child, k.ctx())))
    assert executor.collect(top, c).num_rows == 1
    assert sorted(c.node_stats) == [0, 1]


def test_cancel_between_batches():
    c = k.ctx()
    it = executor.run(_tree().child.child.child, c)  # the source: 10 batches
    next(it)
    c.cancel()
    with pytest.raises(errors.QueryCanceled):
        next(it)


def test_cancelled_before_start():
    c = k.ctx()
    c.cancel()
    with pytest.raises(errors.QueryCanceled) as e:
        list(executor.run(_tree(), c))
    assert e.value.sqlstate == "57014"


def test_output_is_cast_to_node_types():
    # A source whose batches carry int64 for a node typed int4: the executor conforms.
    src = k.Source((pa.record_batch({"x": pa.array([1, 2], pa.int64())}),),
                   plan.fields_of([("a", T.INT4)]))
    out = executor.collect(src, k.ctx())
    assert out.schema == pa.schema([("a", pa.int32())])


def test_unknown_node_type():
    class Alien(plan.Node):
        fields = ()

    with pytest.raises(errors.FeatureNotSupported):
        base.build(Alien())


def test_context_does_not_pickle():
    with pytest.raises(TypeError):
        pickle.dumps(k.ctx())


def test_arrow_errors_become_query_errors():
    # min() of an interval has no Arrow hash kernel
    src = k.Source((pa.record_batch({"i": pa.array([(1, 2, 3)], pa.month_day_nano_interval())}),),
                   plan.fields_of([("i", T.INTERVAL)]))
    agg = ex.AggCall(ex.AggFunc.MIN, k.col(0, T.INTERVAL), False, T.INTERVAL)
    node = plan.Aggregate(src, (), (agg,), plan.AggMode.SINGLE, plan.fields_of([("m", T.INTERVAL)]))
    with pytest.raises(errors.QueryError) as e:
        executor.collect(node, k.ctx())
    assert e.value.sqlstate in ("0A000", "XX000")
