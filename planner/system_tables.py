"""The system catalog's relations as the planner sees them: pg_catalog's tables and views,
information_schema's views and Greenplum's gp_distribution_policy, with PostgreSQL 15's
oids, column names and types (planner/system_data.py).

A query that names one is bound to a `pl.Values` leaf marked `system` (locus ENTRY: it runs
in the coordinator's slice, never on segments) whose rows the coordinator computes for that
statement from its own catalog (coordinator/system_catalog.py), through the provider that
the session puts in `session_info.SESSION_INFO["system"]` (`CatalogContext`). The rows
of the relations that only describe PostgreSQL's built-ins (pg_type, pg_proc, pg_am,
pg_collation) are here.

Names resolve as PostgreSQL resolves them: `pg_catalog.x` and `information_schema.x`
qualified; an unqualified name through search_path, where pg_catalog is searched first
unless search_path lists it later (so a user table named pg_class in public is found only
with `search_path = public, pg_catalog`).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner import errors, system_data, types
from planner import expr as ex
from planner import plan as pl
from planner import schema as sch
from planner.catalog_names import REGTYPE_NAMES, TYPE_ROWS
from planner.session_info import catalog_context
from planner.types import Kind, SqlType
from planner.values import parse_array

# pg_type oid -> the SqlType of a column of that type
_TYPE_KINDS = {
    16: Kind.BOOL, 17: Kind.BYTEA, 18: Kind.CHAR1, 19: Kind.NAME, 20: Kind.INT8, 21: Kind.INT2,
    22: Kind.INT2VECTOR, 23: Kind.INT4, 24: Kind.REGPROC, 25: Kind.TEXT, 26: Kind.OID,
    28: Kind.XID, 30: Kind.OIDVECTOR, 194: Kind.PG_NODE_TREE, 700: Kind.FLOAT4,
    701: Kind.FLOAT8, 869: Kind.INET, 1034: Kind.ACLITEM_ARRAY, 1043: Kind.VARCHAR, 1082: Kind.DATE, 1114: Kind.TIMESTAMP,
    1184: Kind.TIMESTAMPTZ, 1186: Kind.INTERVAL, 1083: Kind.TIME, 1266: Kind.TIMETZ, 2205: Kind.REGCLASS, 2206: Kind.REGTYPE,
    2277: Kind.ANYARRAY, 4089: Kind.REGNAMESPACE, 4096: Kind.REGROLE,
}


def column_type(typid: int, typmod: int) -> SqlType:
    if typid in types.ELEMENT_BY_ARRAY_OID:  # oid[], text[], name[], "char"[], int2[], ...
        return types.array_of(SqlType(types.ELEMENT_BY_ARRAY_OID[typid]))
    kind = _TYPE_KINDS[typid]
    if kind is Kind.VARCHAR:
        return types.varchar(typmod - 4 if typmod >= 4 else None)
    if kind is Kind.NUMERIC:
        return types.numeric(None, types.NUMERIC_DEFAULT_SCALE)
    return SqlType(kind)


@dataclass(frozen=True)
class SystemRelation:
    schema: str
    name: str
    oid: int
    relkind: str                 # 'r' table, 'v' view
    columns: tuple[sch.ColumnDef, ...]
    type_oids: tuple[tuple[int, int], ...]  # (atttypid, atttypmod) per column, as PostgreSQL

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


RELATIONS: dict[tuple[str, str], SystemRelation] = {
    key: SystemRelation(key[0], key[1], oid, kind,
                        tuple(sch.ColumnDef(n, column_type(t, m), nn) for n, t, m, nn in cols),
                        tuple((t, m) for _n, t, m, _nn in cols))
    for key, (oid, kind, cols) in system_data.RELATIONS.items()}
BY_OID = {r.oid: r for r in RELATIONS.values()}


# --- resolution ---------------------------------------------------------------------------
def find(catalog, rel: sch.RelationName) -> SystemRelation | None:
    """The system relation `rel` names, or None when it names none (a user table, or
    nothing). An unqualified name is a system relation when pg_catalog comes before any
    schema holding a table of that name in the search path."""
    if rel.schema is not None:
        if rel.catalog is not None and hasattr(catalog, "check_database"):
            catalog.check_database(rel)
        return RELATIONS.get((rel.schema, rel.name))
    path = getattr(catalog, "path", None) or [sch.PG_CATALOG, sch.PUBLIC]
    for schema in path:
        found = RELATIONS.get((schema, rel.name))
        if found is not None:
            return found
        if schema not in sch.SYSTEM_SCHEMAS and sch.lookup_relation(
                catalog, sch.RelationName(rel.name, schema)) is not None:
            return None
    return None


_SEQUENCE_COLUMNS = (sch.ColumnDef("last_value", types.INT8, True),
                     sch.ColumnDef("log_cnt", types.INT8, True),
                     sch.ColumnDef("is_called", types.BOOL, True))


def sequence_relation(catalog, rel: sch.RelationName) -> pl.Values | None:
    """A sequence read as a relation (`SELECT last_value FROM s`): its one row (last_value,
    log_cnt, is_called) now, as a Values leaf the coordinator computes; None when `rel`
    names no sequence."""
    lookup = getattr(catalog, "lookup_sequence", None)
    seq = lookup(rel) if lookup is not None else None
    if seq is None:
        return None
    # Read only for a sequence: reading the session's context keeps a plan out of the cache.
    ctx = catalog_context()
    if ctx is None:
        return None
    row = ctx.sequence_row(seq.id)
    fields = tuple(pl.Field(c.name, c.type) for c in _SEQUENCE_COLUMNS)
    return pl.Values((tuple(ex.Literal(v, c.type) for v, c in zip(row, _SEQUENCE_COLUMNS)),),
                     fields, system=f"{sch.PUBLIC}.{seq.name}")


def refuse_write(catalog, rel: sch.RelationName) -> None:
    """0A000 for a write (INSERT, COPY FROM, TRUNCATE, ...) into a system relation."""
    found = find(catalog, rel)
    if found is not None:
        raise errors.FeatureNotSupported(
            f'changing the system catalog ("{found.qualified}") is not supported: it is '
            "read-only, computed from raympp's own catalog")


def bind(relation: SystemRelation) -> pl.Values:
    """The relation's rows for this statement as a Values leaf marked `system`."""
    ctx = catalog_context()
    rows = ctx.rows(relation) if ctx is not None else static_rows(relation)
    fields = tuple(pl.Field(c.name, c.type) for c in relation.columns)
    col_types = [c.type for c in relation.columns]
    # The providers hand out the same row objects for what never changes (the built-ins,
    # the system relations' own rows): their literals are made once, found by identity
    # among those of the relation's last binding (what was not in it is forgotten).
    memo = _LITERALS.get(relation.qualified, {})
    kept: dict[int, tuple] = {}
    lits = []
    for row in rows:
        known = memo.get(id(row))
        if known is None or known[0] is not row:
            known = (row, tuple(ex.Literal(_array_value(v, t) if t.is_array else v, t)
                                for v, t in zip(row, col_types)))
        kept[id(row)] = known  # holds `row`, so its id is not reused while kept
        lits.append(known[1])
    _LITERALS[relation.qualified] = kept
    return pl.Values(tuple(lits), fields, system=relation.qualified)


# relation -> {id(row): (row, its literals)} of the rows its last binding read
_LITERALS: dict[str, dict[int, tuple]] = {}


def _array_value(v, t: SqlType):
    """An array column's value: the providers give arrays as their text form or a list."""
    if isinstance(v, str):
        return parse_array(v, t)
    return tuple(v) if isinstance(v, list) else v


# --- PostgreSQL's own rows ---------------------------------------------------------------
def parse_value(text: str | None, t: SqlType):
    """A catalog value from its PostgreSQL text form (system_data's rows)."""
    if text is None:
        return None
    k = t.kind
    if k is Kind.BOOL:
        return text == "t"
    if t.is_integer or k in (Kind.OID, Kind.XID):
        return int(text)
    if t.is_float:
        return float(text)
    if k in (Kind.REGPROC,) and text == "-":
        return "-"
    return text


def _text_rows(columns: tuple[str, ...], rows, relation: SystemRelation) -> list[tuple]:
    by_name = {c.name: c.type for c in relation.columns}
    order = [columns.index(c.name) for c in relation.columns]
    return [tuple(parse_value(r[i], by_name[columns[i]]) for i in order) for r in rows]


_STATIC: dict[str, list[tuple]] = {}


def static_rows(relation: SystemRelation) -> list[tuple]:
    """The rows of relations that only hold PostgreSQL's built-ins (and [] for others)."""
    key = relation.qualified
    if key not in _STATIC:
        if key == "pg_catalog.pg_type":
            rows = _text_rows(system_data.TYPE_COLUMNS, system_data.TYPES, relation)
        elif key == "pg_catalog.pg_proc":
            rows = _text_rows(system_data.PROC_COLUMNS, system_data.PROCS, relation)
        elif key == "pg_catalog.pg_am":
            rows = [(2, "heap", "heap_tableam_handler", "t"),
                    (403, "btree", "bthandler", "i"), (405, "hash", "hashhandler", "i")]
        elif key == "pg_catalog.pg_collation":
            rows = [(100, "default", 11, 10, "d", True, -1, "", "", None, None),
                    (950, "C", 11, 10, "c", True, -1, "C", "C", None, None),
                    (951, "POSIX", 11, 10, "c", True, -1, "POSIX", "POSIX", None, None)]
        elif key == "pg_catalog.pg_tablespace":
            rows = [(1663, "pg_default", 10, None, None), (1664, "pg_global", 10, None, None)]
        else:
            rows = []
        _STATIC[key] = rows
    return _STATIC[key]


def type_oid(t: SqlType) -> int:
    return t.oid


def format_type(oid: int | None, typmod: int | None) -> str | None:
    """PostgreSQL's format_type(oid, typmod)."""
    if oid is None:
        return None
    if oid == 0:
        return "-"
    if oid not in REGTYPE_NAMES:
        return "???"
    row = TYPE_ROWS[oid]
    if row["typcategory"] == "A" and row["typname"].startswith("_"):
        return format_type(int(row["typelem"]), typmod) + "[]"
    if typmod is None or typmod < 0:
        if oid == 1042 and typmod is not None:
            return "bpchar"
        return REGTYPE_NAMES[oid]
    if oid in (1042, 1043) and typmod >= 4:
        return f"{REGTYPE_NAMES[oid]}({typmod - 4})"
    if oid == 1700 and typmod >= 4:
        p, s = (typmod - 4) >> 16, (typmod - 4) & 0xFFFF
        return f"numeric({p},{s})"
    if oid in (1114, 1184, 1083, 1266) and typmod >= 0:
        base = REGTYPE_NAMES[oid]
        word, rest = base.split(" ", 1)
        return f"{word}({typmod}) {rest}"
    if oid == 1186 and typmod >= 0:  # INTERVAL_TYPMOD(precision, range): full range only
        precision = typmod & 0xFFFF
        return "interval" if precision == 0xFFFF else f"interval({precision})"
    return REGTYPE_NAMES[oid]


def resolve_relation(catalog: sch.CatalogView, table) -> sch.Relation:
    """The table or view an `exp.Table` of a query or INSERT names, or 42P01 as
    PostgreSQL's parserOpenTable says it (`relation "s.t" does not exist`, also for a
    schema that does not exist)."""
    rel = sch.relation_name(table)
    refuse_write(catalog, rel)  # INSERT INTO pg_class: read-only (0A000)
    found = sch.lookup_relation(catalog, rel)
    if found is None:
        lookup_sequence = getattr(catalog, "lookup_sequence", None)
        if lookup_sequence is not None and lookup_sequence(rel) is not None:
            # (a query reads it through sequence_relation: this is INSERT's target)
            raise errors.QueryError(f'cannot change sequence "{rel.name}"', "42809")
        raise errors.UndefinedTable(f'relation "{rel}" does not exist')
    return found
