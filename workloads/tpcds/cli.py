"""`raympp tpcds load` and `raympp tpcds run`: TPC-DS against a running raympp (or any
PostgreSQL-protocol server), as a client, like `raympp tpch`.

load: dsdgen (DuckDB's tpcds extension, workloads/tpcds/kit.py) writes the 24 tables at
--sf, exported as CSV into --data-dir-for-files DIR (kept, and reused when generated alike)
or a temporary directory; each table is created with its distribution (fact tables by item,
small dimensions replicated), loaded through COPY FROM STDIN in one transaction, then
ANALYZE. Existing TPC-DS tables are refused unless --replace.

run: the chosen queries of the 99 (texts from the same extension) one after another, each
row with its time or its error. With --check, each answer is compared with DuckDB's over
the data in --data-dir-for-files (generated there at --sf when missing) and the query is
classified right / wrong / refused / error / timeout as bench/tpcds.py does.

Needs the test extras (duckdb 1.5.5 and duckdb-extension-tpcds): a client-side kit, never
the server's query path.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from workloads.tpcds import kit
from workloads.tpch.cli import connection_args


def add_parser(sub) -> None:
    """Register `tpcds load` and `tpcds run` on the top-level subparsers."""
    tpcds = sub.add_parser("tpcds", help="load TPC-DS data into a running server, run the "
                                         "99 queries")
    actions = tpcds.add_subparsers(dest="tpcds_command", required=True)

    load = actions.add_parser("load", help="generate TPC-DS data and load it")
    connection_args(load)
    load.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    load.add_argument("--data-dir-for-files", default=None, metavar="DIR",
                      help="generate the CSV files here and keep them (reused when present); "
                           "default: a temporary directory, removed afterwards")
    load.add_argument("--replace", action="store_true",
                      help="drop existing TPC-DS tables first (default: refuse)")

    run = actions.add_parser("run", help="run TPC-DS queries and print their times")
    connection_args(run)
    run.add_argument("--queries", default=None, help="e.g. 1,3,5-7 (default: all 99)")
    run.add_argument("--timeout", type=float, default=300.0,
                     help="statement_timeout per query in seconds (default 300)")
    run.add_argument("--check", action="store_true",
                     help="compare every answer with DuckDB's over the same data")
    run.add_argument("--sf", type=float, default=1.0,
                     help="scale factor of the loaded data (with --check; default 1)")
    run.add_argument("--data-dir-for-files", default=None, metavar="DIR",
                     help="where the generated data is (with --check; default "
                          "/tmp/raympp-tpcds-files)")
    run.add_argument("--show", action="store_true", help="print each query's result rows")


class CommandError(RuntimeError):
    """What `raympp tpcds` reports as its error (exit code 1)."""


def main(args: argparse.Namespace) -> int:
    try:
        kit.extension_file()  # fails early, naming the package to install
        if args.tpcds_command == "load":
            return load_main(args)
        return run_main(args)
    except (kit.KitError, CommandError, ValueError) as e:
        print(f"raympp tpcds {args.tpcds_command}: error: {e}", file=sys.stderr)
        return 1


def _connect(args):
    import psycopg

    try:
        return psycopg.connect(host=args.host, port=args.port, user=args.user,
                               dbname=args.dbname, autocommit=True, connect_timeout=30)
    except psycopg.OperationalError as e:
        raise CommandError(f"cannot connect to {args.host}:{args.port}: "
                           f"{str(e).strip()}") from None


# --------------------------------------------------------------------------- load

def load_main(args) -> int:
    from rich.console import Console

    err = Console(stderr=True)
    kit.sf_text(args.sf)  # validates
    conn = _connect(args)
    own_dir = args.data_dir_for_files is None
    base = Path(tempfile.mkdtemp(prefix="raympp-tpcds-")) if own_dir \
        else Path(args.data_dir_for_files).resolve()
    t_start = time.perf_counter()
    try:
        if not args.replace:
            present = _present_tables(conn)
            if present:
                raise CommandError(f"TPC-DS table(s) {', '.join(present)} exist already; "
                                   f"--replace drops them first")
        ds = kit.generate(base, args.sf, log=lambda m: err.print(m, highlight=False))
        loads = kit.load(conn, ds, replace=args.replace,
                         log=lambda m: err.print(m, highlight=False))
    finally:
        conn.close()
        if own_dir:
            shutil.rmtree(base, ignore_errors=True)
    _print_load_summary(loads, time.perf_counter() - t_start, args.sf,
                        None if own_dir else base)
    return 0


def _present_tables(conn) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
    ).fetchall()
    return sorted({r[0] for r in rows} & set(kit.TABLES))


def _print_load_summary(loads, total_s, sf, kept_dir) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"TPC-DS SF {kit.sf_text(sf)} loaded")
    t.add_column("table")
    t.add_column("rows", justify="right")
    t.add_column("load s", justify="right")
    for x in loads:
        t.add_row(x.table, f"{x.rows:,}", f"{x.seconds:.2f}")
    out = Console()
    out.print(t)
    out.print(f"total {total_s:.1f}s (generation, load and ANALYZE)"
              + (f"; files kept in {kept_dir}" if kept_dir else ""), highlight=False)


# --------------------------------------------------------------------------- run

def run_main(args) -> int:
    from rich.console import Console
    from rich.table import Table

    numbers = kit.parse_selection(args.queries)
    err = Console(stderr=True)
    duck = None
    if args.check:
        base = Path(args.data_dir_for_files or "/tmp/raympp-tpcds-files").resolve()
        ds = kit.generate(base, args.sf, log=lambda m: err.print(m, highlight=False))
        duck = kit.duck_connect(ds.database, read_only=True)
    texts_con = duck or kit.duck_connect()
    texts = kit.query_texts(texts_con)
    _connect(args).close()

    def progress(r: kit.QueryResult) -> None:
        took = "-" if r.raympp_s is None else f"{r.raympp_s * 1e3:,.1f} ms"
        err.print(f"q{r.number:02d}: {r.status} {took}"
                  + (f" [{r.sqlstate}] {r.message}" if r.sqlstate else
                     (f" {r.message}" if r.message else "")), highlight=False)

    def show(number: int, got: kit.Outcome) -> None:
        print(f"q{number:02d}:\n" + "|".join(got.columns or []))
        for row in got.rows[:50]:
            print("|".join("" if v is None else str(v) for v in row))

    try:
        results = kit.run_all(lambda: _connect(args), duck, texts, numbers, args.timeout,
                              progress, on_rows=show if args.show else None)
    finally:
        texts_con.close()

    t = Table(title=f"TPC-DS on {args.host}:{args.port}")
    for name, justify in (("query", "left"), ("status", "left"), ("rows", "right"),
                          ("time ms", "right"), ("detail", "left")):
        t.add_column(name, justify=justify, overflow="fold")
    for r in results:
        ms = "" if r.raympp_s is None else f"{r.raympp_s * 1e3:,.1f}"
        detail = (f"[{r.sqlstate}] " if r.sqlstate else "") + (r.message or "")
        t.add_row(f"q{r.number:02d}", r.status, "" if r.rows is None else str(r.rows), ms,
                  detail)
    out = Console()
    out.print(t, highlight=False)
    good = ("right",) if args.check else ("ok",)
    ok = [r for r in results if r.status in good]
    out.print(f"{len(ok)} of {len(results)} queries {'right' if args.check else 'answered'}; "
              f"their total {sum(r.raympp_s or 0 for r in ok):.3f}s", highlight=False)
    return 0 if len(ok) == len(results) else 1
