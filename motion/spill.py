"""Spill files: where a receiver parks frames its consumer has not asked for yet.

One SpillFile per receiver (inbox). It is an unnamed file in the service's spill directory
(O_TMPFILE where the file system has it, else created and unlinked at once), so no name
is ever visible and a killed process leaves nothing on disk: the kernel frees the space
when the descriptor closes. Frames are appended; reading a frame punches a hole where it
was (space returns at once) and, once no unread frame is left, the file is truncated and
appending starts again at offset 0. close() drops the whole file.

Writers (the I/O thread) and the reader (the consumer) work on disjoint ranges with
pwrite/pread; the offsets and the count of live frames are kept under a lock.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
import threading

import pyarrow as pa

from motion.errors import from_os_error

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02
ALIGN = 64  # frames start 64-aligned so that the buffers read back are aligned too

try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _fallocate = _libc.fallocate
    _fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
    _fallocate.restype = ctypes.c_int
except (OSError, AttributeError):  # not Linux/glibc: space returns at truncation only
    _fallocate = None


class SpillFile:
    """An append-only unnamed file of frames, created lazily in `spill_dir`."""

    def __init__(self, spill_dir: str):
        self._dir = spill_dir
        self._file = None
        self._end = 0
        self._live = 0
        self._lock = threading.Lock()
        self.closed = False

    def reserve(self, length: int) -> int:
        """The offset where a frame of `length` bytes is to be written; counts it live."""
        with self._lock:
            if self.closed:
                raise from_os_error(OSError(9, "spill file closed"), "spilling a motion frame")
            if self._file is None:
                try:
                    self._file = tempfile.TemporaryFile(dir=self._dir,
                                                        prefix="raympp-motion-spill-")
                except OSError as exc:
                    raise from_os_error(exc, f"creating a spill file in {self._dir}") from None
            offset = self._end
            self._end += (length + ALIGN - 1) // ALIGN * ALIGN
            self._live += 1
            return offset

    def write(self, offset: int, data) -> None:
        """Write `data` (any buffer) at `offset`, a range reserved before."""
        view = memoryview(data).cast("B")
        try:
            fd = self._file.fileno()
            while len(view):
                n = os.pwrite(fd, view, offset)
                view, offset = view[n:], offset + n
        except (OSError, ValueError, AttributeError) as exc:  # the latter two: closed under us
            err = exc if isinstance(exc, OSError) else OSError(9, "spill file closed")
            raise from_os_error(err, "writing a motion spill file") from None

    def read(self, offset: int, length: int) -> pa.Buffer:
        """The frame at `offset` as a new buffer; its space is given back."""
        buf = pa.allocate_buffer(length)
        view = memoryview(buf)
        try:
            fd = self._file.fileno()
            pos = 0
            while pos < length:
                n = os.preadv(fd, [view[pos:]], offset + pos)
                if n == 0:
                    raise OSError(5, "spill file shorter than expected")
                pos += n
        except (OSError, ValueError, AttributeError) as exc:
            err = exc if isinstance(exc, OSError) else OSError(9, "spill file closed")
            raise from_os_error(err, "reading a motion spill file") from None
        self.discard(offset, length)
        return buf

    def discard(self, offset: int, length: int) -> None:
        """Forget a frame (read, or dropped unread)."""
        with self._lock:
            if self._file is None or self.closed:
                return
            self._live -= 1
            fd = self._file.fileno()
            if self._live == 0:
                os.ftruncate(fd, 0)
                self._end = 0
            elif _fallocate is not None:
                # Best effort: a file system without hole punching keeps the space until
                # the file empties.
                _fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, offset, length)

    def size_on_disk(self) -> int:
        """Bytes the file occupies (for tests)."""
        with self._lock:
            if self._file is None:
                return 0
            return os.fstat(self._file.fileno()).st_blocks * 512

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._file is not None:
                self._file.close()
                self._file = None
