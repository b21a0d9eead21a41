"""Receiver: the consumer's view of one channel key, fed by n senders.

`batches()` yields batches of all senders in arrival order until every sender has sent END
(Gather, Redistribute and Broadcast receivers); `streams()` gives one iterator per sender
(Gather Merge merges them). Either raises MotionError as soon as any sender fails, one is
lost before END, or the query is cancelled: the query fails as a whole, so an error on one
stream is reported on all of them. Batches are zero-copy views of shared memory for shm
senders; holding them keeps that memory, and dropping them gives it back to the sender.

`memory` is the inbox's InboxMemory (peak and spilled bytes of its frames; inbox.py), also
on each iterator, so that the operator reading them can report it.

close() tells the senders still sending to STOP (they see send() return False), drops
queued and spilled frames, and forgets the channel key: late senders are turned away.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from motion.channel import ChannelStats
from motion.errors import INTERNAL, MotionError
from motion.inbox import Inbox, InboxMemory


class Receiver:
    """Receiving end of channel `channel_key` from `n_senders` senders."""

    def __init__(self, inbox: Inbox, on_close):
        self._inbox = inbox
        self._on_close = on_close
        self._mode: str | None = None
        self._closed = False

    @property
    def channel_key(self) -> tuple:
        return self._inbox.key

    @property
    def n_senders(self) -> int:
        return self._inbox.n_senders

    @property
    def memory(self) -> InboxMemory:
        return self._inbox.memory

    @property
    def schema(self) -> pa.Schema | None:
        """The channel's schema once a sender has sent it."""
        return self._inbox.schema

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Batches of every sender, in arrival order, until all sent END."""
        self._claim("batches")
        return self._iterate(None)

    def streams(self) -> list[Iterator[pa.RecordBatch]]:
        """One iterator per sender (index order), each until that sender's END."""
        self._claim("streams")
        return [self._iterate(i) for i in range(self._inbox.n_senders)]

    def stats(self) -> list[ChannelStats]:
        """Counters of each sender's channel (index order); rows are rows yielded."""
        return self._inbox.stats()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._on_close(self._inbox)

    def __reduce__(self):
        raise TypeError("a Receiver is bound to its process; open one where it is read")

    def __enter__(self) -> "Receiver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _claim(self, mode: str) -> None:
        if self._mode is not None:
            raise MotionError(f"receiver of channel {self.channel_key} is already read "
                              f"through {self._mode}()", INTERNAL)
        self._mode = mode

    def _iterate(self, index: int | None) -> Iterator[pa.RecordBatch]:
        return _Batches(self._inbox, index)


class _Batches:
    """Iterator over an inbox. Not a generator: a suspended generator would keep the last
    batch alive, and with it a shared-memory slab its sender could already reuse."""

    __slots__ = ("_inbox", "_index", "_done")

    def __init__(self, inbox: Inbox, index: int | None):
        self._inbox, self._index, self._done = inbox, index, False

    def __iter__(self) -> "_Batches":
        return self

    @property
    def memory(self) -> InboxMemory:
        return self._inbox.memory

    def __next__(self) -> pa.RecordBatch:
        if self._done:
            raise StopIteration
        batch = self._inbox.next_batch(self._index)
        if batch is None:
            self._done = True
            raise StopIteration
        return batch
