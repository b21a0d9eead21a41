"""ANALYZE's most common values: a segment's random sample of its rows
(segment/common_values.py), the coordinator's merge of the segments' counts into
fractions of all rows (coordinator/table_stats.common_values)."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

from coordinator import table_stats
from segment import common_values as cv
from segment.messages import ColumnSample


def test_sample_positions_are_one_uniform_sample_over_the_chunks():
    rows = [50_000, 10, 0, 40_000]
    parts = cv.sample_positions(rows, seed=7)
    assert sum(len(p) for p in parts) == cv.SAMPLE_ROWS
    for p, n in zip(parts, rows):
        assert (np.diff(p) > 0).all() and (len(p) == 0 or 0 <= p.min() and p.max() < n)
    assert abs(len(parts[0]) / cv.SAMPLE_ROWS - 50_000 / 90_010) < 0.02
    assert [len(p) for p in cv.sample_positions([5, 3], seed=1)] == [5, 3]  # all rows
    again = cv.sample_positions(rows, seed=7)
    assert all((a == b).all() for a, b in zip(parts, again))  # the same ANALYZE, the same rows


def test_most_common_values_by_count_only_repeated_ones():
    values = pa.array([62] * 50 + [7] * 20 + [1, 2, 3] + [None] * 10, pa.int16())
    assert cv.most_common([values]) == ((62, 50), (7, 20))
    words = pa.array(["a", "b", "a", None, "a", "b", "c"]).dictionary_encode()
    assert cv.most_common([words[:3], words[3:]]) == (("a", 3), ("b", 2))
    days = pa.array([datetime.date(1970, 1, 3)] * 3, pa.date32())
    assert cv.most_common([days]) == ((2, 3),)  # physical: days since 1970-01-01
    stamps = pa.array([0, 0, 5], pa.timestamp("ms"))
    assert cv.most_common([stamps]) == ((0, 2),)
    assert cv.most_common([pa.array([1.5, 1.5, 2.0])]) == ()  # floats keep none
    assert cv.most_common([pa.array([None, None], pa.int32())]) == ()


def _sample(common, sampled, nulls=0):
    return ColumnSample(nulls, np.empty(0, np.uint64), common=common, sampled=sampled)


def test_segments_counts_merge_into_fractions_of_all_rows():
    # 62 is 10% of segment 0's 1M rows and 30% of segment 1's 3M: 25% of all rows
    samples = [_sample(((62, 3000), (5, 60)), 30_000), _sample(((62, 9000),), 30_000)]
    common = table_stats.common_values(samples, [1_000_000, 3_000_000], distinct=6000)
    assert [v for v, _ in common] == [62, 5]
    assert common[0][1] == pytest.approx(0.25)
    assert common[1][1] == pytest.approx(0.0005)


def test_about_equally_frequent_values_are_not_common():
    # 100 values sampled 300 times each: none stands out from the average
    samples = [_sample(tuple((v, 300) for v in range(100)), 30_000)]
    assert table_stats.common_values(samples, [1_000_000], distinct=100) == ()
    assert table_stats.common_values([_sample((), 0)], [0], distinct=0) == ()
