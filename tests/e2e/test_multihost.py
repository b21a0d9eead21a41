"""raympp on a two-node Ray cluster: two network namespaces on this machine play two hosts.

Namespace a runs the Ray head (deploy/ray_head.sh), `raympp serve --ray-address` with 4
segments and the psycopg client; namespace b runs a Ray worker (deploy/ray_worker.sh). The
segments are placed round-robin over the two nodes, so a Redistribute Motion moves rows both
between segments of one node (shared memory) and between the nodes (TCP over the veth):
EXPLAIN ANALYZE must report transport=shm+tcp, and the answer must be right.

Needs root and `ip netns` (skipped otherwise); excluded from the default run (-m netns).
Only loopback and the two veth addresses 10.213.<octet>.1/.2 are used; the namespaces have
no route anywhere else. Every process started in the namespaces is ended by PID at the end.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import shutil
import secrets
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
        pair.destroy()


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
out = {}
with psycopg.connect(host=cfg["host"], port=cfg["port"], user="raympp", dbname="raympp",
                     autocommit=True, connect_timeout=30) as c:
    c.execute("CREATE TABLE mh_t (id bigint NOT NULL, v bigint) DISTRIBUTED BY (id)")
    c.execute("INSERT INTO mh_t SELECT g, (g * 7919) % 1000003 "
              "FROM generate_series(1, " + str(cfg["rows"]) + ") AS g")
    out["count"] = c.execute("SELECT count(*) FROM mh_t").fetchone()[0]
    q = "SELECT v % " + str(cfg["groups"]) + " AS k, count(*) FROM mh_t GROUP BY 1"
    out["groups"] = [[int(k), int(n)] for k, n in c.execute(q).fetchall()]
    out["explain"] = [r[0] for r in c.execute("EXPLAIN ANALYZE " + q).fetchall()]
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

    explain = "\n".join(out["explain"])
    print("\nEXPLAIN ANALYZE on two nodes:\n" + explain)
    assert out["count"] == N_ROWS

    expected = collections.Counter(((g * 7919) % 1000003) % N_GROUPS
                                   for g in range(1, N_ROWS + 1))
    got = {k: n for k, n in out["groups"]}
    assert len(out["groups"]) == len(got) == len(expected)
    assert got == dict(expected)

    redistribute = [line for line in out["explain"] if "Redistribute Motion" in line]
    assert redistribute, explain
    assert any("transport=shm+tcp" in line for line in redistribute), explain
    gather = [line for line in out["explain"] if "Gather Motion" in line]
    assert gather and all("transport=" in line for line in gather), explain
