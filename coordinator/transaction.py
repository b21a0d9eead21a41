"""Distributed transactions: one id for every write of a statement or an explicit block.

Segments keep a transaction's new chunks pending; commit is two-phase: every segment
prepares (makes its delta durable), the catalog records the commit (the commit point), then
every segment publishes. A failure before the commit point aborts everywhere; after it,
recovery rolls forward (segment/storage).

A transaction's writes live in the memory of the segment processes that took them until
prepare. So when it first writes, the transaction notes which process (incarnation) each
segment is, and every later write, read and prepare names that incarnation: if a segment
restarted in between, the call is refused and the transaction fails with 40001 before its
commit point, and nothing of it becomes visible anywhere.

DDL is transactional too. CREATE TABLE creates the table's storage on the segments at
once (the id noted in the catalog first, so that a crash leaves collectable garbage, not
a leak) but keeps the definition in the transaction (`created`); DROP TABLE only hides the
table from the transaction (`dropped`). CREATE [OR REPLACE] VIEW and DROP VIEW are
catalog changes only, kept the same way (a replaced view is dropped and created with
its id). Other sessions see neither until the commit point,
where the catalog records the commit, the new tables and the removal of the dropped ones
in one SQLite transaction (coordinator/catalog.py `commit_transaction`). Only after that
(and after publishing) is the storage of dropped tables removed, and after an abort the
storage of the created ones: `collect_garbage` removes what the catalog lists as
unowned, idempotently, also at the coordinator's start.

A transaction that creates, drops or truncates a table holds an exclusive lock on its
name until it ends (`NameLocks`), as PostgreSQL's DDL holds its AccessExclusiveLock: a
second transaction's DDL on that name waits (lock_timeout: 55P03; a cycle of waits: 40P01)
and then sees the first one's outcome. CREATE, DROP and ALTER SCHEMA lock the schema's
name exclusively, and CREATE TABLE holds the name of its table's schema shared. Queries and writes do not take these locks: they
see the committed catalog (and their own transaction's changes) and never wait.

Savepoints (SAVEPOINT, RELEASE, ROLLBACK TO) are marks in a block. `writes` counts the
statements that began writing (INSERT, COPY FROM, CREATE TABLE [AS], DROP TABLE,
TRUNCATE) and `fixed` those of them no ROLLBACK TO undoes (table DDL and TRUNCATE). Rows
are undone: a SAVEPOINT after the first write has every segment mark the transaction's
pending chunks, and ROLLBACK TO has them drop the chunks written since. View DDL is
undone too: it changes only `created` and `dropped`, which a savepoint copies. After
table DDL or TRUNCATE since the savepoint, coordinator/sql_commands.py refuses it with
0A000.

Work that needs the transaction committed (the statistics of the tables it loaded,
coordinator/autostats.py) waits in `after_commit`: it runs once the commit has succeeded,
where its failure is logged and the commit stands, and an abort drops it.
"""

from __future__ import annotations

import enum
import logging
import threading
import time

from dataclasses import dataclass, field
from typing import Callable

from coordinator import cluster as cl
from coordinator.catalog import Catalog
from planner import errors
from planner.schema import Namespace, Relation, TableDef, ViewDef
from planner.sequences import SequenceDef

log = logging.getLogger(__name__)

COMMIT_WAIT_SECONDS = 120.0  # how long publishing waits for a segment to come back


class State(enum.Enum):
    ACTIVE = "active"
    FAILED = "failed"  # an error happened inside an explicit block: only ROLLBACK helps


@dataclass
class Savepoint:
    """A SAVEPOINT of a block: the writes begun before it, and what the session needs to
    restore on ROLLBACK TO (its settings, cursors, pending notifications)."""

    name: str
    writes: int
    session_state: object = None
    cursors: set = field(default_factory=set)  # the session's cursors open at the savepoint
    fixed: int = 0   # the writes before it that no ROLLBACK TO undoes (DDL, TRUNCATE)
    mark: int | None = None  # the segments' mark of its pending rows (None: none written)
    # The transaction's created and dropped relations then (view DDL since is undone by
    # putting them back).
    created: dict = field(default_factory=dict)
    dropped: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LockTag:
    """What DDL locks: a relation by (schema oid, name), or a schema by name. `shown`
    names it in messages (`relation "s.t"`, `schema "s"`) and takes no part in equality."""

    kind: str                  # "relation", "schema" or "placement"
    key: tuple
    shown: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.shown


def relation_tag(namespace: int, schema: str, name: str) -> LockTag:
    return LockTag("relation", (namespace, name), f'relation "{schema}.{name}"')


def placement_tag(table_id: int, schema: str, name: str) -> LockTag:
    """The lock on where a table's rows are: INSERT and COPY hold it shared until their
    transaction ends, an expansion takes it while it finishes moving the table
    (coordinator/expansion.py)."""
    return LockTag("placement", (table_id,), f'the placement of relation "{schema}.{name}"')


def schema_tag(name: str) -> LockTag:
    return LockTag("schema", (name,), f'schema "{name}"')


class NameLocks:
    """Locks on table and schema names (`LockTag`s), held by a transaction until it ends:
    exclusive (DDL on the name), or shared (CREATE TABLE holds its schema's name shared,
    so that a DROP SCHEMA or ALTER SCHEMA waits for it and it for them, as PostgreSQL's
    AccessShareLock on the namespace and their AccessExclusiveLock do).

    `acquire` waits while another transaction holds the name in a conflicting mode, at most
    `timeout` seconds (None: as long as it takes; then 55P03), stops when `cancel` is set
    (57014: a cancel request or statement_timeout), and fails with 40P01 when waiting would
    close a cycle of transactions waiting for each other (the waiter that finds the cycle
    fails, so one of them does)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._owner: dict[LockTag, Transaction] = {}         # exclusive holders
        self._sharers: dict[LockTag, set[Transaction]] = {}  # shared holders
        self._waiting: dict[Transaction, tuple[LockTag, bool]] = {}  # (name, shared)

    def acquire(self, txn: Transaction, name: LockTag, timeout: float | None = None,
                cancel: threading.Event | None = None, shared: bool = False) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                blockers = self._blockers(txn, name, shared)
                if not blockers:
                    if shared:
                        self._sharers.setdefault(name, set()).add(txn)
                    else:
                        self._owner[name] = txn
                    txn.held.add(name)
                    return
                if self._closes_cycle(txn, blockers):
                    blocker = min(blockers, key=lambda t: t.pid)
                    raise errors.QueryError(
                        "deadlock detected", "40P01",
                        detail=f"Process {txn.pid} waits for a lock on {name}; "
                               f"blocked by process {blocker.pid}.")
                if cancel is not None and cancel.is_set():
                    raise errors.QueryCanceled(getattr(cancel, "reason", None)
                                               or errors.USER_CANCEL)
                wait = 0.1
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise errors.LockNotAvailable("canceling statement due to lock timeout")
                    wait = min(wait, remaining)
                self._waiting[txn] = (name, shared)
                try:
                    self._cond.wait(wait)
                finally:
                    self._waiting.pop(txn, None)

    def _blockers(self, txn: Transaction, name: LockTag, shared: bool) -> set[Transaction]:
        """The other transactions holding `name` in a mode that conflicts with `shared`."""
        owner = self._owner.get(name)
        out = {owner} if owner is not None and owner is not txn else set()
        if not shared:
            out |= self._sharers.get(name, set()) - {txn}
        elif txn not in self._sharers.get(name, ()):
            # A queued exclusive request goes first, as in PostgreSQL's lock queue: else a
            # stream of short shared holders (INSERTs into a table an expansion waits to
            # finish moving) would starve it for ever.
            out |= {t for t, (n, sh) in self._waiting.items()
                    if n == name and not sh and t is not txn}
        return out

    def _closes_cycle(self, txn: Transaction, blockers: set[Transaction]) -> bool:
        seen, todo = set(), list(blockers)
        while todo:
            t = todo.pop()
            if t is txn:
                return True
            if t in seen:
                continue
            seen.add(t)
            waits_for = self._waiting.get(t)
            if waits_for is not None:
                todo.extend(self._blockers(t, *waits_for))
        return False

    def release_all(self, txn: Transaction) -> None:
        with self._cond:
            for name in txn.held:
                if self._owner.get(name) is txn:
                    del self._owner[name]
                sharers = self._sharers.get(name)
                if sharers is not None:
                    sharers.discard(txn)
                    if not sharers:
                        del self._sharers[name]
            txn.held.clear()
            self._cond.notify_all()


def collect_garbage(catalog: Catalog, cluster: cl.Cluster) -> list[int]:
    """Remove, on every segment, the storage of tables no committed table owns: created by
    a transaction that ended without committing, or dropped by one that committed.
    Idempotent; what a segment fails to remove stays listed for the next call. Returns
    the table ids removed everywhere."""
    rows = catalog.storage_rows()
    # Read after the rows: a transaction that noted storage was undecided before it did
    # (begin_write), so one missing here has ended, and a commit of it is in `owned`.
    while True:
        try:
            live = set(cluster.undecided)
            break
        except RuntimeError:  # changed while copied (another thread began a write): again
            continue
    owned = {t.id for t in catalog.tables()}
    removed, forget = [], []
    for table_id, txn in rows:
        if txn in live:
            continue
        if table_id in owned:
            forget.append(table_id)
            continue
        failures = [e for e in cluster.call_each("drop_table", table_id) if e is not None]
        if failures:
            log.warning("storage of dropped table %d stays for now: %s", table_id, failures[0])
            continue
        forget.append(table_id)
        removed.append(table_id)
    catalog.forget_storage(forget)
    return removed


class Transaction:
    def __init__(self, catalog: Catalog, cluster: cl.Cluster, explicit: bool,
                 locks: NameLocks | None = None):
        self.catalog = catalog
        self.cluster = cluster
        self.explicit = explicit
        self.id = catalog.next_id("txn")
        self.state = State.ACTIVE
        # The segment processes this transaction's writes went to (set at the first write).
        self.incarnations: list[int] | None = None
        self.segment_wait = cl.SEGMENT_WAIT_SECONDS  # raympp.segment_wait_timeout
        self.locks = locks if locks is not None else NameLocks()
        self.held: set[LockTag] = set()  # the names locked by this transaction
        self.pid = 0  # the session's backend pid, for deadlock messages
        # Whether a statement has run in it (SET TRANSACTION READ WRITE must come first).
        self.queried = False
        # Its DDL, seen by itself only until commit: the tables and views it created, by
        # key (schema oid, name; their latest definition), the committed ones it dropped,
        # every table id whose storage it created on the segments, and the schemas it
        # created or changed (their latest definition) or dropped (None), by oid.
        self.created: dict[tuple[int, str], Relation] = {}
        self.dropped: dict[tuple[int, str], Relation] = {}
        self.new_ids: set[int] = set()
        self.namespaces: dict[int, Namespace | None] = {}
        # Its sequences, the same way: created (by name) and committed ones dropped.
        self.created_sequences: dict[str, SequenceDef] = {}
        self.dropped_sequences: dict[str, SequenceDef] = {}
        # ALTER SEQUENCE: the new definitions of committed sequences, and the counters it
        # restarted, this transaction's own until its commit point writes them:
        # sequence id -> [last_value, is_called, log_cnt].
        self.altered_sequences: dict[str, SequenceDef] = {}
        self.sequence_states: dict[int, list] = {}
        self.ended = False
        # Statements that began writing, those of them no ROLLBACK TO can undo (DDL and
        # TRUNCATE: rows added are undone by the segments' savepoint marks), and the
        # block's savepoints (innermost last).
        self.writes = 0
        self.fixed = 0
        self.savepoints: list[Savepoint] = []
        self._marks = 0
        # A ROLLBACK TO was refused and failed the block: its COMMIT then fails too (the
        # client meant to keep the writes before that savepoint, which cannot be had).
        self.rollback_to_refused = False
        # Work that must see this transaction's outcome committed (the statistics of the
        # tables it loaded, coordinator/autostats.py), one callable per owner: run after
        # a successful commit, dropped by an abort.
        self.after_commit: dict[str, Callable[[], None]] = {}

    # --- DDL -------------------------------------------------------------------------------
    def lock(self, name: LockTag, timeout: float | None = None, cancel=None,
             shared: bool = False) -> None:
        """Hold the table or schema name `name` (exclusively unless `shared`) until this
        transaction ends."""
        self.locks.acquire(self, name, timeout, cancel, shared)

    def create_table(self, table: TableDef) -> None:
        """Create `table`'s storage on every segment, visible to this transaction only."""
        self.begin_write()
        self.fixed = self.writes
        self.catalog.note_storage(table.id, self.id)
        self.new_ids.add(table.id)
        self.call_all("create_table", table)
        self.created[table.key] = table

    def create_view(self, view: ViewDef, replaces: ViewDef | None = None) -> None:
        """Make `view` visible to this transaction (in place of `replaces`, the view of
        that name it sees, for CREATE OR REPLACE); it is created for all at commit.
        A catalog change only: ROLLBACK TO a savepoint before it undoes it."""
        if replaces is not None and self.created.get(replaces.key) is not replaces:
            self.dropped[replaces.key] = replaces  # a committed view, replaced at commit
        self.created[view.key] = view

    def drop_table(self, table: Relation) -> None:
        """Hide `table` (a table or a view) from this transaction; it is dropped for all
        at commit. Dropping a table is a write no ROLLBACK TO undoes."""
        if isinstance(table, TableDef):
            self.writes += 1
            self.fixed = self.writes
        mine = self.created.get(table.key)
        if mine is not None and mine.id == table.id:
            del self.created[table.key]  # its storage goes at the end (new_ids)
        else:
            self.dropped[table.key] = table

    def replace_table(self, old: TableDef, new: TableDef) -> None:
        """ALTER TABLE: `new` (same id, maybe another name) replaces `old` at commit; until
        then this transaction alone sees it. The storage stays (it is the same table)."""
        self.writes += 1
        self.fixed = self.writes
        self.redefine_table(old, new)

    def redefine_table(self, old: TableDef, new: TableDef) -> None:
        """A new definition of `old` that changes the catalog only, nothing on the segments
        (COMMENT ON, CREATE and DROP INDEX): as replace_table, but ROLLBACK TO a savepoint
        before it undoes it, as view DDL (the savepoint holds `created` and `dropped`)."""
        mine = self.created.get(old.key)
        if mine is not None and mine.id == old.id:
            del self.created[old.key]
        else:
            self.dropped[old.key] = old
        self.created[new.key] = new

    def create_sequence(self, seq: SequenceDef) -> None:
        """A new sequence, visible to this transaction only until it commits."""
        self.writes += 1
        self.fixed = self.writes
        self.created_sequences[seq.name] = seq

    def alter_sequence(self, seq: SequenceDef, restart: int | None) -> None:
        """A new definition of `seq` (and with RESTART its counter at `restart`), this
        transaction's until it commits."""
        self.writes += 1
        self.fixed = self.writes
        if seq.name in self.created_sequences:
            self.created_sequences[seq.name] = seq
        else:
            self.altered_sequences[seq.name] = seq
        if restart is not None:
            self.sequence_states[seq.id] = [restart, False, 0]

    def drop_sequence(self, seq: SequenceDef) -> None:
        """Hide `seq` from this transaction; it is dropped for all at commit."""
        self.writes += 1
        self.fixed = self.writes
        self.altered_sequences.pop(seq.name, None)
        self.sequence_states.pop(seq.id, None)
        mine = self.created_sequences.get(seq.name)
        if mine is not None and mine.id == seq.id:
            del self.created_sequences[seq.name]
        else:
            self.dropped_sequences[seq.name] = seq

    def replace_created(self, table: TableDef) -> bool:
        """Keep a new definition (statistics) of a table this transaction created."""
        mine = self.created.get(table.key)
        if mine is None or mine.id != table.id:
            return False
        self.created[table.key] = table
        return True

    def change_namespace(self, oid: int, namespace: Namespace | None) -> None:
        """Create, rename or give another owner to schema `oid` (None: drop it), seen by
        this transaction only until commit (DDL: no ROLLBACK TO undoes it)."""
        self.writes += 1
        self.fixed = self.writes
        self.namespaces[oid] = namespace

    @property
    def has_ddl(self) -> bool:
        return bool(self.created or self.dropped or self.new_ids or self.namespaces
                    or self.created_sequences or self.dropped_sequences
                    or self.altered_sequences)

    def begin_write(self) -> None:
        """Called before the transaction's first write: every segment learns of it (so a
        prepare of it on a process that never saw it fails) and its incarnations are kept."""
        self.writes += 1  # a write begins: a savepoint before it cannot be rolled back to
        if self.incarnations is not None:
            self.check()
            return
        self.cluster.heal(self.segment_wait)  # start on processes that are up and recovered
        self.incarnations = self.cluster.admit_writer(self.id)
        try:
            self.call_all("begin", self.id)
        except errors.SegmentFailure as e:
            raise self._lost(e) from None

    def truncate(self, table_id: int) -> None:
        """TRUNCATE within this transaction (a write no ROLLBACK TO undoes)."""
        self.fixed = self.writes
        self.call_all("truncate", self.id, table_id)

    # --- savepoints ----------------------------------------------------------------------
    def savepoint(self, name: str, session_state, cursors) -> Savepoint:
        """A new savepoint; once the transaction has written, the segments mark its
        pending rows, so that ROLLBACK TO can drop the rows written after it."""
        mark = None
        if self.wrote:
            self._marks += 1
            mark = self._marks
            self.call_all("mark", self.id, mark)
        sp = Savepoint(name, self.writes, session_state, cursors, self.fixed, mark,
                       dict(self.created), dict(self.dropped))
        self.savepoints.append(sp)
        return sp

    def can_roll_back_to(self, sp: Savepoint) -> bool:
        return self.fixed <= sp.writes

    def roll_back_to(self, sp: Savepoint) -> None:
        """Undo what was done since `sp` (only rows and views, `can_roll_back_to`): drop
        the rows written since on every segment, and put the created and dropped
        relations back as they were."""
        if self.wrote and self.writes > sp.writes:
            self.call_all("rollback_to", self.id, sp.mark)
        self.created, self.dropped = dict(sp.created), dict(sp.dropped)

    @property
    def wrote(self) -> bool:
        """Whether the transaction has begun writing (and so has segments to commit on)."""
        return self.incarnations is not None

    def check(self) -> None:
        """Fail now if a segment this transaction wrote to has restarted since."""
        if self.incarnations is None:
            return
        for seg, (mine, now) in enumerate(zip(self.incarnations, self.cluster.incarnations)):
            if now is not None and mine != now:
                raise self._lost(errors.SegmentRestarted(f"segment {seg} restarted"))

    def call_all(self, method: str, *args, segments=None):
        """A call on the segments meant for the processes holding this transaction."""
        try:
            return self.cluster.call_all(method, *args, segments=segments,
                                         incarnations=self.incarnations)
        except errors.SegmentRestarted as e:
            raise self._lost(e) from None

    def _lost(self, cause: BaseException) -> errors.TransactionLost:
        return errors.lost_transaction(cause)

    def commit(self) -> None:
        try:
            self._commit()
        finally:
            self._end()
        self._run_after_commit()

    def _run_after_commit(self) -> None:
        """The `after_commit` work, once the commit has succeeded (and the name locks are
        released): the client's commit stands whatever happens here, so a failure is
        logged, never raised."""
        work, self.after_commit = list(self.after_commit.values()), {}
        for run in work:
            try:
                run()
            except Exception:  # noqa: BLE001 - committed already: nothing to undo
                log.exception("transaction %d: work after its commit failed", self.id)

    def _commit(self) -> None:
        created, dropped = list(self.created.values()), list(self.dropped.values())
        new_seqs = list(self.created_sequences.values())
        gone_seqs = list(self.dropped_sequences.values())
        altered = list(self.altered_sequences.values())
        if not (self.wrote or created or dropped or self.namespaces or new_seqs or gone_seqs
                or altered or self.sequence_states):
            return
        if self.wrote:
            try:
                self.check()
                self.call_all("prepare", self.id)
            except errors.SegmentFailure as e:
                self.abort()
                raise self._lost(e) from None
            except BaseException:
                self.abort()
                raise
        try:
            # The commit point: rows (segments roll the prepared deltas forward from here)
            # and catalog changes together.
            self.catalog.commit_transaction(self.id, self.wrote, created, dropped,
                                            self.namespaces, new_seqs, gone_seqs, altered,
                                            {i: (v[0], v[1]) for i, v in
                                             self.sequence_states.items()})
        except BaseException:
            self.abort()
            raise
        if self.wrote:
            # Past the commit point: every segment must publish, whatever happens to it. A
            # segment that is restarting publishes when it is back (its recovery rolls the
            # prepared delta forward from the commit log).
            self._publish()

    def _publish(self) -> None:
        pending = list(range(len(self.incarnations)))
        deadline = time.monotonic() + COMMIT_WAIT_SECONDS
        try:
            while pending:
                failures = self.cluster.call_each("commit", self.id, segments=pending)
                pending = [s for s, e in zip(pending, failures) if e is not None]
                if not pending:
                    return
                if time.monotonic() > deadline:
                    log.error("transaction %d committed; segments %s publish it when they "
                              "recover", self.id, pending)
                    return
                try:
                    self.cluster.heal()
                except errors.SegmentFailure:
                    time.sleep(0.5)
        finally:
            self.cluster.undecided.discard(self.id)

    def abort(self) -> None:
        try:
            if self.wrote:
                # Before the commit point: a segment that cannot be told discards the
                # transaction when it recovers (it is no longer undecided then).
                self.cluster.undecided.discard(self.id)
                for seg, e in enumerate(self.cluster.call_each("abort", self.id)):
                    if e is not None:
                        log.warning("abort of transaction %d on segment %d: %s", self.id, seg, e)
            self.created.clear()
            self.dropped.clear()
            self.namespaces.clear()
            # Counters of sequences that were never committed (a crash leaves them: unread).
            self.catalog.forget_sequence_values(q.id for q in self.created_sequences.values())
            self.created_sequences.clear()
            self.dropped_sequences.clear()
            self.altered_sequences.clear()
            self.sequence_states.clear()
            self.after_commit.clear()
        finally:
            self._end()

    def _end(self) -> None:
        """After commit or abort: remove the storage no table owns any more (dropped
        tables, tables created and not committed) and release the name locks."""
        if self.ended:
            return
        self.ended = True
        try:
            if self.new_ids or self.dropped:
                try:
                    collect_garbage(self.catalog, self.cluster)
                except Exception as e:  # noqa: BLE001 - listed in the catalog: retried later
                    log.warning("transaction %d: storage removal deferred: %s", self.id, e)
        finally:
            self.locks.release_all(self)

    # --- savepoints --------------------------------------------------------------------------
    def find_savepoint(self, name: str) -> int:
        """The position of the innermost savepoint `name` (3B001 when there is none)."""
        for i in range(len(self.savepoints) - 1, -1, -1):
            if self.savepoints[i].name == name:
                return i
        raise errors.QueryError(f'savepoint "{name}" does not exist', "3B001")
