"""The COPY sub-protocols: COPY ... FROM STDIN (copy-in) and COPY ... TO STDOUT (copy-out).

Moves CopyData between the client and the engine's CopyIn sink / CopyOut source; parsing
the text, CSV or binary COPY formats is the engine's job. Copy-in coalesces the client's
CopyData messages (psql sends one per line; PostgreSQL does not promise they align with
rows) into large chunks before each call into the engine. Engine calls block, so they go
through `call`, which runs them on the session's worker thread.
"""

from __future__ import annotations

import logging
from typing import Awaitable, Callable

from coordinator.pgwire import backend, codec
from coordinator.pgwire.boundary import CancelToken, CopyFormat, CopyIn, CopyOut
from coordinator.pgwire.stream import Connection
from planner import errors

log = logging.getLogger(__name__)

Call = Callable[..., Awaitable]
CHUNK_BYTES = 256 << 10


def _format(fmt: CopyFormat) -> int:
    return codec.BINARY if fmt is CopyFormat.BINARY else codec.TEXT


async def copy_in(conn: Connection, call: Call, sink: CopyIn) -> str:
    """Run copy-in to the end; returns the tag 'COPY n'. Any failure aborts the sink."""
    fmt = _format(sink.format)
    conn.send(backend.CopyInResponse(fmt, (fmt,) * sink.column_count))
    await conn.flush()
    pending: list[bytes] = []
    size, aborted = 0, False
    try:
        while True:
            msg = await conn.read()
            if isinstance(msg, codec.CopyData):
                pending.append(msg.data)
                size += len(msg.data)
                if size >= CHUNK_BYTES:
                    await call(sink.write, b"".join(pending))
                    pending, size = [], 0
            elif isinstance(msg, codec.CopyDone):
                if pending:
                    await call(sink.write, b"".join(pending))
                return f"COPY {await call(sink.finish)}"
            elif isinstance(msg, codec.CopyFail):
                aborted = True
                await call(sink.abort, msg.message)
                raise errors.QueryCanceled(f"COPY from stdin failed: {msg.message}")
            elif isinstance(msg, (codec.Flush, codec.Sync)):
                continue  # PostgreSQL ignores these during copy-in
            else:
                raise errors.ProtocolViolation(
                    f"unexpected message type {type(msg).__name__} during COPY from stdin")
    except BaseException as e:
        if not aborted:
            await _abort(call, sink, e)
        raise


async def _abort(call: Call, sink: CopyIn, cause: BaseException) -> None:
    reason = getattr(cause, "message", None) or type(cause).__name__
    try:
        await call(sink.abort, reason)
    except Exception:  # the original error is what the client must see
        log.exception("aborting COPY FROM STDIN failed")


def _take(chunks, budget: int) -> list[bytes] | None:
    """Up to `budget` bytes of chunks (at least one); None once the source is exhausted."""
    out, size = [], 0
    for chunk in chunks:
        out.append(chunk)
        size += len(chunk)
        if size >= budget:
            break
    return out or None


async def copy_out(conn: Connection, call: Call, source: CopyOut, cancel: CancelToken) -> str:
    """Run copy-out to the end; returns the tag 'COPY n'."""
    fmt = _format(source.format)
    conn.send(backend.CopyOutResponse(fmt, (fmt,) * source.column_count))
    chunks = iter(source.chunks)
    try:
        while (taken := await call(_take, chunks, CHUNK_BYTES)) is not None:
            for chunk in taken:
                conn.send_bytes(codec.frame(codec.Backend.COPY_DATA, chunk))
            await conn.flush_if_full()
            if cancel.cancelled:
                raise errors.QueryCanceled(cancel.message)
    except BaseException:
        close = getattr(chunks, "close", None)
        if close is not None:
            await call(close)
        raise
    conn.send(backend.CopyDone())
    return f"COPY {await call(source.row_count)}"
