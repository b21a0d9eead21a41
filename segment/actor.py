"""The segment as a Ray actor: a thin shell around SegmentWorker.

Methods run in a thread pool (max_concurrency) so that a second query can reach a segment
while a long slice runs. Control calls (cancel, incarnation, ping, running, recover) have
a concurrency group of their own: however many slices occupy the pool, a cancel gets
through. A query's slices on a segment come in one call (`run_slices`), each slice in a
thread of its own; the coordinator admits no more slices at once than the pool has
threads (coordinator/cluster.py `SLICE_SLOTS`).
"""

from __future__ import annotations

import os

import ray

from planner.schema import TableDef
from segment.messages import MethodCall, ShardSample, SliceResult, SliceTask
from segment.worker import SegmentWorker

MAX_CONCURRENCY = 256     # threads for slices and writes
CONTROL_THREADS = 8


# A segment that dies is restarted by Ray on its node (placement pins it there); its
# committed data is on disk, and the query that was running fails.
@ray.remote(max_concurrency=MAX_CONCURRENCY, max_restarts=-1, max_task_retries=0,
            concurrency_groups={"control": CONTROL_THREADS})
class SegmentActor:
    def __init__(self, segment_id: int, n_segments: int, data_dir: str):
        # Motion listens on this node's address, so segments on other hosts reach it.
        host = ray.util.get_node_ip_address()
        self._w = SegmentWorker(segment_id, n_segments, data_dir, motion_host=host)

    @ray.method(concurrency_group="control")
    def ping(self):
        return self._w.ping()

    @ray.method(concurrency_group="control")
    def running(self) -> int:
        return self._w.running()

    @ray.method(concurrency_group="control")
    def incarnation(self) -> int:
        return self._w.incarnation

    def checked(self, incarnation: int | None, method: str, *args):
        """`method(*args)` if this process is `incarnation`, else SegmentRestarted: work
        meant for a segment process that has died never runs on its successor."""
        return self._w.call(MethodCall(method, args, incarnation))

    @ray.method(concurrency_group="control")
    def pid(self) -> int:
        return os.getpid()

    def node_id(self) -> str:
        return ray.get_runtime_context().get_node_id()

    @ray.method(concurrency_group="control")
    def recover(self, committed, undecided=frozenset()):
        return self._w.recover(committed, undecided)

    def begin(self, txn_id):
        return self._w.begin(txn_id)

    def create_table(self, table):
        return self._w.create_table(table)

    def drop_table(self, table_id):
        return self._w.drop_table(table_id)

    def write(self, txn_id, table_id, batches):
        return self._w.write(txn_id, table_id, batches)

    def truncate(self, txn_id, table_id):
        return self._w.truncate(txn_id, table_id)

    def prepare(self, txn_id):
        return self._w.prepare(txn_id)

    def commit(self, txn_id):
        return self._w.commit(txn_id)

    def abort(self, txn_id):
        return self._w.abort(txn_id)

    def table_rows(self, table_id, txn_id=None):
        return self._w.table_rows(table_id, txn_id)

    def table_bytes(self, table_ids, txn_id=None):
        return self._w.table_bytes(table_ids, txn_id)

    @ray.method(concurrency_group="control")
    def motion_endpoint(self):
        return self._w.motion_endpoint()

    @ray.method(concurrency_group="control")
    def task_endpoint(self):
        return self._w.task_endpoint()

    def analyze(self, table: TableDef) -> ShardSample:
        return self._w.analyze(table)

    def run_slices(self, tasks: tuple[SliceTask, ...]) -> tuple[SliceResult, ...]:
        return self._w.run_slices(tasks)

    def insert_select(self, query_id, node, txn_id, table, segments):
        return self._w.insert_select(query_id, node, txn_id, table, segments)

    @ray.method(concurrency_group="control")
    def cancel(self, query_id, reason=None):
        return self._w.cancel(query_id, reason)

    def copy_from_file(self, query_id, txn_id, table, path, options, positions, defaults=None,
                       now=None):
        return self._w.copy_from_file(query_id, txn_id, table, path, options, positions,
                                      defaults, now)
