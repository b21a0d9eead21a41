"""sqrt, ln, exp, log, log10 and power of numeric columns, each value at the scale
PostgreSQL's numeric versions pick for it (planner/numeric_math.py, the code that folds
constants), as an unconstrained numeric (planner/math_rules.py types them so).

The result's digits and scale depend on each value's own, so the work is exact decimal
arithmetic once per distinct tuple of (value, display scale) arguments
(expr_arrays.per_distinct), not per row. A result with more fractional digits than the
type's storage scale S, or more integer digits than S leaves, is 22003.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa

from planner import errors, numeric_math
from planner.expr import Call, Func
from planner.values import DEC, scale_of
from segment.kernels import expr_arrays as xa
from segment.kernels import numeric_dscale as nd

_COMPUTE = {Func.SQRT: numeric_math.sqrt, Func.LN: numeric_math.ln,
            Func.EXP: numeric_math.exp, Func.POWER: numeric_math.power,
            Func.LOG: numeric_math.log, Func.LOG10: numeric_math.log}


def _value_and_scale(arg, t, n: int) -> list:
    """An argument as two per_distinct arguments: its decimal values and display scales."""
    if t.is_dynamic:
        if isinstance(arg, pa.Scalar):
            v = arg.as_py()
            if v is None:
                return [pa.scalar(None, arg.type.field(0).type), pa.scalar(0, pa.int64())]
            return [pa.scalar(v[arg.type.field(0).name], arg.type.field(0).type),
                    pa.scalar(v[arg.type.field(1).name], pa.int64())]
        value, dscale = nd.parts(xa.as_array(arg, n))
        return [value, pa.array(dscale, pa.int64())]
    return [arg, pa.scalar(t.scale, pa.int64())]


def numeric_call(e: Call, args: list, n: int) -> xa.Datum:
    """e (sqrt, ln, exp, log, log10, power typed as an unconstrained numeric) over batches."""
    compute = _COMPUTE[e.func]
    storage = e.type.scale
    limit = Decimal(10) ** (38 - storage)
    flat = [part for a, x in zip(args, e.args) for part in _value_and_scale(a, x.type, n)]

    def result(*parts) -> Decimal:
        exact = [DEC.quantize(Decimal(v), Decimal(1).scaleb(-int(d)))
                 for v, d in zip(parts[::2], parts[1::2])]
        r = compute(*[x for v, d in zip(exact, parts[1::2]) for x in (v, int(d))])
        if scale_of(r) > storage:
            raise nd.too_many_digits(scale_of(r), storage)
        if abs(r) >= limit:
            raise errors.NumericOutOfRange(
                "value overflows numeric format",
                detail=f"a result of {e.func.value}() with more than {38 - storage} "
                       "integer digits: raympp's unconstrained numerics hold no more here")
        return r

    if not any(isinstance(p, pa.Array) for p in flat):
        parts = [p.as_py() for p in flat]
        if any(v is None for v in parts[::2]):
            return pa.scalar(None, e.type.arrow_type())
        r = result(*parts)
        return nd.build(pa.array([r], pa.decimal128(38, storage)), scale_of(r), storage)[0]
    # one pass over the distinct tuples: each row gets its result's place in `results`
    results: list[Decimal] = []

    def place(*parts) -> int:
        results.append(result(*parts))
        return len(results) - 1
    rows = xa.as_array(xa.per_distinct(place, flat, n, pa.int64()), n)
    values = pa.array(results, pa.decimal128(38, storage)).take(rows)
    scales = np.array([scale_of(r) for r in results] or [0], dtype=np.int64)
    return nd.build(values, scales[rows.fill_null(0).to_numpy(zero_copy_only=False)], storage)
