"""raympp on a two-node Ray cluster: two network namespaces on this machine play two hosts.

Namespace a runs the Ray head (deploy/ray_head.sh), `raympp serve --ray-address` with 4
segments and the psycopg client; namespace b runs a Ray worker (deploy/ray_worker.sh). The
segments are placed round-robin over the two nodes, so a Redistribute Motion moves rows both
between segments of one node (shared memory) and between the nodes (TCP over the veth), and
so does the Gather to the coordinator: EXPLAIN ANALYZE must report transport=shm+tcp for
both, and the answers must be right.

Needs root and `ip netns` (skipped otherwise); excluded from the default run (-m netns).
Only loopback and the two veth addresses 10.213.<octet>.1/.2 are used; the namespaces have
no route anywhere else. Every process started in the namespaces is ended by PID at the end.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from netns_util import NetnsPair, netns_unavailable_reason  # noqa: E402

pytestmark = pytest.mark.netns

REPO = Path(__file__).resolve().parents[2]
PYTHON = str(REPO / ".venv" / "bin" / "python")
RAYMPP = str(REPO / ".venv" / "bin" / "raympp")
RAY_PORT = 6379        # inside the namespaces: nothing else listens there
PG_PORT = 5433
N_SEGMENTS = 4
N_ROWS = 200_000
N_GROUPS = 50_000
RAY_START_TIMEOUT = 180
SERVE_START_TIMEOUT = 300
CLIENT_TIMEOUT = 600


def _env(workdir: Path) -> dict[str, str]:
    """This environment without anything that points Ray or libpq elsewhere; usage stats
    off; Ray token authentication with the test's own token (workdir/auth_token)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RAY_", "PG")) and k not in ("http_proxy", "https_proxy",
                                                              "HTTP_PROXY", "HTTPS_PROXY")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    env["RAY_AUTH_MODE"] = "token"
    env["RAY_AUTH_TOKEN_PATH"] = str(workdir / "auth_token")
    env["RAYMPP_NUM_CPUS"] = "2"
    env["NO_PROXY"] = env["no_proxy"] = "*"
    return env


def _run(argv, workdir, timeout, what) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                       env=_env(workdir), cwd=REPO)
    assert p.returncode == 0, (f"{what} failed ({p.returncode}):\nstdout:\n{p.stdout}\n"
                               f"stderr:\n{p.stderr}")
    return p


@pytest.fixture
def hosts(workdir):
    """Two namespaces; torn down (every process in them ended) before workdir is removed."""
    reason = netns_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    pid = os.getpid()
    pair = NetnsPair(str(pid), pid % 254 + 1)
    try:
        pair.create()
        yield pair
    finally:
        killed = pair.destroy()
        if any(killed.values()):
            print(f"\nprocesses killed (no exit on SIGTERM within the grace time): {killed}")


@pytest.fixture
def workdir():
    # Short: Ray's Unix socket paths live under its --temp-dir.
    d = tempfile.mkdtemp(prefix="rmpp", dir="/tmp")
    try:
        token = Path(d) / "auth_token"
        token.touch(mode=0o600)
        token.write_text(secrets.token_hex(32))
        yield Path(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# The client: runs inside namespace a, prints one JSON object.
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


def _start_ray(hosts: NetnsPair, workdir: Path) -> None:
    head, worker = hosts.addrs
    _run(hosts.exec_argv(0, ["bash", str(REPO / "deploy" / "ray_head.sh"), head,
                             str(RAY_PORT), f"--temp-dir={workdir / 'ra'}",
                             "--object-store-memory=300000000"]),
         workdir, RAY_START_TIMEOUT, "ray head in namespace a")
    _run(hosts.exec_argv(1, ["bash", str(REPO / "deploy" / "ray_worker.sh"),
                             f"{head}:{RAY_PORT}", worker, f"--temp-dir={workdir / 'rb'}",
                             "--object-store-memory=300000000"]),
         workdir, RAY_START_TIMEOUT, "ray worker in namespace b")
    # Wait until both nodes are alive in the cluster (placement uses the alive nodes).
    probe = ("import ray, sys, time\n"
             f"ray.init(address='{head}:{RAY_PORT}', log_to_driver=False)\n"
             "deadline = time.time() + 120\n"
             "while time.time() < deadline:\n"
             "    alive = sorted(n['NodeManagerAddress'] for n in ray.nodes() if n['Alive'])\n"
             "    if len(alive) >= 2: break\n"
             "    time.sleep(0.5)\n"
             "print(' '.join(alive))\n")
    p = _run(hosts.exec_argv(0, [PYTHON, "-c", probe]), workdir, RAY_START_TIMEOUT,
             "node probe")
    assert p.stdout.split() == [head, worker], p.stdout


def _start_serve(hosts: NetnsPair, workdir: Path) -> tuple[subprocess.Popen, list[str]]:
    head = hosts.addrs[0]
    argv = hosts.exec_argv(0, [RAYMPP, "serve", "--host", head, "--port", str(PG_PORT),
                               "--segments", str(N_SEGMENTS), "--data-dir",
                               str(workdir / "data"), "--ray-address",
                               f"{head}:{RAY_PORT}"])
    # `ip netns exec` execs raympp: proc.pid is the serve process itself.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=_env(workdir), cwd=REPO)
    lines: list[str] = []
    q: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            q.put(line)
        q.put(None)
    threading.Thread(target=pump, name="serve-output", daemon=True).start()
    deadline = time.monotonic() + SERVE_START_TIMEOUT
    while True:
        try:
            line = q.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            line = ""
        if line is None or time.monotonic() >= deadline:
            _stop_serve(proc)
            tail = "\n".join(lines[-60:])
            pytest.fail(f"raympp serve did not report 'serving' (exit {proc.poll()}):\n{tail}")
        if "serving" in line:
            return proc, lines


def _stop_serve(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)


def test_two_hosts_redistribute_over_shm_and_tcp(hosts, workdir):
    _start_ray(hosts, workdir)
    proc, serve_log = _start_serve(hosts, workdir)
    try:
        cfg = {"host": hosts.addrs[0], "port": PG_PORT, "rows": N_ROWS, "groups": N_GROUPS}
        p = subprocess.run(hosts.exec_argv(0, [PYTHON, "-c", CLIENT, json.dumps(cfg)]),
                           capture_output=True, text=True, timeout=CLIENT_TIMEOUT,
                           env=_env(workdir), cwd=REPO)
        assert p.returncode == 0, (f"client failed ({p.returncode}):\n{p.stderr}\n"
                                   f"serve log:\n" + "\n".join(serve_log[-60:]))
        out = json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        _stop_serve(proc)
    print("\nraympp serve output:\n" + "\n".join(serve_log[-20:]))
    print(f"raympp serve exit status after SIGTERM: {proc.returncode}")

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
