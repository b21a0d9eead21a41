"""Real faults against a running cluster: kill -9 of a segment inside a transaction, during
COPY and during INSERT ... SELECT; statement_timeout; queries sent while a segment restarts.

Each time the client sees an error or the whole write, count(*) is exactly the rows that
were acknowledged, and afterwards (without restarting the coordinator) queries that move
rows between segments answer correctly.
"""

from __future__ import annotations

import io
import os
import threading
import time

import psycopg
import pytest
import ray
from psycopg import errors

from segment.storage.shard_store import MERGE_MIN_CHUNKS
from tests.conftest import kill_segment, own_cluster, wait_restarted



@pytest.fixture(scope="module")
def own_server(ray_session, tmp_path_factory):
    """A cluster of this module's own: its tests kill its segments."""
    yield from own_cluster(tmp_path_factory, "faults", 2)


@pytest.fixture(scope="module")
def base(own_server):
    """A 200k-row table both segments hold part of, for the queries after each fault."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_base (k bigint, v bigint, s text) DISTRIBUTED BY (k)")
        c.execute("INSERT INTO f_base SELECT g, g % 5003, 's' || (g % 70001) "
                  "FROM generate_series(1, 200000) AS g")
    return 200000


def count(server, table: str) -> int:
    with server.connect() as c:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def assert_no_orphan_chunks(server, table: str) -> None:
    """Every chunk file of the table on every segment is one its manifest lists: the writes
    of the killed process were removed when its successor started, the others' by abort."""
    from segment.storage import manifest

    table_id = server.engine.catalog.get_table(table).id
    deadline = time.monotonic() + 30
    while True:
        orphans = []
        for seg in range(server.n_segments):
            d = os.path.join(server.data_dir, f"seg{seg}", "tables", str(table_id))
            listed = set(manifest.read_manifest(d).files)
            orphans += [f for f in os.listdir(d) if f.startswith("chunk-") and f not in listed]
        if not orphans or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # an abort may still be deleting
    assert not orphans, orphans


def check_cluster_answers(server, base_rows: int) -> None:
    """A redistributing join and a many-group GROUP BY, right after a fault."""
    with server.connect() as c:
        plan = "\n".join(r[0] for r in c.execute(
            "EXPLAIN SELECT a.v, count(*) FROM f_base a JOIN f_base b ON a.v = b.k "
            "GROUP BY a.v").fetchall())
        assert "Redistribute" in plan
        got = c.execute("SELECT count(*), sum(b.k) FROM f_base a JOIN f_base b "
                        "ON a.v = b.k").fetchone()
        # a.v in 0..5002; b.k = a.v matches for a.v >= 1
        want_rows = sum(1 for g in range(1, base_rows + 1) if g % 5003 >= 1)
        want_sum = sum(g % 5003 for g in range(1, base_rows + 1))
        assert got == (want_rows, want_sum)
        groups = c.execute("SELECT count(*) FROM (SELECT s, count(*) FROM f_base "
                           "GROUP BY s) q").fetchone()[0]
        assert groups == 70001


def test_kill_inside_explicit_transaction_loses_it_whole(own_server, base):
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_txn (k bigint, v text) DISTRIBUTED BY (k)")
        c.execute("INSERT INTO f_txn SELECT g, 'before' FROM generate_series(1, 1000) g")
    with own_server.connect(autocommit=False) as tx:
        tx.execute("INSERT INTO f_txn SELECT g, 'in txn' FROM generate_series(1001, 11000) g")
        rows = io.StringIO("".join(f"{i}\tcopied\n" for i in range(20001, 25001)))
        with tx.cursor().copy("COPY f_txn FROM STDIN") as cp:
            cp.write(rows.getvalue())
        pid = kill_segment(own_server, 1)
        wait_restarted(own_server, 1, pid)
        with pytest.raises(psycopg.Error) as failed:
            tx.execute("SELECT count(*) FROM f_txn")
            tx.commit()
        assert failed.value.sqlstate in ("40001", "25P02"), failed.value
        tx.rollback()
    assert count(own_server, "f_txn") == 1000
    check_cluster_answers(own_server, base)


def test_kill_after_reading_pending_rows_then_committed_rows_only(own_server, base):
    """The transaction reads its own pending chunks (the surviving segment keeps them
    mapped, segment/storage/mapped_chunks.py), a segment is killed, the commit fails:
    no row of it is visible afterwards, its chunk files are deleted on both segments, and
    a later transaction's rows read right."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_mapped (k bigint, v text) DISTRIBUTED BY (k)")
        c.execute("INSERT INTO f_mapped SELECT g, 'committed' FROM generate_series(1, 500) g")
        assert c.execute("SELECT count(*), max(v) FROM f_mapped").fetchone() == (500, "committed")
    with own_server.connect(autocommit=False) as tx:
        tx.execute("INSERT INTO f_mapped SELECT g, 'lost' FROM generate_series(501, 5500) g")
        assert tx.execute("SELECT count(*), min(v) FROM f_mapped").fetchone() == (5500, "committed")
        pid = kill_segment(own_server, 1)
        wait_restarted(own_server, 1, pid)
        with pytest.raises(psycopg.Error) as failed:
            tx.commit()
        assert failed.value.sqlstate == "40001", failed.value
    with own_server.connect() as c:
        assert c.execute("SELECT count(*), min(v), max(v) FROM f_mapped").fetchone() == (
            500, "committed", "committed")
        c.execute("INSERT INTO f_mapped SELECT g, 'after' FROM generate_series(501, 1500) g")
        assert c.execute("SELECT v, count(*) FROM f_mapped GROUP BY v ORDER BY v").fetchall() \
            == [("after", 1000), ("committed", 500)]
    assert_no_orphan_chunks(own_server, "f_mapped")
    check_cluster_answers(own_server, base)


def test_kill_before_commit_fails_the_commit(own_server, base):
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_commit (k bigint) DISTRIBUTED BY (k)")
    with own_server.connect(autocommit=False) as tx:
        tx.execute("INSERT INTO f_commit SELECT g FROM generate_series(1, 10000) g")
        pid = kill_segment(own_server, 0)
        wait_restarted(own_server, 0, pid)
        with pytest.raises(psycopg.Error) as failed:
            tx.commit()
        assert failed.value.sqlstate == "40001", failed.value
    assert count(own_server, "f_commit") == 0
    # The same transaction again, with nothing killed, commits whole.
    with own_server.connect(autocommit=False) as tx:
        tx.execute("INSERT INTO f_commit SELECT g FROM generate_series(1, 10000) g")
        tx.commit()
    assert count(own_server, "f_commit") == 10000
    check_cluster_answers(own_server, base)


def test_kill_after_a_savepoint_fails_rollback_to_and_loses_the_block(own_server, base):
    """ROLLBACK TO SAVEPOINT is a write on the segments (they drop the rows written since
    its mark): after a kill -9 it fails with 40001, as any write, and nothing of the block
    is kept; without a kill the rows before the savepoint commit."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_savepoint (k bigint) DISTRIBUTED BY (k)")
    with own_server.connect(autocommit=False) as tx:
        tx.execute("INSERT INTO f_savepoint SELECT g FROM generate_series(1, 5000) g")
        tx.execute("SAVEPOINT s")
        tx.execute("INSERT INTO f_savepoint SELECT g FROM generate_series(5001, 9000) g")
        pid = kill_segment(own_server, 1)
        wait_restarted(own_server, 1, pid)
        with pytest.raises(psycopg.Error) as failed:
            tx.execute("ROLLBACK TO s")
            tx.commit()
        assert failed.value.sqlstate in ("40001", "25P02"), failed.value
        tx.rollback()
    assert count(own_server, "f_savepoint") == 0
    assert_no_orphan_chunks(own_server, "f_savepoint")
    with own_server.connect(autocommit=False) as tx:
        tx.execute("INSERT INTO f_savepoint SELECT g FROM generate_series(1, 5000) g")
        tx.execute("SAVEPOINT s")
        tx.execute("INSERT INTO f_savepoint SELECT g FROM generate_series(5001, 9000) g")
        tx.execute("ROLLBACK TO s")
        tx.commit()
    assert count(own_server, "f_savepoint") == 5000
    assert_no_orphan_chunks(own_server, "f_savepoint")
    check_cluster_answers(own_server, base)


def _copy_rows(n: int, start: int = 0):
    block = 100_000
    for lo in range(start, start + n, block):
        hi = min(lo + block, start + n)
        yield "".join(f"{i},row {i}\n" for i in range(lo, hi))


# One kill point by default; the early and late ones on demand (-m heavy): the default
# run stays well under 15 minutes.
@pytest.mark.parametrize("kill_after", [pytest.param(0.5, marks=pytest.mark.heavy), 2.0,
                                        pytest.param(4.0, marks=pytest.mark.heavy)])
def test_kill_during_autocommit_copy(own_server, base, kill_after):
    """A COPY of several million rows, with a segment killed early, midway and late."""
    ROWS = 6_000_000
    table = f"f_copy_{int(kill_after * 10)}"
    with own_server.connect() as c:
        c.execute(f"CREATE TABLE {table} (k bigint, v text) DISTRIBUTED BY (k)")
    acknowledged = 0
    outcome = {}

    def load():
        try:
            with own_server.connect() as c:
                cur = c.cursor()
                with cur.copy(f"COPY {table} FROM STDIN WITH (FORMAT csv)") as cp:
                    for chunk in _copy_rows(ROWS):
                        cp.write(chunk)
                outcome["tag"] = cur.statusmessage
        except psycopg.Error as e:
            outcome["error"] = e

    t = threading.Thread(target=load)
    t.start()
    time.sleep(kill_after)
    pid = kill_segment(own_server, 1)
    t.join(300)
    assert not t.is_alive()
    wait_restarted(own_server, 1, pid)
    print("copy outcome", kill_after, outcome)
    if "tag" in outcome:
        assert outcome["tag"] == f"COPY {ROWS}"
        acknowledged = ROWS
    else:
        assert outcome["error"].sqlstate in ("40001", "58000"), outcome["error"]
    assert count(own_server, table) == acknowledged
    assert_no_orphan_chunks(own_server, table)
    check_cluster_answers(own_server, base)


def _statements_under_a_kill(server, seg: int, after_s: float, statement, times: int = 20):
    """Run `statement(conn)` `times` times back to back on one connection while segment
    `seg` is killed -9 `after_s` seconds in; (statements acknowledged, their results,
    the error that stopped the rest or None). The error, if any, is a lost transaction."""
    outcome = {"done": 0, "results": [], "error": None}

    def run():
        try:
            with server.connect() as c:
                for _ in range(times):
                    outcome["results"].append(statement(c))
                    outcome["done"] += 1
        except psycopg.Error as e:
            outcome["error"] = e

    t = threading.Thread(target=run)
    t.start()
    time.sleep(after_s)
    pid = kill_segment(server, seg)
    t.join(600)
    assert not t.is_alive()
    wait_restarted(server, seg, pid)
    print("outcome", outcome["done"], outcome["error"])
    assert outcome["error"] is not None or outcome["done"] == times
    if outcome["error"] is not None:
        assert outcome["error"].sqlstate in ("40001", "58000", "58030"), outcome["error"]
    return outcome["done"], outcome["results"], outcome["error"]


def test_kill_during_insert_select(own_server, base):
    """2M-row INSERT ... SELECTs, back to back, with a segment killed under one of them."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_ins (k bigint, v bigint, s text) DISTRIBUTED BY (v)")
        c.execute("INSERT INTO f_ins SELECT * FROM f_base WHERE k <= 1000")
    sql = "INSERT INTO f_ins SELECT k, v, s FROM f_base CROSS JOIN generate_series(1, 10) g"
    done, _, _ = _statements_under_a_kill(own_server, 0, 3.0, lambda c: c.execute(sql))
    assert count(own_server, "f_ins") == 1000 + done * base * 10
    check_cluster_answers(own_server, base)


def test_kill_during_insert_select_with_an_initplan(own_server, base):
    """INSERT ... SELECT whose SELECT list holds an uncorrelated scalar subquery (run once,
    before the insert, as an InitPlan), back to back with a segment killed under one: the
    table holds exactly the acknowledged statements' rows, each with the subquery's value
    (it once inserted NULL)."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_init (k bigint, top bigint) DISTRIBUTED BY (k)")
    sql = "INSERT INTO f_init SELECT k, (SELECT max(k) FROM f_base) FROM f_base"
    done, _, _ = _statements_under_a_kill(own_server, 1, 1.5, lambda c: c.execute(sql))
    assert count(own_server, "f_init") == done * base
    with own_server.connect() as c:
        assert c.execute("SELECT count(*) FROM f_init WHERE top IS DISTINCT FROM "
                         "(SELECT max(k) FROM f_base)").fetchone()[0] == 0
    check_cluster_answers(own_server, base)


def test_kill_during_small_inserts_and_their_merges(own_server, base):
    """One-row autocommit INSERTs back to back (each commits chunks of its own, which the
    background compaction merges 16 at a time), with a segment killed -9 under them: the
    table holds each acknowledged row exactly once and not the one that failed, the
    killed segment's successor merges again, and no chunk is left unlisted."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_small (k bigint, s text) DISTRIBUTED BY (k)")
    sent = iter(range(10**6))

    def insert(c):
        k = next(sent)
        c.execute(f"INSERT INTO f_small VALUES ({k}, 'r{k}')")
        return k

    done, acknowledged, error = _statements_under_a_kill(own_server, 1, 1.5, insert,
                                                         times=400)
    assert done == len(acknowledged) and acknowledged == list(range(done))
    with own_server.connect() as c:  # more after the restart: the merges go on
        for k in range(10**6, 10**6 + 80):
            c.execute(f"INSERT INTO f_small VALUES ({k}, 'r{k}')")
        want = acknowledged + list(range(10**6, 10**6 + 80))
        # Unmerged, every row is a chunk of its own. Merged, each of the 2 segments holds
        # fewer than MERGE_MIN_CHUNKS small chunks besides the merged ones (whatever the
        # share of the rows the kill left before it: a loaded machine gets fewer done).
        merged = 2 * (MERGE_MIN_CHUNKS - 1) + len(want) // MERGE_MIN_CHUNKS
        deadline = time.monotonic() + 30
        while True:
            rows = c.execute("SELECT k, s FROM f_small ORDER BY k").fetchall()
            plan = [r[0] for r in c.execute("EXPLAIN ANALYZE SELECT count(*) FROM f_small")]
            [scan] = [p for p in plan if "Chunk Statistics Scan" in p]
            chunks = int(scan.split("actual rows=")[1].split()[0])
            if chunks <= merged or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert rows == [(k, f"r{k}") for k in want]  # each once; the failed one not at all
    assert chunks <= merged < len(want)  # merged, on the restarted segment too
    assert_no_orphan_chunks(own_server, "f_small")
    check_cluster_answers(own_server, base)


@pytest.mark.heavy
def test_kill_during_insert_returning(own_server, base):
    """INSERT ... SELECT ... RETURNING (every row through the coordinator), back to back,
    with a segment killed under one: each acknowledged statement returned exactly its
    rows, and the table holds exactly the acknowledged ones."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_ret (k bigint, v bigint) DISTRIBUTED BY (k)")
        c.execute("INSERT INTO f_ret SELECT k, v FROM f_base WHERE k <= 1000")
    sql = "INSERT INTO f_ret SELECT k, v FROM f_base RETURNING k"

    def insert(c):
        rows = c.execute(sql).fetchall()
        return len(rows), sum(r[0] for r in rows)

    done, returned, _ = _statements_under_a_kill(own_server, 1, 2.0, insert)
    assert returned == [(base, base * (base + 1) // 2)] * done
    assert count(own_server, "f_ret") == 1000 + done * base
    assert_no_orphan_chunks(own_server, "f_ret")
    check_cluster_answers(own_server, base)


def test_queries_during_a_restart_wait_and_answer(own_server, base):
    pid = kill_segment(own_server, 1)
    results, failures = [], []

    def ask():
        try:
            with own_server.connect() as c:
                results.append(c.execute("SELECT v % 10, count(*) FROM f_base GROUP BY 1 "
                                         "ORDER BY 1").fetchall())
        except psycopg.Error as e:
            failures.append(e)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
        time.sleep(0.3)
    for t in threads:
        t.join(120)
    wait_restarted(own_server, 1, pid)
    assert not failures, failures
    want = {}
    for g in range(1, base + 1):
        want[(g % 5003) % 10] = want.get((g % 5003) % 10, 0) + 1
    assert all(r == sorted(want.items()) for r in results) and len(results) == 4


def test_statement_timeout_stops_segments(own_server, base):
    with own_server.connect() as c:
        c.execute("SET statement_timeout = '1s'")
        assert c.execute("SHOW statement_timeout").fetchone() == ("1s",)
        started = time.monotonic()
        with pytest.raises(errors.QueryCanceled) as canceled:
            c.execute("SELECT sum(g % 7) FROM generate_series(1, 100000000000) AS g")
        took = time.monotonic() - started
        assert "statement timeout" in str(canceled.value)
        assert 0.9 < took < 2.5, took
        assert c.execute("SELECT 1").fetchone() == (1,)  # the session goes on
        c.execute("RESET statement_timeout")
        assert c.execute("SELECT count(*) FROM f_base").fetchone() == (base,)
    deadline = time.monotonic() + 5
    actors = own_server.engine.cluster.actors
    while sum(ray.get([a.running.remote() for a in actors])) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sum(ray.get([a.running.remote() for a in actors])) == 0


def _hang_up_clients(server, n: int, sql: str) -> float:
    """n clients send `sql` and close their sockets while it runs; returns the seconds
    until the segments were idle again after the last one left."""
    from coordinator.pgwire import codec
    from tests.e2e.test_cancel import _raw_session

    actors = server.engine.cluster.actors
    socks = [_raw_session(server) for _ in range(n)]
    for s in socks:
        s.sendall(codec.Query(sql).encode())
    deadline = time.monotonic() + 60
    while not sum(ray.get([a.running.remote() for a in actors])):
        assert time.monotonic() < deadline, "the queries did not start"
        time.sleep(0.05)
    time.sleep(1.0)
    for s in socks:
        s.close()
    left = time.monotonic()
    while sum(ray.get([a.running.remote() for a in actors])):
        assert time.monotonic() - left < 60, "segments still busy a minute after hang-up"
        time.sleep(0.1)
    return time.monotonic() - left


LONG_JOIN = ("SELECT count(*) FROM f_base a JOIN f_base b ON a.v = b.v "
             "CROSS JOIN generate_series(1, 100000) g")


def test_clients_that_hang_up_leave_segments_idle(own_server, base):
    took = _hang_up_clients(own_server, 30, LONG_JOIN)
    print(f"30 clients hung up: segments idle {took:.2f} s later")
    assert took < 5.0, took
    check_cluster_answers(own_server, base)


@pytest.mark.heavy
def test_200_clients_that_hang_up_leave_segments_idle(own_server, base):
    took = _hang_up_clients(own_server, 200, LONG_JOIN)
    print(f"200 clients hung up: segments idle {took:.2f} s later")
    assert took < 10.0, took
    check_cluster_answers(own_server, base)


@pytest.mark.heavy
def test_kills_during_many_small_commits(own_server, base):
    """Autocommit INSERTs back to back while segments are killed at whatever point they are
    (writing, preparing, publishing): the table holds exactly the acknowledged rows."""
    with own_server.connect() as c:
        c.execute("CREATE TABLE f_small (k bigint, w int) DISTRIBUTED BY (k)")
    stop = threading.Event()
    acked, failed = [0], []

    def writer(w: int):
        n = 0
        with own_server.connect() as c:
            while not stop.is_set():
                try:
                    c.execute(f"INSERT INTO f_small SELECT g, {w} FROM "
                              f"generate_series({n * 100 + 1}, {n * 100 + 100}) g")
                    acked[0] += 100
                except psycopg.Error as e:
                    failed.append(e.sqlstate)
                n += 1

    _write_while_killing(own_server, writer, 3, ((0, 1.0), (1, 1.7), (0, 2.3)), stop)
    print("small commits", acked[0], "rows acknowledged; failures", failed)
    assert set(failed) <= {"40001", "58000", "58030"}, failed
    assert acked[0] > 0
    assert count(own_server, "f_small") == acked[0]
    check_cluster_answers(own_server, base)


def _write_while_killing(server, writer, writers: int, kills, stop: threading.Event) -> None:
    """Run `writer(w)` in `writers` threads while each (segment, delay) of `kills` kills
    that segment for real after the delay and waits for its restart; then set `stop` and
    wait for the writers."""
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for seg, delay in kills:
        time.sleep(delay)
        pid = kill_segment(server, seg)
        wait_restarted(server, seg, pid)
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join(120)


@pytest.mark.heavy
def test_kills_during_loads_that_analyze_after_commit(own_server, base):
    """Autocommit INSERTs, each into a new table without statistics (so each commit is
    followed by its automatic ANALYZE, coordinator/autostats.py), while segments are
    killed: an acknowledged INSERT's rows are all there, a failed one left none, whether
    the kill hit the write, the commit or the ANALYZE after it."""
    stop = threading.Event()
    outcome: dict[str, bool] = {}  # table -> acknowledged
    failed = []

    def writer(w: int):
        n = 0
        with own_server.connect() as c:
            while not stop.is_set():
                t = f"f_auto_{w}_{n}"
                n += 1
                try:
                    c.execute(f"CREATE TABLE {t} (k bigint, v int) DISTRIBUTED BY (k)")
                except psycopg.Error as e:
                    failed.append(e.sqlstate)
                    continue
                try:
                    c.execute(f"INSERT INTO {t} SELECT g, g % 7 FROM generate_series(1, 5000) g")
                    outcome[t] = True
                except psycopg.Error as e:
                    failed.append(e.sqlstate)
                    outcome[t] = False

    _write_while_killing(own_server, writer, 2, ((1, 1.0), (0, 1.5)), stop)
    assert set(failed) <= {"40001", "58000", "58030"}, failed
    assert any(outcome.values())
    for table, acked in outcome.items():
        assert count(own_server, table) == (5000 if acked else 0), table
    check_cluster_answers(own_server, base)
