"""The SqlType a type name in SQL names: `numeric(15,2)`, `varchar(25)`, `int[]`,
`regclass`, `pg_catalog.name`, `_int4`.

`sql_type` reads the DataTypes sqlglot parses; `cast_type` the cast targets it leaves as
an ObjectIdentifier or a user-defined (pg_catalog.x) type, which are the catalog's types
and their arrays; `array_type` an ARRAY DataType. One module for the three because each
reads the others' (an array's element is any type name).
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors, types
from planner import schema as sch
from planner.types import Kind, SqlType

_SQLGLOT_TYPES = {
    "BOOLEAN": types.BOOL, "SMALLINT": types.INT2, "INT": types.INT4, "BIGINT": types.INT8,
    "FLOAT": types.FLOAT4, "DOUBLE": types.FLOAT8, "TEXT": types.TEXT, "DATE": types.DATE,
    "TIMESTAMP": types.TIMESTAMP, "TIMESTAMPTZ": types.TIMESTAMPTZ,
    "INTERVAL": types.INTERVAL, "TIME": types.TIME, "TIMETZ": types.TIMETZ, "TINYINT": types.INT2,
    "SERIAL": types.INT4,
    "BIGSERIAL": types.INT8, "SMALLSERIAL": types.INT2,
    "JSON": types.JSON, "JSONB": types.JSONB, "VARBINARY": types.BYTEA, "UUID": types.UUID,
}


_PRECISION = {"TIME": "time", "TIMETZ": "time", "TIMESTAMP": "timestamp",
              "TIMESTAMPTZ": "timestamp", "INTERVAL": "interval"}


def sql_type(dt: exp.DataType) -> types.SqlType:
    """The SqlType a sqlglot DataType names (`numeric(15,2)`, `varchar(25)`, ...)."""
    if isinstance(dt, exp.ObjectIdentifier):  # oid, regclass, ...: sqlglot's own node
        raise errors.FeatureNotSupported(f"type {str(dt.this).lower()} is not supported")
    name = dt.this.name
    args = tuple(int(p.this.this) for p in dt.expressions
                 if isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal))
    if name in ("DECIMAL", "NUMERIC", "BIGDECIMAL"):
        return types.from_name("numeric", args)
    if name in ("VARCHAR", "NVARCHAR"):
        return types.varchar(args[0] if args else None)
    if name in ("CHAR", "NCHAR", "BPCHAR"):
        # char alone is char(1); bpchar alone has no length (it neither pads nor cuts)
        return types.char(args[0] if args else (None if name == "BPCHAR" else 1))
    if name in _PRECISION and args:  # time(p) & co.: p fractional digits (6: all of them)
        if args[0] < 0:
            raise errors.InvalidParameterValue(
                f"{_PRECISION[name].upper()}({args[0]}) precision must not be negative")
        kind = _SQLGLOT_TYPES[name].kind
        return SqlType(kind) if args[0] >= 6 else SqlType(kind, precision=args[0])
    if name in _SQLGLOT_TYPES:
        return _SQLGLOT_TYPES[name]
    if name in ("ARRAY", "USERDEFINED"):  # int[], text[], _int4, int2vector
        t = cast_type(dt)
        if t is not None and (t.is_array or name == "ARRAY"):
            return t
    raise errors.FeatureNotSupported(f"type {dt.sql(dialect='postgres')} is not supported")


def cast_type(to) -> SqlType | None:
    """The type of a cast target that sql_type does not read (None: sql_type's)."""
    if isinstance(to, exp.ObjectIdentifier):
        return _named_type(str(to.this).lower(), False)
    if isinstance(to, exp.DataType):
        if to.this == exp.DataType.Type.NAME:
            return types.NAME
        if to.this == exp.DataType.Type.USERDEFINED:
            kind = to.args.get("kind")
            if isinstance(kind, exp.Dot):
                schema = sch.identifier(kind.this) if isinstance(kind.this, exp.Identifier) else ""
                if schema != sch.PG_CATALOG:
                    raise errors.UndefinedObject(
                        f'type "{kind.sql(dialect="postgres")}" does not exist')
                kind = kind.expression
            if isinstance(kind, exp.Identifier):
                if to.expressions:
                    raise errors.FeatureNotSupported(f"type modifiers of {kind.name}")
                return _named_type(kind.name if kind.quoted else kind.name.lower(), kind.quoted)
        if to.this == exp.DataType.Type.ARRAY:
            return array_type(to)
        if to.args.get("nested"):
            raise errors.FeatureNotSupported(f"type {to.sql(dialect='postgres')}")
    return None


_CATALOG_TYPES = {"oid": types.OID, "xid": SqlType(Kind.XID), "name": types.NAME,
                  "regclass": types.REGCLASS, "regtype": types.REGTYPE,
                  "regproc": SqlType(Kind.REGPROC), "regnamespace": SqlType(Kind.REGNAMESPACE),
                  "regrole": SqlType(Kind.REGROLE), "text": types.TEXT,
                  "pg_node_tree": SqlType(Kind.PG_NODE_TREE)}


def _named_type(name: str, quoted: bool) -> SqlType:
    if quoted and name == "char":
        return types.CHAR1
    if name in _CATALOG_TYPES:
        return _CATALOG_TYPES[name]
    if name.startswith("_") and name[1:] in _CATALOG_TYPES:  # _oid, _name: their arrays
        return types.array_of(_CATALOG_TYPES[name[1:]])
    try:
        return types.from_name(name)
    except errors.QueryError:
        raise errors.UndefinedObject(f'type "{name}" does not exist') from None


def array_type(dt: exp.DataType) -> types.SqlType:
    """The type an ARRAY DataType names (`int[]`, `varchar(3)[]`, `oid[]`)."""
    inner = dt.expressions[0] if len(dt.expressions) == 1 else None
    if not isinstance(inner, exp.DataType):
        raise errors.FeatureNotSupported(f"type {dt.sql(dialect='postgres')}")
    if inner.this == exp.DataType.Type.ARRAY:
        raise errors.FeatureNotSupported("multidimensional arrays")
    element = cast_type(inner) or sql_type(inner)
    if element.is_array:
        raise errors.FeatureNotSupported("multidimensional arrays")
    return types.array_of(element)
