"""The shared-memory transport: zero-copy receipt, slab reuse, lifetimes, and nothing left
behind (no /dev/shm names, no memfd descriptors or mappings once batches are dropped)."""

from __future__ import annotations

import gc
import os
import time

import numpy as np
import pyarrow as pa
import pytest

from motion import shm
from motion.service import MotionService

MEMFD = "memfd:raympp-motion"


def memfd_mappings() -> list[tuple[int, int]]:
    """Address ranges of this process's mappings of motion slabs."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            if MEMFD in line:
                lo, hi = line.split()[0].split("-")
                out.append((int(lo, 16), int(hi, 16)))
    return out


def memfd_fds() -> list[int]:
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if MEMFD in os.readlink(f"/proc/self/fd/{name}"):
                fds.append(int(name))
        except OSError:
            pass
    return fds


def big_batch(mb: int = 32) -> pa.RecordBatch:
    n = mb * (1 << 20) // 16
    return pa.record_batch({"a": pa.array(np.arange(n, dtype=np.int64)),
                            "b": pa.array(np.ones(n))})


@pytest.fixture
def pair(tmp_path):
    rx = MotionService("127.0.0.1", str(tmp_path / "rx"), 256 << 20)
    tx = MotionService("127.0.0.1", str(tmp_path / "tx"), 256 << 20)
    yield rx, tx
    tx.close()
    rx.close()


def test_received_batches_point_into_shared_memory(pair):
    rx, tx = pair
    batch = big_batch()
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, same_node=True, schema=batch.schema)
    it = r.batches()
    before = pa.total_allocated_bytes()
    s.send(batch)
    got = next(it)
    grew = pa.total_allocated_bytes() - before
    assert grew < 1 << 20, f"{grew} bytes allocated to move a {batch.nbytes} byte batch"
    assert got.equals(batch)
    maps = memfd_mappings()
    for col in got.columns:
        addr = col.buffers()[1].address
        assert any(lo <= addr < hi for lo, hi in maps), "column data is not in a motion slab"
    assert r.stats()[0].transport == "shm"
    s.finish()
    assert list(it) == []


def test_tcp_copies_for_contrast(pair):
    rx, tx = pair
    batch = big_batch(16)
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, same_node=False, schema=batch.schema)
    it = r.batches()
    s.send(batch)
    got = next(it)
    addr = got.column(0).buffers()[1].address
    assert not any(lo <= addr < hi for lo, hi in memfd_mappings())
    s.finish()


def test_slabs_are_released_and_reused(pair):
    rx, tx = pair
    batch = big_batch(8)
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, same_node=True, schema=batch.schema)
    it = r.batches()
    for _ in range(20):
        s.send(batch)
        got = next(it)
        assert got.num_rows == batch.num_rows
        del got  # the lease goes: RELEASE flows back to the sender
        deadline = time.monotonic() + 5
        while s._link._in_use:
            s._link.poll()
            assert time.monotonic() < deadline, "no RELEASE came back"
            time.sleep(0.001)
    s.finish()
    # Twenty frames through one slab, its pages faulted in once.
    assert tx._pool._next_id == 2
    assert tx._pool.free_bytes() > 0 and len(memfd_fds()) == 1


def test_held_batches_outlive_sender_and_services(tmp_path):
    rx = MotionService("127.0.0.1", str(tmp_path), 1 << 30)
    tx = MotionService("127.0.0.1", str(tmp_path), 1 << 30)
    batch = big_batch(8)
    r = rx.open_receiver(("q", 1, 0), 1)
    with tx.connect(rx.endpoint(), ("q", 1, 0), 0, same_node=True) as s:
        s.send(batch)
        s.send(batch)
    held = list(r.batches())
    tx.close()
    rx.close()
    gc.collect()
    assert all(h.equals(batch) for h in held)  # still mapped, still intact
    assert memfd_mappings()
    del held
    gc.collect()
    assert memfd_mappings() == [] and memfd_fds() == []


def test_nothing_left_behind(tmp_path):
    shm_before, tmp_before = set(os.listdir("/dev/shm")), set(os.listdir("/tmp"))
    spill = tmp_path / "spill"
    with MotionService("127.0.0.1", str(spill), 1 << 20) as rx, \
            MotionService("127.0.0.1", str(spill), 1 << 20) as tx:
        r = rx.open_receiver(("q", 1, 0), 1)
        with tx.connect(rx.endpoint(), ("q", 1, 0), 0, same_node=True) as s:
            for _ in range(4):
                s.send(big_batch(4))  # beyond the 1 MB limit: these spill
        got = list(r.batches())
        assert r.stats()[0].spilled_frames > 0
        del got
        # A cancelled query with frames still queued and spilled.
        r2 = rx.open_receiver(("q2", 1, 0), 1)
        s2 = tx.connect(rx.endpoint(), ("q2", 1, 0), 0, same_node=True)
        for _ in range(3):
            s2.send(big_batch(4))
        rx.cancel("q2")
        s2.close()
        del r2
    gc.collect()
    new_shm = set(os.listdir("/dev/shm")) - shm_before
    new_tmp = set(os.listdir("/tmp")) - tmp_before
    assert not [n for n in new_shm if "raympp" in n or "motion" in n]
    assert not [n for n in new_tmp if "raympp-motion" in n]
    assert list(spill.iterdir()) == []
    assert memfd_mappings() == [] and memfd_fds() == []
    leftover = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                if os.path.exists(f"/proc/self/fd/{fd}")]
    assert not [p for p in leftover if str(spill) in p]


def test_pool_is_bounded():
    pool = shm.SlabPool(4 << 20)
    slabs = [pool.acquire(1 << 20) for _ in range(8)]
    assert len({s.id for s in slabs}) == 8
    for s in slabs:
        pool.give_back(s)
    assert pool.free_bytes() <= 4 << 20
    again = pool.acquire(1000)
    assert again.id in {s.id for s in slabs[4:]}  # reused, pages already faulted in
    huge = pool.acquire(16 << 20)
    pool.give_back(huge)  # larger than the pool: closed, not kept
    assert pool.free_bytes() <= 4 << 20
    pool.give_back(again)
    pool.close()
    assert pool.free_bytes() == 0 and memfd_fds() == []


def test_hoarding_consumer_gets_copies_past_the_cap(pair):
    rx, tx = pair
    batch = big_batch(1)
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, same_node=True, schema=batch.schema)
    it = r.batches()
    held = []
    for _ in range(shm.MAX_HELD + 10):
        s.send(batch)
        held.append(next(it))  # a hash join build side keeps everything
    s.finish()
    maps = memfd_mappings()

    def in_shm(b):
        addr = b.column(0).buffers()[1].address
        return any(lo <= addr < hi for lo, hi in maps)

    assert all(in_shm(b) for b in held[:shm.MAX_HELD])
    assert not any(in_shm(b) for b in held[shm.MAX_HELD:])
    assert all(b.equals(batch) for b in held)
    del held


def test_schema_metadata_does_not_matter(pair):
    rx, tx = pair
    batch = big_batch(1)
    r = rx.open_receiver(("q", 1, 0), 1)
    schema = batch.schema.with_metadata({"origin": "planner"})
    with tx.connect(rx.endpoint(), ("q", 1, 0), 0, same_node=True, schema=schema) as s:
        s.send(batch)
    assert list(r.batches())[0].equals(batch)


def test_size_classes_and_idle_trimming():
    mb = 1 << 20
    assert shm.size_class(1) == shm.size_class(mb) == mb
    assert shm.size_class(mb + 1) == 2 * mb
    assert shm.size_class(128 * mb + 224) == 144 * mb  # not 256 MB
    assert all(n <= shm.size_class(n) <= n * 1.25 + mb for n in (3 * mb, 17 * mb + 5, 999 * mb))
    pool = shm.SlabPool(64 * mb)
    a, b = pool.acquire(mb), pool.acquire(mb)
    pool.give_back(a)
    pool.give_back(b)
    pool.trim_idle()
    assert pool.free_bytes() == 2 * mb
    pool.trim_idle(time.monotonic() + shm.IDLE_SECONDS + 1)
    assert pool.free_bytes() == 0 and memfd_fds() == []
    pool.close()
