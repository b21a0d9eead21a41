"""String functions and LIKE over batches, with PostgreSQL's semantics.

Positions and lengths count characters, not bytes (1-based as SQL). Constant patterns go
straight to pyarrow's UTF-8 kernels; a pattern that varies by row is applied once per
distinct value (`per_pattern`), and substring/left/right with per-row bounds use a numba
kernel over the UTF-8 bytes. regexp_replace translates PostgreSQL's replacement syntax
(\\1, \\&) to RE2's and treats newlines as ordinary characters, as PostgreSQL's regexes do.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, values
from planner.expr import Call, Func
from planner.types import Kind
from segment.kernels import expr_arrays as xa


def per_pattern(fn, s: xa.Datum, patterns: list, n: int, out_type: pa.DataType) -> xa.Datum:
    """fn(strings, *pattern_scalars) applied per distinct combination of the pattern
    arguments; rows with a NULL pattern give NULL (the functions are strict)."""
    if all(isinstance(p, pa.Scalar) for p in patterns):
        if not all(p.is_valid for p in patterns):
            return pa.nulls(n, out_type) if isinstance(s, pa.Array) else pa.scalar(None, out_type)
        return fn(s, *patterns)
    s = xa.as_array(s, n)
    codes = np.zeros(n, dtype=np.int64)
    arrays = [xa.as_array(p, n) for p in patterns]
    for a in arrays:
        enc = pc.dictionary_encode(a)
        idx = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        codes = codes * (len(enc.dictionary) + 1) + (idx + 1)
    _, inverse = np.unique(codes, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(inverse))[:-1])
    parts = []
    for rows in groups:
        take = pa.array(rows)
        scalars = [a[int(rows[0])] for a in arrays]
        sub = s.take(take)
        parts.append(fn(sub, *scalars) if all(p.is_valid for p in scalars)
                     else pa.nulls(len(rows), out_type))
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.arange(n, dtype=np.int64)
    parts = [xa.as_array(p, len(g)).cast(out_type) for p, g in zip(parts, groups)]
    return pa.concat_arrays(parts).take(pa.array(inv))


# --- character slicing ---------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _slice_chars(offsets, data, begin, end, valid):  # pragma: no cover - compiled
    """Bytes of characters [begin, end) of each string (end < 0: to the end)."""
    n = offsets.shape[0] - 1
    starts = np.empty(n, np.int64)
    stops = np.empty(n, np.int64)
    out_off = np.zeros(n + 1, np.int32)
    total = 0
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        b, e = begin[i], end[i]
        bs, be = -1, hi
        if valid[i]:
            pos, ch = lo, 0
            while pos < hi:
                if ch == b and bs < 0:
                    bs = pos
                if e >= 0 and ch >= e:
                    be = pos
                    break
                pos += 1
                while pos < hi and (data[pos] & 0xC0) == 0x80:
                    pos += 1
                ch += 1
        if bs < 0:
            bs = hi
        if be < bs:
            be = bs
        starts[i], stops[i] = bs, be
        total += be - bs
        out_off[i + 1] = total
    out = np.empty(total, np.uint8)
    for i in range(n):
        out[out_off[i]:out_off[i + 1]] = data[starts[i]:stops[i]]
    return out_off, out


@numba.njit(cache=True, nogil=True)
def _char_positions(offsets, data, byte_pos):  # pragma: no cover - compiled
    """Character index of a byte position in each string (-1 stays -1)."""
    out = np.empty(byte_pos.shape[0], np.int32)
    for i in range(byte_pos.shape[0]):
        if byte_pos[i] < 0:
            out[i] = -1
            continue
        count = 0
        for j in range(offsets[i], offsets[i] + byte_pos[i]):
            if (data[j] & 0xC0) != 0x80:
                count += 1
        out[i] = count
    return out


def _string_buffers(s: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.frombuffer(s.buffers()[1], np.int32, count=s.offset + len(s) + 1)[s.offset:]
    data = s.buffers()[2]
    return offsets, (np.frombuffer(data, np.uint8) if data is not None and data.size
                     else np.zeros(1, np.uint8))


def slice_chars(s: pa.Array, begin: np.ndarray, end: np.ndarray) -> pa.Array:
    """Characters [begin, end) of every string (0-based, end < 0 means to the end)."""
    offsets, data = _string_buffers(s)
    valid = xa.valid_mask(s)
    out_off, out = _slice_chars(offsets, data, begin.astype(np.int64), end.astype(np.int64),
                                np.ones(len(s), bool) if valid is None else valid)
    return pa.Array.from_buffers(pa.string(), len(s), [xa.validity_buffer(s), pa.py_buffer(out_off),
                                                       pa.py_buffer(out)], null_count=s.null_count)


def _ints(d: xa.Datum, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    arr = xa.as_array(d, n)
    return pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(np.int64), xa.valid_mask(arr)


def _nulls_where(arr: pa.Array, *masks) -> pa.Array:
    mask = xa.and_masks(*masks)
    return arr if mask is None else pc.if_else(pa.array(mask), arr, pa.scalar(None, arr.type))


def substring(e: Call, args: list, n: int) -> xa.Datum:
    s, start = args[0], args[1]
    count = args[2] if len(args) > 2 else None
    if isinstance(start, pa.Scalar) and (count is None or isinstance(count, pa.Scalar)):
        if not start.is_valid or (count is not None and not count.is_valid):
            return pa.nulls(n, pa.string())
        st = start.as_py()
        c = None if count is None else count.as_py()
        if c is not None and c < 0:
            raise errors.QueryError("negative substring length not allowed", "22011")
        begin = max(st - 1, 0)
        if c is None:
            return pc.utf8_slice_codeunits(s, begin)
        return pc.utf8_slice_codeunits(s, begin, max(begin, st - 1 + c))
    s = xa.as_array(s, n)
    st, vst = _ints(start, n)
    if count is None:
        end, vc = np.full(n, -1, np.int64), None
    else:
        c, vc = _ints(count, n)
        live = c if vc is None else c[vc]
        if (live < 0).any():
            raise errors.QueryError("negative substring length not allowed", "22011")
        end = np.maximum(st - 1 + c, 0)
    return _nulls_where(slice_chars(s, np.maximum(st - 1, 0), end), vst, vc)


def left_right(e: Call, args: list, n: int) -> xa.Datum:
    """left(s, k) / right(s, k); a negative k drops |k| characters from the other end."""
    s, k = args
    left = e.func is Func.LEFT
    if isinstance(k, pa.Scalar):
        if not k.is_valid:
            return pa.nulls(n, pa.string())
        k = k.as_py()
        if left:
            return pc.utf8_slice_codeunits(s, 0, k)
        if k == 0:
            return pc.utf8_slice_codeunits(s, 0, 0)
        return pc.utf8_slice_codeunits(s, -k if k > 0 else -k)
    s = xa.as_array(s, n)
    k, vk = _ints(k, n)
    length = pc.fill_null(pc.utf8_length(s), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    if left:
        begin, end = np.zeros(n, np.int64), np.where(k >= 0, k, np.maximum(length + k, 0))
    else:
        begin, end = np.where(k >= 0, np.maximum(length - k, 0), np.minimum(-k, length)), length
    return _nulls_where(slice_chars(s, begin, end), vk)


def strpos(e: Call, args: list, n: int) -> xa.Datum:
    def one(s, sub):
        byte_pos = pc.find_substring(s, sub.as_py())
        if not pc.all(pc.string_is_ascii(s)).as_py() and len(s):
            offsets, data = _string_buffers(s)
            pos = _char_positions(offsets, data, pc.fill_null(byte_pos, -1).to_numpy(
                zero_copy_only=False).astype(np.int64))
            byte_pos = xa.from_numpy(pos, pa.int32(), xa.valid_mask(s))
        return pc.cast(pc.add(byte_pos, 1), pa.int32())
    return per_pattern(one, xa.as_array(args[0], n), args[1:], n, pa.int32())


def _pg_replacement(r: str) -> str:
    """PostgreSQL regexp_replace replacement text -> RE2 rewrite string: \\1..\\9 and \\&
    refer to groups, \\\\ is a backslash, any other backslash is literal."""
    out, i = [], 0
    while i < len(r):
        c, nxt = r[i], r[i + 1:i + 2]
        if c != "\\":
            out.append(c)
            i += 1
        elif nxt and nxt in "123456789":
            out.append("\\" + nxt)
            i += 2
        elif nxt in ("&", "\\") and nxt:
            out.append("\\0" if nxt == "&" else "\\\\")
            i += 2
        else:
            out.append("\\\\")
            i += 1
    return "".join(out)


def regexp_replace(e: Call, args: list, n: int) -> xa.Datum:
    def one(s, pattern, replacement, flags=None):
        flags = flags.as_py() if flags is not None else ""
        bad = set(flags) - set("gicn")
        if bad:
            raise errors.InvalidParameterValue(
                f'invalid regular expression option: "{sorted(bad)[0]}"')
        case = ""
        for f in flags:
            case = {"i": "i", "c": ""}.get(f, case)
        prefix = f"(?{case}{'m' if 'n' in flags else 's'})"
        try:
            return pc.replace_substring_regex(s, prefix + pattern.as_py(),
                                              _pg_replacement(replacement.as_py()),
                                              max_replacements=None if "g" in flags else 1)
        except pa.ArrowInvalid as exc:
            raise errors.QueryError(f"invalid regular expression: {exc}", "2201B")
    return per_pattern(one, xa.as_array(args[0], n), args[1:], n, pa.string())


def replace(e: Call, args: list, n: int) -> xa.Datum:
    def one(s, old, new):
        if old.as_py() == "":
            return s
        return pc.replace_substring(s, old.as_py(), new.as_py())
    return per_pattern(one, xa.as_array(args[0], n), args[1:], n, pa.string())


_TRIMS = {Func.TRIM: pc.utf8_trim, Func.LTRIM: pc.utf8_ltrim, Func.RTRIM: pc.utf8_rtrim}


def trim(e: Call, args: list, n: int) -> xa.Datum:
    """btrim / ltrim / rtrim: spaces by default (not other whitespace, as PostgreSQL)."""
    kernel = _TRIMS[e.func]
    chars = args[1:] or [pa.scalar(" ")]
    return per_pattern(lambda s, c: kernel(s, characters=c.as_py()), xa.as_array(args[0], n),
                       chars, n, pa.string())


def starts_with(e: Call, args: list, n: int) -> xa.Datum:
    return per_pattern(lambda s, p: pc.starts_with(s, pattern=p.as_py()),
                       xa.as_array(args[0], n), args[1:], n, pa.bool_())


def concat(e: Call, args: list, n: int) -> xa.Datum:
    """`||` (NULL if any side is NULL) and concat() (NULLs are skipped)."""
    if e.func is Func.CONCAT:
        return pc.binary_join_element_wise(*args, "")
    return pc.binary_join_element_wise(*args, "", null_handling="replace", null_replacement="")


def simple(e: Call, args: list, n: int) -> xa.Datum:
    if e.func is Func.UPPER:
        return upper(args[0])
    return {Func.LOWER: pc.utf8_lower, Func.LENGTH: pc.utf8_length,
            Func.OCTET_LENGTH: pc.binary_length}[e.func](args[0])


def upper(s: xa.Datum) -> xa.Datum:
    """utf8_upper, except that ß stays ß as in PostgreSQL (the C library's towupper has no
    single-letter upper case for it; utf8proc maps it to ẞ): values holding ß are split
    at it, the pieces upper-cased and joined again."""
    if isinstance(s, pa.Scalar):
        return upper(pa.array([s.as_py()], pa.string()))[0]
    if isinstance(s, pa.ChunkedArray):
        s = s.combine_chunks()
    out = pc.utf8_upper(s)
    has = pc.fill_null(pc.match_substring(s, "ß"), False)
    if not pc.any(has).as_py():
        return out
    pieces = pc.split_pattern(pc.filter(s, has), "ß")
    upper_pieces = pa.ListArray.from_arrays(pieces.offsets, pc.utf8_upper(pieces.flatten()))
    return pc.replace_with_mask(out, has, pc.binary_join(upper_pieces, "ß"))


def fit_string(e: Call, args: list, n: int) -> xa.Datum:
    """Text stored into varchar(n)/char(n): 22001 'value too long for type ...' when a
    value has more characters, unless they are spaces (then it is truncated)."""
    s, t = args[0], e.type
    over = pc.greater(pc.utf8_length(s), t.length)
    if pc.any(over).as_py():
        excess = pc.utf8_slice_codeunits(pc.filter(s, over), t.length)
        if not pc.all(pc.match_substring_regex(excess, "^ *$")).as_py():
            raise errors.QueryError(f"value too long for type {t}", "22001")
        s = pc.utf8_slice_codeunits(s, 0, t.length)
    return pc.utf8_rtrim(s, characters=" ") if t.kind is Kind.CHAR else s


def like(arg: xa.Datum, pattern: xa.Datum, case_insensitive: bool, n: int) -> xa.Datum:
    """arg LIKE pattern: % and _ wildcards, backslash escapes, whole-string match."""
    def one(s, p):
        values.check_like_pattern(p.as_py())
        return pc.match_like(s, p.as_py(), ignore_case=case_insensitive)
    return per_pattern(one, arg, [pattern], n, pa.bool_())
