"""segment/task_server.py and coordinator/task_link.py: requests and replies over a real
Unix socket and TCP, errors carried with their SQLSTATE, a wrong token refused, and the
requests waiting on a connection that breaks failed as a dead segment's."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from coordinator import cluster as cl
from coordinator.task_link import TaskLink
from planner import errors
from segment import task_server as ts


class _Handler:
    def __init__(self):
        self.release = threading.Event()

    def __call__(self, tasks):
        if tasks == ("fail",):
            raise errors.QueryError("division by zero", "22012")
        if tasks == ("odd",):
            raise ValueError("not a QueryError")
        if tasks == ("wait",):
            self.release.wait(10)
        return tuple(f"ran {t}" for t in tasks)


@pytest.fixture
def server():
    s = ts.TaskServer("127.0.0.1", "node", _Handler())
    yield s
    s.close()


@pytest.mark.parametrize("same_node", [True, False])
def test_requests_and_replies(server, same_node):
    link = TaskLink(server.endpoint, same_node)
    futures = [link.submit((f"a{i}", f"b{i}")) for i in range(20)]
    assert [f.result(5) for f in futures] == [(f"ran a{i}", f"ran b{i}") for i in range(20)]
    link.close()


def test_a_waiting_request_does_not_hold_up_others(server):
    link = TaskLink(server.endpoint, True)
    slow = link.submit(("wait",))
    assert link.submit(("quick",)).result(5) == ("ran quick",)
    assert not slow.done()
    server._handler.release.set()
    assert slow.result(5) == ("ran wait",)


def test_errors_keep_their_sqlstate(server):
    link = TaskLink(server.endpoint, True)
    e = link.submit(("fail",)).exception(5)
    got = cl.unwrap(e)
    assert isinstance(got, errors.QueryError) and got.sqlstate == "22012"
    got = cl.unwrap(link.submit(("odd",)).exception(5))
    assert isinstance(got, errors.InternalError) and "not a QueryError" in got.message


def test_wrong_token_is_refused(server):
    ep = server.endpoint
    bad = ts.TaskEndpoint(ep.node_id, ep.host, ep.tcp_port, ep.uds_path, b"x" * 32)
    got = cl.unwrap(TaskLink(bad, False).submit(("a",)).exception(5))
    assert isinstance(got, errors.SegmentFailure)


def test_broken_connection_fails_waiting_requests_as_a_dead_segment():
    listener = socket.create_server(("127.0.0.1", 0))
    ep = ts.TaskEndpoint("n", "127.0.0.1", listener.getsockname()[1], "\0none", b"t")

    def accept_then_die():
        conn, _ = listener.accept()
        ts.read_frame(conn)  # the token
        ts.read_frame(conn)  # the request, never answered
        time.sleep(0.2)
        conn.close()

    threading.Thread(target=accept_then_die, daemon=True).start()
    link = TaskLink(ep, same_node=False)
    got = cl.unwrap(link.submit(("a",)).exception(5))
    assert isinstance(got, errors.SegmentFailure)
    assert link.broken
    assert isinstance(cl.unwrap(link.submit(("b",)).exception(5)), errors.SegmentFailure)
    listener.close()


def test_a_first_frame_longer_than_a_token_is_refused_before_it_is_read(server):
    ep = server.endpoint
    with socket.create_connection((ep.host, ep.tcp_port), timeout=5) as sock:
        # a length of 1 TiB: the server closes the connection instead of allocating it
        sock.sendall((1 << 40).to_bytes(8, "big"))
        assert sock.recv(1) == b""


def test_alive_once_connected_until_the_connection_breaks(server):
    link = TaskLink(server.endpoint, same_node=True)
    assert not link.alive  # not connected yet
    link.connect()
    assert link.alive
    assert link.submit(("a",)).result(5) == ("ran a",)
    link.close()
    assert not link.alive and link.broken


def test_connect_to_an_endpoint_gone_spends_the_link():
    ep = ts.TaskEndpoint("n", "127.0.0.1", 1, "\0raympp-tasks-nobody-here", b"t")
    link = TaskLink(ep, same_node=True)
    link.connect()
    assert link.broken and not link.alive
