"""The rows of the system catalog, computed from raympp's own catalog for one statement.

`SystemCatalog(session)` is what the planner reads through `SESSION_INFO["system"]`
(planner/session_info.py `CatalogContext`): the session puts a new one there for every
statement it prepares or executes, so the rows are those of the tables that statement's
transaction sees (its own CREATEs and DROPs included), of the roles as they are, of the
session's settings and of the sessions connected to this coordinator (`Sessions`).

Views (relkind 'v') are listed with the tables: pg_class, pg_type (their row type),
pg_attribute, pg_views, information_schema.tables (VIEW), columns and views, and
pg_get_viewdef gives their definition (`view_definitions`).

Keys and indexes (pg_constraint 'p'/'u', pg_class 'i', pg_index, pg_indexes, pg_depend)
are described by coordinator/index_catalog.py; comments (pg_description) are kept on their
objects (coordinator/comments.py).

Oids: a table's or view's oid is 16384 + its id, its columns are attnum 1..n; namespaces,
types, functions and the system relations keep PostgreSQL 15's oids. Nothing in raympp is
owned (every role has every privilege), so objects show the bootstrap superuser (oid 10)
as their owner, as PostgreSQL shows initdb's objects.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import threading

from planner import catalog_names as cn
from planner import system_tables as st
from planner import types
from planner import schema as sch
from planner import pretty_expr
from planner.schema import DistKind, Identity, Relation, TableDef, ViewDef
from planner.sequences import SequenceDef, regclass_name
from planner.types import Kind
from planner import errors
from coordinator import settings as reg
from coordinator import index_catalog as ic

_START = dt.datetime.now(dt.timezone.utc)


def start_time() -> dt.datetime:
    """When this coordinator started (pg_postmaster_start_time())."""
    return _START


def table_oid(t: Relation) -> int:
    return cn.FIRST_USER_OID + t.id


def row_type_oid(t: Relation) -> int:
    """The oid of a table's row type (pg_class.reltype; a composite pg_type row), in a
    range of its own above the tables' oids."""
    return cn.FIRST_USER_OID + ROW_TYPE_OFFSET + t.id


ROW_TYPE_OFFSET = 1 << 30
# The oids of the catalogs pg_description's classoid names.
_PG_CLASS, _PG_CONSTRAINT, _PG_NAMESPACE = 1259, 2606, 2615
# CHECK constraints (pg_constraint) and defaults (pg_attrdef) have oids in ranges of their
# own: the table's id times 1000 plus the constraint's position or the column's attnum.
CONSTRAINT_OFFSET = 2 << 30
ATTRDEF_OFFSET = 3 << 30


def constraint_oid(t: TableDef, k: int) -> int:
    return cn.FIRST_USER_OID + CONSTRAINT_OFFSET + t.id * 1000 + k


def attrdef_oid(t: TableDef, attnum: int) -> int:
    return cn.FIRST_USER_OID + ATTRDEF_OFFSET + t.id * 1000 + attnum


def sequence_oid(q: SequenceDef) -> int:
    return cn.FIRST_USER_OID + q.id


# A sequence's columns, as PostgreSQL 15's (pg_attribute of a sequence relation).
_SEQUENCE_COLUMNS = [("last_value", types.INT8, True, 20, -1),
                     ("log_cnt", types.INT8, True, 20, -1),
                     ("is_called", types.BOOL, True, 16, -1)]


class Sessions:
    """The sessions connected to this coordinator, by backend pid (pg_stat_activity)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_pid: dict[int, object] = {}

    def add(self, session) -> None:
        with self._lock:
            self._by_pid[id(session)] = session

    def remove(self, session) -> None:
        with self._lock:
            self._by_pid.pop(id(session), None)

    def all(self) -> list:
        with self._lock:
            return sorted(self._by_pid.values(), key=lambda s: s.pid)


class Activity:
    """One session's pg_stat_activity figures, kept by the session."""

    def __init__(self, peer: str | None = None):
        self.backend_start = dt.datetime.now(dt.timezone.utc)
        self.peer = peer
        self.query = ""
        self.query_start: dt.datetime | None = None
        self.state_change: dt.datetime | None = self.backend_start
        self.active = False

    def start(self, query: str) -> None:
        self.query, self.active = query, True
        self.query_start = self.state_change = dt.datetime.now(dt.timezone.utc)

    def finish(self) -> None:
        self.active = False
        self.state_change = dt.datetime.now(dt.timezone.utc)


# PostgreSQL 15's pg_settings.category of the settings raympp has.
_CATEGORIES = {
    "application_name": "Reporting and Logging / What to Log",
    "client_encoding": "Client Connection Defaults / Locale and Formatting",
    "datestyle": "Client Connection Defaults / Locale and Formatting",
    "intervalstyle": "Client Connection Defaults / Locale and Formatting",
    "timezone": "Client Connection Defaults / Locale and Formatting",
    "lc_messages": "Client Connection Defaults / Locale and Formatting",
    "extra_float_digits": "Client Connection Defaults / Locale and Formatting",
    "statement_timeout": "Client Connection Defaults / Statement Behavior",
    "lock_timeout": "Client Connection Defaults / Statement Behavior",
    "idle_in_transaction_session_timeout": "Client Connection Defaults / Statement Behavior",
    "search_path": "Client Connection Defaults / Statement Behavior",
    "bytea_output": "Client Connection Defaults / Statement Behavior",
    "client_min_messages": "Client Connection Defaults / Statement Behavior",
    "default_transaction_read_only": "Client Connection Defaults / Statement Behavior",
    "default_transaction_deferrable": "Client Connection Defaults / Statement Behavior",
    "default_transaction_isolation": "Client Connection Defaults / Statement Behavior",
    "transaction_read_only": "Client Connection Defaults / Statement Behavior",
    "transaction_isolation": "Client Connection Defaults / Statement Behavior",
    "transaction_deferrable": "Client Connection Defaults / Statement Behavior",
    "work_mem": "Resource Usage / Memory",
    "standard_conforming_strings": "Version and Platform Compatibility / Previous PostgreSQL Versions",
}


class SystemCatalog:
    """planner.session_info.CatalogContext for one statement of `session`."""

    def __init__(self, session):
        self.session = session
        self.view = session.catalog_view(session.txn)
        self._tables: list[TableDef] | None = None
        self._views: list[ViewDef] | None = None
        self._sequences: list[SequenceDef] | None = None
        self._rows: dict[str, list[tuple]] = {}

    # --- what the planner asks ---------------------------------------------------------
    def tables(self) -> list[TableDef]:
        if self._tables is None:
            self._tables = self.view.tables()
        return self._tables

    def views(self) -> list[ViewDef]:
        if self._views is None:
            self._views = self.view.views()
        return self._views

    def sequences(self) -> list[SequenceDef]:
        if self._sequences is None:
            self._sequences = self.view.sequences()
        return self._sequences

    def indexes(self) -> list[ic.Index]:
        return [x for t in self.tables() for x in ic.indexes(t)]

    def relations(self) -> list[tuple[int, str, str]]:
        return [(table_oid(t), self.view.schema_name(t.namespace), t.name)
                for t in self.tables() + self.views()] + [
            (x.oid, self.view.schema_name(x.table.namespace), x.name)
            for x in self.indexes()] + [
            (sequence_oid(q), sch.PUBLIC, q.name) for q in self.sequences()] + [
            (r.oid, r.schema, r.name) for r in st.RELATIONS.values()]

    def view_definitions(self) -> list[tuple[int, str]]:
        return [(table_oid(v), v.definition) for v in self.views()]

    def namespaces(self) -> list[tuple[str, int]]:
        return [(n.name, n.oid) for n in self.view.namespaces()]

    def _schema_name(self, oid: int) -> str:
        return self.view.schema_name(oid)

    def sequence(self, text: str) -> tuple[int, str]:
        """(id, name) of the sequence a regclass text names (nextval('s')): 42P01 when
        there is no such relation, 42809 when it is no sequence."""
        rel = regclass_name(text)
        seq = self.view.lookup_sequence(rel)
        if seq is not None:
            return seq.id, seq.name
        if self.view.lookup(rel) is not None or st.find(self.view, rel) is not None:
            raise errors.QueryError(f'"{rel.name}" is not a sequence', "42809")
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')

    def sequence_row(self, seq_id: int) -> tuple[int, int, bool]:
        """A sequence read as a relation: (last_value, log_cnt, is_called)."""
        seq = self.view.sequence_by_id(seq_id)
        txn = self.session.txn
        private = txn.sequence_states.get(seq_id) if txn is not None else None
        if private is not None:  # restarted by this transaction
            return private[0], private[2], private[1]
        return self.session.engine.sequences.row(seq)

    def constraint_defs(self) -> list[tuple[int, str, str]]:
        """(oid, pg_get_constraintdef, its pretty form) of every CHECK, PRIMARY KEY and
        UNIQUE constraint."""
        return [(constraint_oid(t, k), f"CHECK ({c.sql})",
                 f"CHECK ({pretty_expr.pretty(c.sql)})")
                for t in self.tables() for k, c in enumerate(t.checks, 1)] + [
            (ic.key_constraint_oid(x.table, j), ic.constraintdef(x), ic.constraintdef(x))
            for t in self.tables() for j, x in ic.key_indexes(t)]

    def relation_sizes(self) -> list[tuple[int, int]]:
        """(oid, bytes) of every relation (pg_table_size): a table's chunk files on all
        segments, as this statement's transaction sees them; views, sequences, indexes
        (none is built) and the system catalog (computed, never stored) have none."""
        tables = self.tables()
        txn = self.session.txn
        found: dict[int, int] = {}
        if tables:
            for shard in self.session.engine.cluster.call_all(
                    "table_bytes", [t.id for t in tables], txn.id if txn is not None else None):
                for table_id, n in shard.items():
                    found[table_id] = found.get(table_id, 0) + n
        sizes = {table_oid(t): found.get(t.id, 0) for t in tables}
        return list(sizes.items()) + [(oid, 0) for oid, _schema, _name in self.relations()
                                      if oid not in sizes]

    def index_defs(self) -> list[tuple[int, str, str, list[tuple[int, str]]]]:
        """(oid, pg_get_indexdef, its pretty form, (column number, its pg_get_indexdef))
        of every index. The pretty form names the table as regclass does (qualified only
        when search_path does not find it), as PostgreSQL's."""
        shown = cn.relation_names()
        return [(x.oid, ic.indexdef(x, self._schema_name(x.table.namespace)),
                 ic.indexdef(x, None, shown[table_oid(x.table)]), ic.index_column_defs(x))
                for x in self.indexes()]

    def serial_sequences(self) -> list[tuple[tuple[str, str], str]]:
        """((table, column), sequence) of the sequences columns own (pg_get_serial_sequence)."""
        tables = {t.id: t.name for t in self.tables()}
        return [((tables[q.owner.table_id], q.owner.column), f"public.{cn.quote_ident(q.name)}")
                for q in self.sequences() if q.owner is not None and q.owner.table_id in tables]

    def search_path(self) -> list[str]:
        return list(self.view.path)

    def explicit_path(self) -> list[str]:
        return list(self.view.explicit)

    def roles(self) -> list[tuple[int, str]]:
        return [(r.oid, r.name) for r in self.session.engine.catalog.roles()]

    def setting(self, name: str, missing_ok: bool) -> str | None:
        try:
            return self.session.settings.show(name)
        except errors.UndefinedObject:
            if missing_ok:
                return None
            raise

    def set_setting(self, name: str, value: str | None, is_local: bool) -> str:
        current = lambda: self.session.txn  # noqa: E731
        self.session.settings.set(name, value, local=is_local, transaction=current)
        return self.session.settings.show(name)

    def start_time(self) -> dt.datetime:
        return _START

    def rows(self, relation: st.SystemRelation) -> list[tuple]:
        key = relation.qualified
        if key not in self._rows:
            make = getattr(self, "_" + key.replace(".", "__"), None)
            names = [c.name for c in relation.columns]
            if make is None:
                self._rows[key] = st.static_rows(relation)
            elif key == "pg_catalog.pg_type":  # the built-in types, then the row types
                self._rows[key] = st.static_rows(relation) + [
                    tuple(d.get(n) for n in names) for d in make()]
            elif key in _PER_RELATION:
                # The system relations' own rows (the bulk: ~1,600 columns) never change:
                # computed once per process, after the user's relations' rows, as listed.
                system_key = (key, self.session.database)
                if system_key not in _SYSTEM_PART:
                    _SYSTEM_PART[system_key] = [tuple(d.get(n) for n in names)
                                                for d in make(_system_relation_rows())]
                self._rows[key] = [tuple(d.get(n) for n in names)
                                   for d in make(self._relation_rows())] \
                    + _SYSTEM_PART[system_key]
            else:
                self._rows[key] = [tuple(d.get(n) for n in names) for d in make()]
        return self._rows[key]

    # --- pg_catalog ----------------------------------------------------------------------
    def _relation_rows(self):
        """(oid, name, namespace oid, relkind, columns as (name, SqlType, not null,
        atttypid, atttypmod), the user's table or view or None) of every relation but the
        system relations (`_system_relation_rows`)."""
        out = []
        for t in sorted(self.tables() + self.views(), key=lambda r: r.name):
            cols = [(c.name, c.type, c.not_null, c.type.oid, c.type.typmod)
                    for c in t.columns]
            out.append((table_oid(t), t.name, t.namespace,
                        "v" if isinstance(t, ViewDef) else "r", cols, t))
        for x in self.indexes():
            cols = [(c.name, c.type, False, c.type.oid, c.type.typmod)
                    for c in (x.table.columns[p] for p in x.columns)]
            out.append((x.oid, x.name, x.table.namespace, "i", cols, None))
        for q in self.sequences():
            out.append((sequence_oid(q), q.name, cn.PUBLIC_OID, "S", _SEQUENCE_COLUMNS, None))
        return out

    def _pg_catalog__pg_namespace(self):
        for n in self.view.namespaces():
            yield {"oid": n.oid, "nspname": n.name, "nspowner": n.owner}

    def _pg_catalog__pg_class(self, relations):
        indexed = {x.table.id for x in self.indexes()}
        index_of = {x.oid: x.table for x in self.indexes()}
        for oid, name, nsp, kind, cols, table in relations:
            # an index counts its table's rows (PostgreSQL's as of its last build or ANALYZE)
            rows = table if kind == "r" else index_of.get(oid) if kind == "i" else None
            yield {"oid": oid, "relname": name, "relnamespace": nsp,
                   "reltype": row_type_oid(table) if table is not None else 0,
                   "reloftype": 0, "relowner": cn.BOOTSTRAP_ROLE_OID,
                   "relam": {"r": cn.HEAP_AM_OID, "i": ic.BTREE_AM_OID}.get(kind, 0),
                   "relfilenode": oid if kind in ("r", "S", "i") else 0, "reltablespace": 0,
                   "relpages": 0,
                   "reltuples": float(rows.stats.rows) if rows is not None else -1.0,
                   "relallvisible": 0, "reltoastrelid": 0,
                   "relhasindex": kind == "r" and table is not None and table.id in indexed,
                   "relisshared": False, "relpersistence": "p", "relkind": kind,
                   "relnatts": len(cols),
                   "relchecks": len(getattr(table, "checks", ())) if table is not None else 0,
                   "relhasrules": kind == "v",
                   "relhastriggers": False, "relhassubclass": False, "relrowsecurity": False,
                   "relforcerowsecurity": False, "relispopulated": True,
                   "relreplident": "d" if kind == "r" and table is not None else "n",
                   "relispartition": False, "relrewrite": 0, "relfrozenxid": 0,
                   "relminmxid": 0}

    def _pg_catalog__pg_type(self):
        """Each table's and view's row type (typtype 'c', as CREATE TABLE and CREATE VIEW
        make one; JDBC's getUDTs lists them), listed after PostgreSQL's built-in types."""
        for t in self.tables() + self.views():
            yield {"oid": row_type_oid(t), "typname": t.name, "typnamespace": t.namespace,
                   "typowner": cn.BOOTSTRAP_ROLE_OID, "typlen": -1, "typbyval": False,
                   "typtype": "c", "typcategory": "C", "typispreferred": False,
                   "typisdefined": True, "typdelim": ",", "typrelid": table_oid(t),
                   "typsubscript": "-", "typelem": 0, "typarray": 0,
                   "typinput": "record_in", "typoutput": "record_out",
                   "typreceive": "record_recv", "typsend": "record_send", "typmodin": "-",
                   "typmodout": "-", "typanalyze": "-", "typalign": "d", "typstorage": "x",
                   "typnotnull": False, "typbasetype": 0, "typtypmod": -1, "typndims": 0,
                   "typcollation": 0}

    def _pg_catalog__pg_attribute(self, relations):
        typ = {int(r[0]): dict(zip(st.system_data.TYPE_COLUMNS, r))
               for r in st.system_data.TYPES}
        for oid, _name, _nsp, _kind, cols, table in relations:
            for i, (name, t, not_null, tid, mod) in enumerate(cols, 1):
                column = table.columns[i - 1] if table is not None else None
                row = typ.get(tid, {})
                collation = 100 if t.kind in (Kind.TEXT, Kind.VARCHAR, Kind.CHAR) else (
                    950 if t.kind is Kind.NAME else 0)
                yield {"attrelid": oid, "attname": name, "atttypid": tid, "attstattarget": -1,
                       "attlen": int(row.get("typlen", -1)), "attnum": i,
                       "attndims": 1 if row.get("typcategory") == "A" else 0,
                       "attcacheoff": -1, "atttypmod": mod,
                       "attbyval": row.get("typbyval") == "true",
                       "attalign": row.get("typalign", "i"),
                       "attstorage": row.get("typstorage", "p"), "attcompression": "",
                       "attnotnull": not_null,
                       "atthasdef": column is not None and column.default is not None,
                       "atthasmissing": False,
                       "attidentity": column.identity.value if column is not None else "",
                       "attgenerated": "", "attisdropped": False,
                       "attislocal": True, "attinhcount": 0, "attcollation": collation}

    def _pg_catalog__pg_attrdef(self):
        for t in self.tables():
            for i, c in enumerate(t.columns, 1):
                if c.default is not None:
                    yield {"oid": attrdef_oid(t, i), "adrelid": table_oid(t), "adnum": i,
                           "adbin": c.default}

    def _pg_catalog__pg_constraint(self):
        for t in self.tables():
            for k, c in enumerate(t.checks, 1):
                cols = sorted(i for i, col in enumerate(t.columns, 1)
                              if _reads(c.sql, col.name))
                yield {"oid": constraint_oid(t, k), "conname": c.name,
                       "connamespace": t.namespace, "contype": "c", "condeferrable": False,
                       "condeferred": False, "convalidated": True, "conrelid": table_oid(t),
                       "contypid": 0, "conindid": 0, "conparentid": 0, "confrelid": 0,
                       "confupdtype": " ", "confdeltype": " ", "confmatchtype": " ",
                       "conislocal": True, "coninhcount": 0, "connoinherit": False,
                       "conkey": "{" + ",".join(map(str, cols)) + "}",
                       "conbin": c.sql}
            for j, x in ic.key_indexes(t):
                yield {"oid": ic.key_constraint_oid(t, j), "conname": x.name,
                       "connamespace": t.namespace, "contype": "p" if x.primary else "u",
                       "condeferrable": False, "condeferred": False, "convalidated": True,
                       "conrelid": table_oid(t), "contypid": 0, "conindid": x.oid,
                       "conparentid": 0, "confrelid": 0, "confupdtype": " ",
                       "confdeltype": " ", "confmatchtype": " ", "conislocal": True,
                       "coninhcount": 0, "connoinherit": True,
                       "conkey": "{" + ",".join(str(p + 1) for p in x.columns) + "}",
                       "conbin": None}

    def descriptions(self) -> list[tuple[int, int, int, str]]:
        """(classoid, objoid, objsubid, description) of every comment (COMMENT ON):
        relations and their columns (pg_class), constraints, schemas."""
        out = []
        for r in self.tables() + self.views():
            if r.comment is not None:
                out.append((_PG_CLASS, table_oid(r), 0, r.comment))
            out += [(_PG_CLASS, table_oid(r), i, c.comment)
                    for i, c in enumerate(r.columns, 1) if c.comment is not None]
        for t in self.tables():
            out += [(_PG_CONSTRAINT, constraint_oid(t, k), 0, c.comment)
                    for k, c in enumerate(t.checks, 1) if c.comment is not None]
            out += [(_PG_CONSTRAINT, ic.key_constraint_oid(t, j), 0, k.comment)
                    for j, k in enumerate(t.unique, 1) if k.comment is not None]
        out += [(_PG_CLASS, x.oid, 0, x.comment) for x in self.indexes()
                if x.comment is not None]
        out += [(_PG_CLASS, sequence_oid(q), 0, q.comment) for q in self.sequences()
                if q.comment is not None]
        out += [(_PG_NAMESPACE, n.oid, 0, n.comment) for n in self.view.namespaces()
                if n.comment is not None]
        return out

    def _pg_catalog__pg_description(self):
        for classoid, objoid, objsubid, text in self.descriptions():
            yield {"objoid": objoid, "classoid": classoid, "objsubid": objsubid,
                   "description": text}

    def _pg_catalog__pg_index(self):
        for x in self.indexes():
            yield ic.pg_index_row(x)

    def _pg_catalog__pg_indexes(self):
        for x in self.indexes():
            schema = self._schema_name(x.table.namespace)
            yield {"schemaname": schema, "tablename": x.table.name, "indexname": x.name,
                   "tablespace": None, "indexdef": ic.indexdef(x, schema)}

    def _pg_catalog__pg_sequence(self):
        for q in self.sequences():
            o = q.options
            yield {"seqrelid": sequence_oid(q), "seqtypid": o.type_oid, "seqstart": o.start,
                   "seqincrement": o.increment, "seqmax": o.maxvalue, "seqmin": o.minvalue,
                   "seqcache": o.cache, "seqcycle": o.cycle}

    def _pg_catalog__pg_sequences(self):
        counters = self.session.engine.sequences
        for q in self.sequences():
            o = q.options
            last, called = counters.state(q)
            yield {"schemaname": sch.PUBLIC, "sequencename": q.name,
                   "sequenceowner": self._owner_name(), "data_type": o.type,
                   "start_value": o.start, "min_value": o.minvalue, "max_value": o.maxvalue,
                   "increment_by": o.increment, "cycle": o.cycle, "cache_size": o.cache,
                   "last_value": last if called else None}

    def _pg_catalog__pg_depend(self):
        """What psql and drivers read of pg_depend: a sequence owned by a column ('a';
        'i' for an identity column's); as PostgreSQL records them, an index on the
        columns it covers ('a'), a key on its columns ('a') and the key's index on the
        key ('i')."""
        tables = {t.id: t for t in self.tables()}
        for q in self.sequences():
            if q.owner is None or q.owner.table_id not in tables:
                continue
            t = tables[q.owner.table_id]
            yield _depend(_PG_CLASS, sequence_oid(q), _PG_CLASS, table_oid(t),
                          t.column_index(q.owner.column) + 1, "i" if q.identity else "a")
        for x in self.indexes():
            t = x.table
            if x.key is None:
                for p in sorted(set(x.columns)):
                    yield _depend(_PG_CLASS, x.oid, _PG_CLASS, table_oid(t), p + 1, "a")
                continue
            con = ic.key_constraint_oid(t, t.unique.index(x.key) + 1)
            yield _depend(_PG_CLASS, x.oid, _PG_CONSTRAINT, con, 0, "i")
            for p in sorted(set(x.columns)):
                yield _depend(_PG_CONSTRAINT, con, _PG_CLASS, table_oid(t), p + 1, "a")

    def _pg_catalog__pg_database(self):
        yield {"oid": cn.DATABASE_OID, "datname": self.session.database,
               "datdba": cn.BOOTSTRAP_ROLE_OID, "encoding": 6, "datlocprovider": "c",
               "datistemplate": False, "datallowconn": True, "datconnlimit": -1,
               "datfrozenxid": 0, "datminmxid": 1, "dattablespace": 1663,
               "datcollate": "C", "datctype": "C"}

    def _role_rows(self):
        return self.session.engine.catalog.roles()

    def _pg_catalog__pg_authid(self):
        for r in self._role_rows():
            yield {"oid": r.oid, "rolname": r.name, "rolsuper": r.superuser,
                   "rolinherit": r.inherit, "rolcreaterole": r.createrole,
                   "rolcreatedb": r.createdb, "rolcanlogin": r.login,
                   "rolreplication": r.replication, "rolbypassrls": r.bypassrls,
                   "rolconnlimit": r.connection_limit, "rolpassword": r.password,
                   "rolvaliduntil": r.valid_until}

    def _pg_catalog__pg_roles(self):
        for r in self._role_rows():
            yield {"rolname": r.name, "rolsuper": r.superuser, "rolinherit": r.inherit,
                   "rolcreaterole": r.createrole, "rolcreatedb": r.createdb,
                   "rolcanlogin": r.login, "rolreplication": r.replication,
                   "rolconnlimit": r.connection_limit, "rolpassword": "********",
                   "rolvaliduntil": r.valid_until, "rolbypassrls": r.bypassrls,
                   "oid": r.oid}

    def _pg_catalog__pg_user(self):
        for r in self._role_rows():
            if r.login:
                yield {"usename": r.name, "usesysid": r.oid, "usecreatedb": r.createdb,
                       "usesuper": r.superuser, "userepl": r.replication,
                       "usebypassrls": r.bypassrls, "passwd": "********",
                       "valuntil": r.valid_until}

    def _pg_catalog__pg_tables(self):
        for oid, name, nsp, kind, _cols, table in self._relation_rows() + \
                _system_relation_rows():
            if kind == "r":
                yield {"schemaname": self._schema_name(nsp), "tablename": name,
                       "tableowner": self._owner_name(),
                       "hasindexes": table is not None and bool(ic.indexes(table)),
                       "hasrules": False, "hastriggers": False, "rowsecurity": False}

    def _pg_catalog__pg_views(self):
        for v in self.views():
            yield {"schemaname": self._schema_name(v.namespace), "viewname": v.name,
                   "viewowner": self._owner_name(), "definition": v.definition}

    def _owner_name(self) -> str:
        return self.session.engine.catalog.bootstrap_role().name

    def _pg_catalog__gp_distribution_policy(self):
        for t in self.tables():
            p = t.policy
            yield {"localoid": table_oid(t),
                   "policytype": "r" if p.kind is DistKind.REPLICATED else "p",
                   "numsegments": t.segment_count(self.session.engine.cluster.n_segments),
                   "distkey": " ".join(str(k + 1) for k in p.keys)
                   if p.kind is DistKind.HASHED else "",
                   "distclass": " ".join("0" for _ in p.keys)
                   if p.kind is DistKind.HASHED else ""}

    def _pg_catalog__gp_segment_configuration(self):
        """Greenplum's: the coordinator (content -1) and each segment (its node's address;
        raympp has no mirrors, so every segment is a primary, up)."""
        cluster = self.session.engine.cluster
        rows = [(-1, cluster.motion.endpoint().host, cluster.data_dir)] + [
            (i, cluster.placement[i], os.path.join(cluster.data_dir, f"seg{i}"))
            for i in range(cluster.n_segments)]
        for content, address, datadir in rows:
            yield {"dbid": content + 2, "content": content, "role": "p", "preferred_role": "p",
                   "mode": "n" if content < 0 else "s", "status": "u", "port": 0,
                   "hostname": address, "address": address, "datadir": datadir}

    def _pg_catalog__raympp_expansion(self):
        """The tables of the running (or last) expansion: coordinator/expansion.py."""
        for m in self.session.engine.expansion.rows():
            yield {"table_schema": m.schema, "table_name": m.name, "status": m.status,
                   "old_segments": m.old, "new_segments": m.new, "rows_moved": m.rows,
                   "bytes_moved": m.bytes, "started": m.started, "finished": m.finished}

    def _pg_catalog__pg_settings(self):
        s = self.session.settings
        for setting in sorted(reg.REGISTRY.values(), key=lambda x: x.key):
            if not setting.show_all:
                continue
            value = s.get(setting.key)
            raw = _raw(setting, value)
            boot = _raw(setting, reg._BOOT[setting.key])
            reset = _raw(setting, s._reset.get(setting.key, reg._BOOT[setting.key]))
            source = "default" if raw == boot else ("client" if raw == reset else "session")
            yield {"name": setting.name, "setting": raw, "unit": setting.unit,
                   "category": _CATEGORIES.get(setting.key, "Customized Options"
                                               if "." in setting.key else "Ungrouped"),
                   "short_desc": setting.description, "extra_desc": None,
                   "context": "internal" if setting.read_only else "user",
                   "vartype": setting.kind.value, "source": source,
                   "min_val": None if setting.min is None else str(setting.min),
                   "max_val": None if setting.max is None else str(setting.max),
                   "enumvals": "{" + ",".join(_array_item(c) for c in setting.choices) + "}"
                   if setting.kind is reg.Kind.ENUM else None,
                   "boot_val": boot, "reset_val": reset, "pending_restart": False}

    def _pg_catalog__pg_stat_activity(self):
        sessions = getattr(self.session.engine, "sessions", None)
        for other in (sessions.all() if sessions is not None else [self.session]):
            act = getattr(other, "activity", None)
            if act is None:
                continue
            addr, port = _peer(act.peer)
            txn = other.txn
            state = "active" if act.active else (
                ("idle in transaction (aborted)" if txn.state.name == "FAILED" else
                 "idle in transaction") if txn is not None and txn.explicit else "idle")
            role = self.session.engine.catalog.get_role(other.user)
            yield {"datid": cn.DATABASE_OID, "datname": other.database, "pid": other.pid,
                   "usesysid": role.oid if role is not None else None, "usename": other.user,
                   "application_name": other.settings.show("application_name"),
                   "client_addr": addr, "client_port": port,
                   "backend_start": act.backend_start,
                   "xact_start": act.query_start if txn is not None else None,
                   "query_start": act.query_start, "state_change": act.state_change,
                   "state": state, "query": act.query, "backend_type": "client backend"}

    # --- information_schema --------------------------------------------------------------
    def _information_schema__schemata(self):
        owners = dict(self.roles())
        for n in self.view.namespaces():
            yield {"catalog_name": self.session.database, "schema_name": n.name,
                   "schema_owner": owners.get(n.owner)}

    def _information_schema__tables(self, relations):
        for oid, name, nsp, kind, _cols, table in relations:
            if kind in ("S", "i"):
                continue  # tables and views only
            schema = self._schema_name(nsp)
            yield {"table_catalog": self.session.database, "table_schema": schema,
                   "table_name": name, "table_type": "BASE TABLE" if kind == "r" else "VIEW",
                   "is_insertable_into": "YES" if kind == "r" and table is not None else "NO",
                   "is_typed": "NO"}

    def _information_schema__sequences(self):
        for q in self.sequences():
            o = q.options
            yield {"sequence_catalog": self.session.database, "sequence_schema": sch.PUBLIC,
                   "sequence_name": q.name, "data_type": o.type,
                   "numeric_precision": {"smallint": 16, "integer": 32, "bigint": 64}[o.type],
                   "numeric_precision_radix": 2, "numeric_scale": 0,
                   "start_value": str(o.start), "minimum_value": str(o.minvalue),
                   "maximum_value": str(o.maxvalue), "increment": str(o.increment),
                   "cycle_option": "YES" if o.cycle else "NO"}

    def _identity_info(self, table: TableDef, column) -> dict:
        """information_schema.columns' identity columns of an identity column."""
        if column is None or column.identity is Identity.NONE:
            return {"is_identity": "NO", "identity_cycle": "NO"}
        q = next((q for q in self.sequences() if q.identity and q.owner is not None
                  and q.owner.table_id == table.id and q.owner.column == column.name), None)
        if q is None:
            return {"is_identity": "YES", "identity_cycle": "NO"}
        o = q.options
        return {"is_identity": "YES",
                "identity_generation": "ALWAYS" if column.identity is Identity.ALWAYS
                else "BY DEFAULT",
                "identity_start": str(o.start), "identity_increment": str(o.increment),
                "identity_maximum": str(o.maxvalue), "identity_minimum": str(o.minvalue),
                "identity_cycle": "YES" if o.cycle else "NO"}

    def _information_schema__columns(self, relations):
        for oid, name, nsp, kind, cols, table in relations:
            if kind in ("S", "i"):
                continue  # PostgreSQL lists the columns of tables and views only
            schema = self._schema_name(nsp)
            for i, (col, t, not_null, tid, _mod) in enumerate(cols, 1):
                column = table.columns[i - 1] if table is not None else None
                yield {"table_catalog": self.session.database, "table_schema": schema,
                       "table_name": name, "column_name": col, "ordinal_position": i,
                       "is_nullable": "NO" if not_null else "YES",
                       **_column_type_info(t, tid),
                       "udt_catalog": self.session.database, "udt_schema": "pg_catalog",
                       "udt_name": cn.TYPE_NAMES.get(tid),
                       "dtd_identifier": str(i), "is_self_referencing": "NO",
                       "column_default": column.default if column is not None else None,
                       **self._identity_info(table, column), "is_generated": "NEVER",
                       "is_updatable": "YES" if kind == "r" and table is not None else "NO"}

    def _table_constraints(self):
        """(table, name, type, the column positions it uses) of every constraint of the
        user's tables, as information_schema lists them: CHECKs, then keys."""
        for t in self.tables():
            for c in t.checks:
                yield t, c.name, "CHECK", [i for i, col in enumerate(t.columns)
                                           if _reads(c.sql, col.name)]
            for k in t.unique:
                yield t, k.name, "PRIMARY KEY" if k.primary else "UNIQUE", list(k.columns)

    def _constraint_ids(self, t: TableDef, name: str) -> dict:
        schema = self._schema_name(t.namespace)
        return {"constraint_catalog": self.session.database, "constraint_schema": schema,
                "constraint_name": name, "table_catalog": self.session.database,
                "table_schema": schema, "table_name": t.name}

    def _information_schema__table_constraints(self):
        """PostgreSQL 15 lists NOT NULL columns as CHECK constraints named
        nspoid_reloid_attnum_not_null too."""
        for t, name, kind, _cols in self._table_constraints():
            yield {**self._constraint_ids(t, name), "constraint_type": kind,
                   "is_deferrable": "NO", "initially_deferred": "NO", "enforced": "YES",
                   "nulls_distinct": "YES" if kind == "UNIQUE" else None}
        for t in self.tables():
            for i, c in enumerate(t.columns, 1):
                if c.not_null:
                    yield {**self._constraint_ids(
                               t, f"{t.namespace}_{table_oid(t)}_{i}_not_null"),
                           "constraint_type": "CHECK", "is_deferrable": "NO",
                           "initially_deferred": "NO", "enforced": "YES",
                           "nulls_distinct": None}

    def _information_schema__key_column_usage(self):
        for t, name, kind, cols in self._table_constraints():
            if kind != "CHECK":
                for n, p in enumerate(cols, 1):
                    yield {**self._constraint_ids(t, name), "column_name": t.columns[p].name,
                           "ordinal_position": n, "position_in_unique_constraint": None}

    def _information_schema__constraint_column_usage(self):
        for t, name, _kind, cols in self._table_constraints():
            for p in cols:
                yield {**self._constraint_ids(t, name), "column_name": t.columns[p].name}

    def _information_schema__views(self):
        """The user's views: none is updatable here (nor has triggers or a CHECK
        OPTION)."""
        for v in self.views():
            yield {"table_catalog": self.session.database,
                   "table_schema": self.view.schema_name(v.namespace),
                   "table_name": v.name, "view_definition": v.definition,
                   "check_option": "NONE", "is_updatable": "NO", "is_insertable_into": "NO",
                   "is_trigger_updatable": "NO", "is_trigger_deletable": "NO",
                   "is_trigger_insertable_into": "NO"}


# The relations that list every relation or column, the system relations' own last: their
# system part, the same for every statement, is kept per (relation, database).
_PER_RELATION = frozenset({"pg_catalog.pg_class", "pg_catalog.pg_attribute",
                           "information_schema.tables", "information_schema.columns"})
_SYSTEM_PART: dict[tuple[str, str], list[tuple]] = {}
_SYSTEM_RELATIONS: list[tuple] = []


def _system_relation_rows() -> list[tuple]:
    """`SystemCatalog._relation_rows`' rows of the system relations themselves."""
    if not _SYSTEM_RELATIONS:
        for r in st.RELATIONS.values():
            cols = [(c.name, c.type, c.not_null, tid, mod)
                    for c, (tid, mod) in zip(r.columns, r.type_oids)]
            _SYSTEM_RELATIONS.append(
                (r.oid, r.name, cn.NAMESPACES[r.schema], r.relkind, cols, None))
    return _SYSTEM_RELATIONS


def _depend(classid: int, objid: int, refclassid: int, refobjid: int, refobjsubid: int,
            deptype: str) -> dict:
    return {"classid": classid, "objid": objid, "objsubid": 0, "refclassid": refclassid,
            "refobjid": refobjid, "refobjsubid": refobjsubid, "deptype": deptype}


def _reads(sql: str, column: str) -> bool:
    """Whether a constraint's text names `column` (its conkey)."""
    return re.search(rf'(?<![\w"]){re.escape(cn.quote_ident(column))}(?![\w"])', sql) is not None


def _raw(setting, value) -> str:
    if setting.kind is reg.Kind.BOOL:
        return "on" if value else "off"
    return str(value)


def _array_item(text: str) -> str:
    return text if text and all(c.isalnum() or c == "_" for c in text) else \
        '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _peer(peer: str | None) -> tuple[str | None, int]:
    if not peer or ":" not in peer:
        return None, -1
    host, _, port = peer.rpartition(":")
    return host, int(port) if port.isdigit() else -1


def _column_type_info(t: types.SqlType, tid: int) -> dict:
    """information_schema.columns' data_type and its length, precision and scale."""
    k = t.kind
    data_type = {Kind.VARCHAR: "character varying", Kind.CHAR: "character",
                 Kind.NUMERIC: "numeric", Kind.NAME: "name", Kind.CHAR1: '"char"',
                 Kind.OID: "oid"}.get(k)
    if data_type is None:
        if (k in types.ARRAY_KINDS or k is Kind.ARRAY) and tid not in (22, 30):
            data_type = "ARRAY"
        elif k in types.CATALOG_KINDS or t.is_array:
            data_type = "USER-DEFINED" if tid in (22, 30) else cn.TYPE_NAMES.get(tid, k.value)
        else:
            data_type = k.value
    out = {"data_type": data_type}
    if k in (Kind.VARCHAR, Kind.CHAR):
        out["character_maximum_length"] = t.length
        if t.length is not None:
            out["character_octet_length"] = t.length * 4
        else:
            out["character_octet_length"] = 1073741824
    elif k is Kind.TEXT:
        out["character_octet_length"] = 1073741824
    if t.is_integer or t.is_float:
        out["numeric_precision"] = {Kind.INT2: 16, Kind.INT4: 32, Kind.INT8: 64,
                                    Kind.FLOAT4: 24, Kind.FLOAT8: 53}[k]
        out["numeric_precision_radix"] = 2
        if t.is_integer:
            out["numeric_scale"] = 0
    elif k is Kind.NUMERIC and t.precision is not None and tid == 1700:
        out["numeric_precision"], out["numeric_scale"] = t.precision, t.scale
        out["numeric_precision_radix"] = 10
    elif k is Kind.NUMERIC:
        out["numeric_precision_radix"] = 10
    if k in (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIME, Kind.TIMETZ):
        out["datetime_precision"] = 0 if k is Kind.DATE else (
            6 if t.precision is None else t.precision)
    if k is Kind.INTERVAL:
        out["datetime_precision"] = 6 if t.precision is None else t.precision
    if k in (Kind.TEXT, Kind.VARCHAR, Kind.CHAR, Kind.NAME):
        out["collation_name"] = None
    return out

