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


def _chunks(c, table: str) -> int:
    """The table's chunks: what count(*)'s scan of chunk statistics reads, one row each."""
    plan = [r[0] for r in c.execute(f"EXPLAIN ANALYZE SELECT count(*) FROM {table}")]
    [line] = [p for p in plan if "Chunk Statistics Scan" in p]
    return int(line.split("actual rows=")[1].split()[0])


def test_many_small_inserts_have_their_chunks_merged(server):
    with server.connect() as c:
        for table, auto in (("ac_small", "on"), ("ac_small_off", "off")):
            c.execute(f"SET raympp.autocompact = {auto}")
            c.execute(f"DROP TABLE IF EXISTS {table}")
            c.execute(f"CREATE TABLE {table} (id int, v text) DISTRIBUTED BY (id)")
            for i in range(40):  # a chunk per INSERT and segment written to
                c.execute(f"INSERT INTO {table} VALUES ({i}, 'v{i}')")
        deadline = time.monotonic() + 30
        while _chunks(c, "ac_small") > 32 and time.monotonic() < deadline:
            time.sleep(0.1)
        # a segment merges its small chunks once it has 16: at most 15 left on each
        assert _chunks(c, "ac_small") <= 30
        assert _chunks(c, "ac_small_off") >= 40  # one at least per INSERT
        for table in ("ac_small", "ac_small_off"):
            assert c.execute(f"SELECT count(*), sum(id), min(v), max(v) FROM {table}"
                             ).fetchone() == (40, sum(range(40)), "v0", "v9")
            c.execute(f"DROP TABLE {table}")
