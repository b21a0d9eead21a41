"""Row, distinct-value and byte estimates of plan nodes: the one place the planner prices
a plan. The binder's join order (bind_join), the placement of joins and aggregates
(distribute) and EXPLAIN's `rows=` all ask here, so they never disagree.

Rows come from ANALYZE's statistics (TableStats rows; per column the null fraction,
distinct count and bounds) and a filter keeps what planner/selectivity.py estimates from
the statistics of the columns it reads (fixed guesses where there are none). Costs that depend on the cluster
take the segment count as an argument: a Broadcast sends its input to every segment.
Where a node's rows land (its locus) is distribute's business, not this module's.
"""

from __future__ import annotations

from planner import expr as ex
from planner import plan as pl
from planner import table_functions, types
from planner.schema import ColumnStats
from planner.selectivity import selectivity

# Bytes per value of fixed-width types; anything else counts 16 bytes.
_WIDTH = {types.Kind.BOOL: 1, types.Kind.INT2: 2, types.Kind.INT4: 4, types.Kind.INT8: 8,
          types.Kind.FLOAT4: 4, types.Kind.FLOAT8: 8, types.Kind.NUMERIC: 8,
          types.Kind.DATE: 4, types.Kind.TIMESTAMP: 8, types.Kind.TIMESTAMPTZ: 8}
_OTHER_WIDTH = 16
ANTI_FLOOR = 0.1  # the least share of its left rows an anti join is estimated to keep


def rows(node: pl.Node) -> float:
    """Estimated rows of `node`'s output (over all segments)."""
    if isinstance(node, pl.Scan):
        n = float(node.table.stats.rows)
        if node.filter is None:
            return n
        return n * selectivity(node.filter, lambda i: _scan_column(node, i))
    if isinstance(node, pl.Values):
        return float(len(node.rows))
    if isinstance(node, pl.Materialized):
        return float(node.table.num_rows)
    if isinstance(node, pl.GenerateSeries):
        return float(max(0, (node.stop - node.start) // node.step + 1))
    if isinstance(node, pl.TableFunction):
        return table_functions.estimate_rows(node)
    if isinstance(node, pl.Filter):
        return rows(node.child) * selectivity(node.predicate,
                                              lambda i: column_stats(node.child, i))
    if isinstance(node, pl.Expand):
        return rows(node.child) * len(node.sets)
    if isinstance(node, pl.Aggregate):
        return _aggregate_rows(node)
    if isinstance(node, pl.HashJoin):
        return _join_rows(node)
    if isinstance(node, pl.Append):
        return sum(rows(c) for c in node.inputs)
    if isinstance(node, (pl.Sort, pl.Limit)) and node.limit is not None:
        return min(float(node.limit), rows(node.child))
    if node.children():
        return rows(node.children()[0])
    return 1.0


def _aggregate_rows(node: pl.Aggregate) -> float:
    """Groups: the product of the keys' distinct counts (a guess of 10 * sqrt(rows) for
    a key without statistics), at most the input's rows."""
    if not node.keys:
        return 1.0
    n = rows(node.child)
    groups = 1.0
    for k in node.keys:
        d = column_distinct(node.child, k.index) if isinstance(k, ex.ColumnRef) else None
        groups *= d if d else max(1.0, n ** 0.5 * 10)
    return max(1.0, min(n, groups))


def _join_rows(node: pl.HashJoin) -> float:
    left, right = rows(node.left), rows(node.right)
    if node.join_type in (pl.JoinType.SEMI, pl.JoinType.ANTI, pl.JoinType.ANTI_NULL_AWARE):
        if not node.right_keys:
            return left
        kept = _semi_fraction(node, right)
        if node.join_type is pl.JoinType.SEMI:
            return left * kept
        # An anti join is mostly asked for the exceptions, and a residual (Q21's
        # `l_suppkey <> ...`) lets rows through that the keys alone would match: never
        # promise (almost) none, which would have a side broadcast that is not small.
        return left * max(1.0 - kept, ANTI_FLOOR)
    if not node.left_keys:
        return left * right
    # PostgreSQL's eqjoinsel without MCVs: 1 / the larger distinct count of the two keys,
    # each at most its side's rows (a filtered dimension has no more distinct keys than
    # rows left: date_dim's 73,049 keys filtered to one year join sales by 365 of them,
    # and sales have ~1,800 dates). The most selective key alone: keys of one join are
    # mostly correlated (sales and returns on item and order number), so multiplying
    # their selectivities would promise far fewer rows than come.
    d = max([min(x, n) for lk, rk in zip(node.left_keys, node.right_keys)
             for x, n in ((column_distinct(node.left, lk), left),
                          (column_distinct(node.right, rk), right)) if x]
            or [0])
    n = left * right / d if d else max(left, right)
    if node.join_type is not pl.JoinType.INNER:
        n = max(n, left if node.join_type is pl.JoinType.LEFT else right)
    return max(1.0, n)


def _semi_fraction(node: pl.HashJoin, right: float) -> float:
    """The share of left rows with a match: PostgreSQL's eqjoinsel_semi without MCVs, the
    right key's distinct values (at most its rows) over the left key's, at most 1; the
    most selective key; 0.5 when no key has statistics on both sides."""
    fractions = []
    for lk, rk in zip(node.left_keys, node.right_keys):
        d_left, d_right = column_distinct(node.left, lk), column_distinct(node.right, rk)
        if d_left and d_right:
            fractions.append(min(1.0, min(d_right, right) / d_left))
    return min(fractions) if fractions else 0.5


def column_distinct(node: pl.Node, index: int) -> float | None:
    """ANALYZE's distinct-value estimate of output column `index`, where it is traceable
    to a table column through filters, projections and motions; None when unknown."""
    found = column_stats(node, index)
    return found[0].distinct if found is not None else None


def column_stats(node: pl.Node, index: int) -> tuple[ColumnStats, types.SqlType] | None:
    """ANALYZE's statistics of the table column that output column `index` is, traced
    through filters, projections and motions, with the column's type; None when
    unknown."""
    if isinstance(node, pl.Scan):
        return _scan_column(node, index)
    if isinstance(node, pl.Project):
        e = node.exprs[index]
        return column_stats(node.child, e.index) if isinstance(e, ex.ColumnRef) else None
    if isinstance(node, (pl.Filter, pl.Motion, pl.Sort, pl.Limit)) or (
            isinstance(node, pl.WindowAgg) and index < len(node.child.fields)):
        return column_stats(node.child, index)
    if isinstance(node, pl.HashJoin):
        nl = len(node.left.fields)
        return column_stats(node.left, index) if index < nl else \
            column_stats(node.right, index - nl)
    if isinstance(node, pl.Aggregate) and index < len(node.keys):
        k = node.keys[index]
        return column_stats(node.child, k.index) if isinstance(k, ex.ColumnRef) else None
    return None


def _scan_column(node: pl.Scan, index: int) -> tuple[ColumnStats, types.SqlType] | None:
    f = node.fields[index]
    stats = node.table.stats.columns.get(f.name)
    return (stats, f.type) if stats is not None else None


def row_width(node: pl.Node) -> int:
    """Estimated bytes of one output row of `node` (at least 1)."""
    return fields_width(node.fields) or 1


def fields_width(fields) -> int:
    """Estimated bytes of one value of each of `fields` (plan.Field), together."""
    return sum(_WIDTH.get(f.type.kind, _OTHER_WIDTH) for f in fields)


def output_bytes(node: pl.Node) -> float:
    """Estimated bytes of `node`'s whole output: what a Redistribute or Gather of it sends."""
    return rows(node) * row_width(node)


def broadcast_bytes(node: pl.Node, n_segments: int) -> float:
    """Bytes a Broadcast of `node` sends: its whole output to each of `n_segments`."""
    return output_bytes(node) * n_segments
