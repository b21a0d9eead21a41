"""The receiving I/O of a MotionService: one daemon thread, one selector, every connection.

The thread accepts senders on a TCP listener and on a SOCK_SEQPACKET Unix listener (in the
abstract namespace, so no socket file exists to be left behind), reads their frames as
soon as they arrive and hands them to the inbox their HELLO names (`resolve`). It never
waits on a consumer: inboxes take every frame, in memory or spilled. It also sends the
control frames back: RELEASE when a consumer let go of a shared-memory frame (posted from
any thread by a lease, without locks), STOP or CANCEL when a receiver closes or its query
is cancelled (STOP also when the channel failed: the receiver reports the error, the other
senders just stop). After STOP/CANCEL a connection drains: what still comes is read and
discarded until the sender hangs up, or DRAIN_LINGER seconds pass.

Other threads reach the loop only through `call(fn)` (run fn in the loop thread and wait)
and `post_release`. Once a second it calls `on_tick` (the service trims its slab pool).
close() stops the thread, joins it and closes every socket.
"""

from __future__ import annotations

import collections
import errno
import logging
import os
import selectors
import socket
import threading
import time
import uuid

import pyarrow as pa

from motion import frames, shm
from motion.errors import INTERNAL, IO_ERROR, MotionError
from motion.frames import Kind
from motion.tcp import FrameReader, tune

_log = logging.getLogger("raympp.motion")
DRAIN_LINGER = 10.0
_UDS_MESSAGES_PER_EVENT = 64


class _Conn:
    """One accepted sender connection."""

    def __init__(self, sock: socket.socket, transport: str):
        self.sock = sock
        self.transport = transport
        self.inbox = None
        self.index = -1
        self.draining_until = 0.0  # > 0 once draining
        self.closed = False
        self.slabs = None  # shm.SlabMap of a shm connection
        self.reader = None  # tcp.FrameReader of a TCP connection


class IoLoop:
    """See the module docstring. `resolve(key, index, transport)` returns the Inbox a HELLO
    joins, or Kind.STOP / Kind.CANCEL to turn the sender away."""

    def __init__(self, host: str, resolve, on_tick=None):
        self._resolve = resolve
        self._on_tick = on_tick
        self._sel = selectors.DefaultSelector()
        self._calls: collections.deque = collections.deque()
        self._releases: collections.deque = collections.deque()
        self._conns: set[_Conn] = set()
        self._stopping = False
        self._next_tick = 0.0
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._tcp = socket.create_server((host, 0), family=family, backlog=512)
        self.tcp_port = self._tcp.getsockname()[1]
        self.uds_path = f"\0raympp-motion-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._uds = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._uds.bind(self.uds_path)
        self._uds.listen(512)
        self._wake_r, self._wake_w = socket.socketpair()
        for s in (self._tcp, self._uds, self._wake_r, self._wake_w):
            s.setblocking(False)
        self._sel.register(self._tcp, selectors.EVENT_READ, self._accept_tcp)
        self._sel.register(self._uds, selectors.EVENT_READ, self._accept_uds)
        self._sel.register(self._wake_r, selectors.EVENT_READ, self._on_wake)
        self._thread = threading.Thread(target=self._run, name="motion-io", daemon=True)
        self._thread.start()

    # --- other threads ----------------------------------------------------------------------
    def call(self, fn, timeout: float = 30.0):
        """Run fn() in the loop thread and return its result (inline if the loop is gone)."""
        if threading.current_thread() is self._thread or not self._thread.is_alive():
            return fn()
        done = threading.Event()
        box: list = [None, None]

        def run():
            try:
                box[0] = fn()
            except BaseException as exc:  # handed to the caller
                box[1] = exc
            finally:
                done.set()

        self._calls.append(run)
        self._wake()
        deadline = time.monotonic() + timeout
        while not done.wait(0.05):
            if not self._thread.is_alive():  # stopped before it got to our call
                try:
                    self._calls.remove(run)
                except ValueError:
                    continue  # it ran after all
                run()
            elif time.monotonic() > deadline:
                raise MotionError("motion I/O thread did not answer", INTERNAL)
        if box[1] is not None:
            raise box[1]
        return box[0]

    def post_release(self, conn: _Conn, slab_id: int) -> None:
        """Thread-safe, lock-free: send RELEASE for slab_id on conn soon."""
        if not self._stopping:
            self._releases.append((conn, slab_id))
            self._wake()

    def close(self) -> None:
        if self._thread.is_alive():
            self._stopping = True
            self._wake()
            self._thread.join(timeout=30)
        self._teardown()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    # --- loop-thread API (via call) ---------------------------------------------------------
    def drain_inbox(self, inbox, kind: Kind) -> None:
        """Turn away every sender of `inbox` with STOP or CANCEL."""
        for conn in list(inbox.conns):
            self._drain(conn, kind)

    # --- the loop ---------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping:
            try:
                for key, _ in self._sel.select(timeout=0.25):
                    key.data(key.fileobj)
                self._run_calls()
                self._flush_releases()
                self._reap()
            except Exception:  # a bug: log it, keep serving the other channels
                _log.exception("motion I/O loop")
        self._run_calls()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except OSError:  # full (a wake-up is pending anyway) or closed
            pass

    def _on_wake(self, sock) -> None:
        try:
            while sock.recv(4096):
                pass
        except OSError:
            pass

    def _run_calls(self) -> None:
        while self._calls:
            self._calls.popleft()()

    def _flush_releases(self) -> None:
        while self._releases:
            conn, slab_id = self._releases.popleft()
            conn.slabs.released()
            if not conn.closed and not conn.draining_until:
                self._send(conn, shm.release_frame(slab_id))

    def _reap(self) -> None:
        now = time.monotonic()
        if self._on_tick is not None and now >= self._next_tick:
            self._next_tick = now + 1.0
            self._on_tick()
        for conn in [c for c in self._conns if c.draining_until and c.draining_until < now]:
            self._close(conn)

    def _accept_tcp(self, listener) -> None:
        self._accept(listener, "tcp")

    def _accept_uds(self, listener) -> None:
        self._accept(listener, "shm")

    def _accept(self, listener, transport: str) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of fds, say: the sender sees its connection fail
                return
            sock.setblocking(False)
            conn = _Conn(sock, transport)
            if transport == "tcp":
                tune(sock)
                conn.reader = FrameReader(
                    sock, self._reserve_for(conn),
                    lambda kind, body, c=conn: self._on_frame(c, kind, body))
            else:
                conn.slabs = shm.SlabMap(lambda slab_id, c=conn: self.post_release(c, slab_id))
            self._conns.add(conn)
            self._sel.register(sock, selectors.EVENT_READ, lambda s, c=conn: self._readable(c))

    def _reserve_for(self, conn: _Conn):
        def reserve(length: int):
            if conn.inbox is None or conn.draining_until:
                raise MotionError("motion BATCH frame before HELLO", INTERNAL)
            return conn.inbox.reserve(conn.index, length)
        return reserve

    def _readable(self, conn: _Conn) -> None:
        try:
            if conn.draining_until:
                self._discard(conn)
            elif conn.transport == "tcp":
                if not conn.reader.read():
                    self._close(conn, lost=True)
            else:
                self._read_uds(conn)
        except (BlockingIOError, InterruptedError):
            pass
        except MotionError as exc:
            self._fail(conn, exc)
        except OSError as exc:
            if exc.errno in (errno.ECONNRESET, errno.EPIPE, errno.ETIMEDOUT):
                self._close(conn, lost=True)  # died (or its host went silent) mid-stream
            else:
                self._fail(conn, MotionError(f"motion connection error: "
                                             f"{exc.strerror or exc}", IO_ERROR))
        except Exception as exc:  # a bug must not kill the loop: fail this channel only
            self._fail(conn, MotionError(f"motion receive failed: {exc!r}", INTERNAL))

    def _read_uds(self, conn: _Conn) -> None:
        for _ in range(_UDS_MESSAGES_PER_EVENT):
            if conn.closed or conn.draining_until:
                return
            msg, fds = shm.recv_message(conn.sock)
            if not msg and not fds:
                self._close(conn, lost=True)
                return
            try:
                kind, flags, length = frames.parse_header(msg)
                body = memoryview(msg)[frames.HEADER_SIZE:]
                if flags & frames.FLAG_SHM:
                    if fds:
                        slab_id = shm.SHM_DESC.unpack_from(body)[0]
                        conn.slabs.adopt(slab_id, fds.pop(0))
                    buf = conn.slabs.frame(body)
                else:
                    if len(body) != length:
                        raise MotionError("motion shm message length mismatch", INTERNAL)
                    buf = pa.py_buffer(body)
            finally:
                for fd in fds:
                    os.close(fd)
            self._on_frame(conn, kind, buf)

    def _discard(self, conn: _Conn) -> None:
        while True:
            if conn.transport == "tcp":
                data, fds = conn.sock.recv(1 << 20), []
            else:
                data, fds = shm.recv_message(conn.sock)
            for fd in fds:
                os.close(fd)
            if not data and not fds:
                self._close(conn)
                return

    def _on_frame(self, conn: _Conn, kind: Kind, body) -> None:
        inbox = conn.inbox
        if inbox is None:
            if conn.draining_until:
                return
            if kind != Kind.HELLO:
                raise MotionError(f"motion {kind.name} frame before HELLO", INTERNAL)
            key, index = frames.read_hello(body)
            target = self._resolve(key, index, conn.transport)
            if isinstance(target, Kind):
                self._drain(conn, target)
                return
            try:
                target.attach(index, conn.transport)
            except MotionError:
                self._drain(conn, Kind.CANCEL)
                return
            conn.inbox, conn.index = target, index
            target.conns.add(conn)
        elif kind == Kind.BATCH:
            if conn.transport == "tcp":
                inbox.commit(conn.index, body)
            else:
                inbox.push(conn.index, body)
        elif kind == Kind.SCHEMA:
            inbox.on_schema(conn.index, body)
        elif kind == Kind.END:
            inbox.on_end(conn.index)
            self._close(conn)
        elif kind == Kind.ERROR:
            inbox.on_error(conn.index, body)
            self._close(conn)
            self._stop_others(inbox)
        else:
            raise MotionError(f"unexpected motion {kind.name} frame from a sender", INTERNAL)

    # --- ending connections -----------------------------------------------------------------
    def _send(self, conn: _Conn, data: bytes) -> None:
        try:
            conn.sock.send(data)
        except OSError:  # the sender is gone or not reading: nothing useful to do
            pass

    def _drain(self, conn: _Conn, kind: Kind) -> None:
        if conn.closed or conn.draining_until:
            return
        self._send(conn, frames.control(kind))
        self._detach(conn)
        conn.draining_until = time.monotonic() + DRAIN_LINGER

    def _fail(self, conn: _Conn, error: MotionError) -> None:
        inbox = conn.inbox
        if inbox is not None:
            inbox.fail(error)
        self._close(conn)
        if inbox is not None:
            self._stop_others(inbox)

    def _stop_others(self, inbox) -> None:
        """The channel failed: its other senders may stop (the receiver reports the error)."""
        if inbox.error is not None:
            self.drain_inbox(inbox, Kind.STOP)

    def _detach(self, conn: _Conn) -> None:
        if conn.reader is not None:
            slot = conn.reader.pending_slot()
            if slot is not None and conn.inbox is not None:
                conn.inbox.drop(slot)
            conn.reader = None
        if conn.slabs is not None:
            conn.slabs.close()
        if conn.inbox is not None:
            conn.inbox.conns.discard(conn)
            conn.inbox = None

    def _close(self, conn: _Conn, lost: bool = False) -> None:
        if conn.closed:
            return
        inbox = conn.inbox
        if lost and inbox is not None and not conn.draining_until:
            inbox.on_lost(conn.index)
        self._detach(conn)
        conn.closed = True
        self._conns.discard(conn)
        try:
            self._sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()
        if lost and inbox is not None:
            self._stop_others(inbox)

    def _teardown(self) -> None:
        for conn in list(self._conns):
            self._close(conn)
        for s in (self._tcp, self._uds, self._wake_r, self._wake_w):
            try:
                self._sel.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()
        self._sel.close()
        self._releases.clear()
