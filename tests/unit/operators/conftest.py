"""Fixtures of the operator tests; opkit.py holds the helpers (and registers the
test-only Source node)."""

from __future__ import annotations

import pytest

import opkit  # noqa: F401


@pytest.fixture
def duck():
    import duckdb

    con = duckdb.connect()
    yield con
    con.close()
