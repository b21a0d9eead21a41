"""Func.ROW_KEY (segment/kernels/expr_record.py): the key count(DISTINCT (a, b)) counts is
equal exactly where two rows are equal as DISTINCT compares them, NULL only for a NULL row."""

from __future__ import annotations

import pyarrow as pa

from segment.kernels import expr_record


def _keys(fields: dict, mask=None) -> list:
    arrays = list(fields.values())
    return expr_record._record_key(pa.StructArray.from_arrays(
        arrays, names=list(fields), mask=mask)).to_pylist()


def test_equal_rows_have_equal_keys_and_nulls_are_alike():
    k = _keys({"f1": pa.array([1, 1, None, None, 2], pa.int32()),
               "f2": pa.array(["x", "x", None, None, "x"])})
    assert k[0] == k[1] and k[2] == k[3]
    assert len({k[0], k[2], k[4]}) == 3


def test_fields_do_not_run_into_each_other():
    k = _keys({"f1": pa.array(["a", "", "a\x00"]), "f2": pa.array(["", "a", ""])})
    assert len(set(k)) == 3


def test_floats_compare_as_values():
    k = _keys({"f1": pa.array([0.0, -0.0, float("nan"), float("-nan")])})
    assert k[0] == k[1] and k[2] == k[3] and k[0] != k[2]


def test_a_null_row_has_no_key_but_a_row_of_nulls_has_one():
    k = _keys({"f1": pa.array([None, None], pa.int32())}, mask=pa.array([False, True]))
    assert k[0] is not None and k[1] is None


def test_nested_rows_and_arrays_are_one_cell_each():
    inner = pa.StructArray.from_arrays([pa.array([1, 1, None]), pa.array(["a", "a", None])],
                                       names=["f1", "f2"], mask=pa.array([False, False, True]))
    k = _keys({"f1": inner, "f2": pa.array([[1, 2], [1, 2], None])})
    assert k[0] == k[1] and k[2] != k[0] and k[2] is not None
