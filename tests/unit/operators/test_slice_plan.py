"""SlicePlan: a slice's plan pickled once per plan object on the coordinator and unpickled
once per byte string on a segment, crossing a (real) pickle as Ray sends it."""

from __future__ import annotations

import pickle

from planner import locus as lc
from planner import plan as pl
from planner import types as T
from segment.messages import SlicePlan, SliceTask


def _motion(rows: int) -> pl.Motion:
    values = pl.Values(tuple((i,) for i in range(rows)), pl.fields_of([("x", T.INT4)]))
    return pl.Motion(values, pl.MotionKind.GATHER, values.fields, locus=lc.ENTRY)


def test_pickled_once_per_plan_object():
    m = _motion(3)
    first = SlicePlan.of(m)
    assert SlicePlan.of(m) is first
    assert SlicePlan.of(_motion(3)) is not first  # another object: pickled on its own
    assert first.motion() is m  # on the coordinator, the object itself


def test_through_pickle_the_segment_gets_an_equal_plan_unpickled_once():
    m = _motion(4)
    sent = pickle.loads(pickle.dumps(SlicePlan.of(m)))
    again = pickle.loads(pickle.dumps(SlicePlan.of(m)))
    assert sent.motion() == m and sent.motion() is not m
    assert again.motion() is sent.motion()  # the same bytes: the plan already unpickled


def test_task_reads_its_motion():
    m = _motion(5)
    task = pickle.loads(pickle.dumps(SliceTask(1, SlicePlan.of(m), (), 0, {}, None)))
    assert task.motion == m


def test_caches_are_bounded(monkeypatch):
    monkeypatch.setattr(SlicePlan, "CACHED", 3)
    plans = [SlicePlan.of(_motion(i)) for i in range(6)]
    assert len(SlicePlan._pickled) <= 3
    for p in plans:
        pickle.loads(pickle.dumps(p)).motion()
    assert len(SlicePlan._unpickled) <= 3
