"""Growing a multi-host cluster online: TPC-H on 4 segments over two hosts, a third host
joins, `raympp expand --segments 6` moves every table while clients query and insert.

Three network namespaces on this machine play three hosts (tests/netns_util.py): host 0
runs the Ray head and `raympp serve --segments 4` (segments 0 and 2 there, 1 and 3 on
host 1, a Ray worker), and TPC-H SF 0.1 is loaded (`raympp tpch load`). The answers of the
22 queries are recorded; then host 2 joins as a Ray worker, and the expansion must put
the new segments 4 and 5 there (the alive nodes with the fewest segments).

- test_expand_to_a_new_host_while_clients_query_and_insert: 4 clients run the TPC-H
  queries (all 22, each client starting at another one) and check every answer against
  the recorded one, and insert between queries: into a table of their own (mx_log) and,
  in one transaction, an order with two lineitems whose keys are above TPC-H's and whose
  dates, customer, part and supplier no query selects, so no answer changes. Meanwhile
  `raympp expand --segments 6` runs in host 0. Then: no query failed or answered
  differently, every acknowledged insert is there once, every table is on 6 segments,
  segments 4 and 5 are on host 2, each hashed table moved 1 - 4/6 of its rows (within
  3 %; a replicated one was copied whole to each new segment), and rows from host 2 reach
  the coordinator over TCP (EXPLAIN ANALYZE says tcp, host 2's interface counted at least
  the bytes of those rows going out).
- test_kill_9_of_the_coordinator_during_multihost_expansion_then_resume: kill -9 of the
  coordinator (the `coordinator.cli serve` child of raympp serve) once partsupp has
  moved (orders is then moving, lineitem waiting); `raympp serve` again in host 0 on the
  same data directory and Ray cluster: every table is on 4 or 6 segments with its exact
  rows and the queries answer as before; `raympp expand` (no --segments) resumes, and
  everything ends on 6 segments with the same answers.

Needs root and `ip netns` (skipped otherwise); excluded from the default run (-m netns).
Every process started in the namespaces is ended by PID at the end, and the namespaces are
deleted. Both take about 5 minutes on a busy 2-core machine (see deploy/README.md).
"""

from __future__ import annotations

import collections
import os
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from tests.e2e.netns_cluster import (PG_PORT, RAYMPP, REPO, NetnsServe, env, netns_hosts,
                                     run, scratch_dir, start_ray_head, start_ray_worker,
                                     wait_alive_nodes)
from tests.e2e import test_expansion
from tests.e2e.test_expansion import _placement, _spread
from tests.e2e.test_restart import _coordinator
from tests.e2e.test_tpch import generate_files
from workloads.tpch import compare, queries, schema

pytestmark = pytest.mark.netns

SF = 0.1
OLD, NEW = 4, 6
CLIENTS = 4
QUERIES = queries.NUMBERS  # all 22, before, during and after
QUERY_DIR = queries.default_dir()
LOAD_TIMEOUT = 900
EXPAND_TIMEOUT = 1200
# Inserted keys: above every TPC-H key (SF 0.1 orders end at 600,000).
KEY_BASE = 1_000_000_000
KEYS_PER_CLIENT = 10_000_000
NO_KEY = 0  # a customer, part and supplier that do not exist: no query's join keeps them
LOG = "mx_log"
TABLES = (*schema.NAMES, LOG)
ROWS_MOVED_TOLERANCE = 0.03


@pytest.fixture(scope="module")
def tpch_files(tmp_path_factory) -> Path:
    """SF 0.1 generated once for both tests, laid out as `raympp tpch load
    --data-dir-for-files` expects (DIR/sf0.1/<table>/), so the command reuses the files."""
    return generate_files(tmp_path_factory.mktemp("tpch-files"), SF)


class Cluster:
    """Three hosts, Ray on hosts 0 and 1, `raympp serve` on 4 segments with TPC-H loaded;
    `answers` are the queries' recorded rows, `counts` each table's rows."""

    def __init__(self, hosts, workdir: Path, files: Path):
        self.hosts, self.workdir = hosts, workdir
        start_ray_head(hosts, workdir)
        start_ray_worker(hosts, 1, workdir)
        assert wait_alive_nodes(hosts, workdir, 2) == list(hosts.addrs[:2])
        self.serve = NetnsServe(hosts, workdir, OLD)
        t0 = time.monotonic()
        self.cli("tpch", "load", "--sf", str(SF), "--data-dir-for-files", str(files),
                 timeout=LOAD_TIMEOUT)
        print(f"\nTPC-H SF {SF} loaded in {time.monotonic() - t0:.0f} s")
        with self.connect() as c:
            c.execute(f"CREATE TABLE {LOG} (k int8 NOT NULL, client int4) DISTRIBUTED BY (k)")
            c.execute(f"INSERT INTO {LOG} SELECT g, -1 FROM generate_series(1, 30000) g")
            self.counts = counts(c)
            self.answers = {}
            for n in QUERIES:
                t0 = time.monotonic()
                sql = queries.read(n, QUERY_DIR)
                self.answers[n] = (sql, c.execute(sql).fetchall(), queries.has_order_by(sql))
                print(f"Q{n}: {len(self.answers[n][1])} rows, {time.monotonic() - t0:.1f} s")

    def connect(self, **kw) -> psycopg.Connection:
        """A connection to the coordinator from host 0 (only the hosts reach it)."""
        with self.hosts.entered(0):
            return psycopg.connect(host=self.hosts.addrs[0], port=PG_PORT, user="raympp",
                                   dbname="raympp", autocommit=True, connect_timeout=30, **kw)

    def cli_argv(self, *args: str) -> list[str]:
        """`raympp <args>` in host 0, against this cluster's coordinator."""
        return self.hosts.exec_argv(0, [RAYMPP, *args, "--host", self.hosts.addrs[0],
                                        "--port", str(PG_PORT)])

    def cli(self, *args: str, timeout: float) -> subprocess.CompletedProcess:
        return run(self.cli_argv(*args), self.workdir, timeout, f"raympp {' '.join(args)}")

    def add_host_2(self) -> None:
        start_ray_worker(self.hosts, 2, self.workdir)
        assert wait_alive_nodes(self.hosts, self.workdir, 3) == list(self.hosts.addrs)

    def check_answers(self, c, numbers=QUERIES) -> None:
        for n in numbers:
            sql, want, ordered = self.answers[n]
            diff = compare.difference(c.execute(sql).fetchall(), want, ordered)
            assert diff is None, f"Q{n}: {diff}"


@pytest.fixture
def cluster(tpch_files):
    pid = os.getpid()
    # Tags and octet of their own (test_multihost.py uses str(pid) and pid % 254 + 1).
    with scratch_dir() as workdir, \
            netns_hosts(f"x{pid}", (pid + 127) % 254 + 1, 3) as hosts:
        c = None
        try:
            c = Cluster(hosts, workdir, tpch_files)
            yield c
        finally:
            if c is not None:
                c.serve.stop()
                print("\nraympp serve output (last lines):\n" + c.serve.output(30))


def counts(c) -> dict[str, int]:
    return {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


class Clients(test_expansion.Clients):
    """CLIENTS connections that each run the queries in turn (checking every answer) and
    insert after each query; `acknowledged` holds what the server acknowledged."""

    JOIN_SECONDS = 300  # a client ends the query and the insert it is in first

    def __init__(self, cluster: Cluster):  # not super().__init__: its threads are others
        self.cluster = cluster
        self.stop = threading.Event()
        self.expanding = threading.Event()
        self.wrong: list = []
        self.failed: list = []
        self.answered = collections.Counter()   # per query
        self.during = 0                         # answers while the expansion ran
        self.acknowledged = {"orders": [], "lineitem": [], LOG: []}
        self.threads = [threading.Thread(target=self._client, args=(i,), daemon=True)
                        for i in range(CLIENTS)]

    def _client(self, i: int) -> None:
        k = KEY_BASE + KEYS_PER_CLIENT * i
        try:
            c = self.cluster.connect()
        except Exception as e:  # noqa: BLE001 - recorded, the test fails
            self.failed.append(("connect", repr(e)))
            return
        with c:
            j = i * len(QUERIES) // CLIENTS
            while not self.stop.is_set():
                n = QUERIES[j % len(QUERIES)]
                sql, want, ordered = self.cluster.answers[n]
                expanding = self.expanding.is_set()
                try:
                    diff = compare.difference(c.execute(sql).fetchall(), want, ordered)
                    if diff is not None:
                        self.wrong.append((n, diff))
                    self.answered[n] += 1
                    self.during += expanding and self.expanding.is_set()
                except Exception as e:  # noqa: BLE001 - recorded, the test fails
                    self.failed.append((f"Q{n}", repr(e)))
                try:
                    self._insert(c, i, k, j)
                except Exception as e:  # noqa: BLE001 - recorded, the test fails
                    self.failed.append(("insert", repr(e)))
                j += 1
                k += 2

    def _insert(self, c, i: int, k: int, j: int) -> None:
        if j % 2:
            c.execute(f"INSERT INTO {LOG} VALUES (%s, %s), (%s, %s)", (k, i, k + 1, i))
            self.acknowledged[LOG] += [k, k + 1]
            return
        with c.transaction():
            c.execute("INSERT INTO orders (o_orderkey, o_custkey, o_orderstatus, "
                      "o_totalprice, o_orderdate, o_orderpriority, o_clerk, "
                      "o_shippriority, o_comment) VALUES (%s, %s, 'O', 2.00, "
                      "'2030-01-01', '1-URGENT', 'Clerk#expand', 0, 'expansion test')",
                      (k, NO_KEY))
            c.execute("INSERT INTO lineitem (l_orderkey, l_partkey, l_suppkey, l_linenumber, "
                      "l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, "
                      "l_linestatus, l_shipdate, l_commitdate, l_receiptdate, "
                      "l_shipinstruct, l_shipmode, l_comment) "
                      "SELECT %s, %s, %s, g, 1, 1.00, 0, 0, 'N', 'O', DATE '2030-01-02', "
                      "DATE '2030-01-02', DATE '2030-01-03', 'NONE', 'AIR', 'expansion test' "
                      "FROM generate_series(1, 2) g", (k, NO_KEY, NO_KEY))
        self.acknowledged["orders"].append(k)
        self.acknowledged["lineitem"] += [(k, 1), (k, 2)]


def check_inserts(c, acknowledged: dict) -> None:
    """Every acknowledged insert is there, once; nothing else is."""
    got = {
        "orders": [r[0] for r in c.execute(
            f"SELECT o_orderkey FROM orders WHERE o_orderkey >= {KEY_BASE}")],
        "lineitem": [tuple(r) for r in c.execute(
            f"SELECT l_orderkey, l_linenumber FROM lineitem WHERE l_orderkey >= {KEY_BASE}")],
        LOG: [r[0] for r in c.execute(f"SELECT k FROM {LOG} WHERE k >= {KEY_BASE}")],
    }
    for table, rows in got.items():
        twice = [r for r, n in collections.Counter(rows).items() if n > 1]
        assert not twice, f"{table}: rows there twice: {twice[:5]}"
        want = set(acknowledged[table])
        assert set(rows) == want, (f"{table}: lost {sorted(want - set(rows))[:5]}, "
                                   f"unexpected {sorted(set(rows) - want)[:5]}")


def replicated(c) -> set[str]:
    return {r[0] for r in c.execute(
        "SELECT c.relname FROM gp_distribution_policy p JOIN pg_class c "
        "ON c.oid = p.localoid WHERE p.policytype = 'r'")}


def check_new_segments_on_host_2(c, hosts) -> None:
    config = dict(c.execute("SELECT content, hostname FROM gp_segment_configuration "
                            "WHERE content >= 0").fetchall())
    assert sorted(config) == list(range(NEW)), config
    assert {config[4], config[5]} == {hosts.addrs[2]}, config
    assert all(config[s] in hosts.addrs[:2] for s in range(OLD)), config


def check_placed(c, expected: dict[str, int], on: dict[str, int]) -> None:
    """Each table has its exact rows and, when hashed, rows on every one of its segments
    and no other."""
    assert counts(c) == expected
    copies = replicated(c)
    for t in TABLES:
        if t not in copies:
            assert set(_spread(c, t)) == set(range(on[t])), (t, on[t], _spread(c, t))


def check_rows_moved(c) -> None:
    moved = {r[0]: r[1:] for r in c.execute(
        "SELECT table_name, status, old_segments, new_segments, rows_moved "
        "FROM raympp_expansion")}
    print(f"raympp_expansion: {moved}")
    assert set(moved) == set(TABLES), moved
    assert {m[:3] for m in moved.values()} == {("done", OLD, NEW)}, moved
    copies = replicated(c)
    now = counts(c)
    for t in TABLES:
        if t in copies:  # one whole copy for each new segment
            assert moved[t][3] == now[t] * (NEW - OLD), (t, moved[t], now[t])
            continue
        share = moved[t][3] / now[t]
        print(f"{t}: {moved[t][3]} of {now[t]} rows moved ({share:.4f}; 1 - {OLD}/{NEW} = "
              f"{1 - OLD / NEW:.4f})")
        assert abs(share - (1 - OLD / NEW)) < ROWS_MOVED_TOLERANCE, (t, moved[t], now[t])


def check_tcp_from_host_2(c, hosts) -> None:
    """Rows of segments 4 and 5 reach the coordinator over TCP: the Gather's transport
    includes tcp, and host 2 sent at least those rows' bytes over its interface."""
    where = "WHERE gp_segment_id >= 4"
    payload, rows = c.execute(f"SELECT sum(octet_length(l_comment)), count(*) FROM lineitem "
                              f"{where}").fetchone()
    sent = hosts.tx_bytes(2)
    plan = [r[0] for r in c.execute(f"EXPLAIN ANALYZE SELECT l_comment FROM lineitem {where}")]
    sent = hosts.tx_bytes(2) - sent
    text = "\n".join(plan)
    print(f"\nEXPLAIN ANALYZE (rows of the new segments, {rows} rows, {payload} bytes of "
          f"l_comment; host 2 sent {sent} bytes meanwhile):\n{text}")
    gather = [line for line in plan if "Gather Motion" in line]
    assert len(gather) == 1 and "tcp" in gather[0].split("transport=")[1], text
    assert f"sent_rows={rows}" in gather[0], text
    assert sent >= payload > 0, (sent, payload)
    # Between segments: a Redistribute by a column ANALYZE knows has many values.
    plan = [r[0] for r in c.execute(
        "EXPLAIN ANALYZE SELECT l_partkey, count(*) FROM lineitem GROUP BY l_partkey")]
    text = "\n".join(plan)
    print(f"\nEXPLAIN ANALYZE, lineitem grouped by l_partkey:\n{text}")
    motion = [line for line in plan if "Redistribute Motion" in line]
    assert len(motion) == 1 and "transport=shm+tcp" in motion[0], text


def test_expand_to_a_new_host_while_clients_query_and_insert(cluster):
    hosts = cluster.hosts
    cluster.add_host_2()
    with Clients(cluster) as clients:
        while sum(clients.answered.values()) < CLIENTS and not clients.failed:
            time.sleep(0.5)  # every client under way
        clients.expanding.set()
        t0 = time.monotonic()
        p = subprocess.run(cluster.cli_argv("expand", "--segments", str(NEW)),
                           capture_output=True, text=True, timeout=EXPAND_TIMEOUT,
                           env=env(cluster.workdir), cwd=REPO)
        took = time.monotonic() - t0
        clients.expanding.clear()
        print(f"\nraympp expand --segments {NEW} ({took:.0f} s, exit {p.returncode}):\n"
              f"{p.stdout}{p.stderr}")
        assert p.returncode == 0
        after = sum(clients.answered.values())
        while sum(clients.answered.values()) < after + CLIENTS and not clients.failed:
            time.sleep(0.5)  # each client answers on the grown cluster too
    print(f"answers: {sum(clients.answered.values())} ({clients.during} while expanding), "
          f"per query {dict(sorted(clients.answered.items()))}; inserts acknowledged: "
          f"{ {t: len(v) for t, v in clients.acknowledged.items()} }")
    assert not clients.failed, clients.failed[:5]
    assert not clients.wrong, clients.wrong[:5]
    assert clients.during >= CLIENTS, clients.during
    assert all(clients.acknowledged.values()), clients.acknowledged.keys()
    with cluster.connect() as c:
        check_inserts(c, clients.acknowledged)
        assert set(_placement(c).values()) == {NEW}, _placement(c)
        check_new_segments_on_host_2(c, hosts)
        expected = dict(cluster.counts)
        for table, rows in clients.acknowledged.items():
            expected[table] += len(rows)
        check_placed(c, expected, dict.fromkeys(TABLES, NEW))
        check_rows_moved(c)
        cluster.check_answers(c)
        check_tcp_from_host_2(c, hosts)


def test_kill_9_of_the_coordinator_during_multihost_expansion_then_resume(cluster):
    hosts = cluster.hosts
    cluster.add_host_2()
    expand = subprocess.Popen(cluster.cli_argv("expand", "--segments", str(NEW)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env(cluster.workdir), cwd=REPO)
    try:
        with cluster.connect() as c:
            deadline = time.monotonic() + EXPAND_TIMEOUT
            status = {}
            while time.monotonic() < deadline and status.get("partsupp") != "done":
                assert expand.poll() is None, expand.stdout.read()
                status = dict(c.execute("SELECT table_name, status FROM raympp_expansion"))
                time.sleep(0.05)
            assert status.get("partsupp") == "done", status
        print(f"\nkill -9 of the coordinator; raympp_expansion said {status}")
        _coordinator(cluster.serve).kill()
        cluster.serve.proc.wait(120)
        out, _ = expand.communicate(timeout=120)
        print(f"raympp expand (cut short, exit {expand.returncode}):\n{out}")
        assert expand.returncode != 0
    finally:
        if expand.poll() is None:
            expand.kill()
            expand.wait(30)
    cluster.serve = NetnsServe(hosts, cluster.workdir, OLD)
    with cluster.connect() as c:
        placement = _placement(c)
        print(f"after the restart: {placement}")
        assert set(placement.values()) <= {OLD, NEW}, placement
        assert placement["partsupp"] == NEW and placement["lineitem"] == OLD, placement
        check_new_segments_on_host_2(c, hosts)
        check_placed(c, cluster.counts, placement)
        cluster.check_answers(c)
    t0 = time.monotonic()
    p = cluster.cli("expand", timeout=EXPAND_TIMEOUT)  # resumes
    print(f"raympp expand (resumed, {time.monotonic() - t0:.0f} s):\n{p.stdout}")
    with cluster.connect() as c:
        assert set(_placement(c).values()) == {NEW}, _placement(c)
        check_new_segments_on_host_2(c, hosts)
        check_placed(c, cluster.counts, dict.fromkeys(TABLES, NEW))
        cluster.check_answers(c)
