"""Motion transports against Ray's object store: throughput and per-frame latency.

    .venv/bin/python bench/motion.py                   # 1 MB, 16 MB and 128 MB frames
    .venv/bin/python bench/motion.py --sizes 16 --repeat 5

Every path moves the same Arrow record batch (int64 and float64 columns) from a sending
process to a receiving process on this host:
- shm: raympp MotionService to MotionService over shared memory (memfd slabs, fds over a
  Unix socket); the receiver gets zero-copy batches;
- tcp: the same services over TCP on 127.0.0.1;
- ray: one Ray actor ray.put()s each batch, another ray.get()s it (zero-copy from the
  object store), refs handed over in one list ("put/get"); and, as a second Ray figure, the
  sending actor yields batches from a streaming generator that the receiving actor consumes
  ("stream"), which is how raympp moved Motions before this transport.
Ray runs locally on 127.0.0.1 with usage stats off.

Throughput: N frames back to back; time from the sender's first send to the receiver
holding the last batch (both read CLOCK_MONOTONIC, which is shared by processes of one
host); best of --repeat runs after one warm-up run. Latency: frames sent one at a time,
each after the previous one arrived; one-way time from send() to the received batch,
median. Receivers do not touch the data (all three paths are zero-copy on receipt).

Progress goes to stderr; the table to stdout, whose last line is
`shm_vs_ray_object_store_throughput_ratio: X` for 16 MB frames (X = shm GB/s over the
better of the two Ray figures).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This file is called motion.py: keep its directory off the path so `motion` is the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

HOST = "127.0.0.1"
MB = 1 << 20
FRAMES = {1: 400, 16: 64, 128: 12}
LATENCY_FRAMES = 12


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def make_batch(size_mb: int) -> pa.RecordBatch:
    rows = size_mb * MB // 32
    rng = np.random.default_rng(size_mb)
    return pa.record_batch({
        "a": pa.array(np.arange(rows, dtype=np.int64)),
        "b": pa.array(rng.integers(0, 1 << 40, rows)),
        "c": pa.array(rng.random(rows)),
        "d": pa.array(rng.random(rows)),
    })


# --- raympp transports: one process per end ------------------------------------------------
def _mp_receiver(conn, spill_dir: str) -> None:
    from motion.service import MotionService

    with MotionService(HOST, spill_dir, 1 << 30) as svc:
        conn.send(svc.endpoint())
        while True:
            job = conn.recv()
            if job is None:
                return
            key, n, mode = job
            rx = svc.open_receiver(key, 1)
            times = []
            conn.send("ready")
            for batch in rx.batches():
                times.append(time.perf_counter())
                del batch
                if mode == "latency":
                    conn.send(times[-1])
            rx.close()
            conn.send(times)


def _mp_sender(conn, spill_dir: str, size_mb: int) -> None:
    from motion.service import MotionService

    batch = make_batch(size_mb)
    with MotionService(HOST, spill_dir, 1 << 30) as svc:
        conn.send("ready")
        while True:
            job = conn.recv()
            if job is None:
                return
            endpoint, key, n, same_node, mode = job
            tx = svc.connect(endpoint, key, 0, same_node, schema=batch.schema)
            starts = []
            for _ in range(n):
                starts.append(time.perf_counter())
                tx.send(batch)
                if mode == "latency":
                    conn.recv()  # the receiver has it
            tx.finish()
            conn.send(starts)


def run_raympp(transport: str, size_mb: int, n: int, repeat: int) -> tuple[float, float]:
    """(best GB/s, median latency in ms) of the shm or tcp transport."""
    ctx = mp.get_context("spawn")
    spill = tempfile.mkdtemp(prefix="raympp-bench-motion-")
    rx_conn, rx_child = ctx.Pipe()
    tx_conn, tx_child = ctx.Pipe()
    rx = ctx.Process(target=_mp_receiver, args=(rx_child, spill))
    tx = ctx.Process(target=_mp_sender, args=(tx_child, spill, size_mb))
    rx.start()
    tx.start()
    try:
        endpoint = rx_conn.recv()
        tx_conn.recv()
        nbytes = pa.ipc.get_record_batch_size(make_batch(size_mb))
        best = 0.0
        for run in range(repeat + 1):
            key = ("bench", transport, size_mb, run)
            rx_conn.send((key, n, "throughput"))
            rx_conn.recv()
            tx_conn.send((endpoint, key, n, transport == "shm", "throughput"))
            starts, times = tx_conn.recv(), rx_conn.recv()
            assert len(times) == n, (len(times), n)
            gbps = n * nbytes / (times[-1] - starts[0]) / 1e9
            if run:  # the first run warms up
                best = max(best, gbps)
        key = ("bench", transport, size_mb, "latency")
        rx_conn.send((key, LATENCY_FRAMES, "latency"))
        rx_conn.recv()
        tx_conn.send((endpoint, key, LATENCY_FRAMES, transport == "shm", "latency"))
        arrivals = []
        for _ in range(LATENCY_FRAMES):
            arrivals.append(rx_conn.recv())
            tx_conn.send("next")
        starts, _ = tx_conn.recv(), rx_conn.recv()
        lat = statistics.median(b - a for a, b in zip(starts, arrivals)) * 1e3
        return best, lat
    finally:
        for conn in (rx_conn, tx_conn):
            try:
                conn.send(None)
            except OSError:
                pass
        for p in (rx, tx):
            p.join(30)
            if p.is_alive():
                p.kill()
        os.rmdir(spill)


# --- Ray's object store --------------------------------------------------------------------
def run_ray(size_mb: int, n: int, repeat: int) -> tuple[float, float, float]:
    """(best put/get GB/s, best streaming GB/s, median put/get latency in ms)."""
    import ray

    @ray.remote
    class Producer:
        def __init__(self, size_mb):
            self.batch = make_batch(size_mb)

        def put(self, n):
            t0 = time.perf_counter()
            return t0, [ray.put(self.batch) for _ in range(n)]

        def put_one(self):
            t0 = time.perf_counter()
            return t0, [ray.put(self.batch)]

        def stream(self, n):
            yield time.perf_counter()
            for _ in range(n):
                yield self.batch

    @ray.remote
    class Consumer:
        def put_get(self, producer, n):
            t0, refs = ray.get(producer.put.remote(n))
            for ref in refs:
                batch = ray.get(ref)
                del batch
            return t0, time.perf_counter()

        def stream(self, producer, n):
            gen = producer.stream.options(num_returns="streaming").remote(n)
            t0 = ray.get(next(gen))
            got = 0
            for ref in gen:
                batch = ray.get(ref)
                got += 1
                del batch, ref
            assert got == n
            return t0, time.perf_counter()

        def one(self, producer):
            t0, refs = ray.get(producer.put_one.remote())
            batch = ray.get(refs[0])
            t1 = time.perf_counter()
            del batch
            return t1 - t0

    nbytes = pa.ipc.get_record_batch_size(make_batch(size_mb))
    producer, consumer = Producer.remote(size_mb), Consumer.remote()
    try:
        best_put = best_stream = 0.0
        for run in range(repeat + 1):
            t0, t1 = ray.get(consumer.put_get.remote(producer, n))
            s0, s1 = ray.get(consumer.stream.remote(producer, n))
            if run:
                best_put = max(best_put, n * nbytes / (t1 - t0) / 1e9)
                best_stream = max(best_stream, n * nbytes / (s1 - s0) / 1e9)
        lat = statistics.median(ray.get(consumer.one.remote(producer))
                                for _ in range(LATENCY_FRAMES)) * 1e3
        return best_put, best_stream, lat
    finally:
        ray.kill(producer)
        ray.kill(consumer)


def start_ray() -> None:
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    import ray

    ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
             num_cpus=4, object_store_memory=4 << 30, log_to_driver=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1,16,128", help="frame sizes in MB")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs after one warm-up")
    ap.add_argument("--skip-ray", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.skip_ray:
        start_ray()
    rows = []
    for size in sizes:
        n = FRAMES.get(size, max(4, 1024 // size))
        row = {"size": size, "n": n}
        for transport in ("shm", "tcp"):
            log(f"{transport} {size} MB x {n} ...")
            row[transport] = run_raympp(transport, size, n, args.repeat)
        if not args.skip_ray:
            log(f"ray {size} MB x {n} ...")
            row["ray"] = run_ray(size, n, args.repeat)
        rows.append(row)
        log(str(row))
    cpus = os.cpu_count()
    print(f"motion transports, sender and receiver in different processes, {cpus} CPUs; "
          f"throughput best of {args.repeat} (GB/s), latency median of {LATENCY_FRAMES} (ms)")
    print(f"{'frame':>7} {'frames':>6} | {'shm GB/s':>8} {'tcp GB/s':>8} {'ray put/get':>11} "
          f"{'ray stream':>10} | {'shm ms':>7} {'tcp ms':>7} {'ray ms':>7}")
    for r in rows:
        ray_put, ray_stream, ray_lat = r.get("ray", (float("nan"),) * 3)
        print(f"{r['size']:>4} MB {r['n']:>6} | {r['shm'][0]:>8.2f} {r['tcp'][0]:>8.2f} "
              f"{ray_put:>11.2f} {ray_stream:>10.2f} | {r['shm'][1]:>7.2f} {r['tcp'][1]:>7.2f} "
              f"{ray_lat:>7.2f}")
    ref = next((r for r in rows if r["size"] == 16), None)
    if ref is None or "ray" not in ref:
        print("shm_vs_ray_object_store_throughput_ratio: NA")
    else:
        print(f"shm_vs_ray_object_store_throughput_ratio: "
              f"{ref['shm'][0] / max(ref['ray'][0], ref['ray'][1]):.2f}")


if __name__ == "__main__":
    main()
