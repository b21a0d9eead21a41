"""Per-value display scales (PostgreSQL's dscale) of unconstrained numerics in batches.

An unconstrained numeric is an Arrow struct (planner/types.py `dynamic_numeric_arrow`):
`value`, decimal128(38, S) at the type's storage scale S, and `dscale`, int8, the value's
own scale (<= S). Comparisons, hashing, grouping, joins and sorting read `value` only, so
1.5 and 1.50 are equal; output and arithmetic read `dscale` too. Work that depends on a
row's scale runs once per distinct scale over the whole batch (a batch holds few of them),
never row by row.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, types
from planner.expr import Func
from planner.values import scale_of
from segment.kernels import expr_arrays as xa



# 10^0 .. 10^38 as (high, low) 64-bit words, for counting the digits of 128-bit values
_POW_HI = np.array([10**k >> 64 for k in range(39)], dtype=np.uint64)
_POW_LO = np.array([10**k & ((1 << 64) - 1) for k in range(39)], dtype=np.uint64)


def is_dynamic(arr) -> bool:
    return types.is_dynamic_arrow(arr.type)


def parts(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(value, dscale) of a dynamic numeric array: the decimal values (NULL where arr is)
    and the scales as int64 (0 where arr is NULL)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    value, dscale = arr.flatten()
    return value, pc.fill_null(dscale, 0).to_numpy(zero_copy_only=False).astype(np.int64)


def value_of(arr):
    """The values of a dynamic numeric array (or scalar) as decimal128 (what keys
    compare)."""
    if isinstance(arr, pa.Scalar):
        v = arr.as_py()
        return pa.scalar(None if v is None else v[types.NUMERIC_VALUE_FIELD],
                         arr.type.field(0).type)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.flatten()[0]


def build(value: pa.Array, dscale, storage_scale: int, exact_beyond: bool = False
          ) -> pa.Array:
    """The dynamic numeric array of decimal values at storage_scale and their scales (an
    int or an array); NULL where value is. A scale beyond storage_scale is 22003 unless
    `exact_beyond`: the caller knows each value's digits past storage_scale are zeros (a
    quotient so checked, a sum or min/max of such values), so the value is exact."""
    n = len(value)
    if pa.types.is_null(value.type):
        value = pa.nulls(n, pa.decimal128(38, storage_scale))
    ds = np.broadcast_to(np.asarray(dscale, dtype=np.int64), (n,))
    valid = xa.valid_mask(value)
    live = ds if valid is None else ds[valid]
    if len(live) and live.max() > storage_scale and not exact_beyond:
        raise too_many_digits(int(live.max()), storage_scale)
    scale_arr = xa.from_numpy(ds.astype(np.int8), pa.int8(), valid)
    return pa.StructArray.from_arrays(
        [value, scale_arr], names=[types.NUMERIC_VALUE_FIELD, types.NUMERIC_SCALE_FIELD],
        mask=None if valid is None else pa.array(~valid))


def too_many_digits(scale: int, storage_scale: int) -> errors.QueryError:
    return errors.NumericOutOfRange(
        "value overflows numeric format",
        detail=f"a value with {scale} fractional digits: raympp's unconstrained numerics "
               f"hold at most {storage_scale} here")


def from_decimals(values: list, storage_scale: int) -> pa.Array:
    """Python Decimals (None for NULL) as a dynamic numeric array, each at its own scale."""
    scales = np.array([0 if v is None else scale_of(v) for v in values], dtype=np.int64)
    if len(scales) and scales.max() > storage_scale:
        raise too_many_digits(int(scales.max()), storage_scale)
    return build(pa.array(values, pa.decimal128(38, storage_scale)), scales, storage_scale)


def per_scale_text(arr: pa.Array, fmt) -> pa.Array:
    """Dynamic numerics printed with their own scales (PostgreSQL's numeric_out):
    `fmt(decimals, scale)` prints decimal values at one scale; each distinct scale of the
    batch is one exact rescale (Arrow's decimal cast: the digits dropped are zeros) and one
    fmt call over the whole batch."""
    value, dscale = parts(arr)
    n = len(value)
    out = None
    for d in np.unique(dscale):
        d = int(d)
        rows = pa.array(dscale == d)  # the others may have more digits than d
        own = pc.if_else(rows, value, pa.scalar(None, value.type))
        text = fmt(own.cast(pa.decimal128(38, d)), d)
        out = text if out is None else pc.if_else(rows, text, out)
    return out if out is not None else pa.nulls(n, pa.string())


@numba.njit(cache=True, nogil=True)
def _weight_first_kernel(lo, hi, scale, pow_hi, pow_lo, weight, first):  # pragma: no cover
    """Per row of 128-bit integers (two's complement words) at `scale`: the base-10000
    weight of the value's leading digit and that digit (0, 0 for zero). A magnitude within
    64 bits takes native integer steps; a wider one is held as four 32-bit limbs, so
    dividing it by 10^9 or less never overflows."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for i in range(lo.shape[0]):
        ulo, uhi = np.uint64(lo[i]), np.uint64(hi[i])
        if hi[i] < 0:  # the magnitude
            ulo = ~ulo + np.uint64(1)
            uhi = ~uhi + (np.uint64(1) if ulo == 0 else np.uint64(0))
        digits = 0  # the powers of ten it reaches (10^19 is the last within 64 bits)
        if uhi == 0:
            while digits < 20 and ulo >= pow_lo[digits]:
                digits += 1
        else:
            digits = 20
            while digits < 39 and (uhi > pow_hi[digits] or (
                    uhi == pow_hi[digits] and ulo >= pow_lo[digits])):
                digits += 1
        if digits == 0:
            weight[i], first[i] = 0, 0
            continue
        exponent = digits - 1 - scale
        w = exponent // 4
        shift = digits - (exponent - 4 * w + 1)  # digits below the first base-10000 digit
        widen = 1
        if shift < 0:  # 0.001: its first digit is 0010
            widen = 10 ** (-shift)
            shift = 0
        if uhi == 0:
            top = ulo // pow_lo[shift]
        else:
            l0, l1, l2, l3 = uhi >> s32, uhi & m32, ulo >> s32, ulo & m32
            while shift > 0:
                step = min(shift, 9)
                d = pow_lo[step]
                r = l0 % d
                l0 //= d
                cur = (r << s32) | l1
                l1, r = cur // d, cur % d
                cur = (r << s32) | l2
                l2, r = cur // d, cur % d
                cur = (r << s32) | l3
                l3 = cur // d
                shift -= step
            top = l3
        weight[i] = w
        first[i] = np.int64(top) * widen


def weight_first(lo: np.ndarray, hi: np.ndarray, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of 128-bit integers (lo/hi words) at `scale`, the base-10000 weight and first
    base-10000 digit of the value, as PostgreSQL's NumericVar holds them (0, 0 for zero)."""
    n = len(lo)
    weight, first = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    _weight_first_kernel(np.ascontiguousarray(lo), np.ascontiguousarray(hi), scale, _POW_HI,
                         _POW_LO, weight, first)
    return weight, first


def weight_first_py(values, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """weight_first of Python ints beyond 128 bits (constants, overflowed results)."""
    pairs = [_py_weight_first(int(v), scale) for v in values]
    return (np.array([p[0] for p in pairs], dtype=np.int64),
            np.array([p[1] for p in pairs], dtype=np.int64))


def _py_weight_first(v: int, scale: int) -> tuple[int, int]:
    if v == 0:
        return 0, 0
    digits = len(str(abs(v)))
    w = (digits - 1 - scale) // 4
    shift = digits - (digits - 1 - scale - 4 * w + 1)
    return w, abs(v) // 10**shift if shift >= 0 else abs(v) * 10**(-shift)


def division_scales(w1, f1, w2, f2, ds1, ds2) -> np.ndarray:
    """PostgreSQL's select_div_scale for every row of a / b, from the operands' weights
    and first base-10000 digits (weight_first) and display scales: at least 16
    significant digits, and no fewer than either operand's display scale."""
    qweight = w1 - w2 - (f1 <= f2)
    r = np.maximum(np.maximum(16 - 4 * qweight, ds1), ds2)
    return np.clip(r, 0, 1000)


# --- the internal functions of planner/numeric_aggregates.py -------------------------------
_SIGN = np.uint64(1 << 63)
_KEY = 17  # 16 bytes that order as the value, then its display scale


def _words(value: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) int64 words of a decimal128 array (null slots hold anything)."""
    raw = xa.np_view(value, np.int64)
    return raw[0::2], raw[1::2]


def keyed(arr: pa.Array) -> pa.Array:
    """Bytes per value that compare (bytewise) as the values and end with the display
    scale: min/max of these are the min/max value, recoverable with `unkeyed`."""
    value, dscale = parts(arr)
    lo, hi = _words(value)
    n = len(value)
    raw = np.empty((n, _KEY), dtype=np.uint8)
    pair = np.stack([hi.view(np.uint64) ^ _SIGN, lo.view(np.uint64)], axis=1)
    raw[:, :16] = pair.astype(">u8").view(np.uint8).reshape(n, 16)
    raw[:, 16] = dscale.astype(np.uint8)
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(_KEY), n,
                                                 [None, pa.py_buffer(raw.tobytes())])
    out = fixed.cast(pa.binary())
    if value.null_count:
        out = pc.if_else(value.is_valid(), out, pa.scalar(None, pa.binary()))
    return out


def unkeyed(data: pa.Array, storage_scale: int) -> pa.Array:
    """The unconstrained numerics whose `keyed` bytes these are (NULL stays NULL)."""
    n = len(data)
    filled = data.fill_null(b"\0" * _KEY) if data.null_count else data
    filled = filled.cast(pa.binary(_KEY))
    raw = np.frombuffer(filled.buffers()[1], dtype=np.uint8,
                        count=_KEY * (filled.offset + n))[_KEY * filled.offset:].reshape(n, _KEY)
    pair = np.ascontiguousarray(raw[:, :16]).view(">u8").reshape(n, 2).astype(np.uint64)
    words = np.empty((n, 2), dtype=np.uint64)
    words[:, 0], words[:, 1] = pair[:, 1], pair[:, 0] ^ _SIGN
    valid = xa.valid_mask(data)
    value = xa.from_numpy(words.view(np.int64).reshape(-1), pa.decimal128(38, storage_scale),
                          valid, n)
    return build(value, raw[:, 16].astype(np.int64), storage_scale, exact_beyond=True)


def _value(e, args, n):
    return value_of(xa.as_array(args[0], n))


def _dscale(e, args, n):
    arr = xa.as_array(args[0], n)
    return pc.cast(arr.flatten()[1], pa.int32())


def _with_scale(e, args, n):
    value = xa.as_array(args[0], n)  # a sum: numeric(38, S), decimal128(38, S)
    if value.type != pa.decimal128(38, e.type.scale):
        value = value.cast(pa.decimal128(38, e.type.scale))
    dscale = pc.fill_null(xa.as_array(args[1], n), 0).to_numpy(zero_copy_only=False)
    # a sum of exact values is exact, whatever the largest scale of its rows
    return build(value, dscale.astype(np.int64), e.type.scale, exact_beyond=True)


CALLS = {
    Func.NUMERIC_VALUE: _value,
    Func.NUMERIC_DSCALE: _dscale,
    Func.NUMERIC_WITH_SCALE: _with_scale,
    Func.NUMERIC_KEYED: lambda e, args, n: keyed(xa.as_array(args[0], n)),
    Func.NUMERIC_UNKEYED: lambda e, args, n: unkeyed(xa.as_array(args[0], n), e.type.scale),
}
