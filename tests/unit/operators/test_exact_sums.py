"""segment/kernels/agg_decimal.py's exact sums and widening, against Python integers, and
the scalar SUM/AVG of bigints they serve (hash_agg's "sum_int128")."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from segment.kernels import agg_decimal as ad
from test_hash_agg import A, _agg_node

_EDGES = [np.random.default_rng(3).integers(-2**63, 2**63 - 1, 100_001, dtype=np.int64),
          np.full(1000, 2**63 - 1, dtype=np.int64), np.full(1000, -2**63, dtype=np.int64)]


@pytest.mark.parametrize("values", _EDGES)
def test_int64_sums_and_widening_are_exact(values):
    arr = pa.array(values)
    assert ad.exact_int64_sum(arr) == sum(int(v) for v in values)
    wide = ad.from_int64(arr)
    assert wide.equals(arr.cast(pa.decimal128(38, 0)))
    assert ad.exact_sum(wide) == sum(int(v) for v in values)


def test_slices_with_nulls():
    arr = pa.array([1, None, 3, None, 2**62, 5, None, 7, 9, 11], pa.int64())
    for off in range(10):
        part = arr[off:]
        want = sum(v for v in part.to_pylist() if v is not None) if part.null_count < len(part) \
            else None
        assert ad.exact_int64_sum(part) == want
        assert ad.from_int64(part).equals(part.cast(pa.decimal128(38, 0)))
    chunked = pa.chunked_array([arr[:3], arr[3:]])
    assert ad.from_int64(chunked).equals(chunked.cast(pa.decimal128(38, 0)))


def test_decimal_sum_past_38_digits_is_left_to_arrow():
    big = pa.array([decimal.Decimal(9 * 10**37)] * 20, pa.decimal128(38, 0))
    assert ad.exact_sum(big) is None
    assert ad.exact_sum(pa.array([None], pa.decimal128(38, 0))) is None


@pytest.mark.parametrize("batch_rows", [1, 2, 1000])
def test_scalar_sum_and_avg_of_bigints_past_int64(batch_rows):
    values = [2**62, 2**62, 2**62, None, -5]
    t = pa.table({"v": pa.array(values, pa.int64())})
    calls = [ex.AggCall(A.SUM, k.col(0, T.INT8), False, T.numeric(38, 0)),
             ex.AggCall(A.COUNT, k.col(0, T.INT8), False, T.INT8)]
    node = _agg_node(k.source(t, [T.INT8], batch_rows=batch_rows), [], calls,
                     plan.AggMode.SINGLE)
    out = k.run(node)
    assert out.column(0).to_pylist() == [decimal.Decimal(3 * 2**62 - 5)]
    assert out.column(1).to_pylist() == [4]
