"""Typing rules of the array operators and functions, as PostgreSQL 15 resolves them.

Registered into planner/typing_rules.py's RULES. Arrays are one-dimensional; an unknown
literal next to an array takes the array's type ('{3}' in `a || '{3}'`) or its element
type (`array_append(a, '3')`), as PostgreSQL's polymorphic resolution does.
"""

from __future__ import annotations

from planner import datetime_rules, errors, fold, padded_bpchar, types, zone_rules
from planner import expr as ex
from planner.coercion import (
    adopt,
    coerce,
    common_type,
    compare_operands,
    is_unknown,
    no_function,
    no_operator,
    text_arg,
    unify,
    unpadded,
)
from planner.expr import Call, Func, Literal
from planner.temporal import TEMPORAL
from planner.types import Kind, SqlType

_OPERATORS = (Func.ARRAY_CONTAINS, Func.ARRAY_CONTAINED, Func.ARRAY_OVERLAP)


def as_array(e: ex.Expr, t: SqlType) -> ex.Expr:
    """e (an array or an unknown literal) as array type t."""
    if is_unknown(e):
        return coerce(adopt(e, t), t)
    if e.type == t:
        return e
    return coerce(e, t)


def _arrays(func: Func, a: ex.Expr, b: ex.Expr, what: str) -> tuple[ex.Expr, ex.Expr, SqlType]:
    """Two arrays (either may be an unknown literal) in their common array type."""
    if is_unknown(a) and is_unknown(b):
        raise errors.QueryError("could not determine polymorphic type because input has "
                                "type unknown", "42804")
    if not ((a.type.is_array or is_unknown(a)) and (b.type.is_array or is_unknown(b))):
        raise no_operator(func, (a, b)) if func in _OPERATORS else no_function(func.value, (a, b))
    ta = a.type if a.type.is_array else b.type
    tb = b.type if b.type.is_array else ta
    if ta.elem != tb.elem:
        # The operators take anyarray: int[] = bigint[] does not exist (only the element's
        # typmod and the string kinds meet); array_cat & co. take anycompatiblearray.
        strict = func in _OPERATORS or func in (Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT,
                                               Func.GE)
        if strict and ta.elem.kind is not tb.elem.kind and not (
                ta.elem.is_string and tb.elem.is_string):
            raise no_operator(func, (a, b))
        try:
            t = types.array_of(common_type(ta.elem, tb.elem, what))
        except errors.QueryError:
            raise no_function(func.value, (a, b)) from None
    else:
        t = ta if ta.kind is Kind.ARRAY else types.array_of(ta.elem)
    return as_array(a, t), as_array(b, t), t


def _element(e: ex.Expr, t: SqlType, what: str) -> ex.Expr:
    """e as an element of type t."""
    if is_unknown(e):
        return coerce(adopt(e, t), t)
    if e.type == t or (e.type.is_string and t.is_string):
        return e if e.type == t else coerce(e, t)
    common_type(e.type, t, what)  # 42804 when they do not match
    return coerce(e, t)


def _rule_constructor(func: Func, args) -> ex.Expr:
    if not args:
        raise errors.QueryError("cannot determine type of empty array", "42P18",
                                hint="Explicitly cast to the desired type, for example "
                                     "ARRAY[]::integer[].")
    out, t = unify(list(args), "ARRAY")  # numerics of different scales keep theirs
    if t.is_array:
        raise errors.FeatureNotSupported("multidimensional arrays")
    if t.kind in types.ARRAY_KINDS or t.kind not in types.ELEMENT_KINDS:
        raise errors.FeatureNotSupported(f"arrays of {t}")
    return Call(func, tuple(out), types.array_of(t))


def _need_array(func: Func, a: ex.Expr, args) -> None:
    if not a.type.is_array:
        if is_unknown(a):
            raise errors.QueryError("could not determine polymorphic type because input has "
                                    "type unknown", "42804")
        raise no_function(func.value, args)


def _int(e: ex.Expr, what: str) -> ex.Expr:
    if is_unknown(e):
        return coerce(adopt(e, types.INT4), types.INT4)
    if not e.type.is_integer:
        raise errors.DatatypeMismatch(f"{what} must have type integer")
    return coerce(e, types.INT4)


def _rule_subscript(func: Func, args) -> ex.Expr:
    a, i = args
    if not a.type.is_array:
        raise errors.DatatypeMismatch(
            f"cannot subscript type {'unknown' if is_unknown(a) else a.type} because it does "
            "not support subscripting")
    return Call(func, (a, _int(i, "array subscript")), a.type.elem)


def _rule_slice(func: Func, args) -> ex.Expr:
    a, lo, hi = args
    if not a.type.is_array:
        raise errors.DatatypeMismatch(
            f"cannot subscript type {a.type} because it does not support subscripting")
    # an omitted bound arrives as an UNKNOWN NULL (the binder types written ones as int4)
    bounds = tuple(b if omitted(b) else _int(b, "array subscript") for b in (lo, hi))
    return Call(func, (a,) + bounds, types.array_of(a.type.elem))


def omitted(b: ex.Expr) -> bool:
    return isinstance(b, Literal) and b.value is None and b.type.kind is Kind.UNKNOWN


def _rule_dimension(func: Func, args) -> ex.Expr:
    """array_length / array_upper / array_lower (a, dim) and cardinality / array_ndims /
    array_dims (a)."""
    one = func in (Func.CARDINALITY, Func.ARRAY_NDIMS, Func.ARRAY_DIMS)
    if len(args) != (1 if one else 2):
        raise no_function(func.value, args)
    _need_array(func, args[0], args)
    out = (args[0],) if one else (args[0], _int_arg(func, args[1], args))
    return Call(func, out, types.TEXT if func is Func.ARRAY_DIMS else types.INT4)


def _int_arg(func: Func, e: ex.Expr, args) -> ex.Expr:
    if is_unknown(e):
        return coerce(adopt(e, types.INT4), types.INT4)
    if not e.type.is_integer:
        raise no_function(func.value, args)
    return coerce(e, types.INT4)


def _rule_to_string(func: Func, args) -> ex.Expr:
    if len(args) not in (2, 3):
        raise no_function(func.value, args)
    _need_array(func, args[0], args)
    return Call(func, (args[0],) + tuple(text_arg(func, a, args) for a in args[1:]),
                types.TEXT)


def _rule_string_to_array(func: Func, args) -> ex.Expr:
    if len(args) not in (2, 3):
        raise no_function(func.value, args)
    return Call(func, tuple(text_arg(func, a, args) for a in args), types.array_of(types.TEXT))


def _rule_cat(func: Func, args) -> ex.Expr:
    if len(args) != 2:
        raise no_function(func.value, args)
    a, b, t = _arrays(func, args[0], args[1], "ARRAY")
    return Call(func, (a, b), t)


def _rule_append(func: Func, args) -> ex.Expr:
    if len(args) != 2:
        raise no_function(func.value, args)
    arr, x = (args[0], args[1]) if func is Func.ARRAY_APPEND else (args[1], args[0])
    if is_unknown(arr) and not is_unknown(x) and x.type.kind in types.ELEMENT_KINDS:
        arr = as_array(arr, types.array_of(x.type))
    _need_array(func, arr, args)
    t = arr.type if arr.type.kind is Kind.ARRAY else types.array_of(arr.type.elem)
    try:
        x = _element(x, t.elem, "ARRAY")
    except errors.QueryError:
        raise no_function(func.value, args) from None
    arr = coerce(arr, t)
    return Call(func, (arr, x) if func is Func.ARRAY_APPEND else (x, arr), t)


def _rule_position(func: Func, args) -> ex.Expr:
    if len(args) not in (2, 3):
        raise no_function(func.value, args)
    _need_array(func, args[0], args)
    try:
        x = _element(args[1], args[0].type.elem, "ARRAY")
    except errors.QueryError:
        raise no_function(func.value, args) from None
    rest = tuple(_int_arg(func, a, args) for a in args[2:])
    return Call(func, (args[0], x) + rest, types.INT4)


_EDIT_ARITY = {Func.ARRAY_REMOVE: 2, Func.ARRAY_REPLACE: 3, Func.ARRAY_POSITIONS: 2}


def _rule_edit(func: Func, args) -> ex.Expr:
    """array_remove(a, x), array_replace(a, from, to), array_positions(a, x): PostgreSQL's
    anycompatiblearray and anycompatible, so the elements and the values take their
    common type (array_remove(ARRAY[1, 2], 1.5) compares numerics)."""
    if len(args) != _EDIT_ARITY[func]:
        raise no_function(func.value, args)
    arr, vals = args[0], list(args[1:])
    known = [v for v in vals if not is_unknown(v) and v.type.kind in types.ELEMENT_KINDS]
    if is_unknown(arr) and known:
        arr = as_array(arr, types.array_of(known[0].type))
    _need_array(func, arr, args)
    t = arr.type.elem
    try:
        for v in known:
            if v.type != t and not (v.type.is_string and t.is_string):
                t = common_type(t, v.type, "ARRAY")
    except errors.DatatypeMismatch:
        raise no_function(func.value, args) from None
    if t != arr.type.elem:
        if t.is_numeric and t.scale > (arr.type.elem.scale or 0):
            # PostgreSQL's numeric[] keeps each element's scale ({1,2}); raympp's one
            # scale would print {1.0,2.0}
            raise errors.FeatureNotSupported(
                f"{func.value}() of a {arr.type} with a value of more decimal places")
        arr = coerce(arr, types.array_of(t))
    vals = [_element(v, t, "ARRAY") for v in vals]  # an unknown literal's 22P02
    out = types.array_of(types.INT4) if func is Func.ARRAY_POSITIONS else arr.type
    return Call(func, (arr, *vals), out)


def _rule_operator(func: Func, args) -> ex.Expr:
    a, b, _t = _arrays(func, args[0], args[1], "ARRAY")
    return Call(func, (a, b), types.BOOL)


def rule_compare(func: Func, a: ex.Expr, b: ex.Expr) -> ex.Expr:
    """Comparisons of arrays (an unknown literal side is read as the other's type): = and
    <> element by element with NULL elements equal; < <= > >= by PostgreSQL's order of
    arrays, as the bytes of their sort keys (segment/kernels/expr_pgarray.py sort_key)."""
    if not ((a.type.is_array or is_unknown(a)) and (b.type.is_array or is_unknown(b))):
        raise no_operator(func, (a, b))
    x, y, _t = _arrays(func, a, b, "ARRAY")
    if func not in (Func.EQ, Func.NE):
        if x.type.elem.kind is Kind.INTERVAL:
            raise errors.FeatureNotSupported("ordering comparisons of interval arrays")
        keys = tuple(Call(Func.ARRAY_SORT_KEY, (v,), SqlType(Kind.BYTEA)) for v in (x, y))
        return Call(func, keys, types.BOOL)
    return Call(Func.ARRAY_EQ if func is Func.EQ else Func.ARRAY_NE, (x, y), types.BOOL)


def rule_quantified(op: Func, x: ex.Expr, arr: ex.Expr, all_: bool) -> ex.Expr:
    """x op ANY|ALL (arr): x and the elements in their common type."""
    if is_unknown(arr):
        if is_unknown(x):
            arr = as_array(arr, types.array_of(types.TEXT))
        else:
            arr = as_array(arr, types.array_of(x.type if x.type.kind in types.ELEMENT_KINDS
                                               else types.TEXT))
    if not arr.type.is_array:
        raise errors.DatatypeMismatch("op ANY/ALL (array) requires array on right side")
    padded_bpchar.no_padded_elements([arr.type])
    x = unpadded(x)
    if {x.type.kind, arr.type.elem.kind} == {Kind.CHAR, Kind.VARCHAR}:
        # bpchar = varchar is bpchar's: the varchar side loses its trailing spaces, as
        # compare_operands
        if x.type.kind is Kind.VARCHAR:
            x = coerce(x, types.BPCHAR)
        else:
            arr = coerce(arr, types.array_of(types.BPCHAR))
    elem = arr.type.elem
    if is_unknown(x):
        x = coerce(adopt(x, elem), elem)
    if x.type != elem and not (x.type.is_string and elem.is_string):
        t = common_type(x.type, elem, "ANY")
        if t.kind in types.ELEMENT_KINDS and t != elem:
            arr = coerce(arr, types.array_of(t))
        elem = arr.type.elem
        if t != x.type:
            x = coerce(x, t)
    # the comparison must exist (42883 otherwise), typed as the comparison rule types it
    compare_operands(op, x, Literal(None, elem))
    name = Literal(op.value, types.TEXT)
    return Call(Func.ALL_OF if all_ else Func.ANY_OF, (name, x, arr), types.BOOL)


def _rule_sorted_mode(func: Func, args) -> ex.Expr:
    """mode()'s element of its sorted array_agg: the element type."""
    if len(args) != 1 or not args[0].type.is_array:
        raise no_function("mode", args)
    return Call(func, (args[0],), args[0].type.elem)


def _rule_list_filter(func: Func, args) -> ex.Expr:
    """array_agg(x) FILTER (WHERE c)'s elements of x where c is true: x's array type."""
    if len(args) != 2 or not args[0].type.is_array or args[1].type != types.array_of(types.BOOL):
        raise no_function("array_agg", args)
    return Call(func, (args[0], args[1]), args[0].type)


def _rule_list_distinct(func: Func, args) -> ex.Expr:
    """array_agg(DISTINCT x)'s sorted elements, each once: x's array type."""
    if len(args) != 1 or not args[0].type.is_array:
        raise no_function("array_agg", args)
    return Call(func, (args[0],), args[0].type)


def _rule_percentiles(func: Func, args) -> ex.Expr:
    """percentile_cont / _disc of a constant array of fractions over a sorted array: an
    array of its element type (float8 for percentile_cont, as its input is cast)."""
    fractions = fold.fold_constants(args[1]) if len(args) == 2 else None
    if not isinstance(fractions, Literal) or not args[0].type.is_array \
            or fractions.type != types.array_of(types.FLOAT8):
        raise errors.InternalError(f"{func.value} takes an array and constant fractions")
    return Call(func, (args[0], fractions), args[0].type)


def _rule_regr(func: Func, args) -> ex.Expr:
    """regr_* / corr / covar_* over float8 arrays of x and y: float8."""
    if len(args) != 3 or not isinstance(args[2], Literal) or any(
            a.type != types.array_of(types.FLOAT8) for a in args[:2]):
        raise errors.InternalError("?regr takes two float8 arrays and a name")
    return Call(func, tuple(args), types.FLOAT8)


def _rule_series(func: Func, args) -> ex.Expr:
    """generate_series(start, stop[, step]) of integers: int4 unless an argument is int8,
    as PostgreSQL resolves it; of timestamps with an interval step: timestamp, or
    timestamptz when an argument is one or a date (datetime_rules.timestamp_args); the
    numeric signature is 0A000."""
    if len(args) not in (2, 3):
        raise no_function("generate_series", args)
    if any(not is_unknown(a) and a.type.kind in TEMPORAL + (Kind.INTERVAL,) for a in args):
        if len(args) != 3:
            raise no_function("generate_series", args)
        start, stop = datetime_rules.timestamp_args("generate_series", args[:2])
        step = adopt(args[2], types.INTERVAL) if is_unknown(args[2]) else args[2]
        if step.type.kind is not Kind.INTERVAL:
            raise no_function("generate_series", args)
        zone = zone_rules.zoned() if start.type.kind is Kind.TIMESTAMPTZ else None
        if zone is not None and not (isinstance(step, Literal) and step.value is not None
                                     and step.value.months == step.value.days == 0):
            return zone_rules.tstz_series(start, stop, step, zone)
        return Call(func, (start, stop, step), types.array_of(start.type))
    args = [coerce(adopt(a, types.INT4), types.INT4) if is_unknown(a) else a for a in args]
    if not all(a.type.is_integer for a in args):
        raise errors.FeatureNotSupported(
            "generate_series(" + ", ".join(str(a.type) for a in args) + ") with "
            "non-constant arguments (only integers)")
    t = types.INT8 if any(a.type.kind is Kind.INT8 for a in args) else types.INT4
    return Call(func, tuple(coerce(a, t) for a in args), types.array_of(t))


RULES = {
    Func.ARRAY: _rule_constructor,
    Func.SERIES: _rule_series,
    Func.SORTED_MODE: _rule_sorted_mode,
    Func.LIST_FILTER: _rule_list_filter,
    Func.LIST_DISTINCT: _rule_list_distinct,
    Func.PERCENTILE_CONT_MULTI: _rule_percentiles,
    Func.PERCENTILE_DISC_MULTI: _rule_percentiles,
    Func.REGR: _rule_regr,
    Func.SUBSCRIPT: _rule_subscript,
    Func.SLICE: _rule_slice,
    **{f: _rule_dimension for f in (Func.ARRAY_LENGTH, Func.CARDINALITY, Func.ARRAY_UPPER,
                                    Func.ARRAY_LOWER, Func.ARRAY_NDIMS, Func.ARRAY_DIMS)},
    Func.ARRAY_TO_STRING: _rule_to_string,
    Func.STRING_TO_ARRAY: _rule_string_to_array,
    Func.ARRAY_CAT: _rule_cat,
    Func.ARRAY_APPEND: _rule_append,
    Func.ARRAY_PREPEND: _rule_append,
    Func.ARRAY_POSITION: _rule_position,
    **{f: _rule_edit for f in _EDIT_ARITY},
    **{f: _rule_operator for f in _OPERATORS},
}
# Array calls are computed by the batch kernels, constants on one row (never folded in
# Python: several take NULL arguments without being NULL).
FUNCS = frozenset(RULES) | {Func.ARRAY_EQ, Func.ARRAY_NE, Func.ANY_OF, Func.ALL_OF}
