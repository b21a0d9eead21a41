"""SQL arrays over batches: Arrow list columns (planner/types.py Kind.ARRAY, int2vector,
oidvector) and the array operators and functions of planner/array_rules.py.

Every kernel works on the list's offsets and its flat child array at once (numpy index
arithmetic, pyarrow.compute over the elements, an Acero semi join for @> <@ &&); nothing
loops over rows in Python except the text input of literals the vectorized parser does not
take (quotes, backslashes), which planner/values.py reads value by value.
Subscripts are 1-based (0-based for int2vector and oidvector); out of range is NULL.
"""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, types
from planner.expr import Call, Func
from planner.types import Kind, SqlType
from planner.array_text import split_array_text
from planner.values import parse_array
from segment.kernels import expr_arith as xarith
from segment.kernels import interval_order
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_cast as xcast
from segment.kernels import expr_json as xj
from segment.kernels import expr_make_datetime as xmd

_SPACE_CLASS = r"[ \t\n\r\v\f]"


# --- layout helpers --------------------------------------------------------------------------
class Parts:
    """A list column as its child values, per-row starts and lengths (0 for NULL rows) and
    validity."""

    __slots__ = ("lengths", "starts", "valid", "values")

    def __init__(self, arr: pa.Array):
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        offsets = np.asarray(arr.offsets, dtype=np.int64)
        self.values = arr.values
        self.starts = offsets[:-1]
        self.valid = _valid(arr)
        self.lengths = np.where(self.valid, offsets[1:] - offsets[:-1], 0)


def _valid(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid(), dtype=bool)


def _lists(d: xa.Datum, n: int) -> Parts:
    return Parts(xa.as_array(d, n))


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _gather_index(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices into the child of `lengths[i]` values from `starts[i]`, row after row."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    first = _offsets(lengths)[:-1]
    return np.repeat(starts - first, lengths) + np.arange(total, dtype=np.int64)


def parents(lengths: np.ndarray) -> np.ndarray:
    """The row of each gathered element."""
    return np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)


def build(values: pa.Array, lengths: np.ndarray, valid: np.ndarray | None,
          value_type: pa.DataType | None = None) -> pa.ListArray:
    """A list array of consecutive `lengths` values; NULL where `valid` is False."""
    value_type = value_type or values.type
    if values.type != value_type:
        values = values.cast(value_type)
    offsets = pa.array(_offsets(lengths).astype(np.int32), pa.int32())
    mask = None if valid is None or valid.all() else pa.array(~valid)
    return pa.ListArray.from_arrays(offsets, values, type=pa.list_(value_type), mask=mask)


def flat(p: Parts) -> pa.Array:
    """The values of the valid rows, in row order (what `parents(p.lengths)` indexes)."""
    return p.values.take(pa.array(_gather_index(p.starts, p.lengths), pa.int64()))


def _ints(d: xa.Datum, n: int) -> tuple[np.ndarray, np.ndarray]:
    """An integer argument as int64 values (0 where NULL) and its validity."""
    arr = xa.as_array(d, n)
    if pa.types.is_null(arr.type):
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    return np.asarray(arr.cast(pa.int64()).fill_null(0), dtype=np.int64), _valid(arr)


def _elem_type(e: Call) -> SqlType:
    return e.type.elem


def _conform(arr: pa.Array, t: SqlType) -> pa.Array:
    target = t.arrow_type()
    if arr.type == target:
        return arr
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr if arr.type == target else arr.cast(target)


# --- constructor, subscripts ----------------------------------------------------------------
def construct(e: Call, args: list, n: int) -> pa.Array:
    """ARRAY[e1, ..., ek]: row r is (e1[r], ..., ek[r])."""
    t = _elem_type(e)
    k = len(args)
    cols = [_conform(xa.as_array(a, n), t) for a in args]
    values = pa.concat_arrays(cols) if cols else pa.array([], t.arrow_type())
    idx = (np.arange(k, dtype=np.int64)[None, :] * n + np.arange(n, dtype=np.int64)[:, None])
    values = values.take(pa.array(idx.ravel(), pa.int64()))
    return build(values, np.full(n, k, dtype=np.int64), None, t.arrow_type())


def subscript(e: Call, args: list, n: int) -> pa.Array:
    arr_t = e.args[0].type
    p = _lists(args[0], n)
    i, ok = _ints(args[1], n)
    pos = i - arr_t.lower_bound
    ok &= p.valid & (pos >= 0) & (pos < p.lengths)
    idx = pa.array(np.where(ok, p.starts + pos, 0), pa.int64(), mask=~ok)
    return _conform(p.values.take(idx), e.type)


def _omitted(x) -> bool:
    return x.type.kind is Kind.UNKNOWN


def slice_(e: Call, args: list, n: int) -> pa.Array:
    """a[lo:hi]: bounds clamped to the array, empty when they cross; NULL for a NULL
    bound."""
    lb = e.args[0].type.lower_bound
    p = _lists(args[0], n)
    valid = p.valid.copy()
    if _omitted(e.args[1]):
        lo = np.full(n, lb, dtype=np.int64)
    else:
        lo, ok = _ints(args[1], n)
        valid &= ok
    if _omitted(e.args[2]):
        hi = p.lengths + lb - 1
    else:
        hi, ok = _ints(args[2], n)
        valid &= ok
    start = np.maximum(lo - lb, 0)
    stop = np.minimum(hi - lb + 1, p.lengths)
    count = np.where(valid, np.maximum(stop - start, 0), 0)
    idx = _gather_index(p.starts + start, count)
    return build(p.values.take(pa.array(idx, pa.int64())), count, valid,
                 e.type.elem.arrow_type())


# --- dimensions ---------------------------------------------------------------------------
def dimension(e: Call, args: list, n: int) -> pa.Array:
    lb = e.args[0].type.lower_bound
    p = _lists(args[0], n)
    f = e.func
    if f is Func.CARDINALITY:
        return pa.array(p.lengths.astype(np.int32), pa.int32(), mask=~p.valid)
    some = p.valid & (p.lengths > 0)
    if f in (Func.ARRAY_NDIMS, Func.ARRAY_DIMS):
        if f is Func.ARRAY_NDIMS:
            return pa.array(np.ones(n, dtype=np.int32), pa.int32(), mask=~some)
        lo = pa.array(np.full(n, lb, dtype=np.int64)).cast(pa.string())
        hi = pa.array(p.lengths + lb - 1).cast(pa.string())
        text = pc.binary_join_element_wise("[", lo, ":", hi, "]", "")
        return pc.if_else(pa.array(some), text, pa.scalar(None, pa.string()))
    dim, ok = _ints(args[1], n)
    some &= ok & (dim == 1)
    value = {Func.ARRAY_LENGTH: p.lengths, Func.ARRAY_UPPER: p.lengths + lb - 1,
             Func.ARRAY_LOWER: np.full(n, lb, dtype=np.int64)}[f]
    return pa.array(value.astype(np.int32), pa.int32(), mask=~some)


# --- text ---------------------------------------------------------------------------------
def element_text(values: pa.Array, t: SqlType) -> pa.Array:
    """The elements' output function (booleans print t/f inside arrays, char(n) padded)."""
    if t.kind is Kind.BOOL:
        return pc.if_else(values, "t", "f")
    if t.kind in (Kind.OID, Kind.XID):
        return pc.cast(values, pa.string())
    if t.kind is Kind.CHAR and t.length:  # bpcharout: padded to n
        return pc.utf8_rpad(values, width=t.length, padding=" ")
    return xcast.to_text(values, t)


def quote_elements(text: pa.Array) -> pa.Array:
    """array_out's quoting: "..." around empty strings, NULL, and values holding braces,
    quotes, commas, backslashes or white space; NULL elements print NULL."""
    need = pc.or_(pc.or_(pc.equal(pc.binary_length(text), 0),
                         pc.equal(pc.utf8_upper(text), "NULL")),
                  pc.match_substring_regex(text, r'[{}",\\]|' + _SPACE_CLASS))
    escaped = pc.replace_substring_regex(text, r'(["\\])', r"\\\1")
    quoted = pc.binary_join_element_wise('"', escaped, '"', "")
    return pc.if_else(need, quoted, text).fill_null("NULL")


# Element types whose text never needs quotes in an array (digits, signs, points, t/f,
# NaN/Infinity): array_out's quoting is skipped for them. Not dates: '0044-03-15 BC'.
_NEVER_QUOTED = frozenset({Kind.INT2, Kind.INT4, Kind.INT8, Kind.FLOAT4, Kind.FLOAT8,
                           Kind.NUMERIC, Kind.BOOL, Kind.OID, Kind.XID})


def to_text(arr: pa.Array, t: SqlType, elem_text=None) -> pa.Array:
    """array_out (int2vectorout / oidvectorout: space-separated) of every row."""
    n = len(arr)
    p = Parts(arr)
    values = flat(p)
    text = (elem_text or element_text)(values, t.elem) if len(values) else \
        pa.array([], pa.string())
    text = text.cast(pa.string())
    vector = t.kind in (Kind.INT2VECTOR, Kind.OIDVECTOR)
    if not vector and t.elem.kind not in _NEVER_QUOTED:
        text = quote_elements(text)
    elif not vector and text.null_count:
        text = text.fill_null("NULL")
    lists = build(text, p.lengths, p.valid, pa.string())
    joined = pc.binary_join(lists, " " if vector else ",")
    if vector:
        return joined
    out = pc.binary_join_element_wise("{", joined, "}", "")
    return out if n else pa.array([], pa.string())


def from_text(arr: pa.Array, t: SqlType) -> pa.Array:
    """array_in of every row: '{1,2,NULL}' forms without quotes or escapes are split and
    converted in bulk; others are parsed value by value (with PostgreSQL's errors)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    vector = t.kind in (Kind.INT2VECTOR, Kind.OIDVECTOR)
    try:
        if vector:
            trimmed = pc.utf8_trim(arr, characters=" \t\n\r\v\f")
            empty = pc.equal(pc.binary_length(trimmed), 0).fill_null(False)
            parts = pc.split_pattern_regex(trimmed, _SPACE_CLASS + "+")
        else:
            simple = pc.match_substring_regex(
                arr, r'^[ \t\n\r\v\f]*\{[^{}"\\]*\}[ \t\n\r\v\f]*$')
            if not pc.all(simple).as_py() in (True, None):
                raise ValueError("reparse")
            inner = pc.replace_substring_regex(
                arr, r'^[ \t\n\r\v\f]*\{(.*)\}[ \t\n\r\v\f]*$', r"\1")
            inner = pc.utf8_trim(inner, characters=" \t\n\r\v\f")
            empty = pc.equal(pc.binary_length(inner), 0).fill_null(False)
            parts = pc.split_pattern(inner, ",")
        p = Parts(parts)
        lengths = np.where(np.asarray(empty, dtype=bool), 0, p.lengths)
        p.lengths = lengths
        items = pc.utf8_trim(flat(p), characters=" \t\n\r\v\f")
        if len(items) and pc.any(pc.equal(pc.binary_length(items), 0)).as_py():
            raise ValueError("reparse")  # {1,,2}: the exact error comes from array_in
        is_null = pc.equal(pc.utf8_upper(items), "NULL")
        if vector:
            is_null = pc.and_(is_null, False)
        items = pc.if_else(is_null, pa.scalar(None, pa.string()), items)
        values = xcast.from_text(items, t.elem) if len(items) else \
            pa.array([], t.elem.arrow_type())
        return build(values, lengths, p.valid, t.elem.arrow_type())
    except (ValueError, pa.ArrowInvalid):
        pass  # quoted or escaped elements: the exact parser below, value by value
    if t.kind is Kind.ARRAY and t.elem.kind in _TEMPORAL:
        # split value by value, the elements read together: a date's years outside
        # 1..9999 ('"0044-03-15 BC"', always quoted) are the column parser's, not Python's
        parts = [None if v is None else split_array_text(v) for v in arr.to_pylist()]
        lengths = np.array([0 if p is None else len(p) for p in parts], dtype=np.int64)
        items = pa.array([x for p in parts if p is not None for x in p], pa.string())
        values = xcast.from_text(items, t.elem) if len(items) else \
            pa.array([], t.elem.arrow_type())
        return build(values, lengths, np.array([p is not None for p in parts], dtype=bool),
                     t.elem.arrow_type())
    return to_arrow([None if v is None else parse_array(v, t) for v in arr.to_pylist()], t)


_TEMPORAL = (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ)


def to_arrow(values: list, t: SqlType) -> pa.Array:
    """Python tuples (planner/values.py) as a list column of t's layout."""
    valid = np.array([v is not None for v in values], dtype=bool)
    lengths = np.array([len(v) if v is not None else 0 for v in values], dtype=np.int64)
    items = [x for v in values if v is not None for x in v]
    elems = xcast.to_arrow(items, t.elem)
    return build(elems, lengths, valid, t.elem.arrow_type())


def cast(arr: pa.Array, src: SqlType, dst: SqlType) -> pa.Array:
    """Casts to, from and between array types."""
    if src.is_array and dst.is_array:
        p = Parts(arr)
        values = flat(p)
        # the elements cast as the scalar cast does (json[] -> jsonb[]: canonical text)
        out = xj.cast(values, src.elem, dst.elem) if xj.involved(src.elem, dst.elem) \
            else xcast.cast(values, src.elem, dst.elem)
        return build(out, p.lengths, p.valid, dst.elem.arrow_type())
    if src.is_array:  # to text
        text = to_text(arr, src)
        return xcast.cast(text, SqlType(Kind.TEXT), dst) if dst.kind is not Kind.TEXT else text
    return from_text(arr, dst)


def array_to_string(e: Call, args: list, n: int) -> pa.Array:
    p = _lists(args[0], n)
    values = flat(p)
    text = element_text(values, e.args[0].type.elem) if len(values) else \
        pa.array([], pa.string())
    text = text.cast(pa.string())
    lengths = p.lengths
    null_text = args[2] if len(args) > 2 else None
    if null_text is not None and not (isinstance(null_text, pa.Scalar) and not null_text.is_valid):
        rows = parents(lengths)
        fill = null_text if isinstance(null_text, pa.Scalar) else \
            xa.as_array(null_text, n).take(pa.array(rows, pa.int64()))
        text = pc.coalesce(text, fill)
    if text.null_count:
        keep = np.asarray(text.is_valid(), dtype=bool)
        rows = parents(lengths)[keep]
        lengths = np.bincount(rows, minlength=n).astype(np.int64)
        text = text.filter(pa.array(keep))
    lists = build(text, lengths, p.valid, pa.string())
    sep = args[1]
    return pc.binary_join(lists, sep if isinstance(sep, pa.Scalar) else xa.as_array(sep, n))


def string_to_array(e: Call, args: list, n: int) -> pa.Array:
    s = xa.as_array(args[0], n)
    sep = args[1]
    if not isinstance(sep, pa.Scalar) and len(pc.unique(sep)) == 1:
        sep = sep[0]  # a constant (evaluated on one row) or one delimiter throughout
    if not isinstance(sep, pa.Scalar):
        raise errors.FeatureNotSupported("string_to_array with a delimiter that is not a "
                                         "constant")
    valid = _valid(s)
    if not sep.is_valid:  # every character an element
        items = [None if v is None else tuple(v) for v in s.to_pylist()]
        out = to_arrow(items, e.type)
    elif sep.as_py() == "":
        lengths = np.where(valid, np.asarray(pc.binary_length(s).fill_null(0)) > 0, 0)
        out = build(s.filter(pa.array(lengths.astype(bool))), lengths.astype(np.int64), valid,
                    pa.string())
    else:
        parts = Parts(pc.split_pattern(s, sep.as_py()))
        empty = np.asarray(pc.equal(pc.binary_length(s), 0).fill_null(False), dtype=bool)
        parts.lengths = np.where(empty, 0, parts.lengths)
        out = build(flat(parts), parts.lengths, valid, pa.string())
    if len(args) > 2 and not (isinstance(args[2], pa.Scalar) and not args[2].is_valid):
        p = Parts(out)
        items = flat(p)
        null_text = args[2]
        if not isinstance(null_text, pa.Scalar):
            null_text = xa.as_array(null_text, n).take(pa.array(parents(p.lengths), pa.int64()))
        hit = pc.equal(items, null_text).fill_null(False)
        items = pc.if_else(hit, pa.scalar(None, pa.string()), items)
        out = build(items, p.lengths, p.valid, pa.string())
    return out


# --- concatenation ----------------------------------------------------------------------------
def _concat(pieces: list[tuple[pa.Array, np.ndarray, np.ndarray]], n: int,
            valid: np.ndarray, t: SqlType) -> pa.Array:
    """Rows made of each piece's (values, starts, lengths) one after the other."""
    at = t.arrow_type()
    values = pa.concat_arrays([_conform(v, t) for v, _s, _l in pieces])
    total = sum(ln for _v, _s, ln in pieces)
    out_offsets = _offsets(total)
    index = np.empty(int(total.sum()), dtype=np.int64)
    before = np.zeros(n, dtype=np.int64)
    base = 0
    for v, starts, lengths in pieces:
        within = _gather_index(np.zeros(n, dtype=np.int64), lengths)  # 0..len-1 per row
        rows = parents(lengths)
        index[out_offsets[:-1][rows] + before[rows] + within] = base + starts[rows] + within
        before += lengths
        base += len(v)
    return build(values.take(pa.array(index, pa.int64())), total, valid, at)


def array_cat(e: Call, args: list, n: int) -> pa.Array:
    a, b = _lists(args[0], n), _lists(args[1], n)
    return _concat([(a.values, a.starts, a.lengths), (b.values, b.starts, b.lengths)], n,
                   a.valid | b.valid, e.type.elem)


def _as_piece(d: xa.Datum, n: int):
    x = xa.as_array(d, n)
    return x, np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)


def array_append(e: Call, args: list, n: int) -> pa.Array:
    ones = np.ones(n, dtype=bool)
    if e.func is Func.ARRAY_APPEND:
        a = _lists(args[0], n)
        pieces = [(a.values, a.starts, a.lengths), _as_piece(args[1], n)]
    else:
        a = _lists(args[1], n)
        pieces = [_as_piece(args[0], n), (a.values, a.starts, a.lengths)]
    return _concat(pieces, n, ones, e.type.elem)


# --- searching ---------------------------------------------------------------------------------
def _same(a: pa.Array, b, t: SqlType) -> np.ndarray:
    """Element equality where NULL equals NULL (IS NOT DISTINCT FROM)."""
    if len(a) == 0:
        return np.zeros(0, dtype=bool)
    eq = xa.as_array(xarith.compare_values(Func.EQ, a, b, t, t), len(a))
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return np.asarray(pc.or_(eq.fill_null(False), both_null), dtype=bool)


def array_position(e: Call, args: list, n: int) -> pa.Array:
    t = e.args[0].type
    p = _lists(args[0], n)
    rows = parents(p.lengths)
    values = flat(p)
    x = xa.as_array(args[1], n).take(pa.array(rows, pa.int64()))
    x = _conform(x, t.elem)
    hit = _same(_conform(values, t.elem), x, t.elem)
    local = np.arange(len(rows), dtype=np.int64) - _offsets(p.lengths)[:-1][rows]
    valid = p.valid.copy()
    if len(args) > 2:
        start, ok = _ints(args[2], n)
        valid &= ok
        hit &= (local + t.lower_bound) >= start[rows]
    found_rows, first = np.unique(rows[hit], return_index=True)
    out = np.zeros(n, dtype=np.int32)
    has = np.zeros(n, dtype=bool)
    out[found_rows] = (local[hit][first] + t.lower_bound).astype(np.int32)
    has[found_rows] = True
    return pa.array(out, pa.int32(), mask=~(valid & has))


def _key(values: pa.Array) -> pa.Array:
    """Element values as join keys (booleans as int8)."""
    if pa.types.is_boolean(values.type):
        return values.cast(pa.int8())
    return values


def _members(a: Parts, b: Parts, n: int) -> np.ndarray:
    """For each element of b (in flat order), whether its row's array a holds an equal
    (non-NULL) element: both sides' values are dictionary-encoded together, so
    (row, code) pairs are exact int64 keys, looked up in a hash set (pc.is_in)."""
    va, vb = flat(a), flat(b)
    ra, rb = parents(a.lengths), parents(b.lengths)
    if len(vb) == 0:
        return np.zeros(0, dtype=bool)
    try:
        codes = pc.dictionary_encode(pa.concat_arrays([va, vb]))
        width = len(codes.dictionary) + 1
        idx = np.asarray(codes.indices.fill_null(-1), dtype=np.int64)
        ka, kb = idx[:len(va)], idx[len(va):]
        keys_a = pa.array((ra * width + ka)[ka >= 0])
        hit = pc.is_in(pa.array(rb * width + kb), value_set=keys_a)
        return np.asarray(hit, dtype=bool) & (kb >= 0)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        pass  # a type dictionary_encode does not take: a semi join
    left = pa.table({"r": pa.array(rb), "v": _key(vb), "i": pa.array(np.arange(len(vb)))})
    right = pa.table({"r": pa.array(ra), "v": _key(va)}).filter(pc.is_valid(pa.array(va))) \
        if len(va) else pa.table({"r": pa.array([], pa.int64()), "v": pa.array([], _key(vb).type)})
    right = right.group_by(["r", "v"]).aggregate([])
    try:
        hit = left.join(right, keys=["r", "v"], join_type="left semi")
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        # A key type Acero's join does not take: join on the values' text instead.
        left = left.set_column(1, "v", pc.cast(left.column("v"), pa.string()))
        right = right.set_column(right.schema.get_field_index("v"), "v",
                                 pc.cast(right.column("v"), pa.string()))
        hit = left.join(right, keys=["r", "v"], join_type="left semi")
    out = np.zeros(len(vb), dtype=bool)
    out[np.asarray(hit.column("i"), dtype=np.int64)] = True
    return out


def containment(e: Call, args: list, n: int) -> pa.Array:
    """a @> b (every element of b is in a), a <@ b, a && b (an element in common)."""
    small = args[0 if e.func is Func.ARRAY_CONTAINED else 1]
    if isinstance(small, pa.Scalar) and small.is_valid and len(small.values) <= 16:
        return _contains_constant(e, args[1 if e.func is Func.ARRAY_CONTAINED else 0],
                                  small, n)
    a, b = _lists(args[0], n), _lists(args[1], n)
    if e.func is Func.ARRAY_CONTAINED:
        a, b = b, a
    member = _members(a, b, n)
    rows = parents(b.lengths)
    hits = np.bincount(rows[member], minlength=n)
    valid = a.valid & b.valid
    result = hits > 0 if e.func is Func.ARRAY_OVERLAP else hits == b.lengths
    return pa.array(result, pa.bool_(), mask=~valid)


def _contains_constant(e: Call, arr, const: pa.Scalar, n: int) -> pa.Array:
    """a @> C / C <@ a / a && C for a constant C of a few elements: one pass over a's
    elements per element of C."""
    a = _lists(arr, n)
    values, rows = flat(a), parents(a.lengths)
    wanted = [v for v in const.values if v.is_valid]
    has_null = len(wanted) < len(const.values)
    if types.is_dynamic_arrow(values.type):  # unconstrained numerics: equal by value
        values = values.flatten()[0]
        wanted = [pa.scalar(v.as_py()[types.NUMERIC_VALUE_FIELD], values.type) for v in wanted]
    hits = []
    for v in wanted:
        eq = np.asarray(pc.equal(values, v.cast(values.type)).fill_null(False), dtype=bool) \
            if len(values) else np.zeros(0, dtype=bool)
        hits.append(np.bincount(rows[eq], minlength=n) > 0)
    if e.func is Func.ARRAY_OVERLAP:
        result = np.logical_or.reduce(hits) if hits else np.zeros(n, dtype=bool)
    elif has_null:  # a NULL element of C is in no array
        result = np.zeros(n, dtype=bool)
    else:
        result = np.logical_and.reduce(hits) if hits else np.ones(n, dtype=bool)
    return pa.array(result, pa.bool_(), mask=~a.valid)


def array_equal(e: Call, args: list, n: int) -> pa.Array:
    t = e.args[0].type
    a, b = _lists(args[0], n), _lists(args[1], n)
    same_len = a.lengths == b.lengths
    ln = np.where(same_len, a.lengths, 0)
    va = a.values.take(pa.array(_gather_index(a.starts, ln), pa.int64()))
    vb = b.values.take(pa.array(_gather_index(b.starts, ln), pa.int64()))
    differ = ~_same(_conform(va, t.elem), _conform(vb, t.elem), t.elem)
    bad = np.bincount(parents(ln)[differ], minlength=n)
    eq = same_len & (bad == 0)
    if e.func is Func.ARRAY_NE:
        eq = ~eq
    return pa.array(eq, pa.bool_(), mask=~(a.valid & b.valid))


def quantified(e: Call, args: list, n: int) -> pa.Array:
    """x op ANY (a): true if some comparison is, else NULL if some is NULL, else false
    (false over an empty array); ALL dually; NULL for a NULL array."""
    op = Func(e.args[0].value)
    tx, ta = e.args[1].type, e.args[2].type
    p = _lists(args[2], n)
    rows = parents(p.lengths)
    values = flat(p)
    x = args[1]
    if not isinstance(x, pa.Scalar):
        x = xa.as_array(x, n).take(pa.array(rows, pa.int64()))
    if isinstance(x, pa.Scalar) and not x.is_valid:
        true, null = np.zeros(len(values), dtype=bool), np.ones(len(values), dtype=bool)
    elif len(values):
        cmp = xa.as_array(xarith.compare_values(op, x, values, tx, ta.elem), len(values))
        true = np.asarray(cmp.fill_null(False), dtype=bool)
        null = np.asarray(cmp.is_null(), dtype=bool)
    else:
        true = null = np.zeros(0, dtype=bool)
    n_true = np.bincount(rows[true], minlength=n)
    n_null = np.bincount(rows[null], minlength=n)
    if e.func is Func.ANY_OF:
        result = n_true > 0
        unknown = ~result & (n_null > 0)
    else:
        n_false = p.lengths - n_true - n_null
        result = n_false == 0
        unknown = result & (n_null > 0)
        result &= ~unknown
    return pa.array(result, pa.bool_(), mask=~p.valid | unknown)


def series(e: Call, args: list, n: int) -> pa.Array:
    """Each row's generate_series(start, stop[, step]) as an array (empty when the range
    is, NULL when an argument is)."""
    if e.type.elem.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        return xmd.timestamp_series(e, args, n)
    start, sv = _ints(args[0], n)
    stop, ev = _ints(args[1], n)
    step, tv = _ints(args[2], n) if len(args) > 2 else (np.ones(n, np.int64), np.ones(n, bool))
    valid = sv & ev & tv
    if (valid & (step == 0)).any():
        raise errors.InvalidParameterValue("step size cannot equal zero")
    step = np.where(valid, step, 1)
    span = stop - start
    lengths = np.where(valid & ((span == 0) | ((span > 0) == (step > 0))),
                       span // step + 1, 0).astype(np.int64)
    total = int(lengths.sum())
    offs = _offsets(lengths)
    rank = np.arange(total, dtype=np.int64) - np.repeat(offs[:-1], lengths)
    values = np.repeat(start, lengths) + rank * np.repeat(step, lengths)
    t = e.type.elem.arrow_type()
    return build(pa.array(values, pa.int64()).cast(t), lengths, valid, t)


CALLS = {
    Func.ARRAY: construct,
    Func.SERIES: series, Func.SUBSCRIPT: subscript, Func.SLICE: slice_,
    **{f: dimension for f in (Func.ARRAY_LENGTH, Func.CARDINALITY, Func.ARRAY_UPPER,
                              Func.ARRAY_LOWER, Func.ARRAY_NDIMS, Func.ARRAY_DIMS)},
    Func.ARRAY_TO_STRING: array_to_string, Func.STRING_TO_ARRAY: string_to_array,
    Func.ARRAY_CAT: array_cat, Func.ARRAY_APPEND: array_append,
    Func.ARRAY_PREPEND: array_append, Func.ARRAY_POSITION: array_position,
    Func.ARRAY_CONTAINS: containment, Func.ARRAY_CONTAINED: containment,
    Func.ARRAY_OVERLAP: containment, Func.ARRAY_EQ: array_equal, Func.ARRAY_NE: array_equal,
    Func.ANY_OF: quantified, Func.ALL_OF: quantified,
    Func.ARRAY_SORT_KEY: lambda e, args, n: sort_key(xa.as_array(args[0], n)),
}


# --- order --------------------------------------------------------------------------------------
def sort_key(arr: pa.Array) -> pa.Array:
    """Binary keys that sort (bytewise) as PostgreSQL orders arrays: element by element,
    NULL elements after all others, a prefix before the longer array. Each element is
    0x02 and its order-preserving bytes (or 0x03 for NULL); the array ends with 0x01.
    The keys are canonical too, equal exactly where the arrays are equal (-0.0 as 0.0,
    every NaN alike, intervals by their length), so that grouping and joins use them
    (segment/kernels/group_keys.py)."""
    p = Parts(arr)
    values = flat(p)
    cells = element_keys(values) if len(values) else pa.array([], pa.binary())
    body = pc.binary_join(build(cells, p.lengths, p.valid, pa.binary()), b"")
    return pc.binary_join_element_wise(body, b"\x01", b"")


def _fixed_cells(words: np.ndarray) -> pa.Array:
    """Big-endian uint64 words (one or two per value: shape (n,) or (n, 2)) as cells."""
    raw = np.ascontiguousarray(words.astype(">u8"))
    width = 8 * (raw.shape[1] if raw.ndim == 2 else 1)
    return pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), len(raw), [None, pa.py_buffer(raw.tobytes())]).cast(pa.binary())


def element_keys(values: pa.Array) -> pa.Array:
    """One binary cell per value: 0x02 and its order-preserving bytes, 0x03 for NULL.
    Cells are canonical (equal exactly where the values are) and none is a prefix of
    another, so a concatenation of cells is canonical too (expr_record.row_key)."""
    t = values.type
    if pa.types.is_dictionary(t):
        return element_keys(values.dictionary_decode())
    if t == pa.month_day_nano_interval():
        key = pc.binary_join_element_wise(b"\x02", interval_order.order_key(values), b"")
        return pc.if_else(values.is_valid(), key, pa.scalar(b"\x03", pa.binary()))
    if types.is_dynamic_arrow(t):  # an unconstrained numeric by its value: 1.5 = 1.50
        return element_keys(values.flatten()[0])
    sign = np.uint64(1 << 63)
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_date(t) \
            or pa.types.is_timestamp(t) or pa.types.is_time(t):
        if pa.types.is_date32(t):
            values = values.cast(pa.int32())
        ints = np.asarray(values.cast(pa.int64()).fill_null(0), dtype=np.int64)
        cells = _fixed_cells(ints.view(np.uint64) ^ sign)
    elif pa.types.is_floating(t):
        v = np.asarray(values.cast(pa.float64()).fill_null(0.0), dtype=np.float64) + 0.0
        v[np.isnan(v)] = np.nan  # -0.0 + 0.0 is 0.0; one NaN: equal values, equal keys
        bits = v.view(np.uint64)
        cells = _fixed_cells(np.where(bits >> np.uint64(63), ~bits, bits | sign))
    elif pa.types.is_decimal128(t):
        words = np.frombuffer(values.buffers()[1], dtype=np.uint64,
                              count=2 * (values.offset + len(values)))[2 * values.offset:]
        words = words.reshape(-1, 2)[:, ::-1].copy()  # (high, low)
        words[:, 0] ^= sign
        cells = _fixed_cells(words)
    elif pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) \
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t):
        raw = values.cast(pa.binary()).fill_null(b"")
        escaped = pc.replace_substring(raw, b"\x00", b"\x00\xff")
        cells = pc.binary_join_element_wise(escaped, b"\x00\x00", b"")
    else:
        raise errors.FeatureNotSupported(f"sorting arrays of {t}")
    keyed = pc.binary_join_element_wise(b"\x02", cells, b"")
    return pc.if_else(values.is_valid(), keyed, pa.scalar(b"\x03", pa.binary()))


xcast.register_arrays(sys.modules[__name__])  # expr_cast's array casts are these
