"""Bound scalar expressions: frozen, typed trees that segments evaluate over Arrow batches.

The binder (planner/bind.py) turns sqlglot expressions into these nodes. Column references
are *positional*: `ColumnRef(i)` is column i of the operator's input batch, so an expression
needs no name lookup at run time. Every node knows its result `type`; segment/expr.py
evaluates a node over a batch with pyarrow.compute (and numba kernels where they win).
"""

from __future__ import annotations

from decimal import Decimal

import enum
from dataclasses import dataclass
from typing import Any

from planner import types
from planner.temporal import Interval
from planner.types import SqlType
from planner.values import format_text


class Func(enum.Enum):
    """Scalar functions and operators. Arity is checked by the binder."""

    # arithmetic
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    NEG = "neg"
    ABS = "abs"
    ROUND = "round"       # round(x) or round(x, digits)
    FLOOR = "floor"
    CEIL = "ceil"
    TRUNC = "trunc"
    SQRT = "sqrt"
    POWER = "power"
    LN = "ln"
    EXP = "exp"
    CBRT = "cbrt"
    SIGN = "sign"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    ASIN = "asin"
    ACOS = "acos"
    ATAN = "atan"
    ATAN2 = "atan2"          # atan2(y, x)
    SCALE = "scale"          # numeric's display scale: bound by planner/numeric_scale.py
    MIN_SCALE = "min_scale"  # the fewest decimal places that hold the value exactly
    TRIM_SCALE = "trim_scale"
    GCD = "gcd"              # int4 / int8 (int2 promotes); result never negative
    LCM = "lcm"
    # planner/math_rules.py, segment/kernels/expr_math.py
    LOG = "log"              # log(x) base 10, log(b, x)
    LOG10 = "log10"
    DIV_INT = "div"          # div(a, b): the integer quotient of numerics, truncated
    FACTORIAL = "factorial"  # factorial(int8) -> numeric
    WIDTH_BUCKET = "width_bucket"  # (op, low, high, count) or (op, thresholds array)
    # volatile: a new value per row, never folded; after setseed() its args are the int8
    # Literals (seed, call number) of a repeatable sequence (planner/session_info.py)
    RANDOM = "random"
    # comparison
    EQ = "="
    NE = "<>"
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    # boolean (three-valued, as SQL)
    AND = "and"
    OR = "or"
    NOT = "not"
    # null handling
    COALESCE = "coalesce"
    NUM_NULLS = "num_nulls"        # (VARIADIC "any"): bound as a sum of IS NULL tests
    NUM_NONNULLS = "num_nonnulls"
    NULLIF = "nullif"
    GREATEST = "greatest"
    LEAST = "least"
    # strings
    CONCAT = "||"
    LOWER = "lower"
    UPPER = "upper"
    LENGTH = "length"     # characters
    OCTET_LENGTH = "octet_length"
    SUBSTRING = "substring"  # substring(s, start [, count]); 1-based as PostgreSQL
    POSITION = "strpos"      # strpos(s, sub): 1-based, 0 when absent
    REPLACE = "replace"
    REGEXP_REPLACE = "regexp_replace"  # (s, pattern, replacement [, flags]); \1 backrefs
    TRIM = "btrim"
    LTRIM = "ltrim"
    RTRIM = "rtrim"
    LEFT = "left"
    RIGHT = "right"
    STARTS_WITH = "starts_with"
    REPEAT = "repeat"
    REVERSE = "reverse"
    LPAD = "lpad"            # lpad/rpad(s, length [, fill]): truncated to length when longer
    RPAD = "rpad"
    SPLIT_PART = "split_part"  # (s, delimiter, n): n < 0 counts from the end, 0 is 22023
    CONCAT_WS = "concat_ws"  # (sep, a, ...): NULL arguments skipped, NULL sep gives NULL
    INITCAP = "initcap"
    MD5 = "md5"
    UNISTR = "unistr"  # (text): Unicode escapes decoded
    ASCII = "ascii"
    CHR = "chr"
    TO_HEX = "to_hex"  # (int4 | int8): two's complement digits, lower case, no leading zeros
    TRANSLATE = "translate"
    # regular expressions (planner/regex_rules.py, planner/pg_regex.py, kernels/expr_regex.py)
    REGEXP_MATCH = "regexp_match"          # (s, pattern [, flags]) -> text[] or NULL
    REGEXP_MATCHES = "?regexp_matches"     # the rows of regexp_matches: an array of text[]
    REGEXP_SPLIT = "regexp_split_to_array"  # (s, pattern [, flags]) -> text[]
    REGEXP_SPLIT_ROWS = "?regexp_split_to_table"  # the same, the rows of regexp_split_to_table
    REGEXP_LIKE = "regexp_like"            # (s, pattern, flags): also ~ (flags c) and ~* (i)
    REGEXP_COUNT = "regexp_count"          # (s, pattern [, start [, flags]])
    REGEXP_INSTR = "regexp_instr"          # (s, pattern [, start [, N [, endoption [, flags [, subexpr]]]]])
    REGEXP_SUBSTR = "regexp_substr"        # (s, pattern [, start [, N [, flags [, subexpr]]]])
    SIMILAR = "?similar"                   # (s, pattern, escape): s SIMILAR TO pattern
    SUBSTRING_REGEX = "?substring_regex"   # (s, pattern): substring(s FROM pattern)
    SUBSTRING_SIMILAR = "?substring_similar"  # (s, pattern, escape): FROM p FOR e
    FORMAT = "format"                      # (fmt, args as text...)
    QUOTE_LITERAL = "quote_literal"
    QUOTE_NULLABLE = "quote_nullable"      # NULL -> 'NULL' (not strict)
    OVERLAY = "overlay"                    # (s, placing, from [, for])
    # bytea and uuid (planner/binary_rules.py, segment/kernels/expr_binary.py); the ?bytea_
    # forms are what length, octet_length, ||, substring, md5, position and the trims bind
    # to over bytea
    BYTEA_LENGTH = "?bytea_length"
    BYTEA_CONCAT = "?bytea_concat"
    BYTEA_SUBSTRING = "?bytea_substring"
    BYTEA_MD5 = "?bytea_md5"
    BYTEA_POSITION = "?bytea_position"  # (bytes, sub): 1-based, 0 when absent
    BYTEA_TRIM = "?bytea_btrim"        # (bytes, set): the bytes of set off both ends
    BYTEA_LTRIM = "?bytea_ltrim"
    BYTEA_RTRIM = "?bytea_rtrim"
    BYTEA_LIKE = "?bytea_like"         # (bytes, pattern): LIKE byte by byte (NOT LIKE: NOT)
    SHA224 = "sha224"
    SHA256 = "sha256"
    SHA384 = "sha384"
    SHA512 = "sha512"
    ENCODE = "encode"                  # (bytea, format text) -> text
    DECODE = "decode"                  # (text, format text) -> bytea
    GET_BYTE = "get_byte"
    SET_BYTE = "set_byte"
    GET_BIT = "get_bit"                # bit n of the bytes, the least significant first
    SET_BIT = "set_bit"
    CONVERT_TO = "convert_to"          # (text, 'UTF8') -> bytea
    CONVERT_FROM = "convert_from"      # (bytea, 'UTF8') -> text
    GEN_RANDOM_UUID = "gen_random_uuid"  # volatile: a new uuid per row, never folded
    # dates and times; first argument of EXTRACT and DATE_TRUNC is a text Literal field name
    EXTRACT = "extract"       # extract(field, ts) -> numeric for PG >= 14; we return FLOAT8/INT per field
    DATE_TRUNC = "date_trunc"  # date_trunc(field, ts) -> timestamp
    DATE_PART = "date_part"   # date_part(field, ts) -> float8
    NOW = "now"
    # Time zones (planner/zone_rules.py): the second argument is a Zone's spec, a constant
    TO_LOCAL = "?to_local"      # (timestamptz, zone) -> timestamp: the wall clock there
    FROM_LOCAL = "?from_local"  # (timestamp, zone) -> timestamptz: that wall clock's instant
    TSTZ_OUT = "?tstz_out"      # (timestamptz, zone) -> text, with the zone's offset
    TSTZ_IN = "?tstz_in"        # (text, zone) -> timestamptz: read there unless it has an offset
    # (text, zone, DateStyle order) -> date/timestamp[tz]/time/timetz: the type's input in
    # that session (planner/coercion.py: text columns outside UTC or MDY)
    TEXT_IN = "?text_in"
    ISFINITE = "isfinite"  # date, timestamp(tz): not +/-infinity; interval: always true
    # formatting templates (planner/format_rules.py, segment/kernels/expr_format.py)
    TO_CHAR = "to_char"            # (x, template): dates, times, intervals and numbers
    TO_DATE = "to_date"            # (text, template)
    TO_TIMESTAMP = "to_timestamp"  # (text, template), or (float8 seconds since 1970)
    TO_NUMBER = "to_number"        # (text, template)
    # planner/datetime_rules.py, segment/kernels/expr_make_datetime.py
    MAKE_DATE = "make_date"
    MAKE_TIMESTAMP = "make_timestamp"
    MAKE_TIMESTAMPTZ = "make_timestamptz"
    MAKE_INTERVAL = "make_interval"   # (years, months, weeks, days, hours, mins, secs)
    JUSTIFY_DAYS = "justify_days"
    JUSTIFY_HOURS = "justify_hours"
    JUSTIFY_INTERVAL = "justify_interval"
    AGE = "age"                       # age(a, b); age(a) binds as age(current midnight, a)
    DATE_BIN = "date_bin"             # (stride, source, origin)
    # (start, k int8, Literal(step microseconds int8)): start + k * step, exactly; the rows
    # of a constant generate_series of timestamps over an int8 series of k (planner/bind.py)
    TIMESTAMP_STEP = "?timestamp_step"
    CONCAT_FN = "concat"      # concat(a, b, ...): NULL arguments are skipped, unlike ||
    FIT_STRING = "fit_string"  # text stored into varchar(n)/char(n): 22001 if too long
    # one_row(rows, value): a correlated scalar subquery's value; 21000 when it had rows > 1
    ONE_ROW = "one_row"
    # arrays (planner/array_rules.py, segment/kernels/expr_pgarray.py)
    ARRAY = "array"                    # ARRAY[e1, e2, ...]
    SUBSCRIPT = "subscript"            # a[i]: NULL out of range
    SLICE = "slice"                    # a[lo:hi]; an UNKNOWN-typed NULL bound is omitted
    ARRAY_LENGTH = "array_length"
    CARDINALITY = "cardinality"
    ARRAY_UPPER = "array_upper"
    ARRAY_LOWER = "array_lower"
    ARRAY_NDIMS = "array_ndims"
    ARRAY_DIMS = "array_dims"
    ARRAY_TO_STRING = "array_to_string"
    STRING_TO_ARRAY = "string_to_array"
    ARRAY_CAT = "array_cat"
    ARRAY_APPEND = "array_append"
    ARRAY_PREPEND = "array_prepend"
    ARRAY_POSITION = "array_position"
    ARRAY_POSITIONS = "array_positions"  # (a, x): every subscript of x, IS NOT DISTINCT FROM
    ARRAY_REMOVE = "array_remove"        # (a, x): without the elements equal to x (NULL too)
    ARRAY_REPLACE = "array_replace"      # (a, from, to)
    ARRAY_CONTAINS = "@>"
    ARRAY_CONTAINED = "<@"
    ARRAY_OVERLAP = "&&"
    ARRAY_EQ = "array_eq"              # = and <> of arrays: NULL elements equal each other
    ARRAY_NE = "array_ne"
    SERIES = "generate_series"         # the integers generate_series(a, b[, step]) gives, as
    #                                    an array (what ProjectSet unnests: SELECT list, LATERAL)
    BIT_AND = "&"                      # integer bitwise operators, as PostgreSQL's int2/4/8
    BIT_OR = "|"
    BIT_XOR = "#"
    BIT_NOT = "~"
    SHIFT_LEFT = "<<"
    SHIFT_RIGHT = ">>"
    ROW = "row"                        # ROW(a, b, ...): a record of fields f1, f2, ...
    FIELD = "?field"                   # (record).name: args (record, Literal(name))
    # (record): bytes equal exactly where two records are (fields compared as DISTINCT
    # does, NULLs alike), NULL for a NULL record: count(DISTINCT (a, b)) counts these
    # (planner/row_aggregates.py, segment/kernels/expr_record.py)
    ROW_KEY = "?row_key"
    # array_agg(x ORDER BY k...) besides another ORDER BY at one query level: the array of
    # ROW(k..., x) sorted within, x kept; args (array, Literal(desc flags), Literal(nulls
    # first flags)), a "0"/"1" per key (planner/bind.py, segment/kernels/expr_list_sort.py)
    SORT_LIST = "?sort_list"
    # mode() WITHIN GROUP: the most frequent non-NULL element of an array sorted by the
    # ORDER BY, the first of equally frequent ones (planner/ordered_aggregates.py)
    SORTED_MODE = "?sorted_mode"
    # Finishing steps of aggregates bound over array_agg (segment/kernels/expr_list_agg.py):
    # (values[], keep bool[]): array_agg(x) FILTER (WHERE c) (planner/ordered_aggregates.py)
    LIST_FILTER = "?list_filter"
    # (sorted[]): the array without elements equal to the one before (NULLs equal):
    # array_agg(DISTINCT x) over array_agg(x ORDER BY x) (planner/ordered_aggregates.py)
    LIST_DISTINCT = "?list_distinct"
    # (sorted[], Literal(fractions float8[])): percentile_cont / percentile_disc of an array
    # of fractions, over array_agg(x ORDER BY x NULLS LAST)
    PERCENTILE_CONT_MULTI = "?percentile_cont[]"
    PERCENTILE_DISC_MULTI = "?percentile_disc[]"
    # (xs float8[], ys float8[], Literal(name)): regr_* / corr / covar_* of float8 pairs
    # (planner/regression_aggregates.py)
    REGR = "?regr"
    # the square root of a non-negative numeric at its own type's scale, rounded half away
    # from zero (stddev's root of its variance: planner/statistics_aggregates.py)
    NUMERIC_ROOT = "?numeric_root"
    # sum/avg/min/max of intervals as aggregates over these (planner/interval_aggregates.py,
    # segment/kernels/expr_interval.py): (x, Literal('months'|'days'|'micros')) -> int8;
    # (sum of months, of days, of micros) -> interval, 22008 beyond its range; (x) ->
    # bytea that orders as x and holds it; and back (bytea) -> interval.
    INTERVAL_PART = "?interval_part"
    INTERVAL_FROM_SUMS = "?interval_from_sums"
    INTERVAL_KEYED = "?interval_keyed"
    INTERVAL_UNKEYED = "?interval_unkeyed"
    # sum/min/max keeping display scales (planner/numeric_aggregates.py, segment/kernels/
    # numeric_dscale.py): (x unconstrained) -> its values as numeric(None, S); -> its
    # display scales (int4); (numeric(38, S) sum, int4 scale) -> unconstrained numeric;
    # (x) -> bytea that orders as x and holds it; and back (bytea, Literal(S)).
    NUMERIC_VALUE = "?numeric_value"
    NUMERIC_DSCALE = "?numeric_dscale"
    NUMERIC_WITH_SCALE = "?numeric_with_scale"
    NUMERIC_KEYED = "?numeric_keyed"
    NUMERIC_UNKEYED = "?numeric_unkeyed"
    # (a, b, Literal(S)): a / b, each value at its select_div_scale, held at storage scale S
    # (avg's quotient, whose integer digits the argument's type bounds)
    NUMERIC_QUOTIENT_AT = "?numeric_quotient_at"
    ARRAY_SORT_KEY = "array_sort_key"  # bytes that order as the array: < <= > >= of arrays
    ANY_OF = "any"                     # any(op, x, a): x op ANY (a); op a text Literal
    ALL_OF = "all"
    # json and jsonb (planner/json_rules.py, planner/json_ops.py, segment/kernels/expr_json.py)
    JSON_GET = "->"                    # (x, key text | index int4); also #> below
    JSON_GET_TEXT = "->>"
    JSON_PATH = "#>"                   # (x, path text[]); json(b)_extract_path
    JSON_PATH_TEXT = "#>>"
    JSONB_CONTAINS = "jsonb_contains"  # @> and <@ (arguments swapped)
    JSONB_EXISTS = "jsonb_exists"      # ?
    JSONB_EXISTS_ANY = "jsonb_exists_any"  # ?|
    JSONB_EXISTS_ALL = "jsonb_exists_all"  # ?&
    JSONB_CONCAT = "jsonb_concat"      # ||
    JSONB_DELETE = "jsonb_delete"      # - key, - index
    JSONB_SET = "jsonb_set"
    JSONB_DELETE_PATH = "jsonb_delete_path"  # #- (path text[])
    JSONB_INSERT = "jsonb_insert"  # (target, path text[], new, insert_after)
    JSONB_STRIP_NULLS = "jsonb_strip_nulls"
    JSON_STRIP_NULLS = "json_strip_nulls"  # json's: key order and repeated keys kept
    JSONB_PRETTY = "jsonb_pretty"
    JSONB_SORT_KEY = "jsonb_sort_key"  # bytes that order as jsonb: = < > ... of jsonb
    JSON_TYPEOF = "json_typeof"
    JSONB_TYPEOF = "jsonb_typeof"
    JSON_ARRAY_LENGTH = "json_array_length"
    JSONB_ARRAY_LENGTH = "jsonb_array_length"
    JSON_BUILD_OBJECT = "json_build_object"
    JSONB_BUILD_OBJECT = "jsonb_build_object"
    JSON_BUILD_ARRAY = "json_build_array"
    JSONB_BUILD_ARRAY = "jsonb_build_array"
    TO_JSON = "to_json"
    TO_JSONB = "to_jsonb"
    # The json aggregates' finishing step over array_agg results (planner/json_aggregates.py)
    # and the set-returning json functions as arrays for a ProjectSet (bind_json.srf_arrays);
    # the values are no function names a query can call.
    JSON_AGG = "json_agg[]"            # (values[]) -> json; jsonb_agg when typed jsonb
    JSON_OBJECT_AGG = "json_object_agg[]"  # (keys[], values[]) -> json / jsonb
    JSON_ELEMENTS = "json_array_elements[]"  # (x) -> json(b)[], or text[] for _text
    JSON_EACH_KEYS = "json_each[].key"       # (x) -> text[]
    JSON_EACH_TEXT_KEYS = "json_each_text[].key"
    JSON_EACH_VALUES = "json_each[].value"   # (x) -> json(b)[], or text[] for _text
    JSON_OBJECT_KEYS = "json_object_keys[]"  # (x) -> text[]
    # (x, key, function name [, default text]) -> text[] or json(b)[]: the field `key` of
    # x (of each object of the array x for a ..._recordset function) for
    # json(b)_to_record(set)'s and json(b)_populate_record(set)'s column `key`; the
    # default (a base record's field) where x lacks the key
    JSON_RECORD_FIELD = "json_to_record[].field"
    # (x, key, function name, json elements [, default text]) -> text[]: the same field
    # for an array column, as array_in's text (json_ops.array_literal)
    JSON_RECORD_ARRAY = "json_to_record[].array"


class AggFunc(enum.Enum):
    COUNT = "count"        # count(x): non-null values
    COUNT_STAR = "count(*)"
    SUM = "sum"
    AVG = "avg"
    MIN = "min"
    MAX = "max"
    ARRAY_AGG = "array_agg"  # in input order: the planner sorts its input for ORDER BY


class Expr:
    """Marker base of expression nodes; every subclass has a `type: SqlType` field."""

    __slots__ = ()
    type: SqlType

    def children(self) -> tuple["Expr", ...]:
        return ()


@dataclass(frozen=True, slots=True)
class ColumnRef(Expr):
    """Column `index` of the input batch. `name` is for EXPLAIN only."""

    index: int
    type: SqlType
    name: str = ""


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    """A constant. `value` is a plain Python value of the type's natural kind:

    bool, int, float, str, decimal.Decimal (numeric), datetime.date, datetime.datetime,
    Interval (interval), or None (NULL of the given type).
    """

    value: Any
    type: SqlType

    def _key(self):
        # 1.5 and 1.50 are equal Decimals but different constants where the value keeps
        # its display scale (an unconstrained numeric): plans and caches keep them apart.
        return (self.value, self.type, _exponents(self.value))

    def __eq__(self, other):
        if other.__class__ is not Literal:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def _exponents(v):
    """The Decimal exponents in a constant (an array's elements too): its digits."""
    if isinstance(v, Decimal):
        return v.as_tuple().exponent
    if isinstance(v, tuple):
        return tuple(_exponents(x) for x in v)
    return None


@dataclass(frozen=True, slots=True)
class Call(Expr):
    func: Func
    args: tuple[Expr, ...]
    type: SqlType

    def children(self):
        return self.args


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    """CAST(arg AS type). Errors as PostgreSQL: 22P02 bad text, 22003 out of range."""

    arg: Expr
    type: SqlType

    def children(self):
        return (self.arg,)


@dataclass(frozen=True, slots=True)
class Case(Expr):
    """CASE WHEN c1 THEN r1 ... ELSE e END (searched form; the simple form is rewritten).

    Branches are evaluated lazily where it matters: a division in a branch that is not
    taken must not raise (PostgreSQL semantics).
    """

    whens: tuple[tuple[Expr, Expr], ...]
    else_: Expr
    type: SqlType

    def children(self):
        out = []
        for cond, res in self.whens:
            out += [cond, res]
        return tuple(out) + (self.else_,)


@dataclass(frozen=True, slots=True)
class InList(Expr):
    """arg [NOT] IN (v1, v2, ...) with SQL NULL semantics. Values are Literals."""

    arg: Expr
    values: tuple[Expr, ...]
    negated: bool
    type: SqlType = types.BOOL

    def children(self):
        return (self.arg,) + self.values


@dataclass(frozen=True, slots=True)
class Like(Expr):
    """arg [NOT] LIKE/ILIKE pattern; the pattern is a text expression (usually a Literal)."""

    arg: Expr
    pattern: Expr
    negated: bool
    case_insensitive: bool
    type: SqlType = types.BOOL

    def children(self):
        return (self.arg, self.pattern)


@dataclass(frozen=True, slots=True)
class IsNull(Expr):
    """arg IS [NOT] NULL."""

    arg: Expr
    negated: bool
    type: SqlType = types.BOOL

    def children(self):
        return (self.arg,)


@dataclass(frozen=True, slots=True)
class RowCall(Expr):
    """A function of the system catalog computed one row at a time in Python
    (planner/catalog_functions.py `IMPLEMENTATIONS[name]`): format_type(), reg* casts,
    pg_get_userbyid(), ... `data` is the constant it reads besides its arguments (the oid
    and name pairs of the catalog as it was when the statement was bound), so segments
    and the coordinator compute the same values."""

    name: str
    args: tuple[Expr, ...]
    type: SqlType
    data: "RowData | None" = None

    def children(self):
        return self.args


class SeqFunc(enum.Enum):
    """The sequence functions: each reads or changes a counter of the coordinator."""

    NEXTVAL = "nextval"
    CURRVAL = "currval"
    SETVAL = "setval"
    LASTVAL = "lastval"


@dataclass(frozen=True, slots=True)
class SequenceCall(Expr):
    """nextval/currval/setval(seq, ...)/lastval(): computed one row at a time on the
    coordinator, by the counters of coordinator/sequences.py (the plan runs it in the
    coordinator's slice: planner/distribute.py). `seq_id` and `seq_name` name the sequence
    the regclass argument resolved to when the statement was bound (0 and "" for
    lastval); `args` are setval's value and is_called."""

    func: SeqFunc
    seq_id: int
    seq_name: str
    args: tuple[Expr, ...]
    type: SqlType

    def children(self):
        return self.args


@dataclass(frozen=True, slots=True)
class RowData:
    """The constant a RowCall reads: `items` (pairs), hashed once."""

    items: tuple

    def __hash__(self):
        return hash((len(self.items), self.items[:8]))  # cheap; equal items hash equal


@dataclass(frozen=True, slots=True)
class AggCall:
    """An aggregate in an Aggregate node: func(arg) [DISTINCT], typed as its result.
    `order` (array_agg's ORDER BY) is (expression, descending, nulls first) per key: the
    Aggregate's input is sorted by it (distribute.py), and array_agg keeps input order."""

    func: AggFunc
    arg: Expr | None
    distinct: bool
    type: SqlType
    order: tuple = ()

    def sql(self) -> str:
        if self.func is AggFunc.COUNT_STAR:
            return "count(*)"
        inner = show(self.arg) if self.arg is not None else ""
        if self.order:
            inner += " ORDER BY " + ", ".join(
                show(e) + (" DESC" if desc else "") + (" NULLS FIRST" if nf else " NULLS LAST")
                for e, desc, nf in self.order)
        return f"{self.func.value}({'DISTINCT ' if self.distinct else ''}{inner})"


def walk(e: Expr):
    """Pre-order iteration over an expression tree."""
    yield e
    for c in e.children():
        yield from walk(c)


def columns_used(e: Expr) -> set[int]:
    return {n.index for n in walk(e) if isinstance(n, ColumnRef)}


# Calls without column arguments that are no constants: now() is the statement's time
# (evaluated where the statement runs); random() and gen_random_uuid() are volatile, a
# new value for every row.
VOLATILE = frozenset((Func.RANDOM, Func.GEN_RANDOM_UUID))
NOT_CONSTANT = frozenset((Func.NOW,)) | VOLATILE


def is_constant(e: Expr) -> bool:
    return not any(isinstance(n, (ColumnRef, SequenceCall)) for n in walk(e)) and not any(
        isinstance(n, Call) and n.func in NOT_CONSTANT for n in walk(e))


def calls_sequence(e: Expr) -> bool:
    """Whether e calls a sequence function (it must run on the coordinator)."""
    return any(isinstance(n, SequenceCall) for n in walk(e))


def is_volatile(e: Expr) -> bool:
    """Whether e calls random() or gen_random_uuid(): a value per evaluation, never
    shared between rows."""
    return any((isinstance(n, Call) and n.func in VOLATILE) or isinstance(n, SequenceCall)
               for n in walk(e))


_INFIX = {Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD, Func.EQ, Func.NE, Func.LT,
          Func.LE, Func.GT, Func.GE, Func.AND, Func.OR, Func.CONCAT, Func.ARRAY_CONTAINS,
          Func.ARRAY_CONTAINED, Func.ARRAY_OVERLAP, Func.JSON_GET, Func.JSON_GET_TEXT,
          Func.JSON_PATH, Func.JSON_PATH_TEXT}


# Functions bound to Funcs of their own that EXPLAIN shows by the name written
_SHOWN = {Func.BYTEA_LENGTH: "length", Func.BYTEA_SUBSTRING: "substring",
          Func.BYTEA_MD5: "md5", Func.BYTEA_POSITION: "position", Func.BYTEA_TRIM: "btrim",
          Func.BYTEA_LTRIM: "ltrim", Func.BYTEA_RTRIM: "rtrim", Func.BYTEA_LIKE: "bytealike"}


def show(e: Expr) -> str:
    """Deterministic SQL-ish text of an expression, for EXPLAIN."""
    if isinstance(e, ColumnRef):
        return e.name or f"${e.index}"
    if isinstance(e, Literal):
        if e.value is None:
            return "NULL"
        if isinstance(e.value, str):
            return "'" + e.value.replace("'", "''") + "'"
        if isinstance(e.value, (tuple, bytes)):  # arrays, bytea, uuid
            return "'" + format_text(e.value, e.type).replace("'", "''") + "'::" + e.type.sql()
        if isinstance(e.value, Interval):
            return f"interval '{e.value.months} mons {e.value.days} days {e.value.micros} us'"
        if e.type.kind in (types.Kind.DATE, types.Kind.TIMESTAMP):
            return f"{e.type.kind.value.split()[0]} '{e.value}'"
        return str(e.value)
    if isinstance(e, Call):
        if e.func in _INFIX:
            return "(" + f" {e.func.value.upper() if e.func in (Func.AND, Func.OR) else e.func.value} ".join(
                show(a) for a in e.args) + ")"
        if e.func is Func.NEG:
            return f"(-{show(e.args[0])})"
        if e.func is Func.NOT:
            return f"(NOT {show(e.args[0])})"
        if e.func is Func.BYTEA_CONCAT:
            return "(" + " || ".join(show(a) for a in e.args) + ")"
        if e.func in (Func.TO_LOCAL, Func.FROM_LOCAL):  # AT TIME ZONE, as PostgreSQL shows it
            return f"timezone({show(e.args[1])}, {show(e.args[0])})"
        if e.func is Func.TEXT_IN:  # a cast read in the session's zone and DateStyle
            return f"({show(e.args[0])})::{e.type.sql()}"
        if e.func in (Func.TSTZ_OUT, Func.TSTZ_IN):  # casts read in the session's zone
            t = "text" if e.func is Func.TSTZ_OUT else "timestamp with time zone"
            return f"({show(e.args[0])})::{t} AT ZONE {show(e.args[1])}"
        name = _SHOWN.get(e.func, e.func.value)
        return f"{name}({', '.join(show(a) for a in e.args)})"
    if isinstance(e, Cast):
        return f"{show(e.arg)}::{e.type.sql()}"
    if isinstance(e, SequenceCall):
        seq = ["'" + e.seq_name.replace("'", "''") + "'::regclass"] if e.seq_name else []
        return f"{e.func.value}({', '.join(seq + [show(a) for a in e.args])})"
    if isinstance(e, Case):
        parts = " ".join(f"WHEN {show(c)} THEN {show(r)}" for c, r in e.whens)
        return f"CASE {parts} ELSE {show(e.else_)} END"
    if isinstance(e, InList):
        return f"({show(e.arg)} {'NOT ' if e.negated else ''}IN ({', '.join(show(v) for v in e.values)}))"
    if isinstance(e, Like):
        op = ("NOT " if e.negated else "") + ("ILIKE" if e.case_insensitive else "LIKE")
        return f"({show(e.arg)} {op} {show(e.pattern)})"
    if isinstance(e, IsNull):
        return f"({show(e.arg)} IS {'NOT ' if e.negated else ''}NULL)"
    if isinstance(e, RowCall):
        return f"{e.name}({', '.join(show(a) for a in e.args)})"
    return repr(e)


def map_columns(e: Expr, mapping: dict[int, int]) -> Expr:
    """The expression with every ColumnRef index i replaced by mapping[i]."""
    import dataclasses

    return replace_columns(e, lambda c: dataclasses.replace(c, index=mapping[c.index]))


def replace_columns(e: Expr, fn) -> Expr:
    """The expression with every ColumnRef c replaced by fn(c) (an expression)."""
    import dataclasses

    if isinstance(e, ColumnRef):
        return fn(e)
    if not dataclasses.is_dataclass(e) or not e.children():
        return e
    changes = {}
    for f in dataclasses.fields(e):
        val = getattr(e, f.name)
        if isinstance(val, Expr):
            changes[f.name] = replace_columns(val, fn)
        elif isinstance(val, tuple) and val and isinstance(val[0], tuple):
            changes[f.name] = tuple(tuple(replace_columns(x, fn) for x in pair) for pair in val)
        elif isinstance(val, tuple) and val and isinstance(val[0], Expr):
            changes[f.name] = tuple(replace_columns(x, fn) for x in val)
    return dataclasses.replace(e, **changes)
