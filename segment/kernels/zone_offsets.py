"""Timestamps with a zone offset each, as UTC instants, in bulk: Arrow's cast reads offsets
of hours and minutes; an offset with seconds (the local mean time PostgreSQL prints for old
dates in most zones, '1883-11-18 11:56:02-04:56:02') is split off and applied here."""

from __future__ import annotations

import contextlib

import pyarrow as pa
import pyarrow.compute as pc

_CLOCK_AND_OFFSET = (r"^(?P<clock>.*[0-9]) *(?P<sign>[+-])(?P<h>[0-9]{1,2})"
                     r"(?::?(?P<m>[0-9]{2})(?::?(?P<s>[0-9]{2}))?)?$")
UTC_MICROS = pa.timestamp("us", tz="UTC")


def instants(arr: pa.Array, naive) -> pa.Array | None:
    """`arr` (text ending in an offset, or NULL) as timestamp[us, UTC]; None when a value
    does not parse. `naive(text)` reads the wall clocks (timestamp[us], or None)."""
    # Arrow reads offsets of hours and minutes; offsets with seconds (local mean time,
    # '+05:53:28') are split off by the regex below and applied here.
    with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pc.cast(arr, UTC_MICROS)
    parts = pc.extract_regex(arr, _CLOCK_AND_OFFSET)
    clock = pc.struct_field(parts, "clock")
    if pc.any(pc.and_(pc.is_valid(arr), pc.is_null(clock))).as_py():
        return None
    local = naive(clock)
    if local is None:
        return None
    # an optional group that did not match is '' (RE2), or NULL on a NULL row
    h, m, sec = (pc.cast(pc.replace_substring_regex(
        pc.fill_null(pc.struct_field(parts, f), ""), "^$", "0"), pa.int64())
                 for f in ("h", "m", "s"))
    seconds = pc.add(pc.add(pc.multiply(h, 3600), pc.multiply(m, 60)), sec)
    west = pc.equal(pc.struct_field(parts, "sign"), "-")
    micros = pc.multiply(pc.if_else(west, pc.negate(seconds), seconds), 1_000_000)
    return pc.subtract(pc.cast(local, pa.int64()), micros).cast(pa.timestamp("us")).cast(
        UTC_MICROS)
