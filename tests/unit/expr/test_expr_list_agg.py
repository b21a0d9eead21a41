"""The kernels that finish aggregates bound over array_agg (segment/kernels/expr_list_agg.py):
FILTER on array_agg, percentiles of arrays of fractions, PostgreSQL's regression state."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from planner import errors, types
from planner.expr import Call, ColumnRef, Func, Literal
from segment.kernels import expr_list_agg as xla

F8S = types.array_of(types.FLOAT8)


def _filter(values, keep):
    e = Call(Func.LIST_FILTER, (ColumnRef(0, types.array_of(types.INT4)),
                                ColumnRef(1, types.array_of(types.BOOL))),
             types.array_of(types.INT4))
    return xla.list_filter(e, [pa.array(values, pa.list_(pa.int32())),
                               pa.array(keep, pa.list_(pa.bool_()))], len(values)).to_pylist()


def test_filter_keeps_true_elements_null_where_none():
    assert _filter([[1, None, 3], [4, 5], None, [], [6]],
                   [[True, True, False], [False, None], None, [], [True]]) \
        == [[1, None], None, None, None, [6]]


def _percentiles(rows, fractions, func=Func.PERCENTILE_CONT_MULTI):
    e = Call(func, (ColumnRef(0, F8S), Literal(fractions, F8S)), F8S)
    return xla.percentiles(e, [pa.array(rows, pa.list_(pa.float64()))], len(rows)).to_pylist()


def test_percentile_cont_interpolates_and_keeps_null_fractions():
    assert _percentiles([[1.0, 2.0, 4.0, None], [None], None, [5.0]], [0.0, 0.25, None, 1.0]) \
        == [[1.0, 1.5, None, 4.0], None, None, [5.0, 5.0, None, 5.0]]


def test_percentile_cont_infinity_is_not_interpolated_between_equal_rows():
    assert _percentiles([[1.0, math.inf, math.inf]], [0.5, 1.0]) == [[math.inf, math.inf]]


def test_percentile_disc_and_empty_fractions():
    assert _percentiles([[1.0, 2.0, 3.0, 4.0]], [0.0, 0.5, 0.51, 1.0],
                        Func.PERCENTILE_DISC_MULTI) == [[1.0, 2.0, 3.0, 4.0]]
    assert _percentiles([[1.0], None], []) == [[], None]


def test_fraction_out_of_range_only_where_there_are_values():
    assert _percentiles([[None], None], [2.0]) == [None, None]
    with pytest.raises(errors.NumericOutOfRange, match="percentile value 2 is not between"):
        _percentiles([[1.0]], [2.0])


def _regr(name, xs, ys):
    e = Call(Func.REGR, (ColumnRef(0, F8S), ColumnRef(1, F8S), Literal(name, types.TEXT)),
             types.FLOAT8)
    return xla.regr(e, [pa.array(xs, pa.list_(pa.float64())),
                        pa.array(ys, pa.list_(pa.float64()))], len(xs)).to_pylist()


def test_regression_skips_pairs_with_a_null():
    xs, ys = [[1.0, 2.0, None, 4.0], [1.0], None], [[2.0, 4.0, 5.0, 8.0], [None], None]
    assert _regr("regr_slope", xs, ys) == [2.0, None, None]
    assert _regr("regr_sxx", xs, ys) == [pytest.approx(14 / 3), None, None]
    assert _regr("regr_intercept", xs, ys) == [pytest.approx(0.0), None, None]


def test_regression_edges():
    vertical = [[2.0, 2.0]], [[1.0, 3.0]]
    assert _regr("regr_slope", *vertical) == [None]
    assert _regr("regr_r2", *vertical) == [None]
    horizontal = [[1.0, 3.0]], [[5.0, 5.0]]
    assert _regr("regr_r2", *horizontal) == [1.0]
    assert _regr("corr", *horizontal) == [None]
    assert _regr("covar_samp", [[1.0]], [[1.0]]) == [None]
    assert _regr("covar_pop", [[1.0]], [[1.0]]) == [0.0]


def test_regression_infinite_input_is_nan_and_finite_overflow_raises():
    assert math.isnan(_regr("regr_sxx", [[math.inf, 1.0]], [[1.0, 2.0]])[0])
    assert _regr("regr_avgx", [[math.inf, 1.0]], [[1.0, 2.0]]) == [math.inf]
    with pytest.raises(errors.NumericOutOfRange, match="overflow"):
        _regr("regr_sxx", [[1e300, 3e300, -1e300]], [[1.0, 2.0, 3.0]])
