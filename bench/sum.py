"""SUM over float8: the seeds' micro-benchmark (seeds 000 and 004), raympp against DuckDB,
PostgreSQL 15 and numpy, measured in the same run on the same machine.

    .venv/bin/python bench/sum.py                       # 10M and 100M rows, 2 segments
    .venv/bin/python bench/sum.py --rows 10M --repeat 5
    .venv/bin/python bench/sum.py --engines raympp,duckdb

For each N:
- raympp: CREATE TABLE sum_t (x float8) DISTRIBUTED RANDOMLY; INSERT ... SELECT g::float8
  FROM generate_series(1, N) (load timed, rows/s); SELECT SUM(x) FROM sum_t (one warm-up,
  then --repeat runs); also SELECT SUM(g::float8) FROM generate_series(1, N) g directly.
- DuckDB: in-process, in-memory, threads=2, the same table from range(); SELECT SUM(x).
- PostgreSQL 15: a private server (see bench/common.py for settings), the same table,
  VACUUM ANALYZE, SELECT SUM(x) warm.
- numpy: np.sum over a float64 array in memory.
Every answer is checked against N(N+1)/2. Times are client wall clock (psycopg round trip
included for the servers). Progress goes to stderr; the report to stdout, ending in
machine-readable `ratio_vs_<engine>_<N>: X` lines (raympp best SUM(x) / other best; NA when
a side has no figure).
"""

from __future__ import annotations

import argparse
import gc
import math
import signal
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    PostgresServer, RaymppServer, StatementTimeout, Timing, execute, human_rows,
    load_average, log, machine_description, parse_rows, query_value, run_with_deadline,
    time_once, timed,
)

ENGINES = ("raympp", "duckdb", "postgres", "numpy")
RAYMPP_TABLE = "raympp"            # SUM(x) over the stored table
RAYMPP_GENSERIES = "raympp-genseries"  # SUM over generate_series, no table


def sum_sql() -> str:
    return "SELECT SUM(x) FROM sum_t"


def load_sql(n: int) -> str:
    return f"INSERT INTO sum_t SELECT g::float8 FROM generate_series(1, {n}) AS g"


def genseries_sql(n: int) -> str:
    return f"SELECT SUM(g::float8) FROM generate_series(1, {n}) g"


class Results:
    """Everything measured, keyed by (engine, n)."""

    def __init__(self) -> None:
        self.timing: dict[tuple[str, int], Timing] = {}
        self.load_s: dict[tuple[str, int], float] = {}
        self.errors: dict[tuple[str, int], str] = {}
        self.bugs: list[tuple[str, str]] = []   # (SQL, error) from raympp
        self.notes: list[str] = []

    def fail(self, engine: str, n: int, what: str) -> None:
        prev = self.errors.get((engine, n))
        self.errors[(engine, n)] = what if prev is None else f"{prev}; {what}"
        log(f"[sum] {engine} {human_rows(n)}: {what}")


def describe_error(e: BaseException) -> str:
    state = getattr(e, "sqlstate", None)
    text = str(e).strip().replace("\n", " | ")
    return f"{type(e).__name__}{f' [{state}]' if state else ''}: {text}"


# --------------------------------------------------------------------------- raympp

class RaymppUnavailable(Exception):
    """The raympp server could not be started: nothing to measure."""


class RaymppBench:
    """One raympp server (restarted if it dies or hangs) and one connection; every
    statement runs under a deadline, and a raympp error is recorded, not raised."""

    def __init__(self, args, res: Results) -> None:
        self.args = args
        self.res = res
        self.srv: RaymppServer | None = None
        self.conn = None
        self.timed_out: set[tuple[str, int]] = set()
        self.started = 0.0  # when the current server started (time.monotonic)

    # ---- server and connection
    def ensure(self):
        try:
            if self.srv is None or not self.srv.alive():
                self.close()
                self.srv = RaymppServer(segments=self.args.segments).start()
                self.started = time.monotonic()
            if self.conn is None or self.conn.closed:
                self.conn = self.srv.connect()
        except Exception as e:  # noqa: BLE001 - no server, no measurements: stop trying
            self.close()
            raise RaymppUnavailable(str(e)) from e
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - the server may be gone already
                pass
            self.conn = None
        if self.srv is not None:
            self.srv.stop()
            self.srv = None

    # ---- statements
    def step(self, engine: str, n: int, sql: str, fn, timeout: float):
        """fn(conn) under a deadline per statement; on failure record the SQL and the error
        and return None."""
        conn = self.ensure()
        try:
            return fn(conn, lambda f: run_with_deadline(f, timeout))
        except StatementTimeout as e:
            self.res.fail(engine, n, f"{sql!r} {e}; server stopped")
            self.res.bugs.append((sql, f"no answer after {timeout:g}s"))
            self.timed_out.add((engine, n))
            self.close()
        except Exception as e:  # noqa: BLE001 - a raympp error is a finding, not a crash
            msg = describe_error(e)
            self.res.fail(engine, n, f"{sql!r} -> {msg}")
            if self.srv is not None and not self.srv.alive():
                msg += " (server died; last output: " + " | ".join(self.srv.output[-12:]) + ")"
            self.res.bugs.append((sql, msg))
        return None

    def execute(self, engine, n, sql, timeout=None) -> bool:
        return self.step(engine, n, sql, lambda c, dl: (dl(lambda: execute(c, sql)), True)[1],
                         timeout or self.args.query_timeout) is not None

    def value(self, engine, n, sql):
        return self.step(engine, n, sql, lambda c, dl: dl(lambda: query_value(c, sql)),
                         self.args.query_timeout)

    def timed(self, engine, n, sql) -> Timing | None:
        t = self.step(engine, n, sql, lambda c, dl: timed(
            lambda: dl(lambda: query_value(c, sql)), self.args.repeat), self.args.query_timeout)
        if t is not None:
            self.res.timing[(engine, n)] = t
            log(f"[sum] {engine} {human_rows(n)}: {sql}: best {t.best_ms:.1f} ms")
        return t

    def note_plan(self, n: int, sql: str) -> None:
        """Add raympp's EXPLAIN of sql to the notes; a failure here is not a finding."""
        try:
            conn = self.ensure()
            rows = run_with_deadline(lambda: conn.execute(f"EXPLAIN {sql}").fetchall(),
                                     self.args.query_timeout)
            plan = " / ".join(str(r[0]).strip() for r in rows)
        except RaymppUnavailable:
            raise
        except Exception as e:  # noqa: BLE001
            plan = f"EXPLAIN failed: {describe_error(e)}"
        self.res.notes.append(f"raympp {human_rows(n)} plan of {sql}: {plan}")

    # ---- the benchmark
    def run(self, rows: list[int]) -> None:
        for i, n in enumerate(rows):
            if any(key[1] in rows[:i] for key in self.timed_out):
                self.res.fail(RAYMPP_TABLE, n, "skipped: a smaller size did not finish")
                continue
            self.one_size(n)

    def one_size(self, n: int) -> None:
        log(f"[sum] raympp {human_rows(n)}: create + load")
        self.execute(RAYMPP_TABLE, n, "DROP TABLE IF EXISTS sum_t")
        loaded = False
        if self.execute(RAYMPP_TABLE, n, "CREATE TABLE sum_t (x float8) DISTRIBUTED RANDOMLY"):
            sql = load_sql(n)
            t0 = time.perf_counter()
            if self.execute(RAYMPP_TABLE, n, sql, self.args.load_timeout):
                load_s = time.perf_counter() - t0
                self.res.load_s[(RAYMPP_TABLE, n)] = load_s
                log(f"[sum] raympp {human_rows(n)}: loaded in {load_s:.1f}s "
                    f"({n / load_s:,.0f} rows/s)")
                loaded = True
                cnt = self.value(RAYMPP_TABLE, n, "SELECT COUNT(*) FROM sum_t")
                if cnt is not None and cnt != n:
                    self.res.fail(RAYMPP_TABLE, n, f"COUNT(*) after load is {cnt}, not {n}")
                    self.res.bugs.append((f"{sql}; SELECT COUNT(*) FROM sum_t",
                                          f"count {cnt}, expected {n}"))
        if loaded:
            # A fresh server's segments load their compiled kernels in a background thread
            # for up to 20 s (segment/jit/warmup.py), holding the GIL at times: timing
            # during it measures that, not the query.
            wait = self.args.settle - (time.monotonic() - self.started)
            if wait > 0:
                log(f"[sum] raympp: waiting {wait:.0f}s for the server's warm-up to end")
                time.sleep(wait)
            self.note_plan(n, sum_sql())
            self.timed(RAYMPP_TABLE, n, sum_sql())
        if (RAYMPP_TABLE, n) not in self.timed_out:
            self.note_plan(n, genseries_sql(n))
            self.timed(RAYMPP_GENSERIES, n, genseries_sql(n))
        self.execute(RAYMPP_TABLE, n, "DROP TABLE IF EXISTS sum_t")


def run_raympp(rows: list[int], args, res: Results) -> None:
    res.notes.append(f"raympp: `raympp serve --segments {args.segments}` on 127.0.0.1, "
                     "temporary data dir, psycopg 3 over loopback TCP")
    bench = RaymppBench(args, res)
    try:
        bench.run(rows)
    except RaymppUnavailable as e:
        res.bugs.append((f"raympp serve --segments {args.segments}", str(e)))
        for n in rows:
            for name in (RAYMPP_TABLE, RAYMPP_GENSERIES):
                if (name, n) not in res.timing:
                    res.fail(name, n, "raympp server unavailable (see raympp problems)")
    finally:
        bench.close()


# --------------------------------------------------------------------------- DuckDB

def run_duckdb(rows: list[int], args, res: Results) -> None:
    import duckdb
    res.notes.append(f"DuckDB {duckdb.__version__}: in-process, :memory:, threads=2")
    for n in rows:
        con = duckdb.connect(":memory:", config={"threads": 2})
        try:
            log(f"[sum] duckdb {human_rows(n)}: load")
            load_s, _ = time_once(lambda: con.execute(
                f"CREATE TABLE sum_t AS SELECT range::DOUBLE AS x FROM range(1, {n + 1})"))
            res.load_s[("duckdb", n)] = load_s
            t = timed(lambda: con.execute(sum_sql()).fetchone()[0], args.repeat)
            res.timing[("duckdb", n)] = t
            log(f"[sum] duckdb {human_rows(n)}: best {t.best_ms:.1f} ms")
        except Exception as e:  # noqa: BLE001
            res.fail("duckdb", n, describe_error(e))
        finally:
            con.close()
            gc.collect()


# --------------------------------------------------------------------------- PostgreSQL

def run_postgres(rows: list[int], args, res: Results) -> None:
    pg = PostgresServer()
    try:
        pg.start()
    except Exception as e:  # noqa: BLE001
        for n in rows:
            res.fail("postgres", n, f"server start failed: {describe_error(e)}")
        return
    try:
        with pg.connect() as conn:
            ver = query_value(conn, "SHOW server_version")
            settings = {k: query_value(conn, f"SHOW {k}") for k in (
                "max_parallel_workers_per_gather", "max_parallel_workers", "shared_buffers",
                "jit", "work_mem")}
            res.notes.append(
                f"PostgreSQL {ver}: private server on 127.0.0.1, started with "
                f"`{pg.command_line_options()}`; effective: "
                + ", ".join(f"{k}={v}" for k, v in settings.items()))
            for n in rows:
                try:
                    log(f"[sum] postgres {human_rows(n)}: load")
                    execute(conn, "DROP TABLE IF EXISTS sum_t")
                    execute(conn, "CREATE TABLE sum_t (x float8)")
                    load_s, _ = time_once(lambda: execute(conn, load_sql(n)))
                    res.load_s[("postgres", n)] = load_s
                    vac_s, _ = time_once(lambda: execute(conn, "VACUUM ANALYZE sum_t"))
                    with conn.cursor() as cur:
                        cur.execute(f"EXPLAIN (COSTS OFF) {sum_sql()}")
                        plan = " / ".join(r[0].strip() for r in cur.fetchall())
                    size = query_value(conn, "SELECT pg_size_pretty(pg_table_size('sum_t'))")
                    res.notes.append(f"PostgreSQL {human_rows(n)}: load {load_s:.1f}s + "
                                     f"VACUUM ANALYZE {vac_s:.1f}s, table {size}, "
                                     f"plan: {plan}")
                    t = timed(lambda: query_value(conn, sum_sql()), args.repeat)
                    res.timing[("postgres", n)] = t
                    log(f"[sum] postgres {human_rows(n)}: best {t.best_ms:.1f} ms")
                except Exception as e:  # noqa: BLE001
                    res.fail("postgres", n, describe_error(e))
                finally:
                    try:
                        execute(conn, "DROP TABLE IF EXISTS sum_t")
                    except Exception:  # noqa: BLE001
                        pass
    finally:
        pg.stop()


# --------------------------------------------------------------------------- numpy

def run_numpy(rows: list[int], args, res: Results) -> None:
    import numpy as np
    res.notes.append(f"numpy {np.__version__}: np.sum over a float64 array (one thread)")
    for n in rows:
        arr = np.arange(1, n + 1, dtype=np.float64)
        try:
            t = timed(lambda: float(np.sum(arr)), args.repeat)
            res.timing[("numpy", n)] = t
            log(f"[sum] numpy {human_rows(n)}: best {t.best_ms:.1f} ms")
        finally:
            del arr
            gc.collect()


RUNNERS = {"raympp": run_raympp, "duckdb": run_duckdb, "postgres": run_postgres,
           "numpy": run_numpy}


# --------------------------------------------------------------------------- report

def expected_sum(n: int) -> float:
    return float(n * (n + 1) // 2)


def answer_ok(got, n: int) -> bool:
    try:
        return math.isclose(float(got), expected_sum(n), rel_tol=1e-9)
    except (TypeError, ValueError):
        return False


def fmt_ms(x: float | None) -> str:
    return "-" if x is None else (f"{x:,.1f}" if x < 1000 else f"{x:,.0f}")


def ratio(res: Results, other: str, n: int) -> float | None:
    a, b = res.timing.get((RAYMPP_TABLE, n)), res.timing.get((other, n))
    if a is None or b is None or b.best_ms <= 0:
        return None
    return a.best_ms / b.best_ms


def report(rows: list[int], engines: list[str], res: Results, args) -> bool:
    out = print
    out(f"\n# SUM over float8 - {machine_description()}; raympp --segments {args.segments}, "
        f"--repeat {args.repeat} after one warm-up\n")
    names = []
    for e in engines:
        names += [RAYMPP_TABLE, RAYMPP_GENSERIES] if e == "raympp" else [e]
    header = ("engine", "rows", "load s", "load rows/s", "best ms", "median ms", "answer")
    table = []
    all_ok = True
    for n in rows:
        for name in names:
            t = res.timing.get((name, n))
            load = res.load_s.get((name, n))
            if t is None:
                ans = "ERROR" if (name, n) in res.errors else "-"
                all_ok = all_ok and (name, n) not in res.errors
            else:
                ok = answer_ok(t.result, n)
                all_ok = all_ok and ok
                exact = float(t.result) == expected_sum(n)
                ans = ("ok (exact)" if exact else "ok") if ok else f"WRONG {t.result!r}"
            table.append((name, human_rows(n), "-" if load is None else f"{load:.2f}",
                          "-" if load is None else f"{n / load:,.0f}",
                          fmt_ms(t.best_ms if t else None),
                          fmt_ms(t.median_ms if t else None), ans))
    widths = [max(len(str(r[i])) for r in [header, *table]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) if i >= 1 else str(c).ljust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    out(line(header))
    out("  ".join("-" * w for w in widths))
    for r in table:
        out(line(r))

    others = [e for e in ("duckdb", "postgres", "numpy") if e in engines]
    if "raympp" in engines and others:
        out("\nraympp SUM(x) best / other best (lower is better for raympp):")
        for n in rows:
            parts = []
            for o in others:
                r = ratio(res, o, n)
                parts.append(f"vs {o}: {'NA' if r is None else f'{r:.2f}x'}")
            out(f"  {human_rows(n):>5}  " + ", ".join(parts))

    if res.notes:
        out("\nSettings and notes:")
        for note in res.notes:
            out(f"  - {note}")
    if res.errors:
        out("\nErrors:")
        for (e, n), what in res.errors.items():
            out(f"  - {e} {human_rows(n)}: {what}")
    if res.bugs:
        out("\nraympp problems (SQL -> error):")
        for sql, err in res.bugs:
            out(f"  - {sql}\n      -> {err}")
    out(f"\nanswers_agree: {'yes' if all_ok else 'no'}")
    for n in rows:
        t = res.timing.get((RAYMPP_TABLE, n))
        load = res.load_s.get((RAYMPP_TABLE, n))
        out(f"raympp_sum_best_ms_{human_rows(n)}: {'NA' if t is None else f'{t.best_ms:.1f}'}")
        out(f"raympp_load_rows_per_s_{human_rows(n)}: "
            f"{'NA' if load is None else f'{n / load:.0f}'}")
    for n in rows:
        for o in ("duckdb", "postgres", "numpy"):
            r = ratio(res, o, n) if o in engines else None
            out(f"ratio_vs_{o}_{human_rows(n)}: {'NA' if r is None else f'{r:.3f}'}")
    return all_ok


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="SUM over float8: raympp vs DuckDB, "
                                            "PostgreSQL 15 and numpy")
    p.add_argument("--rows", default="10M,100M",
                   help="comma-separated row counts, e.g. 10M,100M (default both)")
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="timed runs after one warm-up")
    p.add_argument("--settle", type=float, default=25.0,
                   help="seconds after the raympp server starts before its timed runs "
                        "(its warm-up thread loads compiled kernels for up to 20 s)")
    p.add_argument("--engines", default=",".join(ENGINES),
                   help=f"comma-separated subset of {','.join(ENGINES)}")
    p.add_argument("--load-timeout", type=float, default=900.0,
                   help="seconds allowed for the raympp INSERT of one N (default 900)")
    p.add_argument("--query-timeout", type=float, default=600.0,
                   help="seconds allowed for any other single raympp statement")
    args = p.parse_args(argv)
    rows = [parse_rows(x) for x in args.rows.split(",") if x.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in engines if e not in ENGINES]
    if bad:
        p.error(f"unknown engines {bad}; choose from {ENGINES}")

    # SIGTERM ends the run like Ctrl-C, so the finally blocks stop the servers we started.
    signal.signal(signal.SIGTERM, _interrupt)
    res = Results()
    res.notes.append(f"load average (1/5/15 min) at start: {load_average()}")
    t0 = time.monotonic()
    try:
        for e in engines:
            try:
                RUNNERS[e](rows, args, res)
            except KeyboardInterrupt:
                raise
            except Exception as ex:  # noqa: BLE001 - report what we have
                traceback.print_exc()
                for n in rows:
                    if (e, n) not in res.timing:
                        res.fail(e, n, f"runner failed: {describe_error(ex)}")
    finally:
        log(f"[sum] done in {time.monotonic() - t0:.0f}s")
        res.notes.append(f"load average at end: {load_average()}; "
                         f"run took {time.monotonic() - t0:.0f}s")
    ok = report(rows, engines, res, args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
