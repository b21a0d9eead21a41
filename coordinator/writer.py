"""Route rows to the segments that own them and write them there (INSERT, COPY FROM STDIN).

Each batch is partitioned with the one hash function (motion/hashing.py) on the table's
distribution key, buffered per segment, and shipped in large writes; a replicated table
gets every row on every segment, a random one spreads batches round-robin: over the
table's segments (fewer than the cluster's while an expansion has not moved it).
"""

from __future__ import annotations

import pyarrow as pa

from coordinator import cluster as cl
from motion import hashing
from planner import errors
from planner.schema import DistKind, TableDef
from segment import check_constraints
from segment.messages import MethodCall

FLUSH_ROWS = 1_000_000
MAX_IN_FLIGHT = 4  # outstanding writes per segment: bounds coordinator memory


class TableWriter:
    def __init__(self, cluster: cl.Cluster, txn, table: TableDef):
        self.cluster = cluster
        self.txn = txn  # coordinator.transaction.Transaction, already writing
        self.table = table
        n = cluster.n_segments
        self._width = table.segment_count(n)
        self._buffers: list[list[pa.RecordBatch]] = [[] for _ in range(n)]
        self._buffered = [0] * n
        self._in_flight: list = []
        self._next = 0
        self.rows = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        # Constraints first: a statement that breaks one writes nothing (its transaction's
        # abort, or ROLLBACK TO, drops what earlier batches wrote).
        check_constraints.check(self.table, batch)
        self.rows += batch.num_rows
        policy = self.table.policy
        n = self._width
        if policy.kind is DistKind.REPLICATED:
            parts = [batch] * n
        elif policy.kind is DistKind.RANDOM:
            parts = [None] * n
            parts[self._next % n] = batch
            self._next += 1
        else:
            parts = hashing.partition(batch, list(policy.keys), n, self.table.key_scales())
        for seg, part in enumerate(parts):
            if part is not None and part.num_rows:
                self._buffers[seg].append(part)
                self._buffered[seg] += part.num_rows
                if self._buffered[seg] >= FLUSH_ROWS:
                    self._flush(seg)

    def _flush(self, seg: int) -> None:
        if not self._buffers[seg]:
            return
        # Meant for the segment process the transaction began on: a restarted one refuses.
        ref = self.cluster.submit_call(seg, MethodCall(
            "write", (self.txn.id, self.table.id, self._buffers[seg]), self.txn.incarnations[seg]))
        self._buffers[seg], self._buffered[seg] = [], 0
        self._in_flight.append(ref)
        if len(self._in_flight) >= MAX_IN_FLIGHT * self.cluster.n_segments:
            self._wait()

    def close(self) -> int:
        """Flush everything and wait until every segment has written; returns rows."""
        for seg in range(len(self._buffers)):
            self._flush(seg)
        self._wait()
        return self.rows

    def _wait(self) -> None:
        refs, self._in_flight = self._in_flight, []
        try:
            cl.get(refs)
        except errors.SegmentFailure as e:
            raise self.txn._lost(e) from None
