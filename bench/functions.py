"""Everyday functions over many rows (issue 14): string, regex, date/time and json
expressions, raympp against DuckDB and PostgreSQL 15 in the same run on the same data.

    .venv/bin/python bench/functions.py                    # 10M rows, 2 segments
    .venv/bin/python bench/functions.py --rows 1M --repeat 3
    .venv/bin/python bench/functions.py --engines raympp,duckdb

Each engine builds the same table from a series (id; s, a URL-like string of 1000 hosts;
d, a date; ts, a timestamp; j, a small jsonb/JSON object) and runs each expression inside
an aggregate, so the answer is one row and the time is the expression's, not the
client's. DuckDB runs in process with 2 threads; PostgreSQL is a private server (bench/
common.py) with parallel workers. Answers are compared across engines (a mismatch is
reported, not timed away). The report ends in `ratio_vs_<engine>: X` lines: the geometric
mean over the expressions of raympp's best time / the other's.
"""

from __future__ import annotations

import argparse
import math
import sys
import traceback
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    PostgresServer, RaymppServer, execute, human_rows, load_average, log,
    machine_description, parse_rows, time_once, timed,
)

ENGINES = ("raympp", "duckdb", "postgres")


@dataclass(frozen=True)
class Case:
    """One expression: its family, PostgreSQL's text of the query (raympp runs the same)
    and DuckDB's where its dialect differs."""

    name: str
    family: str
    sql: str
    duckdb: str | None = None


CASES = [
    Case("lpad+length", "string", "SELECT sum(length(lpad(s, 40, '*'))) FROM fn_t"),
    Case("split_part", "string", "SELECT count(DISTINCT split_part(s, '/', 3)) FROM fn_t"),
    Case("replace+upper", "string",
         "SELECT sum(length(upper(replace(s, 'site', 'host')))) FROM fn_t"),
    Case("like", "string", "SELECT count(*) FROM fn_t WHERE s LIKE '%site7_.com/p/1%'"),
    Case("regex match", "regex", r"SELECT count(*) FROM fn_t WHERE s ~ 'site1[0-9]+\.com/p/9'",
         r"SELECT count(*) FROM fn_t WHERE regexp_matches(s, 'site1[0-9]+\.com/p/9')"),
    Case("regexp_replace", "regex",
         r"SELECT count(DISTINCT regexp_replace(s, '^https://([^/]+)/.*$', '\1')) FROM fn_t"),
    Case("date_trunc", "date",
         "SELECT count(DISTINCT date_trunc('month', ts)) FROM fn_t"),
    Case("extract", "date", "SELECT sum(extract(doy FROM d) + extract(hour FROM ts)) FROM fn_t"),
    Case("interval arithmetic", "date",
         "SELECT max(ts + interval '1 month 2 days') - min(d + 7) FROM fn_t",
         "SELECT max(ts + interval '1 month 2 days') - min(d + 7)::timestamp FROM fn_t"),
    Case("json ->>", "json", "SELECT sum((j ->> 'a')::int) FROM fn_t"),
    Case("json -> text", "json", "SELECT count(DISTINCT j -> 'b') FROM fn_t",
         "SELECT count(DISTINCT (j -> 'b')::varchar) FROM fn_t"),
]


def create_sql(engine: str, n: int) -> list[str]:
    """The statements that build fn_t with n rows in `engine`."""
    host = "(g % 1000)"
    if engine == "duckdb":
        return [f"""CREATE TABLE fn_t AS SELECT g AS id,
            'https://site' || {host} || '.com/p/' || g AS s,
            DATE '2000-01-01' + (g % 9000)::int AS d,
            TIMESTAMP '2000-01-01' + to_seconds(g * 7) AS ts,
            ('{{"a": ' || (g % 100) || ', "b": "x' || (g % 1000) || '"}}')::JSON AS j
            FROM range(1, {n + 1}) t(g)"""]
    dist = " DISTRIBUTED RANDOMLY" if engine == "raympp" else ""
    return [f"CREATE TABLE fn_t (id int8, s text, d date, ts timestamp, j jsonb){dist}",
            f"""INSERT INTO fn_t SELECT g, 'https://site' || {host} || '.com/p/' || g,
            DATE '2000-01-01' + (g % 9000)::int4,
            TIMESTAMP '2000-01-01' + interval '7 seconds' * g,
            ('{{"a": ' || (g % 100) || ', "b": "x' || (g % 1000) || '"}}')::jsonb
            FROM generate_series(1, {n}) g"""]


def normalize(v):
    """Answers compared across engines: numbers as Decimal, intervals and times as text."""
    if isinstance(v, (int, float, Decimal)):
        return Decimal(str(v)).normalize()
    return str(v)


def run_server(engine: str, connect, n: int, args, out: dict) -> None:
    with connect() as conn:
        conn.autocommit = True
        execute(conn, "DROP TABLE IF EXISTS fn_t")
        load_s, _ = time_once(lambda: [execute(conn, q) for q in create_sql(engine, n)])
        if engine == "postgres":
            execute(conn, "VACUUM ANALYZE fn_t")
        log(f"[functions] {engine}: loaded {human_rows(n)} rows in {load_s:.1f} s")
        out[("load", engine)] = load_s
        for case in CASES:
            try:
                t = timed(lambda: conn.execute(case.sql).fetchone()[0], args.repeat)
                out[(case.name, engine)] = t
                log(f"[functions] {engine} {case.name}: {t.best_ms:.1f} ms")
            except Exception as e:  # refused or failed: reported, not timed
                out[(case.name, engine)] = f"{getattr(e, 'sqlstate', '')} {str(e).splitlines()[0]}"
                log(f"[functions] {engine} {case.name}: {out[(case.name, engine)]}")


def run_duckdb(n: int, args, out: dict) -> None:
    import duckdb
    con = duckdb.connect(":memory:", config={"threads": 2})
    load_s, _ = time_once(lambda: [con.execute(q) for q in create_sql("duckdb", n)])
    out[("load", "duckdb")] = load_s
    for case in CASES:
        sql = case.duckdb or case.sql
        t = timed(lambda: con.execute(sql).fetchone()[0], args.repeat)
        out[(case.name, "duckdb")] = t
        log(f"[functions] duckdb {case.name}: {t.best_ms:.1f} ms")


def report(n: int, engines: list[str], out: dict) -> None:
    print(f"# bench/functions.py, {human_rows(n)} rows; {machine_description()}; "
          f"load average {load_average()}")
    header = ["expression", "family"] + [f"{e} ms" for e in engines] + [
        f"raympp/{e}" for e in engines if e != "raympp"] + ["answers"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    ratios: dict[str, list[float]] = {e: [] for e in engines if e != "raympp"}
    for case in CASES:
        row = [case.name, case.family]
        results = {}
        for e in engines:
            t = out.get((case.name, e))
            row.append(f"{t.best_ms:,.1f}" if hasattr(t, "best_ms") else f"({t})")
            if hasattr(t, "best_ms"):
                results[e] = normalize(t.result)
        mine = out.get((case.name, "raympp"))
        for e in ratios:
            other = out.get((case.name, e))
            if hasattr(mine, "best_ms") and hasattr(other, "best_ms"):
                r = mine.best_ms / other.best_ms
                ratios[e].append(r)
                row.append(f"{r:.2f}x")
            else:
                row.append("NA")
        agree = len(set(map(str, results.values()))) <= 1
        row.append("agree" if agree else "DIFFER " + repr(results))
        print("| " + " | ".join(row) + " |")
    print("| load (s) | | " + " | ".join(
        f"{out[('load', e)]:.1f}" if ("load", e) in out else "-" for e in engines) + " |")
    for e, rs in ratios.items():
        g = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else float("nan")
        print(f"ratio_vs_{e}: {g:.2f} (geometric mean over {len(rs)} expressions)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="10M")
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="timed runs after one warm-up")
    p.add_argument("--engines", default=",".join(ENGINES))
    args = p.parse_args(argv)
    n = parse_rows(args.rows)
    engines = [e for e in args.engines.split(",") if e]
    out: dict = {}
    try:
        if "raympp" in engines:
            with RaymppServer(segments=args.segments) as srv:
                run_server("raympp", srv.connect, n, args, out)
        if "duckdb" in engines:
            run_duckdb(n, args, out)
        if "postgres" in engines:
            with PostgresServer() as pg:
                run_server("postgres", pg.connect, n, args, out)
    except Exception:
        traceback.print_exc()
        return 1
    report(n, engines, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
