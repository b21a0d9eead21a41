"""The asyncio TCP server of the PostgreSQL protocol: accepts connections, runs a Session
for each, and routes CancelRequests to the session they name by (pid, secret).

It talks to the SQL engine only through boundary.Engine. `PgServer` runs inside an
existing event loop (`start`, `serve_forever`, `stop`) or, for tests and embedding in
synchronous code, on its own thread (`start_in_thread`, `stop_thread`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import threading

from coordinator.pgwire import scram, startup
from coordinator.pgwire.boundary import Engine
from coordinator.pgwire.session import Session

log = logging.getLogger(__name__)


class PgServer:
    """Serves `engine` on host:port (port 0 picks a free port). With an `authenticator`
    (startup.Authenticator: the engine's roles), logins are checked against the roles;
    else with `password`, every user must authenticate with it by SCRAM-SHA-256; with
    neither, connections are trusted."""

    def __init__(self, engine: Engine, host: str = "127.0.0.1", port: int = 5432,
                 password: str | None = None,
                 authenticator: "startup.Authenticator | None" = None):
        self.engine = engine
        self.host = host
        self.port = port
        # What startup.negotiate authenticates with (an Authenticator, a Verifier or None).
        self.verifier = authenticator if authenticator is not None else (
            scram.Verifier.from_password(password) if password is not None else None)
        self._sessions: dict[tuple[int, int], Session] = {}
        self._tasks: set[asyncio.Task] = set()
        self._pids = itertools.count(1000)
        self._server: asyncio.base_events.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # --- the SessionHost side ---------------------------------------------------------
    def register(self, session: Session) -> tuple[int, int]:
        key = (next(self._pids), secrets.randbits(31))
        self._sessions[key] = session
        return key

    def unregister(self, session: Session) -> None:
        self._sessions.pop((session.pid, session.secret), None)

    def cancel(self, pid: int, secret: int) -> None:
        """A CancelRequest: cancel the query of the session with this key, if any. Like
        PostgreSQL, a wrong key is ignored without a reply."""
        session = self._sessions.get((pid, secret))
        if session is None:
            log.info("cancel request for unknown backend %d ignored", pid)
            return
        session.cancel_token.cancel()

    @property
    def connection_count(self) -> int:
        """Connections being served now (a connection counts until its session has closed
        its engine session, i.e. until what it was running has stopped)."""
        return len(self._tasks)

    # --- asyncio API ------------------------------------------------------------------
    async def start(self) -> tuple[str, int]:
        """Listen; returns the bound (host, port)."""
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.host, self.port = self._server.sockets[0].getsockname()[:2]
        log.info("pgwire listening on %s:%d", self.host, self.port)
        return self.host, self.port

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        try:
            await self._server.serve_forever()
        except asyncio.CancelledError:
            pass

    async def stop(self, grace_seconds: float = 10.0) -> None:
        """Stop listening, cancel running queries and close every connection (waiting up to
        `grace_seconds` for engine calls that do not notice cancellation)."""
        if self._server is not None:
            self._server.close()
        for session in list(self._sessions.values()):
            session.cancel_token.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace_seconds)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            await Session(self, reader, writer).run()
        except asyncio.CancelledError:
            pass  # stop() ended the connection; the session has cleaned up
        finally:
            self._tasks.discard(task)

    # --- background thread ------------------------------------------------------------
    def start_in_thread(self) -> tuple[str, int]:
        """Run the server on a new thread with its own event loop; returns (host, port)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as e:
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="pgwire-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self.host, self.port

    def stop_thread(self, timeout: float = 10.0) -> None:
        """Stop a server started by `start_in_thread` and join its thread."""
        if self._thread is None or self._loop is None:
            return
        loop = self._loop
        asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout)
        self._thread = None
