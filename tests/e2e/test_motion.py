"""Motions in a real cluster: Redistribute and Broadcast over shared memory, co-location
after a redistributing INSERT, motion statistics in EXPLAIN ANALYZE, and a segment killed
in the middle of a query (clear error, and the cluster answers the next query)."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections import Counter

import psycopg
import pytest
import ray

from tests.conftest import own_cluster


@pytest.fixture(scope="module")
def own_server(ray_session, tmp_path_factory):
    """A cluster of this module's own: a test here kills one of its segments."""
    yield from own_cluster(tmp_path_factory, "motion", 3)


@pytest.fixture(scope="module")
def data(own_server):
    with own_server.connect() as c:
        c.execute("CREATE TABLE mo_t (k bigint, v bigint, s text) DISTRIBUTED BY (k)")
        c.execute("INSERT INTO mo_t SELECT g, g % 30011, 'k' || (g % 7919) "
                  "FROM generate_series(1, 300000) AS g")
        c.execute("ANALYZE mo_t")
    return [(g, g % 30011, f"k{g % 7919}") for g in range(1, 300001)]


def plan_text(conn, sql: str) -> str:
    return "\n".join(r[0] for r in conn.execute(sql).fetchall())


def test_group_by_other_key_redistributes(own_server, data):
    with own_server.connect() as c:
        sql = "SELECT v, count(*), sum(k) FROM mo_t GROUP BY v"
        plan = plan_text(c, "EXPLAIN " + sql)
        assert "Redistribute Motion 3:3" in plan and "mode=partial" in plan
        got = {r[0]: (r[1], int(r[2])) for r in c.execute(sql).fetchall()}
    want: dict[int, list[int]] = {}
    for k, v, _ in data:
        e = want.setdefault(v, [0, 0])
        e[0] += 1
        e[1] += k
    assert got == {v: tuple(e) for v, e in want.items()}


def test_explain_analyze_reports_motion_traffic(own_server, data):
    with own_server.connect() as c:
        plan = plan_text(c, "EXPLAIN ANALYZE SELECT v, count(*) FROM mo_t GROUP BY v")
    redistribute = [line for line in plan.splitlines() if "Redistribute Motion" in line][0]
    m = re.search(r"frames=(\d+) sent_rows=(\d+) bytes=(\d+) transport=(\S+)", redistribute)
    assert m, redistribute
    frames, rows, nbytes, transport = int(m[1]), int(m[2]), int(m[3]), m[4]
    assert frames > 0 and rows > 0 and nbytes > 0
    assert transport == "shm"  # every segment is on this one node
    gather = [line for line in plan.splitlines() if "Gather Motion" in line][0]
    assert "transport=shm" in gather


def test_count_distinct_redistributes_by_argument(own_server, data):
    with own_server.connect() as c:
        sql = "SELECT count(DISTINCT s), count(DISTINCT v) FROM mo_t"
        assert c.execute(sql).fetchone() == (7919, 30011)
        plan = plan_text(c, "EXPLAIN SELECT count(DISTINCT s) FROM mo_t")
        assert "Redistribute Motion" in plan and "hash=[s]" in plan


def test_insert_select_lands_where_the_hash_says(own_server, data):
    with own_server.connect() as c:
        c.execute("CREATE TABLE mo_by_s (s text, k bigint) DISTRIBUTED BY (s)")
        try:
            plan = plan_text(c, "EXPLAIN SELECT s, count(*) FROM mo_by_s GROUP BY s")
            assert "Redistribute" not in plan  # co-located: one stage, no motion
            c.execute("INSERT INTO mo_by_s SELECT s, k FROM mo_t WHERE k % 3 = 0")
            got = dict(c.execute("SELECT s, count(*) FROM mo_by_s GROUP BY s").fetchall())
            want = Counter(s for k, _, s in data if k % 3 == 0)
            assert got == dict(want)
        finally:
            c.execute("DROP TABLE mo_by_s")


def test_replicated_target_gets_every_row_everywhere(own_server, data):
    with own_server.connect() as c:
        c.execute("CREATE TABLE mo_rep (k bigint) DISTRIBUTED REPLICATED")
        try:
            assert c.execute("INSERT INTO mo_rep SELECT k FROM mo_t WHERE k <= 1000"
                             ).statusmessage == "INSERT 0 1000"
            assert c.execute("SELECT count(*), sum(k) FROM mo_rep").fetchone() == (1000, 500500)
            counts = own_server.engine.cluster.call_all(
                "table_rows", own_server.engine.catalog.get_table("mo_rep").id)
            assert counts == [1000, 1000, 1000]
        finally:
            c.execute("DROP TABLE mo_rep")


def test_segment_killed_mid_query(own_server, data):
    """A read-only query that loses a segment before sending any row runs again once Ray
    has restarted the segment; it can still be cancelled; the cluster answers after."""
    cluster = own_server.engine.cluster
    victim = ray.get(cluster.actors[1].pid.remote())
    outcome = {}
    conn = own_server.connect()

    def run():
        try:
            outcome["rows"] = conn.execute(
                "SELECT sum(g % 7) FROM generate_series(1, 100000000000) AS g").fetchall()
        except psycopg.Error as e:
            outcome["error"] = e

    t = threading.Thread(target=run)
    t.start()
    time.sleep(2.0)
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while True:
        try:
            if ray.get(cluster.actors[1].pid.remote()) != victim:
                break
        except ray.exceptions.RayActorError:  # restarting
            pass
        assert time.monotonic() < deadline, "the segment was not restarted"
        time.sleep(0.2)
    time.sleep(3.0)
    assert t.is_alive() and not outcome, f"the query did not run again: {outcome}"
    assert sum(ray.get([a.running.remote() for a in cluster.actors])) > 0
    conn.cancel_safe()
    t.join(60)
    assert not t.is_alive(), "the retried query did not stop on cancel"
    assert outcome["error"].sqlstate == "57014", outcome
    conn.close()
    with own_server.connect() as c:
        assert c.execute("SELECT count(*), sum(k) FROM mo_t").fetchone() == (
            300000, sum(range(1, 300001)))
        got = c.execute("SELECT count(*) FROM (SELECT v, count(*) FROM mo_t GROUP BY v) q")
        assert got.fetchone() == (30011,)