"""json and jsonb over batches: casts, operators, functions and the jsonb sort key.

Values are Arrow strings (planner/json_values.py says which text). No pyarrow.compute
kernel parses JSON, so every function here runs the Python function of planner/json_ops.py
(or json_values.py) once per DISTINCT combination of its arguments in the batch
(`per_distinct`: each argument dictionary-encoded, the combinations numbered, one call
each, the results spread back by the inverse index), never once per row. What Arrow can
do itself stays vectorized: SQL values become JSON text by the cast kernels' text output
(numbers and booleans need nothing more), json_build_object/array join their pieces with
binary_join_element_wise, and arrays of any type become JSON arrays by joining their
elements' JSON texts (binary_join over the list).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, json_ops, json_values, types, values
from planner.expr import Call, Func
from planner.types import Kind, SqlType
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_cast as xcast

_TEXT_OUT = (Kind.INT2, Kind.INT4, Kind.INT8, Kind.NUMERIC)


def per_distinct(fn, args: list, n: int, out: SqlType, strict: bool = True) -> xa.Datum:
    """fn(*python values) once per distinct row of args; NULL where an argument is NULL
    (strict functions) or where fn returns None."""
    if all(isinstance(a, pa.Scalar) for a in args):
        vals = [a.as_py() for a in args]
        r = None if strict and any(v is None for v in vals) else fn(*vals)
        return xcast.to_arrow([r], out)[0]
    codes = np.zeros(n, dtype=np.int64)
    lookups = []
    for a in args:
        if isinstance(a, pa.Scalar):
            lookups.append((None, [a.as_py()]))
            continue
        if pa.types.is_list(a.type) or pa.types.is_large_list(a.type):
            idx, values = np.arange(n, dtype=np.int64), a.to_pylist()  # lists: by row
        else:
            enc = a if pa.types.is_dictionary(a.type) else pc.dictionary_encode(a)
            values = enc.dictionary.to_pylist() + [None]
            idx = pc.fill_null(enc.indices, len(values) - 1).to_numpy(
                zero_copy_only=False).astype(np.int64)
        codes = codes * len(values) + idx
        lookups.append((idx, values))
    uniq, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    results = []
    for row in first:
        vals = [values[0] if idx is None else values[idx[row]] for idx, values in lookups]
        results.append(None if strict and any(v is None for v in vals) else fn(*vals))
    return xcast.to_arrow(results, out).take(pa.array(inverse.reshape(-1)))


# --- SQL values as JSON text ----------------------------------------------------------------
def json_text(d: xa.Datum, t: SqlType, n: int) -> pa.Array:
    """The JSON text of every value of d (to_json's), NULL where d is NULL."""
    arr = xa.as_array(d, n)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if t.kind is Kind.UNKNOWN:
        return pa.nulls(n, pa.string())
    if t.kind in json_values.JSON_KINDS:
        return arr
    if t.is_array:
        elements = json_text(arr.flatten(), t.elem, len(arr.flatten()))
        offsets = pc.subtract(arr.offsets, arr.offsets[0])
        lists = pa.ListArray.from_arrays(offsets, pc.fill_null(elements, "null"),
                                         mask=arr.is_null())
        return pc.binary_join_element_wise("[", pc.binary_join(lists, ","), "]", "")
    if t.kind is Kind.RECORD:
        return _record_json(arr, t, n)
    text = xcast.to_text(arr, t)
    if t.kind in _TEXT_OUT:
        return text
    if t.kind is Kind.BOOL:
        return pc.if_else(arr, "true", "false")
    return per_distinct(lambda s: json_values.scalar_json(json_values.pad_char(s, t), t),
                        [text], len(text), types.TEXT)


def _record_json(arr: pa.Array, t: SqlType, n: int) -> pa.Array:
    """A record's JSON object (composite_to_json): its fields by name in order, a NULL
    field as null, no spaces; NULL where the record is NULL."""
    pieces = []
    for i, (name, ft) in enumerate(t.fields):
        value = pc.fill_null(json_text(pc.struct_field(arr, [i]), ft, n), "null")
        pieces += [("," if i else "") + json_values.quote(name) + ":", value]
    if not pieces:
        out = pa.array(["{}"] * n, pa.string())
    else:
        out = pc.binary_join_element_wise("{", *pieces, "}", "")
    return pc.if_else(arr.is_null(), pa.scalar(None, pa.string()), out)


def _canonical(text: pa.Array) -> xa.Datum:
    return per_distinct(json_values.canonical, [text], len(text), types.JSONB)


def to_json(e: Call, args: list, n: int) -> xa.Datum:
    scalar = isinstance(args[0], pa.Scalar)
    out = json_text(args[0], e.args[0].type, 1 if scalar else n)
    if e.func is Func.TO_JSONB and e.args[0].type.kind is not Kind.JSONB:
        out = _canonical(out)
    return out[0] if scalar else out


def build(e: Call, args: list, n: int) -> xa.Datum:
    """json(b)_build_object / json(b)_build_array: NULL values are JSON null."""
    scalar = all(isinstance(a, pa.Scalar) for a in args)
    m = 1 if scalar else n
    obj = e.func in (Func.JSON_BUILD_OBJECT, Func.JSONB_BUILD_OBJECT)
    jsonb = e.func in (Func.JSONB_BUILD_OBJECT, Func.JSONB_BUILD_ARRAY)
    parts = []
    for i, (a, x) in enumerate(zip(args, e.args)):
        if obj and i % 2 == 0:  # a key: its text output
            arr = xa.as_array(a, m)
            parts.append(xcast.to_text(arr.dictionary_decode() if pa.types.is_dictionary(
                arr.type) else arr, x.type))
        else:
            parts.append(pc.fill_null(json_text(a, x.type, m), "null"))
    if obj and (len(parts) % 2 or any(p.null_count for p in parts[0::2])) or jsonb:
        name = e.func.value
        if obj:
            fn = lambda *ps: json_ops.build_object(list(ps), jsonb, name)  # noqa: E731
        else:
            fn = lambda *ps: json_ops.build_array(list(ps), jsonb)  # noqa: E731
        out = per_distinct(fn, parts, m, e.type, strict=False) if parts else \
            pa.array([fn()] * m, pa.string())
    else:
        pieces = []
        for i, p in enumerate(parts):
            if obj and i % 2 == 0:
                p = per_distinct(json_values.quote, [p], m, types.TEXT)
                pieces += [", " if i else "", p, " : "]
            else:
                pieces += [p] if obj else [", " if i else "", p]
        out = pc.binary_join_element_wise("{" if obj else "[", *pieces, "}" if obj else "]", "") \
            if pieces else pa.array(["{}" if obj else "[]"] * m, pa.string())
    return out[0] if scalar else out


# --- aggregates (finishing array_agg's arrays: planner/json_aggregates.py) ----------------
_CANONICAL_ELEMENTS = (Kind.JSONB, Kind.INT2, Kind.INT4, Kind.INT8, Kind.BOOL)


def _lists(d: xa.Datum, n: int) -> tuple[pa.Array, np.ndarray, pa.Array]:
    """(the list array, its offsets from 0, the elements they cover) of an array column."""
    arr = xa.as_array(d, n)
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    values = arr.values.slice(offsets[0], offsets[-1] - offsets[0])
    return arr, offsets - offsets[0], values


def _joined(lists: pa.Array, offsets: np.ndarray, pieces: pa.Array, sep: str) -> pa.Array:
    """Each list's pieces joined by sep, NULL where the list is NULL."""
    grouped = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pieces,
                                       mask=lists.is_null())
    return pc.binary_join(grouped, sep)


def json_agg(e: Call, args: list, n: int) -> xa.Datum:
    """json_agg / jsonb_agg of an array_agg result: `[1, null, 2]`; jsonb canonical."""
    scalar = isinstance(args[0], pa.Scalar)
    elem = e.args[0].type.elem
    lists, offsets, values = _lists(args[0], 1 if scalar else n)
    texts = pc.fill_null(json_text(values, elem, len(values)), "null")
    if e.type.kind is Kind.JSON and (elem.is_array or elem.kind is Kind.RECORD):
        # json_agg_transfn puts a line feed before each structured value but the first
        lengths = np.diff(offsets)
        position = np.arange(len(values)) - np.repeat(offsets[:-1], lengths)
        later = pa.array(position > 0) if len(values) else pa.array([], pa.bool_())
        fed = pc.and_(later, values.is_valid())
        texts = pc.if_else(fed, pc.binary_join_element_wise("\n ", texts, ""), texts)
    out = pc.binary_join_element_wise("[", _joined(lists, offsets, texts, ", "), "]", "")
    if e.type.kind is Kind.JSONB and elem.kind not in _CANONICAL_ELEMENTS:
        out = _canonical(out)
    return out[0] if scalar else out


def _key_text(text: str) -> str:
    """An object key as JSON: a scalar's JSON text, quoted unless it is a string."""
    return text if text.startswith('"') else json_values.quote(text)


def json_object_agg(e: Call, args: list, n: int) -> xa.Datum:
    """json_object_agg / jsonb_object_agg of two array_agg results (keys, values), which
    have the same lengths: `{ "a" : 1, "b" : 2 }`; jsonb canonical (the last of repeated
    keys wins). A NULL key is 22023 as in PostgreSQL."""
    scalar = isinstance(args[0], pa.Scalar)
    m = 1 if scalar else n
    lists, offsets, keys = _lists(args[0], m)
    _, _, values = _lists(args[1], m)
    if keys.null_count:
        raise errors.InvalidParameterValue("field name must not be null")
    key_t, value_t = e.args[0].type.elem, e.args[1].type.elem
    quoted = per_distinct(_key_text, [json_text(keys, key_t, len(keys))], len(keys), types.TEXT)
    texts = pc.fill_null(json_text(values, value_t, len(values)), "null")
    pairs = pc.binary_join_element_wise(quoted, texts, ": " if e.type.kind is Kind.JSONB
                                        else " : ")
    if e.type.kind is Kind.JSONB:
        out = _canonical(pc.binary_join_element_wise(
            "{", _joined(lists, offsets, pairs, ", "), "}", ""))
    else:
        out = pc.binary_join_element_wise("{ ", _joined(lists, offsets, pairs, ", "), " }", "")
    return out[0] if scalar else out


# --- set-returning functions as arrays (a ProjectSet unnests them) --------------------------
def _srf(fn):
    def run(e: Call, args: list, n: int) -> xa.Datum:
        jsonb = e.args[0].type.kind is Kind.JSONB
        as_text = e.type.elem.kind is Kind.TEXT
        return per_distinct(lambda x: fn(e, x, jsonb, as_text), args, n, e.type)
    return run


def _each(part: int, as_text: bool | None = None):
    def pairs(e: Call, x: str, jsonb: bool, text_values: bool) -> list:
        return [p[part] for p in json_ops.each(x, jsonb, text_values if as_text is None
                                               else as_text)]
    return _srf(pairs)


def _record_field(e: Call, args: list, n: int) -> xa.Datum:
    jsonb, out = _jsonb(e), e.type.elem.kind
    canonical = out is Kind.JSONB and not jsonb  # a json field into a jsonb column

    def fields(x, key, name, default=None):  # name: the function written, for its errors
        found = json_ops.record_field(x, key, name.endswith("recordset"), jsonb,
                                      out is Kind.TEXT, name, default)
        return [json_values.canonical(f) if canonical and f is not None else f
                for f in found]
    # not strict: json(b)_to_record(NULL) is one row of NULLs
    return per_distinct(fields, args, n, e.type, strict=False)


def _record_array(e: Call, args: list, n: int) -> xa.Datum:
    jsonb = _jsonb(e)

    def fields(x, key, name, elem_json, default=None):
        return json_ops.record_field(
            x, key, name.endswith("recordset"), jsonb, False, name, default,
            convert=lambda v: json_ops.array_literal(v, key, elem_json))
    return per_distinct(fields, args, n, e.type, strict=False)


# --- operators and functions ------------------------------------------------------------------
def _jsonb(e: Call) -> bool:
    return e.args[0].type.kind is Kind.JSONB


def _apply(fn):
    def run(e: Call, args: list, n: int) -> xa.Datum:
        return per_distinct(lambda *vals: fn(e, *vals), args, n, e.type)
    return run


CALLS = {
    Func.JSON_GET: _apply(lambda e, x, k: json_ops.get(x, k, _jsonb(e), False)),
    Func.JSON_GET_TEXT: _apply(lambda e, x, k: json_ops.get(x, k, _jsonb(e), True)),
    Func.JSON_PATH: _apply(lambda e, x, p: json_ops.get_path(x, tuple(p), _jsonb(e), False)),
    Func.JSON_PATH_TEXT: _apply(lambda e, x, p: json_ops.get_path(x, tuple(p), _jsonb(e), True)),
    Func.JSONB_CONTAINS: _apply(lambda e, a, b: json_ops.contains(a, b)),
    Func.JSONB_EXISTS: _apply(lambda e, x, k: json_ops.exists(x, k)),
    Func.JSONB_EXISTS_ANY: _apply(lambda e, x, ks: json_ops.exists_any(x, tuple(ks))),
    Func.JSONB_EXISTS_ALL: _apply(lambda e, x, ks: json_ops.exists_all(x, tuple(ks))),
    Func.JSONB_CONCAT: _apply(lambda e, a, b: json_ops.concat(a, b)),
    Func.JSONB_DELETE: _apply(lambda e, x, k: json_ops.delete(x, k)),
    Func.JSONB_SET: _apply(lambda e, x, p, v, c: json_ops.set_path(x, tuple(p), v, c)),
    Func.JSONB_DELETE_PATH: _apply(lambda e, x, p: json_ops.delete_path(x, tuple(p))),
    Func.JSONB_INSERT: _apply(lambda e, x, p, v, a: json_ops.insert_path(x, tuple(p), v, a)),
    Func.JSONB_STRIP_NULLS: _apply(lambda e, x: json_ops.strip_nulls(x)),
    Func.JSON_STRIP_NULLS: _apply(lambda e, x: json_ops.json_strip_nulls(x)),
    Func.JSONB_PRETTY: _apply(lambda e, x: json_ops.pretty(x)),
    Func.JSONB_SORT_KEY: _apply(lambda e, x: json_values.sort_key(x)),
    Func.JSON_TYPEOF: _apply(lambda e, x: json_ops.typeof(x, False)),
    Func.JSONB_TYPEOF: _apply(lambda e, x: json_ops.typeof(x, True)),
    Func.JSON_ARRAY_LENGTH: _apply(lambda e, x: json_ops.array_length(x, False)),
    Func.JSONB_ARRAY_LENGTH: _apply(lambda e, x: json_ops.array_length(x, True)),
    Func.TO_JSON: to_json, Func.TO_JSONB: to_json,
    Func.JSON_AGG: json_agg, Func.JSON_OBJECT_AGG: json_object_agg,
    Func.JSON_ELEMENTS: _srf(lambda e, x, jsonb, as_text: json_ops.elements(x, jsonb, as_text)),
    Func.JSON_EACH_KEYS: _each(0, False), Func.JSON_EACH_TEXT_KEYS: _each(0, True),
    Func.JSON_EACH_VALUES: _each(1), Func.JSON_RECORD_FIELD: _record_field,
    Func.JSON_RECORD_ARRAY: _record_array,
    Func.JSON_OBJECT_KEYS: _srf(lambda e, x, jsonb, as_text: json_ops.object_keys(x, jsonb)),
    **{f: build for f in (Func.JSON_BUILD_OBJECT, Func.JSONB_BUILD_OBJECT,
                          Func.JSON_BUILD_ARRAY, Func.JSONB_BUILD_ARRAY)},
}


# --- casts ---------------------------------------------------------------------------------
def involved(src: SqlType, dst: SqlType) -> bool:
    """Whether CAST(src AS dst) is this module's (segment/expr.py asks before expr_cast)."""
    return dst.kind in json_values.JSON_KINDS or (
        src.kind in json_values.JSON_KINDS and not dst.is_string)


def cast(arr: pa.Array, src: SqlType, dst: SqlType) -> pa.Array:
    """text -> json (validated, kept) / jsonb (canonical), json <-> jsonb, jsonb -> bool
    and numbers (22023 for other kinds of value)."""
    n = len(arr)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if dst.kind is Kind.JSON:
        if src.kind is Kind.JSONB:
            return arr
        return per_distinct(json_values.check_json, [arr], n, dst)
    if dst.kind is Kind.JSONB:
        return per_distinct(json_values.canonical, [arr], n, dst)
    return per_distinct(lambda s: values.cast_value(s, src, dst), [arr], n, dst)


def sort_keys(arr: pa.Array) -> pa.Array:
    """The sort keys of a jsonb column (ORDER BY)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return per_distinct(json_values.sort_key, [arr], len(arr), SqlType(Kind.BYTEA))
