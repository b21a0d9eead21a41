"""`raympp expand --segments M`: grow a running cluster to M segments and move every table
onto them (coordinator/expansion.py), from the command line.

It is a client: it sends `ALTER SYSTEM EXPAND SEGMENTS TO M` to the coordinator over the
PostgreSQL protocol and, while that runs, prints each table's progress from the
raympp_expansion view every few seconds. Without --segments it resumes an expansion that
a crash cut short.
"""

from __future__ import annotations

import os
import threading

PROGRESS_SECONDS = 2.0


def add_parser(sub) -> None:
    p = sub.add_parser("expand", help="add segments to a running cluster and move the tables "
                                      "onto them (online)",
                       description=__doc__.splitlines()[0])
    p.add_argument("--segments", type=int, default=None, metavar="M",
                   help="the number of segments to grow to (default: resume an unfinished "
                        "expansion)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5433)
    p.add_argument("--user", default="raympp")
    p.add_argument("--dbname", default="raympp")
    p.add_argument("--password", default=os.environ.get("PGPASSWORD"))
    p.add_argument("--log-level", default="WARNING")  # `raympp` configures logging with it


def main(args) -> int:
    import psycopg

    def connect():
        return psycopg.connect(host=args.host, port=args.port, user=args.user,
                               dbname=args.dbname, password=args.password, autocommit=True)
    sql = "ALTER SYSTEM EXPAND SEGMENTS" + (
        f" TO {args.segments}" if args.segments is not None else "")
    done = threading.Event()
    try:
        with connect() as c:
            c.add_notice_handler(lambda d: print(d.message_primary, flush=True))
            watcher = threading.Thread(target=_watch, args=(connect, done), daemon=True)
            watcher.start()
            try:
                c.execute(sql)
            finally:
                done.set()
                watcher.join(PROGRESS_SECONDS * 2)
            n = c.execute("SELECT count(*) FROM gp_segment_configuration "
                          "WHERE content >= 0").fetchone()[0]
    except psycopg.Error as e:
        print(f"raympp expand: {e.diag.sqlstate or ''} {str(e).strip()}", flush=True)
        return 1
    print(f"the cluster has {n} segments, every table on all of them", flush=True)
    return 0


def _watch(connect, done: threading.Event) -> None:
    """Print the tables' progress while the expansion runs (its own connection)."""
    shown = None
    try:
        with connect() as c:
            while not done.wait(PROGRESS_SECONDS):
                rows = c.execute("SELECT status, count(*), sum(rows_moved), sum(bytes_moved) "
                                 "FROM raympp_expansion GROUP BY status "
                                 "ORDER BY status").fetchall()
                line = "; ".join(f"{status}: {tables} tables, {moved} rows, {nbytes} bytes"
                                 for status, tables, moved, nbytes in rows)
                if line and line != shown:
                    print(line, flush=True)
                    shown = line
    except Exception as e:  # noqa: BLE001 - progress only: the expansion itself reports
        print(f"(progress unavailable: {e})", flush=True)
