"""Func.SORT_LIST: arrays of ROW(k..., x) sorted within by their keys, x kept; what
array_agg(x ORDER BY k...) gives when another array_agg of its query level has another
ORDER BY (planner/bind.py `_sorted_array_agg`). Keys order as ORDER BY orders them
(segment/kernels/sort_order.py: directions, NULLS FIRST/LAST, arrays and jsonb by their
sort keys); the sort is stable, so ties keep their input order."""

from __future__ import annotations

import pyarrow as pa

from planner import expr as ex
from planner import plan
from planner import types
from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_pgarray as xpa
from segment.kernels import sort_order


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


CALLS = {Func.SORT_LIST: sort_lists}
