"""Changing data (issue 15): DELETE and UPDATE of 1% and of 50% of TPC-H lineitem, and a
query over the table before the changes, after them and after compaction, on raympp,
DuckDB and PostgreSQL 15 in the same run on the same data.

    .venv/bin/python bench/dml.py                 # SF1 (6M rows), 2 segments
    .venv/bin/python bench/dml.py --sf 0.1 --engines raympp,duckdb

Every engine runs the same statements in order on its own copy of lineitem (generated
once by tpchgen-cli, bench/tpch.py's data): each change runs once (it cannot be repeated
on the same rows) and is timed with its commit; the query is timed as the best of
--repeat runs after a warm-up. raympp runs the steps with `raympp.autocompact` off, so
that "after the changes" measures the deletion files, then compacts with VACUUM (timed);
PostgreSQL's VACUUM is timed too (DuckDB's in-memory tables have nothing to vacuum:
CHECKPOINT). Row counts of every change and the query's answers are compared across the
engines.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
import traceback
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import (  # noqa: E402
    PostgresServer, RaymppServer, load_average, log, machine_description, timed,
)
from workloads.tpch import datagen, loader, schema  # noqa: E402

ENGINES = ("raympp", "duckdb", "postgres")
QUERY = ("SELECT l_returnflag, l_linestatus, count(*), sum(l_quantity), "
         "sum(l_extendedprice * (1 - l_discount)) FROM lineitem "
         "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus")
# (step, statement): the changes, in order. l_orderkey % 100 picks 1% of the rows;
# l_orderkey % 2 half of them, l_linenumber % 2 about half of the rest.
STEPS = [
    ("query before", None),
    ("DELETE 1%", "DELETE FROM lineitem WHERE l_orderkey % 100 = 7"),
    ("UPDATE 1%", "UPDATE lineitem SET l_discount = l_discount + 0.01 "
                  "WHERE l_orderkey % 100 = 13"),
    ("DELETE 50%", "DELETE FROM lineitem WHERE l_orderkey % 2 = 0"),
    ("UPDATE 50%", "UPDATE lineitem SET l_quantity = l_quantity + 1 WHERE l_linenumber % 2 = 1"),
    ("query after changes", None),
    ("VACUUM", "VACUUM"),
    ("query after compaction", None),
]


def run_steps(engine: str, execute, query, repeat: int, out: dict) -> None:
    """`execute(sql) -> rows affected`, `query(sql) -> rows`."""
    for step, sql in STEPS:
        if sql is None:
            t = timed(lambda: query(QUERY), repeat)
            out[(step, engine)] = (t.best_ms, _normalize(t.result))
        else:
            t0 = time.perf_counter()
            n = execute(sql)
            out[(step, engine)] = ((time.perf_counter() - t0) * 1e3, n)
        log(f"[dml] {engine} {step}: {out[(step, engine)][0]:,.1f} ms")


def _normalize(rows) -> str:
    return repr([tuple(round(Decimal(str(v)), 2) if isinstance(v, (float, Decimal)) else v
                       for v in r) for r in rows])


def run_psql_engine(engine: str, connect, files, args, out: dict) -> None:
    conn = connect()
    conn.autocommit = True
    try:
        t0 = time.perf_counter()
        if engine == "raympp":
            loader.load_files(conn, {"lineitem": files["lineitem"]}, via="file",
                              distributed=True)
            conn.execute("SET raympp.autocompact = off")
        else:
            loader.load_files(conn, {"lineitem": files["lineitem"]}, via="stdin",
                              distributed=False, analyze=False)
            conn.execute("VACUUM ANALYZE lineitem")
        out[("load", engine)] = time.perf_counter() - t0
        log(f"[dml] {engine} loaded lineitem in {out[('load', engine)]:.1f} s")

        def execute(sql):
            cur = conn.execute(sql if sql != "VACUUM" else "VACUUM lineitem")
            return cur.rowcount if sql != "VACUUM" else None

        run_steps(engine, execute, lambda sql: conn.execute(sql).fetchall(), args.repeat, out)
    finally:
        conn.close()


def run_duckdb(files, args, out: dict) -> None:
    import duckdb
    con = duckdb.connect(":memory:", config={"threads": args.segments})
    t0 = time.perf_counter()
    table = schema.BY_NAME["lineitem"]
    con.execute(table.create_sql(distributed=False))
    paths = [str(p) for p in files["lineitem"]]
    con.execute(f"INSERT INTO lineitem SELECT * FROM read_parquet({paths!r})")
    out[("load", "duckdb")] = time.perf_counter() - t0

    def execute(sql):
        if sql == "VACUUM":
            con.execute("CHECKPOINT")
            return None
        return con.execute(sql).fetchone()[0]

    run_steps("duckdb", execute, lambda sql: con.execute(sql).fetchall(), args.repeat, out)
    con.close()


def report(args, engines: list[str], out: dict) -> None:
    print(f"# bench/dml.py, TPC-H SF{args.sf} lineitem; {machine_description()}; "
          f"load average {load_average()}")
    others = [e for e in engines if e != "raympp"]
    header = ["step"] + [f"{e} ms" for e in engines] + [f"raympp/{e}" for e in others] + [
        "rows / answers"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    ratios: dict[str, list[float]] = {e: [] for e in others}
    for step, _ in STEPS:
        cells = [step]
        got = {e: out.get((step, e)) for e in engines}
        cells += [f"{g[0]:,.1f}" if g else "-" for g in got.values()]
        for e in others:
            if got.get("raympp") and got.get(e) and got[e][0] > 0:
                r = got["raympp"][0] / got[e][0]
                ratios[e].append(r)
                cells.append(f"{r:.2f}x")
            else:
                cells.append("NA")
        answers = {e: g[1] for e, g in got.items() if g and g[1] is not None}
        same = len(set(map(str, answers.values()))) <= 1
        first = next(iter(answers.values()), "")
        cells.append(("agree" + (f" ({first})" if isinstance(first, int) else ""))
                     if same else "DIFFER " + repr(answers))
        print("| " + " | ".join(cells) + " |")
    print("| load (s) | " + " | ".join(
        f"{out[('load', e)]:.1f}" if ("load", e) in out else "-" for e in engines) + " |")
    for e, rs in ratios.items():
        g = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else float("nan")
        print(f"ratio_vs_{e}: {g:.2f} (geometric mean over {len(rs)} steps)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="timed runs of the query")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--data-dir", default=None, help="where tpchgen-cli writes (kept)")
    args = p.parse_args(argv)
    engines = [e for e in args.engines.split(",") if e]
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.mkdtemp(prefix="raympp-dml-")
    data = Path(args.data_dir or tmp)
    out: dict = {}
    try:
        parts = datagen.parts_for("lineitem", args.sf)
        files = datagen.generate_tables(data / f"sf{datagen.sf_text(args.sf)}", args.sf,
                                        ["lineitem"], parts)
        if "raympp" in engines:
            with RaymppServer(segments=args.segments) as srv:
                run_psql_engine("raympp", srv.connect, files, args, out)
        if "duckdb" in engines:
            run_duckdb(files, args, out)
        if "postgres" in engines:
            with PostgresServer() as pg:
                run_psql_engine("postgres", pg.connect, files, args, out)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report(args, engines, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
