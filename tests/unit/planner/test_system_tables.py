"""The system catalog's planner side: relation resolution, format_type, the catalog types'
conversions and comparisons, and how catalog queries are planned (on the coordinator)."""

from __future__ import annotations

import pytest

from planner import catalog_names, catalog_types, row_functions
from planner import distribute, errors, statements, system_tables, types
from planner import expr as ex
from planner import plan as pl
from planner.bind import QueryBinder
from planner.locus import LocusKind
from planner.schema import ColumnDef, DistKind, DistPolicy, RelationName, TableDef


class _View:
    """A catalog view with public tables and a search path."""

    def __init__(self, tables, path=("pg_catalog", "public")):
        self.tables = {t.name: t for t in tables}
        self.path = list(path)

    def get_table(self, name):
        return self.tables.get(name) if "public" in self.path else None

    def lookup(self, rel):
        if rel.schema in (None, "public"):
            return self.tables.get(rel.name) if rel.schema or "public" in self.path else None
        return None


def _table(name):
    return TableDef(1, name, (ColumnDef("x", types.INT4),), DistPolicy(DistKind.RANDOM))


def _bind(sql, view=None):
    tree = statements.parse_one(sql)  # as a session parses it (clause guard included)
    return QueryBinder(view or _View([])).bind(tree)


def test_find_follows_the_search_path():
    view = _View([_table("pg_class")])
    assert system_tables.find(view, RelationName("pg_class")).oid == 1259
    assert system_tables.find(view, RelationName("pg_class", "public")) is None
    later = _View([_table("pg_class")], path=("public", "pg_catalog"))
    assert system_tables.find(later, RelationName("pg_class")) is None
    assert system_tables.find(later, RelationName("pg_type")).oid == 1247
    assert system_tables.find(view, RelationName("tables")) is None
    assert system_tables.find(view, RelationName("tables", "information_schema")) is not None


def test_format_type():
    ft = system_tables.format_type
    assert ft(1043, 14) == "character varying(10)"
    assert ft(1042, 7) == "character(3)"
    assert ft(1042, -1) == "bpchar" and ft(1042, None) == "character"
    assert ft(1700, ((12 << 16) | 3) + 4) == "numeric(12,3)" and ft(1700, -1) == "numeric"
    assert ft(1007, -1) == "integer[]" and ft(18, -1) == '"char"'
    assert ft(0, -1) == "-" and ft(123456, -1) == "???" and ft(None, 1) is None


def test_catalog_relation_is_a_coordinator_leaf():
    bq = _bind("SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
               "WHERE n.nspname = 'pg_catalog'")
    leaves = [n for n in pl.walk(bq.node) if isinstance(n, pl.Values)]
    assert {v.system for v in leaves} == {"pg_catalog.pg_class", "pg_catalog.pg_namespace"}
    root = distribute.distribute(bq.node, 2)
    assert not any(isinstance(n, pl.Motion) for n in pl.walk(root))
    assert all(n.locus.kind is LocusKind.ENTRY for n in pl.walk(root))


def test_oid_and_regclass_conversions():
    lit = catalog_types.convert(ex.Literal("pg_class", types.TEXT), types.REGCLASS)
    assert lit == ex.Literal("pg_class", types.REGCLASS)
    assert catalog_types.convert(lit, types.OID) == ex.Literal(1259, types.OID)
    assert catalog_types.convert(ex.Literal(-1, types.INT4), types.OID) == ex.Literal(2**32 - 1, types.OID)
    assert catalog_types.convert(ex.Literal(2**32 - 1, types.OID), types.INT4).value == -1
    assert catalog_types.convert(ex.Literal("int4", types.TEXT), types.REGTYPE).value == "integer"
    with pytest.raises(errors.UndefinedTable):
        catalog_types.convert(ex.Literal("no_such", types.TEXT), types.REGCLASS)
    with pytest.raises(errors.QueryError) as info:
        catalog_types.convert(ex.Literal(True, types.BOOL), types.OID)
    assert info.value.sqlstate == "42846"


def test_reg_names_are_qualified_when_not_visible():
    assert catalog_names.reg_oid(types.Kind.REGCLASS, "pg_catalog.pg_class") == 1259
    assert catalog_names.reg_oid(types.Kind.REGCLASS, '"pg_class"') == 1259
    assert catalog_names.reg_oid(types.Kind.REGCLASS, "16390") == 16390
    names = catalog_names.relation_names()
    tables = system_tables.RELATIONS[("information_schema", "tables")].oid
    assert names[tables] == "information_schema.tables"


def test_comparisons_and_functions_bind():
    bq = _bind("SELECT oid, relname FROM pg_class WHERE oid = 1259 OR oid = 'pg_type'::regclass "
               "OR relname ~ '^pg_a'")
    assert [f.type.kind for f in bq.node.fields] == [types.Kind.OID, types.Kind.NAME]
    bq = _bind("SELECT pg_catalog.format_type(23, -1), pg_typeof(1.5), current_schemas(true)")
    assert bq.names == ("format_type", "pg_typeof", "current_schemas")
    with pytest.raises(errors.FeatureNotSupported):
        _bind("SELECT relacl = relacl::text FROM pg_class")
    with pytest.raises(errors.UndefinedFunction):
        _bind("SELECT 1::oid + 1")


def test_array_items():
    assert row_functions._array_items('{a,"b c",NULL}') == ["a", "b c", None]
    assert row_functions._array_items("{}") == [] and row_functions._array_items("1 3") == ["1", "3"]
    assert row_functions._array_to_string(None, "{a,b}", ",") == "a,b"


def test_quote_ident_quotes_reserved_words_and_upper_case():
    assert [catalog_names.quote_ident(n) for n in ("ab", "select", "Ab", 'a"b', "user")] \
        == ["ab", '"select"', '"Ab"', '"a""b"', '"user"']
