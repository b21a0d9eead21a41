"""`raympp clickbench load`: create `hits` and fill it, as a client over pgwire.

Three sources:
- synthetic (default): the segments generate the rows themselves, `INSERT INTO hits
  SELECT * FROM clickbench_hits(seed, rows, first_block, blocks)` (planner/
  table_functions.py): each segment makes every n-th block of segment/table_functions/
  clickbench_hits.py in parallel and a Motion moves each row to the segment of its UserID, so no
  file is written anywhere and nothing passes through the coordinator. (bench/clickbench.py
  writes the same rows as Parquet parts, `synthetic_parts`, to load every engine alike.)
- the real hits.parquet (or the 100 athena_partitioned files): those files carry no
  logical types (strings are BINARY, EventTime and the other times Unix seconds,
  EventDate a day number), so their row groups are converted to the table's types in
  parallel processes and written as part files into a temporary directory; each part is
  loaded with `COPY hits FROM '<part>' (FORMAT parquet)`, which every segment reads and
  keeps its own rows of. Conversion and COPY overlap. The server must see the client's
  temporary directory (same host or a shared file system; `--tmp-dir` chooses it).
- the real hits.tsv (optionally .gz): streamed with `COPY hits FROM STDIN` (PostgreSQL
  text format, as ClickBench loads PostgreSQL); the coordinator routes the rows.

The table is create.sql as published plus `DISTRIBUTED BY (UserID)`: UserID has about
18M distinct values in the real data and no value holds more than a fraction of a percent
of the rows, so segments get even shares; COUNT(DISTINCT UserID) (queries 5, 9-12, 14,
23) and GROUP BY UserID (16, 17, 19) are then local to a segment. CounterID would be a
poor key: counter 62 alone holds the rows that queries 37-43 read, so one segment would
do all their work.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import queue
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from planner import table_functions
from segment.table_functions import clickbench_hits
from workloads.clickbench import sql

DEFAULT_KEY = "UserID"
TSV_CHUNK_BYTES = 4 << 20
REAL_PART_ROWS = 1 << 19
# Blocks of synthetic rows per INSERT (each block is clickbench_hits.BLOCK_ROWS rows).
GENERATED_BLOCKS_PER_STATEMENT = 4


@dataclass(frozen=True)
class ConnInfo:
    host: str = "127.0.0.1"
    port: int = 5433
    user: str = "raympp"
    dbname: str = "raympp"
    password: str | None = None

    def connect(self, autocommit: bool = True):
        import psycopg

        kw = {"password": self.password} if self.password else {}
        return psycopg.connect(host=self.host, port=self.port, user=self.user,
                               dbname=self.dbname, autocommit=autocommit, **kw)


class Progress:
    """What a load reports: rows generated/converted (`made`) and rows loaded (`loaded`).
    The CLI draws them with rich; tests pass None."""

    def __init__(self, total: int | None, on_made: Callable[[int], None] | None = None,
                 on_loaded: Callable[[int], None] | None = None):
        self.total = total
        self.on_made = on_made or (lambda n: None)
        self.on_loaded = on_loaded or (lambda n: None)


def create_table(conn, distributed_by: str | None = DEFAULT_KEY) -> None:
    conn.execute("DROP TABLE IF EXISTS hits")
    conn.execute(sql.create_statement(distributed_by))


# --------------------------------------------------------------------------- part files

def write_synthetic_part(seed: int, rows: int, i: int, size: int, path: str) -> int:
    """Write block i of the synthetic table to `path` (Parquet); returns its rows."""
    batch = clickbench_hits.block(seed, rows, i, size)
    _write_parquet(batch, path)
    return batch.num_rows


def _write_parquet(batch: pa.RecordBatch, path: str) -> None:
    tmp = path + ".tmp"
    # Dictionary-encoded, uncompressed: the segments decode it quickly and it stays small.
    pq.write_table(pa.Table.from_batches([batch]), tmp, compression="none",
                   row_group_size=max(1, batch.num_rows))
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def synthetic_parts(seed: int, rows: int, directory: str, jobs: int,
                    size: int = clickbench_hits.BLOCK_ROWS) -> Iterator[tuple[str, int]]:
    """Generate the synthetic table as part files in `directory`, `jobs` processes at a
    time, one per block of `size` rows; yields (path, rows) as parts are written (not in
    block order)."""
    tasks = [(seed, rows, i, size, os.path.join(directory, f"hits-{i:05d}.parquet"))
             for i in range(table_functions.n_blocks(rows, size))]
    yield from _run_parts(write_synthetic_part, tasks, jobs)


def _run_parts(fn, tasks: list[tuple], jobs: int) -> Iterator[tuple[str, int]]:
    if jobs <= 1 or len(tasks) == 1:
        for t in tasks:
            yield t[-1], fn(*t)
        return
    # spawn: the caller may hold threads (a server in tests, rich's refresh thread).
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = {pool.submit(fn, *t): t[-1] for t in tasks}
        try:
            for f in cf.as_completed(futures):
                yield futures[f], f.result()
        finally:
            for f in futures:
                f.cancel()


# --------------------------------------------------------------------------- real data

def real_parquet_tasks(paths: list[str], directory: str) -> list[tuple]:
    """One task per group of row groups (about REAL_PART_ROWS rows) of each input file."""
    tasks = []
    for p in paths:
        meta = pq.ParquetFile(p).metadata
        group, rows = [], 0
        for g in range(meta.num_row_groups):
            group.append(g)
            rows += meta.row_group(g).num_rows
            if rows >= REAL_PART_ROWS:
                tasks.append((p, tuple(group), ""))
                group, rows = [], 0
        if group:
            tasks.append((p, tuple(group), ""))
    return [(p, g, os.path.join(directory, f"hits-{i:05d}.parquet"))
            for i, (p, g, _) in enumerate(tasks)]


def convert_real_part(source: str, row_groups: tuple[int, ...], path: str) -> int:
    """Read row groups of a ClickBench Parquet file, convert them to the table's types
    and write them to `path`; returns the rows."""
    table = pq.ParquetFile(source).read_row_groups(list(row_groups))
    batch = convert_real(table)
    _write_parquet(batch, path)
    return batch.num_rows


def convert_real(table: pa.Table) -> pa.RecordBatch:
    """The published Parquet's columns in the table's physical types: BINARY -> string,
    Unix seconds -> timestamp[us], day numbers -> date32, integers to their widths."""
    by_name = {name.lower(): name for name in table.column_names}
    schema = clickbench_hits.arrow_schema()
    arrays = []
    for f in schema:
        if f.name not in by_name:
            raise ValueError(f"column {f.name!r} is missing from the Parquet file")
        arrays.append(_convert_column(table.column(by_name[f.name]).combine_chunks(), f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _convert_column(arr: pa.Array, target: pa.DataType) -> pa.Array:
    src = arr.type
    if pa.types.is_dictionary(src):
        arr, src = arr.dictionary_decode(), arr.type.value_type
    if arr.null_count:
        arr = arr.fill_null(pa.scalar("" if pa.types.is_string(target) else 0)
                            if not pa.types.is_temporal(target) else 0)
    if pa.types.is_string(target):
        if pa.types.is_string(src):
            return arr
        try:
            return arr.cast(pa.string())
        except pa.ArrowInvalid:  # bytes that are not UTF-8: replace them, as psql would not
            return pa.array([None if b is None else b.decode("utf-8", "replace")
                             for b in arr.to_pylist()], pa.string())
    if pa.types.is_timestamp(target):
        if pa.types.is_timestamp(src):
            return arr.cast(target)
        seconds = arr.cast(pa.int64())
        return pc.multiply(seconds, 1_000_000).cast(target)
    if pa.types.is_date(target):
        if pa.types.is_date(src):
            return arr.cast(target)
        if pa.types.is_timestamp(src):
            return arr.cast(pa.date32())
        return arr.cast(pa.int32()).cast(target)
    try:
        return arr.cast(target)
    except pa.ArrowInvalid:  # unsigned values beyond the signed width: keep the bits
        return arr.cast(target, safe=False)


# --------------------------------------------------------------------------- COPY

def copy_file(conn, path: str, table: str = "hits") -> int:
    quoted = path.replace("'", "''")
    cur = conn.execute(f"COPY {table} FROM '{quoted}' (FORMAT parquet)")
    return cur.rowcount


def load_parts(info: ConnInfo, parts: Iterable[tuple[str, int]], copy_jobs: int,
               progress: Progress, delete: bool = True) -> int:
    """COPY each part as it arrives, over `copy_jobs` connections; returns rows loaded."""
    work: queue.Queue = queue.Queue(maxsize=max(2, copy_jobs * 2))
    done = [0]
    failure: list[BaseException] = []
    lock = threading.Lock()

    def loader():
        try:
            with info.connect() as conn:
                while True:
                    item = work.get()
                    if item is None:
                        return
                    if failure:
                        continue
                    path, _ = item
                    n = copy_file(conn, path)
                    if delete:
                        os.unlink(path)
                    with lock:
                        done[0] += n
                    progress.on_loaded(n)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            failure.append(e)
            while work.get() is not None:  # drain so the producer never blocks
                pass

    threads = [threading.Thread(target=loader, daemon=True) for _ in range(max(1, copy_jobs))]
    for t in threads:
        t.start()
    try:
        for path, n in parts:
            progress.on_made(n)
            if failure:
                break
            work.put((path, n))
    finally:
        for _ in threads:
            work.put(None)
        for t in threads:
            t.join()
    if failure:
        raise failure[0]
    return done[0]


def load_generated(info: ConnInfo, seed: int, rows: int, progress: Progress,
                   blocks_per_statement: int = GENERATED_BLOCKS_PER_STATEMENT) -> int:
    """Synthetic rows made by the segments themselves: `INSERT INTO hits SELECT * FROM
    clickbench_hits(seed, rows, first, k)` over successive groups of blocks (each segment
    generates its share of a group in parallel, the rows move to their segments by
    UserID), all in one transaction so that a failure leaves no half-loaded table.
    Progress advances after each group."""
    blocks = table_functions.n_blocks(rows) if rows else 0
    done = 0
    with info.connect(autocommit=False) as conn:
        for first in range(0, blocks, blocks_per_statement):
            cur = conn.execute(f"INSERT INTO hits SELECT * FROM clickbench_hits("
                               f"{int(seed)}, {int(rows)}, {first}, {blocks_per_statement})")
            done += cur.rowcount
            progress.on_made(cur.rowcount)
            progress.on_loaded(cur.rowcount)
        conn.commit()
    return done


def load_tsv(info: ConnInfo, path: str, progress: Progress) -> int:
    """Stream a hits.tsv (PostgreSQL text format; .gz read as gzip) with COPY FROM STDIN."""
    import gzip

    with info.connect() as conn, open(path, "rb") as raw:
        f = gzip.GzipFile(fileobj=raw) if path.endswith(".gz") else raw
        seen = 0
        with conn.cursor() as cur:
            with cur.copy("COPY hits FROM STDIN") as copy:
                while True:
                    data = f.read(TSV_CHUNK_BYTES)
                    if not data:
                        break
                    copy.write(data)
                    # Progress in bytes of the file on disk (compressed or not).
                    pos = raw.tell()
                    progress.on_loaded(pos - seen)
                    seen = pos
            return cur.rowcount


# --------------------------------------------------------------------------- entry points

@dataclass
class LoadResult:
    rows: int
    seconds: float          # CREATE TABLE and loading, without ANALYZE
    source: str
    analyze_s: float | None = None


def default_jobs() -> int:
    return max(1, min(8, (os.cpu_count() or 2)))


def load(info: ConnInfo, *, rows: int = 1_000_000, seed: int = 1,
         sources: list[str] | None = None, distributed_by: str | None = DEFAULT_KEY,
         jobs: int | None = None, copy_jobs: int = 1, tmp_dir: str | None = None,
         progress: Progress | None = None, analyze: bool = True) -> LoadResult:
    """Create `hits` and load it from `sources` (hits.parquet files / a directory of them,
    or one hits.tsv[.gz]) or, without sources, `rows` synthetic rows from `seed`."""
    jobs = jobs or default_jobs()
    t0 = time.perf_counter()
    with info.connect() as conn:
        create_table(conn, distributed_by)
    tsv = [s for s in sources or [] if ".tsv" in os.path.basename(s)]
    if tsv:
        if len(sources) != 1:
            raise ValueError("give one hits.tsv, or Parquet files")
        progress = progress or Progress(os.path.getsize(tsv[0]))
        n = load_tsv(info, tsv[0], progress)
        source = tsv[0]
    elif not sources:
        n = load_generated(info, seed, rows, progress or Progress(rows))
        source = f"synthetic (seed {seed}), generated on the segments"
    else:
        directory = tempfile.mkdtemp(prefix="raympp-clickbench-", dir=tmp_dir)
        os.chmod(directory, 0o755)  # segments may run as another user
        try:
            files = expand_parquet(sources)
            tasks = real_parquet_tasks(files, directory)
            total = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            progress = progress or Progress(total)
            parts = _run_parts(convert_real_part, tasks, jobs)
            source = ", ".join(files) if len(files) <= 3 else f"{len(files)} Parquet files"
            n = load_parts(info, parts, copy_jobs, progress)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    result = LoadResult(n, time.perf_counter() - t0, source)
    if analyze:
        result.analyze_s = analyze_table(info)
    return result


def analyze_table(info: ConnInfo) -> float:
    """ANALYZE hits (statistics for the planner's group estimates); returns seconds."""
    t0 = time.perf_counter()
    with info.connect() as conn:
        conn.execute("ANALYZE hits")
    return time.perf_counter() - t0


def expand_parquet(sources: list[str]) -> list[str]:
    out = []
    for s in sources:
        p = Path(s)
        if p.is_dir():
            out.extend(sorted(str(f) for f in p.glob("*.parquet")))
        else:
            out.append(str(p))
    if not out:
        raise ValueError(f"no Parquet files in {sources}")
    return out

