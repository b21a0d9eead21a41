"""Distributed transactions: one id for every write of a statement or an explicit block.

Segments keep a transaction's new chunks pending; commit is two-phase: every segment
prepares (makes its delta durable), the catalog records the commit (the commit point), then
every segment publishes. A failure before the commit point aborts everywhere; after it,
recovery rolls forward (segment/storage).

A transaction's writes live in the memory of the segment processes that took them until
prepare. So when it first writes, the transaction notes which process (incarnation) each
segment is, and every later write, read and prepare names that incarnation: if a segment
restarted in between, the call is refused and the transaction fails with 40001 before its
commit point, and nothing of it becomes visible anywhere.
"""

from __future__ import annotations

import enum
import logging
import time

from coordinator import cluster as cl
from coordinator.catalog import Catalog
from planner import errors

log = logging.getLogger(__name__)

COMMIT_WAIT_SECONDS = 120.0  # how long publishing waits for a segment to come back


class State(enum.Enum):
    ACTIVE = "active"
    FAILED = "failed"  # an error happened inside an explicit block: only ROLLBACK helps


class Transaction:
    def __init__(self, catalog: Catalog, cluster: cl.Cluster, explicit: bool):
        self.catalog = catalog
        self.cluster = cluster
        self.explicit = explicit
        self.id = catalog.next_id("txn")
        self.state = State.ACTIVE
        # The segment processes this transaction's writes went to (set at the first write).
        self.incarnations: list[int] | None = None
        self.segment_wait = cl.SEGMENT_WAIT_SECONDS  # raympp.segment_wait_timeout

    def begin_write(self) -> None:
        """Called before the transaction's first write: every segment learns of it (so a
        prepare of it on a process that never saw it fails) and its incarnations are kept."""
        if self.incarnations is not None:
            self.check()
            return
        self.cluster.heal(self.segment_wait)  # start on processes that are up and recovered
        self.incarnations = list(self.cluster.incarnations)
        self.cluster.undecided.add(self.id)
        try:
            self.call_all("begin", self.id)
        except errors.SegmentFailure as e:
            raise self._lost(e) from None

    @property
    def wrote(self) -> bool:
        """Whether the transaction has begun writing (and so has segments to commit on)."""
        return self.incarnations is not None

    def check(self) -> None:
        """Fail now if a segment this transaction wrote to has restarted since."""
        if self.incarnations is None:
            return
        for seg, (mine, now) in enumerate(zip(self.incarnations, self.cluster.incarnations)):
            if now is not None and mine != now:
                raise self._lost(errors.SegmentRestarted(f"segment {seg} restarted"))

    def call_all(self, method: str, *args, segments=None):
        """A call on the segments meant for the processes holding this transaction."""
        try:
            return self.cluster.call_all(method, *args, segments=segments,
                                         incarnations=self.incarnations)
        except errors.SegmentRestarted as e:
            raise self._lost(e) from None

    def _lost(self, cause: BaseException) -> errors.TransactionLost:
        return errors.lost_transaction(cause)

    def commit(self) -> None:
        if not self.wrote:
            return
        try:
            self.check()
            self.call_all("prepare", self.id)
        except errors.SegmentFailure as e:
            self.abort()
            raise self._lost(e) from None
        except BaseException:
            self.abort()
            raise
        self.catalog.record_commit(self.id)
        # Past the commit point: every segment must publish, whatever happens to it. A
        # segment that is restarting publishes when it is back (its recovery rolls the
        # prepared delta forward from the commit log).
        self._publish()

    def _publish(self) -> None:
        pending = list(range(self.cluster.n_segments))
        deadline = time.monotonic() + COMMIT_WAIT_SECONDS
        try:
            while pending:
                failures = self.cluster.call_each("commit", self.id, segments=pending)
                pending = [s for s, e in zip(pending, failures) if e is not None]
                if not pending:
                    return
                if time.monotonic() > deadline:
                    log.error("transaction %d committed; segments %s publish it when they "
                              "recover", self.id, pending)
                    return
                try:
                    self.cluster.heal()
                except errors.SegmentFailure:
                    time.sleep(0.5)
        finally:
            self.cluster.undecided.discard(self.id)

    def abort(self) -> None:
        if not self.wrote:
            return
        # Before the commit point: a segment that cannot be told discards the transaction
        # when it recovers (it is no longer undecided then).
        self.cluster.undecided.discard(self.id)
        for seg, e in enumerate(self.cluster.call_each("abort", self.id)):
            if e is not None:
                log.warning("abort of transaction %d on segment %d: %s", self.id, seg, e)
