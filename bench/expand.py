"""Growing a cluster online (issue 16): TPC-H loaded on N segments, `ALTER SYSTEM EXPAND
SEGMENTS TO M`, and what it costs: rows and bytes moved per table (against the
jump-consistent expectation 1 - N/M), seconds per table and in all, and the latency of a
few TPC-H queries before, during and after the move, with DuckDB's and PostgreSQL 15's
times for the same queries on the same data in the same run as the yardstick.

    .venv/bin/python bench/expand.py                     # SF1, 2 -> 4 segments
    .venv/bin/python bench/expand.py --sf 0.1 --to 3 --engines raympp,duckdb

The probe queries run one after another on one connection for the whole move; every
answer during and after the move is compared with the answer before it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import traceback
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import (  # noqa: E402
    PostgresServer, RaymppServer, load_average, log, machine_description, timed,
)
from workloads.tpch import datagen, loader, queries, schema  # noqa: E402

ENGINES = ("raympp", "duckdb", "postgres")
PROBES = (1, 3, 6, 12)  # an aggregate scan, joins, a filter-sum, a join on the key


def generate(sf: float, files_dir: Path) -> dict[str, list[Path]]:
    out = files_dir / f"sf{datagen.sf_text(sf)}"
    files: dict[str, list[Path]] = {}
    for tables, parts in datagen.groups(sf):
        files.update(datagen.generate_tables(out, sf, tables, parts))
    return {t: files[t] for t in schema.NAMES}


def _answer(rows) -> str:
    return repr([tuple(round(Decimal(str(v)), 2) if isinstance(v, (float, Decimal)) else v
                       for v in r) for r in rows])


def run_raympp(args, files, texts: dict[int, str], out: dict) -> None:
    with RaymppServer(segments=args.segments) as srv:
        conn = srv.connect()
        t0 = time.perf_counter()
        loader.load_files(conn, files, via="file", distributed=True)
        out["load_s"] = time.perf_counter() - t0
        log(f"[expand] raympp loaded SF{args.sf} on {args.segments} segments in "
            f"{out['load_s']:.1f} s")
        before = {}
        for n, sql in texts.items():
            t = timed(lambda: conn.execute(sql).fetchall(), args.repeat)
            before[n] = t.best_ms
            out.setdefault("answers", {})[n] = _answer(t.result)
        out["before"] = before
        during: dict[int, list[float]] = {n: [] for n in texts}
        wrong: list = []
        done = threading.Event()

        def probe():
            with srv.connect() as c:
                while not done.is_set():
                    for n, sql in texts.items():
                        t1 = time.perf_counter()
                        rows = c.execute(sql).fetchall()
                        ms = (time.perf_counter() - t1) * 1e3
                        if done.is_set():
                            return
                        during[n].append(ms)
                        if _answer(rows) != out["answers"][n]:
                            wrong.append(n)
        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        time.sleep(0.5)
        t0 = time.perf_counter()
        conn.execute(f"ALTER SYSTEM EXPAND SEGMENTS TO {args.to}")
        out["expand_s"] = time.perf_counter() - t0
        done.set()
        prober.join(600)
        log(f"[expand] raympp grew to {args.to} segments in {out['expand_s']:.1f} s")
        out["during"] = during
        out["wrong"] = wrong
        out["moves"] = conn.execute(
            "SELECT table_name, rows_moved, bytes_moved, "
            "extract(epoch FROM finished - started) FROM raympp_expansion "
            "ORDER BY table_name").fetchall()
        out["rows"] = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                       for t in schema.NAMES}
        after = {}
        for n, sql in texts.items():
            t = timed(lambda: conn.execute(sql).fetchall(), args.repeat)
            after[n] = t.best_ms
            if _answer(t.result) != out["answers"][n]:
                wrong.append(n)
        out["after"] = after
        conn.close()


def run_duckdb(args, files, texts, out: dict) -> None:
    import duckdb
    con = duckdb.connect(":memory:", config={"threads": args.to})
    for table in schema.TABLES:
        con.execute(table.create_sql(distributed=False))
        paths = [str(p) for p in files[table.name]]
        con.execute(f"INSERT INTO {table.name} SELECT * FROM read_parquet({paths!r})")
    out["probe"] = {n: timed(lambda: con.execute(sql).fetchall(), args.repeat).best_ms
                    for n, sql in texts.items()}
    con.close()


def run_postgres(args, files, texts, out: dict) -> None:
    with PostgresServer() as pg:
        conn = pg.connect()
        conn.autocommit = True
        loader.load_files(conn, files, via="stdin", distributed=False, analyze=False)
        conn.execute("VACUUM ANALYZE")
        out["probe"] = {n: timed(lambda: conn.execute(sql).fetchall(), args.repeat).best_ms
                        for n, sql in texts.items()}
        conn.close()


def report(args, engines, res: dict) -> None:
    r = res["raympp"]
    print(f"# bench/expand.py, TPC-H SF{args.sf}, {args.segments} -> {args.to} segments; "
          f"{machine_description()}; load average {load_average()}")
    expect = 1 - args.segments / args.to
    print(f"\nexpansion: {r['expand_s']:.1f} s in all (load took {r['load_s']:.1f} s)\n")
    print("| table | rows | rows moved | moved share | expected | MB moved | seconds |")
    print("|---|---|---|---|---|---|---|")
    replicated = {t.name for t in schema.TABLES if not t.distributed_by}
    for name, moved, nbytes, secs in r["moves"]:
        rows = r["rows"][name]
        share = moved / rows if rows else 0.0
        # A replicated table is copied whole to each new segment.
        want = args.to - args.segments if name in replicated else expect
        print(f"| {name} | {rows:,} | {moved:,} | {share:.3f} | {want:.3f} | "
              f"{nbytes / 1e6:,.1f} | {float(secs or 0):.1f} |")
    others = [e for e in engines if e != "raympp" and "probe" in res.get(e, {})]
    header = ["query", "before ms", "during ms (median)", "during max", "after ms",
              "during/before"] + [f"{e} ms" for e in others] + [
              f"before/{e}" for e in others] + [f"after/{e}" for e in others]
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for n in r["before"]:
        d = r["during"][n]
        med = statistics.median(d) if d else float("nan")
        cells = [f"Q{n:02d}", f"{r['before'][n]:,.1f}", f"{med:,.1f} ({len(d)} runs)",
                 f"{max(d):,.1f}" if d else "-", f"{r['after'][n]:,.1f}",
                 f"{med / r['before'][n]:.2f}x"]
        cells += [f"{res[e]['probe'][n]:,.1f}" for e in others]
        cells += [f"{r['before'][n] / res[e]['probe'][n]:.2f}x" for e in others]
        cells += [f"{r['after'][n] / res[e]['probe'][n]:.2f}x" for e in others]
        print("| " + " | ".join(cells) + " |")
    print(f"\nanswers during and after the move: "
          f"{'all equal to before' if not r['wrong'] else 'DIFFER for ' + repr(r['wrong'])}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--segments", type=int, default=2, help="segments before")
    p.add_argument("--to", type=int, default=4, help="segments after")
    p.add_argument("--repeat", type=int, default=3, help="timed runs of each probe query")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--files-dir", default=None, help="where tpchgen-cli writes (kept)")
    args = p.parse_args(argv)
    engines = [e for e in args.engines.split(",") if e]
    if "raympp" not in engines:
        p.error("the benchmark is raympp's expansion: --engines must include raympp")
    res: dict = {e: {} for e in engines}
    with tempfile.TemporaryDirectory(prefix="raympp-expand-") as tmp:
        try:
            files = generate(args.sf, Path(args.files_dir or tmp))
            texts = {n: queries.read(n) for n in PROBES}
            run_raympp(args, files, texts, res["raympp"])
            for engine, run in (("duckdb", run_duckdb), ("postgres", run_postgres)):
                if engine in engines:
                    run(args, files, texts, res[engine])
        except Exception:
            traceback.print_exc()
            return 1
    report(args, engines, res)
    return 0 if not res["raympp"].get("wrong") else 1


if __name__ == "__main__":
    sys.exit(main())
