"""A table's indexes as PostgreSQL 15's catalog shows them (pg_class relkind 'i',
pg_index, pg_indexes, pg_get_indexdef) and its PRIMARY KEY and UNIQUE constraints (pg_constraint
contype 'p'/'u', pg_get_constraintdef).

Each key is enforced by the segments (planner/unique_keys.py), and PostgreSQL shows it twice:
as a constraint and as the unique btree index of the same name behind it (conindid). The
indexes CREATE INDEX records (planner/schema.py IndexDef) have no structure in raympp, but
the catalog shows them as PostgreSQL does, btree.

Oids, stable while the table lives and unique: a CREATE INDEX index has 16384 + its id (ids
come from the tables' counter); a key's index and constraint have ranges of their own
(in the upper halves of the row types' and the CHECK constraints' ranges:
coordinator/system_catalog.py), the table's id times 1000 plus the key's position.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner import catalog_names as cn
from planner import errors
from planner.schema import IndexDef, TableDef, UniqueKey

BTREE_AM_OID = 403
# Where keys' indexes and constraints sit inside the ranges of coordinator/system_catalog.py.
KEY_INDEX_OFFSET = (1 << 30) + (1 << 29)
KEY_CONSTRAINT_OFFSET = (2 << 30) + (1 << 29)

# The default btree operator class (pg_opclass oid) of each column type, as PostgreSQL 15's.
OPCLASS = {16: 10003, 17: 10006, 18: 10007, 19: 10028, 20: 3124, 21: 1979, 23: 1978,
           25: 3126, 26: 1981, 700: 10012, 701: 3123, 869: 10015, 1042: 10004, 1043: 3126,
           1082: 3122, 1083: 10038, 1114: 3128, 1184: 3127, 1186: 10022, 1266: 10041,
           1700: 3125, 2950: 10065, 3802: 10088}
ARRAY_OPCLASS = 10000
# The collation an index column of a collatable type has (default; name's is "C").
_COLLATION = {25: 100, 1042: 100, 1043: 100, 19: 950}


@dataclass(frozen=True)
class Index:
    """One index of a table as the catalog shows it. `key`: the constraint behind it."""

    oid: int
    name: str
    table: TableDef
    columns: tuple[int, ...]  # positions in the table
    key: UniqueKey | None = None
    comment: str | None = None

    @property
    def unique(self) -> bool:
        return self.key is not None

    @property
    def primary(self) -> bool:
        return self.key is not None and self.key.primary


def key_index_oid(t: TableDef, j: int) -> int:
    return cn.FIRST_USER_OID + KEY_INDEX_OFFSET + t.id * 1000 + j


def key_constraint_oid(t: TableDef, j: int) -> int:
    return cn.FIRST_USER_OID + KEY_CONSTRAINT_OFFSET + t.id * 1000 + j


def index_oid(i: IndexDef) -> int:
    return cn.FIRST_USER_OID + i.id


def indexes(t: TableDef) -> list[Index]:
    """The table's indexes: its keys' (PRIMARY KEY first), then CREATE INDEX's."""
    out = [Index(key_index_oid(t, j), k.name, t, k.columns, k, k.index_comment)
           for j, k in enumerate(t.unique, 1)]
    out += [Index(index_oid(i), i.name, t, i.columns, None, i.comment) for i in t.indexes]
    return out


def key_indexes(t: TableDef) -> list[tuple[int, Index]]:
    """(the key's position from 1, its index) of each PRIMARY KEY and UNIQUE constraint."""
    return list(enumerate(indexes(t)[:len(t.unique)], 1))


def opclass(type_oid: int, is_array: bool) -> int:
    """The default btree operator class of a column type; 42704 as PostgreSQL for a type
    without one (json)."""
    if is_array:
        return ARRAY_OPCLASS
    found = OPCLASS.get(type_oid)
    if found is None:
        name = cn.TYPE_NAMES.get(type_oid, str(type_oid))
        raise errors.QueryError(
            f'data type {name} has no default operator class for access method "btree"',
            "42704", hint="You must specify an operator class for the index or define a "
                          "default operator class for the data type.")
    return found


def _column_names(x: Index) -> list[str]:
    return [cn.quote_ident(x.table.columns[p].name) for p in x.columns]


def indexdef(x: Index, schema: str | None, table: str | None = None) -> str:
    """pg_get_indexdef(oid) and pg_indexes.indexdef: the table qualified by `schema`;
    pretty, the table as `table` (regclass's text of it)."""
    target = table if schema is None else \
        f"{cn.quote_ident(schema)}.{cn.quote_ident(x.table.name)}"
    return (f"CREATE {'UNIQUE ' if x.unique else ''}INDEX {cn.quote_ident(x.name)} ON "
            f"{target} USING btree ({', '.join(_column_names(x))})")


def index_column_defs(x: Index) -> list[tuple[int, str]]:
    """pg_get_indexdef(oid, column, pretty) for each column of the index: its name."""
    return list(enumerate(_column_names(x), 1))


def constraintdef(x: Index) -> str:
    """pg_get_constraintdef of a key's constraint."""
    return f"{'PRIMARY KEY' if x.primary else 'UNIQUE'} ({', '.join(_column_names(x))})"


def pg_index_row(x: Index) -> dict:
    cols = [x.table.columns[p] for p in x.columns]
    return {"indexrelid": x.oid, "indrelid": cn.FIRST_USER_OID + x.table.id,
            "indnatts": len(cols), "indnkeyatts": len(cols), "indisunique": x.unique,
            "indnullsnotdistinct": False, "indisprimary": x.primary,
            "indisexclusion": False, "indimmediate": True, "indisclustered": False,
            "indisvalid": True, "indcheckxmin": False, "indisready": True,
            "indislive": True, "indisreplident": False,
            "indkey": " ".join(str(p + 1) for p in x.columns),
            "indcollation": " ".join(str(_COLLATION.get(c.type.oid, 0)) for c in cols),
            "indclass": " ".join(str(opclass(c.type.oid, c.type.is_array)) for c in cols),
            "indoption": " ".join("0" for _ in cols), "indexprs": None, "indpred": None}
