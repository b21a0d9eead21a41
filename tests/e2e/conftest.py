"""Fixtures of the end-to-end tests: one shared 2-segment raympp server (tests/conftest.py),
connections to it, and unique table names that are dropped after each test."""

from __future__ import annotations

import itertools
import os
import re
import subprocess

import pytest

_serial = itertools.count(1)


@pytest.fixture(scope="session")
def server(raympp_cluster):
    return raympp_cluster(2)


@pytest.fixture
def conn(server):
    """An autocommit connection."""
    c = server.connect(autocommit=True)
    yield c
    c.close()


@pytest.fixture
def table(server, request):
    """A fresh table name (e2e_<test>_<n>), dropped after the test."""
    names = []

    def make() -> str:
        base = re.sub(r"\W", "_", request.node.name)[:40].lower()
        names.append(f"e2e_{base}_{next(_serial)}")
        return names[-1]

    yield make
    with server.connect(autocommit=True) as c:
        for n in names:
            try:
                c.execute(f"DROP TABLE IF EXISTS {n}")
            except Exception:  # the test has already reported what broke
                pass


@pytest.fixture
def psql(server):
    """`psql(*args, check=True)` runs the psql client against the shared server."""

    def run(*args, check=True, timeout=300) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGCONNECT_TIMEOUT"] = "30"
        cmd = ["psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", server.host, "-p",
               str(server.port), "-U", "raympp", "-d", "raympp", *args]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        if check:
            assert p.returncode == 0, f"psql {args} failed ({p.returncode}): {p.stderr}"
        return p
    return run
