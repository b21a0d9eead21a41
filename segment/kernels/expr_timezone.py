"""Time zone conversions over batches (planner/zone_rules.py writes them into plans).

Instants (timestamptz) are UTC microseconds; a wall clock (timestamp) is microseconds of
local time. The offset of a zone at an instant comes from Arrow's copy of the tz database
(`pc.local_timestamp`), for the whole column at once; a fixed zone's is a constant.
Reading a wall clock back as an instant follows planner/time_zones.local_offset exactly:
the offsets a day before and after, checked, the smaller of those that fit.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import types
from planner.expr import Call, Func
from planner.time_zones import Zone, offset_text
from segment.kernels import datetime_text
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_cast as xcast
from segment.kernels import infinite as xinf

_US = 1_000_000
_INFINITE = (2**63 - 1, -2**63)  # timestamp 'infinity' / '-infinity' in batches
_DAY_US = 86_400 * _US
# timestamptz text that names its own offset (planner/temporal.py's _TS_RE, its zone group)
_HAS_OFFSET = (r"(?i)^\s*\d{4,}-\d{1,2}-\d{1,2}(?:\s+BC)?(?:(?:\s+|T)\d{1,2}:\d{1,2}"
               r"(?::\d{1,2}(?:\.\d*)?)?)?\s*(?:Z|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)"
               r"(?:\s*BC)?\s*$")  # BC after the date or at the end; offsets with seconds


def _zone(arg) -> Zone:
    """The zone argument: a constant, which may arrive as a scalar or a repeated array."""
    return Zone.from_spec((arg if isinstance(arg, pa.Scalar) else arg[0]).as_py())


def _micros(arr: pa.Array) -> np.ndarray:
    """The int64 values of a timestamp array, 0 in null slots (which may hold anything)."""
    v = xa.np_view(arr, np.int64)[:len(arr)].copy()
    valid = xa.valid_mask(arr)
    if valid is not None:
        v[~valid] = 0
    return v


def _finite(convert, micros: np.ndarray, zone: Zone) -> np.ndarray:
    """convert(micros, zone) where the values are finite; +/-infinity (the extreme
    integers) stay as they are in every zone."""
    infinite = (micros == _INFINITE[0]) | (micros == _INFINITE[1])
    if not infinite.any():
        return convert(micros, zone)
    out = convert(np.where(infinite, 0, micros), zone)
    return np.where(infinite, micros, out)


def offsets(micros: np.ndarray, zone: Zone) -> np.ndarray:
    """Seconds east of UTC in `zone` at each UTC instant."""
    if zone.fixed is not None:
        return np.full(len(micros), zone.fixed, np.int64)
    at = pa.array(micros, pa.timestamp("us", tz=zone.arrow))
    local = pc.local_timestamp(at).cast(pa.int64()).to_numpy()
    return (local - micros) // _US


def _rebuild(values: np.ndarray, like: pa.Array, t: pa.DataType) -> pa.Array:
    return pa.Array.from_buffers(t, len(like), [xa.validity_buffer(like), pa.py_buffer(values)],
                                 null_count=like.null_count)


def local_micros(instants: np.ndarray, zone: Zone) -> np.ndarray:
    return instants + offsets(instants, zone) * _US


def instant_micros(local: np.ndarray, zone: Zone) -> np.ndarray:
    """The UTC instants of wall-clock times in `zone` (PostgreSQL's choice in skipped and
    repeated hours: planner/time_zones.local_offset)."""
    if zone.fixed is not None:
        return local - zone.fixed * _US
    before, after = offsets(local - _DAY_US, zone), offsets(local + _DAY_US, zone)
    chosen = before.copy()
    near = np.flatnonzero(before != after)  # a transition within a day: check both
    if len(near):
        lb, la = before[near], after[near]
        loc = local[near]
        fits_b = offsets(loc - lb * _US, zone) == lb
        fits_a = offsets(loc - la * _US, zone) == la
        smaller = np.minimum(lb, la)
        chosen[near] = np.where(fits_b & fits_a, smaller,
                                np.where(fits_b, lb, np.where(fits_a, la, smaller)))
    return local - chosen * _US


def to_local(e: Call, args: list, n: int) -> pa.Array:
    arr = xa.as_array(args[0], n)
    return _rebuild(_finite(local_micros, _micros(arr), _zone(args[1])), arr,
                    pa.timestamp("us"))


def from_local(e: Call, args: list, n: int) -> pa.Array:
    arr = xa.as_array(args[0], n)
    return _rebuild(_finite(instant_micros, _micros(arr), _zone(args[1])), arr,
                    types.TIMESTAMPTZ.arrow_type())


def tstz_out(e: Call, args: list, n: int) -> pa.Array:
    """timestamptz_out in a zone: the wall clock's text and the offset in force
    ('infinity' alone for the infinite values)."""
    arr = xa.as_array(args[0], n)
    zone = _zone(args[1])
    micros = _micros(arr)
    infinite = (micros == _INFINITE[0]) | (micros == _INFINITE[1])
    finite = np.where(infinite, 0, micros)
    offs = offsets(finite, zone)
    local = _rebuild(np.where(infinite, micros, finite + offs * _US), arr, pa.timestamp("us"))
    distinct, which = np.unique(np.where(infinite, 0, offs), return_inverse=True)
    suffix = pa.array([offset_text(int(o)) for o in distinct], pa.string()).take(
        pa.array(which.astype(np.int32)))
    # the offset goes before a ' BC' ('0001-12-31 19:03:58-04:56:02 BC')
    return xinf.text(local, lambda a: xcast.timestamp_text(a, suffix))


def tstz_in(e: Call, args: list, n: int, order: str = "mdy") -> pa.Array:
    """timestamptz_in in a zone: text with its own zone is that instant, other text a
    wall clock there (ISO text vectorized, the rest as datetime_text reads it, numeric
    dates in DateStyle's `order`)."""
    text = xa.as_array(args[0], n)
    spec = _zone(args[1]).spec

    def iso(arr: pa.Array) -> pa.Array:
        own = pc.fill_null(pc.match_substring_regex(arr, _HAS_OFFSET), False)
        if pc.all(own).as_py():
            return _fast(arr, types.TIMESTAMPTZ)
        local = _fast(pc.if_else(own, pa.scalar(None, pa.string()), arr), types.TIMESTAMP)
        read_here = from_local(e, [local, args[1]], len(arr))
        if not pc.any(own).as_py():
            return read_here
        given = _fast(pc.if_else(own, arr, pa.scalar(None, pa.string())), types.TIMESTAMPTZ)
        return pc.if_else(own, given, read_here)
    return datetime_text.column(text, types.TIMESTAMPTZ, iso, spec, order)


def text_in(e: Call, args: list, n: int) -> pa.Array:
    """Func.TEXT_IN: a date/time type's input in a session's zone and DateStyle order;
    ISO text vectorized (a timestamptz as tstz_in), the rest once per distinct text."""
    order = (args[2] if isinstance(args[2], pa.Scalar) else args[2][0]).as_py()
    if e.type.kind is types.Kind.TIMESTAMPTZ:
        return tstz_in(e, args, n, order)
    text = xa.as_array(args[0], n)
    return datetime_text.column(text, e.type, lambda a: _fast(a, e.type), _zone(args[1]).spec,
                                order)


def _fast(arr: pa.Array, t) -> pa.Array:
    out = xcast.datetime_fast(arr, t)
    if out is None:
        raise pa.ArrowInvalid("not in a form the vectorized parser reads")
    return out


CALLS = {Func.TO_LOCAL: to_local, Func.FROM_LOCAL: from_local, Func.TSTZ_OUT: tstz_out,
         Func.TSTZ_IN: tstz_in, Func.TEXT_IN: text_in}
