"""The coordinator's end of a segment's task socket (segment/task_server.py).

One TaskLink per segment process, shared by every session: `submit(tasks)` writes one
request and returns a Future that the link's reader thread completes with the segment's
results, or fails with the segment's exception. When the connection breaks (the segment
process died), every request waiting on it fails with SegmentFailure, as a Ray actor
call to a dead actor did, and the link is spent: the cluster makes a new one for the
segment's next process when it heals.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import pickle
import socket
import threading

from planner import errors
from segment import task_server as ts

CONNECT_SECONDS = 5.0


class RemoteError(Exception):
    """A failure a segment reported, as its `cause` (what cluster.unwrap reads)."""

    def __init__(self, cause: BaseException):
        super().__init__(str(cause))
        self.cause = cause


def died() -> errors.SegmentFailure:
    return errors.SegmentFailure(
        "a segment process died (it is restarted where its data is)",
        detail="its slice-task connection closed")


class TaskLink:
    def __init__(self, endpoint: ts.TaskEndpoint, same_node: bool):
        self.endpoint = endpoint
        self._same_node = same_node
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._pending: dict[int, concurrent.futures.Future] = {}
        self._ids = itertools.count(1)
        self._broken = False

    @property
    def broken(self) -> bool:
        return self._broken

    @property
    def alive(self) -> bool:
        """Connected, and the connection has not broken: the process it reaches is the
        one the link was made for (a process that ends closes its connections)."""
        return self._sock is not None and not self._broken

    def connect(self) -> None:
        """Open the connection now (else the first request does); a failure spends the
        link."""
        with self._lock:
            if self._sock is None and not self._broken:
                try:
                    self._connect()
                except OSError:
                    self._break_locked()

    def submit(self, tasks) -> concurrent.futures.Future:
        """Send `tasks` (slice tasks or a MethodCall: one request); the Future gives the
        segment's results."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        payload = None
        with self._lock:
            request_id = next(self._ids)
            try:
                if self._broken:
                    raise ts.ConnectionLost("spent")
                if self._sock is None:
                    self._connect()
                payload = pickle.dumps((request_id, tasks), protocol=pickle.HIGHEST_PROTOCOL)
                self._pending[request_id] = future
                ts.write_frame(self._sock, payload)
            except (OSError, ts.ConnectionLost):
                self._pending.pop(request_id, None)
                self._break_locked()
                future.set_exception(RemoteError(died()))
        return future

    def _connect(self) -> None:
        ep = self.endpoint
        if self._same_node:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(CONNECT_SECONDS)
            sock.connect(ep.uds_path)
        else:
            sock = socket.create_connection((ep.host, ep.tcp_port), timeout=CONNECT_SECONDS)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(None)
        ts.write_frame(sock, ep.token)
        self._sock = sock
        threading.Thread(target=self._read, args=(sock,), daemon=True,
                         name="task-link").start()

    def _read(self, sock: socket.socket) -> None:
        try:
            while True:
                request_id, ok, body = pickle.loads(ts.read_frame(sock))
                with self._lock:
                    future = self._pending.pop(request_id, None)
                if future is None:
                    continue
                if ok:
                    future.set_result(body)
                else:
                    future.set_exception(RemoteError(pickle.loads(body)))
        except (OSError, ts.ConnectionLost, EOFError, pickle.UnpicklingError):
            with self._lock:
                self._break_locked()

    def _break_locked(self) -> None:
        """Fail every waiting request; the link takes no more."""
        self._broken = True
        if self._sock is not None:
            # shutdown wakes the reader's recv; it fails only when the peer has already
            # ended the connection, and close() is safe either way
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
        pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(RemoteError(died()))

    def close(self) -> None:
        with self._lock:
            self._break_locked()
