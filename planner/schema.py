"""Table definitions as the planner sees them: columns, distribution policy, statistics.

The coordinator's catalog persists these; the planner only reads them through the
`CatalogView` protocol, so planning needs no database or Ray.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa
from sqlglot import exp

from planner import errors
from planner import types
from planner.types import SqlType


class DistKind(enum.Enum):
    HASHED = "hashed"          # DISTRIBUTED BY (cols)
    RANDOM = "random"          # DISTRIBUTED RANDOMLY
    REPLICATED = "replicated"  # DISTRIBUTED REPLICATED


@dataclass(frozen=True, slots=True)
class DistPolicy:
    kind: DistKind
    keys: tuple[int, ...] = ()  # column positions, for HASHED

    def describe(self, columns: tuple["ColumnDef", ...]) -> str:
        if self.kind is DistKind.HASHED:
            return f"DISTRIBUTED BY ({', '.join(columns[k].name for k in self.keys)})"
        return f"DISTRIBUTED {self.kind.name}" if self.kind is DistKind.REPLICATED \
            else "DISTRIBUTED RANDOMLY"


class Identity(enum.Enum):
    """GENERATED ALWAYS / BY DEFAULT AS IDENTITY (pg_attribute.attidentity)."""

    NONE = ""
    ALWAYS = "a"
    BY_DEFAULT = "d"


@dataclass(frozen=True, slots=True)
class ColumnDef:
    """A column. `default`: its DEFAULT expression as pg_get_expr shows it (SQL text,
    bound where a statement uses it: planner/defaults.py); an identity column's default
    is its sequence's nextval and `default` stays None, as in PostgreSQL's catalog."""

    name: str
    type: SqlType
    not_null: bool = False
    default: str | None = None
    identity: Identity = Identity.NONE
    comment: str | None = None  # COMMENT ON COLUMN (pg_description, objsubid = attnum)


@dataclass(frozen=True, slots=True)
class CheckDef:
    """A CHECK constraint: its name, its expression as pg_get_constraintdef shows it inside
    CHECK (...), and that expression bound over the table's columns (a planner.expr.Expr,
    evaluated over batches in the table's column order: segment/check_constraints.py)."""

    name: str
    sql: str
    expr: object = None
    comment: str | None = None  # COMMENT ON CONSTRAINT


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """Per-column statistics kept by ANALYZE (and roughly by loads). `common`: the most
    common values and the fraction of all rows each holds, most common first
    (PostgreSQL's most_common_vals / most_common_freqs), as physical values like the
    bounds (integers, days, microseconds, strings)."""

    null_frac: float = 0.0
    distinct: float | None = None
    min: object = None
    max: object = None
    common: tuple[tuple[object, float], ...] = ()

    def __post_init__(self):
        # (read back from the catalog's JSON as lists)
        if self.common and not isinstance(self.common[0], tuple):
            object.__setattr__(self, "common", tuple(tuple(c) for c in self.common))


@dataclass(frozen=True, slots=True)
class TableStats:
    rows: int = 0
    columns: dict[str, ColumnStats] = field(default_factory=dict)


def column_index(columns: tuple[ColumnDef, ...], name: str) -> int | None:
    """The position of column `name` among `columns` (a table's or a view's)."""
    return next((i for i, c in enumerate(columns) if c.name == name), None)


@dataclass(frozen=True, slots=True)
class UniqueKey:
    """A PRIMARY KEY or UNIQUE constraint (planner/unique_keys.py): its name, the column
    positions it covers, and whether it is the primary key. PostgreSQL shows it as a
    constraint and as the unique index of the same name that enforces it, each with a
    comment of its own (COMMENT ON CONSTRAINT, COMMENT ON INDEX)."""

    name: str
    columns: tuple[int, ...]
    primary: bool = False
    comment: str | None = None
    index_comment: str | None = None


@dataclass(frozen=True, slots=True)
class IndexDef:
    """An index CREATE INDEX recorded (planner/index_statement.py): raympp builds no index
    structure (scans skip chunks by their min/max), so this is what the catalog shows of
    it: its id (its oid is FIRST_USER_OID + id, from the tables' counter), name, the
    column positions it covers and its comment."""

    id: int
    name: str
    columns: tuple[int, ...]
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class TableDef:
    """A user table. `namespace` is the oid of its schema (public: 2200): a schema's
    rename changes no table."""

    id: int
    name: str
    columns: tuple[ColumnDef, ...]
    policy: DistPolicy
    stats: TableStats = TableStats()
    namespace: int = 2200  # PUBLIC_OID (below)
    unique: tuple["UniqueKey", ...] = ()  # PRIMARY KEY first, then UNIQUE keys
    checks: tuple[CheckDef, ...] = ()
    indexes: tuple[IndexDef, ...] = ()  # CREATE INDEX's, oldest first
    comment: str | None = None  # COMMENT ON TABLE
    # The segments its rows are on: the first `numsegments` of the cluster (Greenplum's
    # gp_distribution_policy.numsegments). Fewer than the cluster has while an expansion
    # has not moved the table yet; 0 in a catalog from before expansions (all of them).
    numsegments: int = 0

    def segment_count(self, n_segments: int) -> int:
        """The number of segments the table's rows are on in a cluster of `n_segments`
        (fewer while an expansion has not moved it; a table of a catalog from before
        expansions, numsegments 0: all)."""
        return min(self.numsegments or n_segments, n_segments)

    def index_names(self) -> list[str]:
        """The names this table's indexes take in its schema's relation namespace: its
        keys' (each is a unique index) and CREATE INDEX's."""
        return [k.name for k in self.unique] + [i.name for i in self.indexes]

    @property
    def key(self) -> tuple[int, str]:
        """What identifies the table by name: (schema oid, name)."""
        return (self.namespace, self.name)

    def column_index(self, name: str) -> int | None:
        return column_index(self.columns, name)

    def arrow_schema(self) -> pa.Schema:
        """The physical schema of the table's chunks (see SqlType.arrow_type)."""
        return pa.schema([pa.field(c.name, c.type.arrow_type(), nullable=not c.not_null)
                          for c in self.columns])

    def key_scales(self) -> list[int | None]:
        """Scales of the distribution key columns for the hash (scaled-int numerics)."""
        return [self.columns[k].type.scale if self.columns[k].type.is_scaled_int else None
                for k in self.policy.keys]

    def column(self, position: int) -> ColumnDef:
        """The column at a Scan position: a table column, or a system column (negative)."""
        return self.columns[position] if position >= 0 else SYSTEM_COLUMNS[position]


# System columns a Scan can read besides the table's own (negative positions). They are
# internal: DELETE and UPDATE read them for their target table (planner/modify.py) and no
# name a user can write reaches them ("\0" cannot occur in a query's text).
SEGMENT_ID = -1  # the segment the row is stored on (int4)
ROW_ID = -2      # where on its segment: chunk number << 32 | position in the chunk (int8)
# The name a query reads SEGMENT_ID by (Greenplum's system column), in any table that has
# no column of that name itself.
SEGMENT_ID_COLUMN = "gp_segment_id"
# The sqlglot `meta` key that marks DELETE's or UPDATE's target table in the query that
# finds its rows: the binder gives that relation the system columns.
MODIFY_TARGET = "raympp_modify_target"
SYSTEM_COLUMNS = {SEGMENT_ID: ColumnDef("\0segment", types.INT4, True),
                  ROW_ID: ColumnDef("\0row", types.INT8, True)}


@dataclass(frozen=True, slots=True)
class ViewDef:
    """A view (CREATE VIEW): a query bound anew wherever the view is read, as a subquery
    with the view's columns (planner/view_expand.py).

    `query` is the AS query as written; `columns` are the view's columns (names and types)
    fixed at creation, as PostgreSQL fixes them (a `SELECT *` keeps the columns it had);
    `query_names` the query's own output names then (the view's columns may be renamed by
    a column list), by which its columns are picked when the query yields more columns
    later (a view it reads was replaced with columns added). `search_path` is the one its
    names were resolved through at creation (they resolve the same way each time), and
    `depends` the ids of the tables and views it reads (DROP refuses to drop them, or
    drops the view with CASCADE). `namespace` is the oid of its schema, as a table's.
    `definition` is the query as sqlglot normalises it
    (pg_views.definition, pg_get_viewdef)."""

    id: int
    name: str
    columns: tuple[ColumnDef, ...]
    query: str
    query_names: tuple[str, ...]
    search_path: tuple[str, ...]
    depends: tuple[int, ...]
    definition: str
    namespace: int = 2200  # PUBLIC_OID (below)
    comment: str | None = None  # COMMENT ON VIEW

    @property
    def key(self) -> tuple[int, str]:
        """What identifies the view by name: (schema oid, name), shared with tables."""
        return (self.namespace, self.name)

    def column_index(self, name: str) -> int | None:
        return column_index(self.columns, name)


Relation = TableDef | ViewDef  # what a (schema, name) holds: tables and views share names


# --- schemas and table names -------------------------------------------------------------
PUBLIC = "public"            # the schema tables go to by default
PG_CATALOG = "pg_catalog"    # exists, is searched first, holds the system catalog
INFORMATION_SCHEMA = "information_schema"  # exists, holds the SQL standard's views
PUBLIC_OID = 2200            # PostgreSQL 15's oids of its built-in schemas
PG_CATALOG_OID = 11
INFORMATION_SCHEMA_OID = 13207
BOOTSTRAP_ROLE_OID = 10
# The schemas that hold the system catalog: no user table is created or dropped there.
SYSTEM_SCHEMAS = frozenset({PG_CATALOG, INFORMATION_SCHEMA})


@dataclass(frozen=True, slots=True)
class Namespace:
    """A schema (pg_namespace): its oid, name and owner (a role oid)."""

    oid: int
    name: str
    owner: int = BOOTSTRAP_ROLE_OID
    # COMMENT ON SCHEMA; not part of what the schema is (public is public, whatever it says)
    comment: str | None = field(default=None, compare=False)


# The schemas every database has, as PostgreSQL 15's initdb makes them.
BUILTIN_NAMESPACES = (Namespace(PG_CATALOG_OID, PG_CATALOG, comment="system catalog schema"),
                      Namespace(PUBLIC_OID, PUBLIC, comment="standard public schema"),
                      Namespace(INFORMATION_SCHEMA_OID, INFORMATION_SCHEMA))


@dataclass(frozen=True, slots=True)
class RelationName:
    """A table name as written, `[[catalog.]schema.]name`, identifiers folded as PostgreSQL
    folds them (unquoted to lower case)."""

    name: str
    schema: str | None = None
    catalog: str | None = None

    def __str__(self) -> str:
        """As PostgreSQL's messages name a relation: `schema.name` when a schema was
        written, else `name` (never the database)."""
        return f"{self.schema}.{self.name}" if self.schema is not None else self.name

    def dotted(self) -> str:
        return ".".join(p for p in (self.catalog, self.schema, self.name) if p is not None)


def identifier(ident) -> str:
    """An identifier's name: as written when quoted, else folded to lower case."""
    return ident.name if getattr(ident, "quoted", False) else ident.name.lower()


def relation_name(table) -> RelationName:
    """The RelationName of a sqlglot `exp.Table` (42601 for more than three parts)."""
    this = table.this
    if isinstance(this, exp.Dot):  # a.b.c.d: sqlglot keeps the surplus parts in a Dot
        parts = [p for p in (table.args.get("catalog"), table.args.get("db")) if p is not None]
        parts += list(this.flatten())
        text = ".".join(identifier(p) if isinstance(p, exp.Identifier) else p.sql()
                        for p in parts)
        raise errors.SyntaxError_(f"improper qualified name (too many dotted names): {text}")
    db, cat = table.args.get("db"), table.args.get("catalog")
    return RelationName(identifier(this), identifier(db) if db is not None else None,
                        identifier(cat) if cat is not None else None)


class CatalogView(Protocol):
    """The tables and views a statement can see. `get_table` looks an unqualified name up
    (through the search path); `lookup`, when a view has it, resolves a qualified
    RelationName (raising 0A000 for another database) and returns None for a relation that
    is not there; `schema_name`, when a view has it, names the schema of a namespace oid;
    `for_view`, when it has it, is the view of the catalog a view's query is bound in
    (names through the search path of the view's creation)."""

    def get_table(self, name: str) -> Relation | None: ...


def schema_of(catalog: CatalogView, table: Relation) -> str:
    """The name of a relation's schema (a plain view holds public's tables only)."""
    name = getattr(catalog, "schema_name", None)
    return name(table.namespace) if name is not None else PUBLIC


def lookup_relation(catalog: CatalogView, rel: RelationName) -> Relation | None:
    lookup = getattr(catalog, "lookup", None)
    if lookup is not None:
        return lookup(rel)
    if rel.catalog is not None or rel.schema not in (None, PUBLIC):
        return None  # a plain view holds public's tables only
    return catalog.get_table(rel.name)
