"""Array plumbing for expression kernels: numpy views of Arrow buffers, validity masks,
broadcasting of scalars, scattering results of a row subset back, and the mapping of
pyarrow errors to SQLSTATE errors.

Arrow null slots hold arbitrary bytes, so every kernel that reads raw buffers takes the
validity mask along and never lets a null slot raise.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors

Datum = pa.Array | pa.Scalar


def as_array(d: Datum, n: int) -> pa.Array:
    """d as an array of length n (a scalar is repeated)."""
    if isinstance(d, pa.Scalar):
        return pa.nulls(n, d.type) if not d.is_valid else pa.repeat(d, n)
    return d


def np_view(arr: pa.Array, dtype) -> np.ndarray:
    """The values of a fixed-width array as numpy, zero-copy (null slots are garbage)."""
    width = np.dtype(dtype).itemsize
    buf = arr.buffers()[1]
    count = (arr.offset + len(arr)) * arr.type.bit_width // 8 // width
    view = np.frombuffer(buf, dtype=dtype, count=count)
    per = arr.type.bit_width // 8 // width
    return view[arr.offset * per:]


def filled(d: Datum, n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """d's values as n numpy values of dtype, NULLs as 0, and a validity array (never
    None), for kernels that compute on every row and mask afterwards."""
    arr = as_array(d, n)
    if pa.types.is_null(arr.type):
        return np.zeros(n, dtype), np.zeros(n, bool)
    valid = valid_mask(arr)
    values = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(dtype)
    return values, np.ones(n, bool) if valid is None else valid


def valid_mask(arr: pa.Array) -> np.ndarray | None:
    """A bool array, True where arr is not null; None when there are no nulls."""
    if arr.null_count == 0:
        return None
    return pc.is_valid(arr).to_numpy(zero_copy_only=False)


def validity_buffer(arr: pa.Array) -> pa.Buffer | None:
    """arr's validity bitmap starting at bit 0 (None when there are no nulls)."""
    if arr.null_count == 0:
        return None
    if arr.offset == 0:
        return arr.buffers()[0]
    return pc.is_valid(arr).buffers()[1]


def alloc(n: int, dtype) -> tuple[np.ndarray, pa.Buffer]:
    """A writable numpy array of n items backed by a buffer from Arrow's memory pool (its
    pages are reused between batches; fresh numpy memory page-faults every time)."""
    buf = pa.allocate_buffer(max(n, 1) * np.dtype(dtype).itemsize)
    return np.frombuffer(buf, dtype=dtype, count=n), buf


def all_valid(arr_or_n) -> np.ndarray:
    n = arr_or_n if isinstance(arr_or_n, int) else len(arr_or_n)
    return np.ones(n, dtype=bool)


def max_abs(d: Datum) -> int:
    """The largest |value| of an integer datum over its non-NULL rows (0 if none). Cheap
    (one min_max pass) and used to prove that int64 arithmetic cannot overflow: pyarrow's
    checked kernels take seconds per batch when they do overflow."""
    if isinstance(d, pa.Scalar):
        return abs(d.as_py() or 0)
    mm = pc.min_max(d)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    return 0 if lo is None else max(abs(lo), abs(hi))


INT_MAX = {8: 2**7 - 1, 16: 2**15 - 1, 32: 2**31 - 1, 64: 2**63 - 1}


def and_masks(*masks: np.ndarray | None) -> np.ndarray | None:
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else (out & m)
    return out


def from_numpy(values: np.ndarray, typ: pa.DataType, valid: np.ndarray | None,
               n: int | None = None) -> pa.Array:
    """A fixed-width Arrow array of n rows over numpy values (or an Arrow buffer holding
    them) and an optional validity mask."""
    if isinstance(values, pa.Buffer):
        data = values
    else:
        values = np.ascontiguousarray(values)
        n = len(values) if n is None else n
        data = pa.py_buffer(values)
    if valid is None or valid.all():
        return pa.Array.from_buffers(typ, n, [None, data], null_count=0)
    bitmap = pa.array(valid, pa.bool_()).buffers()[1]
    nulls = int(n - np.count_nonzero(valid))
    return pa.Array.from_buffers(typ, n, [bitmap, data], null_count=nulls)


def bool_mask(d: Datum, n: int) -> np.ndarray:
    """True where a boolean datum is true (NULL counts as false)."""
    if isinstance(d, pa.Scalar):
        return np.full(n, bool(d.as_py()), dtype=bool)
    return pc.fill_null(d, False).to_numpy(zero_copy_only=False)


def scatter(values: pa.Array, idx: np.ndarray, n: int) -> pa.Array:
    """An array of length n holding values[j] at idx[j] and NULL elsewhere."""
    pos = np.full(n, -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx), dtype=np.int64)
    return values.take(pa.array(pos, mask=pos < 0))


def arrow_error(exc: pa.ArrowInvalid, out_of_range: str) -> errors.QueryError:
    """The SQL error for an ArrowInvalid raised by a checked compute kernel."""
    text = str(exc)
    if "divide by zero" in text:
        return errors.DivisionByZero("division by zero")
    if "overflow" in text or "not in range" in text or "truncated" in text:
        return errors.NumericOutOfRange(out_of_range)
    return errors.InternalError(text)


def first_failure(ok: np.ndarray, valid: np.ndarray | None) -> int | None:
    """Index of the first valid row where ok is False, or None."""
    bad = ~ok if valid is None else (~ok & valid)
    idx = np.flatnonzero(bad)
    return int(idx[0]) if len(idx) else None


# --- Python functions once per distinct argument tuple -------------------------------------
def per_distinct(fn, args: list, n: int, out_type: pa.DataType, strict: bool = True
                 ) -> Datum:
    """fn(*values) once per distinct tuple of the row-varying arguments (the constant ones
    passed as they are); NULL wherever an argument is NULL when `strict`."""
    consts = [a.as_py() if isinstance(a, pa.Scalar) else None for a in args]
    varying = [i for i, a in enumerate(args) if not isinstance(a, pa.Scalar)]
    if strict and any(consts[i] is None for i in range(len(args)) if i not in varying):
        return pa.scalar(None, out_type) if not varying else pa.nulls(n, out_type)
    if not varying:
        return pa.scalar(fn(*consts), out_type)
    if len(varying) == 1:
        return _one_varying(fn, consts, varying[0], as_array(args[varying[0]], n), out_type,
                            strict)
    codes, dictionaries = [], []
    for i in varying:
        enc = pc.dictionary_encode(as_array(args[i], n))
        codes.append(pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False)
                     .astype(np.int64))
        dictionaries.append(enc.dictionary.to_pylist())
    key = np.stack(codes, axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    out = []
    for row in first:
        vals = list(consts)
        for j, i in enumerate(varying):
            c = codes[j][row]
            vals[i] = None if c < 0 else dictionaries[j][c]
        out.append(None if strict and any(v is None for v in vals) else fn(*vals))
    return pa.array(out, out_type).take(pa.array(inverse.ravel()))


def _one_varying(fn, consts: list, at: int, arr: pa.Array, out_type: pa.DataType,
                 strict: bool) -> pa.Array:
    """per_distinct with one row-varying argument: fn over its dictionary, spread by the
    indices (a NULL row takes fn's value for NULL unless strict)."""
    enc = pc.dictionary_encode(arr)

    def call(v):
        vals = list(consts)
        vals[at] = v
        return fn(*vals)
    out = pa.array([call(v) for v in enc.dictionary.to_pylist()], out_type).take(enc.indices)
    if strict or arr.null_count == 0:
        return out
    return pc.if_else(pc.is_null(arr), pa.scalar(call(None), out_type), out)
