"""Channels within one process, over both transports: every Motion kind, end of stream,
errors, STOP, early senders, cancellation, statistics and clean shutdown.

Sender and receiver live in two MotionServices of this process and talk through the same
sockets (and, for shm, the same memfd slabs) as they would between processes;
test_processes.py repeats the essentials across processes.
"""

from __future__ import annotations

import heapq
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from motion import hashing, route
from motion.errors import MotionError
from motion.route import Route
from motion.service import MotionService

TRANSPORTS = ["shm", "tcp"]
SCHEMA = pa.schema([("k", pa.int64()), ("s", pa.string()), ("id", pa.int64())])


def make_batches(sender: int, sizes=(10, 30_000, 0, 2_000), seed=0) -> list[pa.RecordBatch]:
    """Batches of one sender: small (inline) and large (shm slab) ones, one empty; ids are
    unique across senders and ascending within one."""
    rng = np.random.default_rng(seed * 1000 + sender)
    out, start = [], sender * 10_000_000
    for n in sizes:
        out.append(pa.record_batch({
            "k": pa.array(rng.integers(0, 5000, n)),
            "s": pa.array([f"s{sender}-{i % 97}" for i in range(n)], pa.string()),
            "id": pa.array(np.arange(start, start + n)),
        }, schema=SCHEMA))
        start += n
    return out


def table_of(batches) -> pa.Table:
    return pa.Table.from_batches(list(batches), schema=SCHEMA).sort_by("id")


@pytest.fixture
def pair(tmp_path):
    rx = MotionService("127.0.0.1", str(tmp_path / "rx"), 64 << 20)
    tx = MotionService("127.0.0.1", str(tmp_path / "tx"), 64 << 20)
    yield rx, tx
    tx.close()
    rx.close()


def run_senders(tx, endpoints, qid, kind, n_senders, transport, keys=(0,)):
    """Each sender routes its batches to every receiver and finishes; in threads."""
    errors = []

    def one(i):
        try:
            senders = [tx.connect(ep, (qid, 1, r), i, transport == "shm", schema=SCHEMA)
                       for r, ep in enumerate(endpoints)]
            for batch in make_batches(i):
                for s, part in zip(senders, route.route(batch, kind, len(senders), list(keys))):
                    if part is not None:
                        s.send(part)
            for s in senders:
                s.finish()
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n_senders)]
    for t in threads:
        t.start()
    return threads, errors


def join(threads, errors):
    for t in threads:
        t.join(20)
        assert not t.is_alive()
    assert not errors, errors


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_gather(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 3)
    threads, errors = run_senders(tx, [rx.endpoint()], "q", Route.TO_ONE, 3, transport)
    got = table_of(r.batches())
    join(threads, errors)
    assert got.equals(table_of(b for i in range(3) for b in make_batches(i)))
    stats = r.stats()
    assert [s.transport for s in stats] == [transport] * 3
    assert all(s.rows == 32_010 and s.frames == 5 for s in stats)  # schema, 3 batches, END
    r.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_gather_merge_streams(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 3)
    threads, errors = run_senders(tx, [rx.endpoint()], "q", Route.TO_ONE, 3,
                                  transport)
    streams = r.streams()
    # Read the last stream first: the others wait in memory meanwhile.
    per_sender = [None, None, None]
    for i in (2, 0, 1):
        per_sender[i] = [row for b in streams[i] for row in b.column("id").to_pylist()]
    join(threads, errors)
    for i, ids in enumerate(per_sender):
        assert ids == [x for b in make_batches(i) for x in b.column("id").to_pylist()]
    merged = list(heapq.merge(*per_sender))
    assert merged == sorted(merged) and len(merged) == 3 * 32_010
    with pytest.raises(MotionError, match="already read"):
        r.batches()
    r.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_redistribute(tmp_path, transport):
    services = [MotionService("127.0.0.1", str(tmp_path / f"s{i}"), 64 << 20) for i in range(3)]
    try:
        eps = [s.endpoint() for s in services]
        receivers = [s.open_receiver(("q", 1, i), 2) for i, s in enumerate(services)]
        # Service 0 also sends, to itself among others.
        threads, errors = run_senders(services[0], eps, "q", Route.BY_HASH, 2,
                                      transport, keys=(0, 1))
        parts = [table_of(r.batches()) for r in receivers]
        join(threads, errors)
        everything = table_of(b for i in range(2) for b in make_batches(i))
        seg = hashing.segment_ids([everything.column("k"), everything.column("s")], 3)
        for i, part in enumerate(parts):
            assert part.equals(everything.filter(pa.array(seg == i)))
            assert {s.transport for s in receivers[i].stats()} == {transport}
    finally:
        for s in services:
            s.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_broadcast(tmp_path, transport):
    services = [MotionService("127.0.0.1", str(tmp_path / f"s{i}"), 64 << 20) for i in range(3)]
    try:
        eps = [s.endpoint() for s in services]
        receivers = [s.open_receiver(("q", 1, i), 2) for i, s in enumerate(services)]
        threads, errors = run_senders(services[1], eps, "q", Route.TO_EVERY, 2,
                                      transport)
        everything = table_of(b for i in range(2) for b in make_batches(i))
        for r in receivers:
            assert table_of(r.batches()).equals(everything)
        join(threads, errors)
    finally:
        for s in services:
            s.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_error_frame_fails_the_receiver(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 2)
    ok = tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm")
    bad = tx.connect(rx.endpoint(), ("q", 1, 0), 1, transport == "shm")
    ok.send(make_batches(0)[1])
    bad.send(make_batches(1)[1])
    bad.fail("division by zero on segment 1", "22012", "DivisionByZero")
    it = r.batches()
    with pytest.raises(MotionError, match="division by zero on segment 1") as exc:
        for _ in it:
            pass
    assert (exc.value.sqlstate, exc.value.kind) == ("22012", "DivisionByZero")
    # The channel failed: the healthy sender is told to stop, quietly.
    deadline = time.monotonic() + 5
    while ok.send(make_batches(0)[0]) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not ok.send(make_batches(0)[0])
    ok.finish()
    r.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_close_without_finish_is_a_lost_sender(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 2)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm")
    healthy = tx.connect(rx.endpoint(), ("q", 1, 0), 1, transport == "shm")
    s.send(make_batches(0)[1])
    s.close()
    with pytest.raises(MotionError, match="lost its connection before end of stream") as exc:
        list(r.batches())
    assert exc.value.sqlstate == "58030"
    deadline = time.monotonic() + 30  # generous: the STOP travels on a loaded machine
    while healthy.send(make_batches(1)[0]):  # told to stop, not failed
        assert time.monotonic() < deadline
        time.sleep(0.005)
    healthy.finish()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_receiver_close_stops_senders(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm")
    big = make_batches(0)[1]
    assert s.send(big)
    next(iter(r.batches()))
    r.close()  # e.g. a LIMIT is satisfied
    deadline = time.monotonic() + 5
    while s.send(big):
        assert time.monotonic() < deadline, "sender was never told to stop"
        time.sleep(0.005)
    assert s.send(big) is False
    s.finish()  # quiet: stopping is not an error
    # Late senders of the closed channel are turned away the same way.
    late = tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm")
    deadline = time.monotonic() + 5
    while late.send(big):
        assert time.monotonic() < deadline
        time.sleep(0.005)
    late.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_senders_may_come_before_the_receiver(pair, transport):
    rx, tx = pair
    for i in range(2):
        with tx.connect(rx.endpoint(), ("early", 1, 0), i, transport == "shm") as s:
            for b in make_batches(i):
                s.send(b)
    deadline = time.monotonic() + 5
    while rx.memory_used() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    r = rx.open_receiver(("early", 1, 0), 2)
    assert table_of(r.batches()).equals(table_of(b for i in range(2) for b in make_batches(i)))
    assert rx.memory_used() == 0
    with pytest.raises(MotionError, match="opened before"):
        rx.open_receiver(("early", 1, 0), 2)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_empty_stream_carries_the_schema(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 1)
    tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm", schema=SCHEMA).finish()
    assert list(r.batches()) == []
    assert r.schema.equals(SCHEMA)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_dictionary_columns_arrive_decoded(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 1)
    b = pa.record_batch({"d": pa.array(["x", "y"] * 50_000).dictionary_encode()})
    with tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm") as s:
        s.send(b)
    got = list(r.batches())
    assert got[0].schema.field("d").type == pa.string()
    assert got[0].column(0).to_pylist() == ["x", "y"] * 50_000


def test_schema_mismatch_between_senders(pair):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 2)
    tx.connect(rx.endpoint(), ("q", 1, 0), 0, True, schema=SCHEMA).finish()
    other = pa.schema([("x", pa.int32())])
    tx.connect(rx.endpoint(), ("q", 1, 0), 1, False, schema=other).finish()
    with pytest.raises(MotionError, match="sends") as exc:
        list(r.batches())
    assert exc.value.sqlstate == "XX000"


def test_sender_checks_its_batches(pair):
    rx, tx = pair
    rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, True, schema=SCHEMA)
    with pytest.raises(MotionError, match="differs"):
        s.send(pa.record_batch({"x": pa.array([1])}))
    s.finish()
    with pytest.raises(MotionError, match="after finish"):
        s.send(make_batches(0)[0])


def test_sender_index_out_of_range(pair):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 1)
    tx.connect(rx.endpoint(), ("q", 1, 0), 5, True, schema=SCHEMA).close()
    with pytest.raises(MotionError, match="out of range"):
        list(r.batches())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cancel_tears_down_the_query(pair, transport):
    rx, tx = pair
    same = transport == "shm"
    r = rx.open_receiver(("qc", 1, 0), 2)
    other = rx.open_receiver(("qkeep", 1, 0), 1)
    remote = tx.connect(rx.endpoint(), ("qc", 1, 0), 0, same)  # in another service
    local = rx.connect(rx.endpoint(), ("qc", 1, 0), 1, same)  # in the cancelling service
    keep = tx.connect(rx.endpoint(), ("qkeep", 1, 0), 0, same)
    # A channel of the query the other way: the cancelling process sends, tx receives.
    back = tx.open_receiver(("qc", 9, 0), 1)
    out = rx.connect(tx.endpoint(), ("qc", 9, 0), 0, same)
    big = make_batches(0)[1]
    remote.send(big)
    local.send(big)
    keep.send(big)
    out.send(big)
    caught = []

    def consume():
        try:
            for _ in r.batches():
                pass
        except MotionError as exc:
            caught.append(exc)

    t = threading.Thread(target=consume)
    t.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    rx.cancel("qc")
    t.join(5)
    assert not t.is_alive() and caught and caught[0].sqlstate == "57014"
    assert time.monotonic() - t0 < 5
    with pytest.raises(MotionError) as exc:
        local.send(big)
    assert exc.value.sqlstate == "57014"
    deadline = time.monotonic() + 5
    with pytest.raises(MotionError) as exc:
        while time.monotonic() < deadline:
            remote.send(big)
            time.sleep(0.005)
    assert exc.value.sqlstate == "57014"
    remote.close()
    local.close()
    with pytest.raises(MotionError, match="cancelled") as exc:
        list(back.batches())  # told by an ERROR frame, not just a dropped connection
    assert exc.value.sqlstate == "57014"
    out.close()
    back.close()
    with pytest.raises(MotionError, match="cancelled"):
        rx.open_receiver(("qc", 2, 0), 1)
    with pytest.raises(MotionError, match="cancelled"):
        rx.connect(rx.endpoint(), ("qc", 2, 0), 0, same)
    # Late senders of the cancelled query are turned away, other queries go on.
    late = tx.connect(rx.endpoint(), ("qc", 3, 0), 0, same)
    deadline = time.monotonic() + 5
    with pytest.raises(MotionError):
        while time.monotonic() < deadline:
            late.send(big)
            time.sleep(0.005)
    late.close()
    keep.finish()
    assert sum(b.num_rows for b in other.batches()) == big.num_rows


def test_close_joins_threads_and_fails_open_receivers(tmp_path):
    before = {t for t in threading.enumerate() if t.name == "motion-io"}
    rx = MotionService("127.0.0.1", str(tmp_path), 1 << 20)
    tx = MotionService("127.0.0.1", str(tmp_path), 1 << 20)
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, True)
    s.send(make_batches(0)[1])
    rx.close()
    with pytest.raises(MotionError) as exc:
        list(r.batches())
    assert exc.value.sqlstate == "57014"
    tx.close()
    with pytest.raises(MotionError):
        s.send(make_batches(0)[1])
    assert not rx.io_thread().is_alive() and not tx.io_thread().is_alive()
    assert {t for t in threading.enumerate() if t.name == "motion-io"} == before
    with pytest.raises(MotionError, match="closed"):
        rx.open_receiver(("q", 2, 0), 1)
    rx.close()  # idempotent


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_wide_schema_larger_than_a_socket_message(pair, transport):
    rx, tx = pair
    wide = pa.record_batch({f"column_with_a_long_name_{i}": pa.array([i, i + 1])
                            for i in range(3000)})
    assert len(wide.schema.serialize()) > 64 << 10
    r = rx.open_receiver(("q", 1, 0), 1)
    with tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm") as s:
        s.send(wide)
    got = list(r.batches())
    assert len(got) == 1 and got[0].equals(wide)


def test_runtime_objects_refuse_to_pickle(pair):
    import pickle

    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 1)
    s = tx.connect(rx.endpoint(), ("q", 1, 0), 0, True)
    for obj in (rx, r, s):
        with pytest.raises(TypeError, match="bound to its process"):
            pickle.dumps(obj)
    assert pickle.loads(pickle.dumps(rx.endpoint())) == rx.endpoint()
    s.finish()
    r.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_failing_inside_with_after_stop_is_quick(pair, transport):
    rx, tx = pair
    r = rx.open_receiver(("q", 1, 0), 1)
    r.close()
    t0 = time.monotonic()
    with pytest.raises(RuntimeError):
        with tx.connect(rx.endpoint(), ("q", 1, 0), 0, transport == "shm") as s:
            deadline = time.monotonic() + 5
            while s.send(make_batches(0)[0]):
                assert time.monotonic() < deadline
                time.sleep(0.005)
            raise RuntimeError("operator failed")
    assert time.monotonic() - t0 < 3
