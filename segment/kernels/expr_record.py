"""Records (planner/types.py Kind.RECORD, Arrow structs): ROW(a, b, ...) and the field
selection (record).name."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa


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


CALLS = {Func.ROW: row, Func.FIELD: field}
