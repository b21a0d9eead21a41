"""array_remove, array_replace and array_positions over Arrow list columns
(planner/array_rules.py `_rule_edit`): each element is matched with its row's value as
IS NOT DISTINCT FROM (a NULL value matches the NULL elements, as PostgreSQL's
array_remove(a, NULL) removes them), over the flat child array at once; a NULL array
gives NULL.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels.expr_pgarray import (_conform, _lists, _offsets, _same, build, flat,
                                          parents)


def _matches(e: Call, args: list, n: int):
    """The array's parts, its flat elements, each element's row and whether it matches."""
    t = e.args[0].type
    p = _lists(args[0], n)
    rows = parents(p.lengths)
    values = _conform(flat(p), t.elem)
    x = _conform(xa.as_array(args[1], n), t.elem).take(pa.array(rows, pa.int64()))
    return p, values, rows, _same(values, x, t.elem)


def array_remove(e: Call, args: list, n: int) -> pa.Array:
    p, values, rows, hit = _matches(e, args, n)
    keep = ~hit
    lengths = np.bincount(rows[keep], minlength=n).astype(np.int64)
    return build(values.filter(pa.array(keep)), lengths, p.valid, e.type.elem.arrow_type())


def array_replace(e: Call, args: list, n: int) -> pa.Array:
    p, values, rows, hit = _matches(e, args, n)
    to = _conform(xa.as_array(args[2], n), e.type.elem).take(pa.array(rows, pa.int64()))
    out = pc.if_else(pa.array(hit), to, values) if len(values) else values
    return build(out, p.lengths, p.valid, e.type.elem.arrow_type())


def array_positions(e: Call, args: list, n: int) -> pa.Array:
    p, _values, rows, hit = _matches(e, args, n)
    local = np.arange(len(rows), dtype=np.int64) - _offsets(p.lengths)[:-1][rows]
    positions = (local[hit] + e.args[0].type.lower_bound).astype(np.int32)
    lengths = np.bincount(rows[hit], minlength=n).astype(np.int64)
    return build(pa.array(positions, pa.int32()), lengths, p.valid, pa.int32())


CALLS = {Func.ARRAY_REMOVE: array_remove, Func.ARRAY_REPLACE: array_replace,
         Func.ARRAY_POSITIONS: array_positions}
