"""Answer count(*), count(col), min(col) and max(col) over a whole table from chunk
statistics, as pg_vexec does from PAX statistics.

Every chunk records its rows and, per column, its null count and min/max
(segment/storage/stats.py), so a scalar aggregate of only these functions over a table
with no WHERE needs no rows: the PARTIAL stage on each segment aggregates one row per
chunk of a StatsScan (rows, non-null counts, bounds) instead of the Scan's rows. The FINAL
stage is unchanged: it merges the same partial states.

Only plain columns of types whose statistics are exact qualify; a chunk whose statistics
leave a bound unknown (a string longer than the statistics keep) is read for that column
by the StatsScan operator, so the answer never depends on the statistics being complete.
"""

from __future__ import annotations

from planner import expr as ex
from planner import locus as lc
from planner import plan as pl
from planner import types

# Types whose min/max statistics order values as MIN/MAX do. CHAR is left out: bpchar
# compares without trailing blanks, which byte order does not.
_BOUND_KINDS = frozenset(types.INTEGER_KINDS + types.FLOAT_KINDS + (
    types.Kind.NUMERIC, types.Kind.TEXT, types.Kind.VARCHAR, types.Kind.DATE,
    types.Kind.TIMESTAMP, types.Kind.TIMESTAMPTZ))


def stats_aggregate(node: pl.Node) -> pl.Node:
    """The placed plan with every PARTIAL scalar aggregate that statistics can answer
    reading a StatsScan instead of its table's rows. Runs after distribute (rules'
    DISTRIBUTED_RULES): the PARTIAL stage exists only once an aggregate is split."""
    def visit(n: pl.Node) -> pl.Node:
        if isinstance(n, pl.Aggregate) and n.mode is pl.AggMode.PARTIAL:
            return from_statistics(n) or n
        return n
    return pl.transform(node, visit)


def from_statistics(partial: pl.Aggregate) -> pl.Aggregate | None:
    """The PARTIAL scalar aggregate over a StatsScan that computes the same states as
    `partial`, or None when statistics cannot answer it."""
    if partial.keys or not partial.aggs:
        return None
    scan, columns = _table_columns(partial.child)
    if scan is None:
        return None
    wanted: list[tuple[pl.ChunkStat, int | None]] = []
    merges: list[tuple[ex.AggFunc, int, types.SqlType]] = []  # (merge, stat position, type)

    def stat(kind: pl.ChunkStat, column: int | None) -> int:
        if (kind, column) not in wanted:
            wanted.append((kind, column))
        return wanted.index((kind, column))

    for a in partial.aggs:
        if a.distinct:
            return None
        if a.func is ex.AggFunc.COUNT_STAR:
            merges.append((ex.AggFunc.SUM, stat(pl.ChunkStat.ROWS, None), types.INT8))
            continue
        if not isinstance(a.arg, ex.ColumnRef):
            return None
        column = columns[a.arg.index]
        if a.func is ex.AggFunc.COUNT:
            merges.append((ex.AggFunc.SUM, stat(pl.ChunkStat.NON_NULL, column), types.INT8))
        elif a.func in (ex.AggFunc.MIN, ex.AggFunc.MAX) and a.arg.type.kind in _BOUND_KINDS:
            kind = pl.ChunkStat.MIN if a.func is ex.AggFunc.MIN else pl.ChunkStat.MAX
            merges.append((a.func, stat(kind, column), a.type))
        else:
            return None
    fields = tuple(_stat_field(scan.table, kind, column) for kind, column in wanted)
    # The chunks are wherever the table's rows are, but the output has none of the columns
    # a hashed locus names.
    locus = lc.STREWN if scan.locus is not None and scan.locus.on_segments else scan.locus
    stats_scan = pl.StatsScan(scan.table, tuple(wanted), fields, locus=locus)
    aggs = tuple(ex.AggCall(func, ex.ColumnRef(i, fields[i].type, fields[i].name), False, t)
                 for func, i, t in merges)
    return pl.Aggregate(stats_scan, (), aggs, pl.AggMode.PARTIAL, partial.fields,
                        locus=partial.locus)


def _table_columns(node: pl.Node) -> tuple[pl.Scan | None, list[int]]:
    """The unfiltered Scan under `node` and, per output column of `node`, the table column
    it is; (None, []) when an output is computed or rows are filtered."""
    if isinstance(node, pl.Scan):
        plain = node.filter is None and min(node.columns, default=0) >= 0  # no system column
        return (node, list(node.columns)) if plain else (None, [])
    if isinstance(node, pl.Project):
        scan, below = _table_columns(node.child)
        if scan is None or not all(isinstance(e, ex.ColumnRef) for e in node.exprs):
            return None, []
        return scan, [below[e.index] for e in node.exprs]
    return None, []


def _stat_field(table, kind: pl.ChunkStat, column: int | None) -> pl.Field:
    if kind is pl.ChunkStat.ROWS:
        return pl.Field("rows", types.INT8)
    col = table.columns[column]
    if kind is pl.ChunkStat.NON_NULL:
        return pl.Field(f"non_null({col.name})", types.INT8)
    return pl.Field(f"{kind.value}({col.name})", col.type)
