"""Compaction after deletes (coordinator/compaction.py): a DELETE that leaves chunks more
than half dead has them rewritten in the background, so the table's size falls; one that
leaves no such chunk starts no compaction; `SET raympp.autocompact = off` skips it."""

from __future__ import annotations

import time

ROWS = 20_000
PAD = "repeat('x', 100)"


def _size(c, table: str) -> int:
    return c.execute(f"SELECT pg_table_size('{table}')").fetchone()[0]


def _load(c, table: str) -> int:
    c.execute(f"DROP TABLE IF EXISTS {table}")
    c.execute(f"CREATE TABLE {table} (id int, pad text) DISTRIBUTED BY (id)")
    c.execute(f"INSERT INTO {table} SELECT g, {PAD} FROM generate_series(1, {ROWS}) g")
    return _size(c, table)


def _size_changes(c, table: str, size: int, seconds: float) -> int:
    """The table's size once it is no longer `size` (or after `seconds`)."""
    deadline = time.monotonic() + seconds
    now = _size(c, table)
    while now == size and time.monotonic() < deadline:
        time.sleep(0.1)
        now = _size(c, table)
    return now


def test_a_delete_that_leaves_chunks_mostly_dead_compacts_them(server):
    with server.connect() as c:
        full = _load(c, "ac_dead")
        c.execute("DELETE FROM ac_dead WHERE id % 10 <> 0")
        compacted = _size_changes(c, "ac_dead", full, 30)
        assert compacted != full  # rewritten: the chunks' files are others now
        c.execute("VACUUM ac_dead")  # nothing left for it to rewrite
        assert _size(c, "ac_dead") == compacted
        assert c.execute("SELECT count(*), sum(id) FROM ac_dead").fetchone() == \
            (ROWS // 10, sum(range(10, ROWS + 1, 10)))
        c.execute("DROP TABLE ac_dead")


def test_a_delete_of_few_rows_or_with_autocompact_off_leaves_the_chunks(server):
    with server.connect() as c:
        full = _load(c, "ac_few")
        c.execute("DELETE FROM ac_few WHERE id % 100 = 0")  # 1%: no chunk half dead
        c.execute("UPDATE ac_few SET pad = 'y' WHERE id = 7")
        time.sleep(1.0)
        grown = _size(c, "ac_few")  # the updated row's new chunk, the old ones as they were
        assert grown > full
        c.execute("SET raympp.autocompact = off")
        c.execute("DELETE FROM ac_few WHERE id % 10 <> 0")
        time.sleep(1.5)
        assert _size(c, "ac_few") == grown  # deleted rows stay in their chunks
        assert c.execute("SELECT count(*) FROM ac_few").fetchone()[0] == ROWS // 10 - ROWS // 100
        c.execute("VACUUM ac_few")  # rewrites them on demand
        assert _size(c, "ac_few") != grown
        c.execute("DROP TABLE ac_few")
