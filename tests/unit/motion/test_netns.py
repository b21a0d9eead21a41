"""Two "hosts" as network namespaces joined by a veth pair: a receiver bound to its own
namespace's address, a sender in the other. Their node ids differ (another network
namespace), so connect(same_node=None) picks TCP by itself. Needs root and `ip netns`:
run with `pytest -m netns`.
"""

from __future__ import annotations

import base64
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.netns

REPO = Path(__file__).resolve().parents[3]
ADDR_A, ADDR_B = "10.231.77.1", "10.231.77.2"

RECEIVER = textwrap.dedent("""
    import base64, pickle, sys, tempfile
    from motion.service import MotionService
    with MotionService(sys.argv[1], tempfile.mkdtemp(), 1 << 20) as svc:
        r = svc.open_receiver(("q", 1, 0), 2)
        print(base64.b64encode(pickle.dumps(svc.endpoint())).decode(), flush=True)
        rows = sum(b.num_rows for b in r.batches())
        print(rows, sorted({s.transport for s in r.stats()}), flush=True)
""")

SENDER = textwrap.dedent("""
    import base64, pickle, sys, tempfile
    import numpy as np, pyarrow as pa
    from motion.service import MotionService
    ep = pickle.loads(base64.b64decode(sys.argv[2]))
    with MotionService(sys.argv[1], tempfile.mkdtemp(), 1 << 20) as svc:
        for i in range(2):
            with svc.connect(ep, ("q", 1, 0), i) as s:  # same_node decided by node_id
                assert s.stats().transport == "tcp"
                for _ in range(5):
                    s.send(pa.record_batch({"x": pa.array(np.arange(100_000))}))
    print("sent", flush=True)
""")


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def namespaces():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2")
    a, b = f"rmpp-a-{os.getpid()}", f"rmpp-b-{os.getpid()}"
    va, vb = f"rma{os.getpid() % 100000}", f"rmb{os.getpid() % 100000}"
    try:
        _ip("netns", "add", a)
        _ip("netns", "add", b)
        _ip("link", "add", va, "type", "veth", "peer", "name", vb)
        _ip("link", "set", va, "netns", a)
        _ip("link", "set", vb, "netns", b)
        for ns, dev, addr in ((a, va, ADDR_A), (b, vb, ADDR_B)):
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield a, b
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_tcp_between_network_namespaces(namespaces):
    a, b = namespaces
    env = dict(os.environ, PYTHONPATH=str(REPO))
    rx = subprocess.Popen(["ip", "netns", "exec", a, sys.executable, "-c", RECEIVER, ADDR_A],
                          stdout=subprocess.PIPE, text=True, env=env)
    try:
        endpoint = rx.stdout.readline().strip()
        assert pickle.loads(base64.b64decode(endpoint)).host == ADDR_A
        tx = subprocess.run(["ip", "netns", "exec", b, sys.executable, "-c", SENDER, ADDR_B,
                             endpoint], capture_output=True, text=True, env=env, timeout=60)
        assert tx.returncode == 0, tx.stderr
        out, _ = rx.communicate(timeout=60)
        assert out.split(None, 1) == ["1000000", "['tcp']\n"]
    finally:
        if rx.poll() is None:
            rx.kill()
            rx.wait()
