"""Run compiled expression kernels over Arrow batches.

`Compiled(exprs, predicate)` compiles once per operator (codegen + kernels); `run(batch)`
feeds the kernel the Arrow buffers of the columns it reads (zero-copy for numbers, dates
and timestamps), the leaves segment/expr.py computed, and the constants, and turns its
outputs back into Arrow arrays of the expressions' types. It returns None where the
batch must go the general way: a leaf raised, or the kernel met a row it leaves to the
general evaluator (overflow, division by zero: see codegen.py). `compile_seconds` is what
the first call of each input signature cost (numba compiles, or loads its disk cache).
"""

from __future__ import annotations

import datetime
import decimal
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, temporal
from planner import expr as ex
from planner.types import Kind, SqlType
from segment import expr as sexpr
from segment import heap
from segment.jit import codegen, kernels

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)
_NO_NULLS = np.empty(0, np.bool_)
_NUMPY = {codegen.INT: np.int64, codegen.FLOAT: np.float64, codegen.BOOL: np.bool_}


class _Kernel:
    """A generated program's kernel, its constants as the loop holds them, and the counters
    EXPLAIN ANALYZE shows."""

    def __init__(self, program: codegen.Program):
        self.program = program
        self.kernel = kernels.kernel(program.source)
        self.constants = [_physical(c, k) for c, k in zip(program.constants,
                                                           program.constant_kinds)]
        self.compile_seconds = 0.0
        self.batches = 0       # batches the kernel answered
        self.fallbacks = 0     # batches left to the general evaluator

    def _call(self, *args):
        """The kernel's (status, count), the time of a first call per input signature
        (numba compiles, or loads its disk cache) added to compile_seconds."""
        before = len(self.kernel.signatures)
        t0 = time.perf_counter()
        out = self.kernel(*args)
        if len(self.kernel.signatures) != before:
            self.compile_seconds += time.perf_counter() - t0
            heap.kernels_loaded()
        if out[0] != 0:
            self.fallbacks += 1
        else:
            self.batches += 1
        return out

    def count_into(self, counters: dict) -> None:
        counters["jit_batches"] = self.batches
        counters["jit_fallbacks"] = self.fallbacks
        counters["jit_compile_ms"] = round(self.compile_seconds * 1000)


class Compiled(_Kernel):
    """`exprs` (and `predicate`, whose true rows they are computed for) as one kernel.
    Raises codegen.NotCompiled when there is nothing worth compiling."""

    def __init__(self, exprs: list[ex.Expr], predicate: ex.Expr | None = None):
        super().__init__(codegen.compile_program(list(exprs), predicate))
        self.kinds = [codegen.machine_kind(t) for t in self.program.outputs]

    def run(self, batch: pa.RecordBatch, now=None):
        """(selected row positions or None, output arrays), or None: use the general
        evaluator for this batch."""
        n = batch.num_rows
        inputs = _inputs(self.program, batch, now)
        if inputs is None:
            self.fallbacks += 1
            return None  # the general evaluator decides (lazily) whether it raises
        outs = []
        for k in self.kinds:
            outs += [np.empty(n, _NUMPY[k]), np.empty(n, np.bool_)]
        sel = np.empty(n if self.program.has_predicate else 0, np.int64)
        status, count = self._call(n, *inputs, *self.constants, *outs, sel)
        if status != 0:
            return None
        arrays = [_arrow(outs[2 * j][:count], outs[2 * j + 1][:count], t)
                  for j, t in enumerate(self.program.outputs)]
        return (sel[:count] if self.program.has_predicate else None), arrays


class Accumulation(_Kernel):
    """codegen.compile_accumulation's loop: aggregate arguments computed and added to a
    group table's accumulators in one pass (segment/operators/agg_table.py). Raises
    codegen.NotCompiled when some argument cannot be computed in the loop."""

    def __init__(self, args: list[ex.Expr], ops: list[tuple[int | None, str]]):
        super().__init__(codegen.compile_accumulation(list(args), ops))

    def run(self, batch: pa.RecordBatch, gid: np.ndarray, accumulators: list[np.ndarray],
            now=None) -> int:
        """Add the rows to the accumulators at their groups `gid`; returns how many were
        added from the first: all of them, or fewer when the loop left a row (and those
        after it) to the general evaluator (0 when a leaf raised)."""
        inputs = _inputs(self.program, batch, now)
        if inputs is None:
            self.fallbacks += 1
            return 0
        _, done = self._call(batch.num_rows, *inputs, *self.constants, gid, *accumulators)
        return done


def _inputs(program: codegen.Program, batch: pa.RecordBatch, now) -> list | None:
    """The kernel's column and leaf inputs, or None when a leaf raised."""
    inputs = []
    for c in program.columns:
        inputs += _buffers(batch.column(c))
    try:
        for leaf in program.leaves:
            inputs += _leaf_buffers(leaf, batch, now)
    except (errors.QueryError, pa.ArrowException):
        return None
    return inputs


def _leaf_buffers(leaf: ex.Expr, batch: pa.RecordBatch, now) -> list[np.ndarray]:
    """A leaf's (values, validity). Over one dictionary-encoded column (l_shipmode IN
    (...), a LIKE), the values over the dictionary are gathered by the row indices in
    numpy: Arrow's take would pack a boolean result into bits, which the kernel's buffers
    unpack again (TPC-H Q19's two such leaves, about 2 ms each per 600k rows)."""
    found = sexpr.over_dictionary(leaf, batch, now)
    if found is None:
        return _buffers(sexpr.evaluate(leaf, batch, now))
    d, indices = found
    values, valid = _buffers(d)
    idx = indices.to_numpy(zero_copy_only=False)  # no NULLs: they index an extra entry
    return [values[idx], valid[idx] if len(valid) else _NO_NULLS]


def try_compile(exprs: list[ex.Expr], predicate: ex.Expr | None = None) -> Compiled | None:
    """A Compiled, or None when the expressions have nothing to compile."""
    try:
        return Compiled(exprs, predicate)
    except codegen.NotCompiled:
        return None


def _buffers(arr) -> list[np.ndarray]:
    """(values, validity) of a column as the kernel reads them: values of any width
    (no copy), validity as booleans or empty when there are no NULLs."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr, pa.Scalar):
        raise codegen.NotCompiled("a constant leaf")  # (leaves are never constant)
    t = arr.type
    n = len(arr)
    if pa.types.is_boolean(t):
        values = pc.fill_null(arr, False).to_numpy(zero_copy_only=False)
    else:
        if pa.types.is_date32(t):
            dtype = np.int32
        elif pa.types.is_timestamp(t):
            dtype = np.int64
        else:
            dtype = t.to_pandas_dtype()
        values = np.frombuffer(arr.buffers()[1], dtype=dtype, count=arr.offset + n)[arr.offset:]
    if arr.null_count == 0:
        return [values, _NO_NULLS]
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    valid = np.unpackbits(bits, bitorder="little", count=arr.offset + n)[arr.offset:]
    return [values, valid.view(np.bool_)]


def _arrow(values: np.ndarray, nulls: np.ndarray, t: SqlType) -> pa.Array:
    mask = nulls if nulls.any() else None
    target = t.arrow_type()
    if pa.types.is_date32(target):
        return pa.array(values.astype(np.int32), mask=mask).view(target)
    if pa.types.is_timestamp(target):
        return pa.array(values, mask=mask).view(target)
    if pa.types.is_decimal(target):  # unscaled int64 values, widened to two words
        words = np.empty((len(values), 2), np.int64)
        words[:, 0], words[:, 1] = values, values >> 63
        validity = pa.array(~mask).buffers()[1] if mask is not None else None
        return pa.Array.from_buffers(target, len(values), [validity, pa.py_buffer(words)])
    arr = pa.array(values, mask=mask)
    return arr if arr.type == target else arr.cast(target)


def _physical(lit: ex.Literal, kind: str):
    """A constant as the loop holds values of its type."""
    v, t = lit.value, lit.type
    if kind == codegen.BOOL:
        return np.bool_(v)
    if kind == codegen.FLOAT:
        return np.float64(v)
    if codegen.scaled(t):
        unscaled = decimal.Decimal(v).scaleb(t.scale)
        if unscaled != unscaled.to_integral_value() or abs(unscaled) >= 2 ** 63:
            raise codegen.NotCompiled("a constant finer than its type's scale, or too wide")
        return np.int64(int(unscaled))
    if isinstance(v, temporal.Infinite):  # as stored (segment/kernels/infinite.py)
        pair = temporal.INFINITE_DAYS if t.kind is Kind.DATE else temporal.INFINITE_MICROS
        return np.int64(pair[0] if v.sign > 0 else pair[1])
    if t.kind is Kind.DATE:
        return np.int64((v - _EPOCH_DATE).days)
    if t.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return np.int64((v - _EPOCH) // datetime.timedelta(microseconds=1))
    return np.int64(v)


class OperatorKernel:
    """What an operator holds: its Compiled, built at the first batch big enough in a
    context with `jit` on (None when nothing compiles), and its EXPLAIN ANALYZE counters."""

    def __init__(self, exprs: list[ex.Expr], predicate: ex.Expr | None = None):
        self.exprs, self.predicate = exprs, predicate
        self.compiled: Compiled | None = None
        self.built = False

    def get(self, ctx, rows: int) -> Compiled | None:
        """The Compiled for a batch of `rows` rows in context `ctx` (None: evaluate it
        the general way): built at the first batch of at least ctx.jit_above_rows."""
        if not ctx.jit or (not self.built and rows < ctx.jit_above_rows):
            return None
        if not self.built:
            self.built = True
            self.compiled = try_compile(self.exprs, self.predicate)
        return self.compiled

    def count_into(self, counters: dict) -> None:
        if self.compiled is not None:
            self.compiled.count_into(counters)
