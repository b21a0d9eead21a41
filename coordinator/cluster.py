"""The segments of a raympp cluster: Ray actors, one per segment, each owning a data dir.

The number of segments is stored in the catalog when a data directory is first used and
reused on restart; `grow` adds segments to a running cluster (coordinator/expansion.py
then moves the tables onto them, each table saying how many segments it is on).
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import os
import threading
import time

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from coordinator.catalog import Catalog
from coordinator.task_link import RemoteError, TaskLink
from motion.channel import Endpoint
from motion.service import MotionService
from planner import errors
from segment.actor import MAX_CONCURRENCY, SegmentActor
from segment.messages import MethodCall
from segment.jit import warmup

log = logging.getLogger(__name__)

COORDINATOR_MOTION_BYTES = 512 << 20
START_SECONDS = 300.0         # first start of the segments (imports, numba caches)
SEGMENT_WAIT_SECONDS = 30.0   # how long a statement waits for a restarting segment
MONITOR_SECONDS = 1.0         # how often the coordinator looks for restarted segments
# Slices running at once on a segment: below the actor's thread pool (segment/actor.py),
# which also serves writes, so that every slice of an admitted query has a thread.
SLICE_SLOTS = MAX_CONCURRENCY - 32


class Slots:
    """Admission of queries by their slices: a query takes one slot per slice (each runs
    on every segment of its gang at most once) before any is dispatched, and waits while
    the slots are taken, so that slices never queue for segment threads behind each other.
    The wait ends early when the query is cancelled."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._free = capacity
        self._cond = threading.Condition()

    def acquire(self, n: int, cancel: threading.Event) -> int:
        n = min(n, self.capacity)  # a query bigger than the pool runs alone
        with self._cond:
            while self._free < n:
                if cancel.is_set():
                    raise errors.QueryCanceled(getattr(cancel, "reason", None)
                                               or errors.USER_CANCEL)
                self._cond.wait(0.1)
            self._free -= n
        return n

    def release(self, n: int) -> None:
        with self._cond:
            self._free += n
            self._cond.notify_all()


def _local_host() -> str:
    """The address segments reach this process at: the Ray node's own address."""
    try:
        return ray.util.get_node_ip_address()
    except Exception:  # Ray not started (tests that build a Cluster by hand): loopback
        return "127.0.0.1"


class Cluster:
    """The segment actors and what the coordinator knows of each: its incarnation (which
    process it is now) and its Motion endpoint.

    Every call that reads or changes a transaction's state names the incarnation it is
    meant for (`call_all`); a segment that restarted refuses it (SegmentRestarted). The
    coordinator then heals (`heal`): it waits for the segment to be back (bounded), has it
    recover its prepared writes from the commit log, and learns its new endpoint. A
    monitor thread does the same within a second of a restart, so that the next query
    finds the cluster whole.
    """

    def __init__(self, catalog: Catalog, data_dir: str, n_segments: int):
        stored = catalog.get_meta("n_segments")
        if stored is not None and int(stored) != n_segments:
            log.warning("data directory %s has %s segments; using %s (not %s)",
                        data_dir, stored, stored, n_segments)
            n_segments = int(stored)
        catalog.set_meta("n_segments", str(n_segments))
        catalog.pin_placement(n_segments)
        self.catalog = catalog
        self.n_segments = n_segments
        self.placement = place_segments(catalog, n_segments)
        self.data_dir = os.path.abspath(data_dir)
        self.actors = [self._start_actor(i, self.placement[i], n_segments)
                       for i in range(n_segments)]
        warmup.start()  # the top slice runs operators here too: their compiled code
        # Motion receivers of the top slice live here; segments' receivers in each actor.
        self.motion = MotionService(_local_host(), os.path.join(os.path.abspath(data_dir),
                                                                "coordinator-spill"),
                                    COORDINATOR_MOTION_BYTES)
        self.incarnations: list[int | None] = [None] * n_segments
        self.endpoints: list[Endpoint | None] = [None] * n_segments  # known once healed
        # Each segment process's slice-task socket (segment/task_server.py), once healed.
        self.links: list[TaskLink | None] = [None] * n_segments
        # Transactions that have begun writing and not yet ended: a restarted segment
        # keeps their prepared deltas for the coordinator's decision.
        self.undecided: set[int] = set()
        # While the cluster grows, no transaction begins writing (`admit_writer`).
        self._writers = threading.Condition()
        self._growing = False
        self._heal_lock = threading.Lock()
        self._stopping = threading.Event()
        self.slots = Slots(SLICE_SLOTS)
        self.heal(START_SECONDS)
        # A table created while a segment was missing (or before a crash) must exist on
        # every segment; creating is idempotent.
        for table in catalog.tables():
            self.call_all("create_table", table)
        self._monitor = threading.Thread(target=self._watch_restarts, name="segment-monitor",
                                         daemon=True)
        self._monitor.start()

    def _start_actor(self, i: int, node_address: str, n_segments: int):
        nodes = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
        seg_dir = os.path.join(self.data_dir, f"seg{i}")
        # A segment's data lives on its node: it always restarts there.
        strategy = NodeAffinitySchedulingStrategy(nodes[node_address], soft=False)
        return SegmentActor.options(num_cpus=0, scheduling_strategy=strategy).remote(
            i, n_segments, seg_dir)

    # --- growing -----------------------------------------------------------------------------
    def admit_writer(self, txn_id: int) -> list[int | None]:
        """A transaction begins writing: it waits while the cluster grows, is then
        undecided until it ends, and writes to the processes whose incarnations this
        returns (one per segment of the cluster now)."""
        with self._writers:
            while self._growing:
                self._writers.wait(0.1)
            self.undecided.add(txn_id)
            return list(self.incarnations[:self.n_segments])

    def grow(self, target: int, writers_timeout: float) -> list[int]:
        """Add segments n..target-1: start them on the Ray nodes with the fewest segments,
        recover them (a crashed expansion may have left prepared writes there), then, once
        no transaction is writing (new writers wait; at most `writers_timeout` seconds,
        else SegmentFailure and nothing changes), create every table on them and make
        them part of the cluster, in the catalog too. Returns the new segments."""
        n = self.n_segments
        if target <= n:
            return []
        nodes = grow_placement(self.placement, target - n)
        new = list(range(n, target))
        with self._heal_lock:
            for i, address in zip(new, nodes):
                self.actors.append(self._start_actor(i, address, target))
                self.incarnations.append(None)
                self.endpoints.append(None)
                self.links.append(None)
        self.heal(START_SECONDS)  # the new ones answer, recover, and give their endpoints
        with self._writers:
            self._growing = True
        try:
            deadline = time.monotonic() + writers_timeout
            while self.undecided:
                if time.monotonic() > deadline:
                    raise errors.SegmentFailure(
                        f"cannot add segments while transactions are writing (waited "
                        f"{writers_timeout:.0f} s for transactions {sorted(self.undecided)})")
                time.sleep(0.05)
            # No transaction is creating a table now: the new segments get all of them.
            for table in self.catalog.tables():
                self._call("create_table", (table,), new, self.incarnations)
            with self._heal_lock:
                self.placement = self.placement + nodes
                self.catalog.set_meta("segment_nodes", json.dumps(self.placement))
                self.catalog.set_meta("n_segments", str(target))
                self.n_segments = target  # last: readers of n find the lists as long
        finally:
            with self._writers:
                self._growing = False
                self._writers.notify_all()
        return new

    # --- incarnations and healing ----------------------------------------------------------
    def heal(self, timeout: float = SEGMENT_WAIT_SECONDS) -> list[int]:
        """Bring the coordinator's view up to date with the segments' processes: wait (at
        most `timeout` seconds) until every segment answers, and recover each one that
        restarted since it was last seen. Returns the segments that had restarted."""
        deadline = time.monotonic() + timeout
        with self._heal_lock:
            changed = []
            # A segment that answers over its open task connection is the process it was
            # (a process that ends closes its connections; a ping rather than the open
            # socket alone, as its end may not have been noticed yet). Ray is asked about
            # the others, and waits for a restarting one.
            pings = {i: link.submit(MethodCall("ping", (), checked=False))
                     for i, link in enumerate(self.links[:len(self.actors)])
                     if self.incarnations[i] is not None and link is not None and link.alive}
            asked = [i for i in range(len(self.actors)) if i not in pings]
            for i, ping in pings.items():
                try:
                    ping.result(timeout=max(deadline - time.monotonic(), 0.001))
                except (RemoteError, concurrent.futures.TimeoutError):
                    asked.append(i)
            refs = {i: self.actors[i].incarnation.remote() for i in asked}
            for i, ref in refs.items():
                incarnation = self._await(i, "incarnation", (), deadline, ref)
                if incarnation != self.incarnations[i]:
                    changed.append((i, incarnation))
            for i, incarnation in changed:
                if self.incarnations[i] is not None:
                    log.warning("segment %d restarted (incarnation %s -> %s): recovering it",
                                i, self.incarnations[i], incarnation)
                # Undecided first, then the commit log: a transaction that leaves the one
                # between the two reads has reached the other (or published everywhere).
                undecided = set(self.undecided)
                self._await(i, "recover", (self.catalog.committed(), undecided), deadline)
                self.endpoints[i] = self._await(i, "motion_endpoint", (), deadline)
                task_ep = self._await(i, "task_endpoint", (), deadline)
                old, self.links[i] = self.links[i], TaskLink(
                    task_ep, same_node=task_ep.node_id == self.motion.endpoint().node_id)
                self.links[i].connect()
                if old is not None:
                    old.close()
                self.incarnations[i] = incarnation
            return [i for i, _ in changed]

    def _await(self, seg: int, method: str, args: tuple, deadline: float, ref=None):
        """One unchecked call to a segment, retried while the segment is restarting."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise errors.SegmentFailure(f"segment {seg} is not available: it is "
                                            f"still restarting")
            try:
                if ref is None:
                    ref = getattr(self.actors[seg], method).remote(*args)
                return ray.get(ref, timeout=max(remaining, 0.001))
            except ray.exceptions.GetTimeoutError:
                raise errors.SegmentFailure(
                    f"segment {seg} did not answer: it is still restarting") from None
            except ray.exceptions.RayActorError:
                ref = None
                time.sleep(0.1)  # it died again (or is dying): ask its successor
            except ray.exceptions.RayTaskError as e:
                raise unwrap(e) from None

    def _watch_restarts(self) -> None:
        while not self._stopping.wait(MONITOR_SECONDS):
            try:
                self.heal(SEGMENT_WAIT_SECONDS)
            except Exception as e:  # noqa: BLE001 - the next round or a query retries
                if not self._stopping.is_set():
                    log.warning("segment monitor: %s", e)

    # --- calls -------------------------------------------------------------------------------
    def call_all(self, method: str, *args, segments=None, incarnations=None):
        """Call `method` on every segment (or the given ones) and wait for all results.

        The call is meant for `incarnations` (a transaction's, captured when it first
        wrote) or else for the processes known now; a segment that is another process
        refuses it. Without a transaction's incarnations, a refused call is retried once
        after healing (these calls are idempotent: DDL on segments, reads)."""
        targets = list(range(self.n_segments) if segments is None else segments)
        try:
            return self._call(method, args, targets, incarnations or self.incarnations)
        except errors.SegmentFailure:
            if incarnations is not None:
                raise
            self.heal()
            return self._call(method, args, targets, self.incarnations)

    def _call(self, method, args, targets, incarnations):
        return get([self.submit_call(i, MethodCall(method, args, incarnations[i]))
                    for i in targets])

    def submit_call(self, seg: int, call: MethodCall) -> concurrent.futures.Future:
        """Make a worker method call on segment `seg`: over its task socket, or by an
        actor call when there is none (`checked` for a checked call)."""
        link = self.links[seg]
        if link is not None and not link.broken:
            return link.submit(call)
        actor = self.actors[seg]
        if call.checked:
            return actor.checked.remote(call.incarnation, call.method, *call.args).future()
        return getattr(actor, call.method).remote(*call.args).future()

    def submit_slices(self, seg: int, tasks: tuple) -> concurrent.futures.Future:
        """Hand segment `seg` a query's slices: over its task socket, or by an actor call
        when there is none (a cluster not healed yet, a link spent by a restart)."""
        link = self.links[seg]
        if link is None or link.broken:
            return self.actors[seg].run_slices.remote(tasks).future()
        return link.submit(tasks)

    def call_each(self, method: str, *args, segments=None) -> list[BaseException | None]:
        """Call an unchecked, idempotent `method` (commit, abort) on every segment; returns
        each one's error or None, without raising."""
        targets = list(range(self.n_segments) if segments is None else segments)
        futures = [self.submit_call(i, MethodCall(method, args, checked=False))
                   for i in targets]
        out = []
        for future in futures:
            try:
                future.result()
                out.append(None)
            except _REMOTE_FAILURES as e:
                out.append(unwrap(e))
        return out

    def shutdown(self):
        self._stopping.set()
        self.motion.close()
        for link in self.links:
            if link is not None:
                link.close()
        for a in self.actors:
            try:
                ray.kill(a)
            except Exception:  # already dead: nothing to stop
                pass
        self.actors = []


def grow_placement(placement: list[str], count: int) -> list[str]:
    """Nodes for `count` more segments: each on the alive node with the fewest segments
    so far (a host that joined has none), ties by address."""
    alive = sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
    load = {a: sum(1 for p in placement if p == a) for a in alive}
    out = []
    for _ in range(count):
        node = min(alive, key=lambda a: (load[a], a))
        load[node] += 1
        out.append(node)
    return out


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


# What a segment call's Future fails with when the segment failed (not the caller).
_REMOTE_FAILURES = (ray.exceptions.RayTaskError, ray.exceptions.RayActorError, RemoteError)


def get(refs):
    """The results of segment calls (Ray refs or the Futures of submit_call), remote
    failures turned into QueryErrors with their SQLSTATE.

    Every call is waited for, so that one segment's failure is reported once and the
    others' results are not left unread."""
    single = not isinstance(refs, list)
    refs = [refs] if single else refs
    results, first = [], None
    for ref in refs:
        try:
            results.append(ref.result() if isinstance(ref, concurrent.futures.Future)
                           else ray.get(ref))
        except _REMOTE_FAILURES as e:
            results.append(None)
            first = first or unwrap(e)
    if first is not None:
        raise first
    return results[0] if single else results


def unwrap(e: BaseException) -> BaseException:
    """A segment's failure (from Ray or a task link) as the QueryError to report."""
    cause = getattr(e, "cause", None)
    if isinstance(cause, errors.QueryError):
        return cause
    if isinstance(e, ray.exceptions.RayActorError):
        return errors.SegmentFailure("a segment process died (it is restarted where its data "
                                     "is)", detail=(str(e).splitlines() or [""])[0][:300])
    if cause is not None:
        return errors.InternalError(f"{type(cause).__name__}: {cause}")
    return errors.InternalError(str(e).splitlines()[0] if str(e) else type(e).__name__)
