"""The one operator interface, the execution context and the operator registry.

An operator is built once from a plan node and then pulled: `execute(ctx)` returns an
iterator of Arrow record batches whose schema is exactly `schema` (the node's field names
and `SqlType.arrow_type()`s). Operators never touch sockets or Ray; a Motion's receiving end
gets its batches through `ExecContext.receive`, which the dispatcher supplies.

Each operator module registers a builder for its plan node type with `@register(NodeType)`;
`build()` imports them all (segment/operators/__init__.py) and builds a tree recursively.
Driving the tree, cancellation between batches and EXPLAIN ANALYZE statistics are left to
segment/executor.py, which wraps every operator through `build(..., wrap=...)`.
"""

from __future__ import annotations

import datetime
import itertools
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

import pyarrow as pa

from planner import errors
from planner import expr as ex
from planner import plan
from segment import expr as sexpr
from segment import memory as smemory

# Batches are large so that Python's per-call cost is paid per ~million rows, not per row.
BATCH_ROWS = 1 << 20
# Below this many rows a batch is worth concatenating with its neighbours (selective
# filters, small chunks) before it is handed on.
MIN_BATCH_ROWS = 1 << 16


@dataclass
class NodeStats:
    """What EXPLAIN ANALYZE reports for one node of a slice (times are inclusive)."""

    name: str
    rows: int = 0
    batches: int = 0
    seconds: float = 0.0
    counters: dict[str, int] = field(default_factory=dict)  # e.g. chunks_skipped of a Scan
    peak_memory: int = 0     # most bytes the node held under the query's memory budget
    spilled_bytes: int = 0   # bytes it wrote to spill files


def cancel_reason(event: threading.Event) -> str:
    """Why a query was cancelled: a timeout sets `reason` on the event before setting it."""
    return getattr(event, "reason", None) or errors.USER_CANCEL


@dataclass
class ExecContext:
    """Everything a slice needs at run time besides its plan.

    `receive(motion)` yields the batches arriving at a Motion's receiving end;
    `receive_sorted(motion)` (GATHER_MERGE only) returns one already-sorted stream per
    sender, which motion_recv merges; without it the gathered rows are sorted again.
    With `analyze` set, segment/executor.py fills `node_stats` keyed by the pre-order index
    of each node in the tree given to `run` (Motions are leaves there: see `slice_nodes`).
    `memory` is the query's budget on this segment (segment/memory.py), which Sort,
    Aggregate and HashJoin draw from and spill under; one budget may be shared by the
    contexts of several slices of a query.
    """

    store: Any = None  # segment.storage.shard_store.ShardStore
    txn_id: int | None = None
    segment_id: int = 0
    n_segments: int = 1
    receive: Callable[[plan.Motion], Iterator[pa.RecordBatch]] | None = None
    receive_sorted: Callable[[plan.Motion], Sequence[Iterator[pa.RecordBatch]]] | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    now: datetime.datetime | None = None  # the statement's now(); None: when evaluated
    analyze: bool = False
    jit: bool = True  # compiled paths where an operator has one (the session's `jit`)
    # An operator compiles once a batch of at least this many rows reaches it (the
    # session's jit_above_cost): small queries never wait for a compiler.
    jit_above_rows: int = 0
    node_stats: dict[int, NodeStats] = field(default_factory=dict)
    # table id -> chunk number -> the chunk (storage ChunkInfo) a Scan made row ids of,
    # so that a Fetch above reads the rows where that scan's snapshot has them.
    row_id_chunks: dict[int, dict[int, Any]] = field(default_factory=dict)
    memory: smemory.MemoryBudget = field(default_factory=lambda: smemory.MemoryBudget(
        smemory.DEFAULT_LIMIT, tempfile.gettempdir()))

    def check_cancel(self) -> None:
        if self.cancel_event.is_set():
            raise errors.QueryCanceled(cancel_reason(self.cancel_event))

    def cancel(self) -> None:
        self.cancel_event.set()

    def __reduce__(self):
        # A context holds live objects (store, callbacks, an Event); it is built where the
        # slice runs, never shipped.
        raise TypeError("ExecContext is not picklable; build one in the segment process")


class Operator(Protocol):
    schema: pa.Schema

    def execute(self, ctx: ExecContext) -> Iterator[pa.RecordBatch]: ...


BuildChild = Callable[[plan.Node], Operator]
Builder = Callable[[Any, BuildChild], Operator]
# wrap(index, node, op, dictionaries): dictionaries tells whether the parent accepts
# dictionary-encoded string columns (see `register`).
Wrap = Callable[[int, plan.Node, Operator, bool], Operator]

_BUILDERS: dict[type, Builder] = {}
_TAKES_DICTIONARIES: set[type] = set()


def register(node_type: type, dictionaries: bool = False):
    """Decorator: `builder(node, build_child) -> Operator` builds operators for node_type.

    Batches carry each column in its field's Arrow type, except that a string column may
    arrive dictionary-encoded (dictionary<int32, string>, as chunks store columns whose
    values repeat) at an operator registered with dictionaries=True: filters evaluate
    predicates once per distinct value and aggregates group by the indices. Every other
    operator gets its input decoded (the executor conforms each operator's output to what
    its parent accepts), and so does whatever consumes a slice's output.
    """

    def deco(builder: Builder) -> Builder:
        if node_type in _BUILDERS:
            raise ValueError(f"an operator for {node_type.__name__} is already registered")
        _BUILDERS[node_type] = builder
        if dictionaries:
            _TAKES_DICTIONARIES.add(node_type)
        return builder

    return deco


def build(node: plan.Node, wrap: Wrap | None = None) -> Operator:
    """Build the operator tree of `node`. `wrap(index, node, op, dictionaries)` sees every
    operator with its node's pre-order index and whether its parent accepts dictionary
    columns, and may return a replacement (the executor instruments and conforms)."""
    counter = itertools.count()

    def build_one(n: plan.Node, parent_takes_dictionaries: bool = False) -> Operator:
        index = next(counter)  # taken before the children: pre-order
        builder = _BUILDERS.get(type(n))
        if builder is None:
            raise errors.FeatureNotSupported(f"no operator executes {type(n).__name__} nodes")
        takes = type(n) in _TAKES_DICTIONARIES
        op = builder(n, lambda child: build_one(child, takes))
        return wrap(index, n, op, parent_takes_dictionaries) if wrap is not None else op

    return build_one(node)


def slice_nodes(node: plan.Node) -> list[plan.Node]:
    """The nodes `build` visits, in pre-order: a Motion is a leaf (its child runs in
    another slice). Index i here is the key of ExecContext.node_stats."""
    out = [node]
    if not isinstance(node, plan.Motion):
        for c in node.children():
            out += slice_nodes(c)
    return out


# --- helpers shared by operators ----------------------------------------------------------

def as_array(v, n: int) -> pa.Array:
    """An expression's value over a batch of n rows as one Array (constants repeated)."""
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks()
    if isinstance(v, pa.Scalar):
        return pa.repeat(v, n)
    return v


def evaluate(e: ex.Expr, batch: pa.RecordBatch, now: datetime.datetime | None = None,
             keep_dictionary: bool = False) -> pa.Array:
    """segment.expr.evaluate, minus the call for a bare column (the common case). `now` is
    the statement's timestamp (ExecContext.now), so now() agrees across batches. With
    keep_dictionary, a string result over a dictionary-encoded column stays encoded."""
    if isinstance(e, ex.ColumnRef):
        col = batch.column(e.index)
        if pa.types.is_dictionary(col.type) and not keep_dictionary:
            return col.dictionary_decode()
        return col
    return sexpr.evaluate(e, batch, now, keep_dictionary)


def evaluate_columns(exprs, batch: pa.RecordBatch, now: datetime.datetime | None = None
                     ) -> list[pa.Array]:
    """Each expression over `batch` as a full column of its rows (a constant repeated)."""
    out = []
    for e in exprs:
        v = evaluate(e, batch, now)
        if isinstance(v, pa.ChunkedArray):
            v = v.combine_chunks()
        elif isinstance(v, pa.Scalar):
            v = pa.repeat(v, batch.num_rows)
        out.append(v)
    return out


def filter_batch(batch: pa.RecordBatch, mask: pa.Array) -> pa.RecordBatch | None:
    """The rows where mask is true (NULL counts as false); None when there are none."""
    if isinstance(mask, pa.ChunkedArray):
        mask = mask.combine_chunks()
    if isinstance(mask, pa.Scalar):  # a constant predicate
        return batch if mask.as_py() is True else None
    kept = mask.true_count
    if kept == 0:
        return None
    if kept == len(batch):
        return batch
    if batch.num_columns == 0:
        return rows_without_columns(kept)
    return batch.filter(mask)


def select(batch: pa.RecordBatch, compiled, now) -> "pa.RecordBatch | None | bool":
    """The rows of `batch` a compiled predicate (segment/jit Compiled) keeps, None when
    none; False when there is no compiled predicate or it left the batch to the general
    evaluator."""
    if compiled is None:
        return False
    out = compiled.run(batch, now)
    if out is None:
        return False
    sel, _ = out
    if len(sel) == 0:
        return None
    if len(sel) == batch.num_rows:
        return batch
    if batch.num_columns == 0:
        return rows_without_columns(len(sel))
    return batch.take(pa.array(sel))


def schema_of(fields: Iterable[plan.Field]) -> pa.Schema:
    return pa.schema([pa.field(f.name, f.type.arrow_type()) for f in fields])


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=schema)


def rows_without_columns(n: int) -> pa.RecordBatch:
    """A batch of n rows and no columns (count(*) over a scan that reads no column)."""
    return pa.RecordBatch.from_struct_array(
        pa.Array.from_buffers(pa.struct([]), n, [None], children=[]))


def conform(batch: pa.RecordBatch, schema: pa.Schema,
            dictionaries: bool = False) -> pa.RecordBatch:
    """The batch with exactly `schema`'s names and types (cast where an expression produced
    a different but compatible type, e.g. int64 for an int4 column). With `dictionaries`,
    dictionary-encoded columns of the field's value type stay encoded."""
    if batch.schema.equals(schema):
        return batch
    cols = []
    for col, f in zip(batch.columns, schema):
        if col.type != f.type and not (dictionaries and is_encoded(col.type, f.type)):
            col = cast(col, f.type)
        cols.append(col)
    return pa.RecordBatch.from_arrays(cols, names=schema.names)


def is_encoded(t: pa.DataType, value_type: pa.DataType) -> bool:
    """t is a dictionary type whose values are of value_type."""
    return pa.types.is_dictionary(t) and t.value_type == value_type


def cast(arr: pa.Array, to: pa.DataType) -> pa.Array:
    try:
        return arr.cast(to)
    except pa.ArrowInvalid as e:
        if "overflow" in str(e).lower() or "out of bounds" in str(e).lower():
            raise errors.NumericOutOfRange(f"value out of range for type {to}") from e
        raise errors.InternalError(f"cannot cast {arr.type} to {to}: {e}") from e


def coalesce(results: Iterable[tuple[pa.RecordBatch | None, int]], schema: pa.Schema,
             min_rows: int | None = None) -> Iterator[pa.RecordBatch]:
    """Concatenate the outputs of small inputs: `results` pairs each output batch (None if
    nothing passed) with the input rows it came from; outputs are held until the inputs
    behind them reach min_rows (default MIN_BATCH_ROWS). Counting input rows, not output
    rows, bounds the extra work a LIMIT above can cause to min_rows input rows, however
    selective a filter is."""
    if min_rows is None:
        min_rows = MIN_BATCH_ROWS
    pending: list[pa.RecordBatch] = []
    consumed = 0
    for out, n_in in results:
        if out is not None and out.num_rows >= min_rows:
            # big enough as it is: never copied into a concatenation with small ones
            # (a small chunk before a 1M-row one cost a copy of all its strings)
            if pending:
                yield concat_batches(pending, schema)
            pending, consumed = [], 0
            yield out
            continue
        if out is not None and out.num_rows:
            pending.append(out)
        consumed += n_in
        if consumed >= min_rows:
            if pending:
                yield concat_batches(pending, schema)
            pending, consumed = [], 0
    if pending:
        yield concat_batches(pending, schema)


def concat_batches(batches: Sequence[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    if not batches:
        return empty_batch(schema)
    if not schema.names:
        return rows_without_columns(sum(b.num_rows for b in batches))
    if any(not b.schema.equals(schema) for b in batches):
        # Dictionary-encoded columns: keep a column encoded where every batch has it so
        # (combining unifies the dictionaries), decode it where some batch does not.
        encoded = [all(pa.types.is_dictionary(b.column(i).type) for b in batches)
                   for i in range(len(schema))]
        batches = [conform(b, pa.schema([b.schema.field(i) if enc else f for i, (f, enc)
                                         in enumerate(zip(schema, encoded))]))
                   for b in batches]
        return table_to_batch(pa.Table.from_batches(batches))
    return table_to_batch(pa.Table.from_batches(batches, schema=schema))


def table_to_batch(table: pa.Table) -> pa.RecordBatch:
    """One batch holding all rows of `table` (its column chunks combined)."""
    if table.num_columns == 0:
        return rows_without_columns(table.num_rows)
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    if not batches:
        return empty_batch(table.schema)
    return table.combine_chunks().to_batches()[0]


def table_snapshot(ctx: "ExecContext", table) -> list:
    """The chunks of `table`'s shard a scan reads (the committed ones now, and its own
    transaction's), checked to hold the table as its plan placed it: on
    `table.numsegments` segments (PlacementChanged when an expansion moved it since)."""
    chunks, placement = ctx.store.snapshot_placed(table.id, txn_id=ctx.txn_id)
    if placement and table.numsegments and placement != table.numsegments:
        raise errors.PlacementChanged(
            f'relation "{table.name}" is on {placement} segments now, not the '
            f"{table.numsegments} its plan was made for (an expansion moved it)",
            hint="Run the statement again.")
    return chunks
