"""Backend (server -> client) messages of protocol 3.0 as dataclasses with exact `encode()`.

The half of the codec that the server writes; codec.py holds the wire constants, framing
and the frontend messages. Pure: no sockets. DataRows in bulk are framed by
values.encode_data_rows; `DataRow` here is for single rows and tests.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from coordinator.pgwire import codec
from coordinator.pgwire.codec import Auth, Backend, cstring, frame


@dataclass(frozen=True)
class AuthenticationOk:
    def encode(self) -> bytes:
        return frame(Backend.AUTHENTICATION, struct.pack("!i", Auth.OK))


@dataclass(frozen=True)
class AuthenticationSASL:
    mechanisms: tuple[str, ...]

    def encode(self) -> bytes:
        names = b"".join(cstring(m) for m in self.mechanisms) + b"\0"
        return frame(Backend.AUTHENTICATION, struct.pack("!i", Auth.SASL) + names)


@dataclass(frozen=True)
class AuthenticationSASLContinue:
    data: bytes

    def encode(self) -> bytes:
        return frame(Backend.AUTHENTICATION, struct.pack("!i", Auth.SASL_CONTINUE) + self.data)


@dataclass(frozen=True)
class AuthenticationSASLFinal:
    data: bytes

    def encode(self) -> bytes:
        return frame(Backend.AUTHENTICATION, struct.pack("!i", Auth.SASL_FINAL) + self.data)


@dataclass(frozen=True)
class ParameterStatus:
    name: str
    value: str

    def encode(self) -> bytes:
        return frame(Backend.PARAMETER_STATUS, cstring(self.name) + cstring(self.value))


@dataclass(frozen=True)
class BackendKeyData:
    pid: int
    secret: int

    def encode(self) -> bytes:
        return frame(Backend.BACKEND_KEY_DATA, struct.pack("!ii", self.pid, self.secret))


@dataclass(frozen=True)
class ReadyForQuery:
    status: bytes  # b"I" idle, b"T" in a transaction block, b"E" in a failed one

    def encode(self) -> bytes:
        return frame(Backend.READY_FOR_QUERY, self.status)


@dataclass(frozen=True)
class FieldDescription:
    name: str
    type_oid: int
    typlen: int = -1
    typmod: int = -1
    format: int = codec.TEXT
    table_oid: int = 0
    column_attr: int = 0

    def encode(self) -> bytes:
        return cstring(self.name) + struct.pack(
            "!IhIhih", self.table_oid, self.column_attr, self.type_oid, self.typlen,
            self.typmod, self.format)


@dataclass(frozen=True)
class RowDescription:
    fields: tuple[FieldDescription, ...]

    def encode(self) -> bytes:
        body = struct.pack("!h", len(self.fields)) + b"".join(f.encode() for f in self.fields)
        return frame(Backend.ROW_DESCRIPTION, body)


@dataclass(frozen=True)
class DataRow:
    values: tuple[bytes | None, ...]

    def encode(self) -> bytes:
        parts = [struct.pack("!h", len(self.values))]
        for v in self.values:
            parts.append(struct.pack("!i", codec.NULL_LENGTH) if v is None
                         else struct.pack("!i", len(v)) + v)
        return frame(Backend.DATA_ROW, b"".join(parts))


@dataclass(frozen=True)
class CommandComplete:
    tag: str

    def encode(self) -> bytes:
        return frame(Backend.COMMAND_COMPLETE, cstring(self.tag))


@dataclass(frozen=True)
class EmptyQueryResponse:
    def encode(self) -> bytes:
        return frame(Backend.EMPTY_QUERY_RESPONSE)


class Severity:
    ERROR = "ERROR"
    FATAL = "FATAL"
    NOTICE = "NOTICE"
    WARNING = "WARNING"


@dataclass(frozen=True)
class ErrorResponse:
    """Fields S (severity), V (non-localized severity), C (SQLSTATE), M, D (detail), H (hint),
    W (where: the context)."""

    severity: str
    code: str
    message: str
    detail: str | None = None
    hint: str | None = None
    where: str | None = None

    type_byte = Backend.ERROR_RESPONSE

    def encode(self) -> bytes:
        fields = [(b"S", self.severity), (b"V", self.severity), (b"C", self.code),
                  (b"M", self.message), (b"D", self.detail), (b"H", self.hint),
                  (b"W", self.where)]
        body = b"".join(k + cstring(v) for k, v in fields if v is not None) + b"\0"
        return frame(self.type_byte, body)


@dataclass(frozen=True)
class NoticeResponse(ErrorResponse):
    type_byte = Backend.NOTICE_RESPONSE


@dataclass(frozen=True)
class ParseComplete:
    def encode(self) -> bytes:
        return frame(Backend.PARSE_COMPLETE)


@dataclass(frozen=True)
class BindComplete:
    def encode(self) -> bytes:
        return frame(Backend.BIND_COMPLETE)


@dataclass(frozen=True)
class CloseComplete:
    def encode(self) -> bytes:
        return frame(Backend.CLOSE_COMPLETE)


@dataclass(frozen=True)
class NoData:
    def encode(self) -> bytes:
        return frame(Backend.NO_DATA)


@dataclass(frozen=True)
class PortalSuspended:
    def encode(self) -> bytes:
        return frame(Backend.PORTAL_SUSPENDED)


@dataclass(frozen=True)
class ParameterDescription:
    oids: tuple[int, ...]

    def encode(self) -> bytes:
        n = len(self.oids)
        return frame(Backend.PARAMETER_DESCRIPTION, struct.pack(f"!h{n}I", n, *self.oids))


@dataclass(frozen=True)
class NotificationResponse:
    """A NOTIFY on a channel this session LISTENs on (sent when it is idle)."""

    pid: int  # the notifying session's backend pid
    channel: str
    payload: str

    def encode(self) -> bytes:
        return frame(Backend.NOTIFICATION_RESPONSE,
                     struct.pack("!i", self.pid) + cstring(self.channel) + cstring(self.payload))


def _copy_response(type_byte: bytes, overall: int, column_formats: tuple[int, ...]) -> bytes:
    n = len(column_formats)
    return frame(type_byte, struct.pack(f"!bh{n}h", overall, n, *column_formats))


@dataclass(frozen=True)
class CopyInResponse:
    format: int  # 0 textual (text or csv), 1 binary
    column_formats: tuple[int, ...]

    def encode(self) -> bytes:
        return _copy_response(Backend.COPY_IN_RESPONSE, self.format, self.column_formats)


@dataclass(frozen=True)
class CopyOutResponse:
    format: int
    column_formats: tuple[int, ...]

    def encode(self) -> bytes:
        return _copy_response(Backend.COPY_OUT_RESPONSE, self.format, self.column_formats)


@dataclass(frozen=True)
class NegotiateProtocolVersion:
    """Sent when the client asks for a newer minor version or for `_pq_.` options."""

    newest_minor: int
    unrecognized: tuple[str, ...] = ()

    def encode(self) -> bytes:
        body = struct.pack("!ii", self.newest_minor, len(self.unrecognized))
        return frame(Backend.NEGOTIATE_PROTOCOL_VERSION,
                     body + b"".join(cstring(o) for o in self.unrecognized))


# CopyData and CopyDone are the same bytes in both directions.
CopyData = codec.CopyData
CopyDone = codec.CopyDone
