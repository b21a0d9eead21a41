"""segment/memory.py: budget accounting (refusals, forced grows, peak, threads), spill
files (round trip, schema, deletion on close and by the budget), reservations, and the
ExecContext default."""

from __future__ import annotations

import os
import threading

import numpy as np
import pyarrow as pa
import pytest

from planner import errors
from segment import memory
from segment.operators import base


def test_reserve_refuses_beyond_the_limit_and_force_does_not():
    b = memory.MemoryBudget(100, "/tmp")
    assert b.reserve(60) and not b.reserve(41) and b.used == 60
    b.force(100)
    assert b.used == 160 and b.peak == 160 and b.available == 0
    b.release(160)
    assert b.used == 0 and b.peak == 160


def test_reservations_share_the_budget():
    b = memory.MemoryBudget(1000, "/tmp")
    r1, r2 = b.reservation(), b.reservation()
    assert r1.try_grow(700)
    assert not r2.try_grow(400) and r2.size == 0
    assert r1.try_resize(200) and r2.try_resize(800)
    assert not r1.try_resize(201)
    r2.resize(2000)  # forced
    assert b.used == 2200 and r2.peak == 2000
    r1.free()
    r2.free()
    assert b.used == 0


def test_threads_account_exactly():
    b = memory.MemoryBudget(1 << 40, "/tmp")

    def work():
        r = b.reservation()
        for _ in range(2000):
            assert r.try_grow(3)
            r.shrink(3)
        r.grow(5)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert b.used == 40


def test_spill_file_round_trip_and_deletion(tmp_path):
    b = memory.MemoryBudget(1 << 20, str(tmp_path / "spill"))  # created when first used
    r = b.reservation()
    f = r.spill_file()
    batches = [pa.record_batch({"a": pa.array(np.arange(i, i + 1000)),
                                "s": pa.array([f"x{j}" for j in range(1000)])})
               for i in range(0, 5000, 1000)]
    for batch in batches:
        f.write(batch)
    assert f.rows == 5000 and r.spilled_bytes == b.spilled_bytes == sum(x.nbytes for x in batches)
    assert [x.equals(y) for x, y in zip(f.batches(), batches)] == [True] * 5
    assert b.open_files == 1 and os.listdir(tmp_path / "spill") == []  # unnamed
    f.close()
    assert b.open_files == 0
    g = b.spill_file()
    g.write(batches[0])
    b.close()  # the query's end closes what an operator left
    assert g.closed and b.open_files == 0


def test_unwritable_spill_dir_is_a_query_error(tmp_path):
    (tmp_path / "file").write_text("")
    b = memory.MemoryBudget(1 << 20, str(tmp_path / "file" / "sub"))
    with pytest.raises(errors.QueryError, match="temporary file"):
        b.spill_file().write(pa.record_batch({"a": [1]}))


def test_exec_context_has_a_default_budget():
    ctx = base.ExecContext()
    assert ctx.memory.limit == memory.DEFAULT_LIMIT
    assert base.ExecContext().memory is not ctx.memory
