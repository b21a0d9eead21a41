"""What the session lends the planner for one statement, in a context variable.

The coordinator sets `SESSION_INFO` before it binds a statement: the user, database and
schema that current_user/current_database()/current_schema() return, and under "system" a
`CatalogContext`, through which the planner reads the system catalog's rows, the names of
relations and roles, the search path and the settings (coordinator/system_catalog.py
implements it). Nothing here imports the rest of the planner, so the modules that turn
catalog names into oids (catalog_names) and the system relations (system_tables) can both
read it.
"""

from __future__ import annotations

import contextvars
import hashlib
import itertools
from typing import Any, Protocol

SESSION_INFO: contextvars.ContextVar[dict] = contextvars.ContextVar("session_info", default={})


class CatalogContext(Protocol):
    """What the coordinator lends the planner for one statement (SESSION_INFO["system"])."""

    def rows(self, relation: Any) -> list[tuple]:
        """The rows of a system relation (a system_tables.SystemRelation) right now."""

    def relations(self) -> list[tuple[int, str, str]]:
        """(oid, schema, name) of every relation: the user's tables and views and the
        system ones."""

    def view_definitions(self) -> list[tuple[int, str]]:
        """(oid, definition) of the user's views (pg_get_viewdef)."""

    def namespaces(self) -> list[tuple[str, int]]:
        """(name, oid) of every schema the statement sees."""

    def search_path(self) -> list[str]:
        """The schemas searched for unqualified names, in order (pg_catalog included)."""

    def explicit_path(self) -> list[str]:
        """The schemas search_path lists that exist (current_schemas(false))."""

    def roles(self) -> list[tuple[int, str]]: ...

    def setting(self, name: str, missing_ok: bool) -> str | None: ...

    def set_setting(self, name: str, value: str, is_local: bool) -> str: ...

    def start_time(self): ...

    def sequence_row(self, seq_id: int) -> tuple[int, int, bool]:
        """(last_value, log_cnt, is_called) of a sequence now."""


def catalog_context() -> CatalogContext | None:
    """The statement's catalog provider (None outside a session: unit tests, EXPLAIN of
    fixtures), in which case callers fall back to the built-in objects alone."""
    return SESSION_INFO.get().get("system")


class RandomSeed:
    """A session's setseed() state (SESSION_INFO["random"]): the seed, and how many
    random() calls have been bound since. Each call bound after setseed() gets a seed of
    its own from these two, from which the segments draw a repeatable sequence, and a
    number no other bound call has, which tells its sequence from another call's of the
    same seed."""

    _bound = itertools.count(1)

    def __init__(self):
        self.seed: float | None = None
        self.calls = 0

    def set(self, seed: float) -> None:
        self.seed, self.calls = seed, 0

    def next_call(self) -> tuple[int, int] | None:
        """(the next random() call's seed, its number), None when no seed is set."""
        if self.seed is None:
            return None
        self.calls += 1
        digest = hashlib.blake2b(f"{self.seed!r}:{self.calls}".encode(), digest_size=8)
        return int.from_bytes(digest.digest(), "little") >> 1, next(self._bound)


class SequenceAccess(Protocol):
    """The coordinator's sequence counters as one session uses them (its currval and
    lastval): coordinator/sequences.py. Set in `SEQUENCES` while a statement runs."""

    def call(self, func: Any, seq_id: int, seq_name: str, args: list) -> int | None:
        """nextval/currval/setval/lastval (a planner.expr.SeqFunc) for one row."""


SEQUENCES: contextvars.ContextVar[SequenceAccess | None] = contextvars.ContextVar(
    "sequences", default=None)
