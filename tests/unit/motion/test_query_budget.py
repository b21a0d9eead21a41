"""Motion receive buffers draw from the query's memory budget (segment/memory.py), not from
a limit of their own: frames the budget refuses spill and come back in order, the bytes go
back to the budget as the consumer takes the frames, frames that arrived before the
budget was given move under it, and the receive operator reports peak and spilled bytes."""

from __future__ import annotations

import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from motion.service import MotionService
from planner import plan as pl
from planner import types
from segment import memory
from segment.operators import base
from segment.operators.motion_recv import MotionRecvOp

ROWS = 40_000  # one frame: 640 kB


def batches(tag: int, n: int = 12) -> list[pa.RecordBatch]:
    return [pa.record_batch({"tag": pa.array(np.full(ROWS, tag, dtype=np.int64)),
                             "seq": pa.array(np.arange(i * ROWS, (i + 1) * ROWS))})
            for i in range(n)]


def wait_for(cond, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@pytest.fixture
def services(tmp_path):
    # The service's own limit is huge: whatever spills does so because of the query's budget.
    rx = MotionService("127.0.0.1", str(tmp_path / "rx"), 1 << 30)
    tx = MotionService("127.0.0.1", str(tmp_path / "tx"), 1 << 30)
    yield rx, tx
    tx.close()
    rx.close()


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_frames_beyond_the_query_budget_spill_and_come_back_in_order(services, tmp_path,
                                                                    transport):
    rx, tx = services
    budget = memory.MemoryBudget(2 << 20, str(tmp_path / "rx"))
    rx.use_memory("q", budget)
    r = rx.open_receiver(("q", 1, 0), 1)
    with tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm") as s:
        for b in batches(1):
            s.send(b)
    wait_for(lambda: r.stats()[0].frames >= 13, "frames arrive")  # schema + 12 batches
    held = r.memory
    assert budget.used == held.held <= budget.limit
    assert held.spilled_bytes > 0 and budget.spilled_bytes == held.spilled_bytes
    got = pa.Table.from_batches(list(r.batches()))
    assert got.equals(pa.Table.from_batches(batches(1)))
    st = r.stats()[0]
    assert st.spilled_frames > 0 and st.spilled_bytes == held.spilled_bytes
    assert budget.used == 0 and held.held == 0  # consumed: back to the budget
    assert 0 < held.peak <= budget.limit
    assert rx.memory_used() == 0  # the service's own pool was never used
    r.close()


def test_an_operator_holding_the_budget_makes_frames_spill(services, tmp_path):
    rx, tx = services
    budget = memory.MemoryBudget(4 << 20, str(tmp_path / "rx"))
    rx.use_memory("q", budget)
    hog = budget.reservation()
    hog.grow(4 << 20)  # a hash table holds everything
    r = rx.open_receiver(("q", 1, 0), 1)
    with tx.connect(rx.endpoint(), ("q", 1, 0), 0, True) as s:
        for b in batches(2, n=4):
            s.send(b)
    wait_for(lambda: r.stats()[0].frames >= 5, "frames arrive")
    assert r.stats()[0].spilled_frames == 4 and r.memory.peak == 0
    hog.free()
    assert pa.Table.from_batches(list(r.batches())).equals(
        pa.Table.from_batches(batches(2, n=4)))
    assert budget.used == 0
    r.close()


def test_frames_before_the_budget_move_under_it(services, tmp_path):
    # A sender may say HELLO before the receiving slice (and the query's budget) exists on
    # this process: its frames wait under the service's pool, then move to the budget.
    rx, tx = services
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, False)
    for b in batches(3, n=2):
        s.send(b)
    s.finish()
    wait_for(lambda: rx.memory_used() >= 2 * ROWS * 16, "frames wait in the service's pool")
    budget = memory.MemoryBudget(64 << 20, str(tmp_path / "rx"))
    rx.use_memory("q", budget)
    assert rx.memory_used() == 0 and budget.used >= 2 * ROWS * 16
    r = rx.open_receiver(("q", 1, 0), 1)
    assert pa.Table.from_batches(list(r.batches())).equals(
        pa.Table.from_batches(batches(3, n=2)))
    assert budget.used == 0 and rx.memory_used() == 0
    r.close()
    rx.forget_memory("q")


def test_cancel_gives_the_held_frames_back(services, tmp_path):
    rx, tx = services
    budget = memory.MemoryBudget(64 << 20, str(tmp_path / "rx"))
    rx.use_memory("q", budget)
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, True)
    for b in batches(4, n=3):
        s.send(b)
    wait_for(lambda: budget.used >= 3 * ROWS * 16, "frames held")
    rx.cancel("q")
    assert budget.used == 0
    s.close()
    r.close()


def test_motion_receive_operator_reports_peak_and_spilled(services, tmp_path):
    rx, tx = services
    budget = memory.MemoryBudget(1 << 20, str(tmp_path / "rx"))
    rx.use_memory("q", budget)
    fields = (pl.Field("tag", types.INT8), pl.Field("seq", types.INT8))
    child = pl.Values(fields=fields, rows=())
    node = pl.Motion(fields=fields, child=child, kind=pl.MotionKind.GATHER, slice_id=1)
    receiver = rx.open_receiver(("q", 1, 0), 2)
    ctx = base.ExecContext(memory=budget, receive=lambda m: receiver.batches())

    def send(i):
        with tx.connect(rx.endpoint(), ("q", 1, 0), i, i == 0) as s:
            for b in batches(10 + i, n=6):
                s.send(b)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    op = MotionRecvOp(node)
    got = pa.Table.from_batches(list(op.execute(ctx)))
    assert got.num_rows == 12 * ROWS
    assert sorted(got.column("seq").to_pylist()) == sorted(
        pa.Table.from_batches(batches(10, n=6) + batches(11, n=6)).column("seq").to_pylist())
    assert op.memory is receiver.memory
    assert 0 < op.memory.peak <= budget.limit and op.memory.spilled_bytes > 0
    assert budget.used == 0
    receiver.close()
