"""Per-query time charts (PNG) for the bench scripts: one group of bars per query, one bar
per engine, on a log scale, so that bench/RESULTS.md shows what the tables say.

Needs matplotlib (in the test extras); without it the scripts print the tables only and
say that no chart was drawn.
"""

from __future__ import annotations

import math
from pathlib import Path


def per_query_png(path: str | Path, title: str, queries: list[str],
                  times_ms: dict[str, list[float | None]]) -> bool:
    """Draw `times_ms` (engine -> one time per query, None for none) to `path`; False
    when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display: draw to a file
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    engines = list(times_ms)
    width = 0.8 / max(1, len(engines))
    fig, ax = plt.subplots(figsize=(min(18.0, max(8.0, 0.38 * len(queries) + 2)), 4.5))
    for i, e in enumerate(engines):
        xs = [q + (i - (len(engines) - 1) / 2) * width for q in range(len(queries))]
        ys = [t if t else math.nan for t in times_ms[e]]
        ax.bar(xs, ys, width=width, label=e)
    ax.set_yscale("log")
    ax.set_ylabel("ms (log scale; lower is better)")
    ax.set_xticks(range(len(queries)))
    ax.set_xticklabels(queries, rotation=90 if len(queries) > 25 else 0, fontsize=8)
    ax.set_title(title)
    ax.legend()
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
