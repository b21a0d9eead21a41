"""TPC-DS: the 99 queries on raympp against DuckDB over the same generated data; every query
classified right / wrong / refused (0A000) / error (another SQLSTATE) / timeout.

    # against a running server (load, then run):
    .venv/bin/python bench/tpcds.py --sf 0.1 --port 5497
    # reuse the loaded tables, a few queries:
    .venv/bin/python bench/tpcds.py --sf 0.1 --port 5497 --no-load --queries 1,3,40-45
    # start a private `raympp serve` for the run and stop it afterwards:
    .venv/bin/python bench/tpcds.py --sf 0.01 --start-server --segments 2

Needs DuckDB 1.5.5 and `duckdb-extension-tpcds` (raympp's test extras; workloads/tpcds/kit.py).
Data: `CALL dsdgen(sf=N)` into --files-dir (default /tmp/raympp-tpcds-files; reused when
generated alike), exported to CSV and loaded into raympp with COPY FROM STDIN (fact tables
DISTRIBUTED BY their item key, customer/address/demographics/item by their key, small
dimensions REPLICATED), then ANALYZE. DuckDB answers from the database dsdgen wrote
(threads = --duckdb-threads, default 2) with PostgreSQL's NULL order and integer division.

With --postgres a private PostgreSQL 15 (bench/common.PostgresServer, no indexes, work_mem
256MB) is loaded from the same files, ANALYZEd, and times each query too (its answers are
not checked; raympp's are, against DuckDB's); the summary adds the geometric mean of
raympp/PostgreSQL and the queries where raympp was slower.

Each query runs once on each engine (no warm-up; client wall time, the pgwire round trip
included); raympp's statement_timeout is --timeout. Output: a table per query (status,
times, raympp/DuckDB ratio, rows, SQLSTATE and message or the difference), the refusal
and error messages grouped by count, the WRONG queries, a summary line with the geometric
mean of raympp/DuckDB over the right queries, and a JSON report (--json).
Progress goes to stderr. Exit code 1 when any query is WRONG.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import (PostgresServer, RaymppServer, load_average, log,  # noqa: E402
                    machine_description)
from workloads.tpcds import kit  # noqa: E402


# As bench/tpch.py's PostgreSQL: the server's defaults but a work_mem that fits these hash
# tables (PostgreSQL otherwise spills or picks sorts where raympp has its budget).
PG_SETTINGS = {"work_mem": "256MB"}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sf", type=float, default=0.1, help="scale factor (default 0.1)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5432)
    p.add_argument("--user", default="raympp")
    p.add_argument("--dbname", default="raympp")
    p.add_argument("--start-server", action="store_true",
                   help="start `raympp serve` on a free port for the run (--segments)")
    p.add_argument("--segments", type=int, default=2,
                   help="segments of the started server (with --start-server; else only "
                        "recorded in the report)")
    p.add_argument("--files-dir", type=Path, default=Path("/tmp/raympp-tpcds-files"))
    p.add_argument("--no-load", action="store_true", help="the tables are loaded already")
    p.add_argument("--queries", default=None, help="e.g. 1,3,5-7 (default all 99)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="raympp statement_timeout in seconds (default 120)")
    p.add_argument("--duckdb-threads", type=int, default=2)
    p.add_argument("--postgres", action="store_true",
                   help="also time each query on a private PostgreSQL 15 (loaded and "
                        "ANALYZEd from the same files; --postgres-timeout)")
    p.add_argument("--postgres-timeout", type=float, default=120.0,
                   help="PostgreSQL's statement_timeout in seconds (default 120)")
    p.add_argument("--json", type=Path, default=None, help="write the JSON report here")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    numbers = kit.parse_selection(args.queries)
    t0 = time.perf_counter()
    ds = kit.generate(args.files_dir, args.sf, log=log)
    gen_s = time.perf_counter() - t0
    duck = kit.duck_connect(ds.database, read_only=True, threads=args.duckdb_threads)
    texts = kit.query_texts(duck)

    server = None
    if args.start_server:
        server = RaymppServer(segments=args.segments).start()
        host, port = "127.0.0.1", server.port
    else:
        host, port = args.host, args.port

    def connect():
        import psycopg
        return psycopg.connect(host=host, port=port, user=args.user, dbname=args.dbname,
                               autocommit=True)

    pg, pg_version = None, ""
    try:
        pg_load_s = None
        if args.postgres:
            pg = PostgresServer(settings=PG_SETTINGS).start()
            pg_version = pg.version()
            t0 = time.perf_counter()
            with pg.connect() as c:
                kit.load(c, ds, log=log, distributed=False)
            pg_load_s = time.perf_counter() - t0
        load_s = None
        if not args.no_load:
            t0 = time.perf_counter()
            with connect() as c:
                kit.load(c, ds, log=log)
            load_s = time.perf_counter() - t0

        def progress(r: kit.QueryResult) -> None:
            log(f"[tpcds] q{r.number:02d} {r.status} raympp {kit.fmt_s(r.raympp_s)}s "
                f"duckdb {kit.fmt_s(r.duckdb_s)}s"
                + (f" postgres {kit.fmt_s(r.postgres_s) if r.postgres_s else r.postgres_status}"
                   if r.postgres_status else "")
                + (f" {r.sqlstate or ''} {r.message}" if r.message else ""))

        results = kit.run_all(connect, duck, texts, numbers, args.timeout, progress,
                              postgres=pg.connect if pg else None,
                              postgres_timeout_s=args.postgres_timeout)
    finally:
        if server is not None:
            server.stop()
        if pg is not None:
            pg.stop()
        duck.close()

    print(f"TPC-DS SF {kit.sf_text(args.sf)}, raympp {args.segments} segments, DuckDB "
          f"{kit.duckdb_version()} ({args.duckdb_threads} threads); "
          f"{machine_description()}; load average {load_average()}; "
          f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(f"generate {gen_s:.1f}s, load {'-' if load_s is None else f'{load_s:.1f}s'}, "
          f"statement_timeout {args.timeout:g}s")
    if args.postgres:
        print(f"PostgreSQL: {pg_version}, settings {PG_SETTINGS}, no "
              f"indexes, load and ANALYZE {pg_load_s:.1f}s, statement_timeout "
              f"{args.postgres_timeout:g}s")
    print(kit.table_text(results))
    for status in ("refused", "error", "timeout"):
        groups = kit.grouped_messages(results, status)
        if groups:
            print(f"\n{status} ({sum(len(q) for _, q in groups)}):")
            for msg, qs in groups:
                print(f"  {len(qs):3d}  {msg}  (q{', q'.join(str(n) for n in qs)})")
    wrong = [r for r in results if r.status == "wrong"]
    if wrong:
        print(f"\nWRONG ({len(wrong)}):")
        for r in wrong:
            print(f"  q{r.number:02d}: {r.message}")
    print()
    print(kit.summary_line(results))
    if args.json:
        report = kit.report_json(
            results, sf=args.sf, segments=args.segments, duckdb=kit.duckdb_version(),
            timeout_s=args.timeout, generate_s=gen_s, load_s=load_s,
            postgres_load_s=pg_load_s,
            date=f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%dT%H:%M:%SZ}",
            machine=machine_description(), load_average=load_average())
        args.json.write_text(json.dumps(report, indent=1, default=str))
        log(f"[tpcds] report written to {args.json}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
