"""What the ingest modules share: errors that name their row, and soft casts.

An error raised while conforming a column carries `row`, the index of the first bad value
(`raise_at`); `fail_at` finds that value for a vectorized parse by bisecting prefixes.
`try_cast` returns None where a cast fails, so a caller can try the fast path first.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors

WS = " \t\n\r\v\f"  # what PostgreSQL's scanners treat as skippable space


def raise_at(exc: errors.QueryError, row: int):
    exc.row = row
    raise exc


def first_true(mask: pa.Array) -> int:
    """Index of the first true value of a boolean array (nulls count as false)."""
    return int(np.flatnonzero(mask.fill_null(False).to_numpy(zero_copy_only=False))[0])


def _locate(arr: pa.Array, attempt) -> int:
    """Row of the first value on which `attempt` (a vectorized cast returning None on
    failure) fails, by bisecting prefixes: exact for whatever the fast path accepts."""
    lo, hi = 0, len(arr)  # attempt(arr[:lo]) succeeds, attempt(arr[:hi]) fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if attempt(arr.slice(0, mid)) is None:
            hi = mid
        else:
            lo = mid
    return lo


def fail_at(arr: pa.Array, attempt, explain) -> None:
    """Raise the error `explain(text)` builds for the first value `attempt` rejects."""
    row = _locate(arr, attempt)
    raise_at(explain(arr[row].as_py()), row)


def to_string(arr: pa.Array) -> pa.Array:
    try:
        return arr.cast(pa.string())
    except pa.ArrowInvalid:
        for i, v in enumerate(arr.cast(pa.large_binary()).to_pylist()):
            try:
                v is None or v.decode("utf-8")
            except UnicodeDecodeError as u:
                bad = " ".join(f"0x{b:02x}" for b in v[u.start:u.end])
                raise_at(errors.QueryError(
                    f'invalid byte sequence for encoding "UTF8": {bad}', "22021"), i)
        raise


def try_cast(arr: pa.Array, target: pa.DataType | pc.CastOptions) -> pa.Array | None:
    try:
        if isinstance(target, pc.CastOptions):
            return pc.cast(arr, options=target)
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def trim(arr: pa.Array) -> pa.Array:
    return pc.utf8_trim(arr, WS)


def null(t: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, t)
