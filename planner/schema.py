"""Table definitions as the planner sees them: columns, distribution policy, statistics.

The coordinator's catalog persists these; the planner only reads them through the
`CatalogView` protocol, so planning needs no database or Ray.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

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


@dataclass(frozen=True, slots=True)
class ColumnDef:
    name: str
    type: SqlType
    not_null: bool = False


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


class CatalogView(Protocol):
    def get_table(self, name: str) -> TableDef | None: ...
