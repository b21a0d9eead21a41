"""The `raympp clickbench load|run` subcommands: argument parsing and rich output.

    raympp clickbench load                       # 1M synthetic rows, seed 1
    raympp clickbench load --rows 10M --seed 7
    raympp clickbench load hits.parquet          # the real data (or hits.tsv[.gz], or
                                                 # a directory of athena_partitioned files)
    raympp clickbench run --queries 1,2,10-12 --tries 3

Both connect to a running `raympp serve` (--host/--port, default 127.0.0.1:5433). The work
itself is in load.py and run.py; this module only parses and prints.
"""

from __future__ import annotations

import argparse
import os

from workloads.clickbench import load, run, sql


def add_parser(sub) -> None:
    p = sub.add_parser("clickbench", help="load ClickBench's hits table and run its 43 queries",
                       description=__doc__.splitlines()[0])
    cb = p.add_subparsers(dest="clickbench_command", required=True)
    ld = cb.add_parser("load", help="create `hits` and load it (synthetic unless files given)")
    _connection_args(ld)
    ld.add_argument("sources", nargs="*", metavar="FILE",
                    help="hits.parquet file(s) or a directory of them, or one hits.tsv[.gz]; "
                         "none: synthetic data")
    ld.add_argument("--rows", default="1M", help="synthetic rows (e.g. 20000, 1M, 10M)")
    ld.add_argument("--seed", type=int, default=1, help="synthetic data seed")
    ld.add_argument("--distributed-by", default=load.DEFAULT_KEY, metavar="COLUMN",
                    help="distribution key (default UserID; 'randomly' for round-robin)")
    ld.add_argument("--jobs", type=int, default=None,
                    help=f"processes converting real Parquet files into part files (default "
                         f"{load.default_jobs()}; synthetic rows are made by the segments)")
    ld.add_argument("--copy-jobs", type=int, default=1,
                    help="concurrent COPY statements (each segment reads every part)")
    ld.add_argument("--tmp-dir", default=None,
                    help="where converted part files go (real Parquet data); the server must "
                         "be able to read it")
    ld.add_argument("--no-analyze", action="store_true", help="skip ANALYZE hits")
    rn = cb.add_parser("run", help="run the 43 queries and print their times")
    _connection_args(rn)
    rn.add_argument("--queries", default=None, help="e.g. 1,2,10-12 (default: all 43)")
    rn.add_argument("--tries", type=int, default=3, help="runs of each query (default 3)")
    rn.add_argument("--show-sql", action="store_true", help="print each query's text")


def _connection_args(p) -> None:
    p.add_argument("--log-level", default="WARNING")  # `raympp` configures logging with it
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5433)
    p.add_argument("--user", default="raympp")
    p.add_argument("--dbname", default="raympp")
    p.add_argument("--password", default=os.environ.get("PGPASSWORD"))


def main(args: argparse.Namespace) -> int:
    info = load.ConnInfo(args.host, args.port, args.user, args.dbname, args.password)
    if args.clickbench_command == "load":
        return load_main(info, args)
    return run_main(info, args)


def parse_rows(text: str) -> int:
    """'10M' / '500k' / '1e6' / '20000' -> int."""
    t = text.strip().upper().replace("_", "")
    mult = {"K": 1_000, "M": 1_000_000, "B": 1_000_000_000}
    if t and t[-1] in mult:
        return int(float(t[:-1]) * mult[t[-1]])
    return int(float(t))


def load_main(info: load.ConnInfo, args) -> int:
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    console = Console(stderr=True)
    key = None if args.distributed_by.lower() == "randomly" else args.distributed_by
    rows = parse_rows(args.rows)
    tsv = len(args.sources) == 1 and ".tsv" in os.path.basename(args.sources[0])
    if tsv:
        total, unit = os.path.getsize(args.sources[0]), "bytes"
    elif args.sources:
        import pyarrow.parquet as pq
        total = sum(pq.ParquetFile(f).metadata.num_rows
                    for f in load.expand_parquet(args.sources))
        unit = "rows"
    else:
        total, unit = rows, "rows"
    columns = [TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
               TextColumn(unit), TimeElapsedColumn(), TimeRemainingColumn()]
    try:
        with Progress(*columns, console=console) as bar:
            made = bar.add_task("converted", total=total) if args.sources and not tsv \
                else None  # (synthetic rows are made and loaded by the same statements)
            loaded = bar.add_task("loaded", total=total)
            progress = load.Progress(
                total,
                on_made=(lambda n: bar.advance(made, n)) if made is not None else None,
                on_loaded=lambda n: bar.advance(loaded, n))
            result = load.load(info, rows=rows, seed=args.seed, sources=args.sources or None,
                               distributed_by=key, jobs=args.jobs, copy_jobs=args.copy_jobs,
                               tmp_dir=args.tmp_dir, progress=progress, analyze=False)
        if not args.no_analyze:
            with console.status("ANALYZE hits"):
                result.analyze_s = load.analyze_table(info)
    except Exception as e:  # noqa: BLE001 - one line for the user, exit status 1
        console.print(f"[red]clickbench load failed:[/red] {run.describe_error(e)}")
        return 1
    rate = result.rows / result.seconds if result.seconds else 0.0
    print(f"loaded {result.rows:,} rows into hits (distributed by "
          f"{key or 'randomly'}) from {result.source} in {result.seconds:.1f} s "
          f"({rate:,.0f} rows/s)"
          + (f"; ANALYZE {result.analyze_s:.1f} s" if result.analyze_s is not None else ""))
    return 0


def run_main(info: load.ConnInfo, args) -> int:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    try:
        numbers = run.parse_selection(args.queries)
    except ValueError as e:
        console.print(f"[red]{e}[/red]")
        return 2
    table = Table(title=f"ClickBench on {info.host}:{info.port}")
    table.add_column("query", justify="right")
    for i in range(args.tries):
        table.add_column(f"try {i + 1} s", justify="right")
    table.add_column("best s", justify="right")
    table.add_column("rows", justify="right")

    def done(t: run.QueryTiming) -> None:
        if args.show_sql:
            console.print(f"Q{t.number}: {sql.QUERIES[t.number - 1]}", highlight=False)
        times = [f"{s:.3f}" for s in t.times_s] + [""] * (args.tries - len(t.times_s))
        if t.error:
            console.print(f"Q{t.number}: [red]{t.error}[/red]", highlight=False)
        else:
            console.print(f"Q{t.number}: " + " ".join(times) + f"  ({t.rows} rows)",
                          highlight=False)
        table.add_row(f"Q{t.number}", *times,
                      f"{t.best_s:.3f}" if t.best_s is not None else "[red]error[/red]",
                      str(t.rows) if t.rows is not None else "")

    try:
        results = run.run_queries(info, numbers, args.tries, on_done=done)
    except Exception as e:  # noqa: BLE001 - cannot connect: one line, exit status 1
        console.print(f"[red]clickbench run failed:[/red] {run.describe_error(e)}")
        return 1
    console.print(table)
    ok = [r.best_s for r in results if r.best_s is not None]
    failed = [r.number for r in results if r.error]
    gm = run.geometric_mean(ok)
    console.print(f"{len(ok)} of {len(results)} queries ran; sum of best times "
                  f"{sum(ok):.3f} s; geometric mean {gm:.4f} s" if gm else "no query ran")
    if failed:
        console.print(f"[red]failed: {', '.join(f'Q{n}' for n in failed)}[/red]")
    return 1 if failed else 0

