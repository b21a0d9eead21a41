"""Run TPC-H queries over a PostgreSQL-protocol connection and time them.

A query that fails is recorded with its error and the run goes on; when the failure took
the connection with it, the next query gets a new one. A timeout cancels the statement the
PostgreSQL way (a CancelRequest), so the server stops working on it too.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from workloads.tpch import queries


@dataclass
class Outcome:
    number: int
    times_s: list[float] = field(default_factory=list)
    rows: list | None = None
    columns: list[str] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def best_s(self) -> float | None:
        return min(self.times_s) if self.times_s else None


class QueryTimeout(Exception):
    """A query ran past the runner's time limit."""


def describe_error(e: BaseException) -> str:
    if isinstance(e, QueryTimeout):
        return str(e)
    state = getattr(e, "sqlstate", None)
    text = str(e).strip().replace("\n", " | ")
    return f"{type(e).__name__}{f' [{state}]' if state else ''}: {text}"


def execute(conn, sql: str, timeout_s: float | None = None) -> tuple[list[str], list]:
    """Run one statement; returns (column names, rows). Cancels it after timeout_s.

    `conn` is a DB-API connection with psycopg's extras: cursor() usable in `with`,
    cancel() (or cancel_safe()), `closed`."""
    timer = None
    fired = threading.Event()
    if timeout_s:
        # psycopg >= 3.2 has cancel_safe; anything else (the benchmark's DuckDB) cancel.
        cancel = getattr(conn, "cancel_safe", None) or conn.cancel

        def expire():
            fired.set()
            cancel()
        timer = threading.Timer(timeout_s, expire)
        timer.daemon = True
        timer.start()
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            cols = [d[0] for d in cur.description] if cur.description else []
            return cols, cur.fetchall() if cur.description else []
    except Exception as e:
        if fired.is_set():
            raise QueryTimeout(f"timeout: cancelled after {timeout_s:g}s "
                               f"({describe_error(e)})") from e
        raise
    finally:
        if timer is not None:
            timer.cancel()


def run(connect: Callable[[], object], numbers: list[int], directory: Path,
        repeat: int = 1, warmup: int = 0, timeout_s: float | None = None,
        on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Each query `warmup` times untimed, then `repeat` times timed; the rows of the last run
    are kept. The first error ends that query's runs."""
    conn = None
    out = []
    try:
        for n in numbers:
            o = Outcome(n)
            try:
                sql = queries.read(n, directory)
            except OSError as e:
                o.error = f"cannot read {queries.path(n, directory)}: {e}"
                out.append(o)
                if on_done:
                    on_done(o)
                continue
            for i in range(warmup + repeat):
                try:
                    if conn is None or conn.closed:
                        conn = connect()
                    t0 = time.perf_counter()
                    o.columns, o.rows = execute(conn, sql, timeout_s)
                    if i >= warmup:
                        o.times_s.append(time.perf_counter() - t0)
                except Exception as e:  # reported per query; the run goes on
                    o.error = describe_error(e)
                    if conn is not None and _broken(conn):
                        conn.close()
                        conn = None
                    break
            out.append(o)
            if on_done:
                on_done(o)
    finally:
        if conn is not None:
            conn.close()
    return out


def _broken(conn) -> bool:
    try:
        conn.execute("SELECT 1")
        return False
    except Exception:
        return True
