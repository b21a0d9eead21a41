"""Evaluate bound scalar expressions (planner/expr.py) over Arrow record batches.

`evaluate(e, batch)` returns an array of exactly `e.type.arrow_type()` and the batch's
length. Work is vectorized: each node is one or a few pyarrow.compute calls or numba
kernels over the whole batch (segment/kernels/expr_*.py), literals stay Arrow scalars that
the kernels broadcast, and a call whose arguments are all constant runs once on one row.

Laziness follows PostgreSQL where it is observable, i.e. where an expression may raise:
a CASE branch, a later COALESCE argument and the right side of AND/OR are only required to
succeed on the rows that reach them. They are evaluated on the whole batch first (cheapest
when nothing fails); if that raises, they are evaluated again on just the rows that need
them, so `CASE WHEN x <> 0 THEN 1 / x END` never raises division by zero. When only a few
rows need a branch it is evaluated on those rows directly.
"""

from __future__ import annotations

import datetime as dt
import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import datetime_input, errors
from planner import expr as ex
from planner.expr import Func
from planner.types import Kind, SqlType
from segment.kernels import expr_arith as xarith
from segment.kernels import expr_array_edit as xae
from segment.kernels import expr_arrays as xa
from segment.kernels import expr_binary as xbin
from segment.kernels import expr_cast as xcast
from segment.kernels import expr_datetime as xd
from segment.kernels import expr_interval as xiv
from segment.kernels import infinite as xinf
from segment.kernels import expr_format as xf
from segment.kernels import expr_json as xj
from segment.kernels import expr_make_datetime as xmd
from segment.kernels import expr_math as xm
from segment.kernels import expr_numeric as xn
from segment.kernels import expr_numeric_math as xnm
from segment.kernels import numeric_dscale as nd
from segment.kernels import expr_pgarray as xpa
from segment.kernels import expr_list_agg as xla
from segment.kernels import expr_list_sort as xls
from segment.kernels import expr_record as xr
from segment.kernels import expr_regex as xre
from segment.kernels import expr_string as xs
from segment.kernels import expr_timezone as xtz
from planner.row_functions import call_row
from planner.session_info import SEQUENCES

_SUBSET_FRACTION = 0.25  # below this share of rows, evaluate a lazy branch on its rows only


class Frame:
    """The input columns of one evaluation, its row count and the statement time."""

    __slots__ = ("columns", "n", "now", "encoded")

    def __init__(self, columns: list, n: int, now: dt.datetime):
        self.columns, self.n, self.now = columns, n, now
        # Whether any column is dictionary-encoded: without one, no node looks further.
        self.encoded = any(c is not None and pa.types.is_dictionary(c.type) for c in columns)

    def subset(self, idx: np.ndarray, e: ex.Expr) -> "Frame":
        """The rows `idx` of the columns that e reads."""
        used = ex.columns_used(e)
        take = pa.array(idx, pa.int64())
        cols = [c.take(take) if i in used else None for i, c in enumerate(self.columns)]
        return Frame(cols, len(idx), self.now)


def evaluate(e: ex.Expr, batch: pa.RecordBatch, now: dt.datetime | None = None,
             keep_dictionary: bool = False) -> pa.Array:
    """e over every row of batch. `now` is the statement's timestamp for now(). With
    keep_dictionary, a string result computed over a dictionary-encoded column is returned
    dictionary-encoded (same indices, computed dictionary)."""
    return evaluate_columns(e, batch.columns, batch.num_rows, now, keep_dictionary)


def evaluate_columns(e: ex.Expr, columns: list, num_rows: int,
                     now: dt.datetime | None = None, keep_dictionary: bool = False) -> pa.Array:
    frame = Frame(list(columns), num_rows, now or dt.datetime.now(dt.timezone.utc))
    # date/time text such as 'now' or 'today' reads the statement's time
    token = datetime_input.STATEMENT_NOW.set(frame.now)
    try:
        if keep_dictionary and frame.encoded and e.type.is_string:
            encoded = _over_dictionary(e, frame, keep=True)
            if encoded is not None:
                return encoded
        return _finish(_eval(e, frame), e.type, num_rows)
    finally:
        datetime_input.STATEMENT_NOW.reset(token)


def _eval(e: ex.Expr, f: Frame) -> xa.Datum:
    if f.encoded and not isinstance(e, (ex.ColumnRef, ex.Literal)):
        d = _over_dictionary(e, f)
        if d is not None:
            return d
    return _NODES[type(e)](e, f)


# A dictionary-encoded column whose dictionary has at most this share of the batch's rows
# is worth evaluating an expression over its distinct values instead of its rows: a
# filter or a group-by above may have left fewer rows than the chunk's dictionary holds.
_DICTIONARY_FRACTION = 1.0


@functools.lru_cache(maxsize=4096)
def _columns_of(e: ex.Expr) -> frozenset[int]:
    return frozenset(ex.columns_used(e))


def over_dictionary(e: ex.Expr, batch: pa.RecordBatch, now: dt.datetime | None = None):
    """(e's values over the distinct values of the one dictionary-encoded column it reads,
    the rows' indices into them), or None when that does not apply: what
    _over_dictionary spreads with a take, for callers that spread it their own way."""
    frame = Frame(list(batch.columns), batch.num_rows, now or dt.datetime.now(dt.timezone.utc))
    if not frame.encoded:
        return None
    token = datetime_input.STATEMENT_NOW.set(frame.now)
    try:
        return _dictionary_values(e, frame)
    finally:
        datetime_input.STATEMENT_NOW.reset(token)


def _over_dictionary(e: ex.Expr, f: Frame, keep: bool = False):
    """e evaluated once per distinct value when it reads one dictionary-encoded column
    only (LIKE over URLs, regexp_replace over referers), spread to the rows through the
    indices; None when that does not apply."""
    found = _dictionary_values(e, f)
    if found is None:
        return None
    d, indices = found
    if keep:  # a dictionary holds distinct values (aggregates group by its indices)
        unique = pc.dictionary_encode(d)
        return pa.DictionaryArray.from_arrays(unique.indices.take(indices), unique.dictionary)
    return d.take(indices)


def _dictionary_values(e: ex.Expr, f: Frame):
    """(e over the dictionary, indices) for _over_dictionary. A NULL row is an extra
    dictionary entry, so e sees NULL exactly as it would row by row. An error on the
    dictionary (a value that no row still holds may fail a cast) falls back to the rows,
    which decide (None)."""
    used = _columns_of(e)
    if len(used) != 1 or _volatile(e):  # random() differs between rows of one value
        return None
    (i,) = used
    col = f.columns[i]
    if col is None or not pa.types.is_dictionary(col.type):
        return None
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    values = col.dictionary
    if len(values) > _DICTIONARY_FRACTION * f.n:
        return None
    indices = col.indices
    if col.null_count:
        values = pa.concat_arrays([values, pa.nulls(1, values.type)])
        indices = indices.fill_null(len(values) - 1)
    columns = [None] * len(f.columns)
    columns[i] = values
    try:
        d = _finish(_eval(e, Frame(columns, len(values), f.now)), e.type, len(values))
    except (errors.QueryError, pa.ArrowException):
        return None
    return d, indices


@functools.lru_cache(maxsize=4096)
def _volatile(e: ex.Expr) -> bool:
    return ex.is_volatile(e)


def _finish(d: xa.Datum, t: SqlType, n: int) -> pa.Array:
    """d as an array of n rows in t's layout."""
    return xa.as_array(_conform(d, t), n)


def _conform(d: xa.Datum, t: SqlType) -> xa.Datum:
    """d in t's layout; kernels already produce it, this only bridges equivalent forms
    (a numeric as int64 or decimal128 at t's scale, a NULL scalar of another type)."""
    target = t.arrow_type()
    if d.type == target:
        return d
    if isinstance(d, pa.Scalar) and not d.is_valid:
        return pa.scalar(None, target)
    if t.is_numeric:  # never Arrow's cast: it would rescale the integers
        src = SqlType(Kind.NUMERIC, None, d.type.scale if pa.types.is_decimal(d.type) else t.scale)
        if isinstance(d, pa.Scalar):
            return _conform(xa.as_array(d, 1), t)[0]
        return xn.to_array(xn.to_num(d, src), t, len(d), check=False)
    return d.cast(target)


# --- leaves --------------------------------------------------------------------------------
def _column(e: ex.ColumnRef, f: Frame) -> xa.Datum:
    arr = f.columns[e.index]
    if arr is None:
        raise errors.InternalError(f"column {e.index} was not provided")
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr if arr.type == e.type.arrow_type() else _storage_to_layout(arr, e.type)


def _storage_to_layout(arr: pa.Array, t: SqlType) -> pa.Array:
    """Columns that arrive in another physical type (dictionary strings, decimal numerics,
    large strings) in the layout the expression expects."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if t.is_numeric and pa.types.is_decimal(arr.type):
        src = SqlType(Kind.NUMERIC, None, arr.type.scale)
        return xn.to_array(xn.to_num(arr, src), t, len(arr), check=False)
    return arr if arr.type == t.arrow_type() else arr.cast(t.arrow_type())


@functools.lru_cache(maxsize=4096)
def _literal_scalar(lit: ex.Literal) -> pa.Scalar:
    if lit.type.kind is Kind.UNKNOWN:
        return pa.scalar(None, pa.null())
    if lit.type.kind is Kind.NUMERIC and lit.value is not None and lit.value.is_finite():
        # a constant of more than 38 digits (bind_expr.number_literal) is only usable as
        # a float; computed or shown as a numeric it overflows raympp's 38 digits
        _, digits, exponent = lit.value.as_tuple()
        if max(len(digits) + max(exponent, 0), -exponent) > 38:
            raise errors.NumericOutOfRange("value overflows numeric format",
                                           detail="raympp numerics hold at most 38 digits")
    return xcast.to_arrow([lit.value], lit.type)[0]


def _literal(e: ex.Literal, f: Frame) -> xa.Datum:
    return _literal_scalar(e)


# --- calls ---------------------------------------------------------------------------------
def _call(e: ex.Call, f: Frame) -> xa.Datum:
    func = e.func
    if func in (Func.AND, Func.OR):
        return _and_or(e, f)
    if func is Func.COALESCE:
        return _coalesce(e, f)
    if func is Func.NOW:
        return pa.scalar(f.now, e.type.arrow_type())
    if func is Func.RANDOM:  # volatile: one value per row, never computed once
        return xm.random(f.n, tuple(a.value for a in e.args) or None)
    if func is Func.GEN_RANDOM_UUID:  # no arguments, yet one value per row
        return xbin.gen_random_uuid(f.n)
    args = [_eval(a, f) for a in e.args]
    impl = _CALLS.get(func)
    if impl is None:
        raise errors.FeatureNotSupported(f"function {func.value} is not supported")
    if all(isinstance(a, pa.Scalar) for a in args):  # constant: compute on one row
        r = _conform(impl(e, [xa.as_array(a, 1) for a in args], 1), e.type)
        return r[0] if isinstance(r, pa.Array) else r
    return impl(e, args, f.n)


def _not(e: ex.Call, args: list, n: int) -> xa.Datum:
    return pc.invert(args[0])


def _decided(acc: xa.Datum, n: int, stop: bool) -> np.ndarray:
    return xa.bool_mask(acc if stop else pc.invert(acc), n)


def _and_or(e: ex.Call, f: Frame) -> xa.Datum:
    """Three-valued AND/OR; an argument is needed only on rows not decided yet."""
    stop = e.func is Func.OR
    kleene = pc.or_kleene if stop else pc.and_kleene
    acc = _eval(e.args[0], f)
    for arg in e.args[1:]:
        if cannot_raise(arg):
            acc = kleene(acc, _eval(arg, f))
            continue
        if isinstance(acc, pa.Scalar):
            if acc.is_valid and acc.as_py() is stop:
                return acc
            need = None
        else:
            need = ~_decided(acc, f.n, stop)
        acc = kleene(acc, _eval_needed(arg, f, need))
    return acc


def _coalesce(e: ex.Call, f: Frame) -> xa.Datum:
    out, need = None, None
    for arg in e.args:
        v = _conform(_eval_needed(arg, f, need), e.type)
        out = v if out is None else pc.coalesce(out, v)
        if isinstance(out, pa.Scalar):
            if out.is_valid:
                return out
            continue
        need = ~xa.bool_mask(pc.is_valid(out), f.n)
        if not need.any():
            break
    return out


_SAFE_CALLS = frozenset((Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE, Func.AND, Func.OR,
                         Func.NOT, Func.COALESCE, Func.GREATEST, Func.LEAST, Func.NULLIF,
                         Func.LOWER, Func.UPPER, Func.LENGTH, Func.OCTET_LENGTH, Func.CONCAT,
                         Func.CONCAT_FN, Func.STARTS_WITH, Func.REVERSE, Func.CONCAT_WS,
                         Func.INITCAP, Func.MD5, Func.ASCII, Func.TRANSLATE, Func.SIGN,
                         Func.CBRT, Func.ATAN, Func.ATAN2, Func.TO_HEX))


@functools.lru_cache(maxsize=4096)
def cannot_raise(e: ex.Expr) -> bool:
    """True when e raises on no row (so laziness is not observable): column references,
    literals, comparisons, null tests, LIKE with a checked constant pattern, ..."""
    if isinstance(e, (ex.ColumnRef, ex.Literal, ex.IsNull)):
        return isinstance(e, ex.Literal) or all(cannot_raise(k) for k in e.children())
    if isinstance(e, ex.Like):
        return isinstance(e.pattern, ex.Literal) and cannot_raise(e.arg)
    if isinstance(e, ex.InList):
        return all(isinstance(v, ex.Literal) for v in e.values) and cannot_raise(e.arg)
    if isinstance(e, ex.Cast):
        return e.type.kind is Kind.TEXT and cannot_raise(e.arg)
    if isinstance(e, ex.Call):
        return e.func in _SAFE_CALLS and all(cannot_raise(a) for a in e.args)
    return isinstance(e, ex.Case) and all(cannot_raise(k) for k in e.children())


def _eval_needed(e: ex.Expr, f: Frame, need: np.ndarray | None) -> xa.Datum:
    """e where `need` is True; other rows may hold anything (NULL) and must not raise."""
    if need is None or cannot_raise(e) or need.all():
        return _eval(e, f)
    count = int(np.count_nonzero(need))
    if count == 0 or isinstance(e, ex.Literal):
        return _eval(e, f) if count else pa.scalar(None, e.type.arrow_type())
    if count >= _SUBSET_FRACTION * f.n:
        try:
            return _eval(e, f)
        except errors.QueryError:
            pass  # maybe raised by a row that does not need e: retry on the needed rows
    idx = np.flatnonzero(need)
    values = _finish(_eval(e, f.subset(idx, e)), e.type, count)
    return xa.scatter(values, idx, f.n)


def _case(e: ex.Case, f: Frame) -> xa.Datum:
    n = f.n
    remaining = np.ones(n, dtype=bool)
    masks, values = [], []
    for cond, result in e.whens:
        hit = remaining & xa.bool_mask(_eval_needed(cond, f, remaining), n)
        if hit.any():
            masks.append(hit)
            values.append(_conform(_eval_needed(result, f, hit), e.type))
            remaining &= ~hit
        if not remaining.any():
            break
    default = _conform(_eval_needed(e.else_, f, remaining), e.type) if remaining.any() \
        else pa.scalar(None, e.type.arrow_type())
    if not masks:
        return default
    if len(masks) == 1:
        return pc.if_else(pa.array(masks[0]), values[0], default)
    conds = pc.make_struct(*[pa.array(m) for m in masks],
                           field_names=[str(i) for i in range(len(masks))])
    return pc.case_when(conds, *values, default)


def _cast(e: ex.Cast, f: Frame) -> xa.Datum:
    x = _eval(e.arg, f)
    if xj.involved(e.arg.type, e.type):  # to json/jsonb, jsonb to bool and numbers
        return xj.cast(xa.as_array(x, f.n), e.arg.type, e.type)
    if isinstance(x, pa.Scalar):
        return _conform(xcast.cast(xa.as_array(x, 1), e.arg.type, e.type), e.type)[0]
    return xcast.cast(x, e.arg.type, e.type)


def _in_list(e: ex.InList, f: Frame) -> xa.Datum:
    x = _eval(e.arg, f)
    vals = [_eval(v, f) for v in e.values]
    constant = all(isinstance(v, pa.Scalar) for v in vals)
    scalar_x = constant and isinstance(x, pa.Scalar)
    if scalar_x:  # everything constant: one row
        x = xa.as_array(x, 1)
    if constant and not isinstance(x, pa.Scalar) and e.arg.type.kind is not Kind.INTERVAL \
            and not e.arg.type.is_dynamic and all(v.type == x.type or not v.is_valid for v in vals):
        present = [v for v in vals if v.is_valid]
        hit = pc.is_in(x, value_set=pa.array([v.as_py() for v in present], x.type), skip_nulls=True)
        hit = pc.if_else(pc.is_null(x), pa.scalar(None, pa.bool_()), hit)
        if len(present) < len(vals):
            hit = pc.if_else(hit, True, pa.scalar(None, pa.bool_()))
    else:
        hit = None
        for v, ve in zip(vals, e.values):
            eq = xarith.compare_values(Func.EQ, x, v, e.arg.type, ve.type)
            hit = eq if hit is None else pc.or_kleene(hit, eq)
    hit = pc.invert(hit) if e.negated else hit
    return hit[0] if scalar_x else hit


def _like(e: ex.Like, f: Frame) -> xa.Datum:
    x, p = _eval(e.arg, f), _eval(e.pattern, f)
    scalar = isinstance(x, pa.Scalar) and isinstance(p, pa.Scalar)
    n = 1 if scalar else f.n
    r = xs.like(xa.as_array(x, n), p if not scalar else xa.as_array(p, 1), e.case_insensitive, n)
    r = pc.invert(r) if e.negated else r
    return r[0] if scalar and isinstance(r, pa.Array) else r


def _is_null(e: ex.IsNull, f: Frame) -> xa.Datum:
    x = _eval(e.arg, f)
    if isinstance(x, pa.Scalar):
        return pa.scalar(x.is_valid == e.negated)
    return pc.is_valid(x) if e.negated else pc.is_null(x)


def _field_kernel(kernel):
    """EXTRACT / date_trunc kernels read their constant field name from the Literal."""
    def run(e: ex.Call, args: list, n: int) -> xa.Datum:
        return kernel(e, [pa.scalar(e.args[0].value)] + args[1:], n)
    return run


def _row_call(e: ex.RowCall, f: Frame) -> xa.Datum:
    """A catalog function (planner/catalog_functions.py): row by row in Python."""
    args = [_eval(a, f) for a in e.args]
    if all(isinstance(a, pa.Scalar) for a in args):
        return xcast.to_arrow([call_row(e, [a.as_py() for a in args])], e.type)[0]
    cols = [xa.as_array(a, f.n).to_pylist() for a in args]
    values = [call_row(e, list(row)) for row in zip(*cols)] if cols else \
        [call_row(e, []) for _ in range(f.n)]
    return xcast.to_arrow(values, e.type)


def _sequence_call(e: ex.SequenceCall, f: Frame) -> xa.Datum:
    """nextval/currval/setval/lastval, row by row in order, by the coordinator's counters
    (the planner runs these only in the coordinator's slice)."""
    access = SEQUENCES.get()
    if access is None:
        raise errors.InternalError(f"{e.func.value}() evaluated outside the coordinator")
    cols = [xa.as_array(_eval(a, f), f.n).to_pylist() for a in e.args]
    rows = zip(*cols) if cols else ([] for _ in range(f.n))
    values = [access.call(e.func, e.seq_id, e.seq_name, list(row)) for row in rows]
    return xcast.to_arrow(values, e.type)


def _numeric_or(float_kernel):
    """The kernel of a math function with a numeric and a float8 version: the numeric one
    (a scale per value) when the call is typed numeric."""
    def kernel(e: ex.Call, args: list, n: int) -> xa.Datum:
        if e.type.is_numeric:
            return xnm.numeric_call(e, args, n)
        return float_kernel(e, args, n)
    return kernel


_NODES = {ex.ColumnRef: _column, ex.Literal: _literal, ex.Call: _call, ex.Cast: _cast,
          ex.Case: _case, ex.InList: _in_list, ex.Like: _like, ex.IsNull: _is_null,
          ex.RowCall: _row_call, ex.SequenceCall: _sequence_call}

_CALLS = {
    **{f: xarith.arith for f in (Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD)},
    **{f: xarith.compare for f in (Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE)},
    Func.NOT: _not, Func.NEG: xarith.negate, Func.ABS: xarith.negate,
    **{f: xarith.bitwise for f in (Func.BIT_AND, Func.BIT_OR, Func.BIT_XOR, Func.BIT_NOT,
                                   Func.SHIFT_LEFT, Func.SHIFT_RIGHT)},
    **{f: xarith.rounding for f in (Func.ROUND, Func.TRUNC, Func.FLOOR, Func.CEIL)},
    **{f: _numeric_or(xarith.float_math) for f in (Func.SQRT, Func.LN, Func.EXP, Func.POWER)},
    Func.GREATEST: xarith.extreme, Func.LEAST: xarith.extreme, Func.NULLIF: xarith.nullif,
    Func.CONCAT: xs.concat, Func.CONCAT_FN: xs.concat,
    **{f: xs.simple for f in (Func.LOWER, Func.UPPER, Func.LENGTH, Func.OCTET_LENGTH)},
    Func.SUBSTRING: xs.substring, Func.POSITION: xs.strpos, Func.REPLACE: xs.replace,
    Func.TRIM: xs.trim, Func.LTRIM: xs.trim,
    Func.RTRIM: xs.trim, Func.LEFT: xs.left_right, Func.RIGHT: xs.left_right,
    Func.STARTS_WITH: xs.starts_with, Func.FIT_STRING: xs.fit_string,
    Func.REPEAT: xs.repeat, Func.REVERSE: xs.reverse, Func.LPAD: xs.pad, Func.RPAD: xs.pad,
    Func.SPLIT_PART: xs.split_part, Func.CONCAT_WS: xs.concat_ws, Func.INITCAP: xs.initcap,
    Func.MD5: xs.md5, Func.UNISTR: xs.unistr, Func.ASCII: xs.ascii_code, Func.CHR: xs.chr_text,
    Func.TO_HEX: xs.to_hex, Func.NUMERIC_ROOT: xm.numeric_root,
    Func.TRANSLATE: xs.translate,
    **{f: xarith.trig for f in (Func.SIN, Func.COS, Func.TAN, Func.ASIN, Func.ACOS, Func.ATAN,
                                Func.ATAN2)},
    Func.CBRT: xarith.cbrt, Func.SIGN: xarith.sign, Func.GCD: xarith.gcd_lcm,
    Func.LCM: xarith.gcd_lcm,
    Func.EXTRACT: _field_kernel(xd.extract), Func.DATE_PART: _field_kernel(xd.extract),
    Func.DATE_TRUNC: _field_kernel(xd.date_trunc),
    Func.ISFINITE: lambda e, args, n: xinf.isfinite(xa.as_array(args[0], n)),
    Func.ONE_ROW: lambda e, args, n: _one_row(args),
    Func.LOG: _numeric_or(xm.log10), Func.LOG10: _numeric_or(xm.log10), Func.DIV_INT: xm.div,
    Func.FACTORIAL: xm.factorial, Func.WIDTH_BUCKET: xm.width_bucket,
    Func.MIN_SCALE: xm.min_scale,
    **xmd.CALLS,
    **xpa.CALLS,
    **xae.CALLS,
    **xf.CALLS,
    **xj.CALLS,
    **xbin.CALLS,
    **xr.CALLS,
    **xre.CALLS,
    **xls.CALLS,
    **xla.CALLS,
    **xtz.CALLS,
    **xiv.CALLS,
    **nd.CALLS,
}


def _one_row(args: list) -> xa.Datum:
    """A correlated scalar subquery's value (bind_subquery): an error if, for some outer
    row, it produced more than one row."""
    rows, value = args
    if pc.any(pc.fill_null(pc.greater(rows, 1), False)).as_py():
        raise errors.QueryError("more than one row returned by a subquery used as an "
                                "expression", "21000")
    return value
