"""Queries whose working set is far above work_mem: raympp spills and answers right, its
segments' memory stays bounded and falls back after each query; DuckDB and PostgreSQL 15
run the same queries in the same run, for answers and time ratios.

    .venv/bin/python bench/spill.py --sf 1 --work-mem 16MB
    .venv/bin/python bench/spill.py --sf 10 --work-mem 256MB --engines raympp,duckdb
    .venv/bin/python bench/spill.py --groups 30M --queries none --work-mem 256MB
    .venv/bin/python bench/spill.py --queries 5 --no-analyze --work-mem 64MB

Workloads:
- TPC-H --queries (default 9,18,21) at --sf, loaded as bench/tpch.py loads it.
- `--groups N`: a GROUP BY over N distinct text keys (`'key-' || g` for g in 1..N, in a
  table distributed by another column, so the grouping redistributes), answered as the
  number of groups and the sum of their counts.
raympp and PostgreSQL get the same work_mem (PostgreSQL: per operator, as it defines it;
raympp: per query per segment). DuckDB runs in memory with its default memory_limit (which
bounds its whole buffer pool, tables included) and threads = segments.
For raympp the report has, per query: time, bytes spilled (EXPLAIN ANALYZE), the
segments' summed resident memory before, at its peak during (sampled every 0.1 s) and
one second after the query. Answers are checked against DuckDB's.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tpch as tb  # noqa: E402
from common import (  # noqa: E402
    PostgresServer, RaymppServer, load_average, log, machine_description, parse_rows,
)
from workloads.tpch import compare, loader, queries, runner, schema  # noqa: E402

ENGINES = ("raympp", "duckdb", "postgres")
GROUP_QUERY = "SELECT count(*), sum(c) FROM (SELECT s, count(*) AS c FROM g_keys GROUP BY s) q"


def units(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*(kB|MB|GB)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"work_mem like 64MB, not {text!r}")
    return int(m[1]) << {"kB": 10, "MB": 20, "GB": 30}[m[2]]


class SegmentMemory:
    """Summed RSS of a raympp server's segment processes, sampled in the background."""

    def __init__(self, srv: RaymppServer):
        import psutil

        self.root = psutil.Process(srv.proc.pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def now(self) -> int:
        total = 0
        for p in self.root.children(recursive=True):
            try:
                if "SegmentActor" in " ".join(p.cmdline()) or p.name().startswith(
                        "ray::SegmentActor"):
                    total += p.memory_info().rss
            except Exception:  # noqa: BLE001 - a process that ended
                pass
        return total

    def __enter__(self):
        self.peak = self.now()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, self.now())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def timed(conn, sql: str, timeout: float):
    t0 = time.perf_counter()
    _cols, rows = runner.execute(conn, sql, timeout)
    return time.perf_counter() - t0, rows


def workloads(args, qdir) -> list[tuple[str, str, bool]]:
    """(name, sql, ordered) of every query of this run."""
    out = []
    for n in args.numbers:
        sql = queries.read(n, qdir)
        out.append((f"Q{n:02d}", sql, queries.has_order_by(sql)))
    if args.groups:
        out.append((f"GROUP BY {args.groups_text} keys", GROUP_QUERY, False))
    return out


def load_groups(conn, n: int, distributed: bool) -> None:
    conn.execute("DROP TABLE IF EXISTS g_keys")
    dist = " DISTRIBUTED BY (k)" if distributed else ""
    conn.execute(f"CREATE TABLE g_keys (k bigint, s text){dist}")
    conn.execute(f"INSERT INTO g_keys SELECT g, 'key-' || g FROM generate_series(1, {n}) g")


def run_raympp(args, files, work) -> dict:
    out = {}
    with RaymppServer(segments=args.segments) as srv:
        conn = srv.connect(options=f"-c work_mem={args.work_mem}")
        try:
            t0 = time.perf_counter()
            if files:
                loader.load_files(conn, files, via="file", distributed=True,
                                  analyze=not args.no_analyze)
            if args.groups:
                load_groups(conn, args.groups, True)
            log(f"[spill] raympp loaded in {time.perf_counter() - t0:.1f}s")
            for name, sql, _ordered in work:
                try:
                    mem = SegmentMemory(srv)
                    before = mem.now()
                    with mem:
                        secs, rows = timed(conn, sql, args.timeout)
                    time.sleep(1.0)
                    after = mem.now()
                    plan = "\n".join(r[0] for r in conn.execute(
                        "EXPLAIN ANALYZE " + sql).fetchall())
                    spilled = sum(int(x) for x in re.findall(r"spilled=(\d+)kB", plan)) << 10
                    out[name] = dict(secs=secs, rows=rows, spilled=spilled, before=before,
                                     peak=mem.peak, after=after)
                    log(f"[spill] raympp {name}: {secs:.2f}s, spilled {spilled >> 20} MB, "
                        f"RSS {before >> 20} -> peak {mem.peak >> 20} -> {after >> 20} MB")
                except Exception as e:  # noqa: BLE001 - reported, the rest still run
                    out[name] = dict(error=runner.describe_error(e))
                    log(f"[spill] raympp {name}: {out[name]['error']}")
                    conn = srv.connect(options=f"-c work_mem={args.work_mem}")
        finally:
            conn.close()
    return out


def run_duckdb(args, files, work) -> dict:
    import duckdb

    # DuckDB's memory_limit bounds its whole buffer pool, the in-memory tables included,
    # so it runs with its default: it is the oracle of the answers and a time reference.
    con = duckdb.connect(":memory:", config={"threads": args.segments})
    out = {}
    try:
        for table in schema.TABLES if files else ():
            con.execute(table.create_sql(distributed=False))
            paths = [str(p) for p in files[table.name]]
            con.execute(f"INSERT INTO {table.name} SELECT * FROM read_parquet({paths!r})")
        if args.groups:
            load_groups(tb.DuckConnection(con), args.groups, False)
        for name, sql, _ in work:
            try:
                secs, rows = timed(tb.DuckConnection(con), sql, args.timeout)
                out[name] = dict(secs=secs, rows=rows)
                log(f"[spill] duckdb {name}: {secs:.2f}s")
            except Exception as e:  # noqa: BLE001
                out[name] = dict(error=runner.describe_error(e))
    finally:
        con.close()
    return out


def run_postgres(args, files, work) -> dict:
    out = {}
    with PostgresServer(settings={"work_mem": args.work_mem}) as pg:
        conn = pg.connect()
        try:
            if files:
                loader.load_files(conn, files, via="stdin", distributed=False, analyze=False)
                for name in schema.NAMES:
                    for sql in schema.index_sql(name):
                        conn.execute(sql)
            if args.groups:
                load_groups(conn, args.groups, False)
            conn.execute("VACUUM ANALYZE")
            for name, sql, _ in work:
                try:
                    secs, rows = timed(conn, sql, args.timeout)
                    out[name] = dict(secs=secs, rows=rows)
                    log(f"[spill] postgres {name}: {secs:.2f}s")
                except Exception as e:  # noqa: BLE001
                    out[name] = dict(error=runner.describe_error(e))
                    conn = pg.connect()
        finally:
            conn.close()
    return out


RUNNERS = {"raympp": run_raympp, "duckdb": run_duckdb, "postgres": run_postgres}


def report(args, results: dict, work) -> None:
    mb = lambda b: f"{b / (1 << 20):,.0f}"  # noqa: E731
    print(f"spill benchmark: work_mem {args.work_mem}; TPC-H SF {args.sf:g} queries "
          f"{args.numbers or 'none'}; groups {args.groups_text or 'none'}; raympp with "
          f"{args.segments} segments")
    print(f"machine: {machine_description()}; load average {load_average()}")
    head = ["query"] + [f"{e} s" for e in results] + [f"raympp/{e}" for e in results
                                                       if e != "raympp" and "raympp" in results]
    head += ["answer", "spilled MB", "RSS before/peak/after MB"]
    print("  ".join(head))
    for name, _sql, ordered in work:
        row = [name]
        for e in results:
            r = results[e].get(name, {})
            row.append(f"{r['secs']:.2f}" if "secs" in r else "error")
        rr = results.get("raympp", {}).get(name, {})
        for e in results:
            if e == "raympp" or "raympp" not in results:
                continue
            r = results[e].get(name, {})
            row.append(f"{rr['secs'] / r['secs']:.2f}x" if "secs" in r and "secs" in rr
                       else "NA")
        oracle = results.get("duckdb", {}).get(name, {})
        if "rows" in rr and "rows" in oracle:
            diff = compare.difference(rr["rows"], oracle["rows"], ordered)
            row.append("right" if diff is None else f"WRONG: {diff[:80]}")
        else:
            row.append("-")
        if "secs" in rr:
            row += [mb(rr["spilled"]), f"{mb(rr['before'])}/{mb(rr['peak'])}/{mb(rr['after'])}"]
        print("  ".join(row))
    for e in results:
        for name, r in results[e].items():
            if "error" in r:
                print(f"  {e} {name}: {r['error']}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--queries", default="9,18,21", help="TPC-H queries, or 'none'")
    p.add_argument("--groups", default=None, help="rows (= distinct keys), e.g. 30M")
    p.add_argument("--work-mem", default="16MB")
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--files-dir", default=None)
    p.add_argument("--no-analyze", action="store_true",
                   help="raympp plans without ANALYZE statistics (bad estimates)")
    args = p.parse_args(argv)
    units(args.work_mem)
    args.numbers = [] if args.queries == "none" else queries.parse_selection(args.queries)
    args.groups_text = args.groups
    args.groups = parse_rows(args.groups) if args.groups else 0
    engines = [e for e in args.engines.split(",") if e]
    qdir = queries.find_dir(None)
    work = workloads(args, qdir)
    own = args.files_dir is None
    files_dir = Path(tempfile.mkdtemp(prefix="spill-bench-")) if own else Path(args.files_dir)
    files_dir.mkdir(parents=True, exist_ok=True)
    files_dir.chmod(0o755)
    try:
        files = tb.generate(args.sf, files_dir.resolve()) if args.numbers else {}
        results = {}
        for e in sorted(engines, key=lambda e: e != "duckdb"):
            log(f"[spill] ---- {e}")
            results[e] = RUNNERS[e](args, files, work)
        report(args, {e: results[e] for e in engines}, work)
    finally:
        if own:
            shutil.rmtree(files_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
