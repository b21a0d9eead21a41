"""Dictionary-encoded strings on and off: the 43 ClickBench queries on two raympp servers
holding the same synthetic `hits`, one storing repeated strings dictionary-encoded (the
default) and one plain (RAYMPP_DICTIONARY_FRACTION=0), queried alternately so that both
see the same machine load. (Answers under LIMIT are checked against DuckDB by
bench/clickbench.py, not here.)

    .venv/bin/python bench/dictionary.py                     # 10M rows, 5 tries per query
    .venv/bin/python bench/dictionary.py --rows 1M --queries 13-15,21-24,29

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

from coordinator.clickbench import compare, load, run, sql  # noqa: E402

TEXT_COLUMNS = {name for name, t in sql.COLUMNS if t in ("TEXT", "VARCHAR(255)", "CHAR")}


def reads_text(query: str) -> bool:
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(query, read="postgres")
    if any(isinstance(s, exp.Star) for s in tree.expressions):
        return True
    return any(c.name.lower() in TEXT_COLUMNS for c in tree.find_all(exp.Column))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="10M")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--segments", type=int, default=2)
    p.add_argument("--tries", type=int, default=5)
    p.add_argument("--queries", default=None, help="e.g. 13-15,29 (default all 43)")
    p.add_argument("--start-first", choices=("plain", "encoded"), default="encoded",
                   help="which server starts and loads first (to see order effects)")
    args = p.parse_args(argv)
    rows = parse_rows(args.rows)
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
            "yes" if compare._multiset_diff([compare._row(r) for r in answers["encoded"][n]],
                                            [compare._row(r) for r in answers["plain"][n]]) \
            is None else "NO"
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
