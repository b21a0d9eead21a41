"""TCP transport between nodes: frames as length-prefixed messages on a plain stream socket.

TcpLink is the sending end: HELLO, then each frame as its 16-byte header and body (the
Arrow IPC message, serialized once and handed to the kernel with sendmsg). Keepalive is
tuned so that a peer host that vanishes without a FIN is noticed within seconds.

FrameReader is the receiving end's parser, driven by the service's I/O thread on a
non-blocking socket: it reads headers into a small buffer and BATCH bodies into the Slot
the inbox gives (memory, or the spill file in chunks), so a frame is never held twice.
Other bodies are small and read into bytes.
"""

from __future__ import annotations

import socket

import pyarrow as pa

from motion import frames
from motion.errors import IO_ERROR, MotionError
from motion.frames import Kind
from motion.link import Link

CONNECT_TIMEOUT = 10.0
_READ_BUDGET = 8 << 20  # bytes read per readiness event, so one sender cannot starve others


def tune(sock: socket.socket) -> None:
    """No Nagle delay; keepalive probes after 5 s idle, 3 probes 1 s apart."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", 5), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 3)):
        if hasattr(socket, name):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)


class TcpLink(Link):
    """Sending end over TCP."""

    transport = "tcp"

    def __init__(self, host: str, port: int, hello: bytes, what: str):
        try:
            sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
            sock.settimeout(None)
            tune(sock)
        except OSError as exc:
            raise MotionError(f"motion {what}: cannot connect to {host}:{port}: "
                              f"{exc.strerror or exc}", IO_ERROR) from None
        super().__init__(sock, what)
        self.sendmsg([frames.header(Kind.HELLO, len(hello)), hello])

    def send_body(self, kind: Kind, body) -> None:
        self.sendmsg([frames.header(kind, len(body)), body])

    def send_batch(self, batch: pa.RecordBatch, schema: pa.Schema, schema_len: int) -> int:
        body = frames.batch_body(batch)
        self.send_body(Kind.BATCH, body)
        return len(body)


class FrameReader:
    """Incremental parser of one TCP connection's frames.

    `read()` consumes what the socket has and calls `on_frame(kind, body)` for each whole
    frame: body is a pa.Buffer for small frames and the filled Slot for BATCH frames, whose
    Slot comes from `reserve(length)` as soon as the header is in."""

    def __init__(self, sock: socket.socket, reserve, on_frame):
        self.sock = sock
        self._reserve = reserve
        self._on_frame = on_frame
        self._head = bytearray(frames.HEADER_SIZE)
        self._head_pos = 0
        self._kind: Kind | None = None
        self._slot = None  # Slot of a BATCH body, or bytearray of a small body
        self._pos = 0

    def read(self) -> bool:
        """Read what is available; False at end of stream. Raises MotionError/OSError."""
        budget = _READ_BUDGET
        while budget > 0:
            if self._kind is None:
                n = self.sock.recv_into(memoryview(self._head)[self._head_pos:])
                if n == 0:
                    return False
                self._head_pos += n
                budget -= n
                if self._head_pos < frames.HEADER_SIZE:
                    continue
                kind, flags, length = frames.parse_header(self._head)
                if flags:
                    raise MotionError(f"unexpected flags {flags} on a TCP motion frame",
                                      IO_ERROR)
                self._kind, self._head_pos, self._pos = kind, 0, 0
                self._slot = self._reserve(length) if kind == Kind.BATCH else bytearray(length)
                if self._remaining() == 0:
                    self._finish()
                continue
            view = self._view()
            n = self.sock.recv_into(view)
            if n == 0:
                return False
            budget -= n
            self._advance(n)
            if self._remaining() == 0:
                self._finish()
        return True

    def pending_slot(self):
        """The Slot of a BATCH half read (to give back when the connection breaks)."""
        return self._slot if self._kind == Kind.BATCH else None

    def _view(self) -> memoryview:
        if self._kind == Kind.BATCH:
            return self._slot.view()
        return memoryview(self._slot)[self._pos:]

    def _advance(self, n: int) -> None:
        if self._kind == Kind.BATCH:
            self._slot.advance(n)
        else:
            self._pos += n

    def _remaining(self) -> int:
        if self._kind == Kind.BATCH:
            return self._slot.remaining
        return len(self._slot) - self._pos

    def _finish(self) -> None:
        kind, slot = self._kind, self._slot
        self._kind, self._slot = None, None
        self._on_frame(kind, slot if kind == Kind.BATCH else pa.py_buffer(slot))
