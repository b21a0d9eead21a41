"""A small in-memory Engine for the pgwire tests: canned statements recognised by text.

Statements (case-insensitive, separated by ';'):
  select types            every SQL type, two batches (TYPES_ROWS)
  select 1                one int4 column
  select series N         int8 column n = 0..N-1 in batches of 1000
  select echo $1, ...     one text row: "<python type>:<repr>" of each decoded parameter
  select slow             one batch, then waits for cancellation (QueryCanceled); the
                          batch reaches the client with the error, not before
  select broken           one batch, then SegmentFailure
  select error            DivisionByZero with detail and hint; select crash: RuntimeError
  begin / commit / rollback, create ..., insert ..., set NAME = VALUE   (COMMANDs)
  copy T from stdin [binary], copy T to stdout
  fetch binary            "select 1"'s row, sent in binary by the simple protocol
anything else is a syntax error at prepare time. The engine's `cursors` (name -> columns)
are what Describe of a portal finds besides the protocol's portals; `notify(...)` sends a
notification to every attached session, as another session's NOTIFY would.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from decimal import Decimal

import pyarrow as pa

from coordinator.pgwire.boundary import (CancelToken, CopyFormat, CopyIn, CopyOut,
                                         PreparedStatement, QueryResult, ResultColumn,
                                         ResultKind, TransactionStatus)
from planner import errors, types

UTC = dt.timezone.utc
TYPES_COLUMNS = [
    ResultColumn("b", types.BOOL), ResultColumn("i2", types.INT2),
    ResultColumn("i4", types.INT4), ResultColumn("i8", types.INT8),
    ResultColumn("f4", types.FLOAT4), ResultColumn("f8", types.FLOAT8),
    ResultColumn("n", types.numeric(15, 2)), ResultColumn("nw", types.numeric(None, 4)),
    ResultColumn("t", types.TEXT), ResultColumn("vc", types.varchar(10)),
    ResultColumn("c", types.char(3)), ResultColumn("d", types.DATE),
    ResultColumn("ts", types.TIMESTAMP), ResultColumn("tstz", types.TIMESTAMPTZ),
    ResultColumn("iv", types.INTERVAL),
]
# (python value as psycopg returns it, value stored in the Arrow batch) per column.
TYPES_ROWS = [
    [True, 1, 2, 3, 1.5, 0.1, Decimal("12.30"), Decimal("-1234567890123456789012.5000"),
     "héllo", "abc", "ab ", dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5, 600000),
     dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), dt.timedelta(days=3, hours=4, minutes=5)],
    [None] * 15,
    [False, -32768, -2**31, -2**63, float("inf"), -1e300, Decimal("-0.05"), Decimal("0.0001"),
     "", "", "x  ", dt.date(1999, 12, 31), dt.datetime(2000, 1, 1),
     dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
     dt.timedelta(days=-1, microseconds=-500)],
]


def _arrow_value(col: ResultColumn, value):
    if value is None:
        return None
    if col.type.is_scaled_int:
        return int(value.scaleb(col.type.scale))
    if col.type.kind is types.Kind.CHAR:
        return value.rstrip()  # stored unpadded; pgwire pads char(n)
    if isinstance(value, dt.timedelta):
        micros = value // dt.timedelta(microseconds=1)
        days = int(micros / 86_400_000_000)  # toward zero: '-1 days -00:00:00.0005'
        return pa.MonthDayNano([0, days, (micros - days * 86_400_000_000) * 1000])
    return value


def types_batches() -> list[pa.RecordBatch]:
    schema = pa.schema([pa.field(c.name, c.type.arrow_type()) for c in TYPES_COLUMNS])
    arrays = [[_arrow_value(c, row[i]) for row in TYPES_ROWS] for i, c in enumerate(TYPES_COLUMNS)]
    batch = pa.record_batch([pa.array(a, f.type) for a, f in zip(arrays, schema)], schema=schema)
    return [batch.slice(0, 1), batch.slice(1)]


class FakeSession:
    def __init__(self, engine: "FakeEngine", user: str, database: str, options: dict):
        self.engine, self.user, self.database, self.options = engine, user, database, options
        self.status = TransactionStatus.IDLE
        self.closed = False
        self.frontend = None

    def attach(self, frontend) -> None:
        self.frontend = frontend

    def cursor(self, name: str):
        columns = self.engine.cursors.get(name)
        return None if columns is None else (columns, False)

    def fail_transaction(self) -> None:
        if self.status is TransactionStatus.IN_TRANSACTION:
            self.status = TransactionStatus.FAILED

    def parameter_status(self) -> dict[str, str]:
        return {"server_version": "15.4", "TimeZone": "UTC"}

    def idle_in_transaction_timeout(self) -> float | None:
        return self.engine.idle_in_transaction_timeout

    def transaction_status(self) -> TransactionStatus:
        return self.status

    def close(self) -> None:
        self.closed = True

    def prepare(self, sql: str, param_oids: list[int]) -> list[PreparedStatement]:
        out = []
        for text in (s.strip() for s in sql.split(";")):
            if not text:
                continue
            key = " ".join(text.lower().split())
            nparams = max([int(n) for n in re.findall(r"\$(\d+)", key)], default=0)
            out.append(PreparedStatement(text, [types.UNKNOWN] * nparams,
                                         self._columns(key, nparams), handle=key))
        return out

    def _columns(self, key: str, nparams: int):
        if key in ("select types", "select slow", "select broken"):
            return TYPES_COLUMNS
        if key in ("select 1", "fetch binary"):
            return [ResultColumn("?column?", types.INT4)]
        if key.startswith("select series"):
            return [ResultColumn("n", types.INT8)]
        if key.startswith("select echo"):
            return [ResultColumn(f"p{i + 1}", types.TEXT) for i in range(nparams)]
        if key in ("select error", "select crash"):
            return [ResultColumn("x", types.INT4)]
        if re.match(r"(begin|start transaction|commit|end|rollback|create|insert|set|copy)\b",
                    key):
            return None
        raise errors.SyntaxError_(f'syntax error at or near "{key.split()[0]}"')

    def execute(self, stmt: PreparedStatement, params: list, cancel: CancelToken) -> QueryResult:
        key = stmt.handle
        self.engine.executed.append(key)
        if self.status is TransactionStatus.FAILED and not re.match(r"(commit|end|rollback)", key):
            raise errors.InFailedTransaction("current transaction is aborted, "
                                             "commands ignored until end of transaction block")
        try:
            return self._execute(key, stmt, params, cancel)
        except Exception:
            if self.status is TransactionStatus.IN_TRANSACTION:
                self.status = TransactionStatus.FAILED
            raise

    def _execute(self, key, stmt, params, cancel) -> QueryResult:
        rows = lambda batches, tag: QueryResult(ResultKind.ROWS, tag, stmt.columns, iter(batches))
        if key == "select types":
            return rows(types_batches(), lambda: "SELECT 3")
        if key in ("select 1", "fetch binary"):
            result = rows([pa.record_batch([pa.array([1], pa.int32())], names=["?column?"])],
                          lambda: "SELECT 1")
            result.binary = key == "fetch binary"
            return result
        if key.startswith("select series"):
            return self._series(int(key.split()[2]), stmt.columns)
        if key.startswith("select echo"):
            texts = [f"{type(p).__name__}:{p!r}" for p in params]
            batch = pa.record_batch([pa.array([t]) for t in texts],
                                    names=[c.name for c in stmt.columns]) if texts else None
            return rows([batch] if batch else [], lambda: "SELECT 1")
        if key == "select slow":
            return rows(self._slow(cancel), lambda: "SELECT 1")
        if key == "select broken":
            return rows(self._broken(), lambda: "SELECT 1")
        if key == "select error":
            raise errors.DivisionByZero("division by zero", detail="dividing 1 by 0",
                                        hint="do not do that")
        if key == "select crash":
            raise RuntimeError("boom\nsecond line")
        if key.startswith("copy"):
            return self._copy(key)
        return self._command(key)

    def _series(self, n: int, columns) -> QueryResult:
        def batches():
            for start in range(0, n, 1000):
                yield pa.record_batch([pa.array(range(start, min(n, start + 1000)), pa.int64())],
                                      names=["n"])
        return QueryResult(ResultKind.ROWS, lambda: f"SELECT {n}", columns, batches())

    def _slow(self, cancel: CancelToken):
        yield types_batches()[0]
        self.engine.slow_running.set()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if cancel.cancelled:
                self.engine.canceled.set()
                raise errors.QueryCanceled("canceling statement due to user request")
            time.sleep(0.02)

    def _broken(self):
        yield types_batches()[0]
        raise errors.SegmentFailure("segment 1 died", detail="actor gone")

    def _command(self, key: str) -> QueryResult:
        word = key.split()[0]
        tag, status = {"begin": ("BEGIN", TransactionStatus.IN_TRANSACTION),
                       "start": ("START TRANSACTION", TransactionStatus.IN_TRANSACTION),
                       "commit": ("COMMIT", TransactionStatus.IDLE),
                       "end": ("COMMIT", TransactionStatus.IDLE),
                       "rollback": ("ROLLBACK", TransactionStatus.IDLE)}.get(word, (None, None))
        if tag == "COMMIT" and self.status is TransactionStatus.FAILED:
            tag = "ROLLBACK"
        if status is not None:
            self.status = status
            return QueryResult(ResultKind.COMMAND, lambda: tag)
        if word == "set":
            name, value = re.match(r"set (\w+) *(?:=|to) *'?([^']*)'?", key).groups()
            return QueryResult(ResultKind.COMMAND, lambda: "SET", parameter_status={name: value})
        if word == "create":
            return QueryResult(ResultKind.COMMAND, lambda: "CREATE TABLE")
        return QueryResult(ResultKind.COMMAND, lambda: "INSERT 0 1")

    def _copy(self, key: str) -> QueryResult:
        table = key.split()[1]
        if " from stdin" in key:
            fmt = CopyFormat.BINARY if "binary" in key else CopyFormat.TEXT
            received: list[bytes] = []

            def finish() -> int:
                data = b"".join(received)
                self.engine.copied[table] = data
                return data.count(b"\n")
            sink = CopyIn(fmt, 2, received.append, finish,
                          lambda reason: self.engine.aborted.append(reason))
            return QueryResult(ResultKind.COPY_IN, copy_in=sink)
        data = self.engine.copied.get(table, b"1\tone\n2\ttwo\n")
        lines = data.splitlines(keepends=True)
        return QueryResult(ResultKind.COPY_OUT, copy_out=CopyOut(
            CopyFormat.TEXT, 2, iter(lines), lambda: len(lines)))


class FakeEngine:
    def __init__(self):
        self.sessions: list[FakeSession] = []
        self.executed: list[str] = []
        self.copied: dict[str, bytes] = {}
        self.aborted: list[str] = []
        self.canceled = threading.Event()
        self.slow_running = threading.Event()  # "select slow" gave its batch and waits
        self.idle_in_transaction_timeout: float | None = None  # what sessions report
        self.cursors: dict[str, list[ResultColumn]] = {}

    def notify(self, pid: int, channel: str, payload: str) -> None:
        for s in self.sessions:
            if s.frontend is not None:
                s.frontend.notify(pid, channel, payload)

    def open_session(self, user: str, database: str, options: dict) -> FakeSession:
        if database == "nosuchdb":
            raise errors.QueryError(f'database "{database}" does not exist', "3D000")
        session = FakeSession(self, user, database, options)
        self.sessions.append(session)
        return session
