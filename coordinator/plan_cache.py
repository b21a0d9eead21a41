"""Plans kept for reuse: a statement is bound and distributed once, not at Parse and again
at Execute, nor again each time the same text runs with the same parameters.

A plan is reused only under a key holding everything its making read:
- the statement text, the parameter types and (when it is to run) the parameter values:
  values are substituted as literals before binding (Session.substitution), so a plan
  holds them (folded, pushed into scans);
- the catalog version (`Catalog.version`, bumped by every committed CREATE/DROP, by
  ANALYZE and by the row estimates loads keep), and search_path, user and database, which
  name resolution reads (`SessionCatalog`), and TimeZone, which plans carry
  (planner/zone_rules.py).
Plans that read anything else are not kept:
- plans that read the session through SESSION_INFO (current_user, current_setting(),
  set_config(), pg_backend_pid(), the system catalog's rows): `LentInfo` counts the reads;
- plans with InitPlan results or recursive CTE rows in them (computed from data while
  planning) are kept with the subplans that were run and what each returned
  (`Entry.initplans`): a later run replays them in order, and the plan is reused only
  when every one returns what it did then (otherwise it is made anew, from the results
  already computed). So a repeated TPC-H Q11 or Q22 runs its subquery again, but is not
  bound and planned again. Plans whose subplans returned more than INITPLAN_ROWS rows in
  all are not kept;
- plans of a transaction that has created or dropped tables: they see its uncommitted
  catalog, which no other statement may be given.
now() is computed when the plan runs (QueryRun.now), so it does not stop a plan from
being kept. Only statements whose tree is their text's get a key (Session._execute): not
those of SQL EXECUTE name (args), whose values are in the tree, nor cursors' or EXPLAIN's.

Plans are frozen dataclasses (planner/plan.py): sessions share them as they are.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coordinator import temp_tables
from coordinator.pgwire.boundary import ResultColumn
from planner import plan as pl

CAPACITY = 256        # plans kept, least recently used dropped first
INITPLAN_ROWS = 1024  # rows of InitPlan results a kept plan may have been made from
# Longer statements (long VALUES lists) or parameter values make plans too big to keep.
MAX_TEXT = 64 * 1024


@dataclass(frozen=True)
class Key:
    """What a plan was made from. `values` None: the plan only describes the statement
    (its parameters were typed NULLs), it cannot run."""

    version: int
    text: str
    param_types: tuple
    values: tuple | None
    search_path: str
    user: str
    database: str
    time_zone: str = "UTC"
    # The session's temporary schema, when it has one: its names come first, for it alone.
    temp_schema: str | None = None
    # DateStyle: its field order reads date/time constants
    date_style: str = "ISO, MDY"


@dataclass(frozen=True)
class InitPlanRun:
    """A subplan run while a plan was made (an InitPlan, a recursive CTE's step), and the
    rows it returned, which the plan holds as constants."""

    node: pl.Node
    result: Any  # pyarrow.Table


@dataclass(frozen=True)
class Entry:
    """A plan and its result columns; `root` None when only the columns may be reused
    (a describing plan, or one made from too many InitPlan rows). `initplans`: the runs
    the plan was made from, to be replayed before it is reused."""

    root: pl.Node | None
    names: tuple[str, ...]
    columns: tuple[ResultColumn, ...]
    initplans: tuple[InitPlanRun, ...] = ()


def key(session, text: str, param_types, values) -> Key | None:
    """The key of the plan of `text` in `session` now (values None: for describing), or
    None when no plan of it may be shared."""
    txn = session.txn
    if len(text) > MAX_TEXT or (txn is not None and txn.has_ddl):
        return None
    version = session.engine.catalog.version  # before anything of the catalog is read
    if values is not None:
        # repr tells apart what == does not: Decimal('1.0') and Decimal('1.00'), 1 and True.
        values = tuple((type(v).__name__, repr(v)) for v in values)
        if sum(len(r) for _, r in values) > MAX_TEXT:
            return None
    return Key(version, text, tuple(param_types), values, session.settings.show("search_path"),
               session.user, session.database, session.settings.show("TimeZone"),
               temp_tables.schema_name(session.pid) if session.has_temp_tables else None,
               session.settings.show("DateStyle"))


class LentInfo(Mapping):
    """SESSION_INFO of one statement (planner/session_info.py) that counts its reads, by
    which a plan that depends on the session is told from one that depends on its key
    alone."""

    def __init__(self, values: dict[str, Any], zone=None, date_order: str = "mdy"):
        self._values = dict(values)
        self.reads = 0
        # The session's TimeZone (planner/time_zones.session_zone) and DateStyle's field
        # order (planner/datetime_input.session_order): in the key, so reading them is no
        # read of the session.
        self.zone = zone
        self.date_order = date_order

    def __getitem__(self, name: str):
        self.reads += 1
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class PlanCache:
    """The engine's plans by Key, at most CAPACITY, least recently used dropped first.
    Thread-safe. `made`, `hits` and `misses` count for tests and benchmarks."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self._entries: collections.OrderedDict[Key, Entry] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._version = 0  # the newest catalog version seen: older entries are dead
        self.made = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: Key | None) -> Entry | None:
        if key is None:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry

    def put(self, key: Key | None, entry: Entry) -> None:
        if key is None:
            return
        with self._lock:
            if key.version < self._version:
                return  # made before a catalog change: nobody asks for it any more
            if key.version > self._version:
                self._entries.clear()
                self._version = key.version
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def note_made(self) -> None:
        with self._lock:
            self.made += 1

    def __len__(self) -> int:
        return len(self._entries)
