"""MotionService: the Motion endpoint of one process (a segment actor or the coordinator).

It receives on a TCP port bound to `host` and on a Unix socket, both served by one I/O
thread (ioloop.py), and sends through Senders it connects to other services:

    svc = MotionService("127.0.0.1", spill_dir, memory_limit_bytes=256 << 20)
    ep = svc.endpoint()                      # picklable; give it to the sending slices
    rx = svc.open_receiver((qid, motion_id, receiver_index), n_senders)
    tx = other.connect(ep, (qid, motion_id, receiver_index), sender_index, same_node=True)

Channel keys are tuples of str/int whose first element is the query id; `cancel(qid)`
tears down every inbox and Sender of that query in this process and turns away its late
senders. Senders may connect before their receiver is opened: their frames wait in an
inbox under the same memory limit (and spill), until open_receiver claims it.

What it leaves to others: which slices run where and the channel keys (the dispatcher),
partitioning rows (route.py), turning MotionError into the query's error (the caller).
"""

from __future__ import annotations

import collections
import os
import threading

import pyarrow as pa

from motion import frames
from motion.channel import Endpoint, local_node_id
from motion.errors import INTERNAL, MotionError, QUERY_CANCELED
from motion.frames import Kind
from motion.inbox import Budget, Inbox, MemoryPool
from motion.ioloop import IoLoop
from motion.receiver import Receiver
from motion.sender import Sender
from motion.shm import ShmLink, SlabPool
from motion.tcp import TcpLink

# Free shared memory a process keeps for reuse (pages already faulted in): enough for two
# in-flight frames of 128 MB. Idle slabs go after shm.IDLE_SECONDS.
DEFAULT_SHM_POOL_BYTES = 512 << 20
_TOMBSTONES = 65536  # closed channel keys and cancelled query ids remembered


class _Recent:
    """A bounded set: the most recent `limit` items."""

    def __init__(self, limit: int):
        self._items: collections.OrderedDict = collections.OrderedDict()
        self._limit = limit

    def add(self, item) -> None:
        self._items[item] = None
        self._items.move_to_end(item)
        while len(self._items) > self._limit:
            self._items.popitem(last=False)

    def __contains__(self, item) -> bool:
        return item in self._items


class MotionService:
    """One per process; see the module docstring. Thread-safe."""

    def __init__(self, host: str, spill_dir: str, memory_limit_bytes: int, *,
                 node_id: str | None = None,
                 shm_pool_bytes: int = DEFAULT_SHM_POOL_BYTES):
        if memory_limit_bytes < 0:
            raise ValueError(f"memory_limit_bytes must be >= 0, got {memory_limit_bytes}")
        os.makedirs(spill_dir, exist_ok=True)
        self.spill_dir = spill_dir
        self._budget = Budget(memory_limit_bytes)
        self._pool = SlabPool(shm_pool_bytes)
        self._lock = threading.Lock()
        self._inboxes: dict[tuple, Inbox] = {}
        self._pools: dict = {}  # query id -> its MemoryPool here (use_memory)
        self._claimed: set[tuple] = set()
        self._closed_keys = _Recent(_TOMBSTONES)
        self._cancelled = _Recent(_TOMBSTONES)
        self._senders: set[Sender] = set()
        self._closed = False
        self._loop = IoLoop(host, self._resolve, on_tick=self._pool.trim_idle)
        self._endpoint = Endpoint(node_id or local_node_id(), host, self._loop.tcp_port,
                                  self._loop.uds_path)

    def endpoint(self) -> Endpoint:
        return self._endpoint

    def open_receiver(self, channel_key: tuple, n_senders: int) -> Receiver:
        """The receiving end of `channel_key`, fed by senders 0 .. n_senders-1."""
        key = frames.check_key(channel_key)
        if n_senders < 1:
            raise MotionError(f"a receiver needs at least one sender, got {n_senders}",
                              INTERNAL)
        with self._lock:
            self._check_usable(key)
            if key in self._claimed or key in self._closed_keys:
                raise MotionError(f"channel {key} was opened before", INTERNAL)
            inbox = self._inboxes.get(key)
            if inbox is None:
                inbox = self._inboxes[key] = self._new_inbox(key)
            self._claimed.add(key)
        inbox.set_senders(n_senders)
        return Receiver(inbox, self._close_receiver)

    def connect(self, endpoint: Endpoint, channel_key: tuple, sender_index: int,
                same_node: bool | None = None, *, schema: pa.Schema | None = None) -> Sender:
        """A Sender to the receiver of `channel_key` at `endpoint`: over shared memory when
        same_node (None: when the endpoint's node_id is this process's), else over TCP.
        With `schema`, it is sent at once, so that even an empty stream carries it."""
        key = frames.check_key(channel_key)
        with self._lock:
            self._check_usable(key)
        if same_node is None:
            same_node = endpoint.node_id == self._endpoint.node_id
        hello = frames.hello_body(key, sender_index)
        what = f"channel {key} sender {sender_index}"
        if same_node:
            link = ShmLink(endpoint.uds_path, self._pool, hello, what)
        else:
            link = TcpLink(endpoint.host, endpoint.tcp_port, hello, what)
        try:
            sender = Sender(link, key, sender_index, schema, on_close=self._forget_sender)
        except BaseException:
            link.close()
            raise
        with self._lock:
            if self._closed or key[0] in self._cancelled:
                sender.abort(self._cancel_error(key[0]))
            self._senders.add(sender)
        return sender

    def use_memory(self, query_id, pool: MemoryPool) -> None:
        """Charge the frames of `query_id` received here to `pool` (its memory budget on
        this process), those already held included."""
        with self._lock:
            self._pools[query_id] = pool
            inboxes = [i for k, i in self._inboxes.items() if k[0] == query_id]
        for inbox in inboxes:
            inbox.memory.move_to(pool)

    def forget_memory(self, query_id) -> None:
        """The query is over here: its later inboxes (late senders) use the service's
        own budget."""
        with self._lock:
            self._pools.pop(query_id, None)

    def cancel(self, query_id) -> None:
        """Tear down every channel of `query_id` in this process: its receivers raise
        MotionError (57014), its senders fail, and its late senders are turned away."""
        with self._lock:
            self._cancelled.add(query_id)
            inboxes = [i for k, i in self._inboxes.items() if k[0] == query_id]
            for inbox in inboxes:
                del self._inboxes[inbox.key]
                self._claimed.discard(inbox.key)
            senders = [s for s in self._senders if s.channel_key[0] == query_id]
        self._tear_down(inboxes, senders, self._cancel_error(query_id))

    def close(self) -> None:
        """Cancel everything, stop and join the I/O thread, free shared memory."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            inboxes, self._inboxes = list(self._inboxes.values()), {}
            senders = list(self._senders)
        self._tear_down(inboxes, senders,
                        MotionError("motion service closed", QUERY_CANCELED))
        self._loop.close()
        self._pool.close()

    def memory_used(self) -> int:
        """Bytes of queued frames held in memory by the inboxes of queries without a
        budget of their own here (use_memory)."""
        return self._budget.used

    def io_thread(self) -> threading.Thread:
        return self._loop.thread

    def __reduce__(self):
        raise TypeError("a MotionService is bound to its process; pass its endpoint()")

    def __enter__(self) -> "MotionService":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------
    def _check_usable(self, key: tuple) -> None:
        if self._closed:
            raise MotionError("motion service closed", QUERY_CANCELED)
        if key[0] in self._cancelled:
            raise self._cancel_error(key[0])

    @staticmethod
    def _cancel_error(query_id) -> MotionError:
        return MotionError(f"query {query_id} cancelled", QUERY_CANCELED)

    def _tear_down(self, inboxes: list[Inbox], senders: list[Sender],
                   error: MotionError) -> None:
        for inbox in inboxes:
            inbox.fail(error)  # wakes consumers first; the sockets follow

        def drain():
            for inbox in inboxes:
                self._loop.drain_inbox(inbox, Kind.CANCEL)

        self._loop.call(drain)
        for inbox in inboxes:
            inbox.close()
        for sender in senders:
            sender.abort(error)

    def _resolve(self, key: tuple, index: int, transport: str):
        """(I/O thread) The inbox a HELLO joins, or the control frame that turns it away."""
        with self._lock:
            if self._closed or key[0] in self._cancelled:
                return Kind.CANCEL
            if key in self._closed_keys:
                return Kind.STOP
            inbox = self._inboxes.get(key)
            if inbox is None:
                inbox = self._inboxes[key] = self._new_inbox(key)
            return inbox

    def _new_inbox(self, key: tuple) -> Inbox:
        """(holding self._lock)"""
        return Inbox(key, self._pools.get(key[0], self._budget), self.spill_dir)

    def _close_receiver(self, inbox: Inbox) -> None:
        with self._lock:
            if self._inboxes.get(inbox.key) is inbox:
                del self._inboxes[inbox.key]
                self._claimed.discard(inbox.key)
                self._closed_keys.add(inbox.key)
        self._loop.call(lambda: self._loop.drain_inbox(inbox, Kind.STOP))
        inbox.close()

    def _forget_sender(self, sender: Sender) -> None:
        with self._lock:
            self._senders.discard(sender)
