"""limit: offsets across batch boundaries, no limit, zero, and stopping the child early."""

from __future__ import annotations

import pyarrow as pa
import pytest

import opkit as k
from planner import plan
from planner import types as T
from segment.operators import base


def _src(n=100, batch_rows=10):
    return k.source(pa.table({"a": pa.array(range(n), pa.int64())}), [T.INT8], batch_rows)


@pytest.mark.parametrize("limit,offset", [(5, 0), (5, 8), (25, 3), (None, 95), (None, 0),
                                          (0, 0), (10, 100), (1000, 0), (3, 99)])
def test_limit_offset(limit, offset):
    src = _src()
    got = k.run(plan.Limit(src, limit, offset, src.fields)).column(0).to_pylist()
    end = None if limit is None else offset + limit
    assert got == list(range(100))[offset:end]


def test_limit_stops_pulling_the_child():
    src = _src(1000, 10)
    op = base.build(plan.Limit(src, 15, 0, src.fields))
    out = [b for b in op.execute(k.ctx())]
    assert sum(b.num_rows for b in out) == 15
    assert op.child.pulled == 2


def test_limit_zero_never_pulls():
    src = _src()
    op = base.build(plan.Limit(src, 0, 0, src.fields))
    assert list(op.execute(k.ctx())) == [] and op.child.pulled == 0


def test_limit_empty_child():
    empty = k.Source((), plan.fields_of([("a", T.INT8)]))
    assert k.run(plan.Limit(empty, 3, 1, empty.fields)).num_rows == 0
