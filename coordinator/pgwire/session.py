"""One client connection: the protocol state machine between a socket and an EngineSession.

After start-up (startup.py) the session serves the simple query protocol (Query: every
statement of the text in order, the first error skips the rest) and the extended one
(Parse/Bind/Describe/Execute/Close/Sync/Flush with named and unnamed statements and
portals, row-limited Execute and PortalSuspended, and, after an error, discarding messages
until Sync as PostgreSQL does; the ErrorResponse itself is flushed at once, since a client
may wait after a Flush rather than a Sync). COPY goes to copy.py, row encoding to
portal.py/values.py. Any error fails an open transaction block, also one raised here
(the engine's fail_transaction).

The engine session is given a Frontend (`_Frontend`, boundary.Frontend) at start-up: the
backend pid, notification delivery (NotificationResponse, sent while the session is idle
outside a block: before ReadyForQuery I, or at once while it waits for the next
message), and this connection's named statements and portals, which SQL PREPARE,
EXECUTE, DEALLOCATE, FETCH and MOVE share with the protocol.

Engine calls block, so each runs on this session's own worker thread: connections progress
independently, and one EngineSession only ever sees one thread at a time. The two reads of
its state before ReadyForQuery (transaction_status, idle_in_transaction_timeout) are made
on the event loop, between calls: they never block. Errors become
ErrorResponses and the session goes on; exceptions that are not QueryErrors are logged
with their traceback and reach the client as one-line XX000 errors.

While an engine call runs, the session looks at the socket every DISCONNECT_POLL_SECONDS:
a client that has closed or reset the connection gets its statement cancelled (as
PostgreSQL's client_connection_check_interval does), so an abandoned query stops rather
than running to its end. A session idle inside a transaction block (ReadyForQuery T or E)
longer than the engine's idle_in_transaction_timeout() is ended with FATAL 25P03; closing
the engine session then aborts the transaction.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from coordinator.pgwire import backend, codec, copy, params, scram, startup
from coordinator.pgwire.boundary import (CancelToken, Engine, EngineSession, ResultKind,
                                         TransactionStatus)
from coordinator.pgwire.portal import Portal, Statement, row_description, with_count
from coordinator.pgwire.stream import Connection
from planner import errors

log = logging.getLogger(__name__)

# Sent at start-up unless the engine says otherwise; drivers read several of them.
DEFAULT_PARAMETERS = {
    "server_version": "15.0", "server_encoding": "UTF8", "client_encoding": "UTF8",
    "DateStyle": "ISO, MDY", "IntervalStyle": "postgres", "TimeZone": "UTC",
    "integer_datetimes": "on", "standard_conforming_strings": "on", "is_superuser": "off",
}
_EXTENDED = {codec.Frontend.PARSE, codec.Frontend.BIND, codec.Frontend.DESCRIBE,
             codec.Frontend.EXECUTE, codec.Frontend.CLOSE, codec.Frontend.FLUSH}
_DISCONNECTED = (ConnectionError, asyncio.IncompleteReadError)
_FATAL = (codec.FramingError, *_DISCONNECTED)  # the connection cannot go on after these
SLOW_CALL_SECONDS = 0.005
DISCONNECT_POLL_SECONDS = 0.25  # how often a running engine call checks that the client is there
STARTUP_TIMEOUT_SECONDS = 60.0  # PostgreSQL's authentication_timeout


class SessionHost(Protocol):
    """What a session needs from its server."""

    engine: Engine
    verifier: scram.Verifier | None

    def register(self, session: "Session") -> tuple[int, int]: ...
    def unregister(self, session: "Session") -> None: ...
    def cancel(self, pid: int, secret: int) -> None: ...


def error_response(e: BaseException, severity: str = backend.Severity.ERROR):
    if isinstance(e, errors.QueryError):
        return backend.ErrorResponse(severity, e.sqlstate, e.message, e.detail, e.hint,
                                     e.context)
    # One line, no traceback: the log has the rest.
    text = (str(e).strip().splitlines() or [""])[0][:200]
    head = f"internal error: {type(e).__name__}"
    return backend.ErrorResponse(severity, errors.InternalError.sqlstate,
                                 f"{head}: {text}" if text else head)


class Session:
    def __init__(self, host: SessionHost, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter):
        self.host = host
        self.conn = Connection(reader, writer)
        self.cancel_token = CancelToken()
        self.pid = self.secret = 0
        self._engine: EngineSession | None = None
        self._statements: dict[str, Statement] = {}
        self._portals: dict[str, Portal] = {}
        self._ignore_till_sync = False
        self._idle_limit: float | None = None  # idle_in_transaction timeout, when armed
        self._idle = False  # the last ReadyForQuery said I: notifications go out at once
        self._notices: collections.deque = collections.deque()  # (pid, channel, payload)
        self._flushes: set[asyncio.Task] = set()  # flushes of notifications under way
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pgwire-session")
        self._handlers = {
            codec.Query: self._query, codec.Parse: self._parse, codec.Bind: self._bind,
            codec.Describe: self._describe, codec.Execute: self._execute_message,
            codec.Close: self._close, codec.Sync: self._sync, codec.Flush: self._flush,
        }

    async def call(self, fn, *args):
        """Run a blocking (engine) call on this session's worker thread."""
        future = asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        if self.conn.pending:
            # Replies wait in the buffer: if the engine is slow, the client gets them now
            # (rows stream as batches come) rather than when the buffer fills.
            done, _ = await asyncio.wait({future}, timeout=SLOW_CALL_SECONDS)
            if not done:
                await self.conn.flush()
        try:
            while not future.done():
                done, _ = await asyncio.wait({future}, timeout=DISCONNECT_POLL_SECONDS)
                if not done and not self.cancel_token.cancelled and self.conn.peer_gone():
                    # Nobody will read the result: stop the statement (as a CancelRequest
                    # would).
                    log.info("session %d: client %s went away, cancelling its statement",
                             self.pid, self.conn.peer)
                    self.cancel_token.cancel()
        except asyncio.CancelledError:
            future.cancel()  # the server is stopping: nobody will collect the result
            raise
        return await future

    async def run(self) -> None:
        try:
            started = await asyncio.wait_for(
                startup.negotiate(self.conn, self.host.verifier, self.host.cancel),
                STARTUP_TIMEOUT_SECONDS)
            if started is not None:
                await self._open(started)
                await self._serve()
        except (*_DISCONNECTED, asyncio.TimeoutError):
            log.debug("client %s went away", self.conn.peer)
        except errors.QueryError as e:  # start-up and framing errors end the connection
            await self._fatal(e)
        except Exception as e:
            log.exception("session %d failed", self.pid)
            await self._fatal(e)
        finally:
            await self._cleanup()

    # --- lifecycle --------------------------------------------------------------------
    async def _open(self, started: startup.Startup) -> None:
        engine = self.host.engine
        self._engine = await self.call(engine.open_session, started.user, started.database,
                                       started.options)
        self.pid, self.secret = self.host.register(self)
        self._loop = asyncio.get_running_loop()
        attach = getattr(self._engine, "attach", None)
        if attach is not None:
            await self.call(attach, _Frontend(self))
        status = dict(DEFAULT_PARAMETERS, application_name=started.options.get(
            "application_name", ""), session_authorization=started.user)
        status.update(await self.call(self._engine.parameter_status))
        self._date_style = status["DateStyle"]  # text parameters read dates in its order
        self.conn.send(*(backend.ParameterStatus(k, v) for k, v in status.items()))
        self.conn.send(backend.BackendKeyData(self.pid, self.secret))
        await self._ready()

    async def _fatal(self, e: BaseException) -> None:
        try:
            self.conn.send(error_response(e, backend.Severity.FATAL))
            await self.conn.flush()
        except (*_DISCONNECTED, OSError):
            pass

    async def _cleanup(self) -> None:
        self.cancel_token.cancel()  # a query still running for a client that left must stop
        self.host.unregister(self)
        try:
            for name in list(self._portals):
                await self._close_portal(name)
            if self._engine is not None:
                await self.call(self._engine.close)
        except Exception:
            log.exception("closing session %d failed", self.pid)
        finally:
            self._pool.shutdown(wait=False)
            await self.conn.close()

    async def _ready(self) -> None:
        # Asked here, not on the worker thread: a read of the session's state, made while
        # none of its calls runs, and handing it to the worker would cost every
        # statement a thread hop (about 0.1 ms) for nothing.
        status = self._engine.transaction_status()
        if status is TransactionStatus.IDLE:
            # The (implicit) transaction ended: its portals end with it, as in PostgreSQL.
            for name in list(self._portals):
                await self._close_portal(name)
        self._idle_limit = None
        self._idle = status is TransactionStatus.IDLE
        if status is not TransactionStatus.IDLE:
            self._idle_limit = self._engine.idle_in_transaction_timeout()
        else:
            self._send_notices()  # outside a transaction block, as PostgreSQL delivers them
        self.conn.send(backend.ReadyForQuery(status.value))
        await self.conn.flush()

    # --- notifications (LISTEN / NOTIFY) ----------------------------------------------
    def _notice(self, pid: int, channel: str, payload: str) -> None:
        """On the event loop: a notification the engine delivered for this session. Sent
        now when the session is idle outside a block (it waits for the next message),
        else kept for the next ReadyForQuery I."""
        self._notices.append((pid, channel, payload))
        if self._idle:
            self._send_notices()
            task = asyncio.ensure_future(self._flush_quietly())
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)

    async def _flush_quietly(self) -> None:
        try:
            await self.conn.flush()
        except (*_DISCONNECTED, OSError):
            pass  # the message loop finds the connection gone

    def _send_notices(self) -> None:
        while self._notices:
            self.conn.send(backend.NotificationResponse(*self._notices.popleft()))

    async def _next_frame(self) -> tuple[bytes, bytes]:
        """The next message; waits at most idle_in_transaction_session_timeout when the
        last ReadyForQuery said the session is in a transaction block."""
        limit, self._idle_limit = self._idle_limit, None
        if limit is None:
            return await self.conn.read_frame()
        try:
            return await asyncio.wait_for(self.conn.read_frame(), limit)
        except asyncio.TimeoutError:
            log.info("session %d: idle in transaction for %.3f s, terminating", self.pid, limit)
            raise errors.IdleInTransactionSessionTimeout(
                "terminating connection due to idle-in-transaction timeout") from None

    # --- message loop -----------------------------------------------------------------
    async def _serve(self) -> None:
        while True:
            type_byte, body = await self._next_frame()
            if type_byte == codec.Frontend.TERMINATE:
                return
            self._idle = False  # until the next ReadyForQuery: a command is under way
            if self._ignore_till_sync and type_byte != codec.Frontend.SYNC:
                continue
            try:
                msg = codec.decode_frontend(type_byte, body)
                if isinstance(msg, codec.PasswordMessage):  # only valid during start-up
                    raise codec.FramingError("invalid frontend message type 112")
                handler = self._handlers.get(type(msg))
                if handler is not None:  # else CopyData/Done/Fail after a failed COPY: dropped
                    await handler(msg)
            except _FATAL:
                raise
            except Exception as e:
                self._report(e)
                await self._fail_transaction()
                if type_byte in _EXTENDED:
                    # Sent at once (the client may be waiting after a Flush, not a Sync);
                    # what follows up to Sync is skipped, as in PostgreSQL.
                    self._ignore_till_sync = True
                    await self.conn.flush()
                else:
                    await self._ready()

    def _report(self, e: Exception) -> None:
        if not isinstance(e, errors.QueryError):
            log.error("session %d: internal error", self.pid, exc_info=e)
        self.conn.send(error_response(e))

    async def _fail_transaction(self) -> None:
        """An error fails the transaction block, also one raised here (Bind, Describe)."""
        fail = getattr(self._engine, "fail_transaction", None)
        if fail is not None:
            try:
                await self.call(fail)
            except _FATAL:
                raise
            except Exception:
                log.exception("session %d: failing the transaction failed", self.pid)

    # --- simple query -----------------------------------------------------------------
    async def _query(self, msg: codec.Query) -> None:
        self.cancel_token.reset()
        self._statements.pop("", None)  # a simple Query replaces the unnamed statement
        await self._close_portal("")
        log.debug("session %d: statement: %s", self.pid, msg.sql)
        try:
            prepared, first = await self.call(self._prepare_and_start, msg.sql)
            if not prepared:
                self.conn.send(backend.EmptyQueryResponse())
            for i, stmt in enumerate(prepared):
                portal = first if i == 0 and first is not None else Portal(
                    Statement.create(stmt, ()), [])
                await self._run(portal, 0, simple=True)
        except _FATAL:
            raise
        except Exception as e:
            self._report(e)
            await self._fail_transaction()
        await self._ready()

    def _prepare_and_start(self, sql: str) -> tuple[list, Portal | None]:
        """On the worker thread: the statements of a simple Query and, when there is just
        one, its portal already started (one hand-off for the whole statement)."""
        prepared = self._engine.prepare(sql, [])
        if len(prepared) != 1 or prepared[0] is None:
            return prepared, None
        portal = Portal(Statement.create(prepared[0], ()), [])
        try:
            self._start(portal, 0, simple=True)
        except Exception as e:
            portal.error = e  # raised by _run, where a failure is handled
        return prepared, portal

    def _start(self, portal: Portal, max_rows: int, simple: bool) -> None:
        """On the worker thread: execute the portal's statement and fetch its first rows."""
        result = self._engine.execute(portal.statement.prepared, portal.params,
                                      self.cancel_token)
        if simple and result.binary:
            portal.format_codes = (codec.BINARY,)  # FETCH from a BINARY cursor
        portal.start(result, self.cancel_token)
        if portal.rows is not None:
            portal.ahead = portal.rows.fetch(max_rows if max_rows > 0 else None)

    # --- running a portal (both protocols) --------------------------------------------
    async def _run(self, portal: Portal, max_rows: int, simple: bool, name: str = "") -> None:
        prepared = portal.statement.prepared
        if prepared is None:
            self.conn.send(backend.EmptyQueryResponse())
            return
        if portal.done:
            if portal.rows is None:
                raise errors.QueryError(f'portal "{name}" cannot be run', "55000")
            # A finished SELECT portal runs again as an empty one, as in PostgreSQL.
            self.conn.send(backend.CommandComplete(with_count(portal.rows.engine_tag or "", 0)))
            return
        try:
            if portal.error is not None:
                error, portal.error = portal.error, None
                raise error
            if portal.result is None:
                await self.call(self._start, portal, max_rows, simple)
            if not await self._deliver(portal, max_rows, simple):
                return  # suspended: the next Execute resumes it
        except BaseException:
            await self._discard(portal)
            raise
        portal.done = True
        for key, value in portal.result.parameter_status.items():
            if key == "DateStyle":
                self._date_style = value
            self.conn.send(backend.ParameterStatus(key, value))

    async def _deliver(self, portal: Portal, max_rows: int, simple: bool) -> bool:
        """Send a result; False when a row limit suspended the portal."""
        result = portal.result
        while result.notices:
            n = result.notices.pop(0)
            self.conn.send(backend.NoticeResponse(n.severity, n.code, n.message, n.detail))
        if result.kind is ResultKind.ROWS:
            if simple:
                self.conn.send(portal.describe())
            return await self._send_rows(portal, max_rows)
        if result.kind is ResultKind.COMMAND:
            tag = await self.call(result.tag)
        elif result.kind is ResultKind.EMPTY:
            self.conn.send(backend.EmptyQueryResponse())
            return True
        elif result.kind is ResultKind.COPY_IN:
            tag = await copy.copy_in(self.conn, self.call, result.copy_in)
        else:
            tag = await copy.copy_out(self.conn, self.call, result.copy_out, self.cancel_token)
        self.conn.send(backend.CommandComplete(tag))
        return True

    async def _send_rows(self, portal: Portal, max_rows: int) -> bool:
        rows, limit, sent = portal.rows, (max_rows if max_rows > 0 else None), 0
        portal.limited = portal.limited or limit is not None
        while limit is None or sent < limit:
            if portal.ahead is not None:
                (data, n, tag), portal.ahead = portal.ahead, None
            else:
                data, n, tag = await self.call(rows.fetch,
                                               None if limit is None else limit - sent)
            if data:
                self.conn.send_bytes(data)
            sent += n
            if tag is not None:
                self.conn.send(backend.CommandComplete(
                    with_count(tag, sent if portal.limited else None)))
                return True
            await self.conn.flush_if_full()
        self.conn.send(backend.PortalSuspended())
        return False

    async def _close_portal(self, name: str) -> None:
        portal = self._portals.pop(name, None)
        if portal is not None:
            await self._discard(portal)

    async def _discard(self, portal: Portal) -> None:
        if portal.done:
            return
        try:
            await self.call(portal.close)  # stops the engine's batch generator
        except Exception:
            log.exception("session %d: closing a portal failed", self.pid)

    # --- extended query ---------------------------------------------------------------
    def _statement(self, name: str) -> Statement:
        stmt = self._statements.get(name)
        if stmt is None:
            raise errors.QueryError(f'prepared statement "{name}" does not exist', "26000")
        return stmt

    def _portal(self, name: str) -> Portal:
        portal = self._portals.get(name)
        if portal is None:
            raise errors.QueryError(f'portal "{name}" does not exist', "34000")
        return portal

    async def _parse(self, msg: codec.Parse) -> None:
        if msg.name and msg.name in self._statements:
            raise errors.QueryError(f'prepared statement "{msg.name}" already exists', "42P05")
        log.debug("session %d: parse %s: %s", self.pid, msg.name or "<unnamed>", msg.sql)
        prepared = await self.call(self._engine.prepare, msg.sql, list(msg.param_oids))
        if len(prepared) > 1:
            raise errors.SyntaxError_("cannot insert multiple commands into a prepared statement")
        self._statements[msg.name] = Statement.create(prepared[0] if prepared else None,
                                                      msg.param_oids)
        self.conn.send(backend.ParseComplete())

    async def _bind(self, msg: codec.Bind) -> None:
        stmt = self._statement(msg.statement)
        if msg.portal and (msg.portal in self._portals or await self._cursor(msg.portal)):
            raise errors.QueryError(f'cursor "{msg.portal}" already exists', "42P03")
        await self._close_portal(msg.portal)
        wanted = len(stmt.param_types)
        if len(msg.params) != wanted:
            raise errors.ProtocolViolation(
                f"bind message supplies {len(msg.params)} parameters, but prepared statement "
                f'"{msg.statement}" requires {wanted}')
        formats = params.resolve_formats(msg.param_formats, wanted, "parameter")
        order = getattr(self, "_date_style", "ISO, MDY").split(", ")[-1].lower()
        values = [params.decode(data, t, f, order)
                  for data, t, f in zip(msg.params, stmt.param_types, formats)]
        portal = Portal(stmt, values, msg.result_formats)
        portal.formats()  # a wrong number of result formats fails Bind, as in PostgreSQL
        self._portals[msg.portal] = portal
        self.conn.send(backend.BindComplete())

    async def _cursor(self, name: str):
        """(columns, binary) of the engine's SQL cursor `name` (DECLARE), or None."""
        cursor = getattr(self._engine, "cursor", None)
        return None if cursor is None else await self.call(cursor, name)

    async def _describe(self, msg: codec.Describe) -> None:
        if msg.kind == codec.DESCRIBE_PORTAL:
            if msg.name not in self._portals:
                # A cursor DECLAREd in SQL is a portal too (psycopg describes its named
                # cursors so).
                found = await self._cursor(msg.name) if msg.name else None
                if found is not None:
                    columns, binary = found
                    fmt = codec.BINARY if binary else codec.TEXT
                    self.conn.send(row_description(columns, [fmt] * len(columns)))
                    return
            self.conn.send(self._portal(msg.name).describe())
            return
        stmt = self._statement(msg.name)
        self.conn.send(backend.ParameterDescription(tuple(stmt.param_oids)))
        columns = stmt.columns
        self.conn.send(backend.NoData() if columns is None
                       else row_description(columns, [codec.TEXT] * len(columns)))

    async def _execute_message(self, msg: codec.Execute) -> None:
        portal = self._portal(msg.portal)
        self.cancel_token.reset()
        try:
            await self._run(portal, msg.max_rows, simple=False, name=msg.portal)
        except BaseException:
            self._portals.pop(msg.portal, None)  # a failed portal cannot be resumed
            raise

    async def _close(self, msg: codec.Close) -> None:
        if msg.kind == codec.DESCRIBE_STATEMENT:
            self._statements.pop(msg.name, None)
        else:
            await self._close_portal(msg.name)
        self.conn.send(backend.CloseComplete())

    async def _sync(self, msg: codec.Sync) -> None:
        self._ignore_till_sync = False
        await self._ready()

    async def _flush(self, msg: codec.Flush) -> None:
        await self.conn.flush()


class _Frontend:
    """What the engine session gets of this connection (boundary.Frontend)."""

    def __init__(self, session: Session):
        self._session = session
        self.pid = session.pid
        self.peer = session.conn.peer  # "host:port" (pg_stat_activity's client_addr)

    def notify(self, pid: int, channel: str, payload: str) -> None:
        try:
            self._session._loop.call_soon_threadsafe(self._session._notice, pid, channel,
                                                     payload)
        except RuntimeError:
            pass  # the event loop has stopped: the connection is gone

    # The engine calls these on the session's worker thread while the message loop waits
    # for that call, so the dictionary is never used by two threads at once.
    def statement(self, name: str):
        stmt = self._session._statements.get(name) if name else None
        return stmt.prepared if stmt is not None else None

    def add_statement(self, name: str, stmt) -> None:
        if name in self._session._statements:
            raise errors.QueryError(f'prepared statement "{name}" already exists', "42P05")
        self._session._statements[name] = Statement.create(stmt, ())

    def drop_statement(self, name: str) -> bool:
        return bool(name) and self._session._statements.pop(name, None) is not None

    def drop_statements(self) -> None:
        for name in [n for n in self._session._statements if n]:
            del self._session._statements[name]

    def portal_rows(self, name: str, count: int | None):
        """SQL FETCH/MOVE on the protocol portal `name` (asyncpg moves its cursors so):
        (columns, Arrow batches of up to `count` rows, their number), None when there is
        no such portal. A portal not executed yet starts here (not for a count of 0)."""
        session = self._session
        portal = session._portals.get(name) if name else None
        if portal is None or count == 0:
            return None if portal is None else (portal.columns() or [], [], 0)
        if portal.statement.prepared is None or (portal.result is None and portal.done):
            raise errors.QueryError(f'portal "{name}" cannot be run', "55000")
        if portal.result is None:
            result = session._engine.execute(portal.statement.prepared, portal.params,
                                             session.cancel_token)
            portal.start(result, session.cancel_token)
        if portal.rows is None:
            raise errors.QueryError(f'portal "{name}" cannot be run', "55000")
        if portal.done:
            return portal.columns(), [], 0
        batches, got = portal.rows.take(count)
        return portal.columns(), batches, got
