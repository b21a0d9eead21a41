"""clickbench_hits: the table function's columns are ClickBench's create.sql, and its blocks
cover the rows asked for."""

from __future__ import annotations

from planner import table_functions as tf
from segment.table_functions import clickbench_hits
from workloads.clickbench import sql


def test_columns_are_create_sql():
    assert tf.HITS_COLUMNS == sql.COLUMNS
    assert clickbench_hits.arrow_schema().names == [name for name, _ in tf.HITS_COLUMNS]


def test_blocks_cover_the_rows():
    rows = 2 * tf.BLOCK_ROWS + 5
    assert tf.n_blocks(rows) == 3 and tf.n_blocks(0) == 1
    assert [tf.block_rows(rows, i) for i in range(4)] == [tf.BLOCK_ROWS, tf.BLOCK_ROWS, 5, 0]
    node = tf.bind("clickbench_hits", [1, rows, 1, 10])
    assert node.args == (1, rows, 1, 2) and tf.estimate_rows(node) == tf.BLOCK_ROWS + 5
    assert len(node.fields) == 105
