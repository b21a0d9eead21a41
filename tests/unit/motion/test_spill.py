"""Flow control: receivers hold at most the memory limit and spill the rest, so senders
never wait on a consumer that reads another input first (a hash join reads its build side
fully before its probe side). Spilled frames come back in order and their space goes."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from motion.service import MotionService

LIMIT = 256 << 10


def batches(tag: int, n: int = 12, rows: int = 40_000) -> list[pa.RecordBatch]:
    return [pa.record_batch({"tag": pa.array(np.full(rows, tag)),
                             "seq": pa.array(np.arange(i * rows, (i + 1) * rows))})
            for i in range(n)]


def spill_fds(spill_dir) -> list[str]:
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(spill_dir)):
            out.append(target)
    return out


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_build_before_probe_cannot_deadlock(tmp_path, transport):
    spill_dir = tmp_path / "spill"
    rx = MotionService("127.0.0.1", str(spill_dir), LIMIT)
    tx = MotionService("127.0.0.1", str(tmp_path / "tx"), LIMIT)
    try:
        probe = rx.open_receiver(("q", 1, 0), 2)  # stream A, read last
        build = rx.open_receiver(("q", 2, 0), 2)  # stream B, read first
        peak = [0]

        def send(i):
            sa = tx.connect(rx.endpoint(), ("q", 1, 0), i, transport == "shm")
            sb = tx.connect(rx.endpoint(), ("q", 2, 0), i, transport == "shm")
            # Interleaved, as a slice feeding both sides of a join would.
            for a, b in zip(batches(10 + i), batches(20 + i)):
                sa.send(a)
                sb.send(b)
                peak[0] = max(peak[0], rx.memory_used())
            sa.finish()
            sb.finish()

        threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        # Every sender completes although nobody reads yet: nothing waits on the consumer.
        for t in threads:
            t.join(20)
            assert not t.is_alive(), "a sender blocked on a receiver that was not reading"
        assert rx.memory_used() <= LIMIT and peak[0] <= LIMIT
        got_b = pa.Table.from_batches(list(build.batches()))
        got_a = {i: pa.Table.from_batches(list(s)) for i, s in enumerate(probe.streams())}
        for i in range(2):
            want = pa.Table.from_batches(batches(10 + i))
            assert got_a[i].equals(want)  # in order, spilled or not
        assert sorted(got_b.column("seq").to_pylist()) == sorted(
            pa.Table.from_batches(batches(20) + batches(21)).column("seq").to_pylist())
        stats = probe.stats() + build.stats()
        spilled = sum(s.spilled_frames for s in stats)
        assert spilled > 20 and all(s.transport == transport for s in stats)
        assert probe._inbox.spill_bytes_on_disk() == 0  # read back: space given back
        assert rx.memory_used() == 0
        probe.close()
        build.close()
        assert spill_fds(spill_dir) == []
        assert list(spill_dir.iterdir()) == []
    finally:
        tx.close()
        rx.close()


def test_spill_is_dropped_on_close_and_cancel(tmp_path):
    spill_dir = tmp_path / "spill"
    with MotionService("127.0.0.1", str(spill_dir), 0) as rx, \
            MotionService("127.0.0.1", str(tmp_path), 0) as tx:
        r1 = rx.open_receiver(("q1", 1, 0), 1)
        r2 = rx.open_receiver(("q2", 1, 0), 1)
        for key in (("q1", 1, 0), ("q2", 1, 0)):
            with tx.connect(rx.endpoint(), key, 0, True) as s:
                for b in batches(1, n=4):
                    s.send(b)
        deadline = time.monotonic() + 5
        while sum(s.spilled_frames for s in r1.stats() + r2.stats()) < 8:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert len(spill_fds(spill_dir)) == 2
        r1.close()
        rx.cancel("q2")
        assert spill_fds(spill_dir) == []


def test_consumer_keeps_order_across_memory_and_spill(tmp_path):
    # Limit of about two frames: a slow consumer sees memory, spill, memory ... in order.
    with MotionService("127.0.0.1", str(tmp_path), 700_000) as rx, \
            MotionService("127.0.0.1", str(tmp_path), 0) as tx:
        r = rx.open_receiver(("q", 1, 0), 1)
        s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, False)
        it = r.batches()
        seen = []
        for i, b in enumerate(batches(3, n=20)):
            s.send(b)
            if i % 3 == 0:
                seen.append(next(it))
        s.finish()
        seen += list(it)
        assert pa.Table.from_batches(seen).equals(pa.Table.from_batches(batches(3, n=20)))
        st = r.stats()[0]
        assert 0 < st.spilled_frames < 20


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_a_waiting_consumer_gets_frames_without_spilling(tmp_path, transport):
    # Limit 0: every frame would spill, except one a consumer is already waiting for.
    with MotionService("127.0.0.1", str(tmp_path), 0) as rx, \
            MotionService("127.0.0.1", str(tmp_path), 0) as tx:
        r = rx.open_receiver(("q", 1, 0), 1)
        got = []
        arrived = threading.Semaphore(0)

        def consume():
            for b in r.batches():
                got.append(b)
                arrived.release()

        t = threading.Thread(target=consume)
        t.start()
        s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm")
        for b in batches(4, n=8):
            time.sleep(0.02)  # let the consumer get back to waiting
            s.send(b)
            assert arrived.acquire(timeout=5)
        s.finish()
        t.join(5)
        assert len(got) == 8 and r.stats()[0].spilled_frames == 0
        assert rx.memory_used() == 0
