"""Records (planner/types.py Kind.RECORD, Arrow structs): ROW(a, b, ...), the field
selection (record).name, and a record's canonical key (Func.ROW_KEY): the concatenated
cells of its fields (expr_pgarray.element_keys; a nested record or an array is one cell
of its own key), equal exactly where two records are equal as DISTINCT compares them."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels.expr_pgarray import element_keys, sort_key


def row(e: Call, args: list, n: int) -> pa.Array:
    t = e.type.arrow_type()
    cols = [xa.as_array(a, n) for a in args]
    cols = [c if c.type == f.type else c.cast(f.type) for c, f in zip(cols, t)]
    return pa.StructArray.from_arrays(cols, fields=list(t))


def field(e: Call, args: list, n: int) -> pa.Array:
    record = e.args[0].type
    name = e.args[1].value
    index = [f for f, _ in record.fields].index(name)
    return pc.struct_field(xa.as_array(args[0], n), [index])


def row_key(e: Call, args: list, n: int) -> pa.Array:
    return _record_key(xa.as_array(args[0], n))


def _record_key(arr: pa.Array) -> pa.Array:
    """Binary keys of a struct column, NULL where it is NULL."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    cells = [_cells(pc.struct_field(arr, [i])) for i in range(arr.type.num_fields)]
    if not cells:
        cells = [pa.array([b""] * len(arr), pa.binary())]
    body = pc.binary_join_element_wise(*cells, b"")
    return pc.if_else(arr.is_valid(), body, pa.scalar(None, pa.binary()))


def _cells(values: pa.Array) -> pa.Array:
    """One prefix-free canonical cell per value (see expr_pgarray.element_keys)."""
    if pa.types.is_struct(values.type) or pa.types.is_list(values.type):
        key = _record_key(values) if pa.types.is_struct(values.type) else sort_key(values)
        keyed = pc.binary_join_element_wise(b"\x02", key, b"")
        return pc.if_else(values.is_valid(), keyed, pa.scalar(b"\x03", pa.binary()))
    return element_keys(values)


CALLS = {Func.ROW: row, Func.FIELD: field, Func.ROW_KEY: row_key}
