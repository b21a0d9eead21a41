"""Kernels over arrays sorted within.

Func.SORT_LIST: arrays of ROW(k..., x) sorted within by their keys, x kept; what
array_agg(x ORDER BY k...) gives when another array_agg of its query level has another
ORDER BY (planner/bind.py `_sorted_array_agg`). Keys order as ORDER BY orders them
(segment/kernels/sort_order.py: directions, NULLS FIRST/LAST, arrays and jsonb by their
sort keys); the sort is stable, so ties keep their input order.

Func.SORTED_MODE: the most frequent non-NULL element of each sorted array, the first (in
its order) of equally frequent ones, which is mode() WITHIN GROUP (ORDER BY x) over
array_agg(x ORDER BY x)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import expr as ex
from planner import plan
from planner import types
from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_pgarray as xpa
from segment.kernels import numeric_dscale, sort_order


def sort_lists(e: Call, args: list, n: int) -> pa.Array:
    arr = xa.as_array(args[0], n)
    desc, nulls_first = e.args[1].value, e.args[2].value
    record = e.args[0].type.elem
    parts = xpa.Parts(arr)
    flat = xpa.flat(parts)
    nk = len(desc)
    cols = [pa.array(xpa.parents(parts.lengths), pa.int64())] + [
        flat.field(i) for i in range(nk)]
    keys = [plan.SortKey(ex.ColumnRef(0, types.INT8))] + [
        plan.SortKey(ex.ColumnRef(i + 1, record.fields[i][1]), desc[i] == "1",
                     nulls_first[i] == "1") for i in range(nk)]
    prepared = [sort_order.prepared(c, k.expr.type) for c, k in zip(cols, keys)]
    order = sort_order.sort_indices(prepared, keys)
    values = flat.field(nk).take(order)
    return xpa.build(values, parts.lengths, parts.valid, e.type.elem.arrow_type())


def sorted_mode(e: Call, args: list, n: int) -> pa.Array:
    """Runs of equal elements (consecutive, since each array is sorted) counted per array;
    per array the first of its longest runs. NULL for an array without non-NULL elements."""
    parts = xpa.Parts(xa.as_array(args[0], n))
    flat = xpa.flat(parts)
    parent = xpa.parents(parts.lengths)
    keep = np.asarray(flat.is_valid(), dtype=bool)
    values, parent = flat.filter(pa.array(keep)), parent[keep]
    out_type = e.type.arrow_type()
    m = len(values)
    if m == 0:
        return pa.nulls(n, out_type)
    start = np.ones(m, dtype=bool)
    if m > 1:
        # an unconstrained numeric by value: 1.5 and 1.50 are one run
        keys = numeric_dscale.value_of(values) if types.is_dynamic_arrow(values.type) \
            else values
        differs = np.asarray(pc.not_equal(keys.slice(1), keys.slice(0, m - 1)), dtype=bool)
        if pa.types.is_floating(values.type):  # NaN equals NaN, as PostgreSQL sorts it
            nan = np.asarray(pc.is_nan(values).fill_null(False), dtype=bool)
            differs &= ~(nan[1:] & nan[:-1])
        start[1:] = differs | (parent[1:] != parent[:-1])
    run_first = np.flatnonzero(start)
    run_len = np.diff(np.append(run_first, m))
    run_parent = parent[run_first]
    longest = np.zeros(n, dtype=np.int64)
    np.maximum.at(longest, run_parent, run_len)
    best = np.flatnonzero(run_len == longest[run_parent])  # in order: first per array
    _, first = np.unique(run_parent[best], return_index=True)
    chosen = best[first]
    index = np.full(n, -1, dtype=np.int64)
    index[run_parent[chosen]] = run_first[chosen]
    out = values.take(pa.array(index, mask=index < 0))
    return out if out.type == out_type else out.cast(out_type)


CALLS = {Func.SORT_LIST: sort_lists, Func.SORTED_MODE: sorted_mode}
