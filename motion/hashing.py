"""The one distribution hash of raympp and the mapping of hashes to segments.

Storage placement (which segment a row lives on) and Redistribute motions both call
`segment_ids` / `partition` here, so rows with equal distribution keys meet on one segment
and joins on distribution keys need no motion. The hash is therefore part of the on-disk
format: it is computed from canonical values with fixed constants by numba kernels over the
Arrow buffers, never with Python's `hash()`, and gives the same result in every process,
host and version. Changing any constant or kernel moves rows between segments: it requires
a new HASH_VERSION and a redistribution of every stored table. tests/unit/motion pins values.

Canonical values (equal values of comparable types hash alike):
- integers of every width, bool (0/1), date32 (days), date64 (days), timestamp and duration
  (int64 microseconds, other units converted, ns floored), time64[us] (microseconds
  since midnight), interval (total microseconds,
  month = 30 days, day = 24 hours, as PostgreSQL compares intervals) hash as an int64;
- numerics: a scaled int64 column (`scales[i]` given) and decimal128 values are reduced to
  (mantissa, scale) without trailing decimal zeros, so numeric 5.00 hashes like integer 5;
  an unconstrained numeric (value, display scale) hashes as its value
  and 1.50 like 1.5; values beyond int64 after reduction hash through their 128-bit halves;
- float32/float64 hash the float64 bits, -0.0 as 0.0, every NaN alike (not like integers:
  the planner casts mixed int/float keys to one type before it distributes);
- string/binary hash their bytes; dictionary arrays hash their decoded values;
- arrays (Arrow lists) hash their elements' hashes in order and their length;
- NULL hashes to NULL_HASH.
Columns of a composite key are combined row-wise in order. What it leaves to others: which
columns are the key and their scales (planner), and shipping the parts (motion routes).
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

HASH_VERSION = 1

_U = np.uint64
# Fixed seeds: one per value domain so that, e.g., the bytes "5" and the integer 5 differ.
SEED_NUM = _U(0x9E3779B97F4A7C15)
SEED_FLOAT = _U(0xC2B2AE3D27D4EB4F)
SEED_BYTES = _U(0x165667B19E3779F9)
SEED_LIST = _U(0x510E527FADE682D1)
NULL_HASH = _U(0x6A09E667F3BCC909)
_K_SCALE = _U(0x85EBCA77C2B2AE63)  # mixes the scale of non-integral numerics
_K_HI = _U(0x27D4EB2F165667C5)  # mixes the high half of 128-bit numerics
_K_COMBINE = _U(0xFF51AFD7ED558CCD)  # odd, so combining is a bijection in each input
_CANON_NAN = _U(0x7FF8000000000000)
# murmur3 fmix64 multipliers and xxhash64 primes.
_M1, _M2 = _U(0xFF51AFD7ED558CCD), _U(0xC4CEB9FE1A85EC53)
_P1, _P2, _P3, _P4, _P5 = (_U(k) for k in (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F,
                                          0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                                          0x27D4EB2F165667C5))
_JUMP_MUL = _U(2862933555777941757)
_MASK32, _INT64_MAX, _TEN = _U(0xFFFFFFFF), _U(0x7FFFFFFFFFFFFFFF), _U(10)
# Shift amounts as uint64 so numba never promotes uint64 arithmetic to float64.
_S1, _S8, _S11, _S23, _S27, _S31, _S32, _S33, _S63 = (
    _U(k) for k in (1, 8, 11, 23, 27, 31, 32, 33, 63))

_jit = numba.njit(cache=True, nogil=True)
_inline = numba.njit(cache=True, nogil=True, inline="always")


# --- scalar building blocks --------------------------------------------------------------
@_inline
def _fmix64(k):
    k ^= k >> _S33
    k *= _M1
    k ^= k >> _S33
    k *= _M2
    k ^= k >> _S33
    return k


fmix64 = _fmix64  # the 64-bit finalizer, for other kernels' hash tables (join_hash.py)


@_inline
def _rotl(x, r):
    return (x << r) | (x >> (_U(64) - r))


@_inline
def _valid(bitmap, has_validity, i):
    return (not has_validity) or ((bitmap[i >> 3] >> (i & 7)) & 1) == 1


@_inline
def _put(out, i, h, first):
    # Order matters: combine(a, b) != combine(b, a), so (1, 2) and (2, 1) differ.
    if first:
        out[i] = h
    else:
        out[i] = _fmix64(out[i] * _K_COMBINE + h)


@_inline
def _hash_int(m, s):
    """Hash of the numeric m * 10**-s, with m an int64 and s >= 0."""
    while s > 0 and m % 10 == 0:
        m //= 10
        s -= 1
    return _fmix64((_U(m) + _U(s) * _K_SCALE) ^ SEED_NUM)


@_inline
def _hash_magnitude(neg, hi, lo, s):
    """Hash of the numeric (-1)**neg * (hi * 2**64 + lo) * 10**-s, the magnitude unsigned."""
    while s > 0 and ((hi % _TEN) * _U(6) + lo % _TEN) % _TEN == 0:  # 2**64 % 10 == 6
        q_hi = hi // _TEN
        mid = ((hi % _TEN) << _S32) | (lo >> _S32)
        low = ((mid % _TEN) << _S32) | (lo & _MASK32)
        hi, lo = q_hi, ((mid // _TEN) << _S32) | (low // _TEN)
        s -= 1
    if hi == 0 and (lo <= _INT64_MAX or (neg and lo == _INT64_MAX + _U(1))):
        # Fits an int64: hash exactly as a scaled int64 of the same value does.
        m = np.int64(lo) if not neg else -np.int64(lo)
        return _fmix64((_U(m) + _U(s) * _K_SCALE) ^ SEED_NUM)
    if neg:  # back to two's complement, so the halves are those of the signed value
        lo = ~lo + _U(1)
        hi = ~hi + (_U(1) if lo == 0 else _U(0))
    return _fmix64(_fmix64(lo ^ SEED_NUM) + hi * _K_HI + _U(s) * _K_SCALE)


# --- column kernels: each hashes one Arrow array into `out` (first column) or mixes in ----
@_jit
def _k_ints(values, bitmap, has_validity, offset, scale, out, first):
    for i in range(out.shape[0]):
        if _valid(bitmap, has_validity, offset + i):
            h = _hash_int(np.int64(values[i]), scale)
        else:
            h = NULL_HASH
        _put(out, i, h, first)


@_jit
def _k_uint64(values, bitmap, has_validity, offset, scale, out, first):
    for i in range(out.shape[0]):
        if not _valid(bitmap, has_validity, offset + i):
            h = NULL_HASH
        elif values[i] <= _INT64_MAX:
            h = _hash_int(np.int64(values[i]), scale)
        else:
            h = _hash_magnitude(False, _U(0), values[i], scale)
        _put(out, i, h, first)


@_jit
def _k_decimal128(words, bitmap, has_validity, offset, scale, out, first):
    for i in range(out.shape[0]):
        if not _valid(bitmap, has_validity, offset + i):
            h = NULL_HASH
        else:
            lo = words[2 * i]
            hi = words[2 * i + 1]
            neg = (hi >> _S63) == 1
            if neg:
                lo = ~lo + _U(1)
                hi = ~hi + (_U(1) if lo == 0 else _U(0))
            h = _hash_magnitude(neg, hi, lo, scale)
        _put(out, i, h, first)


@_jit
def _k_bools(data, data_offset, bitmap, has_validity, offset, out, first):
    for i in range(out.shape[0]):
        if _valid(bitmap, has_validity, offset + i):
            j = data_offset + i
            h = _hash_int(np.int64((data[j >> 3] >> (j & 7)) & 1), 0)
        else:
            h = NULL_HASH
        _put(out, i, h, first)


@_jit
def _k_floats(values, bits, bitmap, has_validity, offset, out, first):
    for i in range(out.shape[0]):
        if _valid(bitmap, has_validity, offset + i):
            x = values[i]
            if x != x:
                b = _CANON_NAN
            elif x == 0.0:
                b = _U(0)  # -0.0 == 0.0
            else:
                b = bits[i]
            h = _fmix64(b ^ SEED_FLOAT)
        else:
            h = NULL_HASH
        _put(out, i, h, first)


@_inline
def _hash_bytes(data, start, end):
    """xxhash64's single-lane rounds over 8/4/1-byte pieces, then fmix64."""
    h = SEED_BYTES + _P5 + _U(end - start)
    p = start
    while p + 8 <= end:
        w = _U(0)
        for k in range(7, -1, -1):
            w = (w << _S8) | _U(data[p + k])
        h ^= _rotl(w * _P2, _S31) * _P1
        h = _rotl(h, _S27) * _P1 + _P4
        p += 8
    if p + 4 <= end:
        w = _U(data[p]) | (_U(data[p + 1]) << _S8) | (_U(data[p + 2]) << _U(16)) | (_U(data[p + 3]) << _U(24))
        h ^= w * _P1
        h = _rotl(h, _S23) * _P2 + _P3
        p += 4
    while p < end:
        h ^= _U(data[p]) * _P5
        h = _rotl(h, _S11) * _P1
        p += 1
    return _fmix64(h)


@_jit
def _k_bytes(offsets, data, bitmap, has_validity, offset, out, first):
    for i in range(out.shape[0]):
        if _valid(bitmap, has_validity, offset + i):
            h = _hash_bytes(data, offsets[i], offsets[i + 1])
        else:
            h = NULL_HASH
        _put(out, i, h, first)


@_jit
def _k_lists(offsets, element_hashes, bitmap, has_validity, offset, out, first):
    # An array hashes its elements' hashes in order, then its length: [1, 2] and [2, 1]
    # differ, and so do [] and [NULL].
    for i in range(out.shape[0]):
        if _valid(bitmap, has_validity, offset + i):
            h = SEED_LIST
            for j in range(offsets[i], offsets[i + 1]):
                h = _fmix64(h * _K_COMBINE + element_hashes[j])
            h = _fmix64(h ^ _U(offsets[i + 1] - offsets[i]))
        else:
            h = NULL_HASH
        _put(out, i, h, first)


@_jit
def _k_nulls(out, first):
    for i in range(out.shape[0]):
        _put(out, i, NULL_HASH, first)


@_jit
def _k_jump(hashes, n_buckets, out):
    # Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm" (2014).
    for i in range(hashes.shape[0]):
        key = hashes[i]
        b = np.int64(-1)
        j = np.int64(0)
        while j < n_buckets:
            b = j
            key = key * _JUMP_MUL + _S1
            j = np.int64(np.float64(b + 1) * (2147483648.0 / np.float64((key >> _S33) + _S1)))
        out[i] = b


@_jit
def _k_counting_order(seg, n):
    starts = np.zeros(n + 1, np.int64)
    for i in range(seg.shape[0]):
        starts[seg[i] + 1] += 1
    for b in range(n):
        starts[b + 1] += starts[b]
    pos = starts[:n].copy()
    order = np.empty(seg.shape[0], np.int64)
    for i in range(seg.shape[0]):  # ascending i: stable within each segment
        order[pos[seg[i]]] = i
        pos[seg[i]] += 1
    return order, starts


# --- Arrow buffers -> kernels ------------------------------------------------------------
_EMPTY_U8 = np.empty(0, np.uint8)
_INT_DTYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32,
               pa.int64(): np.int64, pa.uint8(): np.uint8, pa.uint16(): np.uint16,
               pa.uint32(): np.uint32, pa.date32(): np.int32}
_US_PER = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}


def _values(arr: pa.Array, dtype, width: int = 1) -> np.ndarray:
    """A zero-copy numpy view of the array's value buffer, offset applied."""
    n, off = len(arr), arr.offset
    buf = arr.buffers()[1]
    return np.frombuffer(buf, dtype=dtype, count=(off + n) * width)[off * width:]


def _bitmap(arr: pa.Array):
    buf = arr.buffers()[0]
    if buf is None or arr.null_count == 0:
        return _EMPTY_U8, False
    return np.frombuffer(buf, dtype=np.uint8), True


def _as_int64_view(arr: pa.Array) -> np.ndarray:
    """Temporal values as int64 in the canonical unit (days for dates, us otherwise)."""
    t = arr.type
    if pa.types.is_date64(t):
        return _values(arr, np.int64) // 86_400_000
    if t == pa.time64("us"):  # a time of day: microseconds since midnight
        return _values(arr, np.int64)
    if pa.types.is_timestamp(t) or pa.types.is_duration(t):
        v = _values(arr, np.int64)
        mult = _US_PER[t.unit]
        return v // 1_000 if mult is None else (v if mult == 1 else v * mult)
    if t == pa.month_day_nano_interval():
        rec = np.frombuffer(arr.buffers()[1], dtype=[("m", "<i4"), ("d", "<i4"), ("ns", "<i8")],
                            count=arr.offset + len(arr))[arr.offset:]
        days = rec["m"].astype(np.int64) * 30 + rec["d"]
        return days * 86_400_000_000 + rec["ns"] // 1_000
    raise TypeError(f"cannot hash values of type {t}")


def _is_value_and_scale(t: pa.DataType) -> bool:
    """An unconstrained numeric's layout: struct<value: decimal128, dscale: int8>
    (planner/types.py dynamic_numeric_arrow; this package does not import the planner)."""
    return (pa.types.is_struct(t) and t.num_fields == 2 and t.field(0).name == "value"
            and pa.types.is_decimal(t.field(0).type) and t.field(1).name == "dscale")


def _hash_chunk(arr: pa.Array, scale: int | None, out: np.ndarray, first: bool) -> None:
    t = arr.type
    if pa.types.is_dictionary(t):
        return _hash_chunk(arr.dictionary_decode(), scale, out, first)
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        target = pa.large_string() if pa.types.is_string_view(t) else pa.large_binary()
        return _hash_chunk(arr.cast(target), scale, out, first)
    if pa.types.is_decimal(t) and not pa.types.is_decimal128(t):
        if t.bit_width > 128:
            raise TypeError(f"cannot hash values of type {t}")
        return _hash_chunk(arr.cast(pa.decimal128(38, t.scale)), scale, out, first)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _hash_lists(arr, scale, out, first)
    if _is_value_and_scale(t):  # an unconstrained numeric hashes by value: 1.50 as 1.5
        return _hash_chunk(arr.flatten()[0], scale, out, first)
    if scale is not None and not (pa.types.is_integer(t) or pa.types.is_decimal(t)):
        raise ValueError(f"a scale applies to integer (scaled numeric) columns, not {t}")
    s = 0 if scale is None else scale
    if s < 0:
        raise ValueError(f"negative scale {s}")
    bitmap, has_validity = _bitmap(arr)
    off = arr.offset
    if t == pa.null():
        _k_nulls(out, first)
    elif t in _INT_DTYPES:
        _k_ints(_values(arr, _INT_DTYPES[t]), bitmap, has_validity, off, s, out, first)
    elif t == pa.uint64():
        _k_uint64(_values(arr, np.uint64), bitmap, has_validity, off, s, out, first)
    elif pa.types.is_decimal128(t):
        if t.scale < 0 or (scale is not None and scale != t.scale):
            raise ValueError(f"scale {scale} does not fit column type {t}")
        _k_decimal128(_values(arr, np.uint64, 2), bitmap, has_validity, off, t.scale, out, first)
    elif pa.types.is_boolean(t):
        _k_bools(np.frombuffer(arr.buffers()[1], np.uint8), off, bitmap, has_validity, off,
                 out, first)
    elif pa.types.is_floating(t):
        v = _values(arr, {16: np.float16, 32: np.float32, 64: np.float64}[t.bit_width])
        v = v if v.dtype == np.float64 else v.astype(np.float64)
        _k_floats(v, v.view(np.uint64), bitmap, has_validity, off, out, first)
    elif (pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t)
          or pa.types.is_large_binary(t)):
        wide = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
        offsets = np.frombuffer(arr.buffers()[1], np.int64 if wide else np.int32,
                                count=off + len(arr) + 1)[off:]
        data_buf = arr.buffers()[2]
        data = _EMPTY_U8 if data_buf is None else np.frombuffer(data_buf, np.uint8)
        _k_bytes(offsets, data, bitmap, has_validity, off, out, first)
    else:
        _k_ints(_as_int64_view(arr), bitmap, has_validity, off, 0, out, first)


def _hash_lists(arr: pa.Array, scale: int | None, out: np.ndarray, first: bool) -> None:
    """Arrays (Arrow lists): each element hashed as a column of its own (`scale` is the
    elements'), then combined per array."""
    wide = pa.types.is_large_list(arr.type)
    offsets = np.frombuffer(arr.buffers()[1], np.int64 if wide else np.int32,
                            count=arr.offset + len(arr) + 1)[arr.offset:]
    values = arr.values
    element_hashes = np.empty(len(values), np.uint64)
    if len(values):
        _hash_chunk(values, scale, element_hashes, True)
    bitmap, has_validity = _bitmap(arr)
    _k_lists(offsets, element_hashes, bitmap, has_validity, arr.offset, out, first)


# --- public API ----------------------------------------------------------------------------
def hash_arrays(arrays: list[pa.Array | pa.ChunkedArray],
                scales: list[int | None] | None = None) -> np.ndarray:
    """Row-wise uint64 hash of a composite key; arrays[i] is the i-th key column.

    scales[i] not None declares column i a numeric stored as scaled int64 with that scale.
    """
    if not arrays:
        raise ValueError("hash_arrays needs at least one key column")
    scales = [None] * len(arrays) if scales is None else scales
    if len(scales) != len(arrays):
        raise ValueError(f"{len(scales)} scales for {len(arrays)} key columns")
    n = len(arrays[0])
    out = np.empty(n, np.uint64)
    for col, (arr, scale) in enumerate(zip(arrays, scales)):
        if isinstance(arr, pa.ChunkedArray):
            chunks = arr.chunks
        elif isinstance(arr, pa.Array):
            chunks = [arr]
        else:
            raise TypeError(f"key column {col} is {type(arr).__name__}, not a pyarrow array")
        if len(arr) != n:
            raise ValueError(f"key column {col} has {len(arr)} rows, column 0 has {n}")
        pos = 0
        for chunk in chunks:
            if len(chunk):
                _hash_chunk(chunk, scale, out[pos:pos + len(chunk)], col == 0)
            pos += len(chunk)
    return out


def jump_consistent(hashes: np.ndarray, n_buckets: int) -> np.ndarray:
    """Bucket in [0, n_buckets) of each hash; growing n to n+1 moves about 1/(n+1) of keys."""
    if not 1 <= n_buckets <= 2**31 - 1:
        raise ValueError(f"n_buckets must be in [1, 2**31 - 1], got {n_buckets}")
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    out = np.empty(hashes.shape[0], np.int32)
    if n_buckets == 1:
        out[:] = 0
    else:
        _k_jump(hashes, np.int64(n_buckets), out)
    return out


def segment_ids(arrays: list[pa.Array | pa.ChunkedArray], n_segments: int,
                scales: list[int | None] | None = None) -> np.ndarray:
    """The segment (0 .. n_segments-1) each row's key belongs to, as int32."""
    return jump_consistent(hash_arrays(arrays, scales), n_segments)


def partition(batch: pa.RecordBatch, key_indices: list[int], n_segments: int,
              scales: list[int | None] | None = None) -> list[pa.RecordBatch]:
    """Split a batch into n_segments batches by the segment of each row's key.

    scales aligns with key_indices. Rows keep their relative order within each part; the
    parts are zero-copy slices of one reordered batch.
    """
    if not key_indices or not all(0 <= i < batch.num_columns for i in key_indices):
        raise ValueError(f"bad key column indices {key_indices} for {batch.num_columns} columns")
    if n_segments == 1:
        return [batch]
    seg = segment_ids([batch.column(i) for i in key_indices], n_segments, scales)
    order, starts = _k_counting_order(seg, np.int64(n_segments))
    ordered = batch.take(pa.array(order))
    return [ordered.slice(int(starts[b]), int(starts[b + 1] - starts[b])) for b in range(n_segments)]
