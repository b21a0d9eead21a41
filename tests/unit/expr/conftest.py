"""Fixtures for the expression tests: a PostgreSQL 15 oracle.

The oracle is the session's private server (tests/pg_oracle.py, fixture `pg_oracle` in
tests/conftest.py: initdb into a temporary directory, pg_ctl on a free loopback port, UTF-8
character classes with byte-order collation, run as an unprivileged account when root),
started once per session by the tests that ask for it. They are skipped only when the
PostgreSQL binaries are not installed; a server that cannot start fails them.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def pg(pg_oracle):
    """A psycopg connection (autocommit) to the private PostgreSQL server's `postgres`
    database (TimeZone UTC, IntervalStyle postgres, DateStyle ISO, MDY, collation C)."""
    conn = pg_oracle.connect()
    try:
        yield conn
    finally:
        conn.close()
