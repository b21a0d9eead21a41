"""bytea and uuid values in Python (bytes): their text input and output and the bytea
functions, with PostgreSQL 15's rules and errors.

A bytea value is its bytes, a uuid value its 16 bytes. `parse_bytea` is byteain (hex
format `\\x0a0b`, else the escape format: `\\\\` a backslash, `\\ooo` an octal byte),
`format_bytea` byteaout with bytea_output = hex; `parse_uuid` / `format_uuid` are
uuid_in / uuid_out. `encode` / `decode` are PostgreSQL's encode()/decode() formats hex,
base64 and escape. The constant folder (planner/fold.py) and the batch kernels' per-value
paths (segment/kernels/expr_binary.py) share these, so both fail alike.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re

from planner import errors

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_HEX_SPACE = " \n\t\r"
_UUID_BODY = r"(?:[0-9a-fA-F]{4}-?){7}[0-9a-fA-F]{4}"
UUID_RE = r"^(?:" + _UUID_BODY + r"|\{" + _UUID_BODY + r"\})$"  # RE2-compatible too
_UUID_RE = re.compile(UUID_RE)
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_LOOKUP = {c: i for i, c in enumerate(_B64)}
ENCODINGS = ("hex", "base64", "escape")
DIGESTS = {"md5": hashlib.md5, "sha224": hashlib.sha224, "sha256": hashlib.sha256,
           "sha384": hashlib.sha384, "sha512": hashlib.sha512}


def _bad_bytea() -> errors.QueryError:
    return errors.InvalidTextRepresentation("invalid input syntax for type bytea")


# --- bytea text input and output -------------------------------------------------------
def hex_decode(text: str) -> bytes:
    """PostgreSQL's hex_decode: pairs of hex digits, blanks between pairs skipped."""
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _HEX_SPACE:
            i += 1
            continue
        if c not in _HEX_DIGITS:
            raise errors.InvalidParameterValue(f'invalid hexadecimal digit: "{c}"')
        if i + 1 >= n:
            raise errors.InvalidParameterValue("invalid hexadecimal data: odd number of digits")
        d = text[i + 1]
        if d not in _HEX_DIGITS:
            raise errors.InvalidParameterValue(f'invalid hexadecimal digit: "{d}"')
        out.append(int(c + d, 16))
        i += 2
    return bytes(out)


def escape_decode(text: str) -> bytes:
    """The escape format (byteain without \\x, decode(t, 'escape')): `\\\\` is a
    backslash, `\\ooo` (first digit 0-3) an octal byte, any other backslash 22P02."""
    raw = text.encode()
    if b"\\" not in raw:
        return raw
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        b = raw[i]
        if b != 0x5C:
            out.append(b)
            i += 1
        elif i + 3 < n and 0x30 <= raw[i + 1] <= 0x33 and 0x30 <= raw[i + 2] <= 0x37 \
                and 0x30 <= raw[i + 3] <= 0x37:
            out.append(int(raw[i + 1:i + 4], 8))
            i += 4
        elif i + 1 < n and raw[i + 1] == 0x5C:
            out.append(0x5C)
            i += 2
        else:
            raise _bad_bytea()
    return bytes(out)


def parse_bytea(text: str) -> bytes:
    """byteain: `\\x` then hex digits, else the escape format."""
    if text.startswith("\\x"):
        return hex_decode(text[2:])
    return escape_decode(text)


def format_bytea(v: bytes) -> str:
    """byteaout with bytea_output = hex."""
    return "\\x" + bytes(v).hex()


# --- uuid ------------------------------------------------------------------------------
def parse_uuid(text: str) -> bytes:
    """uuid_in: 32 hex digits, a hyphen allowed after each group of four (not after the
    last), the whole optionally in braces; nothing else, not even blanks."""
    if not _UUID_RE.match(text) or text.endswith("\n"):
        raise errors.InvalidTextRepresentation(f'invalid input syntax for type uuid: "{text}"')
    return bytes.fromhex(text.strip("{}").replace("-", ""))


def format_uuid(v: bytes) -> str:
    """uuid_out: 8-4-4-4-12 lowercase hex digits."""
    h = bytes(v).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# --- encode() / decode() ---------------------------------------------------------------
def encoding_name(name: str) -> str:
    """A format of encode()/decode(), case-insensitive; 22023 for others."""
    key = name.lower()
    if key not in ENCODINGS:
        raise errors.InvalidParameterValue(f'unrecognized encoding: "{name}"')
    return key


def encode(v: bytes, fmt: str) -> str:
    """encode(bytea, fmt): hex (lowercase), base64 (a newline after every 76 characters)
    or escape (NUL and bytes >= 0x80 as \\ooo, a backslash doubled)."""
    fmt = encoding_name(fmt)
    v = bytes(v)
    if fmt == "hex":
        return v.hex()
    if fmt == "base64":
        text = base64.b64encode(v).decode()
        return "\n".join(text[i:i + 76] for i in range(0, len(text), 76))
    out = []
    for b in v:
        if b == 0 or b >= 0x80:
            out.append(f"\\{b:03o}")
        elif b == 0x5C:
            out.append("\\\\")
        else:
            out.append(chr(b))
    return "".join(out)


def decode(text: str, fmt: str) -> bytes:
    """decode(text, fmt), the inverse of encode with PostgreSQL's errors."""
    fmt = encoding_name(fmt)
    if fmt == "hex":
        return hex_decode(text)
    if fmt == "escape":
        return escape_decode(text)
    return _base64_decode(text)


def _base64_decode(text: str) -> bytes:
    """pg_base64_decode, step for step (blanks skipped, '=' only as the third or fourth
    symbol of a group, symbols after the padding still decoded)."""
    out = bytearray()
    buf = pos = end = 0
    for c in text:
        if c in " \t\n\r":
            continue
        if c == "=":
            if not end:
                if pos == 2:
                    end = 1
                elif pos == 3:
                    end = 2
                else:
                    raise errors.InvalidParameterValue(
                        'unexpected "=" while decoding base64 sequence')
            b = 0
        else:
            b = _B64_LOOKUP.get(c, -1)
            if b < 0:
                raise errors.InvalidParameterValue(
                    f'invalid symbol "{c}" found while decoding base64 sequence')
        buf = (buf << 6) + b
        pos += 1
        if pos == 4:
            out.append((buf >> 16) & 255)
            if end == 0 or end > 1:
                out.append((buf >> 8) & 255)
            if end == 0 or end > 2:
                out.append(buf & 255)
            buf = pos = 0
    if pos:
        raise errors.InvalidParameterValue(
            "invalid base64 end sequence",
            hint="Input data is missing padding, is truncated, or is otherwise corrupted.")
    return bytes(out)


# --- other functions -------------------------------------------------------------------
def substring(v: bytes, start: int, count: int | None = None) -> bytes:
    """bytea_substr: 1-based start, bytes before 1 count against `count`; a negative
    count is 22011."""
    if count is None:
        return bytes(v)[max(start, 1) - 1:]
    if count < 0:
        raise errors.QueryError("negative substring length not allowed", "22011")
    end = start + count
    if end <= 1:
        return b""
    return bytes(v)[max(start, 1) - 1:end - 1]


def _byte_index(v: bytes, n: int) -> None:
    if not 0 <= n < len(v):
        raise errors.QueryError(f"index {n} out of valid range, 0..{len(v) - 1}", "2202E")


def get_byte(v: bytes, n: int) -> int:
    """get_byte(bytea, n): the byte at 0-based offset n (2202E out of range)."""
    _byte_index(v, n)
    return v[n]


def set_byte(v: bytes, n: int, b: int) -> bytes:
    """set_byte(bytea, n, b): v with byte n set to b's low 8 bits."""
    _byte_index(v, n)
    return bytes(v[:n]) + bytes([b & 0xFF]) + bytes(v[n + 1:])


@functools.lru_cache(maxsize=256)
def _like_regex(pattern: bytes) -> re.Pattern:
    """A bytea LIKE pattern as a regex over the bytes read as latin-1: % any bytes, _ one
    byte, a backslash takes the next byte literally (22025 when nothing follows)."""
    out, i = [], 0
    while i < len(pattern):
        b = pattern[i]
        if b == 0x5C:
            if i + 1 == len(pattern):
                raise errors.QueryError("LIKE pattern must not end with escape character",
                                        "22025")
            i += 1
            out.append(re.escape(chr(pattern[i])))
        elif b == 0x25:
            out.append(".*")
        elif b == 0x5F:
            out.append(".")
        else:
            out.append(re.escape(chr(b)))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def like(v: bytes, pattern: bytes) -> bool:
    """bytea LIKE pattern (bytealike): matched byte by byte."""
    return _like_regex(bytes(pattern)).fullmatch(bytes(v).decode("latin-1")) is not None


def _bit_index(v: bytes, n: int) -> None:
    if not 0 <= n < len(v) * 8:
        raise errors.QueryError(f"index {n} out of valid range, 0..{len(v) * 8 - 1}", "2202E")


def get_bit(v: bytes, n: int) -> int:
    """get_bit(bytea, n): bit n % 8 (least significant first) of byte n / 8."""
    _bit_index(v, n)
    return (v[n // 8] >> (n % 8)) & 1


def set_bit(v: bytes, n: int, bit: int) -> bytes:
    """set_bit(bytea, n, bit): v with that bit set to `bit` (0 or 1, else 22023)."""
    _bit_index(v, n)
    if bit not in (0, 1):
        raise errors.InvalidParameterValue("new bit must be 0 or 1")
    byte = (v[n // 8] & ~(1 << (n % 8))) | (bit << (n % 8))
    return bytes(v[:n // 8]) + bytes([byte]) + bytes(v[n // 8 + 1:])


def encoding_check(name: str, func: str) -> None:
    """convert_to/convert_from take UTF8 (the database encoding) only: any other known
    encoding name is refused 0A000, an unknown one 22023 as PostgreSQL's."""
    key = name.lower().replace("_", "").replace("-", "")
    if key in ("utf8", "unicode"):
        return
    if key in _KNOWN_ENCODINGS:
        raise errors.FeatureNotSupported(f"{func}() to or from encoding {name}")
    which = "destination" if func == "convert_to" else "source"
    raise errors.InvalidParameterValue(f'invalid {which} encoding name "{name}"')


_KNOWN_ENCODINGS = frozenset((
    "sqlascii", "latin1", "latin2", "latin3", "latin4", "latin5", "latin6", "latin7", "latin8",
    "latin9", "latin10", "win1250", "win1251", "win1252", "win1253", "win1254", "win1255",
    "win1256", "win1257", "win1258", "win866", "win874", "koi8r", "koi8u", "eucjp", "euccn",
    "euckr", "euctw", "eucjis2004", "sjis", "big5", "gbk", "gb18030", "uhc", "johab",
    "mulecinternal", "iso88595", "iso88596", "iso88597", "iso88598", "shiftjis2004",
    "iso88591", "iso88592", "iso88593", "iso88594", "iso88599", "iso885910", "iso885913",
    "iso885914", "iso885915", "iso885916", "alt", "win", "mskanji", "shiftjis", "tcvn",
    "tcvn5712", "vscii", "windows1251", "windows1252", "abc", "koi8"))


def convert_from_utf8(v: bytes) -> str:
    """convert_from(bytea, 'UTF8'): the bytes as text; 22021 when they are no valid UTF-8
    or hold a NUL, with PostgreSQL's message."""
    v = bytes(v)
    try:
        text = v.decode("utf-8")
    except UnicodeDecodeError as u:
        bad = " ".join(f"0x{b:02x}" for b in v[u.start:u.start + _seq_len(v[u.start])])
        raise errors.QueryError(f'invalid byte sequence for encoding "UTF8": {bad}', "22021")
    if "\x00" in text:
        raise errors.QueryError('invalid byte sequence for encoding "UTF8": 0x00', "22021")
    return text


def _seq_len(lead: int) -> int:
    """How many bytes PostgreSQL's report_invalid_encoding shows: the sequence length the
    lead byte announces (1 for a byte that leads none)."""
    if lead & 0xF8 == 0xF0:
        return 4
    if lead & 0xF0 == 0xE0:
        return 3
    if lead & 0xE0 == 0xC0:
        return 2
    return 1
