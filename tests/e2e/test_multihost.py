"""raympp on a two-node Ray cluster: two network namespaces on this machine play two hosts.

Host 0 runs the Ray head (deploy/ray_head.sh), `raympp serve --ray-address` with 4
segments and the psycopg client; host 1 runs a Ray worker (deploy/ray_worker.sh). The
segments are placed round-robin over the two nodes, so a Redistribute Motion moves rows both
between segments of one node (shared memory) and between the nodes (TCP over the veth), and
so does the Gather to the coordinator: EXPLAIN ANALYZE must report transport=shm+tcp for
both, and the answers must be right.

Needs root and `ip netns` (skipped otherwise); excluded from the default run (-m netns).
Only loopback and the hosts' addresses 10.213.<octet>.1/.2 are used (tests/netns_util.py
joins them with a bridge in a third namespace); the namespaces have no route anywhere
else. Every process started in the namespaces is ended by PID at the end.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess

import pytest

from tests.e2e.netns_cluster import (PG_PORT, PYTHON, REPO, NetnsServe, env, netns_hosts,
                                     scratch_dir, start_ray_head, start_ray_worker,
                                     wait_alive_nodes)

pytestmark = pytest.mark.netns

N_SEGMENTS = 4
N_ROWS = 200_000
N_GROUPS = 50_000
CLIENT_TIMEOUT = 600


@pytest.fixture
def workdir():
    with scratch_dir() as d:
        yield d


@pytest.fixture
def hosts(workdir):
    """Two hosts; torn down (every process in them ended) before workdir is removed."""
    pid = os.getpid()
    with netns_hosts(str(pid), pid % 254 + 1, 2) as pair:
        yield pair


# The client: runs inside host 0, prints one JSON object.
CLIENT = r"""
import json, sys
import psycopg
cfg = json.loads(sys.argv[1])
rows, groups = int(cfg["rows"]), int(cfg["groups"])
out = {}
with psycopg.connect(host=cfg["host"], port=cfg["port"], user="raympp", dbname="raympp",
                     autocommit=True, connect_timeout=30) as c:
    c.execute("CREATE TABLE mh_t (id bigint NOT NULL, k bigint, v bigint) DISTRIBUTED BY (id)")
    c.execute(f"INSERT INTO mh_t SELECT g, ((g * 7919) % 1000003) % {groups}, "
              f"(g * 7919) % 1000003 FROM generate_series(1, {rows}) AS g")
    out["count"] = c.execute("SELECT count(*) FROM mh_t").fetchone()[0]
    # Grouped by an expression (no statistics): the partial aggregates are estimated few
    # and gathered to the coordinator, from segments on both nodes.
    q1 = f"SELECT v % {groups} AS g, count(*) FROM mh_t GROUP BY 1"
    out["by_expr"] = [[int(g), int(n)] for g, n in c.execute(q1).fetchall()]
    out["explain_by_expr"] = [r[0] for r in c.execute("EXPLAIN ANALYZE " + q1).fetchall()]
    # Grouped by a column ANALYZE knows has many values: the partial aggregates are
    # redistributed by the group key between the segments, and finished there.
    c.execute("ANALYZE mh_t")
    q2 = "SELECT k, count(*), sum(v) FROM mh_t GROUP BY k"
    out["by_col"] = [[int(g), int(n), int(s)] for g, n, s in c.execute(q2).fetchall()]
    out["explain_by_col"] = [r[0] for r in c.execute("EXPLAIN ANALYZE " + q2).fetchall()]
print(json.dumps(out))
"""


def _start_ray(hosts, workdir) -> None:
    start_ray_head(hosts, workdir)
    start_ray_worker(hosts, 1, workdir)
    assert wait_alive_nodes(hosts, workdir, 2) == list(hosts.addrs)


def test_two_hosts_redistribute_over_shm_and_tcp(hosts, workdir):
    _start_ray(hosts, workdir)
    serve = NetnsServe(hosts, workdir, N_SEGMENTS)
    try:
        cfg = {"host": hosts.addrs[0], "port": PG_PORT, "rows": N_ROWS, "groups": N_GROUPS}
        p = subprocess.run(hosts.exec_argv(0, [PYTHON, "-c", CLIENT, json.dumps(cfg)]),
                           capture_output=True, text=True, timeout=CLIENT_TIMEOUT,
                           env=env(workdir), cwd=REPO)
        assert p.returncode == 0, (f"client failed ({p.returncode}):\n{p.stderr}\n"
                                   f"serve log:\n" + serve.output())
        out = json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        serve.stop()
    print("\nraympp serve output:\n" + serve.output(20))
    print(f"raympp serve exit status after SIGTERM: {serve.proc.returncode}")

    by_expr = "\n".join(out["explain_by_expr"])
    by_col = "\n".join(out["explain_by_col"])
    print("\nEXPLAIN ANALYZE, grouped by an expression:\n" + by_expr)
    print("\nEXPLAIN ANALYZE, grouped by an analyzed column:\n" + by_col)
    assert out["count"] == N_ROWS

    values = [(g * 7919) % 1000003 for g in range(1, N_ROWS + 1)]
    counts = collections.Counter(v % N_GROUPS for v in values)
    sums: dict[int, int] = collections.defaultdict(int)
    for v in values:
        sums[v % N_GROUPS] += v
    got = {g: n for g, n in out["by_expr"]}
    assert len(out["by_expr"]) == len(got) == len(counts) == N_GROUPS
    assert got == dict(counts)
    got = {g: (n, s) for g, n, s in out["by_col"]}
    assert len(out["by_col"]) == len(got) == N_GROUPS
    assert got == {g: (counts[g], sums[g]) for g in counts}

    # Segments 0 and 2 are on node a with the coordinator, 1 and 3 on node b: the Gather
    # to the coordinator gets rows over shared memory and over TCP ...
    gather = [line for line in out["explain_by_expr"] if "Gather Motion 4:1" in line]
    assert len(gather) == 1 and "transport=shm+tcp" in gather[0], by_expr
    # ... and so does every segment's Redistribute: to its neighbour on the same node over
    # shared memory, to the other node's segments over TCP.
    redistribute = [line for line in out["explain_by_col"] if "Redistribute Motion" in line]
    assert len(redistribute) == 1, by_col
    assert "transport=shm+tcp" in redistribute[0], by_col
    m = re.search(r"sent_rows=(\d+)", redistribute[0])
    assert m and int(m.group(1)) >= N_GROUPS, by_col
