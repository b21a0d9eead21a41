"""Kernels of the internal functions interval aggregates are bound over
(planner/interval_aggregates.py): an interval's parts, an interval from the sums of its
parts (PostgreSQL's sum(interval) adds months, days and microseconds apart), and the
keyed bytes that min/max order intervals by (segment/kernels/interval_order.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from planner import errors
from planner.expr import Func
from segment.kernels import expr_arrays as xa
from segment.kernels import interval_order

_I32 = 2**31
_MAX_MICROS = (2**63 - 1) // 1000  # an Arrow month_day_nano holds nanoseconds in an int64


def _mask(values: pa.Array) -> np.ndarray | None:
    return np.asarray(values.is_null()) if values.null_count else None


def part(e, args, n) -> pa.Array:
    """(x, 'months' | 'days' | 'micros'): that part of each interval, int64."""
    values = xa.as_array(args[0], n)
    rec = interval_order.records(values)
    which = e.args[1].value
    v = rec["m"] if which == "months" else rec["d"] if which == "days" else rec["ns"] // 1000
    return pa.array(v.astype(np.int64), pa.int64(), mask=_mask(values))


def _int64(values: pa.Array) -> np.ndarray:
    try:
        return np.asarray(values.fill_null(0).cast(pa.int64()), dtype=np.int64)
    except (pa.ArrowInvalid, OverflowError):
        raise errors.QueryError("interval out of range", "22008") from None


def from_sums(e, args, n) -> pa.Array:
    """(months, days, micros) sums -> interval; NULL where a sum is (no rows), 22008 when
    a part leaves its range."""
    cols = [xa.as_array(a, n) for a in args]
    months, days, micros = (_int64(c) for c in cols)
    null = np.zeros(n, dtype=bool)
    for c in cols:
        if c.null_count:
            null |= np.asarray(c.is_null())
    ok = ~null
    if (np.any(np.abs(months[ok]) >= _I32) or np.any(np.abs(days[ok]) >= _I32)
            or np.any(np.abs(micros[ok]) > _MAX_MICROS)):
        raise errors.QueryError("interval out of range", "22008")
    rec = np.zeros(n, dtype=interval_order.RECORD)
    rec["m"], rec["d"], rec["ns"] = months, days, micros * 1000
    validity = pa.array(ok).buffers()[1] if null.any() else None
    return pa.Array.from_buffers(pa.month_day_nano_interval(), n,
                                 [validity, pa.py_buffer(rec.tobytes())])


CALLS = {
    Func.INTERVAL_PART: part,
    Func.INTERVAL_FROM_SUMS: from_sums,
    Func.INTERVAL_KEYED: lambda e, args, n: interval_order.keyed(xa.as_array(args[0], n)),
    Func.INTERVAL_UNKEYED: lambda e, args, n: interval_order.unkeyed(xa.as_array(args[0], n)),
}
