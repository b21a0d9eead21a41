"""Sender: the sending end of one Motion channel, over a shm or TCP Link.

A Sender sends the channel's schema once (when it is given to connect, else before the
first batch), then batches, then END from finish(), or ERROR from fail(). It checks the
receiver's control frames before every frame: after STOP (the receiver needs no more rows,
e.g. a LIMIT is satisfied) send() returns False and sends nothing; after CANCEL, or when
the connection breaks, it raises MotionError. close() without finish() drops the
connection, which the receiver reports as a sender lost before end of stream.

A Sender is used by one thread; only abort() (the service cancelling a query) may come
from another.
"""

from __future__ import annotations

import pyarrow as pa

from motion import frames
from motion.channel import ChannelStats
from motion.errors import INTERNAL, MotionError, QUERY_CANCELED
from motion.frames import Kind
from motion.link import Link

FINISH_TIMEOUT = 10.0  # how long finish() waits for the receiver to take END and hang up

_OPEN, _STOPPED, _DONE = "open", "stopped", "done"


class Sender:
    """Sends batches of one channel; see the module docstring."""

    def __init__(self, link: Link, channel_key: tuple, sender_index: int,
                 schema: pa.Schema | None, on_close=None):
        self.channel_key = channel_key
        self.sender_index = sender_index
        self._link = link
        self._on_close = on_close
        self._state = _OPEN
        self._schema = None if schema is None else frames.plain_schema(schema)
        self._schema_len = 0
        self._transport = link.transport
        self._frames = self._rows = self._bytes = 0
        if self._schema is not None:
            self._send_schema()

    def send(self, batch: pa.RecordBatch) -> bool:
        """Send one batch; False (and nothing sent) once the receiver wants no more."""
        if self._state == _STOPPED:
            return False
        self._check_open("send")
        if self._control():
            return False
        if self._schema is None:
            self._schema = frames.plain_schema(batch.schema)
        batch = frames.plain_batch(batch, self._schema)
        if not self._schema_len:
            self._send_schema()
        if batch.num_rows == 0:
            return True
        try:
            n = self._link.send_batch(batch, self._schema, self._schema_len)
        except MotionError:
            if self._control():  # the receiver hung up after saying STOP
                return False
            raise
        self._count(n, batch.num_rows)
        return True

    def finish(self) -> None:
        """Send END and close. Raises MotionError if the query was cancelled."""
        if self._state == _STOPPED:
            self.close()
            return
        self._check_open("finish")
        try:
            if self._control():
                return
            if self._schema is not None and not self._schema_len:
                self._send_schema()
            self._link.send_body(Kind.END, b"")
            self._count(0, 0)
            self._state = _DONE
            seen = self._link.wait_closed(FINISH_TIMEOUT)
            if Kind.CANCEL in seen:
                raise self._cancelled()
        finally:
            self.close()

    def fail(self, message: str, sqlstate: str = INTERNAL, kind: str = "") -> None:
        """Send ERROR (the receiver raises MotionError with `message`, `sqlstate` and
        `kind`) and close. Best effort: if the connection is already gone the receiver
        knows anyway."""
        if self._state == _STOPPED:  # the receiver is not listening any more
            self.close()
            return
        if self._state == _DONE or self._link is None:
            return
        try:
            body = frames.error_body(message, sqlstate, kind)
            self._link.send_body(Kind.ERROR, body)
            self._count(len(body), 0)
            self._state = _DONE
            self._link.wait_closed(FINISH_TIMEOUT)
        except MotionError:
            pass
        finally:
            self.close()

    def stats(self) -> ChannelStats:
        return ChannelStats(transport=self._transport, frames=self._frames, rows=self._rows,
                            bytes=self._bytes)

    def close(self) -> None:
        """Close the connection; without finish() first the receiver sees a lost sender."""
        if self._link is None:
            return
        self._state = _DONE
        link, self._link = self._link, None
        link.close()
        if self._on_close is not None:
            self._on_close(self)

    def abort(self, error: MotionError | None = None) -> None:
        """From any thread: make the current and later calls fail (query cancelled)."""
        link = self._link
        if link is not None:
            link.abort(error)

    def __enter__(self) -> "Sender":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            if self._link is not None and self._state != _DONE:
                self.finish()
        else:
            self.fail(f"{type(exc).__name__}: {exc}", getattr(exc, "sqlstate", INTERNAL))
        self.close()

    # --- internals ------------------------------------------------------------------------
    def _send_schema(self) -> None:
        body = frames.schema_body(self._schema)
        self._link.send_body(Kind.SCHEMA, body)
        self._schema_len = len(body)
        self._count(len(body), 0)

    def _control(self) -> bool:
        """Act on control frames: True after STOP; raises after CANCEL."""
        seen = self._link.poll()
        if Kind.CANCEL in seen:
            raise self._cancelled()
        if Kind.STOP in seen:
            self._state = _STOPPED
            return True
        return False

    def _cancelled(self) -> MotionError:
        return MotionError(f"motion channel {self.channel_key} sender {self.sender_index}: "
                           "query cancelled", QUERY_CANCELED)

    def _check_open(self, what: str) -> None:
        if self._link is None or self._state != _OPEN:
            raise MotionError(f"motion channel {self.channel_key} sender {self.sender_index}: "
                              f"{what} after finish, fail or close", INTERNAL)
        if self._link.aborted is not None:
            raise self._link.aborted

    def _count(self, nbytes: int, rows: int) -> None:
        self._frames += 1
        self._bytes += nbytes
        self._rows += rows

    def __reduce__(self):
        raise TypeError("a Sender is bound to its process and connection")
