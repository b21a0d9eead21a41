"""The segments of a raympp cluster: Ray actors, one per segment, each owning a data dir.

The number of segments is fixed when a data directory is first used (rows are placed by
hashing to N segments); it is stored in the catalog and reused on restart.
"""

from __future__ import annotations

import logging
import os

import ray

from coordinator.catalog import Catalog
from motion.service import MotionService
from planner import errors
from segment.actor import SegmentActor

log = logging.getLogger(__name__)

COORDINATOR_MOTION_BYTES = 512 << 20


def _local_host() -> str:
    """The address segments reach this process at: the Ray node's own address."""
    try:
        return ray.util.get_node_ip_address()
    except Exception:  # Ray not started (tests that build a Cluster by hand): loopback
        return "127.0.0.1"


class Cluster:
    def __init__(self, catalog: Catalog, data_dir: str, n_segments: int):
        stored = catalog.get_meta("n_segments")
        if stored is not None and int(stored) != n_segments:
            log.warning("data directory %s has %s segments; using %s (not %s)",
                        data_dir, stored, stored, n_segments)
            n_segments = int(stored)
        catalog.set_meta("n_segments", str(n_segments))
        self.n_segments = n_segments
        self.actors = []
        for i in range(n_segments):
            seg_dir = os.path.join(os.path.abspath(data_dir), f"seg{i}")
            self.actors.append(SegmentActor.options(num_cpus=0).remote(i, n_segments, seg_dir))
        # Motion receivers of the top slice live here; segments' receivers in each actor.
        self.motion = MotionService(_local_host(), os.path.join(os.path.abspath(data_dir),
                                                                "coordinator-spill"),
                                    COORDINATOR_MOTION_BYTES)
        self.endpoints = self.call_all("motion_endpoint")
        committed = catalog.committed()
        self.call_all("recover", committed)
        # A table created while a segment was missing (or before a crash) must exist on
        # every segment; creating is idempotent.
        for table in catalog.tables():
            self.call_all("create_table", table)

    def call_all(self, method: str, *args, segments=None):
        """Call `method` on every segment (or the given ones) and wait for all results."""
        targets = range(self.n_segments) if segments is None else segments
        refs = [getattr(self.actors[i], method).remote(*args) for i in targets]
        return get(refs)

    def shutdown(self):
        self.motion.close()
        for a in self.actors:
            try:
                ray.kill(a)
            except Exception:  # already dead: nothing to stop
                pass
        self.actors = []


def get(refs):
    """ray.get that turns remote failures into QueryErrors with their SQLSTATE."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        raise unwrap(e) from None
    except ray.exceptions.RayActorError as e:
        raise errors.SegmentFailure(f"segment failed: {e}") from None


def unwrap(e: BaseException) -> BaseException:
    cause = getattr(e, "cause", None)
    if isinstance(cause, errors.QueryError):
        return cause
    if isinstance(e, ray.exceptions.RayActorError):
        return errors.SegmentFailure(f"segment failed: {e}")
    if cause is not None:
        return errors.InternalError(f"{type(cause).__name__}: {cause}")
    return errors.InternalError(str(e).splitlines()[0] if str(e) else type(e).__name__)
