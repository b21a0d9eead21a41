"""The boundary between the wire protocol and the SQL engine.

pgwire knows nothing about planning or segments: it talks to an `Engine` through these
types only. The engine is synchronous (it blocks on Ray calls); the asyncio server calls it
from worker threads. Result rows come as Arrow record batches whose columns are laid out as
each column's `SqlType.arrow_type()` says; pgwire encodes them in text or binary format.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol

import pyarrow as pa

from planner.copy_options import CopyFormat  # noqa: F401 - part of this seam
from planner.types import SqlType


@dataclass(frozen=True)
class ResultColumn:
    name: str
    type: SqlType


class ResultKind(enum.Enum):
    ROWS = "rows"          # RowDescription + DataRows + CommandComplete
    COMMAND = "command"    # CommandComplete only (DDL, INSERT, SET, BEGIN, ...)
    COPY_IN = "copy_in"    # CopyInResponse, then the client sends CopyData
    COPY_OUT = "copy_out"  # CopyOutResponse + CopyData + CopyDone + CommandComplete
    EMPTY = "empty"        # EmptyQueryResponse


@dataclass
class CopyIn:
    """Sink for COPY ... FROM STDIN. pgwire feeds raw CopyData payloads to `write`.

    `finish()` returns the number of rows loaded (for the tag "COPY n"); `abort(msg)` is
    called on CopyFail or a broken connection and must leave nothing visible.
    """

    format: CopyFormat
    column_count: int
    write: Callable[[bytes], None]
    finish: Callable[[], int]
    abort: Callable[[str], None]


@dataclass
class CopyOut:
    """Source for COPY ... TO STDOUT: `chunks` yields CopyData payloads (bytes).

    `row_count()` is valid after `chunks` is exhausted (for the tag "COPY n").
    """

    format: CopyFormat
    column_count: int
    chunks: Iterator[bytes]
    row_count: Callable[[], int]


@dataclass(frozen=True)
class Notice:
    """A NOTICE (or WARNING) a statement sends before its result (severity NOTICE,
    SQLSTATE 00000 unless given): PostgreSQL's "drop cascades to ..." and "... skipping"
    messages, VACUUM's "skipping ... cannot vacuum non-tables" WARNING."""

    message: str
    detail: str | None = None
    code: str = "00000"
    severity: str = "NOTICE"  # NOTICE | WARNING (code 01000)


@dataclass
class QueryResult:
    """What executing one statement produced.

    For ROWS, `batches` is lazy: rows stream to the client as segments produce them, and
    `tag()` is called after the batches are exhausted ("SELECT 42"). For COMMAND, `tag()`
    gives the command tag ("CREATE TABLE", "INSERT 0 3", "BEGIN").
    """

    kind: ResultKind
    tag: Callable[[], str] = lambda: ""
    columns: list[ResultColumn] | None = None
    batches: Iterator[pa.RecordBatch] | None = None
    copy_in: CopyIn | None = None
    copy_out: CopyOut | None = None
    # ParameterStatus messages to send after this statement (e.g. after SET DateStyle).
    parameter_status: dict[str, str] = field(default_factory=dict)
    # Rows in binary format when sent by the simple query protocol (FETCH from a BINARY
    # cursor); the extended protocol uses Bind's result formats, as PostgreSQL does.
    binary: bool = False
    # The session's TimeZone (a planner.time_zones.Zone) timestamptz text is shown in;
    # None: UTC.
    time_zone: object = None
    # NOTICEs sent before the result (those client_min_messages lets through).
    notices: list[Notice] = field(default_factory=list)


@dataclass
class PreparedStatement:
    """A parsed (and, where possible, planned) statement.

    `param_types` has one entry per $n placeholder (the client's declared OIDs where given,
    otherwise inferred; UNKNOWN means the client sends text). `columns` is the result shape
    (None for statements that return no rows), known before execution for Describe.
    """

    sql: str
    param_types: list[SqlType]
    columns: list[ResultColumn] | None
    handle: object = None  # engine-private


class CancelToken:
    """Set by a CancelRequest; engines check it between batches and stop the query."""

    def __init__(self):
        self._event = threading.Event()
        self._event.reason = None
        self.generation = 0  # counts statements: a late timer must not cancel the next one

    @property
    def event(self) -> threading.Event:
        """The event engines wait on; its `reason` says why it was set (None: the user)."""
        return self._event

    def cancel(self, reason: str | None = None):
        if not self._event.is_set():
            self._event.reason = reason
        self._event.set()

    def cancel_if_current(self, generation: int, reason: str) -> None:
        """cancel(reason), unless a new statement has started since `generation`."""
        if self.generation == generation:
            self.cancel(reason)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def message(self) -> str:
        return self._event.reason or "canceling statement due to user request"

    def reset(self):
        self.generation += 1
        self._event.clear()
        self._event.reason = None


class TransactionStatus(enum.Enum):
    IDLE = b"I"
    IN_TRANSACTION = b"T"
    FAILED = b"E"


class Frontend(Protocol):
    """What pgwire lends its engine session (`EngineSession.attach`): the backend pid the
    client was given, delivery of notifications, and the session's prepared statements,
    which SQL PREPARE / EXECUTE / DEALLOCATE share with the protocol's named statements
    (one namespace, as in PostgreSQL)."""

    pid: int

    def notify(self, pid: int, channel: str, payload: str) -> None:
        """A notification for this session (LISTEN); callable from any thread."""

    def statement(self, name: str) -> "PreparedStatement | None": ...

    def add_statement(self, name: str, stmt: "PreparedStatement") -> None:
        """Raises 42P05 when the name is taken."""

    def drop_statement(self, name: str) -> bool: ...

    def drop_statements(self) -> None: ...

    def portal_rows(self, name: str, count: int | None):
        """SQL FETCH/MOVE of up to `count` rows (None: all) of the protocol portal `name`:
        (columns, Arrow batches, rows), or None when there is no such portal. A count of
        0 only tells whether the portal exists."""


class EngineSession(Protocol):
    """One client connection's view of the engine (transaction state, settings).

    Optional: `attach(frontend)` right after start-up; `cursor(name)` -> (columns, binary)
    of an open SQL cursor (DECLARE), which Describe of a portal of that name reports, or
    None; `fail_transaction()` after an error pgwire raised itself (Bind, Describe) inside
    a transaction block, which fails the block as any error does in PostgreSQL."""

    def prepare(self, sql: str, param_oids: list[int]) -> list[PreparedStatement]:
        """Parse `sql`; one PreparedStatement per statement (empty list for empty text).

        Raises QueryError (e.g. 42601) on bad SQL.
        """

    def execute(self, stmt: PreparedStatement, params: list[object],
                cancel: CancelToken) -> QueryResult:
        """Run one prepared statement with parameter values already decoded to Python
        values (int, float, Decimal, str, bool, date, datetime, None); str for UNKNOWN."""

    def transaction_status(self) -> TransactionStatus:
        """Called on pgwire's event loop while none of the session's calls runs (before
        each ReadyForQuery): must not block. So is idle_in_transaction_timeout."""

    def parameter_status(self) -> dict[str, str]:
        """ParameterStatus values to send at startup (server_version, DateStyle, ...)."""

    def idle_in_transaction_timeout(self) -> float | None:
        """Seconds a session may stay idle inside a transaction block (ReadyForQuery T or
        E) before pgwire ends it with FATAL 25P03; None for no limit."""

    def close(self) -> None:
        """The connection ended: roll back an open transaction, free resources."""


class Engine(Protocol):
    def open_session(self, user: str, database: str, options: dict[str, str]) -> EngineSession: ...
