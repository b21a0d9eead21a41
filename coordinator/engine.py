"""The engine behind pgwire: owns the catalog and the cluster and opens sessions.

`Engine.open_session` returns a `Session` (coordinator/session.py), the per-connection
state: settings, the open transaction, and statement execution.
"""

from __future__ import annotations

import logging
import os
import threading

from coordinator.catalog import Catalog
from coordinator.cluster import Cluster

log = logging.getLogger(__name__)


class Engine:
    def __init__(self, data_dir: str, n_segments: int):
        self.data_dir = os.path.abspath(data_dir)
        self.catalog = Catalog(self.data_dir)
        self.cluster = Cluster(self.catalog, self.data_dir, n_segments)
        # DDL and the catalog's statistics change under this lock; queries only read.
        self.ddl_lock = threading.RLock()

    def open_session(self, user: str, database: str, options: dict[str, str]):
        from coordinator.session import Session

        return Session(self, user, database, options)

    def shutdown(self) -> None:
        self.cluster.shutdown()
        self.catalog.close()
