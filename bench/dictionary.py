"""Dictionary-encoded strings on and off: the 43 ClickBench queries on two raympp servers
holding the same synthetic `hits`, one storing repeated strings dictionary-encoded (the
default) and one plain (RAYMPP_DICTIONARY_FRACTION=0), queried alternately so that both
see the same machine load. (Answers under LIMIT are checked against DuckDB by
bench/clickbench.py, not here.)

    .venv/bin/python bench/dictionary.py                     # 10M rows, 5 tries per query
    .venv/bin/python bench/dictionary.py --rows 1M --queries 13-15,21-24,29
    .venv/bin/python bench/dictionary.py --operators --rows 4M   # segment operators alone

Each query runs --tries times on each server, alternating which goes first; the best
time counts. Prints per-query times, the ratio encoded/plain, geometric means over all
queries and over those that read a text column, and whether both answered alike.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))

from common import RaymppServer, human_rows, load_average, log, machine_description, parse_rows  # noqa: E402

from workloads.clickbench import compare, load, run, sql  # noqa: E402

TEXT_COLUMNS = {name for name, t in sql.COLUMNS if t in ("TEXT", "VARCHAR(255)", "CHAR")}


def reads_text(query: str) -> bool:
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(query, read="postgres")
    if any(isinstance(s, exp.Star) for s in tree.expressions):
        return True
    return any(c.name.lower() in TEXT_COLUMNS for c in tree.find_all(exp.Column))


def operators(rows: int, tries: int) -> int:
    """The segment side alone, in this process: a ShardStore of the synthetic rows written
    twice (strings encoded and plain) and three pipelines over each, best of `tries`:
    Scan(SearchPhrase <> '') + partial GROUP BY SearchPhrase (Q13's), Scan(Title LIKE
    '%Google%') + partial GROUP BY Title, and Q29's regexp_replace over Referer grouped."""
    from planner import expr as ex
    from planner import plan
    from planner import types as T
    from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef
    from segment import executor
    from segment.operators import base
    from segment.storage import chunk as chunk_mod
    from segment.storage.shard_store import ShardStore
    from planner import table_functions
    from segment.table_functions import clickbench_hits

    batches = [clickbench_hits.block(1, rows, i) for i in range(table_functions.n_blocks(rows))]
    text = T.TEXT
    cols = tuple(ColumnDef(f.name, text) for f in batches[0].schema
                 if f.name in ("searchphrase", "title", "referer"))
    table = TableDef(1, "hits", cols, DistPolicy(DistKind.RANDOM))
    stores = {}
    for name, fraction in (("plain", 0.0), ("encoded", chunk_mod.DICTIONARY_FRACTION)):
        saved, chunk_mod.DICTIONARY_FRACTION = chunk_mod.DICTIONARY_FRACTION, fraction
        try:
            store = ShardStore(tempfile.mkdtemp(prefix=f"dictionary-{name}-"), sync=False)
            store.create_table(1, table.arrow_schema())
            store.write(1, 1, [b.select([c.name for c in cols]) for b in batches])
            store.commit(1)
        finally:
            chunk_mod.DICTIONARY_FRACTION = saved
        stores[name] = store
    s0 = ex.ColumnRef(0, text, "s")
    count = (ex.AggCall(ex.AggFunc.COUNT_STAR, None, False, T.INT8),)

    def grouped(column: str, pred, key=s0):
        i = [c.name for c in cols].index(column)
        scan = plan.Scan(table, (i,), plan.fields_of([(column, text)]), pred)
        child = scan if key is s0 else plan.Project(scan, (key, s0), plan.fields_of(
            [("k", text), (column, text)]))
        return plan.Aggregate(child, (s0,), count, plan.AggMode.PARTIAL,
                              plan.fields_of([("k", text), ("c", T.INT8)]))

    lit = lambda v: ex.Literal(v, text)  # noqa: E731
    pipelines = {
        "SearchPhrase <> '' GROUP BY SearchPhrase": grouped(
            "searchphrase", ex.Call(ex.Func.NE, (s0, lit("")), T.BOOL)),
        "Title LIKE '%Google%' GROUP BY Title": grouped(
            "title", ex.Like(s0, lit("%Google%"), False, False)),
        "GROUP BY regexp_replace(Referer, ...)": grouped(
            "referer", ex.Call(ex.Func.NE, (s0, lit("")), T.BOOL),
            key=ex.Call(ex.Func.REGEXP_REPLACE, (s0, lit("^https?://(?:www\\.)?([^/]+)/.*$"),
                                                 lit("\\1")), text)),
    }
    print(f"\n# Segment operators alone, {human_rows(rows)} rows in one process, best of "
          f"{tries}\n")
    print("| pipeline | plain ms | encoded ms | encoded/plain |")
    print("|---|---:|---:|---:|")
    for label, node in pipelines.items():
        best = {}
        for _ in range(tries):
            for name, store in stores.items():
                t0 = time.perf_counter()
                for _batch in executor.run(node, base.ExecContext(store=store)):
                    pass
                dt = time.perf_counter() - t0
                best[name] = min(dt, best.get(name, dt))
        print(f"| {label} | {best['plain'] * 1e3:.0f} | {best['encoded'] * 1e3:.0f} | "
              f"{best['encoded'] / best['plain']:.2f} |")
    for store in stores.values():
        shutil.rmtree(store.root, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="10M")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--tries", type=int, default=5)
    p.add_argument("--queries", default=None, help="e.g. 13-15,29 (default all 43)")
    p.add_argument("--start-first", choices=("plain", "encoded"), default="encoded",
                   help="which server starts and loads first (to see order effects)")
    p.add_argument("--operators", action="store_true",
                   help="measure the segment operators alone, in this process")
    args = p.parse_args(argv)
    rows = parse_rows(args.rows)
    if args.operators:
        return operators(rows, args.tries)
    numbers = run.parse_selection(args.queries)
    start_load = load_average()
    tmp = tempfile.mkdtemp(prefix="dictionary-parts-")
    Path(tmp).chmod(0o755)
    plain = RaymppServer(args.segments, env={"RAYMPP_DICTIONARY_FRACTION": "0"})
    servers = {"plain": plain, "encoded": RaymppServer(args.segments)}
    if args.start_first == "encoded":
        servers = {"encoded": servers["encoded"], "plain": plain}
    times: dict[str, dict[int, float]] = {name: {} for name in servers}
    answers: dict[str, dict[int, list]] = {name: {} for name in servers}
    load_s: dict[str, float] = {}
    try:
        log(f"[dictionary] generating {human_rows(rows)} rows")
        parts = sorted(p for p, _ in load.synthetic_parts(args.seed, rows, tmp,
                                                          load.default_jobs()))
        conns = {}
        for name, srv in servers.items():
            srv.start()
            info = load.ConnInfo(port=srv.port)
            with info.connect() as c:
                load.create_table(c, load.DEFAULT_KEY)
            t0 = time.perf_counter()
            load.load_parts(info, ((p, 0) for p in parts), 1, load.Progress(None), delete=False)
            load_s[name] = time.perf_counter() - t0
            load.analyze_table(info)
            conns[name] = info.connect()
            log(f"[dictionary] {name}: loaded in {load_s[name]:.1f} s")
        order = list(servers)
        for n in numbers:
            q = sql.QUERIES[n - 1]
            for t in range(args.tries):
                for name in (order if t % 2 == 0 else order[::-1]):
                    t0 = time.perf_counter()
                    got = conns[name].execute(q).fetchall()
                    dt = time.perf_counter() - t0
                    times[name][n] = min(dt, times[name].get(n, dt))
                    answers[name][n] = got
            log(f"[dictionary] Q{n}: plain {times['plain'][n]:.3f} s, "
                f"encoded {times['encoded'][n]:.3f} s")
        for c in conns.values():
            c.close()
    finally:
        for srv in servers.values():
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    out = print
    out(f"\n# Dictionary encoding on/off, ClickBench on {human_rows(rows)} synthetic rows - "
        f"{machine_description()}; raympp --segments {args.segments}; best of {args.tries}, "
        f"alternating\n")
    out(f"load: plain {load_s['plain']:.1f} s, encoded {load_s['encoded']:.1f} s "
        f"({args.start_first} server started and loaded first)\n")
    out("| query | text | plain s | encoded s | encoded/plain | same answer |")
    out("|---:|:---:|---:|---:|---:|:---:|")
    text_q = {n for n in numbers if reads_text(sql.QUERIES[n - 1])}
    for n in numbers:
        a, b = times["plain"][n], times["encoded"][n]
        # Under LIMIT, ties may pick other rows: compared by clickbench.py against DuckDB.
        same = "-" if compare.oracle_query(sql.QUERIES[n - 1]).limit is not None else \
            "yes" if compare.same_rows(answers["encoded"][n], answers["plain"][n]) else "NO"
        out(f"| Q{n} | {'x' if n in text_q else ''} | {a:.3f} | {b:.3f} | {b / a:.2f} | "
            f"{same} |")
    for label, sel in (("all queries", numbers), ("queries reading text", sorted(text_q))):
        if not sel:
            continue
        ga = run.geometric_mean([times["plain"][n] for n in sel])
        gb = run.geometric_mean([times["encoded"][n] for n in sel])
        out(f"\ngeomean over {label} ({len(sel)}): plain {ga:.4f} s, encoded {gb:.4f} s, "
            f"encoded/plain {gb / ga:.3f}")
    out(f"\nload average at start {start_load}, at end {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
