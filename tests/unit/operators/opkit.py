"""Helpers of the operator tests (tests/unit/operators): a Source plan node that replays
hand-built batches through the operator registry, and plan/expression builders."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from planner import expr as ex
from planner import plan
from planner import types as T
from segment.operators import base


@dataclass(frozen=True, eq=False)
class Source(plan.Node):
    """A leaf that replays `batches` (test only)."""

    batches: tuple
    fields: tuple
    locus: object = None


class _SourceOp:
    def __init__(self, node: Source):
        self.node = node
        self.schema = base.schema_of(node.fields)
        self.pulled = 0

    def execute(self, ctx):
        for b in self.node.batches:
            self.pulled += 1
            yield b


if Source not in base._BUILDERS:
    base.register(Source)(lambda node, build_child: _SourceOp(node))


# --- builders -----------------------------------------------------------------------------

def source(table: pa.Table | pa.RecordBatch | list, sql_types: list[T.SqlType],
           batch_rows: int | None = None) -> Source:
    """A Source over a table's rows split into batches of batch_rows (one batch if None)."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if isinstance(table, list):
        batches = tuple(table)
        names = batches[0].schema.names if batches else [f"c{i}" for i in range(len(sql_types))]
    else:
        names = table.schema.names
        if batch_rows is None:
            batches = tuple(table.combine_chunks().to_batches()) or ()
        else:
            batches = tuple(table.combine_chunks().to_batches(max_chunksize=batch_rows))
    return Source(batches, plan.fields_of(zip(names, sql_types)))


def col(i: int, t: T.SqlType, name: str = "") -> ex.ColumnRef:
    return ex.ColumnRef(i, t, name)


def lit(v, t: T.SqlType) -> ex.Literal:
    return ex.Literal(v, t)


def call(func: ex.Func, *args, t: T.SqlType = T.BOOL) -> ex.Call:
    return ex.Call(func, tuple(args), t)


def ctx(**kw) -> base.ExecContext:
    return base.ExecContext(**kw)


def run(node: plan.Node, context: base.ExecContext | None = None) -> pa.Table:
    from segment import executor

    return executor.collect(node, context or base.ExecContext())


def budget(tmp_path, limit: int = 1 << 20):
    """A small memory budget spilling into tmp_path (the spill tests' default: 1 MiB)."""
    from segment import memory

    return memory.MemoryBudget(limit, str(tmp_path))


def check_clean(budget, tmp_path) -> None:
    """Nothing held, no spill file open, nothing left in the spill directory."""
    import os

    assert budget.open_files == 0
    assert budget.used == 0
    assert os.listdir(tmp_path) == []
