"""The persistent catalog: tables, columns, distribution policies, statistics, commit log.

Kept in SQLite inside the data directory, so a restarted coordinator finds every table.
The commit log records which transaction ids committed: segments ask it on recovery
whether a prepared-but-unpublished write must be rolled forward or discarded.

The `tables` here are the committed ones. A transaction's CREATE and DROP stay in the
transaction (coordinator/transaction.py) until `commit_transaction` applies them, with the
transaction's commit record, in one SQLite transaction: that is the commit point of DDL
and rows alike. Segment storage that the committed tables may not account for is listed
in `storage`: a table id is noted there (durably) before a transaction creates its
storage on the segments, and a dropped table's id is noted there at the commit that drops
it; the id leaves the list once its storage is removed, or (for a created table) when the
creation commits. What the list holds for a transaction that has ended is garbage (a
transaction cut short by a crash, a removal that failed): coordinator/transaction.py
`collect_garbage` removes it, also at start-up.

`SessionCatalog` is what one statement of a session sees: the committed tables, then its
transaction's own changes, with names resolved through search_path.

`Catalog.version` counts the changes of committed tables (definitions and statistics) and
of roles since the coordinator started: a plan made at one version holds while it is
unchanged (coordinator/plan_cache.py).

`roles` are PostgreSQL's pg_authid: `Role` records with SCRAM-SHA-256 secrets (never a
plain password). The bootstrap superuser (oid 10, created as `raympp`) always exists.
Role changes are not transactional: `change_roles` applies one statement's changes at
once, in one SQLite transaction (coordinator/roles.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from typing import Callable

from planner import constraints, errors, types
from planner import schema as sch
from planner.schema import (CheckDef, ColumnDef, ColumnStats, DistKind, DistPolicy, Identity,
                            RelationName, TableDef, TableStats)
from planner.sequences import Owner, SequenceDef, SequenceOptions
from planner.system_tables import refuse_write

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
                                   definition TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits (txn INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS storage (table_id INTEGER PRIMARY KEY, txn INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sequences (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
                                      definition TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sequence_values (id INTEGER PRIMARY KEY, last_value INTEGER NOT NULL,
                                            is_called INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS roles (oid INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
                                  superuser INTEGER NOT NULL, login INTEGER NOT NULL,
                                  createrole INTEGER NOT NULL, inherit INTEGER NOT NULL,
                                  password TEXT);
"""

BOOTSTRAP_ROLE_OID = 10         # PostgreSQL's BOOTSTRAP_SUPERUSERID
BOOTSTRAP_ROLE_NAME = "raympp"  # its name when the data directory is created
FIRST_ROLE_OID = 16384          # PostgreSQL's FirstNormalObjectId

# Every statement takes a transaction id: those are reserved this many at a time, so that
# a statement does not wait for a durable SQLite write. The ids a stopped coordinator had
# reserved and not handed out are never used; other counters stay dense.
ID_BLOCKS = {"txn": 1024}


@dataclass(frozen=True)
class Role:
    """A role (pg_authid). `password` is a SCRAM-SHA-256 secret or None, never a plain
    password. The attributes raympp does not implement are properties with the values
    they always have (what pg_roles shows): the bootstrap superuser has them all, as
    initdb gives them to it; other roles have none, no connection limit and no expiry."""

    oid: int
    name: str
    superuser: bool = False
    login: bool = False
    createrole: bool = False
    inherit: bool = True
    password: str | None = None

    @property
    def createdb(self) -> bool:
        return self.oid == BOOTSTRAP_ROLE_OID

    @property
    def replication(self) -> bool:
        return self.oid == BOOTSTRAP_ROLE_OID

    @property
    def bypassrls(self) -> bool:
        return self.oid == BOOTSTRAP_ROLE_OID

    @property
    def connection_limit(self) -> int:
        return -1

    @property
    def valid_until(self) -> None:
        return None


def _role_row(r: Role) -> tuple:
    return (r.oid, r.name, int(r.superuser), int(r.login), int(r.createrole), int(r.inherit),
            r.password)


def _role_from_row(row) -> Role:
    oid, name, superuser, login, createrole, inherit, password = row
    return Role(oid, name, bool(superuser), bool(login), bool(createrole), bool(inherit),
                password)


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
            # The bootstrap superuser, as initdb creates it (no password until one is set).
            self._db.execute("INSERT OR IGNORE INTO roles VALUES (?, ?, 1, 1, 1, 1, NULL)",
                             (BOOTSTRAP_ROLE_OID, BOOTSTRAP_ROLE_NAME))
        self._cache: dict[str, TableDef] = {}
        self._sequences: dict[str, SequenceDef] = {}
        self._roles: dict[str, Role] = {}
        self._reserved: dict[str, tuple[int, int]] = {}  # counter -> (last given, last reserved)
        self._version = 0
        self._load()

    def _load(self):
        with self._lock:
            rows = self._db.execute("SELECT definition FROM tables").fetchall()
        self._cache = {}
        for (text,) in rows:
            t = table_from_json(json.loads(text))
            self._cache[t.name] = t
        with self._lock:
            self._sequences = {s.name: s for s in (
                sequence_from_json(json.loads(text)) for (text,) in
                self._db.execute("SELECT definition FROM sequences").fetchall())}
        with self._lock:
            self._roles = {r.name: r for r in map(_role_from_row, self._db.execute(
                "SELECT oid, name, superuser, login, createrole, inherit, password FROM roles"))}

    # --- meta ----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str):
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def next_id(self, counter: str) -> int:
        """A new id, unique across restarts and larger than every id given before
        (transaction ids, table ids)."""
        with self._lock:
            given, reserved = self._reserved.get(counter, (0, 0))
            if given < reserved:
                self._reserved[counter] = (given + 1, reserved)
                return given + 1
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (counter,)).fetchone()
            value = int(row[0]) + 1 if row else 1
            reserved = value + ID_BLOCKS.get(counter, 1) - 1
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (counter, str(reserved)))
            self._db.execute("COMMIT")
            self._reserved[counter] = (value, reserved)
        return value

    @property
    def version(self) -> int:
        """Bumped after every change of a committed table or role (read it before using
        the catalog: what was read then is at least that recent)."""
        return self._version

    # --- tables --------------------------------------------------------------------------
    def get_table(self, name: str) -> TableDef | None:
        return self._cache.get(name)

    def tables(self) -> list[TableDef]:
        with self._lock:  # changes of the cache happen under the lock
            values = list(self._cache.values())
        return sorted(values, key=lambda t: t.name)

    def add_table(self, table: TableDef):
        with self._lock:
            if table.name in self._cache:
                raise errors.DuplicateTable(f'relation "{table.name}" already exists')
            self._db.execute("INSERT INTO tables VALUES (?, ?, ?)",
                             (table.id, table.name, json.dumps(table_to_json(table))))
            self._cache[table.name] = table
            self._version += 1

    def update_table(self, table: TableDef):
        """A new definition (statistics) of a committed table; nothing if it has been
        dropped (or replaced) meanwhile."""
        with self._lock:
            current = self._cache.get(table.name)
            if current is None or current.id != table.id:
                return
            self._db.execute("UPDATE tables SET definition = ? WHERE id = ?",
                             (json.dumps(table_to_json(table)), table.id))
            self._cache[table.name] = table
            self._version += 1  # ANALYZE, and loads adding to the row estimate

    def drop_table(self, name: str):
        with self._lock:
            self._db.execute("DELETE FROM tables WHERE name = ?", (name,))
            self._cache.pop(name, None)
            self._version += 1

    # --- transactional DDL ---------------------------------------------------------------
    def commit_transaction(self, txn: int, record: bool, created: list[TableDef],
                           dropped: list[TableDef], new_sequences: list[SequenceDef] = (),
                           dropped_sequences: list[SequenceDef] = (),
                           altered_sequences: list[SequenceDef] = (),
                           sequence_values: dict[int, tuple[int, bool]] | None = None) -> None:
        """The commit point of transaction `txn`: in one SQLite transaction, its commit
        record (when it wrote on segments), the tables it created (their storage is then
        accounted for) and the ones it dropped (their storage is noted for removal), the
        sequences it created, dropped and altered, and the counters it restarted."""
        with self._lock:
            for q in altered_sequences:
                current = self._sequences.get(q.name)
                if current is None or current.id != q.id:
                    raise errors.InternalError(f'sequence "{q.name}" changed under a lock')
            taken = set(self._cache) | set(self._sequences)
            gone = {t.name for t in dropped} | {q.name for q in dropped_sequences}
            for q in new_sequences:
                if q.name in taken and q.name not in gone:
                    raise errors.DuplicateTable(f'relation "{q.name}" already exists')
            for t in created:
                if t.name in self._sequences and t.name not in gone:
                    raise errors.DuplicateTable(f'relation "{t.name}" already exists')
            for t in dropped:
                if self._cache.get(t.name) is None or self._cache[t.name].id != t.id:
                    raise errors.InternalError(f'table "{t.name}" changed under a lock')
            for t in created:
                if t.name in self._cache and all(d.name != t.name for d in dropped):
                    raise errors.DuplicateTable(f'relation "{t.name}" already exists')
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for t in dropped:
                    self._db.execute("DELETE FROM tables WHERE id = ?", (t.id,))
                    self._db.execute("INSERT OR REPLACE INTO storage VALUES (?, ?)", (t.id, txn))
                for t in created:
                    self._db.execute("INSERT INTO tables VALUES (?, ?, ?)",
                                     (t.id, t.name, json.dumps(table_to_json(t))))
                    self._db.execute("DELETE FROM storage WHERE table_id = ?", (t.id,))
                for q in dropped_sequences:
                    self._db.execute("DELETE FROM sequences WHERE id = ?", (q.id,))
                    self._db.execute("DELETE FROM sequence_values WHERE id = ?", (q.id,))
                for q in new_sequences:
                    self._db.execute("INSERT INTO sequences VALUES (?, ?, ?)",
                                     (q.id, q.name, json.dumps(sequence_to_json(q))))
                for q in altered_sequences:
                    self._db.execute("UPDATE sequences SET definition = ? WHERE id = ?",
                                     (json.dumps(sequence_to_json(q)), q.id))
                for i, (last, called) in (sequence_values or {}).items():
                    self._db.execute("INSERT OR REPLACE INTO sequence_values VALUES (?, ?, ?)",
                                     (i, last, int(called)))
                if record:
                    self._db.execute("INSERT OR IGNORE INTO commits VALUES (?)", (txn,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            for t in dropped:
                self._cache.pop(t.name, None)
            for t in created:
                self._cache[t.name] = t
            for q in dropped_sequences:
                self._sequences.pop(q.name, None)
            for q in list(new_sequences) + list(altered_sequences):
                self._sequences[q.name] = q
            if created or dropped or new_sequences or dropped_sequences or altered_sequences:
                self._version += 1

    # --- sequences -----------------------------------------------------------------------
    def get_sequence(self, name: str) -> SequenceDef | None:
        return self._sequences.get(name)

    def sequences(self) -> list[SequenceDef]:
        with self._lock:
            values = list(self._sequences.values())
        return sorted(values, key=lambda q: q.name)

    def sequence_values(self) -> dict[int, tuple[int, bool]]:
        """The durable (last_value, is_called) of every sequence that has one."""
        with self._lock:
            return {i: (v, bool(c)) for i, v, c in self._db.execute(
                "SELECT id, last_value, is_called FROM sequence_values")}

    def write_sequence_value(self, seq_id: int, last_value: int, is_called: bool) -> None:
        """Durably: sequence `seq_id` has handed out (or may hand out) values up to
        `last_value`; a restarted coordinator goes on from there."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO sequence_values VALUES (?, ?, ?)",
                             (seq_id, last_value, int(is_called)))

    def forget_sequence_values(self, seq_ids) -> None:
        """The counters of sequences whose creation did not commit."""
        with self._lock:
            self._db.executemany("DELETE FROM sequence_values WHERE id = ?",
                                 [(i,) for i in seq_ids])

    def note_storage(self, table_id: int, txn: int) -> None:
        """Before transaction `txn` creates storage for `table_id` on the segments: until
        the creation commits, that storage is garbage if the coordinator stops."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO storage VALUES (?, ?)", (table_id, txn))

    def forget_storage(self, table_ids) -> None:
        """The storage of these tables is gone from every segment."""
        with self._lock:
            self._db.executemany("DELETE FROM storage WHERE table_id = ?",
                                 [(i,) for i in table_ids])

    def storage_rows(self) -> list[tuple[int, int]]:
        """(table id, transaction) of the storage that may be on segments although no
        committed table owns it; see coordinator/transaction.py `collect_garbage`."""
        with self._lock:
            return [tuple(r) for r in self._db.execute(
                "SELECT table_id, txn FROM storage ORDER BY table_id").fetchall()]

    # --- roles ---------------------------------------------------------------------------
    def roles(self) -> list[Role]:
        """Every role, by oid (pg_authid / pg_roles)."""
        with self._lock:
            values = list(self._roles.values())
        return sorted(values, key=lambda r: r.oid)

    def get_role(self, name: str) -> Role | None:
        return self._roles.get(name)

    def bootstrap_role(self) -> Role:
        """The bootstrap superuser (oid 10), whatever it is called now."""
        with self._lock:
            return next(r for r in self._roles.values() if r.oid == BOOTSTRAP_ROLE_OID)

    def new_role_oid(self) -> int:
        return FIRST_ROLE_OID - 1 + self.next_id("role_oid")

    def change_roles(self, change: Callable[[dict[str, Role]], tuple[list[Role], list[Role]]]
                     ) -> None:
        """Apply one statement's role changes atomically: `change(roles)` gets the current
        roles by name (a copy) and returns (roles to write, roles to delete); a role is
        written by oid (so a new name renames it). Runs under the catalog's lock, so the
        changes are made against the roles they were computed from; an error raised by
        `change` writes nothing."""
        with self._lock:
            put, delete = change(dict(self._roles))
            after = {r.oid: r for r in self._roles.values()}
            for r in delete:
                if r.oid == BOOTSTRAP_ROLE_OID:
                    raise errors.InternalError("the bootstrap superuser cannot be dropped")
                after.pop(r.oid, None)
            after.update((r.oid, r) for r in put)
            names = [r.name for r in after.values()]
            if len(set(names)) != len(names):
                dup = next(n for n in names if names.count(n) > 1)
                raise errors.QueryError(f'role "{dup}" already exists', "42710")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("DELETE FROM roles WHERE oid = ?",
                                     [(r.oid,) for r in delete])
                # A rename swaps names between rows one at a time: clear the written rows'
                # names first so that no intermediate state breaks UNIQUE (name).
                self._db.executemany("DELETE FROM roles WHERE oid = ?", [(r.oid,) for r in put])
                self._db.executemany("INSERT INTO roles VALUES (?, ?, ?, ?, ?, ?, ?)",
                                     [_role_row(r) for r in put])
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._roles = {r.name: r for r in after.values()}
            self._version += 1

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


class SessionCatalog:
    """The tables one statement sees (planner.schema.CatalogView): the committed catalog,
    then the statement's transaction's own CREATEs and DROPs; names resolved as
    PostgreSQL 15 resolves them.

    Only `public` holds tables; `pg_catalog` (searched first, implicitly, when search_path
    does not list it) and `information_schema` hold the system catalog
    (planner/system_tables.py), which the binder resolves before it asks this view. An unqualified name is looked up
    in the schemas of search_path that exist (`"$user"` is the schema named like the user,
    which does not exist unless the user is called public); it is created in the first
    schema search_path lists that exists. A database name in front must be the session's.
    """

    def __init__(self, catalog: Catalog, txn=None, search_path: list[str] | None = None,
                 user: str = "", database: str | None = None):
        self.catalog = catalog
        self.txn = txn
        self.database = database
        listed = [user if s == "$user" else s
                  for s in (search_path if search_path is not None else ["$user", sch.PUBLIC])]
        self.explicit: list[str] = []  # the listed schemas that exist, in order, once each
        for s in listed:
            if s in sch.SCHEMAS and s not in self.explicit:
                self.explicit.append(s)
        self.path = self.explicit if sch.PG_CATALOG in self.explicit else (
            [sch.PG_CATALOG] + self.explicit)

    # --- CatalogView ---------------------------------------------------------------------
    def get_table(self, name: str) -> TableDef | None:
        """An unqualified name through search_path."""
        return self.visible(name) if sch.PUBLIC in self.path else None

    def lookup(self, rel: RelationName) -> TableDef | None:
        self.check_database(rel)
        if rel.schema is None:
            return self.get_table(rel.name)
        return self.visible(rel.name) if rel.schema == sch.PUBLIC else None

    # --- the other ways statements name tables ---------------------------------------------
    @property
    def current_schema(self) -> str | None:
        """current_schema(): the first schema search_path lists that exists, else NULL."""
        return self.explicit[0] if self.explicit else None

    def open(self, rel: RelationName) -> TableDef:
        """A table that must exist, as PostgreSQL's table_openrv finds it (TRUNCATE, COPY,
        ANALYZE): a schema that does not exist is 3F000, a table that does not 42P01."""
        self.check_database(rel)
        refuse_write(self, rel)  # TRUNCATE, ANALYZE, COPY of pg_class: 0A000
        self.check_schema(rel)
        table = self.lookup(rel)
        if table is None:
            raise errors.UndefinedTable(f'relation "{rel}" does not exist')
        return table

    @staticmethod
    def schema_exists(name: str) -> bool:
        return name in sch.SCHEMAS

    def check_schema(self, rel: RelationName) -> None:
        """3F000 for a schema that does not exist."""
        if rel.schema is not None and rel.schema not in sch.SCHEMAS:
            raise errors.QueryError(f'schema "{rel.schema}" does not exist', "3F000")

    def creation_name(self, rel: RelationName) -> str:
        """The name a new table `rel` gets in public, or PostgreSQL's error for creating
        it elsewhere (0A000 another database, 3F000 no such schema or none selected,
        42501 pg_catalog)."""
        self.check_database(rel)
        if rel.schema is not None:
            self.check_schema(rel)
            schema = rel.schema
        elif self.explicit:
            schema = self.explicit[0]
        else:
            raise errors.QueryError("no schema has been selected to create in", "3F000")
        if schema != sch.PUBLIC:
            raise errors.QueryError(f'permission denied to create "{schema}.{rel.name}"',
                                    "42501", detail="System catalog modifications are "
                                    "currently disallowed.")
        return rel.name

    def tables(self) -> list[TableDef]:
        """Every table this transaction sees (in any schema: ANALYZE without names)."""
        names = {t.name for t in self.catalog.tables()}
        if self.txn is not None:
            names |= set(self.txn.created)
        return sorted((t for t in map(self.visible, names) if t is not None),
                      key=lambda t: t.name)

    def visible(self, name: str) -> TableDef | None:
        """The table named `name` in public as this transaction sees it."""
        txn = self.txn
        if txn is not None:
            if name in txn.created:
                return txn.created[name]
            if name in txn.dropped:
                return None
        return self.catalog.get_table(name)

    # --- sequences (they share the tables' names: one relation per name) -----------------
    def visible_sequence(self, name: str) -> SequenceDef | None:
        """The sequence named `name` in public as this transaction sees it."""
        txn = self.txn
        if txn is not None:
            if name in txn.created_sequences:
                return txn.created_sequences[name]
            if name in txn.dropped_sequences:
                return None
            if name in txn.altered_sequences:
                return txn.altered_sequences[name]
        return self.catalog.get_sequence(name)

    def lookup_sequence(self, rel: RelationName) -> SequenceDef | None:
        """A sequence by its name as written (through search_path), None if there is none."""
        self.check_database(rel)
        if rel.schema is None:
            return self.visible_sequence(rel.name) if sch.PUBLIC in self.path else None
        return self.visible_sequence(rel.name) if rel.schema == sch.PUBLIC else None

    def sequences(self) -> list[SequenceDef]:
        """Every sequence this transaction sees."""
        names = {q.name for q in self.catalog.sequences()}
        if self.txn is not None:
            names |= set(self.txn.created_sequences)
        return sorted((q for q in map(self.visible_sequence, names) if q is not None),
                      key=lambda q: q.name)

    def sequence_by_id(self, seq_id: int) -> SequenceDef | None:
        return next((q for q in self.sequences() if q.id == seq_id), None)

    def relation_taken(self, name: str) -> bool:
        """Whether a table or a sequence holds `name` for this transaction."""
        return self.visible(name) is not None or self.visible_sequence(name) is not None

    def check_database(self, rel: RelationName) -> None:
        """0A000 for a name qualified by another database than the session's."""
        if rel.catalog is not None and self.database is not None and rel.catalog != self.database:
            raise errors.FeatureNotSupported(
                f'cross-database references are not implemented: "{rel.dotted()}"')


def sequence_to_json(q: SequenceDef) -> dict:
    o = q.options
    return {"id": q.id, "name": q.name, "type": o.type, "increment": o.increment,
            "minvalue": o.minvalue, "maxvalue": o.maxvalue, "start": o.start,
            "cache": o.cache, "cycle": o.cycle, "identity": q.identity,
            "owner": [q.owner.table_id, q.owner.column] if q.owner is not None else None}


def sequence_from_json(d: dict) -> SequenceDef:
    o = SequenceOptions(d["type"], d["increment"], d["minvalue"], d["maxvalue"], d["start"],
                        d["cache"], d["cycle"])
    owner = Owner(d["owner"][0], d["owner"][1]) if d.get("owner") else None
    return SequenceDef(d["id"], d["name"], o, owner, d.get("identity", False))


def table_to_json(t: TableDef) -> dict:
    return {
        "id": t.id, "name": t.name,
        "columns": [{"name": c.name, **_type_json(c.type), "not_null": c.not_null,
                     "default": c.default, "identity": c.identity.value}
                    for c in t.columns],
        "checks": [{"name": k.name, "sql": k.sql} for k in t.checks],
        "policy": {"kind": t.policy.kind.name, "keys": list(t.policy.keys)},
        "stats": {"rows": t.stats.rows,
                  "columns": {k: {"null_frac": v.null_frac, "distinct": v.distinct,
                                  "min": _jsonable(v.min), "max": _jsonable(v.max)}
                              for k, v in t.stats.columns.items()}},
    }


def _type_json(t: types.SqlType) -> dict:
    out = {"kind": t.kind.name, "precision": t.precision, "scale": t.scale, "length": t.length}
    if t.element is not None:  # arrays: their element type
        out["element"] = _type_json(t.element)
    return out


def _type_from_json(c: dict) -> types.SqlType:
    element = _type_from_json(c["element"]) if c.get("element") else None
    return types.SqlType(types.Kind[c["kind"]], c["precision"], c["scale"], c["length"], element)


def _jsonable(v):
    return v if v is None or isinstance(v, (int, float, str, bool)) else str(v)


def table_from_json(d: dict) -> TableDef:
    cols = tuple(ColumnDef(c["name"], _type_from_json(c), c["not_null"], c.get("default"),
                           Identity(c.get("identity", ""))) for c in d["columns"])
    policy = DistPolicy(DistKind[d["policy"]["kind"]], tuple(d["policy"]["keys"]))
    st = d.get("stats") or {}
    stats = TableStats(st.get("rows", 0), {k: ColumnStats(**v) for k, v in
                                           (st.get("columns") or {}).items()})
    checks = tuple(CheckDef(k["name"], k["sql"], constraints.bind_check(k["sql"], cols, d["name"]))
                   for k in d.get("checks") or ())
    return TableDef(d["id"], d["name"], cols, policy, stats, checks)
