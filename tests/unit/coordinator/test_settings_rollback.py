"""Settings and transaction blocks, as PostgreSQL 15 (checked against it in
tests/e2e/test_budget_and_settings.py): a session-level SET or RESET inside a block that
rolls back is undone, one in a block that commits stays; SET LOCAL ends with the block;
a savepoint's snapshot restores the values of its moment."""

from __future__ import annotations

import pytest

from coordinator.settings import Settings


class Txn:
    explicit = True
    queried = False


@pytest.fixture
def s():
    return Settings("alice", {"application_name": "start"})


def begin(s: Settings) -> Txn:
    txn = Txn()
    s.start_transaction(lambda: txn)
    return txn


def test_rollback_undoes_a_session_set(s):
    s.set("work_mem", "8MB")
    begin(s)
    s.set("work_mem", "2MB")
    s.set("statement_timeout", "5s")
    assert s.show("work_mem") == "2MB"
    assert s.end_transaction(committed=False) == {}
    assert s.show("work_mem") == "8MB" and s.show("statement_timeout") == "0"


def test_commit_keeps_a_session_set_and_drops_set_local(s):
    txn = begin(s)
    s.set("work_mem", "2MB", transaction=lambda: txn)
    s.set("statement_timeout", "3s", local=True, transaction=lambda: txn)
    assert s.show("statement_timeout") == "3s"
    s.end_transaction(committed=True)
    assert s.show("work_mem") == "2MB" and s.show("statement_timeout") == "0"


def test_set_local_over_a_session_set_of_the_block(s):
    txn = begin(s)
    s.set("work_mem", "3MB", transaction=lambda: txn)
    s.set("work_mem", "2MB", local=True, transaction=lambda: txn)
    assert s.show("work_mem") == "2MB"
    s.end_transaction(committed=True)
    assert s.show("work_mem") == "3MB"


def test_rollback_undoes_reset_and_reset_all(s):
    s.set("work_mem", "5MB")
    s.set("myapp.x", "kept")
    begin(s)
    s.reset("work_mem")
    assert s.show("work_mem") == "64MB"
    s.end_transaction(committed=False)
    assert s.show("work_mem") == "5MB"
    begin(s)
    s.reset("all")
    s.end_transaction(committed=False)
    assert s.show("work_mem") == "5MB" and s.show("myapp.x") == "kept"


def test_rollback_reports_the_reported_settings_it_puts_back(s):
    begin(s)
    assert s.set("application_name", "inside") == {"application_name": "inside"}
    assert s.end_transaction(committed=False) == {"application_name": "start"}
    assert s.show("application_name") == "start"


def test_a_placeholder_first_set_in_a_rolled_back_block_stays_empty(s):
    begin(s)
    s.set("myapp.v", "x")
    s.end_transaction(committed=False)
    assert s.show("myapp.v") == ""  # as PostgreSQL: defined, with the empty value


def test_savepoint_snapshot_restores_its_moment(s):
    txn = begin(s)
    s.set("work_mem", "2MB", transaction=lambda: txn)
    snap = s.snapshot()
    s.set("work_mem", "3MB", transaction=lambda: txn)
    s.set("statement_timeout", "1s", local=True, transaction=lambda: txn)
    s.restore(snap)
    assert s.show("work_mem") == "2MB" and s.show("statement_timeout") == "0"
    s.end_transaction(committed=False)
    assert s.show("work_mem") == "64MB"


def test_session_characteristics_are_undone_too(s):
    txn = begin(s)
    s.set_transaction([("transaction_read_only", "on")], characteristics=True,
                      transaction=lambda: txn)
    assert s.show("default_transaction_read_only") == "on"
    s.end_transaction(committed=False)
    assert s.show("default_transaction_read_only") == "off"


def test_end_without_a_block_changes_nothing(s):
    s.set("work_mem", "7MB")
    s.end_transaction(committed=False)
    assert s.show("work_mem") == "7MB"
