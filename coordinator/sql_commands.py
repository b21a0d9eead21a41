"""Session commands with state of their own: savepoints, cursors, LISTEN/NOTIFY and SQL
PREPARE/EXECUTE/DEALLOCATE (coordinator/session.py routes them here).

Savepoints. SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT] work inside a block
(25P01 outside, 3B001 for a name that is not there). ROLLBACK TO clears a failed block,
drops the rows INSERT and COPY wrote after the savepoint (each segment marked its pending
chunks at the SAVEPOINT: coordinator/transaction.py, segment/storage/shard_store.py),
closes the cursors declared after it, drops the notifications and LISTENs queued after
it and restores the settings of its moment, as PostgreSQL does. After DDL or TRUNCATE
since the savepoint it is refused with 0A000 — never reported done while keeping those
changes; the block is then failed and only ROLLBACK ends it. A COMMIT of such a block
fails (0A000) after rolling it back, instead of answering ROLLBACK as for other failed
blocks: drivers that swallow the refused ROLLBACK TO (psycopg's nested `transaction()`
on an exception) would otherwise lose the block's writes silently.

Cursors. DECLARE name [BINARY] [NO SCROLL] CURSOR [WITH HOLD | WITHOUT HOLD] FOR query,
FETCH/MOVE [NEXT | FORWARD [n | ALL] | n | ALL | ABSOLUTE n | RELATIVE n] [FROM | IN] name,
CLOSE name | ALL. A cursor streams its query's rows as they are fetched (the slices run
while it is open, as a suspended portal's do); FETCH gathers the rows it returns. Without
WITH HOLD it needs a block (25P01) and ends with it; WITH HOLD cursors are materialized
(the rest of their rows kept in the coordinator's memory) at COMMIT, or at once outside a
block, and live until CLOSE or the session's end; a ROLLBACK drops the cursors its
transaction declared. Cursors move forward only: SCROLL is refused (0A000), and so is
any backward move (0A000; 55000 "cursor can only scan forward" for NO SCROLL cursors, as
PostgreSQL). A cursor's run is cancelled by a cancel or a statement_timeout of the FETCH
or MOVE using it (the statement_timeout applies to each FETCH, not to the cursor's life).

LISTEN / UNLISTEN / NOTIFY work between the sessions of this coordinator: inside a block
they take effect at COMMIT (nothing at ROLLBACK); a notification goes to every session
listening on the channel, the sender included, and pgwire sends it when that session is
idle outside a block. Duplicates of one block (same channel and payload) are sent once.

PREPARE name [(type, ...)] AS statement, EXECUTE name [(value, ...)] and DEALLOCATE
[PREPARE] name | ALL share one namespace with the protocol's named statements (the
pgwire Frontend): EXECUTE runs a statement Parse made, DEALLOCATE removes one.
`SELECT pg_advisory_unlock_all()` (in asyncpg's reset) answers as PostgreSQL: raympp
has no advisory locks, so none are held.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref

from sqlglot import exp

from coordinator import query
from coordinator.pgwire.boundary import PreparedStatement, QueryResult, ResultColumn, ResultKind
from coordinator.transaction import State
from planner import errors, statements, types
from planner.statements import Kind
from planner import bind_expr
from coordinator import load
from coordinator import modify

NOTIFY_PAYLOAD_LIMIT = 8000  # bytes, as PostgreSQL's NOTIFY_PAYLOAD_MAX_LENGTH


def _command(tag: str, status: dict | None = None) -> QueryResult:
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag, parameter_status=status or {})


def _not_in_block(what: str) -> errors.QueryError:
    return errors.QueryError(f"{what} can only be used in transaction blocks", "25P01")


# --- LISTEN / NOTIFY between the sessions of one engine -------------------------------------
class Notifier:
    """Which sessions listen on which channel."""

    _of: "weakref.WeakKeyDictionary[object, Notifier]" = weakref.WeakKeyDictionary()
    _guard = threading.Lock()

    def __init__(self):
        self._lock = threading.Lock()
        self._channels: dict[str, set] = {}

    @classmethod
    def of(cls, engine) -> "Notifier":
        with cls._guard:
            n = cls._of.get(engine)
            if n is None:
                n = cls._of[engine] = Notifier()
            return n

    def listen(self, commands: "SessionCommands", channel: str) -> None:
        with self._lock:
            self._channels.setdefault(channel, set()).add(commands)

    def unlisten(self, commands: "SessionCommands", channel: str) -> None:
        with self._lock:
            members = self._channels.get(channel)
            if members is not None:
                members.discard(commands)
                if not members:
                    del self._channels[channel]

    def notify(self, pid: int, channel: str, payload: str) -> None:
        with self._lock:
            members = list(self._channels.get(channel, ()))
        for m in members:
            m.deliver(pid, channel, payload)


# --- prepared statements when no pgwire Frontend is attached ---------------------------------
class _LocalStatements:
    def __init__(self):
        self._stmts: dict[str, PreparedStatement] = {}

    def statement(self, name):
        return self._stmts.get(name)

    def add_statement(self, name, stmt):
        if name in self._stmts:
            raise errors.QueryError(f'prepared statement "{name}" already exists', "42P05")
        self._stmts[name] = stmt

    def drop_statement(self, name):
        return self._stmts.pop(name, None) is not None

    def drop_statements(self):
        self._stmts.clear()


# --- cursors -----------------------------------------------------------------------------------
class CursorCancel:
    """The cancel event of a cursor's run: set when the cursor closes, and while a FETCH
    or MOVE on it runs, whenever that statement's cancel token is (a cancel request, its
    statement_timeout). Between statements, nothing cancels the run."""

    def __init__(self):
        self._own = threading.Event()
        self.token = None  # the CancelToken of the statement now using the cursor

    def is_set(self) -> bool:
        token = self.token
        return self._own.is_set() or (token is not None and token.cancelled)

    def set(self) -> None:
        self._own.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._own.wait(timeout) or self.is_set()

    @property
    def reason(self):
        token = self.token
        if not self._own.is_set() and token is not None and token.cancelled:
            return token.event.reason
        return None


@dataclasses.dataclass(eq=False)
class Cursor:
    name: str
    columns: list[ResultColumn]
    binary: bool
    hold: bool
    scroll: bool | None
    txn: object  # the transaction that declared it; None once held past its commit
    source: object = None  # iterator of Arrow batches still to come (None: exhausted)
    cancel: CursorCancel = dataclasses.field(default_factory=CursorCancel)
    pending: object = None  # the rest of a batch partly fetched
    position: int = 0  # rows fetched or moved over so far
    failed: bool = False

    def take(self, n: int | None) -> tuple[list, int]:
        """Up to n rows (None: all the rest) as batches, and their count."""
        out, got = [], 0
        while n is None or got < n:
            if self.pending is None or self.pending.num_rows == 0:
                if self.source is None:
                    break
                batch = next(self.source, None)
                if batch is None:
                    self.source = None
                    break
                self.pending = batch
                continue
            want = self.pending.num_rows if n is None else min(n - got, self.pending.num_rows)
            out.append(self.pending.slice(0, want))
            self.pending = self.pending.slice(want)
            got += want
        self.position += got
        return out, got

    def materialize(self) -> None:
        """Keep the rest of the rows here: the cursor outlives its transaction."""
        rest = ([self.pending] if self.pending is not None and self.pending.num_rows else [])
        if self.source is not None:
            rest += list(self.source)
        self.pending, self.source = None, iter(rest)

    def close(self) -> None:
        self.cancel.set()
        close = getattr(self.source, "close", None)
        self.source = self.pending = None
        if close is not None:
            close()  # the query's generator: its slices stop, its slots go back


# --- the commands -------------------------------------------------------------------------------
class SessionCommands:
    """The state these commands keep for one engine session."""

    def __init__(self, session):
        self.session = session
        self.frontend = None  # boundary.Frontend, given by pgwire (attach)
        self._local = _LocalStatements()
        self.cursors: dict[str, Cursor] = {}
        self.listening: set[str] = set()
        # LISTEN/UNLISTEN/NOTIFY of the open block, applied at COMMIT:
        # ("listen", channel) | ("unlisten", channel or "*") | ("notify", channel, payload)
        self.pending: list[tuple] = []
        self.notifier = Notifier.of(session.engine)

    @property
    def statements(self):
        return self.frontend if self.frontend is not None else self._local

    # --- pgwire hooks ----------------------------------------------------------------------
    def cursor_description(self, name: str):
        c = self.cursors.get(name)
        return None if c is None else (c.columns, c.binary)

    def deliver(self, pid: int, channel: str, payload: str) -> None:
        if self.frontend is not None:
            self.frontend.notify(pid, channel, payload)

    # --- transaction hooks (coordinator/session.py) ----------------------------------------
    def before_commit(self, txn) -> None:
        """WITH HOLD cursors of `txn` keep their remaining rows (may raise: COMMIT fails)."""
        for c in list(self.cursors.values()):
            if c.txn is txn and c.hold and not c.failed:
                c.materialize()

    def after_commit(self, txn) -> None:
        for name, c in list(self.cursors.items()):
            if c.txn is txn:
                if c.hold and not c.failed:
                    c.txn = None
                else:
                    self._drop(name)
        pending, self.pending = self.pending, []
        self._apply(pending)

    def after_rollback(self, txn) -> None:
        for name, c in list(self.cursors.items()):
            if c.txn is txn:
                self._drop(name)
        self.pending = []

    def close(self) -> None:
        for name in list(self.cursors):
            self._drop(name)
        for channel in list(self.listening):
            self.notifier.unlisten(self, channel)
        self.listening.clear()

    def discard_all(self) -> None:
        """DISCARD ALL's part here: CLOSE ALL, UNLISTEN *, DEALLOCATE ALL."""
        self.close()
        self.statements.drop_statements()

    # --- dispatch ----------------------------------------------------------------------------
    def execute(self, st, stmt, params, cancel) -> QueryResult | None:
        k = st.kind
        handler = {
            Kind.SAVEPOINT: self._savepoint, Kind.RELEASE: self._release,
            Kind.ROLLBACK_TO: self._rollback_to, Kind.DECLARE: self._declare,
            Kind.FETCH: self._fetch, Kind.MOVE: self._fetch, Kind.CLOSE: self._close,
            Kind.LISTEN: self._listen, Kind.UNLISTEN: self._listen, Kind.NOTIFY: self._notify,
            Kind.PREPARE: self._prepare, Kind.EXECUTE: self._execute,
            Kind.DEALLOCATE: self._deallocate, Kind.UNLOCK_ALL: self._unlock_all,
        }.get(k)
        return None if handler is None else handler(st, stmt, params, cancel)

    def describe(self, st, ptypes=None) -> list[ResultColumn] | None:
        """Result columns known at Parse: FETCH of an open cursor, EXECUTE of a statement,
        INSERT ... RETURNING."""
        if st.kind is Kind.FETCH:
            c = self.cursors.get(st.name)
            return list(c.columns) if c is not None else None
        if st.kind is Kind.EXECUTE:
            p = self.statements.statement(st.name)
            return p.columns if p is not None else None
        if st.kind is Kind.UNLOCK_ALL:
            return [ResultColumn("pg_advisory_unlock_all", types.TEXT)]
        if st.kind is Kind.INSERT and st.tree is not None and st.tree.args.get("returning"):
            n = self.session.param_count(st)
            return load.returning_columns(self.session, st.tree, ptypes or [types.UNKNOWN] * n)
        if st.kind in (Kind.DELETE, Kind.UPDATE) and st.tree is not None:
            n = self.session.param_count(st)
            return modify.returning_columns(self.session, st.tree,
                                            ptypes or [types.UNKNOWN] * n)
        return None

    def _block(self, what: str):
        txn = self.session.txn
        if txn is None or not txn.explicit:
            raise _not_in_block(what)
        return txn

    # --- savepoints ----------------------------------------------------------------------------
    def _savepoint(self, st, stmt, params, cancel) -> QueryResult:
        txn = self._block("SAVEPOINT")
        txn.savepoint(st.name, self._snapshot(), set(self.cursors.values()))
        return _command("SAVEPOINT")

    def _release(self, st, stmt, params, cancel) -> QueryResult:
        txn = self._block("RELEASE SAVEPOINT")
        del txn.savepoints[txn.find_savepoint(st.name):]
        return _command("RELEASE")

    def _rollback_to(self, st, stmt, params, cancel) -> QueryResult:
        txn = self._block("ROLLBACK TO SAVEPOINT")
        i = txn.find_savepoint(st.name)
        sp = txn.savepoints[i]
        if not txn.can_roll_back_to(sp):
            txn.rollback_to_refused = True
            raise errors.FeatureNotSupported(
                f'ROLLBACK TO SAVEPOINT "{st.name}" after DDL or TRUNCATE since the savepoint '
                "is not supported", detail="Rows inserted since a savepoint can be undone, "
                "table definitions and TRUNCATE cannot.",
                hint="Use ROLLBACK to undo the whole transaction block.")
        txn.roll_back_to(sp)
        del txn.savepoints[i + 1:]
        for name, c in list(self.cursors.items()):
            if c.txn is txn and c not in sp.cursors:
                self._drop(name)
        status = self._restore(sp.session_state)
        txn.state = State.ACTIVE
        txn.rollback_to_refused = False
        return _command("ROLLBACK", status)

    def _snapshot(self):
        return self.session.settings.snapshot(), len(self.pending)

    def _restore(self, snap) -> dict[str, str]:
        """Settings and queued notifications as they were at the savepoint; the
        ParameterStatus messages the settings' change needs."""
        settings, pending = snap
        del self.pending[pending:]
        return self.session.settings.restore(settings)

    # --- cursors -------------------------------------------------------------------------------
    def _declare(self, st, stmt, params, cancel) -> QueryResult:
        opts = st.options
        txn = self.session.txn
        if not opts["hold"] and (txn is None or not txn.explicit):
            raise _not_in_block("DECLARE CURSOR")
        if opts["scroll"]:
            raise errors.FeatureNotSupported("SCROLL cursors (cursors move forward only)")
        if st.name in self.cursors:
            raise errors.QueryError(f'cursor "{st.name}" already exists', "42P03")
        tree = st.inner.tree
        if params:
            tree = bind_expr.substitute_params(tree, *self.session.substitution(stmt, params))

        def declare(txn) -> QueryResult:
            c = Cursor(st.name, [], opts["binary"], opts["hold"], opts["scroll"], txn)
            result = query.select(self.session, tree, txn, cancel, cancel_event=c.cancel)
            c.columns, c.source = list(result.columns), iter(result.batches)
            if not txn.explicit:
                c.cancel.token = cancel
                try:
                    c.materialize()  # WITH HOLD outside a block: its transaction ends now
                finally:
                    c.cancel.token = None
                c.txn = None
            self.cursors[st.name] = c
            return _command("DECLARE CURSOR")

        if txn is not None and txn.explicit:
            txn.queried = True
            txn.check()
            return declare(txn)
        return self.session._with_txn(declare)

    def _cursor(self, name: str) -> Cursor:
        c = self.cursors.get(name)
        if c is None:
            raise errors.QueryError(f'cursor "{name}" does not exist', "34000")
        if c.failed:
            raise errors.QueryError(f'portal "{name}" cannot be run', "55000")
        return c

    def _fetch(self, st, stmt, params, cancel) -> QueryResult:
        direction, count = st.options["direction"], st.options["count"]
        word = "FETCH" if st.kind is Kind.FETCH else "MOVE"
        if st.name not in self.cursors and self.frontend is not None:
            # A protocol portal is a cursor too (asyncpg MOVEs its cursors in SQL).
            if direction == "forward" and count != 0:
                found = self.frontend.portal_rows(st.name, count)
            else:
                found = None if self.frontend.portal_rows(st.name, 0) is None else False
                if found is False:
                    raise errors.FeatureNotSupported(
                        f"{word} {direction.upper()} on a protocol portal (portals move "
                        "forward only)")
            if found is not None:
                columns, batches, got = found
                if st.kind is Kind.MOVE:
                    return _command(f"MOVE {got}")
                return QueryResult(ResultKind.ROWS, tag=lambda: f"FETCH {got}",
                                   columns=list(columns), batches=iter(batches),
                                   time_zone=self.session.time_zone())
        c = self._cursor(st.name)
        skip = 0
        if direction == "forward" and count != 0:
            pass  # read on from where the cursor stands
        elif direction == "absolute" and count is not None and count > c.position:
            skip, count = count - c.position - 1, 1
        elif direction == "relative" and count is not None and count > 0:
            skip, count = count - 1, 1
        else:
            shown = {"forward": "FORWARD", "backward": "BACKWARD", "absolute": "ABSOLUTE",
                     "relative": "RELATIVE"}[direction]
            if c.scroll is False:
                raise errors.QueryError("cursor can only scan forward", "55000",
                                        hint="Declare it with SCROLL option to enable "
                                             "backward scan.")
            raise errors.FeatureNotSupported(
                f"{word} {shown} {'ALL' if count is None else count} (cursors move forward "
                "only)")
        c.cancel.token = cancel
        try:
            if skip:
                c.take(skip)
            batches, got = c.take(count)
        except BaseException:
            c.failed = True
            c.close()
            raise
        finally:
            c.cancel.token = None
        if st.kind is Kind.MOVE:
            return _command(f"MOVE {got}")
        return QueryResult(ResultKind.ROWS, tag=lambda: f"FETCH {got}", columns=list(c.columns),
                           batches=iter(batches), binary=c.binary,
                           time_zone=self.session.time_zone())

    def _close(self, st, stmt, params, cancel) -> QueryResult:
        if st.name == "all":
            for name in list(self.cursors):
                self._drop(name)
            return _command("CLOSE CURSOR ALL")
        if st.name not in self.cursors:
            raise errors.QueryError(f'cursor "{st.name}" does not exist', "34000")
        self._drop(st.name)
        return _command("CLOSE CURSOR")

    def _drop(self, name: str) -> None:
        c = self.cursors.pop(name, None)
        if c is not None:
            c.close()

    # --- LISTEN / UNLISTEN / NOTIFY ---------------------------------------------------------------
    def _listen(self, st, stmt, params, cancel) -> QueryResult:
        op = ("listen" if st.kind is Kind.LISTEN else "unlisten", st.name)
        self._queue_or_apply(op)
        return _command(st.kind.value)

    def _notify(self, st, stmt, params, cancel) -> QueryResult:
        payload = st.options["payload"]
        if len(payload.encode()) >= NOTIFY_PAYLOAD_LIMIT:
            raise errors.InvalidParameterValue("payload string too long")
        op = ("notify", st.name, payload)
        if op not in self.pending:
            self._queue_or_apply(op)
        return _command("NOTIFY")

    def _queue_or_apply(self, op: tuple) -> None:
        txn = self.session.txn
        if txn is not None and txn.explicit:
            self.pending.append(op)
        else:
            self._apply([op])

    def _apply(self, ops: list[tuple]) -> None:
        """Committed LISTEN/UNLISTEN first, then the notifications, in their order."""
        for op in ops:
            if op[0] == "listen" and op[1] not in self.listening:
                self.listening.add(op[1])
                self.notifier.listen(self, op[1])
            elif op[0] == "unlisten":
                for channel in (list(self.listening) if op[1] == "*" else [op[1]]):
                    self.listening.discard(channel)
                    self.notifier.unlisten(self, channel)
        pid = self.frontend.pid if self.frontend is not None else self.session.pid
        for op in ops:
            if op[0] == "notify":
                self.notifier.notify(pid, op[1], op[2])

    # --- PREPARE / EXECUTE / DEALLOCATE -------------------------------------------------------------
    def _prepare(self, st, stmt, params, cancel) -> QueryResult:
        inner = st.inner
        if self.statements.statement(st.name) is not None:
            raise errors.QueryError(f'prepared statement "{st.name}" already exists', "42P05")
        declared = list(st.options["types"])
        ptypes = declared + [types.UNKNOWN] * max(0, self.session.param_count(inner)
                                                  - len(declared))
        ptypes = self.session.infer_param_types(inner, ptypes)
        columns = self.session.describe_statement(inner, ptypes) \
            if inner.kind in (Kind.QUERY, Kind.INSERT, Kind.DELETE, Kind.UPDATE) else None
        self.statements.add_statement(st.name, PreparedStatement(inner.text, ptypes, columns,
                                                                 handle=inner))
        return _command("PREPARE")

    def _execute(self, st, stmt, params, cancel) -> QueryResult:
        prepared = self.statements.statement(st.name)
        if prepared is None:
            raise errors.QueryError(f'prepared statement "{st.name}" does not exist', "26000")
        args = st.options["args"]
        expected = len(prepared.param_types)
        if len(args) != expected:
            raise errors.SyntaxError_(
                f'wrong number of parameters for prepared statement "{st.name}"',
                detail=f"Expected {expected} parameters but got {len(args)}.")
        for a in args:
            col = a.find(exp.Column)
            if col is not None:
                raise errors.UndefinedColumn(f'column "{col.sql(dialect="postgres")}" does '
                                             "not exist")
            if a.find(exp.Select, exp.AggFunc) is not None:
                raise errors.FeatureNotSupported("subqueries and aggregates in EXECUTE "
                                                 "parameters")
        inner: statements.Statement = prepared.handle
        if not args:
            return self.session.run_statement(inner, prepared, [], cancel)
        values = [_typed(a, t) for a, t in zip(args, prepared.param_types)]
        inner = _with_values(inner, values)
        return self.session.run_statement(
            inner, PreparedStatement(prepared.sql, [], prepared.columns, handle=inner), [],
            cancel)

    def _deallocate(self, st, stmt, params, cancel) -> QueryResult:
        if st.name == "all":
            self.statements.drop_statements()
            return _command("DEALLOCATE ALL")
        if not self.statements.drop_statement(st.name):
            raise errors.QueryError(f'prepared statement "{st.name}" does not exist', "26000")
        return _command("DEALLOCATE")

    def _unlock_all(self, st, stmt, params, cancel) -> QueryResult:
        # pg_advisory_unlock_all() returns void: one row, whose text is empty.
        return query.text_rows("pg_advisory_unlock_all", [""], "SELECT 1")


def _typed(arg: exp.Expression, t: types.SqlType) -> exp.Expression:
    """An EXECUTE argument as a value of its parameter's type."""
    if t.kind is types.Kind.UNKNOWN or (t.kind is types.Kind.CHAR and t.length is None):
        return arg
    return exp.Cast(this=arg.copy(), to=exp.DataType.build(t.sql(), dialect="postgres"))


def _with_values(st: statements.Statement, values: list) -> statements.Statement:
    """`st` with its $n placeholders replaced by the expressions `values`."""
    def replace(node):
        if isinstance(node, (exp.Parameter, exp.Placeholder)):
            text = node.this.this if isinstance(node.this, exp.Literal) else node.name
            if str(text).isdigit() and 1 <= int(text) <= len(values):
                return exp.Paren(this=values[int(text) - 1].copy())
            raise errors.QueryError(f"there is no parameter ${text}", "42P02")
        return node
    tree = st.tree.transform(replace, copy=True) if st.tree is not None else None
    inner = _with_values(st.inner, values) if st.inner is not None else None
    return dataclasses.replace(st, tree=tree, inner=inner)
