"""Fixtures: a PgServer on a free port, in a background thread, over the fake engine."""

from dataclasses import dataclass

import pytest

from coordinator.pgwire.server import PgServer
from .fake_engine import FakeEngine


@dataclass
class Running:
    engine: FakeEngine
    server: PgServer
    host: str
    port: int

    def conninfo(self, **kw) -> dict:
        return dict(host=self.host, port=self.port, user="alice", dbname="db", **kw)


def _run(password=None):
    engine = FakeEngine()
    server = PgServer(engine, host="127.0.0.1", port=0, password=password)
    host, port = server.start_in_thread()
    return Running(engine, server, host, port)


@pytest.fixture
def pg():
    running = _run()
    yield running
    running.server.stop_thread()


@pytest.fixture
def pg_password():
    running = _run(password="s3cret")
    yield running
    running.server.stop_thread()
