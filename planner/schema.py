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


@dataclass(frozen=True, slots=True)
class CheckDef:
    """A CHECK constraint: its name, its expression as pg_get_constraintdef shows it inside
    CHECK (...), and that expression bound over the table's columns (a planner.expr.Expr,
    evaluated over batches in the table's column order: segment/check_constraints.py)."""

    name: str
    sql: str
    expr: object = None


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """Per-column statistics kept by ANALYZE (and roughly by loads)."""

    null_frac: float = 0.0
    distinct: float | None = None
    min: object = None
    max: object = None


@dataclass(frozen=True, slots=True)
class TableStats:
    rows: int = 0
    columns: dict[str, ColumnStats] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TableDef:
    id: int
    name: str
    columns: tuple[ColumnDef, ...]
    policy: DistPolicy
    stats: TableStats = TableStats()
    checks: tuple[CheckDef, ...] = ()

    def column_index(self, name: str) -> int | None:
        for i, c in enumerate(self.columns):
            if c.name == name:
                return i
        return None

    def arrow_schema(self) -> pa.Schema:
        """The physical schema of the table's chunks (see SqlType.arrow_type)."""
        return pa.schema([pa.field(c.name, c.type.arrow_type(), nullable=not c.not_null)
                          for c in self.columns])

    def key_scales(self) -> list[int | None]:
        """Scales of the distribution key columns for the hash (scaled-int numerics)."""
        return [self.columns[k].type.scale if self.columns[k].type.is_scaled_int else None
                for k in self.policy.keys]


# --- table names -------------------------------------------------------------------------
PUBLIC = "public"            # the one schema that holds tables (CREATE SCHEMA: future work)
PG_CATALOG = "pg_catalog"    # exists, is searched first, holds the system catalog
INFORMATION_SCHEMA = "information_schema"  # exists, holds the SQL standard's views
SCHEMAS = frozenset({PUBLIC, PG_CATALOG, INFORMATION_SCHEMA})


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
    """The tables a statement can see. `get_table` looks an unqualified name up (through
    the search path); `lookup`, when a view has it, resolves a qualified RelationName
    (raising 0A000 for another database) and returns None for a table that is not there."""

    def get_table(self, name: str) -> TableDef | None: ...


def lookup_relation(catalog: CatalogView, rel: RelationName) -> TableDef | None:
    lookup = getattr(catalog, "lookup", None)
    if lookup is not None:
        return lookup(rel)
    if rel.catalog is not None or rel.schema not in (None, PUBLIC):
        return None  # a plain view holds public's tables only
    return catalog.get_table(rel.name)
