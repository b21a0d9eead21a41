"""Message I/O over one asyncio connection: whole frontend messages in, buffered bytes out.

Knows only framing (type byte, Int32 length); codec.py decodes the bodies. Output collects
in a buffer that goes to the socket on `flush()` or once it passes `FLUSH_BYTES`, so a
pipeline of small messages costs one write, as with PostgreSQL's 8 kB send buffer. The
session flushes at ReadyForQuery, Flush, before waiting on the client, and whenever the
engine is slow to produce what comes next.
"""

from __future__ import annotations

import asyncio
import select
import socket
import struct

from coordinator.pgwire import codec

FLUSH_BYTES = 8192


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader = reader
        self._writer = writer
        self._out = bytearray()

    @property
    def peer(self) -> str:
        peer = self._writer.get_extra_info("peername")
        return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)

    async def read_startup(self):
        """A startup-phase packet: SSLRequest, GSSENCRequest, CancelRequest, StartupMessage."""
        (length,) = struct.unpack("!i", await self._reader.readexactly(4))
        if not 8 <= length <= codec.MAX_STARTUP_LENGTH:
            raise codec.FramingError("invalid length of startup packet")
        return codec.decode_startup(await self._reader.readexactly(length - 4))

    async def read_frame(self) -> tuple[bytes, bytes]:
        """The next typed message as (type byte, body), not yet decoded."""
        header = await self._reader.readexactly(5)
        type_byte, length = header[:1], struct.unpack("!i", header[1:])[0]
        if not 4 <= length <= codec.MAX_MESSAGE_LENGTH:
            raise codec.FramingError(f"invalid message length {length}")
        return type_byte, await self._reader.readexactly(length - 4)

    async def read(self):
        """The next typed frontend message, decoded."""
        return codec.decode_frontend(*await self.read_frame())

    def peer_gone(self) -> bool:
        """Whether the client has closed (FIN) or reset the connection, found without reading
        from it. On Linux poll(POLLRDHUP) sees a FIN even behind bytes not read yet (as
        PostgreSQL's pq_check_connection); elsewhere a non-blocking MSG_PEEK on a duplicate
        of the socket returning b"" means end of stream."""
        if self._writer.is_closing() or self._reader.exception() is not None:
            return True
        if self._reader.at_eof():
            return True
        sock = self._writer.get_extra_info("socket")
        if sock is None:
            return False
        fd = sock.fileno()
        if fd < 0:
            return True
        if hasattr(select, "POLLRDHUP"):
            poller = select.poll()
            poller.register(fd, select.POLLRDHUP)  # POLLHUP and POLLERR come unasked
            return bool(poller.poll(0))
        try:
            with socket.fromfd(fd, sock.family, sock.type) as dup:
                return dup.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    @property
    def pending(self) -> int:
        """Bytes buffered and not yet written."""
        return len(self._out)

    def send(self, *messages) -> None:
        for m in messages:
            self._out += m.encode()

    def send_bytes(self, data: bytes) -> None:
        self._out += data

    async def flush(self) -> None:
        if self._out:
            # Hand the buffer over whole and start a new one: the transport may keep it.
            data, self._out = self._out, bytearray()
            self._writer.write(data)
        await self._writer.drain()

    async def flush_if_full(self) -> None:
        if len(self._out) >= FLUSH_BYTES:
            await self.flush()

    async def close(self) -> None:
        try:
            if self._out and not self._writer.is_closing():
                await self.flush()
        except (ConnectionError, OSError):
            pass
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass
