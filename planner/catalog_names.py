"""The names and oids of the catalog's objects, as the statement sees them.

The fixed oids of PostgreSQL's built-in schemas, roles and types; the names the reg* types
print and read (regclass, regtype, regproc, regnamespace, regrole) with PostgreSQL's input
syntax and errors; the relations and roles of the session's catalog (through
session_info's `CatalogContext`, or the built-ins alone outside a session). Values and
casts of the catalog types (catalog_types), the row-by-row functions (row_functions) and
the system relations (system_tables) all read names here; this module reads no other
part of the planner, so each of them can.
"""

from __future__ import annotations

import re

from planner import errors, system_data
from planner import schema as sch
from planner.session_info import catalog_context
from planner.types import Kind

PG_CATALOG_OID = sch.PG_CATALOG_OID
PUBLIC_OID = sch.PUBLIC_OID
INFORMATION_SCHEMA = sch.INFORMATION_SCHEMA
INFORMATION_SCHEMA_OID = sch.INFORMATION_SCHEMA_OID  # its oid in PostgreSQL 15
FIRST_USER_OID = 16384              # FirstNormalObjectId: table oid = 16384 + table id
DATABASE_OID = 5                    # the database's oid (PostgreSQL's "postgres")
BOOTSTRAP_ROLE_OID = 10
HEAP_AM_OID = 2
NAMESPACES = {n.name: n.oid for n in sch.BUILTIN_NAMESPACES}  # the built-in schemas


# --- type names -------------------------------------------------------------------------------
TYPE_ROWS = {int(r[0]): dict(zip(system_data.TYPE_COLUMNS, r)) for r in system_data.TYPES}
# PostgreSQL's format_type() names with typmod NULL (bpchar is "character" then).
TYPE_NAMES = {oid: r["typname"] for oid, r in TYPE_ROWS.items()}
# The regtype spelling (format_type's with no typmod) of each built-in type.
REGTYPE_NAMES: dict[int, str] = {}
for _oid, _r in TYPE_ROWS.items():
    _name = {16: "boolean", 18: '"char"', 20: "bigint", 21: "smallint", 23: "integer",
             700: "real", 701: "double precision", 1042: "character",
             1043: "character varying", 1083: "time without time zone",
             1114: "timestamp without time zone", 1184: "timestamp with time zone",
             1266: "time with time zone"}.get(_oid, _r["typname"])
    REGTYPE_NAMES[_oid] = _name
for _oid, _r in TYPE_ROWS.items():  # arrays: the element's name and []
    if _r["typcategory"] == "A" and _r["typelem"] not in (None, "0") \
            and _r["typname"].startswith("_"):
        REGTYPE_NAMES[_oid] = REGTYPE_NAMES[int(_r["typelem"])] + "[]"
TYPE_OID_BY_NAME = {}
for _oid, _r in TYPE_ROWS.items():
    TYPE_OID_BY_NAME[_r["typname"]] = _oid
    TYPE_OID_BY_NAME[REGTYPE_NAMES[_oid]] = _oid
TYPE_OID_BY_NAME.update({"int": 23, "decimal": 1700, "float": 701, "char": 1042,
                         "timestamptz": 1184, "varchar": 1043, "bool": 16})


# --- the catalog as the statement sees it ------------------------------------------------
def _ctx():
    return catalog_context()


def search_path() -> list[str]:
    ctx = _ctx()
    return ctx.search_path() if ctx is not None else [sch.PG_CATALOG, sch.PUBLIC]


def namespaces() -> dict[str, int]:
    """name -> oid of every schema the statement sees (the built-in ones outside a
    session)."""
    ctx = _ctx()
    return dict(ctx.namespaces()) if ctx is not None else dict(NAMESPACES)


def relations() -> list[tuple[int, str, str]]:
    ctx = _ctx()
    if ctx is not None:
        return ctx.relations()
    return [(oid, schema, name) for (schema, name), (oid, _kind, _cols)
            in system_data.RELATIONS.items()]


def quote_ident(name: str) -> str:
    """The name as PostgreSQL's quote_identifier writes it (regclass output, quote_ident(),
    format's %I, search_path): bare when it is lower case letters, digits and underscores
    and no keyword but an unreserved one, else double-quoted."""
    if re.fullmatch(r"[a-z_][a-z0-9_]*", name) and name not in _QUOTED_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


_QUOTED_KEYWORDS = frozenset(
    "all analyse analyze and any array as asc asymmetric both case cast check collate column "
    "constraint create current_catalog current_date current_role current_time "
    "current_timestamp current_user default deferrable desc distinct do else end except "
    "false fetch for foreign from grant group having in initially intersect into lateral "
    "leading limit localtime localtimestamp not null offset on only or order placing "
    "primary references returning select session_user some symmetric table then to "
    "trailing true union unique user using variadic when where window with "
    # the column-name and type/function-name keywords, which quote_identifier quotes too
    "authorization between bigint binary bit boolean char character coalesce collation "
    "concurrently cross current_schema dec decimal exists extract float freeze full greatest "
    "grouping ilike inner inout int integer interval is isnull join least left like national "
    "natural nchar none normalize notnull nullif numeric out outer overlaps overlay position "
    "precision real right row setof similar smallint substring tablesample time timestamp "
    "treat trim values varchar verbose xmlattributes xmlconcat xmlelement xmlexists xmlforest "
    "xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable".split())


def relation_names() -> dict[int, str]:
    """oid -> the name regclass prints: qualified unless the search path finds it."""
    rels = relations()
    path = search_path()
    first: dict[str, int] = {}
    for schema in path:
        for oid, nsp, name in rels:
            if nsp == schema and name not in first:
                first[name] = oid
    return {oid: quote_ident(name) if first.get(name) == oid
            else f"{quote_ident(nsp)}.{quote_ident(name)}" for oid, nsp, name in rels}


def visible_relations() -> set[int]:
    path = search_path()
    first: dict[str, int] = {}
    for schema in path:
        for oid, nsp, name in relations():
            if nsp == schema and name not in first:
                first[name] = oid
    return set(first.values())


def role_names() -> dict[int, str]:
    ctx = _ctx()
    return dict(ctx.roles()) if ctx is not None else {BOOTSTRAP_ROLE_OID: "raympp"}


PROC_ROWS = [dict(zip(system_data.PROC_COLUMNS, r)) for r in system_data.PROCS]
PROC_NAMES = {int(r["oid"]): r["proname"] for r in PROC_ROWS}
# regproc names: pg_proc's functions and the type I/O functions pg_type's columns name.
REGPROC_NAMES = {**system_data.TYPE_IO_PROCS, **PROC_NAMES}


def reg_names(kind: Kind) -> dict[int, str]:
    """oid -> printed name for a reg* type."""
    if kind is Kind.REGCLASS:
        return relation_names()
    if kind is Kind.REGTYPE:
        return dict(REGTYPE_NAMES)
    if kind is Kind.REGPROC:
        return dict(REGPROC_NAMES)
    if kind is Kind.REGNAMESPACE:
        return {oid: quote_ident(name) for name, oid in namespaces().items()}
    return role_names()


def _split_name(text: str) -> list[str]:
    """A possibly qualified, possibly quoted name as PostgreSQL's stringToQualifiedNameList
    (SplitIdentifierString: whitespace around the dots is allowed)."""
    parts, i, s = [], 0, text
    n = len(s)

    def skip(j: int) -> int:
        while j < n and s[j].isspace():
            j += 1
        return j

    i = skip(i)
    if i == n:
        raise errors.SyntaxError_("invalid name syntax")
    while True:
        if s[i] == '"':
            j, out = i + 1, ""
            while True:
                k = s.find('"', j)
                if k < 0:
                    raise errors.SyntaxError_("invalid name syntax")
                if s[k + 1:k + 2] == '"':
                    out += s[j:k] + '"'
                    j = k + 2
                    continue
                out += s[j:k]
                i = k + 1
                break
            if not out:
                raise errors.SyntaxError_("invalid name syntax")
            parts.append(out)
        else:
            j = i
            while j < n and s[j] != "." and not s[j].isspace():
                j += 1
            if j == i:
                raise errors.SyntaxError_("invalid name syntax")
            parts.append(s[i:j].lower())
            i = j
        i = skip(i)
        if i < n and s[i] == ".":
            i = skip(i + 1)
            if i == n:
                raise errors.SyntaxError_("invalid name syntax")
            continue
        if i != n:
            raise errors.SyntaxError_("invalid name syntax")
        return parts


def reg_oid(kind: Kind, text: str) -> int:
    """The oid a reg* input names (a number is taken as the oid), or PostgreSQL's error."""
    t = text.strip()
    if t.isdigit():
        return int(t)
    if kind is Kind.REGTYPE:
        key = re.sub(r"\s*\(.*\)\s*$", "", " ".join(t.lower().split()))
        key = key[len("pg_catalog."):] if key.startswith("pg_catalog.") else key
        if t.strip() == '"char"' or key == 'pg_catalog."char"':
            return 18
        oid = TYPE_OID_BY_NAME.get(key.strip('"'))
        if oid is None:
            raise errors.UndefinedObject(f'type "{t}" does not exist')
        return oid
    parts = _split_name(t)
    if kind is Kind.REGCLASS:
        if len(parts) > 3:
            raise errors.SyntaxError_(f"improper relation name (too many dotted names): {t}")
        name, schema = parts[-1], parts[-2] if len(parts) > 1 else None
        rels = relations()
        if schema is not None:
            hit = [oid for oid, nsp, n in rels if nsp == schema and n == name]
        else:
            hit = []
            for s in search_path():
                hit = [oid for oid, nsp, n in rels if nsp == s and n == name]
                if hit:
                    break
        if not hit:
            shown = f"{schema}.{name}" if schema else name
            raise errors.UndefinedTable(f'relation "{shown}" does not exist')
        return hit[0]
    name = parts[-1]
    if kind is Kind.REGNAMESPACE:
        known = namespaces()
        if name not in known:
            raise errors.QueryError(f'schema "{name}" does not exist', "3F000")
        return known[name]
    if kind is Kind.REGROLE:
        hit = [oid for oid, n in role_names().items() if n == name]
        if not hit:
            raise errors.UndefinedObject(f'role "{name}" does not exist')
        return hit[0]
    hit = [oid for oid, n in REGPROC_NAMES.items() if n == name]
    if not hit:
        raise errors.UndefinedFunction(f'function "{t}" does not exist')
    if len(hit) > 1:
        raise errors.QueryError(f'more than one function named "{t}"', "42725")
    return hit[0]


