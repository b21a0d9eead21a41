"""The segment's task socket: the coordinator hands a query's slices to a segment, and
makes the calls of a transaction (begin, write, prepare, commit, DDL), hearing back their
results, over a connection it keeps open, not a Ray actor call.

A Ray actor call took 1.7-2.2 ms from the coordinator's dispatch until the slices started
on the segment, and the results about 1.5 ms to come back after the last row: most of
the 5-8 ms of a `SELECT count(*)` of a small table; an autocommit INSERT made five such
round trips. Here a request is one write on a Unix socket (a TCP connection to a segment
on another node) and the reply one read. Ray still starts, places and restarts the
segment, and recovers and cancels through actor calls; a coordinator without an endpoint
(or whose connection fails) uses the actor calls as before.

Frames are an 8-byte big-endian length and a pickle. A connection first sends the token
the segment gave the coordinator through Ray (`TaskEndpoint.token`, random per process),
so nothing but that coordinator can hand this process a pickle. Then each request is
(request id, slice tasks or a messages.MethodCall) and each reply (request id, ok,
results or the exception); requests run in threads of their own (a query's slices wait
on other segments' slices), replies go back in the order they finish. The connection
ends with the process: a coordinator whose connection is open knows the process has not
restarted (coordinator/cluster.py's heal asks Ray only about the others).
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import os
import pickle
import secrets
import socket
import struct
import threading
import uuid
from typing import Callable

log = logging.getLogger(__name__)

# 8 bytes: a write's batches travel here, and a million wide rows pass 4 GiB
_LENGTH = struct.Struct(">Q")
TOKEN_BYTES = 32


@dataclasses.dataclass(frozen=True, slots=True)
class TaskEndpoint:
    """Where a segment takes slice tasks: a Unix socket (abstract, same node) and TCP."""

    node_id: str
    host: str
    tcp_port: int
    uds_path: str
    token: bytes


class ConnectionLost(Exception):
    """The other end closed the connection or broke it."""


def write_frame(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_LENGTH.pack(len(payload)) + payload)


def read_frame(sock: socket.socket, max_bytes: int | None = None) -> bytes:
    """One frame; ConnectionLost if it is longer than `max_bytes` (a peer that has not
    given the token yet is not trusted with an allocation of its choosing)."""
    (n,) = _LENGTH.unpack(_read_exactly(sock, _LENGTH.size))
    if max_bytes is not None and n > max_bytes:
        raise ConnectionLost(f"a frame of {n} bytes where at most {max_bytes} may come")
    return _read_exactly(sock, n)


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionLost("connection closed")
        got += k
    return bytes(buf)


def dumps_error(error: BaseException) -> bytes:
    """An exception as a reply can carry it: itself, or its type and text when it does
    not pickle (the coordinator reports it as an internal error, as it did Ray's)."""
    try:
        data = pickle.dumps(error, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)
        return data
    except Exception:  # noqa: BLE001 - any object that does not round-trip
        return pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"))


class TaskServer:
    """Accepts the coordinator's connections and runs `handler(tasks)` per request."""

    def __init__(self, host: str, node_id: str, handler: Callable):
        self._handler = handler
        self._token = secrets.token_bytes(TOKEN_BYTES)
        self._tcp = socket.create_server((host, 0))
        self._uds = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        uds_path = f"\0raympp-tasks-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._uds.bind(uds_path)
        self._uds.listen(64)
        self.endpoint = TaskEndpoint(node_id, host, self._tcp.getsockname()[1], uds_path,
                                     self._token)
        for listener in (self._tcp, self._uds):
            threading.Thread(target=self._accept, args=(listener,), daemon=True,
                             name="task-accept").start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            if conn.family != socket.AF_UNIX:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="task-conn").start()

    def _serve(self, conn: socket.socket) -> None:
        lock = threading.Lock()
        try:
            if not hmac.compare_digest(read_frame(conn, TOKEN_BYTES), self._token):
                log.warning("a slice-task connection gave a wrong token: closed")
                return
            while True:
                request_id, tasks = pickle.loads(read_frame(conn))
                threading.Thread(target=self._run, args=(conn, lock, request_id, tasks),
                                 daemon=True, name="task-run").start()
        except (ConnectionLost, OSError):
            pass  # the coordinator went away: its queries are cancelled by their channels
        finally:
            with lock:
                conn.close()

    def _run(self, conn: socket.socket, lock: threading.Lock, request_id: int, tasks) -> None:
        try:
            reply = pickle.dumps((request_id, True, self._handler(tasks)),
                                 protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as e:  # noqa: BLE001 - every failure goes to the coordinator
            reply = pickle.dumps((request_id, False, dumps_error(e)))
        try:
            with lock:
                write_frame(conn, reply)
        except OSError:
            pass  # the connection is gone: so is the coordinator that waited for this

    def close(self) -> None:
        for listener in (self._tcp, self._uds):
            listener.close()
