"""time with time zone over batches.

A timetz is one int64 (planner/temporal.py TimeTz.pack): its UTC instant in microseconds
(local time plus the zone) shifted left 17 bits, plus the zone (seconds west of UTC,
|zone| <= 15:59:59) offset by 2**16. Integer order is then PostgreSQL's timetz_cmp (by
instant, then by zone) and integer equality its equality, so sorting, grouping, joins,
min/max and the distribution hash take the column as the int64 it is; these kernels
unpack it for text, casts, arithmetic and EXTRACT.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import temporal, time_values
from planner.expr import Func
from planner.types import Kind
from segment.kernels import expr_arrays as xa
from segment.kernels import infinite, interval_order

US_PER_DAY = temporal.USECS_PER_DAY
_ZONE_BIAS = 1 << 16


def unpack(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(local microseconds since midnight, zone seconds west, validity) of a timetz array."""
    key = xa.np_view(arr, np.int64)
    zone = (key & 0x1FFFF) - _ZONE_BIAS
    return (key >> 17) - zone * 1_000_000, zone, xa.valid_mask(arr)


def pack(local: np.ndarray, zone: np.ndarray, valid: np.ndarray | None, n: int) -> pa.Array:
    local, zone = (np.broadcast_to(np.asarray(x, np.int64), (n,)) for x in (local, zone))
    key = ((local + zone * 1_000_000) << 17) | (zone + _ZONE_BIAS)
    return xa.from_numpy(np.ascontiguousarray(key), pa.int64(), valid)


def to_text(arr: pa.Array) -> pa.Array:
    """timetz_out: the local time, then the offset as +HH[:MM[:SS]] (one format per
    distinct zone)."""
    local, zone, valid = unpack(arr)
    clock = pc.cast(xa.from_numpy(np.mod(local, US_PER_DAY), pa.time64("us"), valid), pa.string())
    clock = pc.replace_substring_regex(clock, r"(\.\d*[1-9])0+$|\.0+$", r"\1")
    zones = np.unique(zone if valid is None else zone[valid])
    if not len(zones):  # every row NULL
        return pa.nulls(len(arr), pa.string())
    offsets = pa.array([time_values.format_offset(int(z)) for z in zones], pa.string())
    where = np.minimum(np.searchsorted(zones, zone), len(zones) - 1)  # (NULL rows: any)
    return pc.binary_join_element_wise(clock, offsets.take(pa.array(where)), "")


def cast(arr: pa.Array, src: Kind, dst: Kind) -> pa.Array:
    """time -> timetz and timestamptz -> timetz (the session's zone, UTC; NULL for
    +/-infinity), timetz -> time (its local time); timetz -> timetz as it is."""
    n = len(arr)
    if src is dst:  # timetz -> timetz(p): the caller rounds
        return arr
    if src is Kind.TIMETZ:
        local, _, valid = unpack(arr)
        return xa.from_numpy(local, pa.time64("us"), valid)
    inf = infinite.infinities(arr) if src is Kind.TIMESTAMPTZ else None
    us = xa.np_view(infinite.finite(arr, inf), np.int64)
    out = pack(np.mod(us, US_PER_DAY), 0, xa.valid_mask(arr), n)
    return infinite.without(out, inf)


def arith(e, args: list, n: int) -> pa.Array:
    """timetz +/- interval: the local time wraps around the day (the interval's time part
    only, as timetz_pl_interval), the zone stays."""
    a, b = (xa.as_array(x, n) for x in args)
    local, zone, va = unpack(a)
    us = interval_order.records(b)["ns"] // 1000
    sign = 1 if e.func is Func.ADD else -1
    valid = va if b.null_count == 0 else (xa.valid_mask(b) if va is None else va & xa.valid_mask(b))
    return pack(np.mod(local + sign * us, US_PER_DAY), zone, valid, n)


def field_values(field: str, arr: pa.Array) -> tuple[np.ndarray, int]:
    """EXTRACT fields of a timetz: those of its local time; epoch is the UTC instant."""
    local, zone, _ = unpack(arr)
    if field == "epoch":
        return local + zone * 1_000_000, 6
    if field == "hour":
        return local // 3_600_000_000, 0
    if field == "minute":
        return local // 60_000_000 % 60, 0
    return np.mod(local, 60_000_000), {"second": 6, "milliseconds": 3, "microseconds": 0}[field]
