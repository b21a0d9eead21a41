"""Built-in table functions: generators of rows that run on the segments.

`clickbench_hits(seed, rows [, first_block, blocks])` yields the synthetic ClickBench
`hits` rows of coordinator/clickbench/synthetic.py (deterministic by seed and row count,
in blocks of BLOCK_ROWS; optionally only blocks [first_block, first_block + blocks)).
`raympp clickbench load` fills `hits` with `INSERT INTO hits SELECT * FROM
clickbench_hits(...)`: every segment generates its share of the blocks in parallel and the
rows move to their segments by the table's distribution, so no file is needed on any host.

The generator is the ClickBench kit's (coordinator/clickbench/), a plain numpy/pyarrow
module with no coordinator state, imported where the rows are made.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from planner import errors
from planner import plan as pl


@dataclass(frozen=True)
class Signature:
    min_args: int
    max_args: int
    usage: str


FUNCTIONS = {
    "clickbench_hits": Signature(2, 4, "clickbench_hits(seed, rows [, first_block, blocks])"),
}


def exists(name: str) -> bool:
    return name in FUNCTIONS


def bind(name: str, args: list[int | None]) -> pl.TableFunction:
    """The plan node of a call with constant integer arguments (checked here)."""
    sig = FUNCTIONS[name]
    if not sig.min_args <= len(args) <= sig.max_args:
        raise errors.UndefinedFunction(f"function {name} takes {sig.usage}")
    if any(a is None or a < 0 for a in args):
        raise errors.InvalidParameterValue(f"{sig.usage}: arguments must be non-negative")
    from coordinator.clickbench import synthetic

    seed, rows = args[0], args[1]
    blocks = synthetic.n_blocks(rows) if rows else 0
    first = args[2] if len(args) > 2 else 0
    count = args[3] if len(args) > 3 else blocks - first
    return pl.TableFunction(name, (seed, rows, first, max(0, min(count, blocks - first))),
                            _hits_fields())


def estimate_rows(node: pl.TableFunction) -> float:
    from coordinator.clickbench import synthetic

    seed, rows, first, count = node.args
    return float(sum(synthetic.block_rows(rows, i) for i in range(first, first + count)))


@functools.lru_cache(maxsize=1)
def _hits_fields() -> tuple[pl.Field, ...]:
    import sqlglot.expressions as exp

    from coordinator.clickbench import sql
    from planner.bind_expr import sql_type

    return tuple(pl.Field(name, sql_type(exp.DataType.build(t, dialect="postgres")))
                 for name, t in sql.COLUMNS)
