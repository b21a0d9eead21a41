"""`raympp tpch load` and `raympp tpch run`: TPC-H against a running raympp (or any
PostgreSQL-protocol server), as a client.

load: tpchgen-cli generates the tables into Parquet parts, a few tables per run (see
datagen.groups), in a temporary directory or in --data-dir-for-files DIR (kept and reused),
while the main thread loads the tables already generated; a progress bar counts tables
generated and parts loaded. Tables are created with their distribution, each loaded in one
transaction, then ANALYZE. With the default `--via file` the server reads the files
itself, so it must see them at the same path (a local cluster, or a shared directory).

run: the chosen queries in order, one row per query with its time or its error.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from workloads.tpch import datagen, loader, queries, runner, schema

DEFAULT_USER = "raympp"


def add_parser(sub) -> None:
    """Register `tpch load` and `tpch run` on the top-level subparsers."""
    tpch = sub.add_parser("tpch", help="load TPC-H data into a running server, run the queries")
    actions = tpch.add_subparsers(dest="tpch_command", required=True)

    load = actions.add_parser("load", help="generate TPC-H data and load it")
    connection_args(load)
    load.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    load.add_argument("--data-dir-for-files", default=None, metavar="DIR",
                      help="generate the Parquet files here and keep them (reused when "
                           "present); default: a temporary directory, removed afterwards")
    load.add_argument("--via", choices=loader.VIAS, default="file",
                      help="file: the server reads the Parquet files (must see the path); "
                           "stdin: stream CSV through COPY FROM STDIN")
    load.add_argument("--replace", action="store_true",
                      help="drop existing TPC-H tables first (default: refuse)")
    load.add_argument("--threads", type=int, default=None,
                      help="tpchgen-cli threads (default: all CPUs)")

    run = actions.add_parser("run", help="run TPC-H queries and print their times")
    connection_args(run)
    run.add_argument("--queries", default=None, help="e.g. 1,3,5-7 (default: all 22)")
    run.add_argument("--queries-dir", default=None,
                     help="directory of q01.sql..q22.sql (default: ../shared/tpch/queries)")
    run.add_argument("--repeat", type=int, default=1, help="timed runs per query (best shown)")
    run.add_argument("--warmup", type=int, default=0, help="untimed runs per query first")
    run.add_argument("--timeout", type=float, default=None,
                     help="cancel a query after this many seconds")
    run.add_argument("--show", action="store_true", help="print each query's result rows")


def connection_args(p) -> None:
    """--host, --port, --user, --dbname and --log-level, as every kit's client command has
    them (a password comes from PGPASSWORD or ~/.pgpass)."""
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5433)
    p.add_argument("--user", default=DEFAULT_USER)
    p.add_argument("--dbname", default=DEFAULT_USER)
    p.add_argument("--log-level", default="WARNING")  # `raympp` configures logging with it
    # A password comes from PGPASSWORD or ~/.pgpass, as for psql.


def main(args: argparse.Namespace) -> int:
    try:
        if args.tpch_command == "load":
            return load_main(args)
        return run_main(args)
    except (loader.LoadError, datagen.GenerateError, queries.QueryFileError) as e:
        print(f"raympp tpch {args.tpch_command}: error: {e}", file=sys.stderr)
        return 1


def _connect(args, autocommit: bool = True):
    import psycopg

    return psycopg.connect(host=args.host, port=args.port, user=args.user,
                           dbname=args.dbname, autocommit=autocommit, connect_timeout=30)


def _connect_or_fail(args):
    import psycopg

    try:
        return _connect(args)
    except psycopg.OperationalError as e:
        raise loader.LoadError(f"cannot connect to {args.host}:{args.port}: "
                               f"{str(e).strip()}") from None


# --------------------------------------------------------------------------- load

def load_main(args) -> int:
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                               TextColumn, TimeElapsedColumn)

    console = Console(stderr=True)
    sf = args.sf
    datagen.sf_text(sf)  # validates
    datagen.executable()  # fails early when the generator is missing
    conn = _connect_or_fail(args)
    own_dir = args.data_dir_for_files is None
    if own_dir:
        files_dir = Path(tempfile.mkdtemp(prefix="raympp-tpch-"))
        os.chmod(files_dir, 0o755)  # a server running as another local user reads it too
    else:
        files_dir = Path(args.data_dir_for_files).resolve() / f"sf{datagen.sf_text(sf)}"
        files_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    loads: list[loader.TableLoad] = []
    stop = threading.Event()
    started = False
    try:
        loader.prepare(conn, args.replace)
        started = True
        parts = {t.name: datagen.parts_for(t.name, sf) for t in schema.TABLES}
        columns = (SpinnerColumn(), TextColumn("{task.description:<28}"), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console) as progress:
            gen_task = progress.add_task("generate tables", total=len(schema.TABLES))
            load_task = progress.add_task("load parts", total=sum(parts.values()))
            ready = _generate_in_background(files_dir, sf, args.threads, progress, gen_task,
                                            stop)

            def on_part(table, path, rows):
                progress.advance(load_task)

            for _ in schema.TABLES:
                item = ready.get()
                if isinstance(item, BaseException):
                    raise item
                name, files = item
                progress.update(load_task, description=f"load {name} ({len(files)} parts)")
                loads.append(loader.load_table(conn, schema.BY_NAME[name], files, args.via,
                                               True, on_part))
            progress.update(load_task, description="ANALYZE")
            t0 = time.perf_counter()
            try:
                conn.execute("ANALYZE")
            except Exception as e:
                raise loader.LoadError(f"ANALYZE failed: {loader.describe(e)}") from e
            analyze_s = time.perf_counter() - t0
            progress.update(load_task, description="loaded")
    except (loader.LoadError, datagen.GenerateError) as e:
        if not started:
            raise
        done = ", ".join(f"{x.table} ({x.rows:,} rows)" for x in loads)
        raise type(e)(f"{e}\n  complete tables: {done or 'none'}") from None
    finally:
        stop.set()
        conn.close()
        if own_dir:
            shutil.rmtree(files_dir, ignore_errors=True)
    _print_load_summary(console, loads, analyze_s, time.perf_counter() - t_start, sf,
                        None if own_dir else files_dir)
    return 0


def _generate_in_background(files_dir, sf, threads, progress, task,
                            stop: threading.Event) -> queue.Queue:
    """Generate table after table in a daemon thread; each (name, files) is put on the
    returned queue as it is done, or the exception that stopped generation. Setting `stop`
    ends it after the tpchgen-cli run in progress."""
    ready: queue.Queue = queue.Queue()

    def work():
        try:
            for tables, n in datagen.groups(sf):
                if stop.is_set():
                    return
                what = ", ".join(tables) if len(tables) <= 2 else f"{len(tables)} tables"
                progress.update(task, description=f"generate {what}")
                generated = datagen.generate_tables(files_dir, sf, tables, n, threads)
                for name, files in generated.items():
                    progress.advance(task)
                    ready.put((name, files))
            progress.update(task, description="generated")
        except BaseException as e:  # handed to the loading thread, which raises it
            ready.put(e)

    threading.Thread(target=work, name="tpch-generate", daemon=True).start()
    return ready


def _print_load_summary(console, loads, analyze_s, total_s, sf, kept_dir) -> None:
    from rich.table import Table

    t = Table(title=f"TPC-H SF {datagen.sf_text(sf)} loaded")
    t.add_column("table")
    t.add_column("rows", justify="right")
    t.add_column("parts", justify="right")
    t.add_column("load s", justify="right")
    t.add_column("rows/s", justify="right")
    for x in loads:
        rate = x.rows / x.seconds if x.seconds else 0
        t.add_row(x.table, f"{x.rows:,}", str(len(x.files)), f"{x.seconds:.2f}", f"{rate:,.0f}")
    from rich.console import Console

    out = Console()
    out.print(t)
    out.print(f"ANALYZE {analyze_s:.2f}s; total {total_s:.1f}s (generation overlapped with "
              f"loading)" + (f"; files kept in {kept_dir}" if kept_dir else ""))


# --------------------------------------------------------------------------- run

def run_main(args) -> int:
    from rich.console import Console
    from rich.table import Table

    numbers = queries.parse_selection(args.queries)
    directory = queries.find_dir(args.queries_dir)
    err = Console(stderr=True)
    out = Console()

    def on_done(o: runner.Outcome) -> None:
        status = f"{o.best_s * 1e3:,.1f} ms" if o.ok else f"ERROR {o.error}"
        err.print(f"Q{o.number:02d}: {status}", highlight=False)
        if args.show and o.ok:
            print(_result_text(o), flush=True)

    try:
        _connect(args).close()
    except Exception as e:
        raise queries.QueryFileError(f"cannot connect to {args.host}:{args.port}: "
                                     f"{str(e).strip()}") from None
    outcomes = runner.run(lambda: _connect(args), numbers, directory, repeat=max(1, args.repeat),
                          warmup=max(0, args.warmup), timeout_s=args.timeout, on_done=on_done)

    t = Table(title=f"TPC-H on {args.host}:{args.port}")
    t.add_column("query")
    t.add_column("rows", justify="right")
    t.add_column("time ms", justify="right")
    t.add_column("error", overflow="fold")
    for o in outcomes:
        ms = f"{o.best_s * 1e3:,.1f}" if o.ok else ""
        rows = str(len(o.rows)) if o.ok and o.rows is not None else ""
        t.add_row(f"Q{o.number:02d}", rows, ms, o.error or "")
    out.print(t, highlight=False)
    ok = [o for o in outcomes if o.ok]
    total = sum(o.best_s for o in ok)
    out.print(f"{len(ok)} of {len(outcomes)} queries succeeded; their total {total:.3f}s",
              highlight=False)
    return 0 if len(ok) == len(outcomes) else 1


def _result_text(o: runner.Outcome, limit: int = 50) -> str:
    """The rows as psql prints them unaligned: a header, then '|'-separated values."""
    lines = [f"Q{o.number:02d}:", "|".join(o.columns or [])]
    for r in (o.rows or [])[:limit]:
        lines.append("|".join("" if v is None else str(v) for v in r))
    n = len(o.rows or [])
    lines.append(f"({n} rows{f', first {limit} shown' if n > limit else ''})")
    return "\n".join(lines)
