"""Aggregate states for hash_agg.py: what each aggregate keeps per group while batches
stream in, how two partial results merge, and how the final column is produced.

Every aggregate has one or more state columns, each computed per batch by an Arrow hash
aggregation function and merged by another (counts merge by sum, minimums by min, ...).

Sums of integers and scaled numerics are exact: a state is an *unscaled* integer column,
int64 while |max value| * rows (per batch) or |max state| * tables (per merge) provably
fits, decimal128(38, 0) otherwise; it never wraps. The final column has the AggCall's type:
bigint results out of range raise NumericOutOfRange('bigint out of range'); numeric
results are decimal128 or scaled int64 at the result's scale; avg of integers and numerics
is the exact quotient rounded half away from zero (PostgreSQL's rule).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from planner import expr as ex
from planner.plan import AggMode
from planner.types import SqlType
from segment.kernels import agg_decimal

_COUNT_ALL = pc.CountOptions(mode="all")
_LIMIT = 1 << 63


class AggKind(str, enum.Enum):
    """What an aggregate keeps per group, which decides its states and its final column.
    (A str enum so that hash_agg.py's `kind == "count"` holds until it compares members.)"""

    COUNT = "count"          # count(*), count(x): a count, merged by sum
    SUM = "sum"              # integers and numerics: an exact unscaled sum
    FLOAT_SUM = "float_sum"  # floats: a float64 sum
    MINMAX = "minmax"        # min, and max of non-floats
    FLOAT_MAX = "float_max"  # max of floats: NaN sorts above every number
    AVG = "avg"              # a sum and a count
    LIST = "list"            # array_agg


# The exact sum of int64 values into 128 bits, for aggregates without keys (batch_inputs).
SUM_INT128 = "sum_int128"


@dataclass(frozen=True)
class State:
    merge: str     # Arrow hash aggregation that combines two partial values
    exact: bool    # an unscaled exact sum: widen to decimal128 before it could overflow


class AggSpec:
    """One AggCall, of one AggKind.

    The mode does not change what a call computes: distribute.py expresses merging as
    ordinary calls over the partial states (sum of counts, min of mins), and a FINAL over
    de-duplicated rows still has DISTINCT calls (segments may hold the same pair)."""

    def __init__(self, call: ex.AggCall, mode: AggMode):
        self.call = call
        self.mode = mode
        self.distinct = call.distinct and call.func in (
            ex.AggFunc.COUNT, ex.AggFunc.SUM, ex.AggFunc.AVG)
        f = call.func
        arg_t = call.arg.type if call.arg is not None else None
        self.arg_type: SqlType | None = arg_t
        if f in (ex.AggFunc.COUNT_STAR, ex.AggFunc.COUNT):
            self.kind = AggKind.COUNT
        elif f is ex.AggFunc.SUM:
            self.kind = AggKind.FLOAT_SUM if arg_t.is_float else AggKind.SUM
        elif f is ex.AggFunc.AVG:
            self.kind = AggKind.AVG
        elif f is ex.AggFunc.MAX and arg_t.is_float:
            self.kind = AggKind.FLOAT_MAX
        elif f in (ex.AggFunc.MIN, ex.AggFunc.MAX):
            self.kind = AggKind.MINMAX
        elif f is ex.AggFunc.ARRAY_AGG:
            self.kind = AggKind.LIST
        else:
            raise errors.FeatureNotSupported(f"aggregate {call.sql()} is not supported")
        self.states = self._states()

    # --- per batch ----------------------------------------------------------------------
    def _states(self) -> list[State]:
        k = self.kind
        if k is AggKind.COUNT:
            return [State("sum", False)]
        if k is AggKind.SUM:
            return [State("sum", True)]
        if k is AggKind.FLOAT_SUM:
            return [State("sum", False)]
        if k is AggKind.LIST:  # merged lists of lists are flattened (hash_agg.flatten_lists)
            return [State("list", False)]
        if k is AggKind.MINMAX:
            fn = "min" if self.call.func is ex.AggFunc.MIN else "max"
            return [State(fn, False)]
        if k is AggKind.FLOAT_MAX:
            # PostgreSQL sorts NaN above every number, so max is NaN when a NaN is there;
            # Arrow's max skips NaN. Keep the max with NaN as +inf, and whether one was seen.
            return [State("max", False), State("max", False)]
        # avg: a sum (exact unless floats) and a count
        return [State("sum", not self.arg_type.is_float), State("sum", False)]

    def batch_inputs(self, arg: pa.Array | None, n: int, keyed: bool = True):
        """[(input column or None for count(*), Arrow hash function, options)] per state.

        Without keys (`keyed` False) an exact sum of int64 values that could overflow is
        "sum_int128": the scalar aggregate adds the values into 128 bits as they are
        (hash_agg `_scalar_aggregates`), instead of summing a decimal128 copy of them."""
        k = self.kind
        if k is AggKind.COUNT:
            if arg is None:
                return [(None, "count_all", None)]
            return [(arg, "count", None)]
        if k is AggKind.SUM:
            return [self._exact_input(arg, keyed)]
        if k is AggKind.FLOAT_SUM:
            return [(arg.cast(pa.float64()), "sum", None)]
        if k is AggKind.LIST:
            return [(arg, "list", None)]
        if k is AggKind.MINMAX:
            return [(arg, self.states[0].merge, None)]
        if k is AggKind.FLOAT_MAX:
            nan = pc.is_nan(arg)
            return [(pc.if_else(nan, pa.scalar(float("inf"), arg.type), arg), "max", None),
                    (nan.cast(pa.int8()), "max", None)]
        total = ((arg.cast(pa.float64()), "sum", None) if self.arg_type.is_float
                 else self._exact_input(arg, keyed))
        return [total, (arg, "count", None)]

    def _exact_input(self, arg: pa.Array, keyed: bool) -> tuple:
        t = arg.type
        if pa.types.is_decimal(t):
            return arg, "sum", None
        if (pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t)) \
                and len(arg) < (1 << 32):
            # |value| < 2**31, so fewer than 2**32 of them cannot reach 2**63
            return arg, "sum", None
        if agg_decimal.max_abs(arg) * len(arg) < _LIMIT:
            return arg, "sum", None
        if not keyed and t == pa.int64():
            return arg, SUM_INT128, None
        return agg_decimal.from_int64(arg), "sum", None

    # --- merging ------------------------------------------------------------------------
    @staticmethod
    def widen(state: State, column: pa.Array, n_tables: int) -> pa.Array:
        """An exact state column, widened to decimal before merging `n_tables` partial
        results could overflow int64 (a group occurs at most once per table)."""
        if not state.exact or not pa.types.is_integer(column.type):
            return column
        if agg_decimal.max_abs(column) * n_tables < _LIMIT:
            return column
        return agg_decimal.from_int64(column)

    # --- final column -------------------------------------------------------------------
    def finalize(self, states: list[pa.Array]) -> pa.Array:
        out_t = self.call.type
        k = self.kind
        if pa.types.is_null(states[0].type):
            # No state was ever typed: no rows (an empty spill partition's groups) or
            # only NULL ones. A count of nothing is 0, every other aggregate NULL.
            if k is AggKind.COUNT:
                return pa.array(np.zeros(len(states[0]), np.int64)).cast(out_t.arrow_type())
            return pa.nulls(len(states[0]), out_t.arrow_type())
        if k is AggKind.COUNT:
            return states[0].fill_null(0).cast(out_t.arrow_type())
        if k is AggKind.FLOAT_SUM or k is AggKind.MINMAX:
            return _cast(states[0], out_t)
        if k is AggKind.LIST:
            return _cast(states[0], out_t)
        if k is AggKind.FLOAT_MAX:
            value, saw_nan = states
            nan = pa.scalar(float("nan"), value.type)
            return _cast(pc.if_else(pc.equal(saw_nan, 1), nan, value), out_t)
        if k is AggKind.SUM:
            return exact_to_type(states[0], _scale_of(self.arg_type), out_t)
        total, count = states
        count = count.fill_null(0)
        if out_t.is_float:
            if self.arg_type.is_float:
                num = total
            else:
                num = agg_decimal.with_scale(_unscaled(total), _scale_of(self.arg_type)) \
                    .cast(pa.float64())
            den = pc.if_else(pc.equal(count, 0), pa.scalar(None, pa.float64()),
                             count.cast(pa.float64()))
            return _cast(pc.divide(num, den), out_t)
        q = agg_decimal.exact_quotient(_unscaled(total), count, _scale_of(self.arg_type),
                                       out_t.scale if out_t.is_numeric else 0)
        return exact_to_type(agg_decimal.with_scale(q, 0),
                             out_t.scale if out_t.is_numeric else 0, out_t)


def _scale_of(t: SqlType) -> int:
    return t.scale if t.is_numeric else 0


def _unscaled(state: pa.Array) -> pa.Array:
    return state if pa.types.is_integer(state.type) else agg_decimal.with_scale(state, 0)


def exact_to_type(state: pa.Array, scale: int, out: SqlType) -> pa.Array:
    """A column of type `out` from exact values: unscaled integers (int64 or decimal128,
    whose own scale is ignored) at `scale`."""
    unscaled = _unscaled(state)
    if out.is_integer:
        if scale:
            unscaled = agg_decimal.with_scale(agg_decimal.rescale(
                agg_decimal.with_scale(unscaled, scale), 0), 0)
        word = {"bigint": "bigint", "integer": "integer", "smallint": "smallint"}[out.kind.value]
        as_int = agg_decimal.to_int64(unscaled, f"{word} out of range")
        return _cast(as_int, out)
    if out.is_scaled_int:
        if pa.types.is_integer(unscaled.type) and out.scale == scale:
            return unscaled.cast(pa.int64())
        dec = agg_decimal.rescale(agg_decimal.with_scale(unscaled, scale), out.scale)
        return agg_decimal.to_int64(agg_decimal.with_scale(dec, 0), "numeric field overflow")
    if out.is_numeric:
        return agg_decimal.rescale(agg_decimal.with_scale(unscaled, scale), out.scale)
    if out.is_float:
        return _cast(agg_decimal.with_scale(unscaled, scale).cast(pa.float64()), out)
    raise errors.InternalError(f"a sum cannot have type {out}")


def _cast(arr: pa.Array, out: SqlType) -> pa.Array:
    t = out.arrow_type()
    if arr.type == t:
        return arr
    try:
        return arr.cast(t)
    except pa.ArrowInvalid as e:
        raise errors.NumericOutOfRange(f"{out.sql()} out of range") from e
