"""The engine behind pgwire: owns the catalog and the cluster and opens sessions.

`Engine.open_session` returns a `Session` (coordinator/session.py), the per-connection
state: settings, the open transaction, and statement execution. The sessions share the
engine's plan cache (coordinator/plan_cache.py).

At start, and then every GARBAGE_SECONDS while storage is listed as unowned, the engine
removes from the segments the storage no committed table owns (coordinator/transaction.py
`collect_garbage`): a transaction cut short by a crash, or a dropped table's removal that
a segment missed (it was restarting).
"""

from __future__ import annotations

import logging
import os
import threading

from coordinator import plan_cache, system_catalog, temp_tables
from coordinator.catalog import Catalog
from coordinator.cluster import Cluster
from coordinator.sequences import SequenceCounters
from coordinator.expansion import Expansion
from coordinator.transaction import NameLocks, collect_garbage
from coordinator.session import Session

log = logging.getLogger(__name__)

GARBAGE_SECONDS = 10.0


class Engine:
    def __init__(self, data_dir: str, n_segments: int):
        self.data_dir = os.path.abspath(data_dir)
        self.catalog = Catalog(self.data_dir)
        self.cluster = Cluster(self.catalog, self.data_dir, n_segments)
        # The progress of the running or last expansion (coordinator/expansion.py).
        self.expansion = Expansion()
        # The catalog's statistics change under this lock; queries only read.
        self.ddl_lock = threading.RLock()
        # Table names locked by the transactions that create, drop or truncate them.
        self.locks = NameLocks()
        # The connected sessions (pg_stat_activity).
        self.sessions = system_catalog.Sessions()
        # Query plans shared by the sessions (coordinator/plan_cache.py).
        self.plans = plan_cache.PlanCache()
        # The sequences' counters (coordinator/sequences.py).
        self.sequences = SequenceCounters(self.catalog)
        # Storage of tables the catalog does not own (a transaction cut short by a crash,
        # a drop whose removal did not finish): removed before any session starts.
        try:
            removed = collect_garbage(self.catalog, self.cluster)
            if removed:
                log.info("removed the storage of %d tables no committed table owns",
                         len(removed))
        except Exception as e:  # noqa: BLE001 - still listed: the background round retries
            log.warning("storage collection at start: %s", e)
        try:
            temp_tables.drop_orphans(self)  # sessions of an earlier process: ended
        except Exception as e:  # noqa: BLE001 - tried again at the next start
            log.warning("temporary schemas left by an earlier start: %s", e)
        self._stopping = threading.Event()
        self._collector = threading.Thread(target=self._collect, name="storage-collector",
                                           daemon=True)
        self._collector.start()

    def _collect(self) -> None:
        while not self._stopping.wait(GARBAGE_SECONDS):
            try:
                if self.catalog.storage_rows():
                    collect_garbage(self.catalog, self.cluster)
            except Exception as e:  # noqa: BLE001 - listed in the catalog: the next round retries
                if not self._stopping.is_set():
                    log.warning("storage collection: %s", e)

    def open_session(self, user: str, database: str, options: dict[str, str]):
        session = Session(self, user, database, options)
        self.sessions.add(session)
        return session

    def shutdown(self) -> None:
        self._stopping.set()
        self.cluster.shutdown()
        self.catalog.close()
