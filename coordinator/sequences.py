"""The sequences' counters: one per sequence, on the coordinator, durable in the catalog.

nextval is never rolled back and never hands out a value twice, also across a crash of
the coordinator: as PostgreSQL logs 32 values ahead (SEQ_LOG_VALS), a counter writes to
the catalog's SQLite the value it may go up to before it hands out the first of a new
block of `LOG_AHEAD` values; a restarted coordinator goes on after that value, skipping
what the block had left (PostgreSQL skips them too). setval is written at once. ALTER
SEQUENCE RESTART (and TRUNCATE ... RESTART IDENTITY) gives its transaction a counter of
its own, written with the transaction's commit (coordinator/sequence_ddl.py), which the
engine's counter then takes over (`install`). A sequence created in a transaction has
its counter at once (its own transaction may call nextval); the counter of a sequence
whose creation does not commit is forgotten.

`SessionSequences` is what a session's statements reach through
`planner.session_info.SEQUENCES` (segment/expr.py evaluates the calls on the
coordinator): the counters, plus the session's currval and lastval.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from planner import errors
from planner import expr as ex
from planner import sequences as sq
from planner.sequences import SequenceDef

# Values handed out per durable write: PostgreSQL logs SEQ_LOG_VALS (32) ahead of the value
# it fetches, so its log_cnt reads 32 after a first nextval, as ours does.
LOG_AHEAD = 33


@dataclass
class _Counter:
    last: int
    is_called: bool
    logged: int = 0  # values that may still be handed out before the next durable write


class SequenceCounters:
    """Every sequence's counter (engine-wide, thread-safe)."""

    def __init__(self, catalog):
        self.catalog = catalog
        self._lock = threading.Lock()
        self._counters: dict[int, _Counter] = {
            i: _Counter(last, called) for i, (last, called) in catalog.sequence_values().items()}

    def _counter(self, seq: SequenceDef) -> _Counter:
        c = self._counters.get(seq.id)
        if c is None:  # never used: at its start
            c = self._counters[seq.id] = _Counter(seq.options.start, False)
        return c

    def state(self, seq: SequenceDef) -> tuple[int, bool]:
        """(last_value, is_called) now (pg_sequences.last_value)."""
        with self._lock:
            c = self._counter(seq)
            return c.last, c.is_called

    def row(self, seq: SequenceDef) -> tuple[int, int, bool]:
        """The sequence read as a relation: (last_value, log_cnt, is_called), log_cnt
        being the values left before the next durable write, as PostgreSQL's."""
        with self._lock:
            c = self._counter(seq)
            return c.last, c.logged, c.is_called

    def nextval(self, seq: SequenceDef) -> int:
        with self._lock:
            c = self._counter(seq)
            value = sq.step(seq.name, seq.options, c.last, c.is_called)
            if c.logged == 0:
                ahead, n = value, 1
                while n < LOG_AHEAD:
                    try:
                        ahead = sq.step(seq.name, seq.options, ahead, True)
                    except errors.QueryError:
                        break
                    n += 1
                self.catalog.write_sequence_value(seq.id, ahead, True)
                c.logged = n
            c.last, c.is_called = value, True
            c.logged -= 1
            return value

    def setval(self, seq: SequenceDef, value: int, is_called: bool) -> None:
        sq.check_setval(seq.name, seq.options, value)
        with self._lock:
            c = self._counter(seq)
            self.catalog.write_sequence_value(seq.id, value, is_called)
            c.last, c.is_called, c.logged = value, is_called, 0

    def restart(self, seq: SequenceDef, value: int) -> None:
        """The next nextval returns `value` (TRUNCATE ... RESTART IDENTITY)."""
        self.setval(seq, value, False)

    def install(self, states: dict[int, list]) -> None:
        """Counters a committed ALTER SEQUENCE RESTART wrote: [last_value, is_called,
        log_cnt] by sequence id (already durable)."""
        with self._lock:
            for seq_id, (last, is_called, _logged) in states.items():
                self._counters[seq_id] = _Counter(last, is_called)


class SessionSequences:
    """planner.session_info.SequenceAccess of one session: nextval and setval change the
    counters; currval and lastval answer what this session last got."""

    def __init__(self, session):
        self.session = session
        self.current: dict[int, int] = {}  # sequence id -> the last value nextval gave here
        self.last_used: int | None = None  # the sequence of the last nextval here
        self._seen: tuple = ()
        self._by_id: dict[int, SequenceDef] = {}

    @property
    def counters(self) -> SequenceCounters:
        return self.session.engine.sequences

    def discard(self) -> None:
        """DISCARD SEQUENCES / ALL: forget currval and lastval."""
        self.current.clear()
        self.last_used = None

    def _visible(self, seq_id: int) -> SequenceDef | None:
        """The sequence `seq_id` as the session's transaction sees it now (kept while
        neither the catalog nor the transaction's own sequences change: nextval runs once
        per row)."""
        txn = self.session.txn
        # The transaction by its id (an id() of a finished one can come back) and its own
        # CREATE, ALTER and DROP SEQUENCEs.
        key = (self.counters.catalog.version, txn.id if txn is not None else None,
               tuple(txn.created_sequences.values()) if txn is not None else (),
               tuple(txn.altered_sequences.values()) if txn is not None else (),
               tuple(txn.dropped_sequences) if txn is not None else ())
        if key != self._seen:
            view = self.session.catalog_view(txn)
            self._by_id = {q.id: q for q in view.sequences()}
            self._seen = key
        return self._by_id.get(seq_id)

    def _sequence(self, seq_id: int, name: str) -> SequenceDef:
        seq = self._visible(seq_id)
        if seq is None:
            raise errors.UndefinedTable(f'relation "{name}" does not exist')
        return seq

    def call(self, func: ex.SeqFunc, seq_id: int, seq_name: str, args: list) -> int | None:
        if func is ex.SeqFunc.LASTVAL:
            if self.last_used is None or self._visible(self.last_used) is None:
                raise errors.QueryError("lastval is not yet defined in this session", "55000")
            return self.current[self.last_used]
        seq = self._sequence(seq_id, seq_name)
        if func in (ex.SeqFunc.NEXTVAL, ex.SeqFunc.SETVAL):
            self.session.check_writable(f"{func.value}()")
        # A counter this transaction's ALTER SEQUENCE RESTART made: its own until commit.
        txn = self.session.txn
        private = txn.sequence_states.get(seq.id) if txn is not None else None
        if func is ex.SeqFunc.NEXTVAL:
            if private is None:
                value = self.counters.nextval(seq)
            else:
                value = sq.step(seq.name, seq.options, private[0], private[1])
                logged = (private[2] or LOG_AHEAD) - 1  # log_cnt, as the shared counters
                private[:] = [value, True, logged]
            self.current[seq.id] = value
            self.last_used = seq.id
            return value
        if func is ex.SeqFunc.CURRVAL:
            if seq.id not in self.current:
                raise errors.QueryError(f'currval of sequence "{seq.name}" is not yet defined '
                                        "in this session", "55000")
            return self.current[seq.id]
        value = args[0]
        is_called = True if len(args) < 2 else args[1]
        if value is None or is_called is None:
            return None  # setval is strict
        if private is None:
            self.counters.setval(seq, value, is_called)
        else:
            sq.check_setval(seq.name, seq.options, value)
            private[:] = [value, is_called, 0]
        if is_called:
            self.current[seq.id] = value
        return value
