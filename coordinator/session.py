"""One client connection's engine session: prepare and execute statements.

Statement kinds are routed to small handlers: queries and EXPLAIN (coordinator/query.py),
writes and COPY (coordinator/load.py), DDL (coordinator/ddl.py), savepoints, cursors,
LISTEN/NOTIFY and SQL PREPARE/EXECUTE/DEALLOCATE (coordinator/sql_commands.py), and the
session commands drivers send (BEGIN/COMMIT/ROLLBACK, SET/SHOW/RESET, DISCARD) here.
Parameter types are inferred at prepare from the placeholders' contexts
(coordinator/param_types.py), for ParameterDescription. Query plans come from the engine's
plan cache (coordinator/plan_cache.py), and a session keeps the parsed form of the query
texts it ran last (`PARSED`), so a text sent again is neither parsed nor planned again.
"""

from __future__ import annotations

import collections
import datetime
import itertools
import logging
import re
import threading
import time

from sqlglot import exp

from coordinator import (alter, comments, ddl, drop, expansion, indexes, load, merge, modify,
                         param_types, plan_cache, query, roles, schema_ddl, sequence_ddl,
                         sql_commands, system_catalog, temp_tables, views)
from coordinator.catalog import SessionCatalog
from coordinator.sequences import SessionSequences
from coordinator.pgwire.boundary import (CancelToken, PreparedStatement, QueryResult,
                                         ResultColumn, ResultKind, TransactionStatus)
from coordinator.settings import Settings, split_identifiers
from coordinator.transaction import State, Transaction
from planner import bind_expr, errors, session_info, statements, time_zones, types
from planner import modify as planner_modify
from planner.statements import Kind

log = logging.getLogger(__name__)

_pids = itertools.count(1)
_BEGIN_WORDS = re.compile(r"(?is)^\s*(BEGIN(\s+(WORK|TRANSACTION)\b)?|START\s+TRANSACTION\b)")
# What a failed block still runs (PostgreSQL's IsTransactionExitStmt).
_EXITS = (Kind.COMMIT, Kind.ROLLBACK, Kind.ROLLBACK_TO)
# PostgreSQL's command names in "cannot execute %s in a read-only transaction".
_WRITE_COMMANDS = {Kind.CREATE_TABLE: "CREATE TABLE", Kind.CREATE_TABLE_AS: "CREATE TABLE AS",
                   Kind.DROP_TABLE: "DROP TABLE", Kind.TRUNCATE: "TRUNCATE TABLE",
                   Kind.ALTER_TABLE: "ALTER TABLE", Kind.CREATE_VIEW: "CREATE VIEW",
                   Kind.DROP_VIEW: "DROP VIEW"}
# client_min_messages' levels, least severe first (it ranks LOG below NOTICE): a message
# is sent from its level up.
_MESSAGE_LEVELS = ("debug5", "debug4", "debug3", "debug2", "debug1", "log", "info", "notice",
                   "warning", "error")
PARSED = 64  # query texts whose parsed statement a session keeps (up to MAX_TEXT long)


def _param_count(st: statements.Statement) -> int:
    """The highest $n placeholder in a statement (clients may declare fewer types)."""
    if st.kind is Kind.PREPARE:
        return 0  # its placeholders are the prepared statement's
    tree = st.inner.tree if st.inner is not None else st.tree
    if tree is None:
        return 0
    n = 0
    for p in tree.find_all(exp.Parameter, exp.Placeholder):
        text = p.this.this if isinstance(p.this, exp.Literal) else p.name
        if str(text).isdigit():
            n = max(n, int(text))
    return n


def command(tag: str, status: dict | None = None) -> QueryResult:
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag, parameter_status=status or {})


class Session:
    def __init__(self, engine, user: str, database: str, options: dict[str, str]):
        self.engine = engine
        self.user = user
        self.database = database
        self.settings = Settings(user, options)
        self.txn: Transaction | None = None
        self.pid = next(_pids)
        self.has_temp_tables = False  # its temporary schema is dropped when it ends
        self.random_seed = session_info.RandomSeed()  # setseed()
        self.sequences = SessionSequences(self)  # nextval's counters, currval and lastval
        self._lock = threading.Lock()
        # The running statement's cancel token and statement_timeout deadline (time.time()).
        self.cancel = CancelToken()
        self.deadline: float | None = None
        self._timer: threading.Timer | None = None
        self.commands = sql_commands.SessionCommands(self)
        self.activity = system_catalog.Activity()  # pg_stat_activity's row
        # Lone query texts -> their statement: parsing is a function of the text alone, and
        # binding never changes a statement's tree (a named statement is bound at every
        # Execute). Kept per session, so that no tree is shared between threads.
        self._parsed: collections.OrderedDict[str, statements.Statement] = \
            collections.OrderedDict()

    # --- EngineSession protocol ----------------------------------------------------------
    def attach(self, frontend) -> None:
        """pgwire's Frontend: the backend pid the client knows (pg_backend_pid(), NOTIFY's
        sender), notification delivery, the shared prepared-statement namespace."""
        self.commands.frontend = frontend
        self.pid = frontend.pid
        self.activity.peer = getattr(frontend, "peer", None)  # pg_stat_activity

    def cursor(self, name: str):
        """(columns, binary) of the open cursor `name`, or None (Describe of a portal)."""
        return self.commands.cursor_description(name)

    def fail_transaction(self) -> None:
        """An error pgwire raised (Bind, Describe) fails an open block, as any error."""
        if self.txn is not None and self.txn.explicit:
            self.txn.state = State.FAILED

    def parameter_status(self) -> dict[str, str]:
        return self.settings.reported()

    def idle_in_transaction_timeout(self) -> float | None:
        """idle_in_transaction_session_timeout in seconds; None when off (0)."""
        ms = self.settings.milliseconds("idle_in_transaction_session_timeout")
        return ms / 1000.0 if ms > 0 else None

    def transaction_status(self) -> TransactionStatus:
        if self.txn is None or not self.txn.explicit:
            # An implicit transaction still open belongs to a suspended portal: it ends
            # at Sync (pgwire closes the portal), so the client is told I, as PostgreSQL.
            return TransactionStatus.IDLE
        if self.txn.state is State.FAILED:
            return TransactionStatus.FAILED
        return TransactionStatus.IN_TRANSACTION

    def prepare(self, sql: str, param_oids: list[int]) -> list[PreparedStatement]:
        self._bind_session_info()
        try:
            return self._prepare(sql, param_oids)
        except BaseException:
            # As in PostgreSQL, a statement that fails to parse or bind fails the block.
            if self.txn is not None and self.txn.explicit:
                self.txn.state = State.FAILED
            raise

    def _prepare(self, sql: str, param_oids: list[int]) -> list[PreparedStatement]:
        out = []
        parsed = self._parsed.get(sql)
        if parsed is not None:
            self._parsed.move_to_end(sql)
        texts = [parsed.text] if parsed is not None else statements.split(sql)
        for text in texts:
            st = parsed or self._classify(text, sql if len(texts) == 1 else None)
            if st.kind is Kind.EMPTY:
                continue
            if self.txn is not None and self.txn.state is State.FAILED and st.kind not in _EXITS:
                raise errors.InFailedTransaction("current transaction is aborted, commands "
                                                 "ignored until end of transaction block")
            ptypes = [types.from_oid(o) for o in param_oids]
            ptypes += [types.UNKNOWN] * (_param_count(st) - len(ptypes))
            columns = None
            # Only a lone statement (the extended protocol's case) is described ahead:
            # in a multi-statement string a later one may use a table an earlier creates.
            if len(texts) == 1:
                inferred = self.infer_param_types(st, ptypes)
                try:
                    columns = self.describe_statement(st, inferred)
                except errors.QueryError:
                    if inferred == ptypes:
                        raise
                    columns = self.describe_statement(st, ptypes)  # as without inference
                else:
                    ptypes = inferred
            out.append(PreparedStatement(text, ptypes, columns, handle=st))
        return out

    def _classify(self, text: str, sql: str | None) -> statements.Statement:
        """The statement of `text`; kept under `sql` (the text as sent, when it is the one
        statement in it) if it is a query."""
        st = statements.classify(text)
        if sql is not None and st.kind is Kind.QUERY and len(sql) <= plan_cache.MAX_TEXT:
            self._parsed[sql] = st
            if len(self._parsed) > PARSED:
                self._parsed.popitem(last=False)
        return st

    def execute(self, stmt: PreparedStatement, params: list, cancel: CancelToken) -> QueryResult:
        self._bind_session_info()
        self._start_statement(cancel)
        self.activity.start(stmt.sql)
        try:
            return self._execute_statement(stmt, params, cancel)
        finally:
            self.activity.finish()

    def _execute_statement(self, stmt: PreparedStatement, params: list,
                           cancel: CancelToken) -> QueryResult:
        st: statements.Statement = stmt.handle
        if self.txn is not None and self.txn.state is State.FAILED and st.kind not in _EXITS:
            raise errors.InFailedTransaction(
                "current transaction is aborted, commands ignored until end of transaction block")
        try:
            return self._execute(st, stmt, params, cancel, shared_plan=True)
        except BaseException:
            if self.txn is not None:
                self._end(self.txn, ok=False)
            raise

    def _transaction(self, explicit: bool) -> Transaction:
        txn = Transaction(self.engine.catalog, self.engine.cluster, explicit=explicit,
                          locks=self.engine.locks)
        txn.segment_wait = self.segment_wait()
        txn.pid = self.pid
        return txn

    # --- names and access modes ------------------------------------------------------------
    def search_path(self) -> list[str]:
        """search_path's schema names as listed ("$user" unresolved)."""
        return split_identifiers(self.settings.show("search_path")) or []

    def catalog_view(self, txn: Transaction | None = None) -> SessionCatalog:
        """The tables a statement of `txn` sees, names resolved through search_path."""
        return SessionCatalog(self.engine.catalog, txn, self.search_path(), self.user,
                              self.database, temp_tables.schema_name(self.pid))

    def check_writable(self, command: str) -> None:
        """25006 when the current transaction is read-only (BEGIN READ ONLY, SET
        TRANSACTION READ ONLY, default_transaction_read_only)."""
        if self.settings.get("transaction_read_only"):
            raise errors.QueryError(f"cannot execute {command} in a read-only transaction",
                                    "25006")

    def wants_notices(self, severity: str = "NOTICE") -> bool:
        """Whether client_min_messages lets messages of `severity` (NOTICE, WARNING)
        through."""
        return _MESSAGE_LEVELS.index(severity.lower()) >= _MESSAGE_LEVELS.index(
            self.settings.get("client_min_messages"))

    def segment_wait(self) -> float:
        """raympp.segment_wait_timeout: how long a statement waits for a restarting segment."""
        return self.settings.milliseconds("raympp.segment_wait_timeout") / 1000.0

    def work_mem(self) -> int:
        """Bytes an operator of this session's queries may hold per segment before spilling."""
        return self.settings.bytes("work_mem")

    def _start_statement(self, cancel: CancelToken) -> None:
        """Arm statement_timeout for the statement starting now: at the deadline its cancel
        token is set (the coordinator stops), and the deadline travels with every slice
        (each segment stops by itself too)."""
        self.cancel = cancel
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        ms = self.settings.milliseconds("statement_timeout")
        if not ms:
            self.deadline = None
            return
        self.deadline = time.time() + ms / 1000.0
        self._timer = threading.Timer(ms / 1000.0, cancel.cancel_if_current,
                                      (cancel.generation, errors.STATEMENT_TIMEOUT))
        self._timer.daemon = True
        self._timer.start()

    def close(self) -> None:
        if getattr(self.engine, "sessions", None) is not None:
            self.engine.sessions.remove(self)
        if self._timer is not None:
            self._timer.cancel()
        self.commands.close()
        if self.txn is not None:
            try:
                self.txn.abort()
            finally:
                self.txn = None
        if self.has_temp_tables:
            try:
                temp_tables.drop_session_schema(self.engine, self.pid)
            except Exception as e:  # noqa: BLE001 - left for the next start (drop_orphans)
                log.warning("session %s: dropping its temporary tables: %s", self.pid, e)

    # --- routing -------------------------------------------------------------------------
    def _execute(self, st, stmt, params, cancel, shared_plan: bool = False) -> QueryResult:
        """Run `st`. `shared_plan`: a query's plan may come from (and go to) the plan
        cache, as `st` is the statement of its text and `params` its parameter values
        (not so for EXECUTE name (args), whose values are already in the tree)."""
        k = st.kind
        if k is Kind.BEGIN:
            return self._begin(st.text)
        if k is Kind.COMMIT:
            return self._commit()
        if k is Kind.ROLLBACK:
            return self._rollback()
        if k is Kind.SET:
            current = lambda: self.txn  # noqa: E731 (bounds SET LOCAL / SET TRANSACTION)
            if st.name in ("transaction", "session characteristics"):
                return command("SET", self.settings.set_transaction(
                    st.modes, characteristics=st.name != "transaction", transaction=current))
            return command("SET", self.settings.set(st.name, None if st.default else st.args,
                                                    local=st.local, transaction=current))
        if k is Kind.SHOW:
            return query.show_table(self.settings.show_columns(st.name),
                                    self.settings.show_rows(st.name))
        if k is Kind.RESET:
            return command("RESET", self.settings.reset(st.name))
        done = self.commands.execute(st, stmt, params, cancel)
        if done is not None:
            return done
        if k is Kind.DISCARD:
            if self.txn is not None and self.txn.explicit:
                raise errors.QueryError("DISCARD ALL cannot run inside a transaction block", "25001")
            if st.name == "sequences":
                self.sequences.discard()
                return command("DISCARD SEQUENCES")
            if st.name == "all":
                self.commands.discard_all()
                self.sequences.discard()
            return command("DISCARD ALL", self.settings.reset("all"))
        if k is Kind.ROLE:
            return roles.execute(self, st.role)
        if k is Kind.SCHEMA:
            self.check_writable(st.schema.command)  # before any name is looked up
            return self._with_txn(lambda txn: schema_ddl.execute(self, st.schema, txn))
        if k is Kind.INDEX:
            return self._with_txn(lambda txn: indexes.execute(self, st.index, txn))
        if k is Kind.COMMENT:
            return self._with_txn(lambda txn: comments.execute(self, st.comment, txn))
        tree = st.tree
        if params and tree is not None:
            tree = bind_expr.substitute_params(tree, *self.substitution(stmt, params))
        if k is Kind.QUERY:
            key = plan_cache.key(self, st.text, stmt.param_types, params) if shared_plan \
                else None
            return self._with_txn(lambda txn: query.select(self, tree, txn, cancel, key=key,
                                                           described=stmt.columns))
        if k is Kind.EXPLAIN:
            inner = st.inner.tree
            if params:
                inner = bind_expr.substitute_params(inner, *self.substitution(stmt, params))
            if st.inner.kind in (Kind.DELETE, Kind.UPDATE):
                return self._with_txn(
                    lambda txn: modify.explain(self, inner, txn, cancel, st.analyze))
            if st.inner.kind is Kind.MERGE:
                return self._with_txn(
                    lambda txn: merge.explain(self, inner, txn, cancel, st.analyze))
            return self._with_txn(lambda txn: query.explain(self, inner, txn, cancel, st.analyze))
        if k in _WRITE_COMMANDS:
            # As PostgreSQL's utility commands: refused before any name is looked up.
            self.check_writable(_WRITE_COMMANDS[k])
        if k is Kind.CREATE_TABLE:
            return self._with_txn(lambda txn: ddl.create_table(self, st, txn))
        if k is Kind.CREATE_TABLE_AS:
            return self._with_txn(lambda txn: ddl.create_table_as(self, st, tree, txn, cancel),
                                  writes=True)
        if k is Kind.DROP_TABLE:
            return self._with_txn(lambda txn: drop.drop(self, st, txn, "table"))
        if k is Kind.DROP_VIEW:
            return self._with_txn(lambda txn: drop.drop(self, st, txn, "view"))
        if k is Kind.CREATE_VIEW:
            return self._with_txn(lambda txn: views.create_view(self, st, txn))
        if k is Kind.ALTER_TABLE:
            return self._with_txn(lambda txn: alter.alter(self, st, txn, cancel))
        if k is Kind.ANALYZE:
            return ddl.analyze(self, st)
        if k is Kind.EXPAND:
            return expansion.command(self, st)
        if k is Kind.TRUNCATE:
            return self._with_txn(lambda txn: ddl.truncate(self, tree, txn), writes=True)
        # INSERT and COPY FROM begin writing (and check the access mode) once their target
        # table and columns are known, as PostgreSQL's executor and COPY do.
        if k is Kind.INSERT and tree.args.get("conflict") is not None:
            if st.options.get("overriding"):
                raise errors.FeatureNotSupported("INSERT ... OVERRIDING ... ON CONFLICT")
            return self._with_txn(lambda txn: merge.insert_on_conflict(self, tree, txn, cancel))
        if k is Kind.INSERT:
            return self._with_txn(lambda txn: load.insert(
                self, tree, txn, cancel, overriding=st.options.get("overriding")))
        if k is Kind.SEQUENCE:
            return self._with_txn(lambda txn: sequence_ddl.execute(self, st.sequence, txn))
        if k is Kind.COPY:
            return self._with_txn(lambda txn: load.copy(self, st.copy, txn, cancel))
        if k in (Kind.DELETE, Kind.UPDATE):
            return self._with_txn(lambda txn: modify.run(self, tree, txn, cancel))
        if k is Kind.MERGE:
            return self._with_txn(lambda txn: merge.run(self, tree, txn, cancel))
        raise errors.FeatureNotSupported(f"statement {k.value}")

    def _with_txn(self, run, writes: bool = False) -> QueryResult:
        """Run inside the open transaction, or an implicit one committed when the result is
        complete (for streaming results: after the last batch). An error while a result
        streams fails the transaction just as an error in `run` does."""
        implicit = self.txn is None
        if implicit:
            self.txn = self._transaction(explicit=False)
        txn = self.txn
        txn.queried = True
        if writes:
            txn.begin_write()
        else:
            txn.check()
        result = run(txn)
        if result.kind in (ResultKind.ROWS, ResultKind.COPY_IN, ResultKind.COPY_OUT):
            return self._guard(result, txn)
        self._end(txn, ok=True)
        return result

    def _end(self, txn: Transaction, ok: bool) -> None:
        """A statement of `txn` finished: commit or abort an implicit transaction; mark an
        explicit one failed on error."""
        if txn.explicit:
            if not ok:
                txn.state = State.FAILED
            return
        if self.txn is txn:
            self.txn = None
        if ok:
            txn.commit()
        else:
            txn.abort()

    def _guard(self, result: QueryResult, txn: Transaction) -> QueryResult:
        def guarded(stream):
            ok = False
            try:
                yield from stream
                ok = True
            except GeneratorExit:
                # The client closed a portal it had not read to the end (asyncpg's
                # fetchval: Execute with max_rows 1): not an error.
                ok = True
                raise
            finally:
                self._end(txn, ok)

        if result.kind is ResultKind.ROWS and result.batches is not None:
            result.batches = guarded(result.batches)
        elif result.kind is ResultKind.COPY_OUT and result.copy_out is not None:
            result.copy_out.chunks = guarded(result.copy_out.chunks)
        elif result.kind is ResultKind.COPY_IN and result.copy_in is not None:
            ci = result.copy_in
            write, finish, abort = ci.write, ci.finish, ci.abort

            def write_guarded(data):
                try:
                    write(data)
                except BaseException:
                    self._end(txn, ok=False)
                    raise

            def done():
                try:
                    n = finish()
                except BaseException:
                    self._end(txn, ok=False)
                    raise
                self._end(txn, ok=True)
                return n

            def aborted(msg):
                try:
                    abort(msg)
                finally:
                    self._end(txn, ok=False)
            ci.write, ci.finish, ci.abort = write_guarded, done, aborted
        else:
            self._end(txn, ok=True)
        return result

    # --- transaction commands ------------------------------------------------------------
    def _begin(self, text: str) -> QueryResult:
        tag = "START TRANSACTION" if text.lstrip()[:5].upper() == "START" else "BEGIN"
        rest = _BEGIN_WORDS.sub("", text, count=1).strip()
        modes = statements.transaction_modes(rest) if rest else ()
        current = lambda: self.txn  # noqa: E731
        if self.txn is not None and self.txn.explicit:
            # PostgreSQL warns and carries on, applying the modes to the open block.
            return command(tag, self.settings.set_transaction(modes, transaction=current))
        self.txn = self._transaction(explicit=True)
        try:
            # The block starts with the default_transaction_* values of now; isolation
            # levels we do not provide are refused (0A000), never accepted and ignored.
            self.settings.start_transaction(current)
            status = self.settings.set_transaction(modes, transaction=current)
        except BaseException:
            self.txn = None
            self.settings.end_transaction(committed=False)
            raise
        return command(tag, status)

    def _commit(self) -> QueryResult:
        txn, self.txn = self.txn, None
        if txn is None:
            return command("COMMIT")
        if txn.state is State.FAILED:
            try:
                txn.abort()
            finally:
                self.commands.after_rollback(txn)
                status = self.settings.end_transaction(committed=False)
            if txn.rollback_to_refused:
                raise errors.FeatureNotSupported(
                    "COMMIT of a transaction block whose ROLLBACK TO SAVEPOINT was refused "
                    "is not supported: the transaction has been rolled back",
                    detail="Writes made after the savepoint could not be undone in part.")
            return command("ROLLBACK", status)
        try:
            try:
                self.commands.before_commit(txn)  # WITH HOLD cursors keep their rows
            except BaseException:
                txn.abort()
                raise
            txn.commit()  # aborts by itself when it fails before the commit point
        except BaseException:
            self.commands.after_rollback(txn)
            self.settings.end_transaction(committed=False)
            raise
        self.commands.after_commit(txn)
        return command("COMMIT", self.settings.end_transaction(committed=True))

    def _rollback(self) -> QueryResult:
        txn, self.txn = self.txn, None
        if txn is None:
            return command("ROLLBACK")
        try:
            txn.abort()
        finally:
            self.commands.after_rollback(txn)
            status = self.settings.end_transaction(committed=False)
        return command("ROLLBACK", status)

    # --- helpers -------------------------------------------------------------------------
    def param_count(self, st) -> int:
        return _param_count(st)

    def infer_param_types(self, st, ptypes: list) -> list:
        """`ptypes` with the unknown ones inferred from their contexts (param_types.py)."""
        if not any(t.kind is types.Kind.UNKNOWN for t in ptypes):
            return ptypes
        inner = st.kind in (Kind.EXPLAIN, Kind.DECLARE)
        tree = st.inner.tree if inner and st.inner is not None else st.tree
        if tree is None or st.kind not in (Kind.QUERY, Kind.INSERT, Kind.EXPLAIN, Kind.DECLARE,
                                           Kind.DELETE, Kind.UPDATE):
            return ptypes
        view = self.catalog_view(self.txn)
        if isinstance(tree, (exp.Delete, exp.Update)):
            try:
                tree = planner_modify.inference_query(view, tree)
            except errors.QueryError:
                return ptypes  # the statement's own errors come when it runs
        return param_types.infer(view, tree, ptypes,
                                 insert_target=lambda this: load.target(self, this))

    def describe_statement(self, st, ptypes) -> list[ResultColumn] | None:
        """Result columns known before execution (Describe), None when none are."""
        if st.kind in (Kind.QUERY, Kind.EXPLAIN, Kind.SHOW):
            return self._describe(st, ptypes)
        return self.commands.describe(st, ptypes)

    @staticmethod
    def substitution(stmt: PreparedStatement, params: list) -> tuple[list, list]:
        """The values and types substituted for the parameters: a char(n) parameter
        (bpchar, with no length) stays an unknown literal, which takes its context's char
        type, without its trailing spaces (insignificant in bpchar)."""
        values, out = list(params), []
        for i, t in enumerate(stmt.param_types):
            if t.kind is types.Kind.CHAR and t.length is None:
                if i < len(values) and isinstance(values[i], str):
                    values[i] = values[i].rstrip(" ")
                t = types.UNKNOWN
            out.append(t)
        return values, out

    def run_statement(self, st, stmt: PreparedStatement, params: list, cancel) -> QueryResult:
        """Run a statement inside the one executing now (EXECUTE)."""
        return self._execute(st, stmt, params, cancel)

    def _describe(self, st, ptypes) -> list[ResultColumn] | None:
        if st.kind is Kind.SHOW:
            return [ResultColumn(c, types.TEXT) for c in self.settings.show_columns(st.name)]
        if st.kind is Kind.EXPLAIN:
            return [ResultColumn("QUERY PLAN", types.TEXT)]
        # Without parameters, the plan made to describe is the one Execute runs.
        key = plan_cache.key(self, st.text, ptypes, None if ptypes else ())
        return query.describe(self, st.tree, ptypes, key)

    def _bind_session_info(self):
        session_info.SEQUENCES.set(self.sequences)
        # the statement's time: now() when it runs, and what 'now' / 'today' in its text
        # read while it is bound (a plan that read it is not kept)
        self.statement_now = datetime.datetime.now(datetime.timezone.utc)
        session_info.SESSION_INFO.set(plan_cache.LentInfo({
            "now": self.statement_now,
            "user": self.user, "database": self.database,
            "schema": self.catalog_view(self.txn).current_schema, "pg_backend_pid": self.pid,
            "max_recursive_rows": self.settings.get("raympp.max_recursive_rows"),
            "random": self.random_seed,  # setseed() and the random() calls after it
            # pg_catalog's rows and the catalog functions' data
            "system": system_catalog.SystemCatalog(self)}, zone=self.time_zone(),
            date_order=self.date_order()))

    def date_order(self) -> str:
        """DateStyle's field order of date input: 'mdy', 'dmy' or 'ymd'."""
        return self.settings.show("DateStyle").split(", ")[-1].lower()

    def time_zone(self) -> time_zones.Zone:
        """The session's TimeZone setting as a zone."""
        value = self.settings.show("TimeZone")
        return time_zones.named_zone(value) or time_zones.posix_zone(value)
