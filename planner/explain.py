"""EXPLAIN text for distributed plans: one line per node, two-space indent, deterministic.

Each node shows its locus and its estimated row count (planner/estimate.py); Motions show the slice they start and
the sender:receiver gang sizes. With ANALYZE, actual rows and times (from segment and
coordinator statistics, keyed by (slice id, node position in its slice)) are appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner import estimate
from planner import expr as ex
from planner import plan as pl
from planner.locus import LocusKind

@dataclass
class NodeActual:
    """What EXPLAIN ANALYZE measured for one node (summed over the gang)."""

    rows: int = 0
    ms: float = 0.0       # wall time, the slowest member of the gang
    segments: int = 0
    extra: str = ""       # e.g. motion frames/bytes/transport
    peak_memory: int = 0  # bytes under the query's memory budget, the largest member's
    spilled_bytes: int = 0  # written to spill files, summed over the gang
    # Compiled paths (segment/jit, agg_table): batches a compiled loop answered, batches
    # it left to the general evaluator, milliseconds its compilation (or the load of its
    # cached machine code) took on the slowest member (0 when it was in memory already),
    # batches a numba group table took.
    jit_batches: int = 0
    jit_fallbacks: int = 0
    jit_compile_ms: float = 0.0
    table_batches: int = 0
    # Operator counters named in SHOWN_COUNTERS, summed over the gang.
    counts: dict[str, int] = field(default_factory=dict)


# Counters of operators that EXPLAIN ANALYZE shows as `name=value` when not zero: the
# chunks a Fetch read rows from, the rows a join-key filter dropped in a Scan.
SHOWN_COUNTERS = ("fetched_chunks", "key_filtered")


def _rename(e: ex.Expr, names: list[str]) -> ex.Expr:
    """The expression with column names of the join's inputs, for display."""
    from dataclasses import replace as _replace

    return ex.replace_columns(e, lambda c: _replace(c, name=names[c.index]))


def explain(root: pl.Node, n_segments: int,
            actuals: dict[tuple[int, int], NodeActual] | None = None) -> list[str]:
    """The EXPLAIN lines of a distributed plan (the output of distribute.distribute)."""
    lines: list[str] = []
    counters: dict[int, int] = {}

    def visit(node: pl.Node, depth: int, slice_id: int):
        pos = counters.get(slice_id, 0)
        counters[slice_id] = pos + 1
        # System columns' names start with NUL (planner/schema.py): shown without it.
        text = "  " * depth + _describe(node, n_segments).replace("\0", "")
        text += f"  (rows={estimate.rows(node):.0f}"
        if node.locus is not None and not isinstance(node, pl.Motion):
            text += f" locus={node.locus.describe([f.name for f in node.fields])}"
        text += ")"
        if actuals is not None:
            a = actuals.get((slice_id, pos))
            if a is not None:
                text += f" actual rows={a.rows} time={a.ms:.1f} ms"
                if a.segments:
                    text += f" segments={a.segments}"
                if a.peak_memory:
                    text += f" memory={_kb(a.peak_memory)}"
                if a.spilled_bytes:
                    text += f" spilled={_kb(a.spilled_bytes)}"
                if a.jit_batches or a.jit_fallbacks:
                    text += (f" jit=(batches={a.jit_batches} fallbacks={a.jit_fallbacks}"
                             f" compile={a.jit_compile_ms:.0f} ms)")
                if a.table_batches:
                    text += f" group_table={a.table_batches}"
                for name in SHOWN_COUNTERS:
                    if a.counts.get(name):
                        text += f" {name}={a.counts[name]}"
                if a.extra:
                    text += f" {a.extra}"
        lines.append(text)
        child_slice = node.slice_id if isinstance(node, pl.Motion) else slice_id
        for c in node.children():
            visit(c, depth + 1, child_slice)

    visit(root, 0, 0)
    return lines


def _describe(node: pl.Node, n: int) -> str:
    if isinstance(node, pl.Motion):
        senders = 1 if node.child.locus.kind in (LocusKind.REPLICATED, LocusKind.SINGLE_QE) else n
        receivers = 1 if node.kind in (pl.MotionKind.GATHER, pl.MotionKind.GATHER_MERGE) else n
        text = f"{node.kind.value} Motion {senders}:{receivers} (slice{node.slice_id})"
        if node.hash_keys:
            text += " hash=[" + ", ".join(node.child.fields[k].name for k in node.hash_keys) + "]"
        if node.sort_keys:
            text += " merge=[" + ", ".join(k.describe() for k in node.sort_keys) + "]"
        # Onto the first segments only: a table an expansion has not moved yet.
        to = node.locus.segments if node.kind is pl.MotionKind.REDISTRIBUTE and \
            node.locus is not None else node.buckets
        if 0 < to < n:
            text += f" segments={to}"
        return text
    if isinstance(node, pl.Scan):
        cols = ", ".join(node.table.column(c).name for c in node.columns)
        text = f"Scan: {node.table.name}, columns=[{cols}]"
        if 0 < node.table.numsegments < n:  # an expansion has not moved it yet
            text += f", segments={node.table.numsegments} of {n}"
        if node.filter is not None:
            text += f", filter={ex.show(node.filter)}"
        return text
    if isinstance(node, pl.Values):
        if node.system:
            return f"System Relation {node.system}: {len(node.rows)} row(s)"
        return f"Values: {len(node.rows)} row(s)"
    if isinstance(node, pl.Materialized):
        return f"Materialized: {node.table.num_rows} row(s)"
    if isinstance(node, pl.StatsScan):
        return f"Chunk Statistics Scan: {node.table.name}, stats=[" \
            + ", ".join(f.name for f in node.fields) + "]"
    if isinstance(node, pl.GenerateSeries):
        return f"Function Scan: generate_series({node.start}, {node.stop}, {node.step})"
    if isinstance(node, pl.TableFunction):
        return f"Function Scan: {node.name}({', '.join(map(str, node.args))})"
    if isinstance(node, pl.Filter):
        return f"Filter: {ex.show(node.predicate)}"
    if isinstance(node, pl.Project):
        return "Project: " + ", ".join(ex.show(e) for e in node.exprs)
    if isinstance(node, pl.Expand):
        return f"Expand: {len(node.sets)} grouping sets"
    if isinstance(node, pl.ProjectSet):
        return ("ProjectSet (outer): " if node.outer else "ProjectSet: ") + ", ".join(
            ("generate_subscripts" if sub else "unnest") + f"({ex.show(e)})"
            for e, sub in zip(node.arrays, node.subscripts))
    if isinstance(node, pl.Aggregate):
        keys = ", ".join(ex.show(k) for k in node.keys)
        aggs = ", ".join(a.sql() for a in node.aggs)
        kind = "HashAggregate" if node.keys else "Aggregate"
        return f"{kind}: mode={node.mode.value}, keys=[{keys}], aggs=[{aggs}]"
    if isinstance(node, pl.Sort):
        keys = ", ".join(k.describe() for k in node.keys)
        if node.limit is not None:
            return f"Top-K Sort: limit={node.limit}, keys=[{keys}]"
        return f"Sort: keys=[{keys}]"
    if isinstance(node, pl.Fetch):
        cols = ", ".join(node.table.column(c).name for c in node.columns)
        return f"Late Fetch: {node.table.name}, columns=[{cols}], " \
            f"by={node.child.fields[node.row_id].name}"
    if isinstance(node, pl.Limit):
        ties = ", with ties" if node.ties else ""
        return f"Limit: limit={node.limit}, offset={node.offset}{ties}"
    if isinstance(node, pl.HashJoin):
        keys = ", ".join(f"{node.left.fields[a].name} = {node.right.fields[b].name}"
                         for a, b in zip(node.left_keys, node.right_keys))
        text = f"Hash Join: type={node.join_type.value}, keys=[{keys}]"
        if not node.left_keys:
            text = f"Nested Loop Join: type={node.join_type.value}"
        if node.build_left:
            text += ", build=left"
        if node.residual is not None:
            names = [f.name for f in node.left.fields] + [f.name for f in node.right.fields]
            text += f", filter={ex.show(_rename(node.residual, names))}"
        return text
    if isinstance(node, pl.Append):
        return f"Append: {len(node.inputs)} inputs"
    if isinstance(node, pl.WindowAgg):
        names = [f.name for f in node.child.fields]
        return (f"WindowAgg: partition=[{', '.join(names[i] for i in node.partition)}], "
                f"order=[{', '.join(k.describe() for k in node.order)}], "
                f"calls=[{', '.join(c.sql(names) for c in node.calls)}]" + (
                    f", keep={node.calls[node.keep[0]].sql(names)} <= {node.keep[1]}"
                    if node.keep is not None else ""))
    if isinstance(node, pl.Insert):
        return f"Insert: {node.table.name} ({node.table.policy.describe(node.table.columns)})"
    if isinstance(node, pl.DeleteRows):
        return f"Delete: {node.table.name}"
    return type(node).__name__


def _kb(nbytes: int) -> str:
    """Bytes as PostgreSQL's EXPLAIN prints memory: in kB."""
    return f"{(nbytes + 1023) // 1024}kB"
