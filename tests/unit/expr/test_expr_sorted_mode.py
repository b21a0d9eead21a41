"""Func.SORTED_MODE over sorted arrays: mode()'s kernel (segment/kernels/expr_list_sort.py)."""

from __future__ import annotations

import math

import pyarrow as pa

from planner import types
from planner.expr import Call, ColumnRef, Func
from segment.kernels.expr_list_sort import sorted_mode


def _mode(rows, elem=types.INT4, arrow=pa.int32()):
    arr = pa.array(rows, pa.list_(arrow))
    e = Call(Func.SORTED_MODE, (ColumnRef(0, types.array_of(elem)),), elem)
    return sorted_mode(e, [arr], len(rows)).to_pylist()


def test_longest_run_first_of_ties_and_nulls():
    assert _mode([[1, 2, 2, 3], [1, 1, 2, 2], [5], [], None, [None, None], [3, 3, None]]) \
        == [2, 1, 5, None, None, None, 3]


def test_descending_order_gives_the_first_in_that_order():
    assert _mode([[9, 9, 4, 4, 1]]) == [9]


def test_runs_do_not_cross_arrays():
    assert _mode([[1, 2], [2, 3], [3]]) == [1, 2, 3]


def test_strings_and_nan():
    assert _mode([["a", "b", "b"], ["x"]], types.TEXT, pa.string()) == ["b", "x"]
    got = _mode([[1.0, math.nan, math.nan]], types.FLOAT8, pa.float64())
    assert math.isnan(got[0])


def test_no_elements_at_all():
    assert _mode([[], None]) == [None, None]
