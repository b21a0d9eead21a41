"""A byte-level protocol client for tests: sends codec messages, reads raw backend messages."""

from __future__ import annotations

import socket
import struct

from coordinator.pgwire import codec


class RawClient:
    def __init__(self, host: str, port: int):
        self.sock = socket.create_connection((host, port), timeout=10)
        self._buf = b""

    def send(self, *messages) -> None:
        self.sock.sendall(b"".join(m if isinstance(m, bytes) else m.encode() for m in messages))

    def _read(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("server closed the connection")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def read_byte(self) -> bytes:
        return self._read(1)

    def recv(self) -> tuple[bytes, bytes]:
        header = self._read(5)
        return header[:1], self._read(struct.unpack("!i", header[1:])[0] - 4)

    def until_ready(self) -> list[tuple[bytes, bytes]]:
        """Messages up to and including ReadyForQuery."""
        out = []
        while True:
            out.append(self.recv())
            if out[-1][0] == b"Z":
                return out

    def closed_by_server(self) -> bool:
        try:
            self.recv()
        except (EOFError, ConnectionError):
            return True
        return False

    def startup(self, user: str = "raw", **params) -> list[tuple[bytes, bytes]]:
        self.send(codec.StartupMessage({"user": user, "database": "db", **params}))
        return self.until_ready()

    def close(self) -> None:
        self.sock.close()


def types_of(messages) -> str:
    return "".join(t.decode() for t, _ in messages)


def fields(body: bytes) -> dict[str, str]:
    """The fields of an ErrorResponse or NoticeResponse body."""
    out = {}
    for part in body.rstrip(b"\0").split(b"\0"):
        out[part[:1].decode()] = part[1:].decode()
    return out


def cstrings(body: bytes) -> list[str]:
    return [s.decode() for s in body.split(b"\0")[:-1]]


def data_row(body: bytes) -> list[bytes | None]:
    (n,), pos, out = struct.unpack_from("!h", body), 2, []
    for _ in range(n):
        (length,) = struct.unpack_from("!i", body, pos)
        pos += 4
        if length < 0:
            out.append(None)
        else:
            out.append(body[pos:pos + length])
            pos += length
    return out
