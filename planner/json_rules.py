"""Typing of the json and jsonb operators and functions, as PostgreSQL resolves them.

planner/bind_json.py reads the syntax and calls these; typing_rules hands comparisons,
`||` and `-` with a json operand here. An unknown literal next to a jsonb operand is
jsonb (`j @> '{"a": 1}'`); the key of `->` is text, its index int4. json has no equality
or order (42883, as PostgreSQL); jsonb compares by its sort key (json_values.sort_key).
Calls are not folded in Python: the kernels (segment/kernels/expr_json.py) compute
constants on one row.
"""

from __future__ import annotations

from planner import errors, types, zone_rules
from planner import expr as ex
from planner.coercion import (bind_cast, bind_input, coerce, is_unknown, no_function,
                               type_name)
from planner.expr import Call, Func, Literal
from planner.types import Kind, SqlType

JSON_KINDS = (Kind.JSON, Kind.JSONB)
TEXT_ARRAY = types.array_of(types.TEXT)


def involved(*args: ex.Expr) -> bool:
    return any(a.type.kind in JSON_KINDS for a in args)


def _no_operator(op: str, a: ex.Expr, b: ex.Expr) -> errors.QueryError:
    return errors.UndefinedFunction(
        f"operator does not exist: {type_name(a)} {op} {type_name(b)}",
        hint="No operator matches the given name and argument types. You might need to "
             "add explicit type casts.")


def as_json(e: ex.Expr, t: SqlType) -> ex.Expr:
    """An unknown literal read as json/jsonb (its text validated now)."""
    return bind_cast(e, t) if is_unknown(e) else e


def sort_key(e: ex.Expr) -> ex.Expr:
    return Call(Func.JSONB_SORT_KEY, (e,), SqlType(Kind.BYTEA))


def rule_compare(func: Func, a: ex.Expr, b: ex.Expr) -> ex.Expr:
    """= <> < <= > >= of jsonb (by PostgreSQL's jsonb order); json has none."""
    if a.type.kind is Kind.JSONB or b.type.kind is Kind.JSONB:
        x, y = as_json(a, types.JSONB), as_json(b, types.JSONB)
        if x.type.kind is Kind.JSONB and y.type.kind is Kind.JSONB:
            return Call(func, (sort_key(x), sort_key(y)), types.BOOL)
    raise _no_operator(func.value, a, b)


def rule_get(func: Func, x: ex.Expr, key: ex.Expr, op: str) -> ex.Expr:
    """x -> key | index, x ->> key | index."""
    if is_unknown(x) and x.value is not None:
        raise errors.QueryError(f"operator is not unique: unknown {op} {type_name(key)}",
                                "42725")
    if x.type.kind not in JSON_KINDS:
        raise _no_operator(op, x, key)
    if is_unknown(key) or key.type.is_string:
        key = coerce(key, types.TEXT)
    elif key.type.kind in (Kind.INT2, Kind.INT4):
        key = coerce(key, types.INT4)
    else:
        raise _no_operator(op, x, key)
    out = x.type if func is Func.JSON_GET else types.TEXT
    return Call(func, (x, key), out)


def rule_delete_path(x: ex.Expr, path: ex.Expr, op: str = "#-") -> ex.Expr:
    """x #- path, jsonb_delete_path(x, path): jsonb and text[] (an unknown literal x is
    jsonb, the only operator #- there is)."""
    if is_unknown(x):
        x = bind_cast(x, types.JSONB)
    if x.type.kind is not Kind.JSONB or not (
            is_unknown(path) or path.type.is_array and path.type.elem.is_string):
        if op != "#-":
            raise no_function(op, [x, path])
        raise _no_operator(op, x, path)
    if is_unknown(path):
        path = bind_cast(path, TEXT_ARRAY)
    return Call(Func.JSONB_DELETE_PATH, (x, path), types.JSONB)


def rule_path(func: Func, x: ex.Expr, path: ex.Expr, op: str) -> ex.Expr:
    """x #> path, x #>> path (path text[])."""
    if x.type.kind not in JSON_KINDS:
        raise _no_operator(op, x, path)
    if is_unknown(path):
        path = bind_cast(path, TEXT_ARRAY)
    elif not (path.type.is_array and path.type.elem.is_string):
        raise _no_operator(op, x, path)
    out = x.type if func is Func.JSON_PATH else types.TEXT
    return Call(func, (x, path), out)


def jsonb_operands(op: str, a: ex.Expr, b: ex.Expr) -> tuple[ex.Expr, ex.Expr]:
    """Both operands of a jsonb-only operator (@> <@ ||) as jsonb."""
    x, y = as_json(a, types.JSONB), as_json(b, types.JSONB)
    if x.type.kind is not Kind.JSONB or y.type.kind is not Kind.JSONB:
        raise _no_operator(op, a, b)
    return x, y


def rule_contains(a: ex.Expr, b: ex.Expr, op: str) -> ex.Expr:
    x, y = jsonb_operands(op, a, b)
    return Call(Func.JSONB_CONTAINS, (x, y) if op == "@>" else (y, x), types.BOOL)


def jsonb_concat(a: ex.Expr, b: ex.Expr) -> bool:
    """Whether `a || b` is jsonb's (both jsonb or unknown); with text it is text's."""
    return involved(a, b) and all(x.type.kind is Kind.JSONB or is_unknown(x) for x in (a, b)) \
        and Kind.JSONB in (a.type.kind, b.type.kind)


def rule_concat(a: ex.Expr, b: ex.Expr) -> ex.Expr:
    x, y = jsonb_operands("||", a, b)
    return Call(Func.JSONB_CONCAT, (x, y), types.JSONB)


def rule_delete(a: ex.Expr, b: ex.Expr) -> ex.Expr:
    """jsonb - text (a key, or string elements), jsonb - int (an index)."""
    if a.type.kind is not Kind.JSONB:
        raise _no_operator("-", a, b)
    if is_unknown(b) or b.type.is_string:
        b = coerce(b, types.TEXT)
    elif b.type.kind in (Kind.INT2, Kind.INT4):
        b = coerce(b, types.INT4)
    elif b.type.is_array and b.type.elem.is_string:
        raise errors.FeatureNotSupported("jsonb - text[]")
    else:
        raise _no_operator("-", a, b)
    return Call(Func.JSONB_DELETE, (a, b), types.JSONB)


def rule_exists(func: Func, a: ex.Expr, b: ex.Expr, op: str) -> ex.Expr:
    """jsonb ? text, jsonb ?| text[], jsonb ?& text[]."""
    x = as_json(a, types.JSONB)
    if x.type.kind is not Kind.JSONB:
        raise _no_operator(op, a, b)
    if func is Func.JSONB_EXISTS:
        if not (is_unknown(b) or b.type.is_string):
            raise _no_operator(op, a, b)
        return Call(func, (x, coerce(b, types.TEXT)), types.BOOL)
    if is_unknown(b):
        b = bind_cast(b, TEXT_ARRAY)
    if not (b.type.is_array and b.type.elem.is_string):
        raise _no_operator(op, a, b)
    return Call(func, (x, b), types.BOOL)


# --- functions ----------------------------------------------------------------------------
def _one_json(name: str, args, t: SqlType) -> ex.Expr:
    if len(args) != 1:
        raise no_function(name, args)
    x = as_json(args[0], t)
    if x.type.kind is not t.kind:
        raise no_function(name, args)
    return x


_RESULTS = {Func.JSON_TYPEOF: types.TEXT, Func.JSONB_TYPEOF: types.TEXT,
            Func.JSON_ARRAY_LENGTH: types.INT4, Func.JSONB_ARRAY_LENGTH: types.INT4,
            Func.JSONB_STRIP_NULLS: types.JSONB, Func.JSONB_PRETTY: types.TEXT,
            Func.JSON_STRIP_NULLS: types.JSON}


def rule_function(func: Func, name: str, args: list) -> ex.Expr:
    """The typed call of a json function named `name` (as written) over bound args."""
    zone_rules.refuse_in_json(name, args)
    jsonb = "jsonb" in name
    t = types.JSONB if jsonb else types.JSON
    if func in _RESULTS:
        return Call(func, (_one_json(name, args, t),), _RESULTS[func])
    if func in (Func.TO_JSON, Func.TO_JSONB):
        if len(args) != 1:
            raise no_function(name, args)
        x = coerce(args[0], types.TEXT) if is_unknown(args[0]) else args[0]
        return Call(func, (x,), t)
    if func in (Func.JSON_BUILD_OBJECT, Func.JSONB_BUILD_OBJECT, Func.JSON_BUILD_ARRAY,
                Func.JSONB_BUILD_ARRAY):
        out = tuple(coerce(a, types.TEXT) if is_unknown(a) else a for a in args)
        return Call(func, out, t)
    if func in (Func.JSON_PATH, Func.JSON_PATH_TEXT):  # json(b)_extract_path(_text)
        if not args:
            raise no_function(name, args)
        x = as_json(args[0], t)
        if x.type.kind is not t.kind:
            raise no_function(name, args)
        steps = [coerce(a, types.TEXT) if is_unknown(a) or a.type.is_string else None
                 for a in args[1:]]
        if any(s is None for s in steps):
            raise no_function(name, args)
        path = Call(Func.ARRAY, tuple(steps), TEXT_ARRAY)
        return Call(func, (x, path), t if func is Func.JSON_PATH else types.TEXT)
    if func is Func.JSONB_DELETE_PATH:
        if len(args) != 2:
            raise no_function(name, args)
        return rule_delete_path(args[0], args[1], name)
    if func in (Func.JSONB_SET, Func.JSONB_INSERT):
        # jsonb_set(.., create_if_missing true) and jsonb_insert(.., insert_after false)
        if len(args) not in (3, 4):
            raise no_function(name, args)
        x, path, new = as_json(args[0], t), args[1], as_json(args[2], t)
        create = args[3] if len(args) == 4 else ex.Literal(func is Func.JSONB_SET, types.BOOL)
        if is_unknown(path):
            path = bind_cast(path, TEXT_ARRAY)
        if is_unknown(create):
            create = coerce(create, types.BOOL)
        if x.type.kind is not Kind.JSONB or new.type.kind is not Kind.JSONB or not (
                path.type.is_array and path.type.elem.is_string) or \
                create.type.kind is not Kind.BOOL:
            raise no_function(name, args)
        return Call(func, (x, path, new, create), types.JSONB)
    raise errors.FeatureNotSupported(f"function {name}()")


# --- set-returning functions ---------------------------------------------------------------
SRFS = ("json_array_elements", "jsonb_array_elements", "json_array_elements_text",
        "jsonb_array_elements_text", "json_each", "jsonb_each", "json_each_text",
        "jsonb_each_text", "json_object_keys", "jsonb_object_keys")


RECORD_SRFS = ("json_to_record", "jsonb_to_record", "json_to_recordset", "jsonb_to_recordset")
# Rows of the row type of the table or view their first argument names
# (json_populate_record(NULL::t, j)): the columns rule_record reads, from the catalog.
POPULATE_SRFS = ("json_populate_record", "jsonb_populate_record", "json_populate_recordset",
                 "jsonb_populate_recordset")
# Functions of FROM read by bind_lateral (a ProjectSet of the arrays the rules above make).
FROM_SRFS = SRFS + RECORD_SRFS + POPULATE_SRFS


def rule_record(name: str, args: list, columns: list[tuple[str, SqlType]],
                defaults: list[ex.Expr] | None = None
                ) -> list[tuple[ex.Expr, SqlType | None]]:
    """json(b)_to_record(set)(x) AS a(c1 t1, ...): one array per declared column, its
    elements the rows' values of that column. A field is read as PostgreSQL's
    populate_record_field reads it: a json(b) column takes the value as it is; any other
    type reads the value's text (a string's characters, else its JSON text) with the
    type's input function, so a varchar(n) too long is 22001, not cut; JSON null is NULL,
    a missing key NULL or its field of `defaults` (json(b)_populate_record's base record,
    each of the column's type: read back from its text, as a value PostgreSQL's output
    and input functions round-trip). An array column's array holds array_in's text of
    each value (Func.JSON_RECORD_ARRAY: a JSON array's elements, or a string as
    written), which the caller casts to the column's type once unnested (the type paired
    with it; None: the array is of the column's type). Record columns (PostgreSQL turns
    JSON objects into them) are 0A000."""
    t = types.JSONB if name.startswith("jsonb") else types.JSON
    x = _one_json(name, args, t)
    fname = Literal(name, types.TEXT)  # recordset or not, and the name its errors say
    out: list[tuple[ex.Expr, SqlType | None]] = []
    for i, (column, ct) in enumerate(columns):
        if ct.kind is Kind.RECORD or (ct.is_array and ct.elem.kind is Kind.RECORD):
            raise errors.FeatureNotSupported(
                f"{name}() column \"{column}\" of type {ct} (JSON objects as records)")
        field_args = (x, Literal(column, types.TEXT), fname)
        if ct.is_array:
            field_args += (Literal(ct.elem.kind in (Kind.JSON, Kind.JSONB), types.BOOL),)
        if defaults is not None:
            field_args += (bind_cast(defaults[i], types.TEXT),)
        if ct.is_array:
            out.append((Call(Func.JSON_RECORD_ARRAY, field_args, TEXT_ARRAY), ct))
            continue
        if ct.kind in (Kind.JSON, Kind.JSONB):  # the kernel makes json's text jsonb's
            out.append((Call(Func.JSON_RECORD_FIELD, field_args, types.array_of(ct)), None))
            continue
        field = Call(Func.JSON_RECORD_FIELD, field_args, TEXT_ARRAY)
        out.append((bind_input(field, types.array_of(ct), column), None))
    return out


def rule_srf(name: str, args: list) -> list[tuple[ex.Expr, str | None]]:
    """The arrays whose elements are the rows of the set-returning json function `name`
    (a ProjectSet unnests them in lockstep), each with its column's name (None: named
    after the function or its alias, as a function without OUT parameters)."""
    t = types.JSONB if name.startswith("jsonb") else types.JSON
    x = _one_json(name, args, t)
    elem = types.TEXT if name.endswith("_text") else t
    if name.endswith(("array_elements", "array_elements_text")):
        return [(Call(Func.JSON_ELEMENTS, (x,), types.array_of(elem)), "value")]
    if name.endswith("object_keys"):
        return [(Call(Func.JSON_OBJECT_KEYS, (x,), TEXT_ARRAY), None)]
    keys = Func.JSON_EACH_TEXT_KEYS if name.endswith("_text") else Func.JSON_EACH_KEYS
    return [(Call(keys, (x,), TEXT_ARRAY), "key"),
            (Call(Func.JSON_EACH_VALUES, (x,), types.array_of(elem)), "value")]


# --- keys ---------------------------------------------------------------------------------
def check_keys(ts, what: str) -> None:
    """GROUP BY / DISTINCT / PARTITION BY keys: json has no equality (42883, as
    PostgreSQL). jsonb keys are grouped by their sort keys (planner/json_grouping.py)."""
    if any(t.kind is Kind.JSON for t in ts):
        raise errors.UndefinedFunction("could not identify an equality operator for type json")


def check_order(ts) -> None:
    """ORDER BY keys: json has no order (42883); jsonb sorts by its sort key."""
    if any(t.kind is Kind.JSON for t in ts):
        raise errors.UndefinedFunction("could not identify an ordering operator for type json")
