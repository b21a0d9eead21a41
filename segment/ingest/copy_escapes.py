"""TEXT-format backslash escapes of COPY FROM: kept intact through the CSV split, then undone.

pyarrow splits a block on the delimiter and newlines, so an escaped delimiter, newline,
carriage return or backslash is first replaced by a NUL-led placeholder (`protect`); after
the split `unescape` turns the placeholders and the escapes (\\n, \\t, octal, hex ...) back
into characters, column by column with Arrow string kernels. `is_escaped` tells whether a
byte follows an odd run of backslashes.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors

# Placeholders for escapes that must survive the split. NUL cannot occur in COPY text
# (PostgreSQL rejects it), so a NUL-led pair is unambiguous.
_BACKSLASH, _DELIM, _NEWLINE, _RETURN = "\x00\x01", "\x00\x02", "\x00\x03", "\x00\x04"
_LETTERS = (("b", "\b"), ("f", "\f"), ("n", "\n"), ("r", "\r"), ("t", "\t"), ("v", "\v"))


def protect(block: bytes, delim: bytes) -> bytes:
    """block with its escaped backslashes, delimiters, newlines and carriage returns
    replaced by placeholders that survive the split."""
    return (block.replace(b"\\\\", _BACKSLASH.encode())
            .replace(b"\\" + delim, _DELIM.encode())
            .replace(b"\\\n", _NEWLINE.encode()).replace(b"\\\r", _RETURN.encode()))


def is_escaped(buf: bytes, start: int, nl: int) -> bool:
    """Whether the newline at nl follows an odd run of backslashes (TEXT: it is data)."""
    k = nl
    while k > start and buf[k - 1] == 0x5C:
        k -= 1
    return (nl - k) % 2 == 1


def unescape(arr: pa.Array, delim: str) -> pa.Array:
    """Undo TEXT-format backslash escapes in one string column of a protected block."""
    if not pc.any(pc.match_substring(arr, "\\")).as_py() and \
            not pc.any(pc.match_substring(arr, "\x00")).as_py():
        return arr
    for letter, char in _LETTERS:
        arr = pc.replace_substring(arr, "\\" + letter, char)
    numeric = pc.match_substring_regex(arr, r"\\([0-7]|x[0-9a-fA-F])")
    if pc.any(numeric).as_py():  # octal and hex escapes name bytes: rare, done per value
        rows = np.flatnonzero(numeric.fill_null(False).to_numpy(zero_copy_only=False))
        fixed = []
        for row, v in zip(rows, arr.take(pa.array(rows, pa.int64())).to_pylist()):
            try:
                fixed.append(_byte_escapes(v))
            except errors.QueryError as e:
                e.row = int(row)
                raise
        arr = pc.replace_with_mask(arr, numeric.fill_null(False), pa.array(fixed, pa.string()))
    arr = pc.replace_substring_regex(arr, r"(?s)\\(.)", r"\1")
    for placeholder, char in ((_DELIM, delim), (_NEWLINE, "\n"), (_RETURN, "\r"),
                              (_BACKSLASH, "\\")):
        arr = pc.replace_substring(arr, placeholder, char)
    return arr


def _byte_escapes(value: str) -> str:
    """Octal (\\ooo) and hex (\\xhh) escapes name bytes; the result must be UTF-8."""
    def byte(m: re.Match) -> bytes:
        g = m.group(1)
        v = int(g[1:], 16) if g[:1] == b"x" else int(g, 8) & 0xFF
        if v == 0:
            raise errors.QueryError('invalid byte sequence for encoding "UTF8": 0x00', "22021")
        return bytes([v])
    raw = re.sub(rb"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2})", byte, value.encode())
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as u:
        bad = " ".join(f"0x{b:02x}" for b in u.object[u.start:u.end])
        raise errors.QueryError(f'invalid byte sequence for encoding "UTF8": {bad}',
                                "22021") from None
