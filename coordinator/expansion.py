"""Growing a running cluster: new segments, and every table's rows moved onto them online.

`expand(engine, target)` (`ALTER SYSTEM EXPAND SEGMENTS TO n`, `raympp expand
--segments n`) first adds the segments (coordinator/cluster.py `grow`: started on the
Ray nodes with the fewest segments, joined to the cluster once no transaction is writing),
then moves the tables one at a time, each in a transaction of its own
(planner/expansion.py plans the move):

1. The table's name lock (exclusive, as DELETE and ALTER take it): UPDATE, DELETE, MERGE
   and DDL of this table wait for its move; SELECT never does, and plain INSERT and COPY
   go on.
2. The rows whose jump-consistent bucket changes move (deleted where they were, written
   where they go), as of the statement's snapshot.
3. The table's placement lock, exclusive: INSERT and COPY take it shared until their
   transaction ends, so this waits for the writes in progress and holds new ones back
   for the rest of the move. The move runs again: it finds the rows written since step 2
   (nothing else is misplaced any more).
4. The table's `numsegments` becomes the new count in the catalog, in the commit of the
   same transaction: queries planned before see the table where it was, later ones where
   it is; a crash before the commit point leaves it where it was, after it the segments
   roll the move forward, so a table is never half moved.

A replicated table is copied whole under both locks. `raympp_expansion` (a system view)
shows each table's state, rows and bytes moved; the plan of the expansion is in the
catalog (meta `expansion`) until every table has moved, so after a crash the same
statement, or the same statement without a count, resumes it.
"""

from __future__ import annotations

import datetime
import json
import logging
import threading
import time
from dataclasses import dataclass, replace

import pyarrow.compute as pc

from coordinator.dispatch import QueryRun
from coordinator.pgwire.boundary import Notice, QueryResult, ResultKind
from coordinator.transaction import Transaction, placement_tag, relation_tag
from planner import errors
from planner import expansion as plan_expansion
from planner import plan as pl
from planner.schema import DistKind, TableDef

log = logging.getLogger(__name__)

MAX_SEGMENTS = 1024
WRITERS_TIMEOUT = 300.0  # seconds the cluster waits for writing transactions to end
MOVE_ATTEMPTS = 5  # a table's move undone by a deadlock or a segment restart runs again
META = "expansion"


@dataclass
class TableMove:
    """One table's part of an expansion (a row of raympp_expansion)."""

    table_id: int
    namespace: int
    schema: str
    name: str
    old: int
    new: int
    status: str = "waiting"  # waiting | moving | done
    rows: int = 0
    bytes: int = 0
    started: datetime.datetime | None = None
    finished: datetime.datetime | None = None


class Expansion:
    """The progress of the running (or last) expansion, read by raympp_expansion."""

    def __init__(self):
        self.lock = threading.Lock()  # one expansion at a time
        self.moves: list[TableMove] = []

    def rows(self) -> list[TableMove]:
        return [replace(m) for m in self.moves]


def expand(session, target: int | None) -> list[TableMove]:
    """Grow the cluster to `target` segments (None: resume the expansion a crash cut
    short, or move tables still on fewer segments) and move every table onto them."""
    engine = session.engine
    cluster, catalog = engine.cluster, engine.catalog
    state: Expansion = engine.expansion
    if not state.lock.acquire(blocking=False):
        raise errors.QueryError("an expansion is already running", "55006")
    try:
        planned = json.loads(catalog.get_meta(META) or "null")
        n = cluster.n_segments
        if target is None:
            target = planned["to"] if planned else n
        if target < n:
            raise errors.QueryError(
                f"cannot shrink the cluster: it has {n} segments, not {target}", "22023")
        if target > MAX_SEGMENTS:
            raise errors.QueryError(f"a cluster has at most {MAX_SEGMENTS} segments", "22023")
        if planned and planned["to"] > target:
            raise errors.QueryError(
                f"an expansion to {planned['to']} segments is not finished: resume it "
                f"(ALTER SYSTEM EXPAND SEGMENTS TO {planned['to']}) first", "55006")
        catalog.set_meta(META, json.dumps({"from": planned["from"] if planned else n,
                                           "to": target}))
        state.moves = []
        if target > n:
            log.info("expansion: adding segments %d..%d", n, target - 1)
            cluster.grow(target, WRITERS_TIMEOUT)
        # Listed once the cluster has grown: a table created while it grew is on the old
        # segments too (later ones are on all of them).
        schemas = {s.oid: s.name for s in catalog.schemas()}
        state.moves = [TableMove(t.id, t.namespace, schemas.get(t.namespace, "?"), t.name,
                                 t.numsegments or n, target)
                       for t in sorted(catalog.tables(), key=lambda t: t.id)
                       if (t.numsegments or n) < target]
        for move in state.moves:
            for attempt in range(MOVE_ATTEMPTS):
                try:
                    _move_table(session, move)
                    break
                except errors.QueryError as e:
                    # A deadlock with a client's transaction (40P01: the waiter that
                    # closes the cycle fails, which may be this one), or a segment that
                    # restarted under the move (40001): the move is undone; again.
                    if e.sqlstate not in ("40P01", "40001") or attempt + 1 == MOVE_ATTEMPTS:
                        raise
                    log.warning("expansion: moving %s.%s again: %s", move.schema, move.name,
                                e.message)
                    move.rows = move.bytes = 0
        catalog.set_meta(META, "null")
        return state.rows()
    finally:
        state.lock.release()


def _move_table(session, move: TableMove) -> None:
    engine = session.engine
    catalog = engine.catalog
    cancel = session.cancel.event
    txn = Transaction(catalog, engine.cluster, explicit=False, locks=engine.locks)
    txn.pid = session.pid
    committed = False
    move.status, move.started = "moving", _now()
    t0 = time.monotonic()
    try:
        txn.lock(relation_tag(move.namespace, move.schema, move.name), None, cancel)
        table = catalog.table_by_id(move.table_id)
        if table is None or (table.numsegments or move.old) >= move.new:
            move.status = "done"  # dropped, or moved already (a resumed expansion)
            return
        if table.policy.kind is DistKind.REPLICATED:
            txn.lock(placement_tag(table.id, move.schema, table.name), None, cancel)
        txn.begin_write()
        old = table.numsegments or move.old
        root = plan_expansion.plan_move(table, old, move.new)
        _run(session, txn, root, move)
        if table.policy.kind is not DistKind.REPLICATED:
            txn.lock(placement_tag(table.id, move.schema, table.name), None, cancel)
            _run(session, txn, root, move)  # what INSERT and COPY wrote meanwhile
        # Every segment's shard says where the table is once the move commits: a scan
        # planned for the old placement that meets the new one (or the reverse) fails
        # with PlacementChanged instead of reading rows where the plan does not expect
        # them.
        txn.call_all("set_placement", txn.id, table.id, move.new)
        txn.replace_table(table, replace(table, numsegments=move.new))
        txn.commit()
        committed = True
        move.status, move.finished = "done", _now()
        log.info("expansion: %s.%s moved %d rows to %d segments in %.1f s", move.schema,
                 move.name, move.rows, move.new, time.monotonic() - t0)
    finally:
        if not committed:
            txn.abort()
            if move.status == "moving":
                move.status = "waiting"


def _run(session, txn, root, move: TableMove) -> None:
    qrun = QueryRun(session.engine.cluster, root, txn.id, session.cancel.event,
                    incarnations=txn.incarnations, segment_wait=session.segment_wait())
    for batch in qrun.batches():
        move.rows += pc.sum(batch.column(0)).as_py() or 0
    moved = [m for m in pl.walk(root)
             if isinstance(m, pl.Motion) and m.kind is pl.MotionKind.EXPLICIT]
    move.bytes += sum(qrun.sent_bytes(m.slice_id) for m in moved)


def command(session, st) -> QueryResult:
    """ALTER SYSTEM EXPAND SEGMENTS [TO n]: as PostgreSQL's ALTER SYSTEM, a superuser's,
    outside a transaction block; a NOTICE per table moved."""
    if session.txn is not None and session.txn.explicit:
        raise errors.QueryError("ALTER SYSTEM cannot run inside a transaction block", "25001")
    role = session.engine.catalog.get_role(session.user)
    if role is None or not role.superuser:
        raise errors.QueryError("must be superuser to execute ALTER SYSTEM command", "42501")
    moves = expand(session, st.options["segments"])
    notices = [Notice(f'table "{m.schema}.{m.name}": {m.rows} rows moved ({m.bytes} bytes) '
                      f"onto {m.new} segments", code="00000") for m in moves]
    shown = notices if session.wants_notices() else []
    return QueryResult(ResultKind.COMMAND, tag=lambda: "ALTER SYSTEM", notices=shown)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)
