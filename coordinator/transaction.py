"""Distributed transactions: one id for every write of a statement or an explicit block.

Segments keep a transaction's new chunks pending; commit is two-phase: every segment
prepares (makes its delta durable), the catalog records the commit (the commit point), then
every segment publishes by replacing its manifests. A failure before the commit point
aborts everywhere; after it, recovery rolls forward (segment/storage).
"""

from __future__ import annotations

import enum

from coordinator import cluster as cl
from coordinator.catalog import Catalog


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
        self.wrote = False

    def commit(self) -> None:
        if not self.wrote:
            return
        try:
            self.cluster.call_all("prepare", self.id)
        except BaseException:
            self.abort()
            raise
        self.catalog.record_commit(self.id)
        self.cluster.call_all("commit", self.id)

    def abort(self) -> None:
        if self.wrote:
            self.cluster.call_all("abort", self.id)
