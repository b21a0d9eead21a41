"""Fixtures shared by the storage tests."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest


@pytest.fixture
def all_types_table() -> pa.Table:
    """Every column type a table shard stores, each with a NULL."""
    return pa.table({
        "b": pa.array([True, None, False, True], pa.bool_()),
        "i16": pa.array([3, -7, None, 12], pa.int16()),
        "i32": pa.array([None, 2**31 - 1, -2**31, 0], pa.int32()),
        "i64": pa.array([2**62, None, -5, 9], pa.int64()),
        "f32": pa.array([1.5, None, -0.25, 8.0], pa.float32()),
        "f64": pa.array([None, 3.25, -1e300, 2.0], pa.float64()),
        "dec": pa.array([Decimal("12.30"), Decimal("-99999999999999999999999999999999999.99"),
                         None, Decimal("0.01")], pa.decimal128(38, 2)),
        "scaled": pa.array([1230, 5, None, -100], pa.int64()),
        "s": pa.array(["pear", None, "Apple", "ü"], pa.string()),
        "d": pa.array([dt.date(2024, 2, 29), dt.date(1969, 12, 31), None, dt.date(1970, 1, 1)]),
        "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1), None,
                        dt.datetime(1960, 6, 1), dt.datetime(2000, 1, 1)], pa.timestamp("us")),
    })
