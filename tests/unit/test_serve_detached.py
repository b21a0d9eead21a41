"""deploy/serve_detached.sh: start detaches, stop stops, and the end of Ray's GCS stops it.

Run on a copy of the script beside a fake venv (no Ray, no raympp): `.venv/bin/python`
answers the wait for the nodes, `.venv/bin/raympp` logs its arguments and the SIGTERM it
gets. Ray's GCS is a listening socket of this test, closed to play `ray stop`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
echo "python $*" >> "$FAKE_CALLS"
exit "${FAKE_WAIT_STATUS:-0}"
"""
FAKE_RAYMPP = """#!/usr/bin/env bash
if [ -n "${FAKE_IGNORE_TERM:-}" ]; then
  trap 'echo "raympp ignored TERM" >> "$FAKE_CALLS"' TERM
else
  trap 'echo "raympp got TERM" >> "$FAKE_CALLS"; exit 0' TERM
fi
echo $$ > "$FAKE_CALLS.pid"
echo "raympp $*" >> "$FAKE_CALLS"
while true; do sleep 0.1; done
"""

pytestmark = pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid")


@pytest.fixture
def env(tmp_path):
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    shutil.copy(REPO / "deploy" / "serve_detached.sh", repo / "deploy")
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, text in (("python", FAKE_PYTHON), ("raympp", FAKE_RAYMPP)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    gcs = socket.create_server(("127.0.0.1", 0), backlog=64)
    run_dir = tmp_path / "run"
    calls = tmp_path / "calls"
    calls.touch()
    environ = dict(os.environ, RAYMPP_RUN_DIR=str(run_dir), FAKE_CALLS=str(calls),
                   RAYMPP_WATCH_SECONDS="1", RAYMPP_GRACE_SECONDS="5")
    state = {"repo": repo, "gcs": gcs, "run_dir": run_dir, "calls": calls, "env": environ}
    yield state
    gcs.close()
    pid_file = run_dir / "serve.pid"
    if pid_file.exists():  # a failed test: end what it started, by its group
        try:
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass  # the group has already ended, or the pid file was half written


def _script(state, *args, **extra_env):
    return subprocess.run(["bash", str(state["repo"] / "deploy" / "serve_detached.sh"),
                           *args], env=dict(state["env"], **extra_env),
                          capture_output=True, text=True, timeout=60)


def _address(state) -> str:
    return f"127.0.0.1:{state['gcs'].getsockname()[1]}"


def _start(state, **extra_env):
    return _script(state, "start", "3", "--ray-address", _address(state), "--segments", "4",
                   **extra_env)


def _until(predicate, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for us: its parent (this test's init) has not reaped it yet.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_start_waits_for_the_nodes_then_serves_and_stop_ends_it(env):
    done = _start(env)
    assert done.returncode == 0, done.stderr
    pid = int((env["run_dir"] / "serve.pid").read_text())
    calls = env["calls"]
    assert _until(lambda: "raympp serve" in calls.read_text())
    lines = calls.read_text().splitlines()
    assert lines[0] == f"python -m deploy.wait_nodes --ray-address {_address(env)} " \
                       "--nodes 3 --timeout 600"
    assert lines[1] == f"raympp serve --ray-address {_address(env)} --segments 4"
    assert os.getpgid(pid) == pid  # its own group, which stop may kill as a whole

    again = _start(env)
    assert again.returncode == 1 and "already running" in again.stderr

    assert _script(env, "stop").returncode == 0
    assert not _alive(pid)
    assert "raympp got TERM" in calls.read_text()
    assert not (env["run_dir"] / "serve.pid").exists()
    assert "raympp ended (status 0)" in (env["run_dir"] / "serve.log").read_text()


def test_a_cluster_config_is_passed_to_the_wait(env):
    assert _script(env, "start", "/x/ray_bootstrap_config.yaml", "--ray-address",
                   _address(env)).returncode == 0
    assert _until(lambda: "raympp serve" in env["calls"].read_text())
    assert "--cluster-config /x/ray_bootstrap_config.yaml" in env["calls"].read_text()
    assert _script(env, "stop").returncode == 0


def test_ray_gone_stops_raympp(env):
    assert _start(env).returncode == 0
    pid = int((env["run_dir"] / "serve.pid").read_text())
    assert _until(lambda: "raympp serve" in env["calls"].read_text())
    env["gcs"].close()  # `ray stop` ended the GCS
    assert _until(lambda: not _alive(pid), seconds=30)
    assert "raympp got TERM" in env["calls"].read_text()
    assert "is gone (ray stop / ray down): stopping raympp" in \
        (env["run_dir"] / "serve.log").read_text()


def test_nodes_missing_means_no_server(env):
    done = _script(env, "start", "3", "--ray-address", _address(env), FAKE_WAIT_STATUS="1")
    assert done.returncode == 0
    pid = int((env["run_dir"] / "serve.pid").read_text())
    assert _until(lambda: not _alive(pid))
    assert [line.split()[0] for line in env["calls"].read_text().splitlines()] == ["python"]
    assert "not started" in (env["run_dir"] / "serve.log").read_text()


def test_stop_kills_the_group_when_raympp_does_not_end(env):
    assert _start(env, FAKE_IGNORE_TERM="1").returncode == 0
    pid = int((env["run_dir"] / "serve.pid").read_text())
    assert _until(lambda: "raympp serve" in env["calls"].read_text())
    raympp = int(Path(f"{env['calls']}.pid").read_text())
    began = time.monotonic()
    assert _script(env, "stop").returncode == 0
    assert time.monotonic() - began >= 5  # RAYMPP_GRACE_SECONDS first
    assert not _alive(pid) and not _alive(raympp)
    assert "raympp ignored TERM" in env["calls"].read_text()
    assert "did not stop within 5s" in (env["run_dir"] / "serve.log").read_text()


@pytest.mark.parametrize("args", [["start", "3"], ["start", "3", "--ray-address", "auto"],
                                  ["start", "3", "--ray-address"],
                                  ["start"], ["restart"]])
def test_bad_arguments(env, args):
    done = _script(env, *args)
    assert done.returncode == 2
    assert "usage" in done.stderr or "--ray-address HOST:PORT" in done.stderr
    assert not (env["run_dir"] / "serve.pid").exists()
