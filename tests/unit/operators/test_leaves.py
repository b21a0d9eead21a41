"""values and generate_series: constant rows, and integer series in parts and batches."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

import opkit as k
from planner import errors
from planner import plan
from planner import types as T
from segment.operators import base


def test_values_rows_and_types():
    rows = ((k.lit(1, T.INT4), k.lit("x", T.TEXT), k.lit(Decimal("1.50"), T.numeric(10, 2)),
             k.lit(dt.date(2024, 2, 29), T.DATE)),
            (k.lit(None, T.INT4), k.lit(None, T.TEXT), k.lit(None, T.numeric(10, 2)),
             k.lit(None, T.DATE)))
    fields = plan.fields_of([("a", T.INT8), ("b", T.TEXT), ("n", T.numeric(10, 2)),
                             ("d", T.DATE)])
    out = k.run(plan.Values(rows, fields))
    assert out.schema.types == [pa.int64(), pa.string(), pa.int64(), pa.date32()]
    assert out.to_pydict() == {"a": [1, None], "b": ["x", None], "n": [150, None],
                               "d": [dt.date(2024, 2, 29), None]}


def test_values_without_columns_and_without_rows():
    out = list(_batches(plan.Values(((), ()), ())))
    assert sum(b.num_rows for b in out) == 2
    assert k.run(plan.Values((), plan.fields_of([("a", T.INT4)]))).num_rows == 0


@pytest.mark.parametrize("start,stop,step", [(1, 10, 1), (1, 10, 3), (10, 1, -4), (5, 5, 1),
                                             (1, 0, 1), (-3, 3, 2)])
def test_series_matches_python_range(start, stop, step):
    node = plan.GenerateSeries(start, stop, step, plan.fields_of([("g", T.INT8)]))
    want = list(range(start, stop + (1 if step > 0 else -1), step))
    assert k.run(node).column(0).to_pylist() == want


@pytest.mark.parametrize("n", [1, 3, 7, 20])
def test_series_parts_are_disjoint_and_complete(n):
    parts = []
    for i in range(n):
        node = plan.GenerateSeries(3, 100, 2, plan.fields_of([("g", T.INT4)]), part=(i, n))
        got = k.run(node).column(0).to_pylist()
        assert got == list(range(3, 101, 2))[i::n]
        parts += got
    assert sorted(parts) == list(range(3, 101, 2))


def test_series_batches_and_type(monkeypatch):
    monkeypatch.setattr(base, "BATCH_ROWS", 1000)
    node = plan.GenerateSeries(1, 10_500, 1, plan.fields_of([("g", T.INT4)]))
    batches = list(_batches(node))
    assert [b.num_rows for b in batches] == [1000] * 10 + [500]
    assert batches[0].schema == pa.schema([("g", pa.int32())])
    assert batches[-1].column(0)[-1].as_py() == 10_500


def test_series_extremes_of_int64():
    top = 2**63 - 1
    node = plan.GenerateSeries(top - 2, top, 1, plan.fields_of([("g", T.INT8)]))
    assert k.run(node).column(0).to_pylist() == [top - 2, top - 1, top]


def test_series_zero_step():
    with pytest.raises(errors.InvalidParameterValue):
        k.run(plan.GenerateSeries(1, 2, 0, plan.fields_of([("g", T.INT8)])))


def _batches(node):
    from segment import executor

    return executor.run(node, k.ctx())


def test_values_many_literal_rows_and_mixed_expressions():
    from planner import expr as ex

    rows = tuple((k.lit(i, T.INT8), k.lit(None if i % 2 else f"s{i}", T.TEXT)) for i in range(5000))
    rows += ((k.call(ex.Func.ADD, k.lit(1, T.INT8), k.lit(2, T.INT8), t=T.INT8), k.lit("z", T.TEXT)),)
    out = k.run(plan.Values(rows, plan.fields_of([("a", T.INT8), ("b", T.TEXT)])))
    assert out.num_rows == 5001 and out.column(0).to_pylist()[-2:] == [4999, 3]
    assert out.column(1).to_pylist()[:3] == ["s0", None, "s2"]
