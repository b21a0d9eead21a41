"""PostgreSQL frontend/backend protocol 3.0: message dataclasses and their exact bytes.

Pure and synchronous; nothing here touches a socket. Frontend messages (what clients send)
are decoded by `decode_startup` (the length-prefixed packets before authentication) and
`decode_frontend` (typed messages); they also `encode()`, so tests can play the client.
Backend messages (what the server sends) are dataclasses with `encode()`. DataRows in bulk
are framed by values.encode_data_rows, not here: per-message objects are too slow for rows.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from planner import errors

PROTOCOL_3_0 = 3 << 16            # 196608: major 3, minor 0
SSL_REQUEST_CODE = 80877103       # (1234 << 16) | 5679
GSSENC_REQUEST_CODE = 80877104    # (1234 << 16) | 5680
CANCEL_REQUEST_CODE = 80877102    # (1234 << 16) | 5678
MAX_STARTUP_LENGTH = 10_000       # PostgreSQL's MAX_STARTUP_PACKET_LENGTH
MAX_MESSAGE_LENGTH = 1 << 30      # PostgreSQL's PQ_LARGE_MESSAGE_LIMIT
NULL_LENGTH = -1                  # a NULL parameter or column value
TEXT, BINARY = 0, 1               # format codes


class Frontend:
    """Type bytes of messages a client sends."""

    QUERY = b"Q"
    PARSE = b"P"
    BIND = b"B"
    DESCRIBE = b"D"
    EXECUTE = b"E"
    SYNC = b"S"
    FLUSH = b"H"
    CLOSE = b"C"
    TERMINATE = b"X"
    COPY_DATA = b"d"
    COPY_DONE = b"c"
    COPY_FAIL = b"f"
    PASSWORD = b"p"  # also SASLInitialResponse and SASLResponse: meaning depends on state


class Backend:
    """Type bytes of messages the server sends."""

    AUTHENTICATION = b"R"
    PARAMETER_STATUS = b"S"
    BACKEND_KEY_DATA = b"K"
    READY_FOR_QUERY = b"Z"
    ROW_DESCRIPTION = b"T"
    DATA_ROW = b"D"
    COMMAND_COMPLETE = b"C"
    EMPTY_QUERY_RESPONSE = b"I"
    ERROR_RESPONSE = b"E"
    NOTICE_RESPONSE = b"N"
    PARSE_COMPLETE = b"1"
    BIND_COMPLETE = b"2"
    CLOSE_COMPLETE = b"3"
    NO_DATA = b"n"
    PARAMETER_DESCRIPTION = b"t"
    PORTAL_SUSPENDED = b"s"
    COPY_IN_RESPONSE = b"G"
    COPY_OUT_RESPONSE = b"H"
    COPY_DATA = b"d"
    COPY_DONE = b"c"
    NEGOTIATE_PROTOCOL_VERSION = b"v"
    NOTIFICATION_RESPONSE = b"A"


class Auth:
    """Codes of the Authentication message."""

    OK = 0
    SASL = 10
    SASL_CONTINUE = 11
    SASL_FINAL = 12


DESCRIBE_STATEMENT, DESCRIBE_PORTAL = b"S", b"P"  # also the kinds of Close


class FramingError(errors.ProtocolViolation):
    """The byte stream cannot be split into messages any more: the connection must end."""


def frame(type_byte: bytes, body: bytes = b"") -> bytes:
    """A typed message: type byte, Int32 length counting itself, body."""
    return type_byte + struct.pack("!i", len(body) + 4) + body


def cstring(s: str) -> bytes:
    return s.encode() + b"\0"


class _Reader:
    """Reads fields off a message body; truncation is a 08P01 like PostgreSQL's pq_getmsg*."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise errors.ProtocolViolation("insufficient data left in message")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return struct.unpack("!h", self.take(2))[0]

    def int32(self) -> int:
        return struct.unpack("!i", self.take(4))[0]

    def uint32(self) -> int:
        return struct.unpack("!I", self.take(4))[0]

    def cstring(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise errors.ProtocolViolation("invalid string in message")
        raw = self.data[self.pos:end]
        self.pos = end + 1
        try:
            return raw.decode()
        except UnicodeDecodeError:
            raise errors.QueryError('invalid byte sequence for encoding "UTF8"', "22021") from None

    def rest(self) -> bytes:
        return self.take(len(self.data) - self.pos)

    def end(self) -> None:
        if self.pos != len(self.data):
            raise errors.ProtocolViolation("invalid message format")


# --- frontend: startup packets (no type byte) ------------------------------------------------

@dataclass(frozen=True)
class StartupMessage:
    params: dict[str, str]
    version: int = PROTOCOL_3_0

    def encode(self) -> bytes:
        pairs = b"".join(cstring(k) + cstring(v) for k, v in self.params.items())
        body = struct.pack("!i", self.version) + pairs + b"\0"
        return struct.pack("!i", len(body) + 4) + body


@dataclass(frozen=True)
class SSLRequest:
    def encode(self) -> bytes:
        return struct.pack("!ii", 8, SSL_REQUEST_CODE)


@dataclass(frozen=True)
class GSSENCRequest:
    def encode(self) -> bytes:
        return struct.pack("!ii", 8, GSSENC_REQUEST_CODE)


@dataclass(frozen=True)
class CancelRequest:
    pid: int
    secret: int

    def encode(self) -> bytes:
        return struct.pack("!iiii", 16, CANCEL_REQUEST_CODE, self.pid, self.secret)


def decode_startup(payload: bytes):
    """A startup-phase packet from its payload (the bytes after the Int32 length)."""
    r = _Reader(payload)
    code = r.int32()
    if code == SSL_REQUEST_CODE:
        return SSLRequest()
    if code == GSSENC_REQUEST_CODE:
        return GSSENCRequest()
    if code == CANCEL_REQUEST_CODE:
        return CancelRequest(r.int32(), r.int32())
    params = {}
    while True:
        name = r.cstring()
        if not name:
            break
        params[name] = r.cstring()
    return StartupMessage(params, code)


# --- frontend: typed messages ---------------------------------------------------------------

@dataclass(frozen=True)
class Query:
    sql: str

    def encode(self) -> bytes:
        return frame(Frontend.QUERY, cstring(self.sql))


@dataclass(frozen=True)
class Parse:
    name: str
    sql: str
    param_oids: tuple[int, ...] = ()

    def encode(self) -> bytes:
        oids = struct.pack(f"!h{len(self.param_oids)}I", len(self.param_oids), *self.param_oids)
        return frame(Frontend.PARSE, cstring(self.name) + cstring(self.sql) + oids)


@dataclass(frozen=True)
class Bind:
    portal: str
    statement: str
    param_formats: tuple[int, ...] = ()
    params: tuple[bytes | None, ...] = ()
    result_formats: tuple[int, ...] = ()

    def encode(self) -> bytes:
        out = [cstring(self.portal), cstring(self.statement),
               struct.pack(f"!h{len(self.param_formats)}h", len(self.param_formats),
                           *self.param_formats),
               struct.pack("!h", len(self.params))]
        for value in self.params:
            out.append(struct.pack("!i", NULL_LENGTH) if value is None
                       else struct.pack("!i", len(value)) + value)
        out.append(struct.pack(f"!h{len(self.result_formats)}h", len(self.result_formats),
                               *self.result_formats))
        return frame(Frontend.BIND, b"".join(out))


@dataclass(frozen=True)
class Describe:
    kind: bytes  # DESCRIBE_STATEMENT or DESCRIBE_PORTAL
    name: str

    def encode(self) -> bytes:
        return frame(Frontend.DESCRIBE, self.kind + cstring(self.name))


@dataclass(frozen=True)
class Execute:
    portal: str
    max_rows: int = 0  # 0: no limit

    def encode(self) -> bytes:
        return frame(Frontend.EXECUTE, cstring(self.portal) + struct.pack("!i", self.max_rows))


@dataclass(frozen=True)
class Close:
    kind: bytes  # DESCRIBE_STATEMENT or DESCRIBE_PORTAL
    name: str

    def encode(self) -> bytes:
        return frame(Frontend.CLOSE, self.kind + cstring(self.name))


@dataclass(frozen=True)
class Sync:
    def encode(self) -> bytes:
        return frame(Frontend.SYNC)


@dataclass(frozen=True)
class Flush:
    def encode(self) -> bytes:
        return frame(Frontend.FLUSH)


@dataclass(frozen=True)
class Terminate:
    def encode(self) -> bytes:
        return frame(Frontend.TERMINATE)


@dataclass(frozen=True)
class CopyData:
    """Both directions: a chunk of COPY data."""

    data: bytes

    def encode(self) -> bytes:
        return frame(Backend.COPY_DATA, self.data)


@dataclass(frozen=True)
class CopyDone:
    """Both directions: end of COPY data."""

    def encode(self) -> bytes:
        return frame(Backend.COPY_DONE)


@dataclass(frozen=True)
class CopyFail:
    message: str

    def encode(self) -> bytes:
        return frame(Frontend.COPY_FAIL, cstring(self.message))


@dataclass(frozen=True)
class PasswordMessage:
    """A 'p' message. Its body is read as SASLInitialResponse or SASLResponse by the
    authentication step that expects one (the protocol does not say which it is)."""

    data: bytes

    def encode(self) -> bytes:
        return frame(Frontend.PASSWORD, self.data)


@dataclass(frozen=True)
class SASLInitialResponse:
    mechanism: str
    data: bytes | None

    @classmethod
    def decode(cls, body: bytes) -> "SASLInitialResponse":
        r = _Reader(body)
        mechanism, length = r.cstring(), r.int32()
        data = None if length == NULL_LENGTH else r.take(length)
        r.end()
        return cls(mechanism, data)

    def encode(self) -> bytes:
        tail = (struct.pack("!i", NULL_LENGTH) if self.data is None
                else struct.pack("!i", len(self.data)) + self.data)
        return frame(Frontend.PASSWORD, cstring(self.mechanism) + tail)


@dataclass(frozen=True)
class SASLResponse:
    data: bytes

    def encode(self) -> bytes:
        return frame(Frontend.PASSWORD, self.data)


def _formats(r: _Reader) -> tuple[int, ...]:
    return tuple(r.int16() for _ in range(r.int16()))


def _decode_bind(r: _Reader) -> Bind:
    portal, statement = r.cstring(), r.cstring()
    param_formats = _formats(r)
    params = []
    for _ in range(r.int16()):
        length = r.int32()
        params.append(None if length == NULL_LENGTH else r.take(length))
    return Bind(portal, statement, param_formats, tuple(params), _formats(r))


def _describe_kind(r: _Reader) -> bytes:
    kind = r.take(1)
    if kind not in (DESCRIBE_STATEMENT, DESCRIBE_PORTAL):
        raise errors.ProtocolViolation(f"invalid DESCRIBE message subtype {kind[0]}")
    return kind


_DECODERS = {
    Frontend.QUERY: lambda r: Query(r.cstring()),
    Frontend.PARSE: lambda r: Parse(r.cstring(), r.cstring(),
                                    tuple(r.uint32() for _ in range(r.int16()))),
    Frontend.BIND: _decode_bind,
    Frontend.DESCRIBE: lambda r: Describe(_describe_kind(r), r.cstring()),
    Frontend.EXECUTE: lambda r: Execute(r.cstring(), r.int32()),
    Frontend.CLOSE: lambda r: Close(_describe_kind(r), r.cstring()),
    Frontend.SYNC: lambda r: Sync(),
    Frontend.FLUSH: lambda r: Flush(),
    Frontend.TERMINATE: lambda r: Terminate(),
    Frontend.COPY_DATA: lambda r: CopyData(r.rest()),
    Frontend.COPY_DONE: lambda r: CopyDone(),
    Frontend.COPY_FAIL: lambda r: CopyFail(r.cstring()),
    Frontend.PASSWORD: lambda r: PasswordMessage(r.rest()),
}


def decode_frontend(type_byte: bytes, body: bytes):
    """A typed frontend message. Unknown types raise FramingError, as PostgreSQL ends the
    connection for them; malformed bodies raise ProtocolViolation (the session goes on)."""
    decoder = _DECODERS.get(type_byte)
    if decoder is None:
        raise FramingError(f"invalid frontend message type {type_byte[0]}")
    r = _Reader(body)
    msg = decoder(r)
    r.end()
    return msg
