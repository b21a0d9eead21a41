"""Conversions between SQL types as PostgreSQL applies them, and the errors of typing.

`bind_cast` is CAST and `::`, `bind_assign` the assignment cast into a column, `coerce` the
implicit conversion a typing rule chose, `adopt` how an unknown literal (a quoted constant
or bare NULL) takes its context's type. `unify` finds the common type of CASE, COALESCE,
IN and UNION branches. Literals convert at once (planner/values.py), so bad input raises
at bind time. `no_operator` / `no_function` build PostgreSQL's 42883 messages.
"""

from __future__ import annotations

import datetime as dt

from planner import catalog_types, datetime_input, errors, time_zones, types, zone_rules
from planner.array_text import split_array_text
from planner import expr as ex
from planner.expr import Call, Cast, Func, Literal
from planner.fold import fold_constants
from planner.temporal import TEMPORAL
from planner.types import Kind, SqlType
from planner.values import cast_value, fit_numeric, int_fits, numeric_type_of, to_decimal

TS_RANK = {Kind.DATE: 0, Kind.TIMESTAMP: 1, Kind.TIMESTAMPTZ: 2}
_INT_RANK = {Kind.INT2: 0, Kind.INT4: 1, Kind.INT8: 2}
_INT_DIGITS = {Kind.INT2: 5, Kind.INT4: 10, Kind.INT8: 19}
_OP_NAMES = {Func.NEG: "-", Func.NOT: "NOT", Func.BIT_NOT: "~"}
_JSON = (Kind.JSON, Kind.JSONB)


def is_unknown(e: ex.Expr) -> bool:
    """A quoted constant or bare NULL: takes the type its context asks for."""
    return isinstance(e, Literal) and (e.type.kind is Kind.UNKNOWN or (
        e.type.kind is Kind.TEXT and isinstance(e.value, str) and not e.type.explicit))


# --- casts --------------------------------------------------------------------------------
def cast_type_ok(src: SqlType, dst: SqlType) -> bool:
    """Whether CAST(src AS dst) exists (PostgreSQL's pg_cast plus I/O casts via text)."""
    s, d = src.kind, dst.kind
    if src.is_array and dst.is_array:
        return cast_type_ok(src.elem, dst.elem)
    if s is Kind.UNKNOWN or src.is_string or dst.is_string:
        return True
    if src.is_array or dst.is_array:
        return False
    if s is d:
        return True
    if s in _JSON or d in _JSON:  # pg_cast: json <-> jsonb, jsonb -> bool and numbers
        return d in _JSON if s in _JSON and d in _JSON else (
            s is Kind.JSONB and (dst.is_number or d is Kind.BOOL))
    if src.is_number and dst.is_number:
        return True
    if {s, d} == {Kind.BOOL, Kind.INT4}:
        return True
    if d is Kind.TIME:  # pg_cast: timestamp(tz) -> time, interval -> time, timetz -> time
        return s in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.INTERVAL, Kind.TIMETZ)
    if d is Kind.TIMETZ:  # time -> timetz, timestamptz -> timetz
        return s in (Kind.TIME, Kind.TIMESTAMPTZ)
    if s is Kind.TIME:
        return d is Kind.INTERVAL
    return s in TEMPORAL and d in TEMPORAL and not (s is d is Kind.DATE)


def bind_cast(e: ex.Expr, dst: SqlType) -> ex.Expr:
    """CAST(e AS dst). Literals convert now (bad input raises at bind time). `numeric`
    without a typmod (numeric(None, 0)) keeps the source's scale."""
    if e.type.padded and dst != e.type:
        e = unpadded(e)
    if catalog_types.involved(e.type, dst):  # oid, reg*, catalog arrays
        return catalog_types.convert(e, dst)
    if not cast_type_ok(e.type, dst):
        raise errors.QueryError(f"cannot cast type {e.type} to {dst}", "42846")
    if dst.is_array and dst.elem == types.numeric(None, 0):
        dst = _unconstrained_array(e)
    read = _text_in(e, dst)
    if read is not None:
        return read
    zone = zone_rules.zoned()
    if zone is not None and zone_rules.involves(e.type, dst):
        return zone_rules.cast(e, dst, zone)
    if dst.kind is Kind.NUMERIC and dst.precision is None and dst.scale == 0:
        if isinstance(e, Literal) and e.value is not None:
            value = cast_value(e.value, e.type, dst) if e.type.kind in _JSON else \
                to_decimal(e.value, e.type.kind is Kind.FLOAT4)
            t = numeric_type_of(value)
            return Literal(fit_numeric(value, t), t)
        dst = _unconstrained(e.type)
        if e.type == dst:
            return e
    if isinstance(e, Literal):
        return Literal(cast_value(e.value, e.type, dst), dst)
    if e.type == dst:
        return e
    return Cast(e, dst)


_DATETIME = (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIME, Kind.TIMETZ)


def _text_in(e: ex.Expr, dst: SqlType) -> ex.Expr | None:
    """Text that is not a constant read as a date/time type in a session outside UTC or
    under a DateStyle order other than MDY: Func.TEXT_IN, which carries both to the
    segments ('today', '01/02/03', timetz without a zone); None where a plain cast reads
    as the session does (constants are read while binding)."""
    if isinstance(e, Literal) or not (e.type.is_string or e.type.kind is Kind.UNKNOWN):
        return None
    kind = (dst.elem if dst.is_array else dst).kind
    zone, order = zone_rules.zoned(), datetime_input.session_order()
    if kind not in _DATETIME or (zone is None and order == "mdy"):
        return None
    if dst.is_array:
        raise errors.FeatureNotSupported(
            f"casts of text to {dst} in a time zone other than UTC or under DateStyle "
            f"{order.upper()}")
    spec = (zone or time_zones.UTC_ZONE).spec
    read = Call(Func.TEXT_IN, (e, Literal(spec, types.TEXT), Literal(order, types.TEXT)),
                SqlType(dst.kind))
    return fold_constants(read if read.type == dst else Cast(read, dst))


def bind_assign(e: ex.Expr, dst: SqlType, column: str = "") -> ex.Expr:
    """e converted for storing into a column of type dst (INSERT, UPDATE, COPY targets):
    PostgreSQL's assignment casts. Numbers convert among themselves (with the explicit
    casts' rounding and range errors), anything converts to text, dates and timestamps
    among themselves, unknown literals to anything; other pairs raise 42804. A string
    longer than varchar(n)/char(n) raises 22001 unless the excess is spaces."""
    if e.type.padded and not (dst.kind is Kind.CHAR and dst.length is None):
        e = unpadded(e)  # a bpchar column keeps them: FIT_STRING refuses them there
    src = e.type
    allowed = (is_unknown(e) or src.kind is dst.kind or dst.is_string
               or (src.kind in _JSON and dst.kind in _JSON)
               or (src.is_number and dst.is_number)
               or (src.kind in TEMPORAL and dst.kind in TEMPORAL)
               or (dst.kind in (Kind.TIME, Kind.TIMETZ) and cast_type_ok(src, dst))
               or (src.kind is Kind.TIME and dst.kind is Kind.INTERVAL)
               or (dst.is_array and (src.kind is Kind.UNKNOWN or src.is_array and (
                   src.elem.kind is dst.elem.kind or dst.elem.is_string
                   or (src.elem.is_number and dst.elem.is_number)))))
    if not allowed:
        raise errors.DatatypeMismatch(
            f'column "{column}" is of type {dst} but expression is of type {type_name(e)}',
            hint="You will need to rewrite or cast the expression.")
    if dst.kind is Kind.ARRAY and _fitted(dst.elem):
        # elements held to varchar(n)/char(n) as a column's strings (a cast would cut them)
        wide = types.array_of(types.SqlType(dst.elem.kind))
        return fold_constants(Call(Func.FIT_STRING, (bind_cast(e, wide),), dst))
    if not _fitted(dst):
        return bind_cast(e, dst)
    text = e if e.type.is_string else bind_cast(e, types.TEXT)
    if text.type == dst:
        return text
    return fold_constants(Call(Func.FIT_STRING, (text,), dst))


def bind_input(e: ex.Expr, dst: SqlType, column: str = "") -> ex.Expr:
    """Text `e` read with dst's input function and its typmod, as PostgreSQL's
    InputFunctionCall reads it: a string too long for varchar(n)/char(n) (or an element
    of such an array) is 22001, not cut as a cast would cut it."""
    if dst.is_array and _fitted(dst.elem):
        wide = types.array_of(types.SqlType(dst.elem.kind))
        return fold_constants(Call(Func.FIT_STRING, (bind_cast(e, wide),), dst))
    return bind_assign(e, dst, column) if dst.is_string else bind_cast(e, dst)


def _fitted(t: SqlType) -> bool:
    """Strings stored as t go through FIT_STRING: varchar(n), char(n), bpchar."""
    return t.is_string and t.kind is not Kind.TEXT and (t.length is not None
                                                      or t.kind is Kind.CHAR)


def _unconstrained_array(e: ex.Expr) -> SqlType:
    """The static type of `x::numeric[]`: each element keeps its own scale (held at 16
    digits, or a constant's most)."""
    src = e.type
    if isinstance(e, Literal) and isinstance(e.value, str):
        scale = types.NUMERIC_DEFAULT_SCALE
        for item in split_array_text(e.value):
            if item is not None:
                scale = max(scale, numeric_type_of(to_decimal(item)).scale)
        return types.array_of(types.dynamic_numeric(scale))
    if src.is_array:  # numeric(p,s)[] and integer arrays keep their one scale
        return types.array_of(_unconstrained(src.elem))
    return types.array_of(types.UNCONSTRAINED)


def _unconstrained(src: SqlType) -> SqlType:
    """The static type of `x::numeric` for a non-constant x."""
    if src.is_numeric:
        return src
    if src.kind in (Kind.INT2, Kind.INT4):
        return types.numeric(_INT_DIGITS[src.kind], 0)
    if src.kind in (Kind.INT8, Kind.UNKNOWN):
        return types.numeric(None, 0)
    if src.is_float:
        return types.dynamic_numeric(types.FLOAT_NUMERIC_SCALE)
    return types.UNCONSTRAINED  # text, json: each value at its own scale


def coerce(e: ex.Expr, t: SqlType) -> ex.Expr:
    """e as type t (an implicit conversion the typing rules chose)."""
    if e.type.padded and t != e.type:
        e = unpadded(e)
    if catalog_types.involved(e.type, t):
        return catalog_types.convert(e, t)
    if e.type == t or (e.type.is_string and t.kind is Kind.TEXT):
        return e
    read = _text_in(e, t)
    if read is not None:
        return read
    zone = zone_rules.zoned()
    if zone is not None and zone_rules.involves(e.type, t):
        return zone_rules.cast(e, t, zone)
    if isinstance(e, Literal):
        return Literal(cast_value(e.value, e.type, t), t)
    return Cast(e, t)


def as_bpchar(e: ex.Expr, t: SqlType) -> ex.Expr:
    """An unknown string literal compared with char(n) is read as char: its trailing
    spaces do not count (char values are kept without them)."""
    if t.kind is Kind.CHAR and is_unknown(e) and isinstance(e, Literal) \
            and isinstance(e.value, str):
        return Literal(e.value.rstrip(" "), e.type)
    return e


def bpchar_padded(s: ex.Expr) -> ex.Expr:
    """A char(n) value as text padded to n, as its output function prints it: what LIKE,
    the regex operators, concat() and format() see in PostgreSQL (char values are kept
    without trailing spaces; a cast to text drops them, as PostgreSQL's does). Other
    values unchanged; a BPCHAR_PADDED value holds its spaces already."""
    if s.type.padded:
        if isinstance(s, Literal):
            return Literal(s.value, types.TEXT)
        return Cast(s, types.TEXT)  # keeps them (expr_cast strips only into bpchar)
    if s.type.kind is Kind.CHAR and s.type.length is not None:
        return fold_constants(Call(Func.RPAD, (coerce(s, types.TEXT),
                                               Literal(s.type.length, types.INT4)), types.TEXT))
    return s


def adopt(e: ex.Expr, t: SqlType) -> ex.Expr:
    """An unknown literal takes type t without its typmod, as PostgreSQL resolves it."""
    if t.is_numeric or t.is_integer and isinstance(e.value, str) and "." in e.value:
        return bind_cast(e, types.numeric(None, 0)) if t.is_numeric else coerce(e, t)
    if t.is_string or t.kind is Kind.UNKNOWN:
        return coerce(e, types.TEXT)
    return coerce(e, t)


def as_numeric(e: ex.Expr) -> ex.Expr:
    if e.type.is_numeric:
        return e
    if isinstance(e, Literal):
        return bind_cast(e, types.numeric(None, 0))
    return Cast(e, _unconstrained(e.type))


# --- errors -------------------------------------------------------------------------------
def type_name(e: ex.Expr) -> str:
    return "unknown" if is_unknown(e) else e.type.base_sql()


def no_operator(func: Func, args) -> errors.QueryError:
    op = _OP_NAMES.get(func, func.value)
    if len(args) == 1:
        return errors.UndefinedFunction(f"operator does not exist: {op} {type_name(args[0])}")
    return errors.UndefinedFunction(
        f"operator does not exist: {type_name(args[0])} {op} {type_name(args[1])}")


def text_arg(func: Func, e: ex.Expr, args) -> ex.Expr:
    """A text parameter of `func`: an unknown literal becomes text, another string type
    stays as it is, anything else is 42883 for the call over `args`."""
    if is_unknown(e):
        return coerce(e, types.TEXT)
    if not e.type.is_string:
        raise no_function(func.value, args)
    return e


def no_function(name: str, args) -> errors.QueryError:
    return errors.UndefinedFunction(
        f"function {name}({', '.join(type_name(a) for a in args)}) does not exist")


def not_unique(func: Func, a, b) -> errors.QueryError:
    return errors.QueryError(
        f"operator is not unique: {type_name(a)} {func.value} {type_name(b)}", "42725")


# --- common types -------------------------------------------------------------------------
def int_digits(t: SqlType) -> int | None:
    if t.is_integer:
        return _INT_DIGITS[t.kind]
    return None if t.precision is None else t.precision - t.scale


def numeric_type(int_digits: int | None, scale: int) -> SqlType:
    if scale > 38:
        raise errors.FeatureNotSupported(f"numeric result scale {scale} exceeds 38")
    p = None if int_digits is None else max(int_digits + scale, 1)
    return types.numeric(p, scale) if p is not None and p <= 18 else types.numeric(None, scale)


def common_type(a: SqlType, b: SqlType, what: str) -> SqlType:
    if a == b:
        return a
    if a.is_array and b.is_array:
        return types.array_of(common_type(a.elem, b.elem, what))
    if a.is_array or b.is_array:
        raise errors.DatatypeMismatch(f"{what} types {a} and {b} cannot be matched")
    if catalog_types.involved(a, b):
        t = types.common_special(a, b)
        if t is not None:
            return t
    if a.is_number and b.is_number:
        if a.is_float or b.is_float:
            return types.FLOAT4 if a.kind is b.kind is Kind.FLOAT4 else types.FLOAT8
        if a.is_integer and b.is_integer:
            return a if _INT_RANK[a.kind] >= _INT_RANK[b.kind] else b
        scale = max(a.scale or 0, b.scale or 0)
        if a.is_dynamic or b.is_dynamic:
            return types.dynamic_numeric(scale)
        ia, ib = int_digits(a), int_digits(b)
        return numeric_type(None if ia is None or ib is None else max(ia, ib), scale)
    if a.is_string and b.is_string:
        return types.TEXT
    if a.kind in TEMPORAL and b.kind in TEMPORAL:
        return a if TS_RANK[a.kind] >= TS_RANK[b.kind] else b
    raise errors.DatatypeMismatch(f"{what} types {a} and {b} cannot be matched")


def unify(exprs: list[ex.Expr], what: str) -> tuple[list[ex.Expr], SqlType]:
    """Coerce expressions to their common type (CASE, COALESCE, GREATEST, IN, ARRAY[...]):
    PostgreSQL's select_common_type over them in the order given (CASE puts its ELSE
    first), then select_common_typmod. Numerics of different scales keep each value's own
    (an unconstrained numeric)."""
    t = common_type_of(exprs, what)
    return [common_value(e, t) for e in exprs], t


def common_type_of(exprs: list[ex.Expr], what: str, nulls_typed: bool = False) -> SqlType:
    """The type expressions are resolved to where PostgreSQL calls select_common_type.
    A NULL takes the common length in CASE and COALESCE; in VALUES and set operations
    (`nulls_typed`) it has none, so the result has none either."""
    known = [e.type for e in exprs if not is_unknown(e)]
    if not known:
        return types.TEXT
    if all(u.kind in _PG_STRINGS for u in known):
        return _common_string(exprs, known[0].kind, nulls_typed)
    t = known[0]
    for u in known[1:]:
        t = common_type(t, u, what)
    if t.is_numeric and not any(e.type.is_float for e in exprs):
        out = [(adopt(e, t) if is_unknown(e) else e) for e in exprs]
        t = _common_numeric(out, t)
        if not t.is_dynamic and len({_scale(e.type) for e in out if not (
                isinstance(e, Literal) and e.value is None)}) > 1:
            # CASE, COALESCE, UNION, VALUES of numerics of different scales: in PostgreSQL
            # each value keeps its own (COALESCE(1.50, 2) is 1.50, of NULL 2)
            t = types.dynamic_numeric(t.scale)
    return t


_PG_STRINGS = (Kind.TEXT, Kind.VARCHAR, Kind.CHAR)


def _common_string(exprs: list[ex.Expr], kind: Kind, nulls_typed: bool) -> SqlType:
    """text, varchar and bpchar cast implicitly to one another, so the first input's type
    wins (text, the preferred type, only when it is that first one). The length stays only
    when every input has it (select_common_typmod: an unknown literal has none). A bpchar
    without a length holds its inputs' trailing spaces, a char(n)'s padding too, as
    PostgreSQL's: BPCHAR_PADDED unless no input can have any."""
    if kind is Kind.TEXT:
        return types.TEXT
    lengths = {None if is_unknown(e) else e.type.length for e in exprs
               if nulls_typed or not (isinstance(e, Literal) and e.value is None
                                      and e.type.kind is Kind.UNKNOWN)}
    kinds = {e.type.kind for e in exprs if not is_unknown(e)}
    length = lengths.pop() if len(lengths) == 1 and kinds == {kind} else None
    if kind is Kind.VARCHAR:
        return types.varchar(length)
    if length is not None:
        return types.char(length)
    return types.BPCHAR_PADDED if any(_may_have_spaces(e) for e in exprs) else types.BPCHAR


def _may_have_spaces(e: ex.Expr) -> bool:
    """Whether a string input's values may end in spaces that bpchar would keep."""
    if isinstance(e, Literal):
        if not isinstance(e.value, str):
            return False
        n = e.type.length if e.type.kind is Kind.CHAR else None
        return e.value.endswith(" ") or (n is not None and len(e.value) < n)
    return e.type.padded or e.type.kind is not Kind.CHAR or e.type.length is not None


def set_column_type(a: SqlType, b: SqlType) -> SqlType | None:
    """The column type of a set operation of columns typed a and b (UNKNOWN for a quoted
    constant or NULL), when PostgreSQL's select_common_type makes it a string type; None
    for other types (types.common_type)."""
    sides = [Literal(None, t) if t.kind is Kind.UNKNOWN else ex.ColumnRef(0, t) for t in (a, b)]
    known = [t for t in (a, b) if t.kind is not Kind.UNKNOWN]
    if not known or not all(t.kind in _PG_STRINGS for t in known):
        return None
    return _common_string(sides, known[0].kind, True)


def common_value(e: ex.Expr, t: SqlType) -> ex.Expr:
    """e converted to its common type t (unify): an unknown literal adopts t, a char(n)
    going into BPCHAR_PADDED keeps its padding and varchar / text their trailing spaces."""
    if t.padded:
        if isinstance(e, Literal):
            v = e.value
            if isinstance(v, str) and e.type.kind is Kind.CHAR and e.type.length:
                v = v.ljust(e.type.length)
            return Literal(v, t)
        if e.type == t:
            return e
        return Cast(bpchar_padded(e), t)
    if is_unknown(e):
        e = adopt(e, t)
    if e.type.kind is Kind.CHAR and t.kind is not Kind.CHAR and t.is_string:
        # typed as t, so that a CASE folded to this branch prints as t does (no padding)
        return bind_cast(e, t)
    return coerce(e, t)


def unpadded(e: ex.Expr) -> ex.Expr:
    """A BPCHAR_PADDED value as bpchar's semantics see it, its trailing spaces dropped:
    what comparisons, grouping, length() and casts take. Other values unchanged."""
    if not e.type.padded:
        return e
    if isinstance(e, Literal):
        return Literal(None if e.value is None else e.value.rstrip(" "), types.BPCHAR)
    return Cast(e, types.BPCHAR)


def _scale(t: SqlType) -> int | None:
    return t.scale if t.is_numeric else (0 if t.is_integer else None)


def _common_numeric(exprs, t: SqlType) -> SqlType:
    """Literals adopt tight numeric types; the common type must still hold them."""
    for e in exprs:
        if e.type.is_numeric or e.type.is_integer:
            t = common_type(t, e.type if e.type.is_numeric else _unconstrained(e.type), "")
    return t


def as_bool(e: ex.Expr, what: str) -> ex.Expr:
    if e.type.kind is Kind.BOOL:
        return e
    if is_unknown(e):
        return coerce(e, types.BOOL)
    raise errors.DatatypeMismatch(f"argument of {what} must be type boolean, not type {e.type}")


def compare_operands(func: Func, a: ex.Expr, b: ex.Expr) -> tuple[ex.Expr, ex.Expr]:
    """Both sides of a comparison in comparable types. Numerics of different scales stay as
    they are (the evaluator aligns them); a literal fitting the other side's integer type
    is folded to it rather than casting the column."""
    ta, tb = a.type, b.type
    if catalog_types.involved(ta, tb):  # oid, reg*, catalog arrays
        typed = catalog_types.compare_operands(func, a, b)
        if typed is None:
            raise no_operator(func, (a, b))
        return typed
    if ta.is_number and tb.is_number:
        if ta.is_float or tb.is_float:
            t = types.FLOAT4 if ta.kind is tb.kind is Kind.FLOAT4 else types.FLOAT8
            return coerce(a, t), coerce(b, t)
        if ta.is_numeric or tb.is_numeric:
            return as_numeric(a), as_numeric(b)
        if ta != tb:
            for x, y in ((a, b), (b, a)):
                if isinstance(y, Literal) and int_fits(y.value, x.type):
                    return (x, coerce(y, x.type)) if x is a else (coerce(y, x.type), x)
            t = common_type(ta, tb, "")
            return coerce(a, t), coerce(b, t)
        return a, b
    if ta.is_string and tb.is_string:
        if {ta.kind, tb.kind} == {Kind.CHAR, Kind.VARCHAR}:
            # PostgreSQL's bpchar operators take varchar (an implicit cast to bpchar, which
            # drops its trailing spaces): 'ab'::char(5) = 'ab  '::varchar is true.
            return tuple(coerce(x, types.char(None)) if x.type.kind is Kind.VARCHAR else x
                         for x in (a, b))
        return a, b
    if ta.kind in TEMPORAL and tb.kind in TEMPORAL:
        for x, y in ((a, b), (b, a)):  # date vs midnight: compare dates, not every row cast
            if x.type.kind is Kind.DATE and isinstance(y, Literal) \
                    and isinstance(y.value, dt.datetime) and y.type.kind is not Kind.DATE \
                    and y.value.time() == dt.time(0):
                day = Literal(y.value.date(), types.DATE)
                return (x, day) if x is a else (day, x)
        t = common_type(ta, tb, "")
        return coerce(a, t), coerce(b, t)
    if ta.kind is tb.kind and ta.kind in (Kind.BOOL, Kind.INTERVAL, Kind.TIME,
                                          Kind.TIMETZ) + types.BINARY_KINDS:
        return a, b
    raise no_operator(func, (a, b))
