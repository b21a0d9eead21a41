"""Which error a failed distributed query reports: the cause, never the echo of it."""

from __future__ import annotations

import threading

from coordinator.dispatch import QueryRun
from motion import frames
from motion.errors import MotionError
from planner import errors


def _run() -> QueryRun:
    # Only the error bookkeeping is under test: no cluster, no slices.
    run = object.__new__(QueryRun)
    run.cancel_event = threading.Event()
    run._error = None
    run._watching = False
    run._refs = []
    run._abort = lambda: None
    return run


ECHO = errors.QueryError("segment 2: motion channel (1, 1, 0) sender 2: query cancelled",
                         "57014")
CAUSE = errors.QueryError('cannot cast jsonb string to type integer', "22023")


def test_cause_replaces_an_echo_reported_first():
    run = _run()
    run._note_error(ECHO)
    run._note_error(CAUSE)
    assert run._first_error(None) is CAUSE


def test_echo_does_not_replace_a_cause():
    run = _run()
    run._note_error(CAUSE)
    run._note_error(ECHO)
    assert run._first_error(None) is CAUSE


def test_motion_echo_here_yields_to_a_segment_cause():
    run = _run()
    run._note_error(CAUSE)
    here = errors.QueryError(MotionError("query cancelled", "57014").message, "57014")
    assert run._first_error(here) is CAUSE


def test_only_echoes_read_as_a_plain_cancel():
    run = _run()
    run._note_error(ECHO)
    got = run._first_error(None)
    assert isinstance(got, errors.QueryCanceled) and "segment" not in got.message


def test_client_cancel_is_a_cause():
    run = _run()
    run.cancel_event.set()
    run._note_error(errors.QueryCanceled("canceling statement due to user request"))
    run._note_error(CAUSE)
    got = run._first_error(None)
    assert isinstance(got, errors.QueryCanceled)


def test_statement_timeout_is_a_cause():
    run = _run()
    run._note_error(errors.QueryCanceled(errors.STATEMENT_TIMEOUT))
    run._note_error(CAUSE)
    assert errors.STATEMENT_TIMEOUT in run._first_error(None).message


def _through_motion(error: BaseException, segment: int) -> errors.QueryError:
    """What the slice receiving from a failed slice raises (segment/worker.py): the
    sender's ERROR frame read back, as the receiving side turns it into a QueryError."""
    body = frames.error_body(f"segment {segment}: {error}", error.sqlstate,
                             errors.kind_of(error))
    got = frames.read_error(body)
    return errors.relayed(f"sender 0 of channel (1, 2, 0) failed: {got.message}",
                          got.sqlstate, got.kind)


def test_a_relayed_placement_change_is_still_one():
    # An expansion moved a table under a query of several slices: the scan's slice fails
    # with PlacementChanged, a slice it sends to fails with what the Motion relayed, and
    # that one's report may reach the coordinator first. The SELECT is planned again on
    # PlacementChanged (coordinator/query.py) only if it still is one.
    moved = errors.PlacementChanged('relation "lineitem" is on 6 segments now, not the 4 '
                                    "its plan was made for (an expansion moved it)")
    relay = _through_motion(_through_motion(moved, 0), 3)
    assert isinstance(relay, errors.PlacementChanged) and relay.sqlstate == "40001"
    assert 'relation "lineitem" is on 6 segments now' in relay.message
    run = _run()
    run._note_error(relay)
    assert isinstance(run._first_error(None), errors.PlacementChanged)


def test_a_relayed_error_of_no_known_kind_is_a_plain_query_error():
    relay = _through_motion(MotionError("peer vanished", "58030"), 1)
    assert type(relay) is errors.QueryError and relay.sqlstate == "58030"
    assert type(errors.relayed("m", "XX000", "NoSuchError")) is errors.QueryError
