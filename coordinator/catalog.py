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

Schemas (`schemas`: oid, name, owner, comment) are the user's; pg_catalog, public and
information_schema are built in (planner/schema.py BUILTIN_NAMESPACES) and stored only
once COMMENT ON SCHEMA gave one of them another comment (the stored row then stands for it).
A table row is keyed by (namespace, name), the namespace being its schema's oid, so a
schema's rename changes no table; a data directory made when tables were keyed by name
alone is upgraded on open (its tables are public's). A transaction's CREATE/DROP/ALTER
SCHEMA commit with its tables in the same SQLite transaction, which checks that every
table is left in a schema that exists (concurrent DDL on a schema and its tables meets
there).

Views (planner.schema.ViewDef) share the tables' (namespace, name) and their SQLite
table: a row of `tables` holds a view when its definition says `"kind": "view"` (no
storage is ever created for one). They commit with the tables, and `commit_transaction`
checks that no view reads a relation that is not there after the commit (the name locks
of coordinator/views.py make that hold; the check keeps a lost race from committing a
view over nothing).

`SessionCatalog` is what one statement of a session sees: the committed schemas,
tables and views, then its transaction's own changes, with names resolved through search_path.

`Catalog.version` counts the changes of committed schemas, tables (definitions and
statistics) and roles since the coordinator started: a plan made at one version holds while it is
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
from dataclasses import dataclass, replace
from typing import Callable

from planner import constraints, errors, types
from planner import schema as sch
from planner.schema import (CheckDef, ColumnDef, ColumnStats, DistKind, DistPolicy, Identity,
                            IndexDef, Namespace, Relation, RelationName, TableDef, TableStats, UniqueKey,
                            ViewDef)
from planner.sequences import Owner, SequenceDef, SequenceOptions
from planner.system_tables import refuse_write

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (id INTEGER PRIMARY KEY, namespace INTEGER NOT NULL,
                                   name TEXT NOT NULL, definition TEXT NOT NULL,
                                   UNIQUE (namespace, name));
CREATE TABLE IF NOT EXISTS schemas (oid INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
                                    owner INTEGER NOT NULL);
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

# A data directory made before schemas held tables keyed by name alone (`name UNIQUE`):
# its rows all belong to public. SQLite cannot drop a UNIQUE constraint, so the table is
# rebuilt, in one SQLite transaction (a crash leaves the old layout, upgraded next time).
_UPGRADE_TABLES = f"""
BEGIN IMMEDIATE;
ALTER TABLE tables RENAME TO tables_by_name;
CREATE TABLE tables (id INTEGER PRIMARY KEY, namespace INTEGER NOT NULL,
                     name TEXT NOT NULL, definition TEXT NOT NULL, UNIQUE (namespace, name));
INSERT INTO tables SELECT id, {sch.PUBLIC_OID}, name, definition FROM tables_by_name;
DROP TABLE tables_by_name;
COMMIT;
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
            columns = [r[1] for r in self._db.execute("PRAGMA table_info(tables)")]
            if columns and "namespace" not in columns:
                self._db.executescript(_UPGRADE_TABLES)
            self._db.executescript(_SCHEMA)
            # COMMENT ON SCHEMA came later: a data directory made before has no column.
            if "comment" not in [r[1] for r in self._db.execute("PRAGMA table_info(schemas)")]:
                self._db.execute("ALTER TABLE schemas ADD COLUMN comment TEXT")
            # The bootstrap superuser, as initdb creates it (no password until one is set).
            self._db.execute("INSERT OR IGNORE INTO roles VALUES (?, ?, 1, 1, 1, 1, NULL)",
                             (BOOTSTRAP_ROLE_OID, BOOTSTRAP_ROLE_NAME))
        self._cache: dict[tuple[int, str], TableDef] = {}  # by TableDef.key
        self._views: dict[tuple[int, str], ViewDef] = {}  # by ViewDef.key
        self._schemas: dict[int, Namespace] = {}  # the user's schemas, by oid
        self._sequences: dict[str, SequenceDef] = {}  # by name: they are all in public
        self._roles: dict[str, Role] = {}
        self._reserved: dict[str, tuple[int, int]] = {}  # counter -> (last given, last reserved)
        self._version = 0
        self._load()

    def _load(self):
        with self._lock:
            rows = self._db.execute("SELECT namespace, definition FROM tables").fetchall()
        self._cache, self._views = {}, {}
        for namespace, text in rows:
            r = replace(relation_from_json(json.loads(text)), namespace=namespace)
            (self._views if isinstance(r, ViewDef) else self._cache)[r.key] = r
        with self._lock:
            self._schemas = {oid: Namespace(oid, name, owner, comment) for oid, name, owner, comment
                             in self._db.execute("SELECT oid, name, owner, comment FROM schemas")}
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
    def get_table(self, name: str, namespace: int = sch.PUBLIC_OID) -> TableDef | None:
        """The committed table `name` of schema `namespace` (an oid)."""
        return self._cache.get((namespace, name))

    def table_by_id(self, table_id: int) -> TableDef | None:
        """The committed definition of table `table_id`, None once it is dropped."""
        with self._lock:
            return next((t for t in self._cache.values() if t.id == table_id), None)

    def tables(self) -> list[TableDef]:
        with self._lock:  # changes of the cache happen under the lock
            values = list(self._cache.values())
        return sorted(values, key=lambda t: (t.name, t.namespace))

    def get_relation(self, name: str, namespace: int = sch.PUBLIC_OID) -> Relation | None:
        """The committed table or view `name` of schema `namespace` (an oid)."""
        key = (namespace, name)
        with self._lock:
            return self._cache.get(key) or self._views.get(key)

    def views(self) -> list[ViewDef]:
        with self._lock:
            values = list(self._views.values())
        return sorted(values, key=lambda v: (v.name, v.namespace))

    def add_table(self, table: TableDef):
        with self._lock:
            if table.key in self._cache or table.key in self._views:
                raise errors.DuplicateTable(f'relation "{table.name}" already exists')
            self._db.execute("INSERT INTO tables VALUES (?, ?, ?, ?)",
                             (table.id, table.namespace, table.name,
                              json.dumps(table_to_json(table))))
            self._cache[table.key] = table
            self._version += 1

    def update_table(self, table: TableDef):
        """A new definition (statistics) of a committed table; nothing if it has been
        dropped (or replaced) meanwhile. Its placement stays the committed one (an
        expansion may have moved the table since `table` was read)."""
        with self._lock:
            current = self._cache.get(table.key)
            if current is None or current.id != table.id:
                return
            table = replace(table, numsegments=current.numsegments)
            self._db.execute("UPDATE tables SET definition = ? WHERE id = ?",
                             (json.dumps(table_to_json(table)), table.id))
            self._cache[table.key] = table
            self._version += 1  # ANALYZE, and loads adding to the row estimate

    def pin_placement(self, n_segments: int) -> None:
        """Tables of a catalog from before expansions (numsegments 0) are on all
        `n_segments` segments: say so, before the cluster can grow."""
        with self._lock:
            for key, table in list(self._cache.items()):
                if table.numsegments:
                    continue
                table = replace(table, numsegments=n_segments)
                self._db.execute("UPDATE tables SET definition = ? WHERE id = ?",
                                 (json.dumps(table_to_json(table)), table.id))
                self._cache[key] = table
                self._version += 1

    def drop_table(self, name: str, namespace: int = sch.PUBLIC_OID):
        with self._lock:
            self._db.execute("DELETE FROM tables WHERE namespace = ? AND name = ?",
                             (namespace, name))
            self._cache.pop((namespace, name), None)
            self._version += 1

    # --- schemas -------------------------------------------------------------------------
    def schemas(self) -> list[Namespace]:
        """Every committed schema: PostgreSQL's built-in ones, then the user's, by oid."""
        with self._lock:
            stored = dict(self._schemas)
        # A built-in schema is stored only once COMMENT ON SCHEMA changed its comment.
        builtin = [stored.pop(n.oid, n) for n in sch.BUILTIN_NAMESPACES]
        return builtin + sorted(stored.values(), key=lambda n: n.oid)

    def new_schema_oid(self) -> int:
        """An oid for a new schema, from the tables' id counter: no table's oid
        (16384 + its id) is ever the same."""
        return FIRST_ROLE_OID + self.next_id("table")

    # --- transactional DDL ---------------------------------------------------------------
    def commit_transaction(self, txn: int, record: bool, created: list[Relation],
                           dropped: list[Relation],
                           namespaces: dict[int, Namespace | None] | None = None,
                           new_sequences: list[SequenceDef] = (),
                           dropped_sequences: list[SequenceDef] = (),
                           altered_sequences: list[SequenceDef] = (),
                           sequence_values: dict[int, tuple[int, bool]] | None = None) -> None:
        """The commit point of transaction `txn`: in one SQLite transaction, its commit
        record (when it wrote on segments), the tables and views it created (the tables'
        storage is then accounted for), the ones it dropped (the tables' storage is noted
        for removal), the schemas it created, renamed or gave another owner
        (`namespaces`, by oid) or dropped (None there), the sequences it created, dropped
        and altered, and the counters it restarted. A view replaced by CREATE OR REPLACE
        is dropped and created with the same id."""
        namespaces = namespaces or {}
        with self._lock:
            for q in altered_sequences:
                current = self._sequences.get(q.name)
                if current is None or current.id != q.id:
                    raise errors.InternalError(f'sequence "{q.name}" changed under a lock')
            # Sequences are all in public: they share its names with the tables there.
            taken = {n for ns, n in self._cache if ns == sch.PUBLIC_OID} | set(self._sequences)
            gone = ({t.name for t in dropped if t.namespace == sch.PUBLIC_OID}
                    | {q.name for q in dropped_sequences})
            for q in new_sequences:
                if q.name in taken and q.name not in gone:
                    raise errors.DuplicateTable(f'relation "{q.name}" already exists')
            for t in created:
                if (t.namespace == sch.PUBLIC_OID and t.name in self._sequences
                        and t.name not in gone):
                    raise errors.DuplicateTable(f'relation "{t.name}" already exists')
            for t in dropped:
                current = self._cache.get(t.key) or self._views.get(t.key)
                if current is None or current.id != t.id:
                    raise errors.InternalError(f'relation "{t.name}" changed under a lock')
            gone = {t.key for t in dropped}
            for t in created:
                if (t.key in self._cache or t.key in self._views) and t.key not in gone:
                    raise errors.DuplicateTable(f'relation "{t.name}" already exists')
            schemas = self._schemas_after(namespaces)
            self._check_namespaces(schemas, created, gone)
            self._check_dependencies(created, dropped)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for t in dropped:
                    self._db.execute("DELETE FROM tables WHERE id = ?", (t.id,))
                    if isinstance(t, TableDef):
                        self._db.execute("INSERT OR REPLACE INTO storage VALUES (?, ?)",
                                         (t.id, txn))
                # A rename may swap two names: clear the changed rows first, so that no
                # intermediate state breaks UNIQUE (name).
                self._db.executemany("DELETE FROM schemas WHERE oid = ?",
                                     [(oid,) for oid in namespaces])
                self._db.executemany("INSERT INTO schemas (oid, name, owner, comment) "
                                     "VALUES (?, ?, ?, ?)",
                                     [(n.oid, n.name, n.owner, n.comment)
                                      for n in namespaces.values() if n is not None])
                for t in created:
                    self._db.execute("INSERT INTO tables VALUES (?, ?, ?, ?)",
                                     (t.id, t.namespace, t.name,
                                      json.dumps(relation_to_json(t))))
                    if isinstance(t, TableDef):
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
                (self._views if isinstance(t, ViewDef) else self._cache).pop(t.key, None)
            for t in created:
                (self._views if isinstance(t, ViewDef) else self._cache)[t.key] = t
            self._schemas = schemas
            for q in dropped_sequences:
                self._sequences.pop(q.name, None)
            for q in list(new_sequences) + list(altered_sequences):
                self._sequences[q.name] = q
            if (created or dropped or namespaces or new_sequences or dropped_sequences
                    or altered_sequences):
                self._version += 1

    def _schemas_after(self, namespaces: dict[int, Namespace | None]) -> dict[int, Namespace]:
        """The user's schemas once `namespaces` is applied; 42P06 for a name taken (by a
        schema another transaction committed meanwhile)."""
        after = dict(self._schemas)
        for oid, ns in namespaces.items():
            if ns is None:
                after.pop(oid, None)
            else:
                after[oid] = ns
        names = [n.name for n in after.values()] + [n.name for n in sch.BUILTIN_NAMESPACES
                                                    if n.oid not in after]
        for n in namespaces.values():
            if n is not None and names.count(n.name) > 1:
                raise errors.QueryError(f'schema "{n.name}" already exists', "42P06")
        return after

    def _check_namespaces(self, schemas: dict[int, Namespace], created: list[Relation],
                          gone: set) -> None:
        """Every table and view must be in a schema that exists after the commit: a
        transaction's new relation in a schema another one dropped meanwhile is 3F000, and
        a schema this one drops that another one put a relation into meanwhile is 2BP01
        (DDL on a schema and on the relations in it do not wait for each other: they meet
        here)."""
        builtin = {n.oid for n in sch.BUILTIN_NAMESPACES}
        for t in created:
            if t.namespace not in builtin and t.namespace not in schemas:
                raise errors.QueryError(f"schema with OID {t.namespace} does not exist",
                                        "3F000")
        if self._schemas.keys() <= schemas.keys():
            return  # no schema dropped: the committed relations keep theirs
        for key, t in [*self._cache.items(), *self._views.items()]:
            if key not in gone and t.namespace not in builtin and t.namespace not in schemas:
                name = self._schemas[t.namespace].name
                kind = "view" if isinstance(t, ViewDef) else "table"
                raise errors.QueryError(
                    f'cannot drop schema {name} because other objects depend on it', "2BP01",
                    detail=f"{kind} {name}.{t.name} depends on schema {name}",
                    hint="Use DROP ... CASCADE to drop the dependent objects too.")

    def _check_dependencies(self, created: list[Relation], dropped: list[Relation]) -> None:
        """40001 when a view would read a relation that is not there after the commit:
        a view created over one, or one dropped under a committed view."""
        if not created and not dropped:
            return  # rows only: no view changes what it reads
        gone = {t.id for t in dropped} - {t.id for t in created}
        after = ({t.id for t in self._cache.values()} | {v.id for v in self._views.values()}
                 | {t.id for t in created}) - gone
        replaced = {t.id for t in dropped}
        views = [v for v in created if isinstance(v, ViewDef)] + [
            v for v in self._views.values() if v.id not in replaced]
        for v in views:
            if any(d not in after for d in v.depends):
                raise errors.QueryError(
                    f'could not serialize access: view "{v.name}" reads a relation another '
                    "transaction dropped", "40001")

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
    """The schemas, tables and views one statement sees (planner.schema.CatalogView): the
    committed catalog, then the statement's transaction's own CREATEs, DROPs and ALTER
    SCHEMAs; names resolved as PostgreSQL 15 resolves them.

    `pg_catalog` (searched first, implicitly, when search_path does not list it) and
    `information_schema` hold the system catalog (planner/system_tables.py), which the
    binder resolves before it asks this view; `public` and the schemas users create hold
    tables. An unqualified name is looked up in the schemas of search_path that exist
    (`"$user"` is the schema named like the user); it is created in the first schema
    search_path lists that exists. A database name in front must be the session's.
    """

    def __init__(self, catalog: Catalog, txn=None, search_path: list[str] | None = None,
                 user: str = "", database: str | None = None, temp_schema: str | None = None):
        self.catalog = catalog
        self.txn = txn
        self.database = database
        self._by_name = {n.name: n for n in self.namespaces()}
        # The session's temporary schema (coordinator/temp_tables.py), once it has one:
        # searched first for tables, and named pg_temp too.
        temp = temp_schema if temp_schema in self._by_name else None
        listed = [user if s == "$user" else s
                  for s in (search_path if search_path is not None else ["$user", sch.PUBLIC])]
        self.explicit: list[str] = []  # the listed schemas that exist, in order, once each
        for s in listed:
            if s in self._by_name and s not in self.explicit:
                self.explicit.append(s)
        self.path = self.explicit if sch.PG_CATALOG in self.explicit else (
            [sch.PG_CATALOG] + self.explicit)
        if temp is not None:
            self.path = [temp] + [s for s in self.path if s != temp]
            self._by_name.setdefault("pg_temp", self._by_name[temp])

    # --- schemas -------------------------------------------------------------------------
    def namespaces(self) -> list[Namespace]:
        """Every schema this transaction sees, by oid."""
        found = {n.oid: n for n in self.catalog.schemas()}
        if self.txn is not None:
            for oid, ns in self.txn.namespaces.items():
                if ns is None:
                    found.pop(oid, None)
                else:
                    found[oid] = ns
        return sorted(found.values(), key=lambda n: n.oid)

    def namespace(self, name: str) -> Namespace | None:
        return self._by_name.get(name)

    def schema_name(self, oid: int) -> str:
        """The name of the schema `oid` (of a table this view found)."""
        return next(n.name for n in self._by_name.values() if n.oid == oid)

    def schema_exists(self, name: str) -> bool:
        return name in self._by_name

    def check_schema(self, rel: RelationName) -> None:
        """3F000 for a schema that does not exist."""
        if rel.schema is not None and rel.schema not in self._by_name:
            raise errors.QueryError(f'schema "{rel.schema}" does not exist', "3F000")

    # --- CatalogView ---------------------------------------------------------------------
    def get_table(self, name: str) -> Relation | None:
        """An unqualified name through search_path."""
        for schema in self.path:
            table = self.visible(self._by_name[schema].oid, name)
            if table is not None:
                return table
        return None

    def lookup(self, rel: RelationName) -> Relation | None:
        self.check_database(rel)
        if rel.schema is None:
            return self.get_table(rel.name)
        ns = self._by_name.get(rel.schema)
        return self.visible(ns.oid, rel.name) if ns is not None else None

    # --- the other ways statements name tables ---------------------------------------------
    @property
    def current_schema(self) -> str | None:
        """current_schema(): the first schema search_path lists that exists, else NULL."""
        return self.explicit[0] if self.explicit else None

    def for_view(self, view: ViewDef) -> SessionCatalog:
        """What `view`'s query reads: this transaction's relations, its names through the
        search path of the view's creation (`view.search_path`: the schemas listed then,
        `$user` resolved)."""
        return SessionCatalog(self.catalog, self.txn, list(view.search_path), "", self.database)

    def open(self, rel: RelationName) -> Relation:
        """A table (or view: the caller refuses it as PostgreSQL does) that must exist, as
        PostgreSQL's table_openrv finds it (TRUNCATE, COPY, ANALYZE): a schema that does
        not exist is 3F000, a relation that does not 42P01."""
        self.check_database(rel)
        refuse_write(self, rel)  # TRUNCATE, ANALYZE, COPY of pg_class: 0A000
        self.check_schema(rel)
        table = self.lookup(rel)
        if table is None:
            raise errors.UndefinedTable(f'relation "{rel}" does not exist')
        return table

    def creation_target(self, rel: RelationName) -> tuple[Namespace, str]:
        """The schema and name a new table `rel` gets, or PostgreSQL's error for creating
        it there (0A000 another database, 3F000 no such schema or none selected, 42501
        the system catalog's schemas)."""
        self.check_database(rel)
        if rel.schema is not None:
            self.check_schema(rel)
            schema = rel.schema
        elif self.explicit:
            schema = self.explicit[0]
        else:
            raise errors.QueryError("no schema has been selected to create in", "3F000")
        if schema in sch.SYSTEM_SCHEMAS:
            raise errors.QueryError(f'permission denied to create "{schema}.{rel.name}"',
                                    "42501", detail="System catalog modifications are "
                                    "currently disallowed.")
        return self._by_name[schema], rel.name

    def tables(self) -> list[TableDef]:
        """Every table this transaction sees (in any schema: ANALYZE without names)."""
        return [t for t in self._relations() if isinstance(t, TableDef)]

    def views(self) -> list[ViewDef]:
        """Every view this transaction sees (in any schema)."""
        return [v for v in self._relations() if isinstance(v, ViewDef)]

    def _relations(self) -> list[Relation]:
        keys = {t.key for t in self.catalog.tables()} | {v.key for v in self.catalog.views()}
        if self.txn is not None:
            keys |= set(self.txn.created)
        return sorted((t for t in (self.visible(*k) for k in keys) if t is not None),
                      key=lambda t: (t.name, t.namespace))

    def relations_in(self, namespace: int) -> list[Relation]:
        """The tables and views of one schema this transaction sees, oldest first (the
        order PostgreSQL's DROP SCHEMA ... CASCADE names them in)."""
        return sorted((t for t in self._relations() if t.namespace == namespace),
                      key=lambda t: t.id)

    def visible(self, namespace: int, name: str) -> Relation | None:
        """The table or view `name` of schema `namespace` (an oid) as this transaction
        sees it."""
        txn = self.txn
        key = (namespace, name)
        if txn is not None:
            if key in txn.created:
                return txn.created[key]
            if key in txn.dropped:
                return None
        return self.catalog.get_relation(name, namespace)

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

    def relation_taken(self, namespace: int, name: str) -> bool:
        """Whether a table, view, index (a key's or CREATE INDEX's) or sequence (they are
        all in public) holds `name` in schema `namespace` for this transaction."""
        return self.visible(namespace, name) is not None or (
            namespace == sch.PUBLIC_OID and self.visible_sequence(name) is not None) or (
            self.index_in(namespace, name) is not None)

    def index_in(self, namespace: int, name: str) -> tuple[TableDef, object] | None:
        """The table and the index (an IndexDef, or the UniqueKey whose index it is)
        named `name` in schema `namespace`, as this transaction sees them."""
        for t in self.tables():
            if t.namespace == namespace:
                for x in t.unique + t.indexes:
                    if x.name == name:
                        return t, x
        return None

    def lookup_index(self, rel: RelationName) -> tuple[TableDef, object] | None:
        """An index by its name as written (through search_path), None if there is none."""
        self.check_database(rel)
        if rel.schema is not None:
            ns = self._by_name.get(rel.schema)
            return self.index_in(ns.oid, rel.name) if ns is not None else None
        for schema in self.path:
            found = self.index_in(self._by_name[schema].oid, rel.name)
            if found is not None:
                return found
        return None

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
            "owner": [q.owner.table_id, q.owner.column] if q.owner is not None else None,
            "comment": q.comment}


def sequence_from_json(d: dict) -> SequenceDef:
    o = SequenceOptions(d["type"], d["increment"], d["minvalue"], d["maxvalue"], d["start"],
                        d["cache"], d["cycle"])
    owner = Owner(d["owner"][0], d["owner"][1]) if d.get("owner") else None
    return SequenceDef(d["id"], d["name"], o, owner, d.get("identity", False), d.get("comment"))


def table_to_json(t: TableDef) -> dict:
    return {
        "id": t.id, "name": t.name,
        "columns": [{"name": c.name, **_type_json(c.type), "not_null": c.not_null,
                     "default": c.default, "identity": c.identity.value, "comment": c.comment}
                    for c in t.columns],
        "checks": [{"name": k.name, "sql": k.sql, "comment": k.comment} for k in t.checks],
        "policy": {"kind": t.policy.kind.name, "keys": list(t.policy.keys)},
        "numsegments": t.numsegments,
        "unique": [{"name": k.name, "columns": list(k.columns), "primary": k.primary,
                    "comment": k.comment, "index_comment": k.index_comment}
                   for k in t.unique],
        "indexes": [{"id": i.id, "name": i.name, "columns": list(i.columns),
                     "comment": i.comment} for i in t.indexes],
        "comment": t.comment,
        "stats": {"rows": t.stats.rows,
                  "columns": {k: {"null_frac": v.null_frac, "distinct": v.distinct,
                                  "min": _jsonable(v.min), "max": _jsonable(v.max),
                                  "common": [[_jsonable(x), f] for x, f in v.common]}
                              for k, v in t.stats.columns.items()}},
    }


def _type_json(t: types.SqlType) -> dict:
    out = {"kind": t.kind.name, "precision": t.precision, "scale": t.scale, "length": t.length}
    if t.element is not None:  # arrays: their element type
        out["element"] = _type_json(t.element)
    if t.padded:  # a view's column (types.BPCHAR_PADDED; tables hold none)
        out["padded"] = True
    if t.dynamic:  # an unconstrained numeric keeping each value's scale
        out["dynamic"] = True
    return out


def _type_from_json(c: dict) -> types.SqlType:
    element = _type_from_json(c["element"]) if c.get("element") else None
    return types.SqlType(types.Kind[c["kind"]], c["precision"], c["scale"], c["length"], element,
                         padded=c.get("padded", False), dynamic=bool(c.get("dynamic")))


def _jsonable(v):
    return v if v is None or isinstance(v, (int, float, str, bool)) else str(v)


def relation_to_json(r: Relation) -> dict:
    if isinstance(r, TableDef):
        return table_to_json(r)
    return {"kind": "view", "id": r.id, "name": r.name,
            "columns": [{"name": c.name, **_type_json(c.type), "comment": c.comment}
                        for c in r.columns],
            "query": r.query, "query_names": list(r.query_names),
            "search_path": list(r.search_path), "depends": list(r.depends),
            "definition": r.definition, "comment": r.comment}


def relation_from_json(d: dict) -> Relation:
    if d.get("kind") != "view":
        return table_from_json(d)
    return ViewDef(d["id"], d["name"],
                   tuple(ColumnDef(c["name"], _type_from_json(c), comment=c.get("comment"))
                         for c in d["columns"]),
                   d["query"], tuple(d["query_names"]), tuple(d["search_path"]),
                   tuple(d["depends"]), d["definition"], comment=d.get("comment"))


def table_from_json(d: dict) -> TableDef:
    cols = tuple(ColumnDef(c["name"], _type_from_json(c), c["not_null"], c.get("default"),
                           Identity(c.get("identity", "")), c.get("comment"))
                 for c in d["columns"])
    policy = DistPolicy(DistKind[d["policy"]["kind"]], tuple(d["policy"]["keys"]))
    st = d.get("stats") or {}
    stats = TableStats(st.get("rows", 0), {k: ColumnStats(**v) for k, v in
                                           (st.get("columns") or {}).items()})
    unique = tuple(UniqueKey(k["name"], tuple(k["columns"]), k["primary"], k.get("comment"),
                             k.get("index_comment"))
                   for k in d.get("unique", ()))
    checks = tuple(CheckDef(k["name"], k["sql"], constraints.bind_check(k["sql"], cols, d["name"]),
                            k.get("comment"))
                   for k in d.get("checks") or ())
    indexes = tuple(IndexDef(i["id"], i["name"], tuple(i["columns"]), i.get("comment"))
                    for i in d.get("indexes") or ())
    return TableDef(d["id"], d["name"], cols, policy, stats, unique=unique, checks=checks,
                    indexes=indexes, comment=d.get("comment"),
                    numsegments=d.get("numsegments", 0))
