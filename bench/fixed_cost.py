"""Fixed cost per statement (issue 13): what a trivial query costs end to end on raympp,
DuckDB and PostgreSQL 15, measured in one run on the same machine, and where raympp's
milliseconds go.

    .venv/bin/python bench/fixed_cost.py                       # all engines, 2 segments
    .venv/bin/python bench/fixed_cost.py --repeat 3000 --engines raympp,postgres
    .venv/bin/python bench/fixed_cost.py --breakdown --engines raympp

Statements, each run --warmup times untimed, then --repeat times one after another; the
median (and 10th/90th percentiles) of the client's wall time is reported:
- select1:     SELECT 1
- count_small: SELECT count(*) FROM small_t, --rows rows (1000) of (id int, v float8);
               raympp DISTRIBUTED BY (id) over --segments segments; ANALYZEd everywhere
- q06:         TPC-H Q06 over lineitem at --sf (0.01: 60,175 rows) from tpchgen-cli
               Parquet (workloads/tpch/datagen.py); its plan is cached after the first run
- insert3:     INSERT INTO ins_t VALUES of 3 rows, autocommit (durable when acknowledged:
               raympp's two-phase commit on the segments, PostgreSQL's WAL flush)
- update1:     UPDATE small_t SET v = v + 1 WHERE id = 7 (one row), autocommit
- create_drop: CREATE TABLE cd_t (id int, v float8) then DROP TABLE cd_t, timed together
Clients: psycopg 3 over loopback TCP, autocommit, no automatic prepare, two ways:
- simple:   cursor.execute(sql): one Query message per statement;
- prepared: cursor.execute(sql, prepare=True): Parse once, then Bind/Execute/Sync.
DuckDB runs in process (`execute(sql).fetchall()`, threads = --segments): no round trip,
so its figure (mode `inproc`) is a floor rather than a peer.

Servers: raympp is `raympp serve` as a subprocess (bench/common.RaymppServer: free
loopback port, temporary data directory, stopped by its PID); PostgreSQL 15 a private
server (bench/common.PostgresServer). Engines run one after another, each alone.

--breakdown instead starts raympp's coordinator in a child process of this script (as
tests/conftest.py does: private Ray, Engine, PgServer) with time.perf_counter timers
around the coordinator's phases, runs the same statements against it, and prints the
mean milliseconds per statement of each phase (timers nest: an indented phase is part
of the one above it).

Report (stdout) ends with machine-readable lines `median_ms_<engine>_<statement>_<mode>: X`,
`ratio_vs_<engine>_<statement>_<mode>: X` (raympp median / other median, NA when a side
has no figure) and `goal_select1_under_1ms_<mode>: yes|no`,
`goal_count_small_under_5ms_<mode>: yes|no` for raympp. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import importlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import (  # noqa: E402
    REPO, PostgresServer, RaymppServer, _stop_pid, load_average, log, machine_description,
    timed,
)
from workloads.tpch import datagen, loader, queries, schema  # noqa: E402

ENGINES = ("raympp", "duckdb", "postgres")
STATEMENTS = ("select1", "count_small", "q06", "insert3", "update1", "create_drop")
MODES = ("simple", "prepared")
GOALS_MS = {"select1": 1.0, "count_small": 5.0}
# psycopg's prepare_threshold: never prepare by itself. None would also ignore
# execute(prepare=True).
NO_AUTO_PREPARE = 1 << 30


def statements(args) -> dict[str, tuple[str, ...]]:
    """Each statement's SQL: one or more statements timed as one (their answer: the last
    one's first value, or its row count)."""
    q06 = queries.read(6, queries.find_dir(args.queries_dir)).strip().rstrip(";")
    return {"select1": ("SELECT 1",), "count_small": ("SELECT count(*) FROM small_t",),
            "q06": (q06,),
            "insert3": ("INSERT INTO ins_t VALUES (1, 0.5), (2, 1.0), (3, 1.5)",),
            "update1": ("UPDATE small_t SET v = v + 1 WHERE id = 7",),
            "create_drop": ("CREATE TABLE cd_t (id int, v float8)", "DROP TABLE cd_t")}


def expected(args) -> dict[str, object]:
    return {"select1": 1, "count_small": args.rows, "insert3": 3, "update1": 1,
            "create_drop": -1}


# --------------------------------------------------------------------------- data

def small_table_sql(args, distributed: bool) -> list[str]:
    dist = " DISTRIBUTED BY (id)" if distributed else ""
    return ["DROP TABLE IF EXISTS small_t", f"CREATE TABLE small_t (id int, v float8){dist}",
            f"INSERT INTO small_t SELECT g, g * 0.5 FROM generate_series(1, {args.rows}) g",
            "ANALYZE small_t", "DROP TABLE IF EXISTS ins_t",
            f"CREATE TABLE ins_t (id int, v float8){dist}"]


def lineitem_files(args, work: Path) -> list[Path]:
    out = Path(args.files_dir) if args.files_dir else work / "tpch"
    t0 = time.perf_counter()
    files = datagen.generate_table(out / f"sf{datagen.sf_text(args.sf)}", "lineitem", args.sf,
                                   parts=1)
    log(f"[fixed] lineitem SF {args.sf}: {files} ({time.perf_counter() - t0:.1f}s)")
    return files


def load_server(conn, args, files: list[Path], distributed: bool, via: str) -> None:
    for sql in small_table_sql(args, distributed):
        conn.execute(sql)
    loader.load_files(conn, {"lineitem": files}, via=via, distributed=distributed)


# --------------------------------------------------------------------------- timing

def percentile(times_s: list[float], q: float) -> float:
    ordered = sorted(times_s)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3


class Results:
    def __init__(self):
        self.ms: dict[tuple[str, str, str], tuple[float, float, float]] = {}  # median, p10, p90
        self.answers: dict[tuple[str, str, str], object] = {}
        self.errors: list[str] = []
        self.notes: list[str] = []
        self.breakdown: list[str] = []

    def record(self, engine: str, stmt: str, mode: str, timing) -> None:
        t = timing.times_s
        self.ms[(engine, stmt, mode)] = (timing.median_ms, percentile(t, 0.1),
                                         percentile(t, 0.9))
        self.answers[(engine, stmt, mode)] = timing.result
        log(f"[fixed] {engine} {stmt} {mode}: median {timing.median_ms:.3f} ms")


def time_client(conn, sqls: tuple[str, ...], mode: str, repeat: int, warmup: int):
    prepare = mode == "prepared"

    def once():
        with conn.cursor() as cur:
            for sql in sqls:
                cur.execute(sql, prepare=prepare)
            return cur.fetchall()[0][0] if cur.description else cur.rowcount
    return timed(once, repeat, warmup)


def time_server(engine: str, conn, sqls: dict[str, str], args, res: Results) -> None:
    for stmt in args.statements:
        for mode in MODES:
            try:
                res.record(engine, stmt, mode, time_client(conn, sqls[stmt], mode, args.repeat,
                                                           args.warmup))
            except Exception as e:  # noqa: BLE001 - a failure is a finding: report it
                res.errors.append(f"{engine} {stmt} {mode}: {type(e).__name__}: {e}")


# --------------------------------------------------------------------------- engines

def run_raympp(args, sqls, files, res: Results) -> None:
    with RaymppServer(segments=args.segments) as srv:
        started = time.monotonic()
        with srv.connect(prepare_threshold=NO_AUTO_PREPARE) as conn:
            load_server(conn, args, files, distributed=True, via="file")
            # A fresh server's segments load their compiled kernels in a background thread
            # for up to 20 s (segment/jit/warmup.py), holding the GIL at times: the first
            # statements timed during it (the simple protocol's) measured that.
            wait = args.settle - (time.monotonic() - started)
            if wait > 0:
                time.sleep(wait)
            res.notes.append(f"raympp: `raympp serve --segments {args.segments}`, "
                             "temporary data dir")
            time_server("raympp", conn, sqls, args, res)


def run_postgres(args, sqls, files, res: Results) -> None:
    with PostgresServer() as pg:
        with pg.connect(prepare_threshold=NO_AUTO_PREPARE) as conn:
            load_server(conn, args, files, distributed=False, via="stdin")
            conn.execute("VACUUM ANALYZE")
            version = conn.execute("SHOW server_version").fetchone()[0]
            res.notes.append(f"PostgreSQL {version}: `{pg.command_line_options()}`")
            time_server("postgres", conn, sqls, args, res)


def run_duckdb(args, sqls, files, res: Results) -> None:
    import duckdb  # only when DuckDB is measured
    con = duckdb.connect(":memory:", config={"threads": args.segments})
    try:
        con.execute("CREATE TABLE small_t AS SELECT range::INT AS id, range * 0.5 AS v "
                    f"FROM range(1, {args.rows + 1})")
        con.execute("CREATE TABLE ins_t (id int, v float8)")
        con.execute(schema.BY_NAME["lineitem"].create_sql(distributed=False))
        paths = [str(p) for p in files]
        con.execute(f"INSERT INTO lineitem SELECT * FROM read_parquet({paths!r})")
        res.notes.append(f"DuckDB {duckdb.__version__}: in process, threads={args.segments}")
        def once(stmt):
            for sql in sqls[stmt]:
                rows = con.execute(sql).fetchall()
            # DuckDB answers DML with its row count as a row, and DDL with none
            return rows[0][0] if rows else -1
        for stmt in args.statements:
            t = timed(lambda: once(stmt), args.repeat, args.warmup)
            res.record("duckdb", stmt, "inproc", t)
    finally:
        con.close()


RUNNERS = {"raympp": run_raympp, "duckdb": run_duckdb, "postgres": run_postgres}


# --------------------------------------------------------------------------- breakdown

# (label, module, owner attribute path, nesting depth): the phases timed in the
# coordinator. Engine calls run on the session's worker thread, pgwire's on the loop.
PHASES = (
    ("pgwire: engine calls, thread hops included", "coordinator.pgwire.session",
     "Session.call", 0),
    ("prepare (Parse, simple Query)", "coordinator.session", "Session.prepare", 1),
    ("split into statements (sqlglot tokenizer)", "planner.statements", "split", 2),
    ("classify (sqlglot parse)", "planner.statements", "classify", 2),
    ("describe (plan cache lookup or plan)", "coordinator.query", "describe", 2),
    ("execute (Execute)", "coordinator.session", "Session.execute", 1),
    ("transaction id", "coordinator.catalog", "Catalog.next_id", 2),
    ("plan to run (plan cache lookup or plan)", "coordinator.query", "planned", 2),
    ("fetch rows (runs the plan)", "coordinator.pgwire.portal", "RowStream.fetch", 1),
    ("dispatch slices (Ray actor calls)", "coordinator.dispatch", "QueryRun._dispatch", 2),
    ("wait for the slices' results", "coordinator.dispatch", "QueryRun._wait_slices", 2),
    ("encode DataRows", "coordinator.pgwire.values", "encode_data_rows", 2),
    ("commit (implicit transaction)", "coordinator.transaction", "Transaction.commit", 2),
    ("transaction status (ReadyForQuery)", "coordinator.session",
     "Session.transaction_status", 1),
    ("planning (bind + rewrite + distribute) for the plan cache", "coordinator.query",
     "_plan", 0),
    ("planning by query.plan (every query's before the plan cache)", "coordinator.query",
     "plan", 0),
)
ENGINE_CALLS = ("Session.prepare", "Session.execute", "RowStream.fetch",
                "Session.transaction_status")


def _instrument(totals: dict[str, list]) -> None:
    """Wrap every phase of PHASES with a timer adding to totals[attribute path]; phases
    this version of the coordinator lacks are left out (a tree without the plan cache
    has no query.planned)."""
    for _label, module, path, _depth in PHASES:
        owner = importlib.import_module(module)
        *parents, name = path.split(".")
        for p in parents:
            owner = getattr(owner, p)
        fn = getattr(owner, name, None)
        if fn is None:
            continue
        cell = totals[path]

        if asyncio.iscoroutinefunction(fn):
            async def wrapped(*a, _fn=fn, _cell=cell, **k):
                t0 = time.perf_counter()
                try:
                    return await _fn(*a, **k)
                finally:
                    _cell[0] += 1
                    _cell[1] += time.perf_counter() - t0
        else:
            def wrapped(*a, _fn=fn, _cell=cell, **k):
                t0 = time.perf_counter()
                try:
                    return _fn(*a, **k)
                finally:
                    _cell[0] += 1
                    _cell[1] += time.perf_counter() - t0
        setattr(owner, name, functools.wraps(fn)(wrapped))


def serve_instrumented(segments: int) -> None:
    """The child of --breakdown: a coordinator with timers, on a free loopback port.
    Reads `reset` and `report` lines on stdin; stops at end of input."""
    # Imported here: only this child starts Ray and a coordinator.
    from deploy import ray_local
    ray_local.connect(None)
    from coordinator import roles
    from coordinator.engine import Engine
    from coordinator.pgwire.server import PgServer

    totals: dict[str, list] = collections.defaultdict(lambda: [0, 0.0])
    _instrument(totals)
    data = tempfile.mkdtemp(prefix="raympp-fixed-")
    engine = Engine(data, segments)
    server = PgServer(engine, "127.0.0.1", 0, authenticator=roles.setup(engine.catalog, None))
    try:
        _host, port = server.start_in_thread()
        print(f"PORT {port}", flush=True)
        for line in sys.stdin:
            if line.strip() == "reset":
                for cell in totals.values():
                    cell[0], cell[1] = 0, 0.0
                print("RESET", flush=True)
            elif line.strip() == "report":
                print("REPORT " + json.dumps(dict(totals)), flush=True)
    finally:
        server.stop_thread()
        engine.shutdown()
        ray_local.stop()
        shutil.rmtree(data, ignore_errors=True)


class InstrumentedServer:
    """This script as --serve-instrumented, a child process in its own session, stopped
    by closing its stdin (then by its PID)."""

    def __init__(self, segments: int):
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve-instrumented", "--segments", str(segments)],
            cwd=str(REPO), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            bufsize=1, start_new_session=True)
        try:
            self.port = int(self._reply("PORT"))
        except BaseException:
            self.stop()
            raise

    def _reply(self, word: str) -> str:
        for line in self.proc.stdout:
            if line.startswith(word):
                return line[len(word):].strip()
        raise RuntimeError(f"the instrumented coordinator ended before saying {word}")

    def ask(self, command: str) -> str:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._reply(command.upper())

    def connect(self):
        import psycopg
        return psycopg.connect(host="127.0.0.1", port=self.port, user="raympp",
                               dbname="raympp", autocommit=True,
                               prepare_threshold=NO_AUTO_PREPARE)

    def stop(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            _stop_pid(self.proc, 30, "instrumented coordinator")


def run_breakdown(args, sqls, files, res: Results) -> None:
    srv = InstrumentedServer(args.segments)
    try:
        with srv.connect() as conn:
            load_server(conn, args, files, distributed=True, via="file")
            for stmt in args.statements:
                for mode in MODES:
                    time_client(conn, sqls[stmt], mode, 0, args.warmup)
                    srv.ask("reset")
                    t = time_client(conn, sqls[stmt], mode, args.repeat, 0)
                    totals = json.loads(srv.ask("report"))
                    res.breakdown += breakdown_lines(stmt, mode, t, totals, args.repeat)
    finally:
        srv.stop()


def breakdown_lines(stmt: str, mode: str, timing, totals: dict, runs: int) -> list[str]:
    def mean(path):
        return totals.get(path, [0, 0.0])[1] / runs * 1e3
    lines = [f"{stmt} ({mode}): client median {timing.median_ms:.3f} ms, "
             f"mean {sum(timing.times_s) / len(timing.times_s) * 1e3:.3f} ms; "
             "server phases, mean ms per statement (calls per statement):"]
    for label, _module, path, depth in PHASES:
        if path not in totals:
            lines.append(f"  {'  ' * depth}{label}: n/a")
            continue
        calls = totals[path][0] / runs
        lines.append(f"  {'  ' * depth}{label}: {mean(path):.3f} ({calls:g})")
    hops = mean("Session.call") - sum(mean(p) for p in ENGINE_CALLS)
    lines.append(f"  thread hops and asyncio around the engine calls: {hops:.3f}")
    return lines


# --------------------------------------------------------------------------- report

def fmt(x: float | None) -> str:
    return "NA" if x is None else f"{x:.3f}"


def check_answers(args, res: Results) -> None:
    want = expected(args)
    q06 = res.answers.get(("duckdb", "q06", "inproc"))
    for (engine, stmt, mode), got in res.answers.items():
        wanted = want.get(stmt, q06)
        if wanted is None or got is None:
            continue
        if not math.isclose(float(got), float(wanted), rel_tol=1e-9):
            res.errors.append(f"{engine} {stmt} {mode}: answer {got!r}, expected {wanted!r}")


def report(args, engines: list[str], res: Results) -> None:
    print("# Fixed cost per statement (bench/fixed_cost.py)")
    print(f"machine: {machine_description()}")
    print(f"segments {args.segments}, small_t rows {args.rows}, lineitem SF {args.sf}, "
          f"{args.warmup} warm-up + {args.repeat} timed runs per statement and mode")
    for note in res.notes:
        print(f"note: {note}")
    print()
    print("| engine | statement | mode | median ms | p10 ms | p90 ms |")
    print("|---|---|---|---:|---:|---:|")
    for (engine, stmt, mode), (med, p10, p90) in res.ms.items():
        print(f"| {engine} | {stmt} | {mode} | {med:.3f} | {p10:.3f} | {p90:.3f} |")
    if res.breakdown:
        print()
        print("## raympp breakdown")
        for line in res.breakdown:
            print(line)
    for e in res.errors:
        print(f"ERROR: {e}")
    print()
    for (engine, stmt, mode), (med, _p10, _p90) in res.ms.items():
        print(f"median_ms_{engine}_{stmt}_{mode}: {med:.3f}")
    for other in (e for e in engines if e != "raympp"):
        for stmt in args.statements:
            for mode in MODES:
                ours = res.ms.get(("raympp", stmt, mode))
                theirs = res.ms.get((other, stmt, "inproc" if other == "duckdb" else mode))
                r = ours[0] / theirs[0] if ours and theirs and theirs[0] > 0 else None
                print(f"ratio_vs_{other}_{stmt}_{mode}: {fmt(r)}")
    for stmt, goal in GOALS_MS.items():
        for mode in MODES:
            ours = res.ms.get(("raympp", stmt, mode))
            if ours is not None:
                print(f"goal_{stmt}_under_{goal:g}ms_{mode}: {'yes' if ours[0] < goal else 'no'}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Fixed cost per statement: raympp vs DuckDB "
                                            "and PostgreSQL 15")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--statements", default=",".join(STATEMENTS))
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--rows", type=int, default=1000, help="rows of small_t")
    p.add_argument("--sf", type=float, default=0.01, help="TPC-H scale factor of lineitem")
    p.add_argument("--repeat", type=int, default=1000, help="timed runs per statement/mode")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--settle", type=float, default=25.0,
                   help="seconds after raympp starts before timing (its kernel warm-up)")
    p.add_argument("--files-dir", help="where tpchgen-cli Parquet is kept (default: temp)")
    p.add_argument("--queries-dir", help="TPC-H query files (workloads/tpch/queries.py)")
    p.add_argument("--breakdown", action="store_true",
                   help="time raympp's coordinator phases (in-process coordinator) too")
    p.add_argument("--serve-instrumented", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve_instrumented:
        serve_instrumented(args.segments)
        return 0
    engines = [e for e in args.engines.split(",") if e]
    args.statements = [s for s in args.statements.split(",") if s]
    if set(engines) - set(ENGINES) or set(args.statements) - set(STATEMENTS):
        p.error(f"engines are {ENGINES}, statements {STATEMENTS}")

    res = Results()
    res.notes.append(f"load average (1/5/15 min) at start: {load_average()}")
    sqls = statements(args)
    work = Path(tempfile.mkdtemp(prefix="fixed-cost-"))
    try:
        files = lineitem_files(args, work)
        for engine in engines:
            try:
                RUNNERS[engine](args, sqls, files, res)
            except Exception as e:  # noqa: BLE001 - report what the others measured
                res.errors.append(f"{engine}: {type(e).__name__}: {e}")
        if args.breakdown:
            run_breakdown(args, sqls, files, res)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        res.notes.append(f"load average at end: {load_average()}")
    check_answers(args, res)
    report(args, engines, res)
    return 1 if res.errors else 0


if __name__ == "__main__":
    sys.exit(main())
