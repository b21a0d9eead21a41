"""raympp on a Ray cluster of network-namespace "hosts" (tests/netns_util.py), for the
multi-host tests (test_multihost.py, test_multihost_expand.py).

Host 0 runs the Ray head (deploy/ray_head.sh) and `raympp serve --ray-address`; the other
hosts join as Ray workers (deploy/ray_worker.sh) when a test says so. Every command gets an
environment without anything that points Ray or libpq elsewhere, Ray's usage stats off and
Ray token authentication with the test's own token (workdir/auth_token). Only loopback and
the hosts' 10.213.<octet>.<i> addresses are used.
"""

from __future__ import annotations

import contextlib
import os
import queue
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.netns_util import NetnsHosts, netns_unavailable_reason

REPO = Path(__file__).resolve().parents[2]
PYTHON = str(REPO / ".venv" / "bin" / "python")
RAYMPP = str(REPO / ".venv" / "bin" / "raympp")
RAY_PORT = 6379        # inside the namespaces: nothing else listens there
PG_PORT = 5433
RAY_START_TIMEOUT = 180
SERVE_START_TIMEOUT = 300


def env(workdir: Path) -> dict[str, str]:
    """This environment without anything that points Ray or libpq elsewhere; usage stats
    off; Ray token authentication with the test's own token (workdir/auth_token)."""
    out = {k: v for k, v in os.environ.items()
           if not k.startswith(("RAY_", "PG")) and k not in ("http_proxy", "https_proxy",
                                                              "HTTP_PROXY", "HTTPS_PROXY")}
    out["RAY_USAGE_STATS_ENABLED"] = "0"
    out["RAY_AUTH_MODE"] = "token"
    out["RAY_AUTH_TOKEN_PATH"] = str(workdir / "auth_token")
    out["RAYMPP_NUM_CPUS"] = "2"
    out["NO_PROXY"] = out["no_proxy"] = "*"
    return out


def run(argv, workdir, timeout, what) -> subprocess.CompletedProcess:
    """Run argv to the end; it must succeed (the failure shows its output)."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                       env=env(workdir), cwd=REPO)
    assert p.returncode == 0, (f"{what} failed ({p.returncode}):\nstdout:\n{p.stdout}\n"
                               f"stderr:\n{p.stderr}")
    return p


@contextlib.contextmanager
def netns_hosts(tag: str, octet: int, n: int):
    """n hosts; torn down (every process in them ended) at the end. Skips the test when
    `ip netns` cannot be used here."""
    reason = netns_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    hosts = NetnsHosts(tag, octet, n)
    try:
        hosts.create()
        yield hosts
    finally:
        killed = hosts.destroy()
        if any(killed.values()):
            print(f"\nprocesses killed (no exit on SIGTERM within the grace time): {killed}")


@contextlib.contextmanager
def scratch_dir():
    """A short directory under /tmp (Ray's Unix socket paths live under its --temp-dir)
    with the cluster's Ray token in auth_token; removed at the end."""
    d = tempfile.mkdtemp(prefix="rmpp", dir="/tmp")
    try:
        token = Path(d) / "auth_token"
        token.touch(mode=0o600)
        token.write_text(secrets.token_hex(32))
        yield Path(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def start_ray_head(hosts: NetnsHosts, workdir: Path) -> None:
    run(hosts.exec_argv(0, ["bash", str(REPO / "deploy" / "ray_head.sh"), hosts.addrs[0],
                            str(RAY_PORT), f"--temp-dir={workdir / 'r0'}",
                            "--object-store-memory=300000000"]),
        workdir, RAY_START_TIMEOUT, "ray head in host 0")


def start_ray_worker(hosts: NetnsHosts, i: int, workdir: Path) -> None:
    run(hosts.exec_argv(i, ["bash", str(REPO / "deploy" / "ray_worker.sh"),
                            f"{hosts.addrs[0]}:{RAY_PORT}", hosts.addrs[i],
                            f"--temp-dir={workdir / f'r{i}'}",
                            "--object-store-memory=300000000"]),
        workdir, RAY_START_TIMEOUT, f"ray worker in host {i}")


def wait_alive_nodes(hosts: NetnsHosts, workdir: Path, n: int) -> list[str]:
    """Wait until n nodes are alive in the cluster (placement uses the alive nodes);
    returns their addresses, sorted."""
    probe = ("import ray, sys, time\n"
             f"ray.init(address='{hosts.addrs[0]}:{RAY_PORT}', log_to_driver=False)\n"
             "deadline = time.time() + 120\n"
             "while time.time() < deadline:\n"
             "    alive = sorted(n['NodeManagerAddress'] for n in ray.nodes() if n['Alive'])\n"
             f"    if len(alive) >= {n}: break\n"
             "    time.sleep(0.5)\n"
             "print(' '.join(alive))\n")
    p = run(hosts.exec_argv(0, [PYTHON, "-c", probe]), workdir, RAY_START_TIMEOUT,
            "node probe")
    return p.stdout.split()


class NetnsServe:
    """`raympp serve --ray-address` in host 0; its output is drained by a thread and kept.
    `ip netns exec` execs raympp, so `proc.pid` is the serve process (the supervisor)."""

    def __init__(self, hosts: NetnsHosts, workdir: Path, segments: int):
        head = hosts.addrs[0]
        argv = hosts.exec_argv(0, [RAYMPP, "serve", "--host", head, "--port", str(PG_PORT),
                                   "--segments", str(segments), "--data-dir",
                                   str(workdir / "data"), "--ray-address",
                                   f"{head}:{RAY_PORT}"])
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env(workdir), cwd=REPO)
        self.lines: list[str] = []
        q: queue.Queue = queue.Queue()

        def pump():
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
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
                self.stop()
                pytest.fail(f"raympp serve did not report 'serving' (exit "
                            f"{self.proc.poll()}):\n{self.output()}")
            if "serving" in line:
                return

    def output(self, lines: int = 60) -> str:
        return "\n".join(self.lines[-lines:])

    def stop(self) -> None:
        """SIGTERM, SIGKILL after a minute."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)
