"""`raympp clickbench run`: the 43 queries through pgwire, each timed, as ClickBench does.

Each selected query runs `tries` times in a row on one connection (ClickBench runs three:
the first pays for cold caches); the report keeps every time and the best. A failing
query is reported with its SQLSTATE and message and the run goes on.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

from workloads.clickbench import sql
from workloads.clickbench.load import ConnInfo


@dataclasses.dataclass
class QueryTiming:
    number: int                          # 1-based, as in queries.sql
    times_s: list[float]
    rows: int | None = None
    error: str | None = None

    @property
    def best_s(self) -> float | None:
        return min(self.times_s) if self.times_s and self.error is None else None


def parse_selection(text: str | None) -> list[int]:
    """'1,2,5-7' -> [1, 2, 5, 6, 7]; None -> all 43."""
    if not text:
        return list(range(1, len(sql.QUERIES) + 1))
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    bad = [n for n in out if not 1 <= n <= len(sql.QUERIES)]
    if bad:
        raise ValueError(f"no such ClickBench query: {bad} (1..{len(sql.QUERIES)})")
    return out


def describe_error(e: BaseException) -> str:
    state = getattr(e, "sqlstate", None)
    text = (str(e).strip().splitlines() or [""])[0]
    return f"{state + ' ' if state else ''}{text}"


def run_queries(info: ConnInfo, numbers: list[int], tries: int = 3,
                on_done: Callable[[QueryTiming], None] | None = None) -> list[QueryTiming]:
    results = []
    conn = info.connect()
    try:
        for n in numbers:
            text = sql.QUERIES[n - 1]
            t = QueryTiming(n, [])
            for _ in range(tries):
                t0 = time.perf_counter()
                try:
                    rows = conn.execute(text).fetchall()
                except Exception as e:  # noqa: BLE001 - reported per query
                    t.error = describe_error(e)
                    if conn.closed or conn.broken:
                        conn = info.connect()
                    break
                t.times_s.append(time.perf_counter() - t0)
                t.rows = len(rows)
            results.append(t)
            if on_done is not None:
                on_done(t)
    finally:
        conn.close()
    return results


def geometric_mean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
