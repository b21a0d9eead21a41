"""unique_check.check: keys of new rows against themselves and the live rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from planner import errors
from segment.storage import unique_check


def t(**cols) -> pa.Table:
    return pa.table(cols)


def test_new_keys_against_existing_and_each_other():
    existing = [t(a=pa.array([1, 2, 3]), b=pa.array(["x", "y", "z"]))]
    unique_check.check("k", ["a"], existing, [t(a=pa.array([4, 5]), b=pa.array(["p", "q"]))])
    with pytest.raises(errors.QueryError) as e:
        unique_check.check("k", ["a"], existing, [t(a=pa.array([5, 2]), b=pa.array(["", ""]))])
    assert e.value.sqlstate == "23505" and e.value.detail == "Key (a)=(2) already exists."
    with pytest.raises(errors.QueryError):
        unique_check.check("k", ["a"], [], [t(a=pa.array([7])), t(a=pa.array([7]))])


def test_composite_keys_with_nulls_never_conflict():
    existing = [t(a=pa.array([1, 1]), b=pa.array(["x", None]))]
    new = [t(a=pa.array([1, 1, 2]), b=pa.array([None, None, "x"]))]
    unique_check.check("k", ["a", "b"], existing, new)
    with pytest.raises(errors.QueryError) as e:
        unique_check.check("k", ["a", "b"], existing, [t(a=pa.array([1]), b=pa.array(["x"]))])
    assert "Key (a, b)=(1, x)" in e.value.detail


def test_dictionary_encoded_and_plain_strings_compare_alike():
    words = pa.array(["u", "v"]).dictionary_encode()
    unique_check.check("k", ["s"], [t(s=words)], [t(s=pa.array(["w"]))])
    with pytest.raises(errors.QueryError):
        unique_check.check("k", ["s"], [t(s=words)], [t(s=pa.array(["v"]))])
