"""Fixtures shared by the SQL logic tests and the end-to-end tests: raympp servers in-process.

One private Ray (bound to 127.0.0.1, usage stats off) is started once per test session, the
first time a test asks for a server. `raympp_cluster(n)` gives a running coordinator with n
segments and a PostgreSQL-protocol server in front of it; servers are cached by segment
count, each on its own data directory, and stopped at the end of the session. Unit tests
never touch these fixtures, so they run without Ray.

`pg_oracle` is a private PostgreSQL 15 (tests/pg_oracle.py), started the first time a test
asks for it and stopped at the end of the session; tests that do not ask never start it.
It skips only when initdb/pg_ctl are not installed; a server that does not start fails.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from dataclasses import dataclass, field

import pytest

# Each coordinator and segment process would load up to 20 s of cached compiled code in
# the background as it starts (segment/jit/warmup.py): the suite starts dozens of them on
# two cores. Off here (Ray workers and `raympp serve` children inherit it);
# tests/unit/test_jit_warmup.py tests the warm-up itself.
os.environ.setdefault("RAYMPP_JIT_WARMUP", "0")

HOST = "127.0.0.1"
USER = "raympp"
DBNAME = "raympp"


def free_port() -> int:
    """A TCP port that was free a moment ago (the small race is acceptable in tests)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


@dataclass
class RunningServer:
    """A coordinator (Engine) with its segments, served over pgwire on host:port."""

    host: str
    port: int
    n_segments: int
    data_dir: str
    engine: object
    server: object
    _stop: object = field(repr=False, default=None)
    password: str | None = None  # the bootstrap superuser's (raympp serve --password)

    def connect(self, autocommit: bool = True, user: str = USER, **kwargs):
        """A connection as `user` (the bootstrap superuser: with the server's password)."""
        import psycopg

        if user == USER and self.password is not None:
            kwargs.setdefault("password", self.password)
        return psycopg.connect(host=self.host, port=self.port, user=user, dbname=DBNAME,
                               autocommit=autocommit, connect_timeout=30, **kwargs)

    def stop(self) -> None:
        try:
            self._stop()
        finally:
            self.engine.shutdown()


def _serve_in_thread(server) -> tuple[str, int, object]:
    """Start `server` on a background event loop; returns (host, port, stop)."""
    if hasattr(server, "start_in_thread"):
        host, port = server.start_in_thread()
        return host, port, server.stop_thread
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="pgwire-test-loop", daemon=True)
    thread.start()
    host, port = asyncio.run_coroutine_threadsafe(server.start(), loop).result(60)

    def stop():
        try:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(60)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)
    return host, port, stop


def start_server(data_dir: str, n_segments: int, password: str | None = None) -> RunningServer:
    """A server as `raympp serve` runs one: logins checked against the roles (trusted, or
    with `password` every role needs its password and the bootstrap superuser has it)."""
    from coordinator import roles
    from coordinator.engine import Engine
    from coordinator.pgwire.server import PgServer

    engine = Engine(data_dir, n_segments)
    try:
        # Port 0: the server picks a free port and reports it.
        server = PgServer(engine, HOST, 0, authenticator=roles.setup(engine.catalog, password))
        host, port, stop = _serve_in_thread(server)
    except BaseException:
        engine.shutdown()
        raise
    return RunningServer(host, port, n_segments, data_dir, engine, server, stop, password)


@pytest.fixture(scope="session")
def ray_session():
    """A private local Ray for the whole session, stopped at its end."""
    from deploy import ray_local

    ray_local.connect(None)
    yield
    ray_local.stop()


@pytest.fixture(scope="session")
def raympp_cluster(ray_session, tmp_path_factory):
    """`raympp_cluster(n)` -> RunningServer with n segments (started once per n, then shared).

    Tests sharing a server must use their own table names; the SLT runner drops the tables a
    file creates before and after running it.
    """
    servers: dict[int, RunningServer] = {}
    failures: dict[int, BaseException] = {}
    lock = threading.Lock()

    def get(n_segments: int) -> RunningServer:
        with lock:
            if n_segments in failures:
                # Starting failed once already: fail fast instead of retrying per test.
                first = (str(failures[n_segments]).strip().splitlines() or [""])[0][:300]
                raise RuntimeError(f"raympp with {n_segments} segments did not start "
                                   f"(see the first test that asked for it): {first}")
            if n_segments not in servers:
                data_dir = str(tmp_path_factory.mktemp(f"raympp-{n_segments}seg"))
                try:
                    servers[n_segments] = start_server(data_dir, n_segments)
                except BaseException as e:
                    failures[n_segments] = e
                    raise
            return servers[n_segments]

    yield get
    for s in servers.values():
        s.stop()


@pytest.fixture(scope="session")
def pg_oracle():
    """A running PostgresOracle (tests/pg_oracle.py): `.connect(dbname)`, `.host`, `.port`."""
    # tests/ is on sys.path (the directory of this conftest)
    import pg_oracle as oracle_module

    server = oracle_module.PostgresOracle()
    try:
        server.start()
    except oracle_module.Unavailable as e:
        pytest.skip(str(e))
    except oracle_module.StartError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


def own_cluster(tmp_path_factory, name: str, n_segments: int, password: str | None = None):
    """A server of one test module's own (for tests that kill its segments, or that need
    passwords): yields it, stops it at the end. Use from a module-scoped fixture."""
    srv = start_server(str(tmp_path_factory.mktemp(name)), n_segments, password)
    try:
        yield srv
    finally:
        srv.stop()


# --- killing segments for real (kill -9), for the fault tests --------------------------------
RESTART_WAIT = 90.0


def segment_pid(server: RunningServer, seg: int) -> int:
    import ray

    return ray.get(server.engine.cluster.actors[seg].pid.remote(), timeout=RESTART_WAIT)


def run_async(coro, timeout=60):
    """Run a client coroutine (asyncpg); a hang fails the test instead of blocking it."""
    import asyncio

    return asyncio.run(asyncio.wait_for(coro, timeout))


async def asyncpg_connect(server):
    """An asyncpg connection to a RunningServer, as the bootstrap superuser."""
    import asyncpg

    return await asyncpg.connect(host=server.host, port=server.port, user="raympp",
                                 database="raympp", timeout=30)


def kill_segment(server: RunningServer, seg: int) -> int:
    """kill -9 one segment process; returns its pid."""
    import os
    import signal

    pid = segment_pid(server, seg)
    os.kill(pid, signal.SIGKILL)
    return pid


def wait_restarted(server: RunningServer, seg: int, old_pid: int) -> None:
    """Until Ray has started segment `seg` again as a new process."""
    import time

    import ray

    deadline = time.monotonic() + RESTART_WAIT
    while time.monotonic() < deadline:
        try:
            if segment_pid(server, seg) != old_pid:
                return
        except ray.exceptions.RayActorError:
            pass  # restarting: ask again
        time.sleep(0.2)
    pytest.fail(f"segment {seg} was not restarted")
