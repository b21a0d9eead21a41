"""TPC-H: the 22 queries on raympp, DuckDB and PostgreSQL 15 over the same generated data,
measured in one run on the same machine.

    .venv/bin/python bench/tpch.py --sf 1
    .venv/bin/python bench/tpch.py --sf 0.1 --engines raympp,duckdb --queries 1,3,6
    .venv/bin/python bench/tpch.py --sf 10 --files-dir /data/tpch --timeout 1800

Data: tpchgen-cli writes Parquet parts once (workloads/tpch/datagen.py) into a temporary
directory, or --files-dir (kept and reused). Engines run one after another, each alone:
- raympp: `raympp serve` as a subprocess (bench/common.RaymppServer: free loopback port,
  temporary data directory, stopped by its PID), loaded with
  `COPY t FROM '<part>' (FORMAT parquet)` per part, one transaction per table, ANALYZE.
- DuckDB: in process, in memory, threads = --duckdb-threads (default: the segment count),
  the same DDL, INSERT ... SELECT * FROM read_parquet(parts).
- PostgreSQL 15: a private server (bench/common.PostgresServer: initdb in a temporary
  directory as the `postgres` user, free loopback port, stopped by pg_ctl), the same DDL,
  COPY FROM STDIN (CSV streamed from the Parquet parts), then with --pg-indexes keys (the
  default) primary keys and foreign-key indexes, then VACUUM ANALYZE.
Each query runs --warmup times untimed, then --repeat times; the best wall time counts
(client clock, pgwire round trip included for the servers). A query is cancelled after
--timeout seconds. Answers of raympp and PostgreSQL are checked against DuckDB's
(workloads/tpch/compare.py); a wrong answer counts as an error.

Report (stdout): per-query best times, raympp's per-query ratio to each engine, each
engine's geometric mean over the queries it answered (errors, timeouts and wrong answers
are excluded and listed), and raympp's ratio to each engine as the geometric mean of the
per-query ratios over the queries both answered. Ends with machine-readable lines
`geomean_<engine>_ms: X`, `ratio_vs_<engine>: X` (NA when there is nothing to compare).
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import chart  # noqa: E402
from common import (  # noqa: E402
    PostgresServer, RaymppServer, load_average, log, machine_description,
)
from workloads.tpch import compare, datagen, loader, queries, runner, schema  # noqa: E402

ENGINES = ("raympp", "duckdb", "postgres")
ORACLE = "duckdb"
PG_SETTINGS = {"work_mem": "256MB"}


@dataclass
class EngineRun:
    engine: str
    load_s: float | None = None
    outcomes: dict[int, runner.Outcome] = field(default_factory=dict)
    failure: str | None = None          # the engine did not start or load
    notes: list[str] = field(default_factory=list)

    def best_ms(self, n: int) -> float | None:
        o = self.outcomes.get(n)
        return o.best_s * 1e3 if o is not None and o.ok and o.best_s is not None else None

    def error(self, n: int) -> str | None:
        if self.failure:
            return self.failure
        o = self.outcomes.get(n)
        return "not run" if o is None else o.error


# --------------------------------------------------------------------------- data

def generate(sf: float, files_dir: Path) -> dict[str, list[Path]]:
    t0 = time.perf_counter()
    out = files_dir / f"sf{datagen.sf_text(sf)}"
    files: dict[str, list[Path]] = {}
    for tables, parts in datagen.groups(sf):
        log(f"[tpch] generating {', '.join(tables)} ({parts} part(s) each) into {out}")
        files.update(datagen.generate_tables(out, sf, tables, parts))
    log(f"[tpch] data ready after {time.perf_counter() - t0:.1f}s")
    return {t: files[t] for t in schema.NAMES}


# --------------------------------------------------------------------------- engines

class DuckConnection:
    """The slice of psycopg's connection interface workloads/tpch/runner.py uses, over
    one DuckDB connection (interrupt() stops its running statement)."""

    closed = False

    def __init__(self, con) -> None:
        self.con = con

    def cursor(self):
        return _DuckCursor(self.con)

    def execute(self, sql: str):
        self.con.execute(sql)
        return self

    def cancel(self) -> None:
        self.con.interrupt()

    def close(self) -> None:
        pass  # the benchmark closes the DuckDB connection itself


class _DuckCursor:
    def __init__(self, con) -> None:
        self.con = con
        self.description = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def execute(self, sql: str) -> None:
        self.con.execute(sql)
        self.description = self.con.description

    def fetchall(self) -> list:
        return self.con.fetchall()


def run_queries(engine: str, connect, args, numbers, qdir) -> dict[int, runner.Outcome]:
    def done(o: runner.Outcome) -> None:
        what = f"{o.best_s * 1e3:,.1f} ms" if o.ok else f"ERROR {o.error}"
        log(f"[tpch] {engine} Q{o.number:02d}: {what}")

    outcomes = runner.run(connect, numbers, qdir, repeat=args.repeat, warmup=args.warmup,
                          timeout_s=args.timeout, on_done=done)
    return {o.number: o for o in outcomes}


def run_raympp(args, files, numbers, qdir) -> EngineRun:
    res = EngineRun("raympp")
    with RaymppServer(segments=args.segments) as srv:
        conn = srv.connect()
        try:
            t0 = time.perf_counter()
            loader.load_files(conn, files, via="file", distributed=True)
            res.load_s = time.perf_counter() - t0
            log(f"[tpch] raympp loaded in {res.load_s:.1f}s")
        finally:
            conn.close()
        res.outcomes = run_queries("raympp", srv.connect, args, numbers, qdir)
        if not srv.alive():
            res.notes.append("raympp serve exited during the run; last output: "
                             + " | ".join(srv.output[-5:]))
    return res


def run_duckdb(args, files, numbers, qdir) -> EngineRun:
    import duckdb

    res = EngineRun("duckdb")
    threads = args.duckdb_threads or args.segments
    con = duckdb.connect(":memory:", config={"threads": threads})
    res.notes.append(f"DuckDB {duckdb.__version__}, in memory, threads={threads}")
    try:
        t0 = time.perf_counter()
        for table in schema.TABLES:
            con.execute(table.create_sql(distributed=False))
            paths = [str(p) for p in files[table.name]]
            con.execute(f"INSERT INTO {table.name} SELECT * FROM read_parquet({paths!r})")
        res.load_s = time.perf_counter() - t0
        log(f"[tpch] duckdb loaded in {res.load_s:.1f}s")
        wrapped = DuckConnection(con)
        res.outcomes = run_queries("duckdb", lambda: wrapped, args, numbers, qdir)
    finally:
        con.close()
    return res


def run_postgres(args, files, numbers, qdir) -> EngineRun:
    res = EngineRun("postgres")
    with PostgresServer(settings=PG_SETTINGS) as pg:
        res.notes.append(f"{pg.version()}, settings {pg.settings}, indexes: {args.pg_indexes}")
        conn = pg.connect()
        try:
            t0 = time.perf_counter()
            loader.load_files(conn, files, via="stdin", distributed=False, analyze=False)
            if args.pg_indexes == "keys":
                for name in schema.NAMES:
                    for sql in schema.index_sql(name):
                        conn.execute(sql)
            conn.execute("VACUUM ANALYZE")
            res.load_s = time.perf_counter() - t0
            log(f"[tpch] postgres loaded in {res.load_s:.1f}s")
        finally:
            conn.close()
        res.outcomes = run_queries("postgres", pg.connect, args, numbers, qdir)
    return res


RUNNERS = {"raympp": run_raympp, "duckdb": run_duckdb, "postgres": run_postgres}


def check_answers(runs: dict[str, EngineRun], numbers: list[int], qdir: Path) -> None:
    """Mark answers that differ from DuckDB's as errors."""
    oracle = runs.get(ORACLE)
    if oracle is None:
        return
    for name, r in runs.items():
        if name == ORACLE:
            continue
        for n in numbers:
            o, want = r.outcomes.get(n), oracle.outcomes.get(n)
            if o is None or not o.ok or want is None or not want.ok:
                continue
            ordered = queries.has_order_by(queries.read(n, qdir))
            diff = compare.difference(o.rows, want.rows, ordered)
            if diff is not None:
                o.error = f"wrong answer (vs DuckDB): {diff[:300]}"
                log(f"[tpch] {name} Q{n:02d}: {o.error}")


# --------------------------------------------------------------------------- report

def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt_ms(x: float | None) -> str:
    return "error" if x is None else f"{x:,.1f}"


def fmt_ratio(x: float | None) -> str:
    return "NA" if x is None else f"{x:.2f}x"


def report(args, runs: dict[str, EngineRun], numbers: list[int], gen_s: float) -> None:
    engines = [e for e in args.engines if e in runs]
    others = [e for e in engines if e != "raympp"]
    with_raympp = "raympp" in runs
    print(f"TPC-H SF {datagen.sf_text(args.sf)}: {len(numbers)} queries; raympp with "
          f"{args.segments} segments; best of {args.repeat} after {args.warmup} warm-up; "
          f"timeout {args.timeout:g}s")
    print(f"machine: {machine_description()}; load average {load_average()}")
    print(f"data generated in {gen_s:.1f}s; load times: "
          + ", ".join(f"{e} {runs[e].load_s:.1f}s" if runs[e].load_s is not None
                      else f"{e} failed" for e in engines))
    for e in engines:
        for note in runs[e].notes:
            print(f"  {e}: {note}")
    print()
    head = ["query"] + [f"{e} ms" for e in engines]
    if with_raympp:
        head += [f"raympp/{e}" for e in others]
    rows = []
    for n in numbers:
        row = [f"Q{n:02d}"] + [fmt_ms(runs[e].best_ms(n)) for e in engines]
        if with_raympp:
            for e in others:
                a, b = runs["raympp"].best_ms(n), runs[e].best_ms(n)
                row.append(fmt_ratio(a / b if a and b else None))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                        enumerate(zip(r, widths))))
    print()

    geo: dict[str, float | None] = {}
    for e in engines:
        ok = [n for n in numbers if runs[e].best_ms(n) is not None]
        geo[e] = geomean([runs[e].best_ms(n) for n in ok])
        print(f"{e}: geometric mean {fmt_ms(geo[e]) if geo[e] else 'NA'} ms over the "
              f"{len(ok)} of {len(numbers)} queries it answered (errors excluded)")
    ratios: dict[str, float | None] = {}
    if with_raympp:
        for e in others:
            both = [n for n in numbers
                    if runs["raympp"].best_ms(n) is not None and runs[e].best_ms(n) is not None]
            ratios[e] = geomean([runs["raympp"].best_ms(n) / runs[e].best_ms(n) for n in both])
            print(f"raympp / {e}: {fmt_ratio(ratios[e])} (geometric mean of per-query "
                  f"ratios over the {len(both)} queries both answered; >1 means raympp "
                  f"is slower)")
    errors = [(e, n, runs[e].error(n)) for e in engines for n in numbers
              if runs[e].best_ms(n) is None]
    if errors:
        print("\nerrors (excluded from the geometric means):")
        for e, n, err in errors:
            print(f"  {e} Q{n:02d}: {err}")
    print()
    for e in engines:
        print(f"geomean_{e}_ms: {geo[e]:.3f}" if geo[e] else f"geomean_{e}_ms: NA")
    for e in others:
        r = ratios.get(e)
        print(f"ratio_vs_{e}: {r:.3f}" if r else f"ratio_vs_{e}: NA")
    if args.chart:
        drawn = chart.per_query_png(
            args.chart, f"TPC-H SF {datagen.sf_text(args.sf)}, best of {args.repeat} "
            f"(raympp: {args.segments} segments)", [f"Q{n:02d}" for n in numbers],
            {e: [runs[e].best_ms(n) for n in numbers] for e in engines})
        print(f"chart: {args.chart}" if drawn else "chart: not drawn (no matplotlib)")


# --------------------------------------------------------------------------- main

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    p.add_argument("--engines", default=",".join(ENGINES),
                   help=f"comma-separated subset of {','.join(ENGINES)}")
    p.add_argument("--queries", default=None, help="e.g. 1,3,5-7 (default: all 22)")
    p.add_argument("--queries-dir", default=None)
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--timeout", type=float, default=600.0,
                   help="cancel a query after this many seconds (counts as an error)")
    p.add_argument("--files-dir", default=None,
                   help="keep (and reuse) the generated Parquet files here")
    p.add_argument("--duckdb-threads", type=int, default=None,
                   help="default: the raympp segment count")
    p.add_argument("--chart", default=None,
                   help="also draw per-query times to this PNG file (bench/chart.py)")
    p.add_argument("--pg-indexes", choices=("keys", "none"), default="keys",
                   help="keys: primary keys and foreign-key indexes on PostgreSQL")
    args = p.parse_args(argv)
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in args.engines if e not in ENGINES]
    if bad:
        p.error(f"unknown engine(s) {bad}; choose from {ENGINES}")
    args.repeat = max(1, args.repeat)
    args.warmup = max(0, args.warmup)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    numbers = queries.parse_selection(args.queries)
    qdir = queries.find_dir(args.queries_dir)
    own = args.files_dir is None
    files_dir = Path(tempfile.mkdtemp(prefix="tpch-bench-")) if own else Path(args.files_dir)
    files_dir.mkdir(parents=True, exist_ok=True)
    files_dir.chmod(0o755)
    runs: dict[str, EngineRun] = {}
    try:
        t0 = time.perf_counter()
        files = generate(args.sf, files_dir.resolve())
        gen_s = time.perf_counter() - t0
        # The oracle first, so that a broken engine later still has answers to compare to.
        order = sorted(args.engines, key=lambda e: e != ORACLE)
        for e in order:
            log(f"[tpch] ---- {e}")
            try:
                runs[e] = RUNNERS[e](args, files, numbers, qdir)
            except Exception as ex:  # reported; the other engines still run
                traceback.print_exc(file=sys.stderr)
                runs[e] = EngineRun(e, failure=f"{e} failed to start or load: "
                                                f"{runner.describe_error(ex)}")
        check_answers(runs, numbers, qdir)
        report(args, runs, numbers, gen_s)
    finally:
        if own:
            shutil.rmtree(files_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
