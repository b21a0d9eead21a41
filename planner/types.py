"""SQL types: what the planner reasons about, how each is laid out in Arrow, and its PostgreSQL OID.

One `SqlType` value describes a column everywhere: the catalog stores it, expressions carry
it, pgwire reads its OID and typmod, and segments use `arrow_type()` for the physical layout.

Numeric follows DESIGN.md: numeric(p, s) with p <= 18 is a *scaled int64* in batches (the
value 12.34 of numeric(15,2) is stored as 1234); wider ones are Arrow decimal128(38, s).
An unconstrained numeric keeps each value's display scale: a struct of the value as
decimal128(38, S) and its scale (`dynamic_numeric`; ARCHITECTURE.md "Types").
Conversion to Arrow decimal happens only at the edges (pgwire, COPY).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import pyarrow as pa

from planner import errors


class Kind(enum.Enum):
    BOOL = "boolean"
    INT2 = "smallint"
    INT4 = "integer"
    INT8 = "bigint"
    FLOAT4 = "real"
    FLOAT8 = "double precision"
    NUMERIC = "numeric"
    TEXT = "text"
    VARCHAR = "character varying"
    CHAR = "character"
    DATE = "date"
    TIMESTAMP = "timestamp without time zone"
    TIMESTAMPTZ = "timestamp with time zone"
    INTERVAL = "interval"
    TIME = "time without time zone"  # Arrow time64[us]: microseconds since midnight
    # int64 packing (UTC instant, zone) so that int64 order is PostgreSQL's timetz order
    # (planner/temporal.py TimeTz)
    TIMETZ = "time with time zone"
    # JSON: Arrow strings. json keeps its input text, jsonb PostgreSQL's canonical text
    # (planner/json_values.py); neither is a string kind (no text functions take them).
    JSON = "json"
    JSONB = "jsonb"
    # Binary types (planner/binary_values.py): Arrow binary, bytea its bytes, uuid its 16
    # bytes (binary, not fixed_size_binary(16), so that hashing, sorting, grouping, joins
    # and chunk statistics take it as they take bytea; both order bytewise, as in PG).
    BYTEA = "bytea"
    UUID = "uuid"
    UNKNOWN = "unknown"  # the type of a bare NULL or an untyped parameter
    # --- types of the system catalog (planner/system_tables.py, catalog_functions.py) ---
    OID = "oid"                     # int64 in batches (0 .. 2^32-1)
    XID = "xid"                     # int64 in batches
    NAME = "name"                   # a string (63 bytes in PostgreSQL)
    CHAR1 = '"char"'                # the one-byte "char" of relkind, typtype, ...
    REGCLASS = "regclass"           # reg* hold the name they print as (a string);
    REGTYPE = "regtype"             # they compare as their oid (names are unique)
    REGPROC = "regproc"
    REGNAMESPACE = "regnamespace"
    REGROLE = "regrole"
    PG_NODE_TREE = "pg_node_tree"
    INET = "inet"
    # One-dimensional arrays of a scalar type (`element`), Arrow list<element's layout>
    # (planner/bind_array.py). int2vector and oidvector are arrays of int2 and oid whose
    # subscripts start at 0, as PostgreSQL's.
    ARRAY = "array"
    OIDVECTOR = "oidvector"
    INT2VECTOR = "int2vector"
    # Catalog arrays raympp has no element type for: their text form (a string); no
    # operator takes them (0A000), they print and are NULL or not.
    ANYARRAY = "anyarray"
    ACLITEM_ARRAY = "aclitem[]"
    # Anonymous composite values (ROW(...), information_schema._pg_expandarray's rows):
    # an Arrow struct of `fields`. No column, parameter or key has this type.
    RECORD = "record"


# PostgreSQL type OIDs (pg_type.oid) as drivers expect them.
OIDS = {
    Kind.BOOL: 16, Kind.INT2: 21, Kind.INT4: 23, Kind.INT8: 20, Kind.FLOAT4: 700,
    Kind.FLOAT8: 701, Kind.NUMERIC: 1700, Kind.TEXT: 25, Kind.VARCHAR: 1043,
    Kind.CHAR: 1042, Kind.DATE: 1082, Kind.TIMESTAMP: 1114, Kind.TIMESTAMPTZ: 1184,
    Kind.INTERVAL: 1186, Kind.TIME: 1083, Kind.TIMETZ: 1266, Kind.UNKNOWN: 25, Kind.JSON: 114,
    Kind.JSONB: 3802,
    Kind.OID: 26, Kind.XID: 28, Kind.NAME: 19, Kind.CHAR1: 18, Kind.REGCLASS: 2205,
    Kind.REGTYPE: 2206, Kind.REGPROC: 24, Kind.REGNAMESPACE: 4089, Kind.REGROLE: 4096,
    Kind.PG_NODE_TREE: 194, Kind.INET: 869, Kind.BYTEA: 17, Kind.UUID: 2950, Kind.OIDVECTOR: 30,
    Kind.INT2VECTOR: 22, Kind.ANYARRAY: 2277, Kind.ACLITEM_ARRAY: 1034, Kind.RECORD: 2249,
}
# pg_type.typarray of each element kind: the oid of its array type (PostgreSQL 15's).
ARRAY_OIDS = {
    Kind.BOOL: 1000, Kind.BYTEA: 1001, Kind.CHAR1: 1002, Kind.NAME: 1003, Kind.INT2: 1005,
    Kind.INT2VECTOR: 1006, Kind.INT4: 1007, Kind.REGPROC: 1008, Kind.TEXT: 1009,
    Kind.XID: 1011, Kind.OIDVECTOR: 1013, Kind.CHAR: 1014, Kind.VARCHAR: 1015,
    Kind.INT8: 1016, Kind.FLOAT4: 1021, Kind.FLOAT8: 1022, Kind.OID: 1028, Kind.INET: 1041,
    Kind.TIMESTAMP: 1115, Kind.DATE: 1182, Kind.TIMESTAMPTZ: 1185, Kind.INTERVAL: 1187,
    Kind.TIME: 1183, Kind.TIMETZ: 1270,
    Kind.NUMERIC: 1231, Kind.REGCLASS: 2210, Kind.REGTYPE: 2211, Kind.REGNAMESPACE: 4090,
    Kind.REGROLE: 4097, Kind.JSON: 199, Kind.JSONB: 3807, Kind.UNKNOWN: 1009,
    Kind.RECORD: 2287, Kind.UUID: 2951,
}
ELEMENT_BY_ARRAY_OID = {oid: k for k, oid in ARRAY_OIDS.items()
                        if k not in (Kind.UNKNOWN, Kind.INT2VECTOR, Kind.OIDVECTOR, Kind.TIMETZ)}
# Kinds that can be array elements (anything scalar with a layout of its own; not timetz,
# whose packed int64 the array kernels do not read).
ELEMENT_KINDS = tuple(k for k in ARRAY_OIDS if k not in (Kind.INT2VECTOR, Kind.OIDVECTOR,
                                                        Kind.UNKNOWN, Kind.TIMETZ))
# Catalog types: kinds a client-declared parameter OID does not map to, except oid and
# name (parameters of other catalog types arrive as text, of unknown type).
REG_KINDS = (Kind.REGCLASS, Kind.REGTYPE, Kind.REGPROC, Kind.REGNAMESPACE, Kind.REGROLE)
# Arrays held as their text form (no element type of raympp's).
ARRAY_KINDS = (Kind.ANYARRAY, Kind.ACLITEM_ARRAY)
# Real arrays (Arrow lists); a vector's element is implied by its kind.
LIST_KINDS = (Kind.ARRAY, Kind.INT2VECTOR, Kind.OIDVECTOR)
CATALOG_KINDS = (Kind.OID, Kind.XID, Kind.NAME, Kind.CHAR1, Kind.PG_NODE_TREE,
                 Kind.INET) + REG_KINDS + ARRAY_KINDS
# Kinds that are not plain strings: conversions to and from them are catalog_types'.
SPECIAL = (Kind.OID, Kind.XID, Kind.INET) + REG_KINDS + ARRAY_KINDS
BINARY_KINDS = (Kind.BYTEA, Kind.UUID)
KIND_BY_OID = {oid: kind for kind, oid in OIDS.items()
               if kind is not Kind.UNKNOWN and (kind not in CATALOG_KINDS
                                                 or kind in (Kind.OID, Kind.NAME))}
KIND_BY_OID[705] = Kind.UNKNOWN
KIND_BY_OID.pop(2249, None)  # record parameters: not a type raympp reads
KIND_BY_OID.pop(22, None)  # int2vector and oidvector parameters arrive as text
KIND_BY_OID.pop(30, None)
TYPLEN = {Kind.BOOL: 1, Kind.INT2: 2, Kind.INT4: 4, Kind.INT8: 8, Kind.FLOAT4: 4,
          Kind.FLOAT8: 8, Kind.DATE: 4, Kind.TIMESTAMP: 8, Kind.TIMESTAMPTZ: 8,
          Kind.INTERVAL: 16, Kind.TIME: 8, Kind.TIMETZ: 12, Kind.OID: 4, Kind.XID: 4,
          Kind.NAME: 64, Kind.CHAR1: 1,
          Kind.REGCLASS: 4, Kind.REGTYPE: 4, Kind.REGPROC: 4, Kind.REGNAMESPACE: 4,
          Kind.REGROLE: 4, Kind.UUID: 16}

INTEGER_KINDS = (Kind.INT2, Kind.INT4, Kind.INT8)
FLOAT_KINDS = (Kind.FLOAT4, Kind.FLOAT8)
# name, "char" and pg_node_tree behave as text (PostgreSQL casts them to text implicitly).
STRING_KINDS = (Kind.TEXT, Kind.VARCHAR, Kind.CHAR, Kind.NAME, Kind.CHAR1, Kind.PG_NODE_TREE)
# Kinds with fractional-second precision p < 6 (time(p), timestamp(p), ...): `precision`
PRECISION_KINDS = (Kind.TIME, Kind.TIMETZ, Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.INTERVAL)
MAX_SCALED_PRECISION = 18  # numeric(p, s) with p <= 18 fits a scaled int64
# Unconstrained numerics keep each value's display scale (PostgreSQL's dscale): an Arrow
# struct of the value at a fixed storage scale S (decimal128(38, S)) and the value's own
# scale (int8, <= S). S is NUMERIC_DEFAULT_SCALE for columns and text casts; an
# expression's S bounds the scales its values can have (planner/typing_rules.py).
NUMERIC_DEFAULT_SCALE = 16
DIVISION_SCALE = 24  # S of quotients and averages: select_div_scale gives 16 to 24+ digits
# S of float -> numeric: 15 significant digits of values from 1e-10 to 1e14 fit
FLOAT_NUMERIC_SCALE = 24
NUMERIC_VALUE_FIELD = "value"
NUMERIC_SCALE_FIELD = "dscale"


def dynamic_numeric_arrow(storage_scale: int) -> pa.DataType:
    """The Arrow layout of an unconstrained numeric whose values are held at storage_scale."""
    return pa.struct([(NUMERIC_VALUE_FIELD, pa.decimal128(38, storage_scale)),
                      (NUMERIC_SCALE_FIELD, pa.int8())])


def is_dynamic_arrow(t: pa.DataType) -> bool:
    """Whether an Arrow type is the layout of an unconstrained numeric (value, dscale)."""
    return (pa.types.is_struct(t) and t.num_fields == 2
            and t.field(0).name == NUMERIC_VALUE_FIELD and t.field(1).name == NUMERIC_SCALE_FIELD)


@dataclass(frozen=True, slots=True)
class SqlType:
    """A SQL type. `precision`/`scale` for numeric (`precision` also the fractional
    digits of time(p), timetz(p), timestamp(p), timestamptz(p), interval(p), p < 6), `length` for
    varchar(n)/char(n),
    `element` for an array (Kind.ARRAY) the type of its elements, `fields` for a record
    its (name, type) pairs. `padded` marks a bpchar without a length whose values keep
    the trailing spaces PostgreSQL shows (BPCHAR_PADDED: the common type of CASE, COALESCE,
    UNION, ... over char(n) of other lengths, varchar or text; coercion.common_value);
    other char values are kept without them. `dynamic` marks an unconstrained numeric
    whose values each keep their own display scale (at most `scale`, the storage scale); a
    numeric that is not dynamic has one scale for all its values."""

    kind: Kind
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    element: "SqlType | None" = None
    fields: "tuple[tuple[str, SqlType], ...] | None" = None
    padded: bool = False
    # A constant written with its type ('x'::text): typed, not a quoted constant whose
    # type the context picks (coercion.is_unknown). Equal to the type without it.
    explicit: bool = field(default=False, compare=False)
    dynamic: bool = False

    def __post_init__(self):
        # An array of arrays is internal only: the rows of regexp_matches, unnested by a
        # ProjectSet (planner/regex_rules.py); array_of() gives users none.
        if self.kind is Kind.ARRAY and (self.element is None or self.element.kind
                                        not in ELEMENT_KINDS + (Kind.ARRAY,)):
            raise ValueError(f"no array of {self.element}")
        if self.kind is Kind.NUMERIC:
            if self.scale is None:
                raise ValueError("numeric needs a scale (unconstrained numerics get one at bind time)")
            # PostgreSQL 15 takes precisions 1..1000 and scales -1000..1000; raympp's
            # numerics are 128-bit decimals: at most 38 digits, 0 <= scale <= precision.
            if self.precision is not None and not (1 <= self.precision <= 1000):
                raise errors.InvalidParameterValue(
                    f"NUMERIC precision {self.precision} must be between 1 and 1000")
            if not -1000 <= self.scale <= 1000:
                raise errors.InvalidParameterValue(
                    f"NUMERIC scale {self.scale} must be between -1000 and 1000")
            if self.precision is not None and self.precision > 38:
                raise errors.FeatureNotSupported(
                    f"NUMERIC precision {self.precision} (at most 38 digits are supported)")
            if self.scale < 0 or (self.precision is not None and self.scale > self.precision):
                raise errors.FeatureNotSupported(
                    f"NUMERIC scale {self.scale} outside 0 .. precision {self.precision}")

    # --- properties -------------------------------------------------------------------
    @property
    def oid(self) -> int:
        if self.kind is Kind.ARRAY:
            return ARRAY_OIDS[self.element.kind]
        return OIDS[self.kind]

    @property
    def typlen(self) -> int:
        return TYPLEN.get(self.kind, -1)

    @property
    def is_array(self) -> bool:
        """An array (or int2vector/oidvector): an Arrow list of `elem` values."""
        return self.kind in LIST_KINDS

    @property
    def elem(self) -> "SqlType":
        """The element type of an array or vector."""
        if self.kind is Kind.INT2VECTOR:
            return INT2
        if self.kind is Kind.OIDVECTOR:
            return OID
        return self.element

    @property
    def lower_bound(self) -> int:
        """The first subscript: 1, 0 for int2vector and oidvector."""
        return 0 if self.kind in (Kind.INT2VECTOR, Kind.OIDVECTOR) else 1

    @property
    def typmod(self) -> int:
        if self.kind is Kind.ARRAY:
            return self.element.typmod
        if self.kind is Kind.NUMERIC and self.precision is not None:
            return ((self.precision << 16) | self.scale) + 4
        if self.kind in (Kind.VARCHAR, Kind.CHAR) and self.length is not None:
            return self.length + 4
        if self.kind is Kind.INTERVAL and self.precision is not None:
            return (0x7FFF << 16) | self.precision  # INTERVAL_TYPMOD(p, INTERVAL_FULL_RANGE)
        if self.kind in PRECISION_KINDS and self.precision is not None:
            return self.precision
        return -1

    @property
    def is_integer(self) -> bool:
        return self.kind in INTEGER_KINDS

    @property
    def is_float(self) -> bool:
        return self.kind in FLOAT_KINDS

    @property
    def is_numeric(self) -> bool:
        return self.kind is Kind.NUMERIC

    @property
    def is_number(self) -> bool:
        return self.kind in INTEGER_KINDS or self.kind in FLOAT_KINDS or self.kind is Kind.NUMERIC

    @property
    def is_string(self) -> bool:
        return self.kind in STRING_KINDS

    @property
    def is_temporal(self) -> bool:
        return self.kind in (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ)

    @property
    def is_scaled_int(self) -> bool:
        """True when values are scaled int64 in batches (numeric with p <= 18)."""
        return (self.kind is Kind.NUMERIC and self.precision is not None
                and self.precision <= MAX_SCALED_PRECISION)

    @property
    def is_dynamic(self) -> bool:
        """An unconstrained numeric keeping each value's display scale (see `dynamic`)."""
        return self.dynamic and self.kind is Kind.NUMERIC

    def arrow_type(self) -> pa.DataType:
        """The physical Arrow type of this SQL type inside batches."""
        if self.kind is Kind.NUMERIC:
            if self.dynamic:
                return dynamic_numeric_arrow(self.scale)
            return pa.int64() if self.is_scaled_int else pa.decimal128(38, self.scale)
        if self.kind in LIST_KINDS:
            return pa.list_(self.elem.arrow_type())
        if self.kind is Kind.RECORD:
            return pa.struct([(n, t.arrow_type()) for n, t in self.fields])
        return _ARROW[self.kind]

    def sql(self) -> str:
        """The type as PostgreSQL prints it (format_type)."""
        if self.kind is Kind.ARRAY:
            return self.element.sql() + "[]"
        if self.kind is Kind.NUMERIC:
            if self.precision is None:
                return "numeric"
            return f"numeric({self.precision},{self.scale})"
        if self.kind in (Kind.VARCHAR, Kind.CHAR) and self.length is not None:
            return f"{self.kind.value}({self.length})"
        if self.kind is Kind.INTERVAL and self.precision is not None:
            return f"interval({self.precision})"
        if self.kind in PRECISION_KINDS and self.precision is not None:
            word, zone = self.kind.value.split(" ", 1)  # 'timestamp(3) with time zone'
            return f"{word}({self.precision}) {zone}"
        return self.kind.value

    def base_sql(self) -> str:
        """The type's name without modifiers, as PostgreSQL names argument types in its
        errors (format_type_be): numeric, not numeric(2,1)."""
        if self.kind is Kind.ARRAY:
            return self.element.base_sql() + "[]"
        return self.kind.value

    def __str__(self) -> str:
        return self.sql()


_ARROW = {
    Kind.BOOL: pa.bool_(), Kind.INT2: pa.int16(), Kind.INT4: pa.int32(), Kind.INT8: pa.int64(),
    Kind.FLOAT4: pa.float32(), Kind.FLOAT8: pa.float64(), Kind.TEXT: pa.string(),
    Kind.VARCHAR: pa.string(), Kind.CHAR: pa.string(), Kind.DATE: pa.date32(),
    Kind.TIMESTAMP: pa.timestamp("us"), Kind.TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),
    Kind.INTERVAL: pa.month_day_nano_interval(), Kind.TIME: pa.time64("us"),
    Kind.TIMETZ: pa.int64(),
    Kind.UNKNOWN: pa.null(),
    Kind.JSON: pa.string(), Kind.JSONB: pa.string(),
    Kind.OID: pa.int64(), Kind.XID: pa.int64(), Kind.BYTEA: pa.binary(),
    Kind.UUID: pa.binary(),
    **{k: pa.string() for k in CATALOG_KINDS if k not in (Kind.OID, Kind.XID)},
}

BOOL = SqlType(Kind.BOOL)
INT2 = SqlType(Kind.INT2)
INT4 = SqlType(Kind.INT4)
INT8 = SqlType(Kind.INT8)
FLOAT4 = SqlType(Kind.FLOAT4)
FLOAT8 = SqlType(Kind.FLOAT8)
TEXT = SqlType(Kind.TEXT)
DATE = SqlType(Kind.DATE)
TIMESTAMP = SqlType(Kind.TIMESTAMP)
TIMESTAMPTZ = SqlType(Kind.TIMESTAMPTZ)
INTERVAL = SqlType(Kind.INTERVAL)
TIME = SqlType(Kind.TIME)
TIMETZ = SqlType(Kind.TIMETZ)
UNKNOWN = SqlType(Kind.UNKNOWN)
JSON = SqlType(Kind.JSON)
JSONB = SqlType(Kind.JSONB)
OID = SqlType(Kind.OID)
NAME = SqlType(Kind.NAME)
CHAR1 = SqlType(Kind.CHAR1)
REGCLASS = SqlType(Kind.REGCLASS)
REGTYPE = SqlType(Kind.REGTYPE)
BYTEA = SqlType(Kind.BYTEA)
UUID = SqlType(Kind.UUID)
BPCHAR = SqlType(Kind.CHAR)
TEXT_EXPLICIT = SqlType(Kind.TEXT, explicit=True)
BPCHAR_PADDED = SqlType(Kind.CHAR, padded=True)


def record_of(fields) -> SqlType:
    """The anonymous record type of (name, type) pairs."""
    return SqlType(Kind.RECORD, fields=tuple((n, t) for n, t in fields))


def array_of(t: SqlType) -> SqlType:
    """The array type of element type t (42704 for elements raympp has no arrays of)."""
    if t.kind is Kind.UNKNOWN:
        t = TEXT
    if t.kind is Kind.TIMETZ:
        raise errors.FeatureNotSupported("arrays of time with time zone")
    if t.kind not in ELEMENT_KINDS:
        raise errors.UndefinedObject(f"could not find array type for data type {t}")
    return SqlType(Kind.ARRAY, element=t)


def numeric(precision: int | None, scale: int) -> SqlType:
    return SqlType(Kind.NUMERIC, precision, scale)


def dynamic_numeric(storage_scale: int = NUMERIC_DEFAULT_SCALE) -> SqlType:
    """An unconstrained numeric whose values keep their own scales, held at storage_scale."""
    return SqlType(Kind.NUMERIC, None, storage_scale, dynamic=True)


UNCONSTRAINED = dynamic_numeric()  # the type of a `numeric` column


def varchar(length: int | None = None) -> SqlType:
    return SqlType(Kind.VARCHAR, length=length)


def char(length: int | None = 1) -> SqlType:
    return SqlType(Kind.CHAR, length=length)


_NAMES = {
    "bool": BOOL, "boolean": BOOL,
    "int2": INT2, "smallint": INT2,
    "int": INT4, "int4": INT4, "integer": INT4, "serial": INT4,
    "int8": INT8, "bigint": INT8, "bigserial": INT8,
    "float4": FLOAT4, "real": FLOAT4,
    "float8": FLOAT8, "float": FLOAT8, "double precision": FLOAT8, "double": FLOAT8,
    "text": TEXT, "string": TEXT,
    "date": DATE,
    "timestamp": TIMESTAMP, "timestamp without time zone": TIMESTAMP, "datetime": TIMESTAMP,
    "timestamptz": TIMESTAMPTZ, "timestamp with time zone": TIMESTAMPTZ,
    "interval": INTERVAL,
    "time": TIME, "time without time zone": TIME,
    "timetz": TIMETZ, "time with time zone": TIMETZ,
    "json": JSON, "jsonb": JSONB,
    "bytea": BYTEA, "uuid": UUID,
}


def from_name(name: str, args: tuple[int, ...] = ()) -> SqlType:
    """Parse a type name as written in SQL (`numeric(15,2)`, `varchar(25)`, `int8`)."""
    key = " ".join(name.lower().split())
    if key.endswith("[]"):
        return array_of(from_name(key[:-2].strip(), args))
    if key.startswith("_") and len(key) > 1:  # _int4: the array type's own name
        try:
            return array_of(from_name(key[1:], args))
        except errors.QueryError:
            pass  # not an array type's name: one of the names below, or unknown
    if key in ("int2vector", "oidvector"):
        return SqlType(Kind.INT2VECTOR if key == "int2vector" else Kind.OIDVECTOR)
    if key in ("numeric", "decimal"):
        if not args:
            return numeric(None, 0)  # scale decided by values; see NUMERIC_DEFAULT_SCALE
        precision = args[0]
        scale = args[1] if len(args) > 1 else 0
        return numeric(precision, scale)
    if key in ("varchar", "character varying"):
        return varchar(args[0] if args else None)
    if key in ("char", "character", "bpchar"):
        return char(args[0] if args else 1)
    if key in _NAMES:
        return _NAMES[key]
    raise errors.UndefinedObject(f'type "{name}" does not exist')


def from_oid(oid: int) -> SqlType:
    """The type of a parameter whose OID a client declared (0 means unspecified)."""
    kind = KIND_BY_OID.get(oid)
    if kind is None and oid in ELEMENT_BY_ARRAY_OID:
        element = from_oid(OIDS[ELEMENT_BY_ARRAY_OID[oid]])
        return UNKNOWN if element.kind is Kind.UNKNOWN else array_of(element)
    if kind is None or kind is Kind.UNKNOWN:
        return UNKNOWN
    if kind is Kind.NUMERIC:
        return numeric(None, 0)
    return SqlType(kind)


def from_arrow(t: pa.DataType) -> SqlType:
    """A SQL type for an Arrow type read from outside (Parquet files, generated data)."""
    if pa.types.is_boolean(t):
        return BOOL
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_uint8(t):
        return INT2
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return INT4
    if pa.types.is_integer(t):
        return INT8
    if pa.types.is_float32(t) or pa.types.is_float16(t):
        return FLOAT4
    if pa.types.is_floating(t):
        return FLOAT8
    if pa.types.is_decimal(t):
        return numeric(t.precision, t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t):
        return TEXT
    if pa.types.is_date(t):
        return DATE
    if pa.types.is_timestamp(t):
        return TIMESTAMPTZ if t.tz else TIMESTAMP
    if t == pa.time64("us"):
        return TIME
    if pa.types.is_null(t):
        return UNKNOWN
    raise errors.FeatureNotSupported(f"Arrow type {t} is not supported")


_INT_RANK = {Kind.INT2: 0, Kind.INT4: 1, Kind.INT8: 2}


def common_special(a: SqlType, b: SqlType) -> SqlType | None:
    """The common type of two types one of which is SPECIAL (CASE, UNION, COALESCE)."""
    if a.kind is b.kind:
        return a
    for x, y in ((a, b), (b, a)):
        if x.kind is Kind.OID and (y.is_integer or y.kind in REG_KINDS):
            return OID
        if x.kind in REG_KINDS and y.is_integer:
            return OID
        if x.kind in SPECIAL and y.kind is Kind.UNKNOWN:
            return x
    return None


def common_type(a: SqlType, b: SqlType) -> SqlType:
    """The type two operands are coerced to (UNION, CASE, comparison, arithmetic)."""
    if a == b:
        return a
    if a.kind is b.kind and a.kind in PRECISION_KINDS:  # time(p) and time(q): time
        return SqlType(a.kind)
    if a.kind is Kind.UNKNOWN:
        return b
    if b.kind is Kind.UNKNOWN:
        return a
    if a.is_array or b.is_array:
        if a.is_array and b.is_array:
            if a.kind is not Kind.ARRAY or b.kind is not Kind.ARRAY:
                return array_of(a.elem) if a.elem == b.elem else array_of(
                    common_type(a.elem, b.elem))
            return array_of(common_type(a.element, b.element))
        other = b if a.is_array else a
        if other.is_string:
            return a if a.is_array else b
        raise errors.DatatypeMismatch(f"types {a} and {b} cannot be matched")
    if a.kind in CATALOG_KINDS or b.kind in CATALOG_KINDS:
        t = common_special(a, b)
        if t is not None:
            return t
    if a.is_integer and b.is_integer:
        return a if _INT_RANK[a.kind] >= _INT_RANK[b.kind] else b
    if a.is_float or b.is_float:
        if (a.is_number and b.is_number):
            return FLOAT4 if a.kind is Kind.FLOAT4 and b.kind is Kind.FLOAT4 else FLOAT8
    if a.is_number and b.is_number:
        # numeric with integer or numeric: widen to hold both.
        sa = a.scale if a.is_numeric else 0
        sb = b.scale if b.is_numeric else 0
        scale = max(sa, sb)
        if a.is_dynamic or b.is_dynamic or sa != sb:  # each value keeps its own scale
            return dynamic_numeric(scale)
        pa_ = _int_digits(a) + scale if _int_digits(a) is not None else None
        pb_ = _int_digits(b) + scale if _int_digits(b) is not None else None
        if pa_ is None or pb_ is None:
            return numeric(None, scale)
        return numeric(min(max(pa_, pb_), 38), scale)
    if a.is_string and b.is_string:
        return TEXT
    if a.kind is Kind.DATE and b.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        return SqlType(b.kind)
    if b.kind is Kind.DATE and a.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        return SqlType(a.kind)
    if a.is_string and b.kind is not Kind.UNKNOWN:
        return b
    if b.is_string:
        return a
    raise errors.DatatypeMismatch(f"types {a} and {b} cannot be matched")


def _int_digits(t: SqlType) -> int | None:
    """Digits before the decimal point a type can hold (None: unbounded)."""
    if t.kind is Kind.INT2:
        return 5
    if t.kind is Kind.INT4:
        return 10
    if t.kind is Kind.INT8:
        return 19
    if t.is_numeric:
        return None if t.precision is None else t.precision - t.scale
    return None
