"""A transaction's segment calls over the task socket (segment/messages.MethodCall): a
real SegmentWorker in this process, reached through a TaskLink as the coordinator reaches
it. Checked calls run only on the process their incarnation names; only the methods
segment/messages.py lists run at all; results and errors come back as through Ray."""

from __future__ import annotations

import pyarrow as pa
import pytest

from coordinator import cluster as cl
from coordinator.task_link import TaskLink
from planner import errors, types
from planner.schema import ColumnDef, DistKind, DistPolicy, TableDef
from segment.messages import MethodCall
from segment.worker import SegmentWorker


@pytest.fixture
def worker(tmp_path, monkeypatch):
    monkeypatch.setenv("RAYMPP_JIT_WARMUP", "0")
    w = SegmentWorker(0, 1, str(tmp_path / "seg0"))
    yield w
    w.tasks.close()
    w.motion.close()


def _call(link: TaskLink, call: MethodCall):
    return link.submit(call).result(10)


def _table() -> TableDef:
    return TableDef(id=7, name="t", columns=(ColumnDef("k", types.INT8),),
                    policy=DistPolicy(DistKind.HASHED, (0,)))


def test_a_transaction_written_and_committed_over_the_socket(worker):
    link = TaskLink(worker.task_endpoint(), same_node=True)
    inc = worker.incarnation
    table = _table()
    _call(link, MethodCall("create_table", (table,), inc))
    _call(link, MethodCall("begin", (5,), inc))
    batch = pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["k"])
    assert _call(link, MethodCall("write", (5, table.id, [batch]), inc)) == 3
    assert _call(link, MethodCall("table_rows", (table.id,), inc)) == 0  # not committed
    _call(link, MethodCall("prepare", (5,), inc))
    _call(link, MethodCall("commit", (5,), checked=False))
    assert _call(link, MethodCall("table_rows", (table.id,), inc)) == 3
    assert isinstance(_call(link, MethodCall("ping", (), checked=False)), float)
    link.close()


def test_work_meant_for_another_process_is_refused(worker):
    link = TaskLink(worker.task_endpoint(), same_node=True)
    e = link.submit(MethodCall("table_rows", (7,), worker.incarnation + 1)).exception(10)
    assert isinstance(cl.unwrap(e), errors.SegmentRestarted)
    link.close()


@pytest.mark.parametrize("call", [
    MethodCall("recover", ((), ()), None),        # Ray's control call only
    MethodCall("commit", (1,), None),             # unchecked, not as a checked call
    MethodCall("begin", (1,), checked=False),     # checked, not as an unchecked call
    MethodCall("__init__", (0, 1, "/"), None),
])
def test_only_the_listed_methods_run(worker, call):
    link = TaskLink(worker.task_endpoint(), same_node=True)
    got = cl.unwrap(link.submit(call).exception(10))
    assert isinstance(got, errors.InternalError) and "is not a segment method" in got.message
    link.close()
