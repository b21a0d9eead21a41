"""bytea and uuid over batches: text input and output, and the bytea functions.

Both types are Arrow binary (a uuid's 16 bytes). Text output is vectorized in numpy over
the data buffer (every byte through a 256-entry table of hex digit pairs); text input
takes a vectorized path for the forms clients and COPY write (`\\x` hex for bytea, the
canonical 8-4-4-4-12 and its variants for uuid) and otherwise parses once per distinct
value with planner/binary_values.py, which also raises PostgreSQL's error for a bad one.
Digests, encode/decode, position, the trims, LIKE and the byte and bit functions run once
per distinct combination of their arguments; length, ||, substring with constant bounds
and convert_to/convert_from are Arrow kernels.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import binary_values as bv
from planner import errors
from planner.expr import Call, Func
from planner.types import Kind, SqlType
from segment.kernels import expr_arrays as xa

_HEX_PAIRS = np.frombuffer(b"".join(f"{i:02x}".encode() for i in range(256)),
                           np.uint8).reshape(256, 2)
_NIBBLE = np.full(256, 255, np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _NIBBLE[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _NIBBLE[_c] = 10 + _i
_MAX_LEN = 2**31 - 1  # no value in a batch is longer (int32 offsets)
# uuid text positions of the 32 hex digits within its 36 characters
_UUID_DIGITS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])


def _buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64 rebased to 0, data bytes) of a binary or string array."""
    if pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type):
        off_t = np.int64
    else:
        off_t = np.int32
    offsets = np.frombuffer(arr.buffers()[1], off_t)[arr.offset:arr.offset + len(arr) + 1]
    offsets = offsets.astype(np.int64)
    data = arr.buffers()[2]
    raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return offsets - offsets[0], raw[offsets[0]:offsets[-1]]


def _rows(offsets: np.ndarray) -> np.ndarray:
    """The row of every data byte."""
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def hex_digits(arr: pa.Array, prefix: bytes = b"") -> pa.Array:
    """Each value as `prefix` + its bytes in lowercase hex (byteaout, encode(x, 'hex'))."""
    offsets, data = _buffers(arr)
    n, k = len(arr), len(prefix)
    out_off = offsets * 2 + np.arange(n + 1) * k
    out = np.empty(int(out_off[-1]), np.uint8)
    for j, c in enumerate(prefix):
        out[out_off[:-1] + j] = c
    pos = 2 * np.arange(len(data)) + _rows(offsets) * k + k
    pairs = _HEX_PAIRS[data]
    out[pos], out[pos + 1] = pairs[:, 0], pairs[:, 1]
    return pa.Array.from_buffers(pa.string(), n, [xa.validity_buffer(arr),
                                                  pa.py_buffer(out_off.astype(np.int32)),
                                                  pa.py_buffer(out)], null_count=arr.null_count)


def uuid_text(arr: pa.Array) -> pa.Array:
    """uuid_out of every value: 8-4-4-4-12 lowercase hex digits."""
    n = len(arr)
    offsets, data = _buffers(arr)
    raw = np.zeros((n, 16), np.uint8)
    full = np.diff(offsets) == 16  # NULL slots may be empty
    raw[full] = data[offsets[:-1][full, None] + np.arange(16)]
    out = np.full((n, 36), ord("-"), np.uint8)
    out[:, _UUID_DIGITS] = _HEX_PAIRS[raw].reshape(n, 32)
    return pa.Array.from_buffers(pa.string(), n, [
        xa.validity_buffer(arr), pa.py_buffer(np.arange(n + 1, dtype=np.int32) * 36),
        pa.py_buffer(out.tobytes())], null_count=arr.null_count)


def to_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """The text form of bytea (hex output) or uuid values."""
    return uuid_text(arr) if t.kind is Kind.UUID else hex_digits(arr, b"\\x")


# --- text input ------------------------------------------------------------------------
def _unhex(digits: pa.Array) -> pa.Array | None:
    """Strings of an even number of hex digits as their bytes (None if any is not)."""
    offsets, data = _buffers(digits)
    nib = _NIBBLE[data]
    if (nib == 255).any() or (np.diff(offsets) % 2).any():
        return None
    out = (nib[0::2] << 4) | nib[1::2]
    return pa.Array.from_buffers(pa.binary(), len(digits), [
        xa.validity_buffer(digits), pa.py_buffer((offsets // 2).astype(np.int32)),
        pa.py_buffer(out.astype(np.uint8))], null_count=digits.null_count)


def from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """Text as bytea or uuid (byteain / uuid_in), with the first bad value's error."""
    if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
    if t.kind is Kind.UUID:
        ok = pc.match_substring_regex(arr, bv.UUID_RE)
        if pc.all(ok).as_py() in (True, None):
            out = _unhex(pc.replace_substring_regex(arr, "[-{}]", ""))
            if out is not None:
                return out
        return xa.per_distinct(bv.parse_uuid, [arr], len(arr), pa.binary())
    if pc.all(pc.starts_with(arr, "\\x")).as_py() in (True, None):
        out = _unhex(pc.utf8_slice_codeunits(arr, 2))
        if out is not None:
            return out
    return xa.per_distinct(bv.parse_bytea, [arr], len(arr), pa.binary())


# --- per distinct value ----------------------------------------------------------------
# --- functions -------------------------------------------------------------------------
def _digest(e: Call, args: list, n: int) -> xa.Datum:
    """md5(bytea) as hex text; sha224 .. sha512(bytea) as bytea."""
    h = bv.DIGESTS[e.func.value.removeprefix("?bytea_")]
    if e.func is Func.BYTEA_MD5:
        return xa.per_distinct(lambda v: h(v).hexdigest(), [args[0]], len(args[0]), pa.string())
    return xa.per_distinct(lambda v: h(v).digest(), [args[0]], len(args[0]), pa.binary())


def _length(e: Call, args: list, n: int) -> xa.Datum:
    return pc.cast(pc.binary_length(args[0]), pa.int32())


def _concat(e: Call, args: list, n: int) -> xa.Datum:
    return pc.binary_join_element_wise(*args, pa.scalar(b"", pa.binary()))


def _substring(e: Call, args: list, n: int) -> xa.Datum:
    """substring(bytea from s [for k]): Arrow's slice for constant bounds."""
    x, bounds = args[0], args[1:]
    if all(isinstance(b, pa.Scalar) for b in bounds):
        if not all(b.is_valid for b in bounds):
            return pa.nulls(n, pa.binary())  # x is an array when the bounds are constant
        start = bounds[0].as_py()
        begin = min(max(start, 1) - 1, _MAX_LEN)
        if len(bounds) == 1:  # an explicit stop: Arrow's open-ended slice fails on ''
            return pc.binary_slice(x, begin, _MAX_LEN)
        count = bounds[1].as_py()
        if count < 0 and x.null_count < len(x):  # strict: a NULL value never raises
            raise errors.QueryError("negative substring length not allowed", "22011")
        return pc.binary_slice(x, begin, min(max(start + count - 1, begin), _MAX_LEN))
    return xa.per_distinct(bv.substring, args, n, pa.binary())


def _encode(e: Call, args: list, n: int) -> xa.Datum:
    x, fmt = args
    if isinstance(x, pa.Array) and isinstance(fmt, pa.Scalar) and fmt.is_valid \
            and fmt.as_py().lower() == "hex":
        return hex_digits(x, b"")
    return xa.per_distinct(bv.encode, args, n, pa.string())


def _decode(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(bv.decode, args, n, pa.binary())


def _get_byte(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(bv.get_byte, args, n, pa.int32())


def _set_byte(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(bv.set_byte, args, n, pa.binary())


def _position(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(lambda v, sub: v.find(sub) + 1, args, n, pa.int32())


_TRIMS = {Func.BYTEA_TRIM: bytes.strip, Func.BYTEA_LTRIM: bytes.lstrip,
          Func.BYTEA_RTRIM: bytes.rstrip}


def _trim(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(_TRIMS[e.func], args, n, pa.binary())


def _like(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(bv.like, args, n, pa.bool_())


def _get_bit(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(bv.get_bit, args, n, pa.int32())


def _set_bit(e: Call, args: list, n: int) -> xa.Datum:
    return xa.per_distinct(bv.set_bit, args, n, pa.binary())


def _convert_to(e: Call, args: list, n: int) -> xa.Datum:
    """convert_to(text, 'UTF8'): the text's bytes (the database encoding is UTF8)."""
    return args[0].cast(pa.binary())


def _convert_from(e: Call, args: list, n: int) -> xa.Datum:
    """convert_from(bytea, 'UTF8'): the bytes as text once they are valid UTF-8 without
    NUL (22021 for the first value that is not)."""
    x = args[0]  # an array: the encoding is a constant, so x is not (segment/expr.py)
    nul = pc.any(pc.match_substring(x.cast(pa.binary()), "\x00")).as_py()
    if not nul:
        try:
            return x.cast(pa.string())
        except pa.ArrowInvalid:
            pass  # not valid UTF-8: the check below raises for the first bad value
    for v in pc.unique(x).to_pylist():  # raises for the first bad value
        if v is not None:
            bv.convert_from_utf8(v)
    raise errors.InternalError("convert_from: Arrow rejected valid UTF-8")


def gen_random_uuid(n: int) -> pa.Array:
    """gen_random_uuid(): n version 4 uuids from the OS's strong random source (as
    PostgreSQL's pg_strong_random), a new one for every row."""
    raw = np.frombuffer(bytearray(os.urandom(16 * n)), np.uint8).reshape(n, 16)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    return pa.Array.from_buffers(pa.binary(), n, [
        None, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * 16), pa.py_buffer(raw.tobytes())])


CALLS = {
    **{f: _digest for f in (Func.BYTEA_MD5, Func.SHA224, Func.SHA256, Func.SHA384,
                            Func.SHA512)},
    Func.BYTEA_LENGTH: _length, Func.BYTEA_CONCAT: _concat,
    Func.BYTEA_SUBSTRING: _substring, Func.BYTEA_POSITION: _position,
    **{f: _trim for f in _TRIMS},
    Func.BYTEA_LIKE: _like, Func.ENCODE: _encode, Func.DECODE: _decode,
    Func.GET_BYTE: _get_byte, Func.SET_BYTE: _set_byte, Func.GET_BIT: _get_bit,
    Func.SET_BIT: _set_bit, Func.CONVERT_TO: _convert_to, Func.CONVERT_FROM: _convert_from,
}
