"""Binary COPY FROM of array columns: array_recv over whole columns.

A binary array cell is Int32 ndim, Int32 has-null flag, UInt32 element type OID, per
dimension Int32 length and Int32 lower bound, then each element as Int32 length (-1 for
NULL) and its own binary value. A numba kernel walks every cell of a run of tuples once
and records where each element starts and how long it is; the elements are then decoded
as one column of the element type by copy_binary's own column decoder (so every element
type binary COPY reads is read in arrays too) and conformed by convert (numeric typmods,
varchar(n) lengths, char(n)), and become the child of an Arrow list.

PostgreSQL's errors: 22P03 for a malformed cell (`invalid number of dimensions`, `invalid
array flags`, `insufficient data left in message`, `improper binary format in array
element n`), 54000 for more than 6 dimensions or a negative length, 42804 when the cell's
element type is not the column's. raympp's arrays have one dimension with subscripts from
1, so more dimensions or another lower bound are 0A000 (as array_in's text forms are);
int2vector and oidvector are the same cells with subscripts from 0.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

from planner import errors, types
from planner.schema import ColumnDef
from planner.types import SqlType
from segment.ingest import convert
from segment.kernels import expr_pgarray as xpa

MAXDIM = 6
OK, SHORT, BAD_NDIM, TOO_MANY_DIMS, BAD_FLAGS, BAD_OID, MULTI_DIM, BAD_SIZE, \
    BAD_BOUND, BAD_ITEM, TRAILING = range(11)


@numba.njit(cache=True, nogil=True)
def _int32(buf, p):  # pragma: no cover - compiled
    v = ((np.int64(buf[p]) << 24) | (np.int64(buf[p + 1]) << 16)
         | (np.int64(buf[p + 2]) << 8) | np.int64(buf[p + 3]))
    return v - 0x100000000 if v >= 0x80000000 else v


@numba.njit(cache=True, nogil=True)
def _scan(buf, starts, lengths, oid, lower, counts, elem_starts,
          elem_lengths):  # pragma: no cover
    """Walk the array cells starts[r]:starts[r]+lengths[r] (length -1: NULL): counts[r]
    elements each, their starts and lengths appended to elem_*. Returns (elements so far,
    row of the first bad cell or -1, state, detail)."""
    k = 0
    for r in range(starts.shape[0]):
        counts[r] = 0
        size = lengths[r]
        if size < 0:
            continue
        s, end = starts[r], starts[r] + size
        if size < 12:
            return k, r, SHORT, 0
        ndim, flags, elem = _int32(buf, s), _int32(buf, s + 4), _int32(buf, s + 8)
        if ndim < 0:
            return k, r, BAD_NDIM, ndim
        if ndim > MAXDIM:
            return k, r, TOO_MANY_DIMS, ndim
        if flags != 0 and flags != 1:
            return k, r, BAD_FLAGS, flags
        if elem & 0xFFFFFFFF != oid:
            return k, r, BAD_OID, elem & 0xFFFFFFFF
        if s + 12 + 8 * ndim > end:
            return k, r, SHORT, 0
        items = 1 if ndim > 0 else 0
        for d in range(ndim):
            dim = _int32(buf, s + 12 + 8 * d)
            if dim < 0:
                return k, r, BAD_SIZE, dim
            items *= dim
        if items > 0:
            if ndim > 1:
                return k, r, MULTI_DIM, ndim
            if _int32(buf, s + 16) != lower:
                return k, r, BAD_BOUND, _int32(buf, s + 16)
        p = s + 12 + 8 * ndim
        for i in range(items):
            if p + 4 > end:
                return k, r, SHORT, 0
            size_i = _int32(buf, p)
            p += 4
            if size_i < -1 or size_i > end - p:
                return k, r, SHORT, 0
            elem_starts[k] = p
            elem_lengths[k] = size_i
            k += 1
            if size_i > 0:
                p += size_i
        if p != end:
            return k, r, TRAILING, 0
        counts[r] = items
    return k, -1, OK, 0


def _type_name(oid: int) -> str:
    """format_type(oid, -1), as array_recv's mismatch error names a type."""
    if oid == types.OIDS[types.Kind.CHAR]:
        return "bpchar"
    kind = types.KIND_BY_OID.get(oid)
    return "???" if kind is None or kind is types.Kind.UNKNOWN else types.SqlType(
        kind, **({"scale": 0} if kind is types.Kind.NUMERIC else {})).sql()


def _error(state: int, detail: int, t: SqlType) -> errors.QueryError:
    if state == BAD_NDIM:
        return errors.QueryError(f"invalid number of dimensions: {detail}", "22P03")
    if state == TOO_MANY_DIMS:
        return errors.QueryError(f"number of array dimensions ({detail}) exceeds the maximum "
                                 f"allowed ({MAXDIM})", "54000")
    if state == BAD_FLAGS:
        return errors.QueryError("invalid array flags", "22P03")
    if state == BAD_OID:
        return errors.DatatypeMismatch(
            f"binary data has array element type {detail} ({_type_name(detail)}) instead of "
            f"expected {t.elem.oid} ({_type_name(t.elem.oid)})")
    if state == BAD_SIZE:
        return errors.QueryError("array size exceeds the maximum allowed (134217727)", "54000")
    if state == MULTI_DIM:
        return errors.FeatureNotSupported("multidimensional arrays")
    if state == BAD_BOUND:
        if t.kind is not types.Kind.ARRAY:  # int2vector / oidvector start at 0
            return errors.QueryError(f"invalid {t.kind.value} data", "22P03")
        return errors.FeatureNotSupported(
            f"arrays with lower bound {detail} (raympp's arrays start at 1)")
    if state == TRAILING:
        return errors.QueryError("incorrect binary data format", "22P03")
    return errors.QueryError("insufficient data left in message", "22P03")


def decode(view: np.ndarray, starts: np.ndarray, lengths: np.ndarray, t: SqlType,
           column) -> pa.Array:
    """The array column t of the binary cells view[starts[i]:starts[i]+lengths[i]]
    (-1: NULL). `column(view, starts, lengths, ColumnDef)` decodes the elements (copy_binary's
    decoder of one column). An error carries `row`, the cell's index."""
    n = len(starts)
    valid = lengths >= 0
    cap = int(np.maximum(lengths, 0).sum() // 4) + 1
    counts = np.zeros(n, np.int64)
    elem_starts, elem_lengths = np.empty(cap, np.int64), np.empty(cap, np.int64)
    k, bad, state, detail = _scan(view, starts.astype(np.int64), lengths.astype(np.int64),
                                  t.elem.oid, t.lower_bound, counts, elem_starts, elem_lengths)
    if bad >= 0:
        e = _error(state, detail, t)
        e.row = int(bad)
        raise e
    if t.kind is not types.Kind.ARRAY:  # int2vectorrecv: one dimension, no NULLs
        wrong = valid & ((counts == 0) | _has_null(counts, elem_lengths[:k]))
        if wrong.any():
            e = errors.QueryError(f"invalid {t.kind.value} data", "22P03")
            e.row = int(np.flatnonzero(wrong)[0])
            raise e
    elem = ColumnDef("element", t.elem)
    try:
        values = convert.convert(column(view, elem_starts[:k], elem_lengths[:k], elem), t.elem)
    except errors.QueryError as e:
        raise _in_row(e, counts) from None
    return xpa.build(values, counts, valid, t.elem.arrow_type())


def _has_null(counts: np.ndarray, elem_lengths: np.ndarray) -> np.ndarray:
    """Per cell: whether one of its elements is NULL."""
    nulls = np.zeros(len(counts), bool)
    rows = np.repeat(np.arange(len(counts)), counts)[elem_lengths < 0]
    nulls[rows] = True
    return nulls


def _in_row(e: errors.QueryError, counts: np.ndarray) -> errors.QueryError:
    """An element's error as its array's: `row` the array's cell, and a malformed element
    named by its place in the array, as ReadArrayBinary names it."""
    element = getattr(e, "row", 0)
    first = np.concatenate(([0], np.cumsum(counts)))
    row = int(np.searchsorted(first, element, side="right") - 1)
    if e.sqlstate == "22P03":
        e = errors.QueryError(
            f"improper binary format in array element {element - first[row] + 1}", "22P03")
    e.row = row
    return e
