"""The plan that moves one table's rows when the cluster grows from `old` to `new`
segments (coordinator/expansion.py runs it, one table per transaction).

Rows are placed by the jump-consistent bucket of their key's hash (motion/hashing.py), so
growing changes the segment of about 1 - old/new of the keys of a hashed table, each to a
new segment; only those rows move. On every segment of the table, a Rehome node picks
them from a scan of the shard, DeleteRows marks them deleted there, and an Explicit
Redistribute Motion sends each to its new segment, where Insert writes it: all in the
transaction that also sets the table's `numsegments` to `new`, so readers see the table
either as it was or moved, never half of it. A random table gives each new segment its
share (rows a hash of their row id buckets there); a replicated table is copied whole
from one copy to each new segment.
"""

from __future__ import annotations

from planner import distribute, types
from planner import expr as ex
from planner import locus as lc
from planner import plan as pl
from planner.schema import ROW_ID, SEGMENT_ID, DistKind, TableDef

_COUNT = (pl.Field("rows", types.INT8),)


def plan_move(table: TableDef, old: int, new: int) -> pl.Node:
    """The distributed plan that moves `table`'s rows from `old` to `new` segments; it
    yields the rows written on each new home (sum them for the rows moved)."""
    if not 0 < old < new:
        raise ValueError(f"an expansion grows the table's segments, not {old} -> {new}")
    kind = table.policy.kind
    ncols = len(table.columns)
    columns = tuple(range(ncols)) + ((SEGMENT_ID, ROW_ID) if kind is not DistKind.REPLICATED
                                     else ())
    fields = tuple(pl.Field(table.column(c).name, table.column(c).type) for c in columns)
    scan = distribute.place(pl.Scan(table, columns, fields), new)
    if kind is DistKind.HASHED:
        mode, keys = pl.RehomeMode.HASHED, tuple(table.policy.keys)
        scales = tuple(table.key_scales())
    elif kind is DistKind.RANDOM:
        mode, keys, scales = pl.RehomeMode.RANDOM, (ncols + 1,), (None,)
    else:
        mode, keys, scales = pl.RehomeMode.REPLICATED, (), ()
    target = pl.Field("\0target", types.INT4)
    node: pl.Node = pl.Rehome(scan, mode, keys, scales, old, new, fields + (target,),
                              locus=scan.locus)
    if kind is not DistKind.REPLICATED:
        # Gone from here, in the same transaction that writes it on its new segment.
        node = pl.DeleteRows(node, table, ncols + 1, node.fields, count=False,
                             locus=scan.locus)
    keep = tuple(range(ncols)) + (len(node.fields) - 1,)
    # Where the scan is: every segment (or, for a replicated table, one copy's).
    node = pl.Project(node, tuple(ex.ColumnRef(i, node.fields[i].type, node.fields[i].name)
                                  for i in keep),
                      tuple(node.fields[i] for i in keep), locus=scan.locus)
    node = pl.Motion(node, pl.MotionKind.EXPLICIT, node.fields, hash_keys=(ncols,),
                     locus=lc.STREWN)
    row = tuple(node.fields[:ncols])
    node = pl.Project(node, tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(row)),
                      row, locus=lc.STREWN)
    return distribute.finish(pl.Insert(node, table, _COUNT, locus=lc.STREWN))
