"""Shared-memory transport between processes on one node: memfd slabs, fds over a Unix socket.

Sender side. A SlabPool (one per MotionService) hands out slabs: anonymous memory files
(os.memfd_create) mapped read-write. ShmLink writes each large BATCH straight into a slab
with Arrow's IPC writer, the one copy on this path, and sends over a SOCK_SEQPACKET Unix
socket a small frame whose body is a descriptor (slab id, offset, length); the slab's fd
rides along (SCM_RIGHTS) the first time this connection uses that slab. Bodies up to
INLINE_MAX travel inside the socket message instead (schemas, small batches, errors).

Receiver side. SlabMap maps each slab once per connection, read-only, and closes the fd;
each frame becomes a pa.foreign_buffer into the mapping, so the batch read from it is
zero-copy. The buffer holds a lease: when the consumer drops the last array of that batch
(or the inbox spills or drops the frame), the lease tells the I/O thread, which sends
RELEASE back and the sender puts the slab back in its pool, its pages already faulted in.

Nothing is ever named in /dev/shm: a memfd lives while an fd or a mapping of it does, so a
killed process leaves nothing behind. Slabs still leased when a sender closes are simply
unmapped by the sender; the receiver's mapping keeps them alive until its batches go.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import socket
import struct
import threading
import time

import pyarrow as pa

from motion import frames
from motion.errors import INTERNAL, IO_ERROR, MotionError
from motion.frames import Kind
from motion.link import Link

SHM_DESC = struct.Struct("<IQQ")  # slab id, offset, length
INLINE_MAX = 64 << 10
MSG_MAX = frames.HEADER_SIZE + INLINE_MAX
MAX_FDS = 4
MAX_HELD = 64  # frames of one connection a receiver may keep zero-copy at once
# Bytes of slabs one link may have out (sent, not yet RELEASEd) before the sender waits.
# The receiver holds frames only within its memory budget (256 MB a process) and copies
# the rest to its spill file as it reads them, releasing their slabs; so past this bound
# the frames wait in the socket for the receiver's I/O thread, and waiting for it is
# back-pressure, not a deadlock (bounded anyway by IN_FLIGHT_WAIT_SECONDS).
MAX_IN_FLIGHT_BYTES = 512 << 20
IN_FLIGHT_WAIT_SECONDS = 30.0
_MIN_SLAB = 1 << 20
IDLE_SECONDS = 30.0
_PARALLEL_COPY = 8 << 20  # frames at least this large are copied by 2 threads
_RELEASE = struct.Struct("<I")


# --- mappings --------------------------------------------------------------------------------
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_MAP_FAILED = ctypes.c_void_p(-1).value


class _Mapping:
    """A shared mapping of a memfd, unmapped when this object goes. Made with libc mmap
    rather than the mmap module, which keeps a dup of the fd open per mapping: a receiver
    holds no fd at all for the slabs it has mapped."""

    __slots__ = ("address", "size")

    def __init__(self, fd: int, size: int, writable: bool):
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0)
        addr = _libc.mmap(None, size, prot, mmap.MAP_SHARED, fd, 0)
        if addr is None or addr == _MAP_FAILED:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self.address, self.size = addr, size

    def writable_buffer(self) -> pa.Buffer:
        """A mutable pa.Buffer over the mapping; it must not outlive this object."""
        return pa.py_buffer((ctypes.c_char * self.size).from_address(self.address))

    def close(self) -> None:
        if self.address:
            _libc.munmap(self.address, self.size)
            self.address = 0

    def __del__(self):
        self.close()


# --- sender side ---------------------------------------------------------------------------
class _Slab:
    __slots__ = ("id", "fd", "mapping", "buf", "capacity", "idle_since")

    def __init__(self, slab_id: int, capacity: int):
        fd = os.memfd_create("raympp-motion", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, capacity)
            self.mapping = _Mapping(fd, capacity, writable=True)
        except OSError:
            os.close(fd)
            raise
        self.id, self.fd, self.capacity = slab_id, fd, capacity
        self.idle_since = 0.0
        self.buf = self.mapping.writable_buffer()

    def close(self) -> None:
        """Unmap and close; only once nothing (writer, view) uses `buf` any more."""
        if self.fd < 0:
            return
        self.buf = None
        self.mapping.close()
        fd, self.fd = self.fd, -1
        os.close(fd)

    def __del__(self):  # a Sender dropped without close(): do not leak the fd
        try:
            self.close()
        except Exception:
            pass


def size_class(size: int) -> int:
    """Capacity of the slab for a frame of `size` bytes: at least 1 MB, else rounded up to
    a sixteenth of the next power of two (so at most 1/8 of a slab is never used)."""
    if size <= _MIN_SLAB:
        return _MIN_SLAB
    step = 1 << max(20, (size - 1).bit_length() - 4)
    return (size + step - 1) // step * step


class SlabPool:
    """Free slabs of one process, reused across channels, at most `limit_bytes` of them.

    Slabs come in size classes, kept in one list per capacity; a frame takes a slab of the
    smallest capacity that fits. When the pool is over its limit the largest free slabs
    are closed first; slabs unused for IDLE_SECONDS are closed by trim_idle()."""

    def __init__(self, limit_bytes: int):
        self.limit = limit_bytes
        self._free: dict[int, list[_Slab]] = {}
        self._free_bytes = 0
        self._next_id = 1
        self._lock = threading.Lock()
        self._closed = False

    def acquire(self, size: int) -> _Slab:
        capacity = size_class(size)
        with self._lock:
            for cap in sorted(c for c, slabs in self._free.items() if slabs and c >= capacity):
                slab = self._free[cap].pop()
                self._free_bytes -= cap
                return slab
            slab_id = self._next_id
            self._next_id += 1
        try:
            return _Slab(slab_id, capacity)
        except OSError as exc:
            raise MotionError(f"cannot allocate {capacity} bytes of shared memory: "
                              f"{exc.strerror or exc}", IO_ERROR) from None

    def give_back(self, slab: _Slab) -> None:
        evicted = []
        with self._lock:
            if self._closed or slab.capacity > self.limit:
                evicted.append(slab)
            else:
                slab.idle_since = time.monotonic()
                self._free.setdefault(slab.capacity, []).append(slab)
                self._free_bytes += slab.capacity
            while self._free_bytes > self.limit:
                cap = max(c for c, slabs in self._free.items() if slabs)
                evicted.append(self._free[cap].pop(0))
                self._free_bytes -= cap
        for old in evicted:
            old.close()

    def trim_idle(self, now: float | None = None) -> None:
        """Close free slabs nobody took for IDLE_SECONDS (their pages are memory)."""
        cutoff = (time.monotonic() if now is None else now) - IDLE_SECONDS
        idle = []
        with self._lock:
            for cap, slabs in self._free.items():
                keep = [s for s in slabs if s.idle_since >= cutoff]
                idle += [s for s in slabs if s.idle_since < cutoff]
                self._free[cap] = keep
                self._free_bytes -= cap * (len(slabs) - len(keep))
        for slab in idle:
            slab.close()

    def free_bytes(self) -> int:
        return self._free_bytes

    def close(self) -> None:
        with self._lock:
            self._closed = True
            free, self._free, self._free_bytes = self._free, {}, 0
        for slabs in free.values():
            for slab in slabs:
                slab.close()


class ShmLink(Link):
    """Sending end over a SOCK_SEQPACKET Unix socket, large bodies in pooled memfd slabs."""

    transport = "shm"

    def __init__(self, uds_path: str, pool: SlabPool, hello: bytes, what: str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.connect(uds_path)
        except OSError as exc:
            sock.close()
            raise MotionError(f"motion {what}: cannot reach the receiver's Unix socket: "
                              f"{exc.strerror or exc}", IO_ERROR) from None
        super().__init__(sock, what)
        self._pool = pool
        self._in_use: dict[int, _Slab] = {}
        self._in_flight = 0  # bytes of the slabs in _in_use
        self._lock = threading.Lock()  # on_release may run while close() does
        self.sendmsg([frames.header(Kind.HELLO, len(hello)), hello])

    def send_body(self, kind: Kind, body) -> None:
        n = len(body)
        if n <= INLINE_MAX:
            self.sendmsg([frames.header(kind, n), body])
            return
        slab = self._acquire(n)
        memoryview(slab.buf).cast("B")[:n] = memoryview(body).cast("B")
        self._send_slab(kind, slab, 0, n)

    def send_batch(self, batch: pa.RecordBatch, schema: pa.Schema, schema_len: int) -> int:
        size = pa.ipc.get_record_batch_size(batch)
        if size <= INLINE_MAX:
            body = batch.serialize()
            self.sendmsg([frames.header(Kind.BATCH, len(body)), body])
            return len(body)
        # The IPC stream writer writes the schema message first; the batch message follows
        # it, written straight into shared memory. The schema bytes are dead weight.
        slab = self._acquire(schema_len + size)
        try:
            sink = pa.FixedSizeBufferWriter(slab.buf)
            if size >= _PARALLEL_COPY:
                sink.set_memcopy_threads(2)
            writer = pa.ipc.new_stream(sink, schema)
            writer.write_batch(batch)
            end = sink.tell()
            del writer, sink
        except (pa.ArrowException, ValueError) as exc:
            self._pool.give_back(slab)
            raise MotionError(f"motion {self.what}: cannot write a batch: {exc}",
                              INTERNAL) from None
        if end - size != schema_len:
            self._pool.give_back(slab)
            raise MotionError(f"motion {self.what}: IPC writer wrote {end} bytes, expected "
                              f"{schema_len} + {size}", INTERNAL)
        self._send_slab(Kind.BATCH, slab, schema_len, size)
        return size

    def _acquire(self, size: int) -> _Slab:
        """A slab for the next frame, once this link has less than MAX_IN_FLIGHT_BYTES out:
        a sender faster than the receiver must not fill the node with queued frames."""
        deadline = time.monotonic() + IN_FLIGHT_WAIT_SECONDS
        while self._in_flight >= MAX_IN_FLIGHT_BYTES and time.monotonic() < deadline:
            if not self.await_control(0.05):
                break
        return self._pool.acquire(size)

    def _send_slab(self, kind: Kind, slab: _Slab, offset: int, length: int) -> None:
        desc = SHM_DESC.pack(slab.id, offset, length)
        # The fd goes with every frame: the receiver maps a slab for one frame only, so a
        # slab this side retires (the pool closes it) is not kept alive over there.
        fds = (slab.fd,)
        with self._lock:
            self._in_use[slab.id] = slab
            self._in_flight += slab.capacity
        try:
            self.sendmsg([frames.header(kind, len(desc), frames.FLAG_SHM), desc], fds)
        except MotionError:
            with self._lock:
                if self._in_use.pop(slab.id, None) is not None:
                    self._in_flight -= slab.capacity
            slab.close()
            raise

    def on_release(self, body: bytes) -> None:
        (slab_id,) = _RELEASE.unpack(body)
        with self._lock:
            slab = self._in_use.pop(slab_id, None)
            if slab is not None:
                self._in_flight -= slab.capacity
        if slab is not None:
            self._pool.give_back(slab)

    def on_close(self) -> None:
        with self._lock:
            leased, self._in_use = list(self._in_use.values()), {}
            self._in_flight = 0
        for slab in leased:  # the receiver may still read them: never reuse, just unmap
            slab.close()


# --- receiver side -------------------------------------------------------------------------
def release_frame(slab_id: int) -> bytes:
    return frames.control(Kind.RELEASE, _RELEASE.pack(slab_id))


def recv_message(sock: socket.socket) -> tuple[bytes, list[int]]:
    """One SEQPACKET message and the fds that came with it; (b'', []) at end of file."""
    msg, fds, flags, _ = socket.recv_fds(sock, MSG_MAX, MAX_FDS)
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        for fd in fds:
            os.close(fd)
        raise MotionError("motion shm message truncated", INTERNAL)
    return msg, fds


class _Lease:
    """Kept alive by the buffers of one frame; says RELEASE when they are all gone."""

    __slots__ = ("mapping", "slab_id", "post")

    def __init__(self, mapping: _Mapping, slab_id: int, post):
        self.mapping, self.slab_id, self.post = mapping, slab_id, post

    def __del__(self):
        try:
            self.post(self.slab_id)
        except Exception:  # interpreter shutdown, service gone: nothing to tell
            pass


class SlabMap:
    """The slabs one shm connection has shown this receiver, mapped read-only.

    A consumer that keeps many batches (a hash join's build side) would keep as many slabs,
    each an fd and a mapping in the sender and a mapping here; past MAX_HELD frames still
    leased, new frames are copied out of shared memory and their slabs released at once.
    Used by the I/O thread only."""

    def __init__(self, post_release):
        self._maps: dict[int, _Mapping] = {}
        self._post = post_release
        self.held = 0

    def released(self) -> None:
        self.held -= 1

    def adopt(self, slab_id: int, fd: int) -> None:
        try:
            self._maps[slab_id] = _Mapping(fd, os.fstat(fd).st_size, writable=False)
        except (OSError, ValueError) as exc:
            raise MotionError(f"cannot map a motion shm slab: {exc}", IO_ERROR) from None
        finally:
            os.close(fd)

    def frame(self, body) -> pa.Buffer:
        """The frame a descriptor body points at, as a zero-copy buffer with a lease."""
        if len(body) != SHM_DESC.size:
            raise MotionError("malformed motion shm descriptor", INTERNAL)
        slab_id, offset, length = SHM_DESC.unpack(body)
        # The mapping lives as long as the frame's buffers (the lease holds it): a slab is
        # mapped again, from the fd sent with it, for each frame it carries.
        mapping = self._maps.pop(slab_id, None)
        if mapping is None or offset + length > mapping.size:
            raise MotionError(f"motion shm descriptor points outside slab {slab_id}", INTERNAL)
        self.held += 1
        lease = _Lease(mapping, slab_id, self._post)
        buf = pa.foreign_buffer(mapping.address + offset, length, base=lease)
        if self.held <= MAX_HELD:
            return buf
        copy = pa.allocate_buffer(length)
        memoryview(copy).cast("B")[:] = memoryview(buf).cast("B")
        return copy

    def close(self) -> None:
        self._maps.clear()
