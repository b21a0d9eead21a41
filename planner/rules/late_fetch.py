"""Late materialization of a top-K over a table scan: sort narrow rows, fetch the rest.

`SELECT * FROM hits WHERE url LIKE '%google%' ORDER BY eventtime LIMIT 10` read and
filtered all 105 columns to keep 10 rows. A per-segment top-K (a Sort with a limit)
whose input is a Scan, under projections, needs only the columns its filter and sort
keys read (and those of computed outputs) to choose its rows; the others ("late"
columns, passed through as they are) are read afterwards for the K winners alone:

    Project: the Sort's columns, in its order
      Fetch: the late columns, by row id
        Top-K Sort: the keys, then the row id
          Project: the early outputs, the row id
            Scan: the early columns, the row id, the filter

The row id (schema.ROW_ID: chunk number and position) breaks ties, so the rows kept are
the first by (keys, place of the row). Only top-Ks of at most MAX_ROWS rows whose late
columns are at least MIN_WIDTH bytes wide (estimated) are rewritten. Computed outputs are evaluated before the sort as
they were (an error a row raises is raised either way); only plain columns move past it.
The Fetch reads the chunks the Scan read (segment/operators/fetch.py), so rows a delete
removed, or a concurrent one, cannot come back.

A DISTRIBUTED_RULE: the per-segment top-K exists once distribute has split the ORDER BY
into it and a Gather Merge; the Sort keeps its fields and locus, so the Motion above is
unchanged.
"""

from __future__ import annotations

from planner import estimate
from planner import expr as ex
from planner import plan as pl
from planner.schema import ROW_ID, SYSTEM_COLUMNS

# Top-Ks of at most this many rows fetch late: the winners are read by position, chunk by
# chunk, which past tens of thousands of rows approaches reading the columns whole.
MAX_ROWS = 65_536
# Late columns narrower than this (estimate.fields_width: a date, an int8) are read with
# the rest: the row id that stands for them until the fetch is 8 bytes itself.
MIN_WIDTH = 16

_ROW_ID_FIELD = pl.Field(SYSTEM_COLUMNS[ROW_ID].name, SYSTEM_COLUMNS[ROW_ID].type)


def late_fetch(node: pl.Node) -> pl.Node:
    """The placed plan with each qualifying top-K over a scan sorting narrow rows and
    fetching its other columns for the rows it keeps."""
    def visit(n: pl.Node) -> pl.Node:
        if isinstance(n, pl.Sort) and n.limit is not None and 0 < n.limit <= MAX_ROWS:
            return _late(n) or n
        return n
    return pl.transform(node, visit)


def _late(sort: pl.Sort) -> pl.Node | None:
    found = _over_scan(sort.child)
    if found is None:
        return None
    scan, outputs = found
    if scan.locus is None or not scan.locus.on_segments or any(c < 0 for c in scan.columns):
        return None  # system columns: a DELETE's or UPDATE's own rows (and this rule's)
    # Table columns needed to choose the rows: the filter's, the keys', computed outputs'.
    early: set[int] = set()
    needed = [outputs[j] for k in sort.keys for j in ex.columns_used(k.expr)]
    needed += [e for e in outputs if not isinstance(e, ex.ColumnRef)]
    if scan.filter is not None:
        needed.append(scan.filter)
    for e in needed:
        early |= {scan.columns[i] for i in ex.columns_used(e)}
    late = [j for j, e in enumerate(outputs)
            if isinstance(e, ex.ColumnRef) and scan.columns[e.index] not in early]
    if not late:
        return None
    fetched = list(dict.fromkeys(scan.columns[outputs[j].index] for j in late))
    fetched_fields = tuple(pl.Field(scan.table.column(c).name, scan.table.column(c).type)
                           for c in fetched)
    if estimate.fields_width(fetched_fields) < MIN_WIDTH:
        return None

    # The narrow scan: early columns in their first order, then the row id.
    kept: list[int] = []  # scan positions, a column listed twice once
    at: dict[int, int] = {}  # table column -> narrow position
    for i, c in enumerate(scan.columns):
        if c in early and c not in at:
            at[c] = len(kept)
            kept.append(i)
    to_narrow = {i: at[c] for i, c in enumerate(scan.columns) if c in at}
    columns = tuple(scan.columns[i] for i in kept) + (ROW_ID,)
    row_ref = ex.ColumnRef(len(kept), _ROW_ID_FIELD.type, _ROW_ID_FIELD.name)
    narrow_scan = pl.Scan(
        scan.table, columns, tuple(scan.fields[i] for i in kept) + (_ROW_ID_FIELD,),
        None if scan.filter is None else ex.map_columns(scan.filter, to_narrow),
        locus=scan.locus.remap(to_narrow))

    # The rows the top-K orders: the outputs that are not late, then the row id.
    early_out = [j for j in range(len(outputs)) if j not in set(late)]
    exprs = tuple(ex.map_columns(outputs[j], to_narrow) for j in early_out) + (row_ref,)
    passed = {e.index: n for n, e in reversed(list(enumerate(exprs)))
              if isinstance(e, ex.ColumnRef)}
    narrow = pl.Project(narrow_scan, exprs, tuple(sort.fields[j] for j in early_out)
                        + (_ROW_ID_FIELD,), locus=narrow_scan.locus.remap(passed))
    to_row = {j: n for n, j in enumerate(early_out)}
    row_key = pl.SortKey(ex.ColumnRef(len(early_out), row_ref.type, row_ref.name))
    top = pl.Sort(narrow, tuple(pl.SortKey(ex.map_columns(k.expr, to_row), k.descending,
                                           k.nulls_first) for k in sort.keys) + (row_key,),
                  narrow.fields, sort.limit, locus=narrow.locus)
    fetch = pl.Fetch(top, scan.table, len(early_out), tuple(fetched),
                     narrow.fields + fetched_fields, locus=top.locus)
    width = len(narrow.fields)
    back = []
    for j, f in enumerate(sort.fields):
        if j in to_row:
            back.append(ex.ColumnRef(to_row[j], f.type, f.name))
        else:
            back.append(ex.ColumnRef(width + fetched.index(scan.columns[outputs[j].index]),
                                     f.type, f.name))
    return pl.Project(fetch, tuple(back), sort.fields, locus=sort.locus)


def _over_scan(node: pl.Node) -> tuple[pl.Scan, list[ex.Expr]] | None:
    """The Scan under `node` through projections, with each output column of `node` as an
    expression over the Scan's columns; None for any other shape, or a volatile
    projection (substituting would evaluate it once per use)."""
    if isinstance(node, pl.Scan):
        return node, [ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(node.fields)]
    if isinstance(node, pl.Project) and not any(ex.is_volatile(e) for e in node.exprs):
        found = _over_scan(node.child)
        if found is None:
            return None
        scan, below = found
        return scan, [ex.replace_columns(e, lambda c: below[c.index]) for e in node.exprs]
    return None

