"""Channels between processes: every Motion kind over shm and TCP, spilling, cancellation,
and peers killed with SIGKILL mid-stream (the other end fails within seconds and nothing is
left in /dev/shm or /tmp).

Peers are spawned processes (they import this module by name), each with its own
MotionService, driven over a pipe: "send" routes the batches of make_batches to receivers,
"receive" reads a channel and returns what arrived. Commands run in threads, so a peer sends and receives at once.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import threading
import time
import traceback

import numpy as np
import pyarrow as pa
import pytest

from motion import hashing, route
from motion.errors import MotionError
from planner.plan import MotionKind
from segment.operators.motion_send import ROUTES
from motion.service import MotionService

HOST = "127.0.0.1"
PEER_LIMIT = 1 << 20
SCHEMA = pa.schema([("k", pa.int64()), ("s", pa.string()), ("id", pa.int64())])


def make_batches(sender: int, sizes=(10, 30_000, 0, 2_000)) -> list[pa.RecordBatch]:
    """Batches of one sender: small (inline) and large (shm slab) ones, one empty; ids are
    unique across senders and ascending within one."""
    rng = np.random.default_rng(sender)
    out, start = [], sender * 10_000_000
    for n in sizes:
        out.append(pa.record_batch({
            "k": pa.array(rng.integers(0, 5000, n)),
            "s": pa.array([f"s{sender}-{i % 97}" for i in range(n)], pa.string()),
            "id": pa.array(np.arange(start, start + n)),
        }, schema=SCHEMA))
        start += n
    return out


# --- the peer process ------------------------------------------------------------------------
def _peer_main(conn, spill_dir: str, limit: int) -> None:
    svc = MotionService(HOST, spill_dir, limit)
    lock = threading.Lock()
    conn.send(svc.endpoint())
    threads = []
    while True:
        cmd = conn.recv()
        if cmd is None:
            break
        t = threading.Thread(target=_run, args=(conn, lock, svc, *cmd), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(10)
    svc.close()


def _run(conn, lock, svc, tag, op, args) -> None:
    try:
        result = globals()[f"_op_{op}"](svc, *args)
    except MotionError as exc:
        result = exc
    except BaseException:
        result = RuntimeError(traceback.format_exc())
    with lock:
        conn.send((tag, result))


def _op_send(svc, endpoints, qid, kind, sender, same_node, keys):
    senders = [svc.connect(ep, (qid, 1, r), sender, same_node, schema=SCHEMA)
               for r, ep in enumerate(endpoints)]
    for batch in make_batches(sender):
        for s, part in zip(senders, route.route(batch, kind, len(senders), keys)):
            if part is not None:
                s.send(part)
    for s in senders:
        s.finish()
    return [s.stats() for s in senders]


def _op_receive(svc, key, n, mode):
    r = svc.open_receiver(key, n)
    try:
        if mode == "streams":
            parts = [pa.Table.from_batches(list(s), schema=SCHEMA) for s in r.streams()]
        else:
            parts = [pa.Table.from_batches(list(r.batches()), schema=SCHEMA)]
        return parts, r.stats()
    finally:
        r.close()


def _op_build_then_probe(svc, qid, n):
    probe = svc.open_receiver((qid, 1, 0), n)
    build = svc.open_receiver((qid, 2, 0), n)
    b = pa.Table.from_batches(list(build.batches()), schema=SCHEMA)
    a = pa.Table.from_batches(list(probe.batches()), schema=SCHEMA)
    return a, b, probe.stats() + build.stats()


def _op_send_both(svc, endpoint, qid, sender, same_node):
    sa = svc.connect(endpoint, (qid, 1, 0), sender, same_node, schema=SCHEMA)
    sb = svc.connect(endpoint, (qid, 2, 0), sender, same_node, schema=SCHEMA)
    for _ in range(6):
        for b in make_batches(sender):
            sa.send(b)
            sb.send(b)
    sa.finish()
    sb.finish()
    return True


def _op_send_and_hang(svc, endpoint, key, same_node):
    s = svc.connect(endpoint, key, 0, same_node, schema=SCHEMA)
    for b in make_batches(0):
        s.send(b)
    return "sent"  # and never finish: the test kills this process


def _op_cancel(svc, qid):
    svc.cancel(qid)
    return True


class Peer:
    def __init__(self, spill_dir: str, limit: int = PEER_LIMIT):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_peer_main, args=(child, spill_dir, limit), daemon=True)
        self.proc.start()
        self._results: dict = {}
        self._tag = 0

    def start(self) -> None:
        self.endpoint = self.conn.recv()

    def submit(self, op, *args) -> int:
        self._tag += 1
        self.conn.send((self._tag, op, args))
        return self._tag

    def result(self, tag, timeout=30.0):
        deadline = time.monotonic() + timeout
        while tag not in self._results:
            if not self.conn.poll(max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"peer {self.proc.pid} did not answer")
            t, value = self.conn.recv()
            self._results[t] = value
        value = self._results.pop(tag)
        if isinstance(value, RuntimeError):
            raise value
        return value

    def stop(self) -> None:
        if self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(15)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)


@pytest.fixture(scope="module")
def peers(tmp_path_factory):
    spill = tmp_path_factory.mktemp("peers")
    ps = [Peer(str(spill / f"p{i}")) for i in range(3)]
    for p in ps:
        p.start()
    yield ps
    for p in ps:
        p.stop()
    assert all(not list(d.iterdir()) for d in spill.iterdir())


@pytest.fixture
def fresh_peer(tmp_path):
    p = Peer(str(tmp_path / "fresh"))
    p.start()
    yield p
    p.stop()


def _everything() -> pa.Table:
    return pa.Table.from_batches(make_batches(0) + make_batches(1), schema=SCHEMA).sort_by("id")


@pytest.mark.parametrize("transport", ["shm", "tcp"])
# EXPLICIT routes by a segment-id column (tests/unit/motion/test_route.py).
@pytest.mark.parametrize("kind", [k for k in MotionKind if k is not MotionKind.EXPLICIT])
def test_every_kind_between_processes(peers, kind, transport):
    qid = f"{kind.name}-{transport}"
    receivers = peers[2:] if kind in (MotionKind.GATHER, MotionKind.GATHER_MERGE) else peers
    mode = "streams" if kind == MotionKind.GATHER_MERGE else "batches"
    recv_tags = [p.submit("receive", (qid, 1, r), 2, mode) for r, p in enumerate(receivers)]
    eps = [p.endpoint for p in receivers]
    send_tags = [peers[i].submit("send", eps, qid, ROUTES[kind], i, transport == "shm", [0])
                 for i in range(2)]
    for i, tag in enumerate(send_tags):
        for st in peers[i].result(tag):
            assert st.transport == transport
    got = [p.result(tag) for p, tag in zip(receivers, recv_tags)]
    everything = _everything()
    for r, (parts, stats) in enumerate(got):
        assert [s.transport for s in stats] == [transport, transport]
        table = pa.concat_tables(parts).sort_by("id")
        if kind == MotionKind.REDISTRIBUTE:
            seg = hashing.segment_ids([everything.column("k")], 3)
            assert table.equals(everything.filter(pa.array(seg == r)))
        else:
            assert table.equals(everything)
        if kind == MotionKind.GATHER_MERGE:  # one stream per sender, each in send order
            for i, part in enumerate(parts):
                assert part.column("id").to_pylist() == pa.Table.from_batches(
                    make_batches(i)).column("id").to_pylist()


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_spill_between_processes(peers, transport):
    qid = f"spill-{transport}"
    tag = peers[2].submit("build_then_probe", qid, 2)
    sends = [peers[i].submit("send_both", peers[2].endpoint, qid, i, transport == "shm")
             for i in range(2)]
    for i, t in enumerate(sends):
        assert peers[i].result(t) is True  # finished before the probe side was read
    a, b, stats = peers[2].result(tag)
    assert a.num_rows == b.num_rows == 2 * 6 * 32_010
    assert sum(s.spilled_frames for s in stats) > 0


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_cancel_between_processes(peers, tmp_path, transport):
    qid = f"cancel-{transport}"
    tag = peers[2].submit("receive", (qid, 1, 0), 1, "batches")
    with MotionService(HOST, str(tmp_path), 1 << 20) as svc:
        s = svc.connect(peers[2].endpoint, (qid, 1, 0), 0, transport == "shm", schema=SCHEMA)
        s.send(make_batches(0)[1])
        peers[2].result(peers[2].submit("cancel", qid))
        err = peers[2].result(tag)
        assert isinstance(err, MotionError) and err.sqlstate == "57014"
        deadline = time.monotonic() + 5
        with pytest.raises(MotionError) as exc:
            while time.monotonic() < deadline:
                s.send(make_batches(0)[1])
                time.sleep(0.01)
        assert exc.value.sqlstate == "57014"
        s.close()


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_sender_killed_mid_stream(fresh_peer, tmp_path, transport):
    shm_before, tmp_before = set(os.listdir("/dev/shm")), set(os.listdir("/tmp"))
    with MotionService(HOST, str(tmp_path / "rx"), 1 << 30) as rx:
        r = rx.open_receiver(("k", 1, 0), 1)
        tag = fresh_peer.submit("send_and_hang", rx.endpoint(), ("k", 1, 0),
                                transport == "shm")
        assert fresh_peer.result(tag) == "sent"
        it = r.batches()
        held = [next(it) for _ in range(3)]  # all it sent (one batch was empty)
        fresh_peer.proc.kill()
        t0 = time.monotonic()
        with pytest.raises(MotionError, match="lost its connection") as exc:
            next(it)
        assert exc.value.sqlstate == "58030"
        assert time.monotonic() - t0 < 5
        # Zero-copy batches from the dead process are still intact.
        assert pa.Table.from_batches(held).equals(
            pa.Table.from_batches([b for b in make_batches(0) if b.num_rows]))
        del held
        r.close()
    fresh_peer.proc.join(5)
    gc.collect()
    assert not [n for n in set(os.listdir("/dev/shm")) - shm_before
                if "raympp" in n or "motion" in n]
    assert not [n for n in set(os.listdir("/tmp")) - tmp_before if "raympp-motion" in n]
    with open("/proc/self/maps") as f:
        assert "memfd:raympp-motion" not in f.read()


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_receiver_killed(fresh_peer, tmp_path, transport):
    fresh_peer.submit("receive", ("k", 1, 0), 1, "batches")
    with MotionService(HOST, str(tmp_path), 1 << 20) as tx:
        s = tx.connect(fresh_peer.endpoint, ("k", 1, 0), 0, transport == "shm", schema=SCHEMA)
        s.send(make_batches(0)[1])
        fresh_peer.proc.kill()
        fresh_peer.proc.join(5)
        t0 = time.monotonic()
        with pytest.raises(MotionError) as exc:
            while time.monotonic() - t0 < 5:
                s.send(make_batches(0)[1])
        assert exc.value.sqlstate == "58030"
        s.close()
