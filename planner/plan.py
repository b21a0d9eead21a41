"""Plan nodes: frozen dataclasses that pickle to segment actors.

The binder builds a tree of these without Motions (every `locus` is None); distribute.py
gives each node its locus and is the only place that adds Motion nodes and splits
aggregates into partial and final stages; slices.py cuts the tree at Motions.

Every node has `fields`: its output columns (name, SqlType) in order. Expressions inside a
node refer to the columns of its child's output by position (planner/expr.py ColumnRef).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from planner import errors
from planner import expr as ex
from planner import window
from planner.locus import Locus
from planner.schema import TableDef
from planner.types import Kind, SqlType


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: SqlType


class Node:
    """Marker base class of plan nodes."""

    __slots__ = ()
    fields: tuple[Field, ...]
    locus: Locus | None

    def children(self) -> tuple["Node", ...]:
        return ()


@dataclass(frozen=True, slots=True)
class Scan(Node):
    """Read a table's shard. `columns` are table column positions, in output order;
    `filter` refers to the output columns and is evaluated while scanning (chunks whose
    min/max prove it false are skipped)."""

    table: TableDef
    columns: tuple[int, ...]
    fields: tuple[Field, ...]
    filter: ex.Expr | None = None
    locus: Locus | None = None


class ChunkStat(enum.Enum):
    """One figure a chunk's statistics give about a column (or about the chunk)."""

    ROWS = "rows"          # rows in the chunk (no column)
    NON_NULL = "non_null"  # rows where the column is not NULL
    MIN = "min"
    MAX = "max"


@dataclass(frozen=True, slots=True)
class StatsScan(Node):
    """Per-chunk statistics of a table's shard instead of its rows: one row per chunk, one
    column per (ChunkStat, table column position) in `stats` (None for ROWS), plus one
    neutral row (0 rows, NULL bounds) so that an empty shard still yields counts of 0.

    A scalar PARTIAL aggregate of count/min/max over a whole table reads this instead of
    the Scan (planner/rules/stats_aggregate.py); a chunk whose statistics leave a bound
    unknown (a long string, say) has that column read.
    """

    table: TableDef
    stats: tuple[tuple[ChunkStat, int | None], ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None


@dataclass(frozen=True, slots=True)
class Values(Node):
    """Constant rows (SELECT without FROM, INSERT ... VALUES). `system` names the system
    relation (planner/system_tables.py) whose rows these are, computed by the coordinator
    for the statement: such a leaf runs on the coordinator (ENTRY), never on segments."""

    rows: tuple[tuple[ex.Expr, ...], ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None
    system: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class Materialized(Node):
    """Rows computed before the statement runs (a recursive CTE's result, planner/
    bind_recursive.py), carried in the plan: every process that runs it has them all.
    Compared by identity (an Arrow table has no value equality that fits a plan)."""

    table: object  # pa.Table whose columns are laid out as `fields` say
    fields: tuple[Field, ...]
    locus: Locus | None = None


@dataclass(frozen=True, slots=True)
class GenerateSeries(Node):
    """generate_series(start, stop[, step]) over integers; constant arguments.

    `part` = (i, n) makes this instance produce only the i-th of n interleaved parts of
    the series, so a distributed consumer can have each segment generate its share.
    """

    start: int
    stop: int
    step: int
    fields: tuple[Field, ...]
    part: tuple[int, int] | None = None
    locus: Locus | None = None


@dataclass(frozen=True, slots=True)
class TableFunction(Node):
    """A built-in row generator in FROM (planner/table_functions.py), with constant
    integer arguments. It runs on the segments, each producing its `part` = (i, n)."""

    name: str
    args: tuple[int, ...]
    fields: tuple[Field, ...]
    part: tuple[int, int] | None = None
    locus: Locus | None = None


@dataclass(frozen=True, slots=True)
class Filter(Node):
    child: Node
    predicate: ex.Expr
    fields: tuple[Field, ...]
    locus: Locus | None = None

    def children(self):
        return (self.child,)


@dataclass(frozen=True, slots=True)
class Project(Node):
    child: Node
    exprs: tuple[ex.Expr, ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None

    def children(self):
        return (self.child,)


class AggMode(enum.Enum):
    SINGLE = "single"    # all rows of a group are in this node's input
    PARTIAL = "partial"  # per-segment pre-aggregation; outputs states
    FINAL = "final"      # merges states produced by PARTIAL


@dataclass(frozen=True, slots=True)
class Aggregate(Node):
    """Hash aggregation: output = group keys, then one column per aggregate.

    With no keys it is a scalar aggregate and emits exactly one row, even on empty input.
    In FINAL mode the aggregates are merge functions over the partial states (sum of
    counts, min of mins, ...), built by distribute.py.
    """

    child: Node
    keys: tuple[ex.Expr, ...]
    aggs: tuple[ex.AggCall, ...]
    mode: AggMode
    fields: tuple[Field, ...]
    locus: Locus | None = None

    def __post_init__(self):
        _no_arrays([a.arg.type for a in self.aggs if a.arg is not None and a.func in (
            ex.AggFunc.MIN, ex.AggFunc.MAX, ex.AggFunc.SUM, ex.AggFunc.AVG)],
            "min/max/sum/avg of arrays")
        _no_json([k.type for k in self.keys] + [a.arg.type for a in self.aggs
                                                if a.arg is not None and a.distinct],
                 "grouping (GROUP BY, DISTINCT, UNION, INTERSECT, EXCEPT)")
        _no_padded([k.type for k in self.keys] + [
            a.arg.type for a in self.aggs if a.arg is not None and (
                a.distinct or a.func in (ex.AggFunc.MIN, ex.AggFunc.MAX))],
            "grouping or min/max")

    def children(self):
        return (self.child,)


def _no_padded(ts, what: str) -> None:
    """Padded bpchar values (types.BPCHAR_PADDED) and arrays of them compare bytes here,
    not bpchar's way (planner/padded_bpchar.py): 0A000 while planning."""
    if any(t.padded or (t.is_array and t.elem.padded) for t in ts):
        raise errors.FeatureNotSupported(
            f"{what} of bpchar values of char(n) mixed with other lengths or string types")


def _no_json(ts, what: str) -> None:
    """json has no equality (42883, as PostgreSQL); jsonb's is not its text's (1.5 equals
    1.50) while the operators compare and hash the text: 0A000 rather than another answer."""
    for t in ts:
        if t.kind is Kind.JSON or t.is_array and t.elem.kind is Kind.JSON:
            raise errors.UndefinedFunction(
                f"could not identify an equality operator for type {t}")
        if t.kind is Kind.JSONB or t.is_array and t.elem.kind is Kind.JSONB:
            raise errors.FeatureNotSupported(f"{what} over {t} values")


def _no_arrays(ts, what: str) -> None:
    """What the operators cannot do with arrays yet: 0A000 while planning."""
    if any(t.is_array for t in ts):
        raise errors.FeatureNotSupported(what)


@dataclass(frozen=True, slots=True)
class SortKey:
    expr: ex.Expr
    descending: bool = False
    nulls_first: bool = False  # PostgreSQL: NULLS LAST for ASC, NULLS FIRST for DESC

    def describe(self) -> str:
        out = ex.show(self.expr) + (" DESC" if self.descending else "")
        if self.nulls_first != self.descending:
            out += " NULLS FIRST" if self.nulls_first else " NULLS LAST"
        return out


@dataclass(frozen=True, slots=True)
class Sort(Node):
    """Sort by keys; with `limit` only the first `limit` rows are kept (top-K)."""

    child: Node
    keys: tuple[SortKey, ...]
    fields: tuple[Field, ...]
    limit: int | None = None
    locus: Locus | None = None

    def __post_init__(self):
        _no_padded([k.expr.type for k in self.keys if k.expr.type.is_array],
                   "ordering by arrays")

    def children(self):
        return (self.child,)


@dataclass(frozen=True, slots=True)
class Fetch(Node):
    """Late materialization: the child's rows in their order, each followed by the table
    columns `columns` (positions) read where the row is stored. Child column `row_id`
    is that place (schema.ROW_ID: chunk number << 32 | position), made by a Scan of
    `table` below in the same slice, whose snapshot the read keeps to
    (planner/rules/late_fetch.py puts it above a top-K over such a scan). `fields` are
    the child's, then one per fetched column."""

    child: Node
    table: TableDef
    row_id: int
    columns: tuple[int, ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None

    def __post_init__(self):
        if len(self.fields) != len(self.child.fields) + len(self.columns) or any(
                c < 0 for c in self.columns):
            raise errors.InternalError("Fetch reads table columns after its child's")

    def children(self):
        return (self.child,)


@dataclass(frozen=True, slots=True)
class Limit(Node):
    """Skip `offset` rows, pass `limit`. With `ties` (FETCH ... WITH TIES, the ORDER BY
    keys of the sorted child) rows that tie with the last one passed are passed too."""
    child: Node
    limit: int | None
    offset: int
    fields: tuple[Field, ...]
    locus: Locus | None = None
    ties: tuple["SortKey", ...] = ()

    def __post_init__(self):
        _no_arrays([k.expr.type for k in self.ties], "FETCH ... WITH TIES ordered by arrays")
        _no_padded([k.expr.type for k in self.ties], "FETCH ... WITH TIES ordered by peers")

    def children(self):
        return (self.child,)


@dataclass(frozen=True, slots=True)
class Append(Node):
    """UNION ALL: the rows of every input, one after another (inputs have equal fields)."""

    inputs: tuple[Node, ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None

    def children(self):
        return self.inputs


class JoinType(enum.Enum):
    INNER = "inner"
    LEFT = "left"    # every left row; right columns NULL where nothing matches
    RIGHT = "right"
    FULL = "full"
    SEMI = "semi"    # left rows with at least one match (EXISTS, IN); left columns only
    ANTI = "anti"    # left rows with no match (NOT EXISTS); left columns only
    # NOT IN: as ANTI, but no row at all when the right side has a NULL key, and a left
    # row with a NULL key only passes when the right side is empty (SQL's NOT IN).
    ANTI_NULL_AWARE = "anti_null_aware"


@dataclass(frozen=True, slots=True)
class HashJoin(Node):
    """Equi-join on `left_keys[i] = right_keys[i]` (positions in each child's output),
    then `residual` (over the joined row: left columns, then right columns) for inner and
    outer joins, or over the (left, right) pair candidates for SEMI/ANTI.

    The right child is the build side (hashed into memory), the left is probed. Output:
    left fields then right fields; SEMI and ANTI output left fields only. NULL keys never
    match. With no keys it is a nested-loop (cross) join filtered by `residual`.

    `build_left` (SEMI and ANTI with keys only) swaps the roles and nothing else: the left
    rows are hashed, the right ones probe and mark the left rows they match, and the
    marked (SEMI) or unmarked (ANTI) left rows come out at the end: a small outer query's
    EXISTS over a big table (TPC-H Q21) hashes the small side.
    """

    left: Node
    right: Node
    join_type: JoinType
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    residual: ex.Expr | None
    fields: tuple[Field, ...]
    locus: Locus | None = None
    build_left: bool = False

    def __post_init__(self):
        if self.build_left and not (self.join_type in (JoinType.SEMI, JoinType.ANTI)
                                    and self.left_keys):
            raise ValueError("only a semi or anti join with keys builds its left side")
        # Arrays join by their encoded bytes (segment/kernels/group_keys.py), which agree
        # only between arrays of one element type.
        _no_arrays([lt for lt, rt in zip((self.left.fields[k].type for k in self.left_keys),
                                         (self.right.fields[k].type for k in self.right_keys))
                    if lt != rt], "joining arrays of different element types")

    def children(self):
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class Insert(Node):
    """Write the child's rows into `table` on the segment where the row is (the child
    arrives distributed as the table is); outputs one row: the number written, or with
    `returning` the rows written (UPDATE ... RETURNING computes over them)."""

    child: Node
    table: TableDef
    fields: tuple[Field, ...]
    locus: Locus | None = None
    returning: bool = False
    # MERGE: the child's column here is a boolean; rows where it is false are counted
    # (MERGE's deleted rows) but not written, and the column itself is never written.
    write_flag: int | None = None

    def children(self):
        return (self.child,)


class RehomeMode(enum.Enum):
    """Which rows of a table an expansion moves, and where (planner/expansion.py)."""

    HASHED = "hashed"          # rows whose key hashes (over the new count) elsewhere
    RANDOM = "random"          # rows a hash of their row id gives to a new segment
    REPLICATED = "replicated"  # every row, once for each new segment


@dataclass(frozen=True, slots=True)
class Rehome(Node):
    """The rows of the child (a scan of one table, on each segment) that an expansion from
    `old` to `new` segments moves, with one more column: the segment each goes to (int4).
    `keys` are the child's columns hashed: the distribution key, or the row id."""

    child: Node
    mode: RehomeMode
    keys: tuple[int, ...]
    scales: tuple[int | None, ...]
    old: int
    new: int
    fields: tuple[Field, ...]
    locus: Locus | None = None

    def children(self):
        return (self.child,)


@dataclass(frozen=True, slots=True)
class DeleteRows(Node):
    """Delete from `table`, on this segment, the rows whose ids the child's `row_id`
    column holds (found by a scan of this statement's snapshot here: the child arrives
    where the rows live). Outputs one row, the number deleted, when `count`; else the
    child's rows that it deleted, each row id once (a row a join found twice is deleted
    and passed on once, as PostgreSQL updates or deletes it once)."""

    child: Node
    table: TableDef
    row_id: int
    fields: tuple[Field, ...]
    count: bool = True
    # MERGE: a row found twice is an error (21000), not one change.
    strict: bool = False
    locus: Locus | None = None

    def children(self):
        return (self.child,)


class MotionKind(enum.Enum):
    GATHER = "Gather"
    GATHER_MERGE = "Gather Merge"
    REDISTRIBUTE = "Redistribute"
    BROADCAST = "Broadcast"
    # Each row to the segment its one hash_keys column (an int4 segment id) names, as
    # Greenplum's Explicit Redistribute Motion: found target rows back to where they live.
    EXPLICIT = "Explicit Redistribute"


@dataclass(frozen=True, slots=True)
class Motion(Node):
    """Moves rows between slices. The child runs in slice `slice_id` on the sending
    gang; this node is the receiving end. GATHER_MERGE keeps `sort_keys` order;
    REDISTRIBUTE hashes `hash_keys` (child output positions) with the one hash function
    over its locus's number of segments (the first that many receivers)."""

    child: Node
    kind: MotionKind
    fields: tuple[Field, ...]
    slice_id: int = 0
    hash_keys: tuple[int, ...] = ()
    sort_keys: tuple[SortKey, ...] = ()
    locus: Locus | None = None
    # BROADCAST: rows go to the first `buckets` receivers only (0: all), a replicated
    # table's segments while an expansion has not copied it to the new ones.
    buckets: int = 0

    def children(self):
        return (self.child,)


def with_children(node: Node, children: tuple[Node, ...]) -> Node:
    """`node` with its children replaced (in `children()` order)."""
    from dataclasses import replace

    if isinstance(node, HashJoin):
        return replace(node, left=children[0], right=children[1])
    if isinstance(node, Append):
        return replace(node, inputs=tuple(children))
    if children:
        return replace(node, child=children[0])
    return node


def transform(node: Node, fn) -> Node:
    """Bottom-up rewrite: fn(node with transformed children) for every node."""
    kids = tuple(transform(c, fn) for c in node.children())
    return fn(with_children(node, kids) if kids else node)


def walk(node: Node):
    """Pre-order iteration over a plan tree."""
    yield node
    for c in node.children():
        yield from walk(c)


def column_source(node: Node, col: int) -> tuple[Node, int] | None:
    """The first node below Projects of plain columns and Filters whose output column
    `node`'s column `col` passes on unchanged, and that column; None where a Project
    computes it."""
    while True:
        if isinstance(node, Project):
            e = node.exprs[col]
            if not isinstance(e, ex.ColumnRef):
                return None
            node, col = node.child, e.index
        elif isinstance(node, Filter):
            node = node.child
        else:
            return node, col


@dataclass(frozen=True, slots=True)
class Expand(Node):
    """Every input row once per projection list of `sets` (GROUP BY ROLLUP, CUBE and
    GROUPING SETS: each list passes the child's columns, then the grouping keys of one
    grouping set with the others NULL, its set number and its grouping() values). One
    pass over the input, where a UNION ALL of GROUP BYs would read it once per set."""

    child: Node
    sets: tuple[tuple[ex.Expr, ...], ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None

    def children(self):
        return (self.child,)


@dataclass(frozen=True, slots=True)
class ProjectSet(Node):
    """Set-returning functions of the SELECT list in lockstep (PostgreSQL 10+), and unnest
    of a FROM item's column: output = the child's columns, then one column per `arrays`
    item, an array expression over the child, giving its elements (unnest) or, where
    `subscripts[i]`, its subscripts (generate_subscripts(a, 1)). An input row gives as
    many rows as its longest array (none when every array is NULL or empty); shorter
    ones are padded with NULL. segment/operators/project_set.py runs it."""

    child: Node
    arrays: tuple[ex.Expr, ...]
    subscripts: tuple[bool, ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None
    # LEFT JOIN LATERAL f(...) ON true: an input row whose arrays give no element still
    # gives one row, its function columns NULL.
    outer: bool = False

    def children(self):
        return (self.child,)


def fields_of(names_types) -> tuple[Field, ...]:
    return tuple(Field(n, t) for n, t in names_types)


@dataclass(frozen=True, slots=True)
class WindowAgg(Node):
    """Window functions over one window (planner/window.py): output = the child's
    columns, then one column per call. Rows with equal `partition` columns (child
    positions) form a partition, ordered by `order` (ColumnRefs over the child); the
    operator sorts by both itself. distribute.py brings each partition to one process."""

    child: Node
    partition: tuple[int, ...]
    order: tuple[SortKey, ...]
    calls: tuple[window.WindowCall, ...]
    fields: tuple[Field, ...]
    locus: Locus | None = None
    # (j, n): only rows whose call j (a ranking) is at most n are wanted above (a top-N
    # filter, planner/rules/window_top_n.py); the others may be dropped.
    keep: tuple[int, int] | None = None

    def __post_init__(self):
        _no_json([self.child.fields[i].type for i in self.partition]
                 + [k.expr.type for k in self.order], "window PARTITION BY / ORDER BY")
        _no_padded([self.child.fields[i].type for i in self.partition]
                   + [self.child.fields[c.arg].type for c in self.calls if c.arg is not None
                      and c.func in (window.WindowFunc.MIN, window.WindowFunc.MAX)],
                   "window partitions or min/max")

    def children(self):
        return (self.child,)

