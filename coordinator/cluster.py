"""The segments of a raympp cluster: Ray actors, one per segment, each owning a data dir.

The number of segments is fixed when a data directory is first used (rows are placed by
hashing to N segments); it is stored in the catalog and reused on restart.
"""

from __future__ import annotations

import json
import logging
import os

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

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
        self.placement = place_segments(catalog, n_segments)
        nodes = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
        self.actors = []
        for i in range(n_segments):
            seg_dir = os.path.join(os.path.abspath(data_dir), f"seg{i}")
            # A segment's data lives on its node: it always restarts there.
            strategy = NodeAffinitySchedulingStrategy(nodes[self.placement[i]], soft=False)
            self.actors.append(SegmentActor.options(
                num_cpus=0, scheduling_strategy=strategy).remote(i, n_segments, seg_dir))
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

    def refresh_endpoints(self) -> None:
        """Re-learn where segments' Motion receivers listen (a restarted segment listens
        somewhere new); waits until every segment is up again."""
        self.endpoints = self.call_all("motion_endpoint")

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


def place_segments(catalog: Catalog, n_segments: int) -> list[str]:
    """The node address of each segment: remembered from the first start (where its data
    is), else spread round-robin over the Ray cluster's alive nodes."""
    alive = sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
    stored = catalog.get_meta("segment_nodes")
    if stored is not None:
        placement = json.loads(stored)
        missing = sorted({a for a in placement if a not in alive})
        if missing:
            raise errors.SegmentFailure(
                f"segments' data is on node(s) {', '.join(missing)}, which are not in the Ray "
                f"cluster (alive: {', '.join(alive)})")
        return placement
    placement = [alive[i % len(alive)] for i in range(n_segments)]
    catalog.set_meta("segment_nodes", json.dumps(placement))
    return placement


def get(refs):
    """ray.get that turns remote failures into QueryErrors with their SQLSTATE.

    Every call is waited for, so that one segment's failure is reported once and the
    others' results are not left unread."""
    single = not isinstance(refs, list)
    refs = [refs] if single else refs
    results, first = [], None
    for ref in refs:
        try:
            results.append(ray.get(ref))
        except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError) as e:
            results.append(None)
            first = first or unwrap(e)
    if first is not None:
        raise first
    return results[0] if single else results


def unwrap(e: BaseException) -> BaseException:
    cause = getattr(e, "cause", None)
    if isinstance(cause, errors.QueryError):
        return cause
    if isinstance(e, ray.exceptions.RayActorError):
        return errors.SegmentFailure(f"segment failed: {e}")
    if cause is not None:
        return errors.InternalError(f"{type(cause).__name__}: {cause}")
    return errors.InternalError(str(e).splitlines()[0] if str(e) else type(e).__name__)
