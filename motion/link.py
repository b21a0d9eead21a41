"""The sending end of one channel's connection: the part shared by the shm and TCP links.

A Link owns one connected socket to a receiving MotionService. Subclasses (shm.ShmLink,
tcp.TcpLink) say how a frame body travels: `send_body(kind, body)` and
`send_batch(batch, schema, schema_len)`. This base class sends the bytes, and reads the
control frames the receiver sends back on the same socket (RELEASE, STOP, CANCEL): without
blocking before each frame (`poll`), and blocking after the last (`wait_closed`), so that
closing never races a control frame still in flight. Sender (sender.py) decides what to
send; the Link only moves it.
"""

from __future__ import annotations

import errno
import select
import socket
import threading
import time

from motion import frames
from motion.errors import IO_ERROR, MotionError, QUERY_CANCELED
from motion.frames import Kind

_RECV_CHUNK = 64 << 10


class Link:
    transport = ""

    def __init__(self, sock: socket.socket, what: str):
        self.sock = sock
        self.what = what  # e.g. "channel ('q1', 2, 0) sender 3", for error messages
        self.aborted: MotionError | None = None
        self._send_lock = threading.Lock()
        self._inbuf = bytearray()
        self._eof = False
        self._stashed: set[Kind] = set()  # STOP/CANCEL read while waiting for RELEASEs

    # --- subclasses -----------------------------------------------------------------------
    def send_body(self, kind: Kind, body) -> None:
        raise NotImplementedError

    def send_batch(self, batch, schema, schema_len: int) -> int:
        """Send one BATCH frame of `batch` (of the channel's `schema`, whose IPC message is
        schema_len bytes); the body length."""
        raise NotImplementedError

    def on_release(self, body: bytes) -> None:
        """A RELEASE control frame arrived (shm slabs)."""

    def on_close(self) -> None:
        """The socket is closed: drop transport resources."""

    # --- sending --------------------------------------------------------------------------
    def sendmsg(self, parts, fds=()) -> None:
        """Send all of `parts` (buffers), with `fds` attached to the first byte."""
        parts = [memoryview(p).cast("B") for p in parts]
        with self._send_lock:
            self._sendmsg(parts, fds)

    def _sendmsg(self, parts, fds) -> None:
        try:
            while parts:
                if fds:
                    n = socket.send_fds(self.sock, parts, list(fds))
                    fds = ()
                else:
                    n = self.sock.sendmsg(parts)
                while parts and n >= len(parts[0]):
                    n -= len(parts[0])
                    parts.pop(0)
                if parts and n:
                    parts[0] = parts[0][n:]
        except OSError as exc:
            raise self._broken(exc) from None

    def _broken(self, exc: OSError) -> MotionError:
        if self.aborted is not None:
            return self.aborted
        return MotionError(f"motion {self.what}: receiver connection lost "
                           f"({exc.strerror or exc})", IO_ERROR)

    # --- control frames back from the receiver --------------------------------------------
    def poll(self) -> set[Kind]:
        """STOP/CANCEL frames received so far (RELEASEs are handled); never blocks."""
        seen, self._stashed = self._stashed, set()
        while not self._eof:
            try:
                data = self.sock.recv(_RECV_CHUNK, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                if exc.errno in (errno.ECONNRESET, errno.EPIPE, errno.EBADF, errno.ENOTCONN):
                    self._eof = True
                    break
                raise self._broken(exc) from None
            if not data:
                self._eof = True
                break
            self._inbuf += data
            seen |= self._parse()
        return seen

    def await_control(self, timeout: float) -> bool:
        """Block up to `timeout` seconds for control frames from the receiver and handle
        them (RELEASEs at once; STOP/CANCEL kept for the next `poll`). False when the
        receiver is gone or has said STOP/CANCEL: waiting longer makes no sense."""
        if self._eof or self._stashed or self.aborted is not None:
            return False
        try:
            readable, _, _ = select.select([self.sock], [], [], timeout)
        except (OSError, ValueError):
            return False
        if readable:
            self._stashed |= self.poll()
        return not self._eof and not self._stashed

    def wait_closed(self, timeout: float) -> set[Kind]:
        """After the last frame: read control frames until the receiver closes, it says
        STOP/CANCEL, or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        seen = self.poll()
        while not self._eof and not seen and time.monotonic() < deadline:
            try:
                self.sock.settimeout(max(0.001, deadline - time.monotonic()))
                data = self.sock.recv(_RECV_CHUNK)
            except (socket.timeout, BlockingIOError, InterruptedError):
                continue
            except OSError:
                break
            finally:
                try:
                    self.sock.settimeout(None)
                except OSError:
                    pass
            if not data:
                break
            self._inbuf += data
            seen |= self._parse()
        return seen

    @property
    def eof(self) -> bool:
        return self._eof

    def _parse(self) -> set[Kind]:
        seen: set[Kind] = set()
        buf = self._inbuf
        pos = 0
        while len(buf) - pos >= frames.HEADER_SIZE:
            kind, _, length = frames.parse_header(buf[pos:pos + frames.HEADER_SIZE])
            if len(buf) - pos - frames.HEADER_SIZE < length:
                break
            body = bytes(buf[pos + frames.HEADER_SIZE:pos + frames.HEADER_SIZE + length])
            pos += frames.HEADER_SIZE + length
            if kind == Kind.RELEASE:
                self.on_release(body)
            elif kind in (Kind.STOP, Kind.CANCEL):
                seen.add(kind)
            else:
                raise MotionError(f"motion {self.what}: unexpected {kind.name} frame from the "
                                  "receiver", IO_ERROR)
        del buf[:pos]
        return seen

    # --- teardown -------------------------------------------------------------------------
    def abort(self, error: MotionError | None = None) -> None:
        """From another thread: make any blocked or later send fail with `error`. Unless a
        frame is being sent right now, the receiver first gets an ERROR frame saying so."""
        self.aborted = error or MotionError(f"motion {self.what}: cancelled", QUERY_CANCELED)
        if self._send_lock.acquire(blocking=False):
            try:
                body = frames.error_body(self.aborted.message, self.aborted.sqlstate)
                self.sock.send(frames.header(Kind.ERROR, len(body)) + body, socket.MSG_DONTWAIT)
            except OSError:
                pass
            finally:
                self._send_lock.release()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            self.on_close()
