"""ClickBench: the 43 queries on raympp, DuckDB and (optionally) PostgreSQL 15, over the
same synthetic `hits`, measured in one run on one machine.

    .venv/bin/python bench/clickbench.py                          # 1M rows, raympp + DuckDB
    .venv/bin/python bench/clickbench.py --rows 10M --tries 3
    .venv/bin/python bench/clickbench.py --engines raympp,duckdb,postgres --queries 1-10

The rows are segment/table_functions/clickbench_hits.py's (seed --seed), written once as Parquet
part files and loaded from those files by every engine:
- raympp: its own `raympp serve --segments N` (bench/common.py), `CREATE TABLE` from
  create.sql + DISTRIBUTED BY (UserID), `COPY hits FROM '<part>' (FORMAT parquet)` per part
  or, with --raympp-load generated, the same rows generated on the segments (what
  `raympp clickbench load` does), then ANALYZE (timed apart);
- DuckDB: in-process, :memory:, threads=--duckdb-threads, CREATE TABLE AS read_parquet;
- PostgreSQL 15: a private server (bench/common.py), create.sql as is, COPY FROM STDIN
  (CSV) per part, VACUUM ANALYZE (timed apart), statement_timeout = --query-timeout.
The engines run one after another (servers stopped and their data removed before the next
starts), so they never compete with each other, only with whatever else runs on the
machine; the report prints the load average at start and end.

Each query runs --tries times in a row (ClickBench's protocol: the first run may pay for
cold caches) and the best time counts. Times are client wall clock (perf_counter) around
execute + fetchall; for the servers that includes psycopg over loopback TCP. Every
engine's last answer is checked against DuckDB with workloads/clickbench/compare.py
(tie-aware under LIMIT). Geometric means are over the queries every measured engine
answered. Progress goes to stderr; the report to stdout, ending in machine-readable lines.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))

import chart  # noqa: E402
from common import (  # noqa: E402
    PostgresServer, RaymppServer, StatementTimeout, human_rows, load_average, log,
    machine_description, parse_rows, run_with_deadline,
)

from workloads.clickbench import compare, load, run, sql  # noqa: E402

ENGINES = ("raympp", "duckdb", "postgres")


@dataclasses.dataclass
class EngineRun:
    name: str
    load_s: float | None = None
    analyze_s: float | None = None
    times: dict[int, list[float]] = dataclasses.field(default_factory=dict)
    answers: dict[int, list] = dataclasses.field(default_factory=dict)
    errors: dict[int, str] = dataclasses.field(default_factory=dict)
    wrong: dict[int, str] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)

    def best(self, q: int) -> float | None:
        """The hot time: the best of the tries."""
        t = self.times.get(q)
        return min(t) if t and q not in self.errors else None

    def cold(self, q: int) -> float | None:
        """The first try's time (caches as the previous query left them)."""
        t = self.times.get(q)
        return t[0] if t and q not in self.errors else None


def run_queries(er: EngineRun, numbers: list[int], tries: int, execute, timeout: float) -> None:
    """execute(sql) -> rows; each query `tries` times under a deadline. A timeout ends the
    engine's run (its server is stopped by the caller)."""
    for n in numbers:
        text = sql.QUERIES[n - 1]
        for _ in range(tries):
            t0 = time.perf_counter()
            try:
                rows = run_with_deadline(lambda: execute(text), timeout)
            except StatementTimeout as e:
                er.errors[n] = f"no answer after {timeout:g} s ({e})"
                log(f"[clickbench] {er.name} Q{n}: {er.errors[n]}; stopping this engine")
                for rest in numbers[numbers.index(n) + 1:]:
                    er.errors[rest] = "not run: an earlier query timed out"
                return
            except Exception as e:  # noqa: BLE001 - an engine's error is a finding
                er.errors[n] = run.describe_error(e)
                break
            er.times.setdefault(n, []).append(time.perf_counter() - t0)
            er.answers[n] = rows
        best = er.best(n)
        log(f"[clickbench] {er.name} Q{n}: "
            + (f"best {best:.3f} s" if best is not None else er.errors.get(n, "?")))


# --------------------------------------------------------------------------- engines

def run_raympp(parts: list[str], numbers: list[int], args) -> EngineRun:
    er = EngineRun("raympp")
    with RaymppServer(segments=args.segments) as srv:
        info = load.ConnInfo(port=srv.port)
        with info.connect() as conn:
            load.create_table(conn, load.DEFAULT_KEY)
        t0 = time.perf_counter()
        if args.raympp_load == "generated":
            load.load_generated(info, args.seed, args.rows, load.Progress(None))
            how = ("rows generated on the segments (`raympp clickbench load`: INSERT ... "
                   "SELECT * FROM clickbench_hits(...), generation included in the load time)")
        else:
            load.load_parts(info, ((p, 0) for p in parts), 1, load.Progress(None),
                            delete=False)
            how = "COPY ... (FORMAT parquet) per part"
        er.load_s = time.perf_counter() - t0
        er.analyze_s = load.analyze_table(info)
        er.notes.append(f"raympp: `raympp serve --segments {args.segments}`, hits DISTRIBUTED "
                        f"BY (UserID), {how}, then ANALYZE")
        log(f"[clickbench] raympp: loaded in {er.load_s:.1f} s, ANALYZE {er.analyze_s:.1f} s")
        with info.connect() as conn:
            run_queries(er, numbers, args.tries, lambda q: conn.execute(q).fetchall(),
                        args.query_timeout)
    return er


def run_duckdb(parts: list[str], numbers: list[int], args) -> EngineRun:
    import duckdb

    er = EngineRun("duckdb")
    db = duckdb.connect(":memory:", config={"threads": args.duckdb_threads})
    try:
        t0 = time.perf_counter()
        db.execute(f"CREATE TABLE hits AS SELECT * FROM read_parquet({parts!r})")
        er.load_s = time.perf_counter() - t0
        er.notes.append(f"DuckDB {duckdb.__version__}: in-process, :memory:, "
                        f"threads={args.duckdb_threads}, CREATE TABLE AS read_parquet")

        def execute(q):
            timer = threading.Timer(args.query_timeout, db.interrupt)
            timer.start()
            try:
                return db.execute(q).fetchall()
            finally:
                timer.cancel()
        run_queries(er, numbers, args.tries, execute, args.query_timeout + 30)
    finally:
        db.close()
    return er


def run_postgres(parts: list[str], numbers: list[int], args) -> EngineRun:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    er = EngineRun("postgres")
    settings = {"statement_timeout": f"{int(args.query_timeout * 1000)}",
                "max_parallel_workers_per_gather": str(args.segments)}
    with PostgresServer(settings=settings) as pg, pg.connect() as conn:
        conn.execute(sql.CREATE_SQL)
        t0 = time.perf_counter()
        for p in parts:
            buf = io.BytesIO()
            pacsv.write_csv(pq.read_table(p), buf, pacsv.WriteOptions(include_header=False))
            with conn.cursor().copy("COPY hits FROM STDIN (FORMAT csv)") as cp:
                cp.write(buf.getbuffer())
        er.load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        conn.execute("VACUUM ANALYZE hits")
        er.analyze_s = time.perf_counter() - t0
        version = conn.execute("SHOW server_version").fetchone()[0]
        shown = {k: conn.execute(f"SHOW {k}").fetchone()[0] for k in (
            "max_parallel_workers_per_gather", "shared_buffers", "work_mem", "jit")}
        size = conn.execute("SELECT pg_size_pretty(pg_table_size('hits'))").fetchone()[0]
        er.notes.append(f"PostgreSQL {version}: private server, COPY FROM STDIN (CSV), "
                        f"VACUUM ANALYZE; table {size}; "
                        + ", ".join(f"{k}={v}" for k, v in shown.items()))
        log(f"[clickbench] postgres: loaded in {er.load_s:.1f} s, VACUUM ANALYZE "
            f"{er.analyze_s:.1f} s")
        run_queries(er, numbers, args.tries, lambda q: conn.execute(q).fetchall(),
                    args.query_timeout + 30)
    return er


RUNNERS = {"raympp": run_raympp, "duckdb": run_duckdb, "postgres": run_postgres}


def check_answers(parts: list[str], runs: list[EngineRun], numbers: list[int]) -> None:
    """Every engine's last answer against DuckDB's full result (compare.py)."""
    import duckdb

    db = duckdb.connect(":memory:")
    try:
        db.execute(f"CREATE TABLE hits AS SELECT * FROM read_parquet({parts!r})")
        for n in numbers:
            oq = compare.oracle_query(sql.QUERIES[n - 1])
            want = None
            for er in runs:
                if n not in er.answers or n in er.errors:
                    continue
                if want is None:
                    want = db.execute(oq.sql).fetchall()
                problem = compare.check(oq, er.answers[n], want)
                if problem:
                    er.wrong[n] = problem
                    log(f"[clickbench] {er.name} Q{n}: WRONG ANSWER: {problem}")
            for er in runs:  # checked: free the memory
                er.answers.pop(n, None)
    finally:
        db.close()


# --------------------------------------------------------------------------- report

def geomean(values: list[float]) -> float | None:
    return run.geometric_mean(values)


def fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def report(runs: list[EngineRun], numbers: list[int], args, gen_s: float, notes: list[str]):
    out = print
    names = [er.name for er in runs]
    out(f"\n# ClickBench, {human_rows(args.rows)} synthetic rows (seed {args.seed}) - "
        f"{machine_description()}; raympp --segments {args.segments}; best of "
        f"{args.tries} tries\n")
    out(f"Parquet parts generated in {gen_s:.1f} s")
    for er in runs:
        extra = f", ANALYZE {er.analyze_s:.1f} s" if er.analyze_s is not None else ""
        rate = f" ({args.rows / er.load_s:,.0f} rows/s)" if er.load_s else ""
        out(f"{er.name}: load {fmt_s(er.load_s)} s{rate}{extra}")
    base = runs[0] if runs and runs[0].name == "raympp" else None
    others = [er for er in runs if er is not base]
    out("\nSeconds per query: cold = the first of the tries, hot = the best of them. "
        "Ratios are raympp's hot time over the other engine's.")
    head = ["query"] + [f"{n} {k}" for n in names for k in ("cold", "hot")]
    if base is not None:
        head += [f"raympp/{er.name}" for er in others]
    head.append("check")
    out("\n| " + " | ".join(head) + " |")
    out("|" + "|".join("---:" for _ in head) + "|")
    for n in numbers:
        cells = [f"Q{n}"]
        for er in runs:
            for t in (er.cold(n), er.best(n)):
                cells.append(fmt_s(t) if t is not None else "error")
        if base is not None:
            for er in others:
                a, b = base.best(n), er.best(n)
                cells.append(f"{a / b:.2f}" if a is not None and b else "-")
        bad = [f"{er.name}: {er.wrong[n]}" for er in runs if n in er.wrong]
        cells.append("WRONG " + "; ".join(bad) if bad else "ok")
        out("| " + " | ".join(cells) + " |")

    common = [n for n in numbers if all(er.best(n) is not None for er in runs)]
    left_out = [f"Q{n}" for n in numbers if n not in common]
    out(f"\nGeometric means over the {len(common)} queries every engine answered"
        + (f" ({', '.join(left_out)} left out):" if left_out else ":"))
    gms = {er.name: geomean([er.best(n) for n in common]) for er in runs}
    cold_gms = {er.name: geomean([er.cold(n) for n in common]) for er in runs}
    for name, g in gms.items():
        out(f"  {name}: cold {fmt_s(cold_gms[name])} s, hot {fmt_s(g)} s")
    for er in runs:
        if er.errors:
            out(f"\n{er.name} errors:")
            for n, e in er.errors.items():
                out(f"  - Q{n}: {e}\n      {sql.QUERIES[n - 1][:200]}")
    out("\nSettings and notes:")
    for note in notes + [x for er in runs for x in er.notes]:
        out(f"  - {note}")
    all_ok = not any(er.wrong for er in runs)
    out(f"\nanswers_agree: {'yes' if all_ok else 'no'}")
    for er in runs:
        ok = sum(1 for n in numbers if er.best(n) is not None and n not in er.wrong)
        out(f"queries_ok_{er.name}: {ok}/{len(numbers)}")
        g, c = gms.get(er.name), cold_gms.get(er.name)
        out(f"geomean_s_{er.name}: {'NA' if g is None else f'{g:.4f}'}")
        out(f"geomean_cold_s_{er.name}: {'NA' if c is None else f'{c:.4f}'}")
    if base is not None:
        for er in others:
            for label, table in (("ratio", gms), ("ratio_cold", cold_gms)):
                a, b = table.get("raympp"), table.get(er.name)
                out(f"{label}_vs_{er.name}: {'NA' if not a or not b else f'{a / b:.3f}'}")
    if args.chart:
        drawn = chart.per_query_png(
            args.chart, f"ClickBench, {human_rows(args.rows)} synthetic rows, hot "
            f"(raympp: {args.segments} segments)", [f"Q{n}" for n in numbers],
            {er.name: [1000 * t if t is not None else None for t in map(er.best, numbers)]
             for er in runs})
        out(f"chart: {args.chart}" if drawn else "chart: not drawn (no matplotlib)")
    return all_ok


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="ClickBench: raympp vs DuckDB (and PostgreSQL)")
    p.add_argument("--rows", default="1M", help="synthetic rows (default 1M)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--tries", type=int, default=3, help="runs per query; the best counts")
    p.add_argument("--queries", default=None, help="e.g. 1-10,30 (default all 43)")
    p.add_argument("--engines", default="raympp,duckdb",
                   help=f"comma-separated subset of {','.join(ENGINES)} (raympp first)")
    p.add_argument("--duckdb-threads", type=int, default=2)
    p.add_argument("--jobs", type=int, default=load.default_jobs(),
                   help="processes generating the Parquet parts")
    p.add_argument("--query-timeout", type=float, default=600.0,
                   help="seconds allowed for one run of one query")
    p.add_argument("--no-check", action="store_true", help="do not check answers")
    p.add_argument("--chart", default=None,
                   help="also draw per-query hot times to this PNG file (bench/chart.py)")
    p.add_argument("--raympp-load", choices=("copy", "generated"), default="copy",
                   help="copy: COPY the Parquet parts every engine loads (default); "
                        "generated: the segments generate the same rows themselves")
    args = p.parse_args(argv)
    args.rows = parse_rows(args.rows)
    numbers = run.parse_selection(args.queries)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in engines if e not in ENGINES]
    if bad:
        p.error(f"unknown engines {bad}; choose from {ENGINES}")

    signal.signal(signal.SIGTERM, _interrupt)  # so the finally blocks stop our servers
    notes = [f"load average (1/5/15 min) at start: {load_average()}"]
    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="clickbench-parts-")
    runs: list[EngineRun] = []
    try:
        Path(tmp).chmod(0o755)
        log(f"[clickbench] generating {human_rows(args.rows)} rows into {tmp}")
        t0 = time.perf_counter()
        parts = sorted(p for p, _ in load.synthetic_parts(args.seed, args.rows, tmp, args.jobs))
        gen_s = time.perf_counter() - t0
        for e in engines:
            log(f"[clickbench] {e}: start")
            try:
                runs.append(RUNNERS[e](parts, numbers, args))
            except KeyboardInterrupt:
                raise
            except Exception as ex:  # noqa: BLE001 - report what we have
                er = EngineRun(e)
                for n in numbers:
                    er.errors[n] = f"engine failed: {run.describe_error(ex)}"
                runs.append(er)
        if not args.no_check:
            log("[clickbench] checking answers against DuckDB")
            check_answers(parts, runs, numbers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    notes.append(f"load average at end: {load_average()}; run took "
                 f"{time.monotonic() - t_start:.0f} s")
    ok = report(runs, numbers, args, gen_s, notes)
    failed = any(er.errors for er in runs)
    return 0 if ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
