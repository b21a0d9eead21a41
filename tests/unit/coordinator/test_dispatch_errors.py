"""Which error a failed distributed query reports: the cause, never the echo of it."""

from __future__ import annotations

import threading

from coordinator.dispatch import QueryRun
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
