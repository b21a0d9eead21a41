"""Many clients at once: each of 8 threads has its own connection and runs its own reads
over a shared table and writes to its own table; every answer must be exact."""

from __future__ import annotations

import concurrent.futures as cf

N_THREADS = 8
N_ROWS = 20000


def test_many_connections_at_once(server, conn, table):
    shared = table()
    conn.execute(f"CREATE TABLE {shared} (k int8, g int4, x int8) DISTRIBUTED BY (k)")
    conn.execute(f"INSERT INTO {shared} SELECT i, i % 8, i * 3 FROM "
                 f"generate_series(1, {N_ROWS}) AS s(i)")
    own = [table() for _ in range(N_THREADS)]

    def client(n: int):
        with server.connect() as c:
            for round_ in range(5):
                got = c.execute(f"SELECT count(*), sum(x) FROM {shared} WHERE g = %s",
                                (n,)).fetchone()
                xs = [i * 3 for i in range(1, N_ROWS + 1) if i % 8 == n]
                assert got == (len(xs), sum(xs)), (n, round_)
                rows = c.execute(f"SELECT g, count(*) FROM {shared} GROUP BY g "
                                 f"ORDER BY g").fetchall()
                assert rows == [(g, N_ROWS // 8) for g in range(8)]
            c.execute(f"CREATE TABLE {own[n]} (k int8, v text) DISTRIBUTED RANDOMLY")
            c.execute(f"INSERT INTO {own[n]} SELECT i, 'client {n}' FROM "
                      f"generate_series(1, {1000 * (n + 1)}) AS s(i)")
            got = c.execute(f"SELECT count(*), min(v), max(v) FROM {own[n]}").fetchone()
            assert got == (1000 * (n + 1), f"client {n}", f"client {n}")
        return n

    with cf.ThreadPoolExecutor(N_THREADS) as pool:
        futures = [pool.submit(client, n) for n in range(N_THREADS)]
        done = [f.result(timeout=600) for f in futures]
    assert sorted(done) == list(range(N_THREADS))


def test_idle_connections_do_not_block_others(server):
    idle = [server.connect(autocommit=False) for _ in range(10)]
    try:
        for c in idle:
            c.execute("SELECT 1")   # each holds an open transaction
        with server.connect() as c:
            assert c.execute("SELECT count(*) FROM generate_series(1, 1000) AS g(i)"
                             ).fetchone() == (1000,)
    finally:
        for c in idle:
            c.close()
