"""The persistent catalog: tables, columns, distribution policies, statistics, commit log.

Kept in SQLite inside the data directory, so a restarted coordinator finds every table.
The commit log records which transaction ids committed: segments ask it on recovery
whether a prepared-but-unpublished write must be rolled forward or discarded.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading

from planner import errors, types
from planner.schema import ColumnDef, ColumnStats, DistKind, DistPolicy, TableDef, TableStats

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
                                   definition TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits (txn INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Catalog:
    """Thread-safe; every method is one SQLite transaction."""

    def __init__(self, data_dir: str):
        os.makedirs(data_dir, exist_ok=True)
        self._db = sqlite3.connect(os.path.join(data_dir, "catalog.sqlite"),
                                   check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._lock = threading.RLock()
        with self._lock:
            self._db.executescript(_SCHEMA)
        self._cache: dict[str, TableDef] = {}
        self._load()

    def _load(self):
        with self._lock:
            rows = self._db.execute("SELECT definition FROM tables").fetchall()
        self._cache = {}
        for (text,) in rows:
            t = table_from_json(json.loads(text))
            self._cache[t.name] = t

    # --- meta ----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str):
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def next_id(self, counter: str) -> int:
        """A new id, unique across restarts (transaction ids, table ids)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (counter,)).fetchone()
            value = int(row[0]) + 1 if row else 1
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (counter, str(value)))
            self._db.execute("COMMIT")
        return value

    # --- tables --------------------------------------------------------------------------
    def get_table(self, name: str) -> TableDef | None:
        return self._cache.get(name)

    def tables(self) -> list[TableDef]:
        return sorted(self._cache.values(), key=lambda t: t.name)

    def add_table(self, table: TableDef):
        with self._lock:
            if table.name in self._cache:
                raise errors.DuplicateTable(f'relation "{table.name}" already exists')
            self._db.execute("INSERT INTO tables VALUES (?, ?, ?)",
                             (table.id, table.name, json.dumps(table_to_json(table))))
            self._cache[table.name] = table

    def update_table(self, table: TableDef):
        with self._lock:
            self._db.execute("UPDATE tables SET definition = ? WHERE id = ?",
                             (json.dumps(table_to_json(table)), table.id))
            self._cache[table.name] = table

    def drop_table(self, name: str):
        with self._lock:
            self._db.execute("DELETE FROM tables WHERE name = ?", (name,))
            self._cache.pop(name, None)

    # --- commit log ----------------------------------------------------------------------
    def record_commit(self, txn: int):
        """The commit point of a distributed write: after this, segments roll it forward."""
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO commits VALUES (?)", (txn,))

    def committed(self) -> set[int]:
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT txn FROM commits")}

    def close(self):
        with self._lock:
            self._db.close()


def table_to_json(t: TableDef) -> dict:
    return {
        "id": t.id, "name": t.name,
        "columns": [{"name": c.name, "kind": c.type.kind.name, "precision": c.type.precision,
                     "scale": c.type.scale, "length": c.type.length, "not_null": c.not_null}
                    for c in t.columns],
        "policy": {"kind": t.policy.kind.name, "keys": list(t.policy.keys)},
        "stats": {"rows": t.stats.rows,
                  "columns": {k: {"null_frac": v.null_frac, "distinct": v.distinct,
                                  "min": _jsonable(v.min), "max": _jsonable(v.max)}
                              for k, v in t.stats.columns.items()}},
    }


def _jsonable(v):
    return v if v is None or isinstance(v, (int, float, str, bool)) else str(v)


def table_from_json(d: dict) -> TableDef:
    cols = tuple(ColumnDef(c["name"], types.SqlType(types.Kind[c["kind"]], c["precision"],
                                                    c["scale"], c["length"]), c["not_null"])
                 for c in d["columns"])
    policy = DistPolicy(DistKind[d["policy"]["kind"]], tuple(d["policy"]["keys"]))
    st = d.get("stats") or {}
    stats = TableStats(st.get("rows", 0), {k: ColumnStats(**v) for k, v in
                                           (st.get("columns") or {}).items()})
    return TableDef(d["id"], d["name"], cols, policy, stats)
