"""Frames of a Motion channel: a 16-byte header and a body, the same on every transport.

A channel carries, from one sender to one receiver: HELLO (channel key and sender index,
once), SCHEMA (an Arrow IPC schema message, once), BATCH (one Arrow IPC record batch
message each), then END, or ERROR (JSON: SQLSTATE and message) which fails the query.
Back from the receiver flow small control frames: RELEASE (a shared-memory slab may be
reused), STOP (the receiver needs no more rows) and CANCEL (the query was cancelled).

Header: magic b"RMF1", kind (u8), flags (u8), reserved (u16), body length (u64), little
endian. FLAG_SHM says the body is a shared-memory descriptor (motion/shm.py) instead of the
message itself. Dictionary-encoded columns are decoded before they are framed, so that each
BATCH is one self-contained IPC message read against the channel's schema.

What it leaves to others: sockets and memory (shm.py, tcp.py), queues (inbox.py).
"""

from __future__ import annotations

import enum
import json
import struct

import pyarrow as pa

from motion.errors import INTERNAL, MotionError

MAGIC = b"RMF1"
HEADER = struct.Struct("<4sBBHQ")
HEADER_SIZE = HEADER.size
FLAG_SHM = 0x01
# Bodies other than BATCH are small; a larger length means a corrupt or hostile stream.
MAX_SMALL_BODY = 16 << 20
MAX_ERROR_TEXT = 16 << 10
MAX_KIND_TEXT = 64  # an error class's name
_EMPTY = pa.py_buffer(b"")


class Kind(enum.IntEnum):
    HELLO = 1
    SCHEMA = 2
    BATCH = 3
    END = 4
    ERROR = 5
    RELEASE = 16
    STOP = 17
    CANCEL = 18


SENDER_KINDS = frozenset({Kind.HELLO, Kind.SCHEMA, Kind.BATCH, Kind.END, Kind.ERROR})
CONTROL_KINDS = frozenset({Kind.RELEASE, Kind.STOP, Kind.CANCEL})


def header(kind: Kind, length: int, flags: int = 0) -> bytes:
    return HEADER.pack(MAGIC, kind, flags, 0, length)


def parse_header(data) -> tuple[Kind, int, int]:
    """(kind, flags, body length) of the first HEADER_SIZE bytes of `data`."""
    if len(data) < HEADER_SIZE:
        raise MotionError(f"truncated motion frame header ({len(data)} bytes)", INTERNAL)
    magic, kind, flags, _, length = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise MotionError(f"bad motion frame magic {bytes(magic)!r}", INTERNAL)
    try:
        kind = Kind(kind)
    except ValueError:
        raise MotionError(f"unknown motion frame kind {kind}", INTERNAL) from None
    if kind != Kind.BATCH and not flags & FLAG_SHM and length > MAX_SMALL_BODY:
        raise MotionError(f"motion {kind.name} frame of {length} bytes is too large", INTERNAL)
    return kind, flags, length


def control(kind: Kind, body: bytes = b"") -> bytes:
    """A whole control frame (header and body) as bytes."""
    return header(kind, len(body)) + body


# --- channel keys and HELLO ----------------------------------------------------------------
def check_key(key) -> tuple:
    """The channel key as a tuple of str/int, the first element being the query id."""
    if not isinstance(key, tuple) or not key:
        raise MotionError(f"a channel key is a non-empty tuple, not {key!r}", INTERNAL)
    for part in key:
        if not isinstance(part, (str, int)) or isinstance(part, bool):
            raise MotionError(f"channel key parts are str or int, not {part!r}", INTERNAL)
    return key


def hello_body(key: tuple, sender_index: int) -> bytes:
    # JSON, not pickle: anyone who can reach the port can send a HELLO.
    return json.dumps({"key": list(check_key(key)), "sender": int(sender_index)}).encode()


def read_hello(buf) -> tuple[tuple, int]:
    try:
        obj = json.loads(memoryview(buf).tobytes())
        key, sender = check_key(tuple(obj["key"])), obj["sender"]
    except (ValueError, KeyError, TypeError) as exc:
        raise MotionError(f"malformed motion HELLO: {exc}", INTERNAL) from None
    if not isinstance(sender, int) or sender < 0:
        raise MotionError(f"malformed motion HELLO: sender {sender!r}", INTERNAL)
    return key, sender


# --- schema and batches --------------------------------------------------------------------
def plain_schema(schema: pa.Schema) -> pa.Schema:
    """The schema a channel carries: dictionary fields replaced by their value types."""
    if not any(pa.types.is_dictionary(f.type) for f in schema):
        return schema
    fields = [f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f
              for f in schema]
    return pa.schema(fields, metadata=schema.metadata)


def plain_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` with dictionaries decoded, checked against the channel `schema`."""
    if any(pa.types.is_dictionary(t) for t in batch.schema.types):
        cols = [c.dictionary_decode() if pa.types.is_dictionary(c.type) else c
                for c in batch.columns]
        batch = pa.RecordBatch.from_arrays(cols, schema=plain_schema(batch.schema))
    if not batch.schema.equals(schema):
        raise MotionError(f"batch schema {batch.schema} differs from the channel's {schema}",
                          INTERNAL)
    return batch


def schema_body(schema: pa.Schema) -> pa.Buffer:
    return schema.serialize()


def read_schema(buf: pa.Buffer) -> pa.Schema:
    try:
        return pa.ipc.read_schema(buf)
    except (pa.ArrowException, ValueError) as exc:
        raise MotionError(f"malformed motion SCHEMA frame: {exc}", INTERNAL) from None


def batch_body(batch: pa.RecordBatch) -> pa.Buffer:
    """One IPC record batch message (a copy; shm.py writes large ones straight to memory)."""
    return batch.serialize()


def read_batch(buf: pa.Buffer, schema: pa.Schema) -> pa.RecordBatch:
    """The batch of a BATCH body, zero-copy: its buffers are slices of `buf`."""
    try:
        return pa.ipc.read_record_batch(pa.ipc.read_message(buf), schema)
    except (pa.ArrowException, ValueError, OSError) as exc:
        raise MotionError(f"malformed motion BATCH frame: {exc}", INTERNAL) from None


def error_body(message: str, sqlstate: str = INTERNAL, kind: str = "") -> bytes:
    """ERROR body: JSON with the sender's SQLSTATE, message (cut to MAX_ERROR_TEXT) and
    the kind of its error (MotionError.kind)."""
    if len(message) > MAX_ERROR_TEXT:
        message = message[:MAX_ERROR_TEXT] + "..."
    return json.dumps({"sqlstate": str(sqlstate)[:5], "message": message,
                       "kind": str(kind)[:MAX_KIND_TEXT]}).encode()


def read_error(buf) -> MotionError:
    """The error an ERROR body says the sender had."""
    try:
        obj = json.loads(memoryview(buf).tobytes())
        return MotionError(str(obj["message"]), str(obj["sqlstate"]), str(obj.get("kind", "")))
    except (ValueError, KeyError, TypeError, AttributeError):
        return MotionError(memoryview(buf).tobytes().decode("utf-8", "replace"), INTERNAL)


def empty() -> pa.Buffer:
    return _EMPTY
