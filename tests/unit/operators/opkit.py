"""Helpers of the operator tests (tests/unit/operators): a Source plan node that replays hand-built batches,
plan/expression builders, and a stand-in for segment.expr while that module is missing.

The stand-in covers only what these tests use (column refs, literals, comparisons, AND/OR/
NOT, + - *, IS NULL, IN, casts); once segment/expr.py exists the real evaluator is used.
"""

from __future__ import annotations

import datetime
import decimal
import importlib
import sys
import types as pytypes
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from planner import expr as ex
from planner import plan
from planner import types as T


def _fake_literal(value, t: T.SqlType, n: int) -> pa.Array:
    if t.is_scaled_int and value is not None:
        value = int(decimal.Decimal(value).scaleb(t.scale))
    return pa.repeat(pa.scalar(value, t.arrow_type()), n)


def _fake_evaluate(e: ex.Expr, batch: pa.RecordBatch) -> pa.Array:
    n = batch.num_rows
    if isinstance(e, ex.ColumnRef):
        return batch.column(e.index)
    if isinstance(e, ex.Literal):
        return _fake_literal(e.value, e.type, n)
    if isinstance(e, ex.Cast):
        return _fake_evaluate(e.arg, batch).cast(e.type.arrow_type())
    if isinstance(e, ex.IsNull):
        v = pc.is_null(_fake_evaluate(e.arg, batch))
        return pc.invert(v) if e.negated else v
    if isinstance(e, ex.InList):
        arg = _fake_evaluate(e.arg, batch)
        vals = pa.concat_arrays([_fake_evaluate(v, batch).slice(0, 1) if n else
                                 _fake_literal(v.value, v.type, 1) for v in e.values])
        out = pc.is_in(arg, value_set=vals.cast(arg.type))
        out = pc.if_else(pc.is_null(arg), pa.scalar(None, pa.bool_()), out)
        return pc.invert(out) if e.negated else out
    if isinstance(e, ex.Call):
        args = [_fake_evaluate(a, batch) for a in e.args]
        f = e.func
        simple = {ex.Func.EQ: "equal", ex.Func.NE: "not_equal", ex.Func.LT: "less",
                  ex.Func.LE: "less_equal", ex.Func.GT: "greater", ex.Func.GE: "greater_equal",
                  ex.Func.ADD: "add_checked", ex.Func.SUB: "subtract_checked",
                  ex.Func.MUL: "multiply_checked", ex.Func.AND: "and_kleene",
                  ex.Func.OR: "or_kleene"}
        if f in simple:
            if f in (ex.Func.AND, ex.Func.OR) and len(args) > 2:
                out = args[0]
                for a in args[1:]:
                    out = pc.call_function(simple[f], [out, a])
                return out
            return pc.call_function(simple[f], args)
        if f is ex.Func.NOT:
            return pc.invert(args[0])
    raise NotImplementedError(f"fake evaluator: {e!r}")


def _install_fake_expr() -> None:
    try:
        importlib.import_module("segment.expr")
    except ImportError:
        mod = pytypes.ModuleType("segment.expr")
        mod.evaluate = _fake_evaluate
        mod.__doc__ = "test stand-in for segment.expr (tests/unit/operators/conftest.py)"
        sys.modules["segment.expr"] = mod
        import segment

        segment.expr = mod


_install_fake_expr()

from segment.operators import base  # noqa: E402  (needs segment.expr)


@dataclass(frozen=True, eq=False)
class Source(plan.Node):
    """A leaf that replays `batches` (test only)."""

    batches: tuple
    fields: tuple
    locus: object = None


class _SourceOp:
    def __init__(self, node: Source):
        self.node = node
        self.schema = base.schema_of(node.fields)
        self.pulled = 0

    def execute(self, ctx):
        for b in self.node.batches:
            self.pulled += 1
            yield b


if Source not in base._BUILDERS:
    base.register(Source)(lambda node, build_child: _SourceOp(node))


# --- builders -----------------------------------------------------------------------------

def source(table: pa.Table | pa.RecordBatch | list, sql_types: list[T.SqlType],
           batch_rows: int | None = None) -> Source:
    """A Source over a table's rows split into batches of batch_rows (one batch if None)."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if isinstance(table, list):
        batches = tuple(table)
        names = batches[0].schema.names if batches else [f"c{i}" for i in range(len(sql_types))]
    else:
        names = table.schema.names
        if batch_rows is None:
            batches = tuple(table.combine_chunks().to_batches()) or ()
        else:
            batches = tuple(table.combine_chunks().to_batches(max_chunksize=batch_rows))
    return Source(batches, plan.fields_of(zip(names, sql_types)))


def col(i: int, t: T.SqlType, name: str = "") -> ex.ColumnRef:
    return ex.ColumnRef(i, t, name)


def lit(v, t: T.SqlType) -> ex.Literal:
    return ex.Literal(v, t)


def call(func: ex.Func, *args, t: T.SqlType = T.BOOL) -> ex.Call:
    return ex.Call(func, tuple(args), t)


def ctx(**kw) -> base.ExecContext:
    return base.ExecContext(**kw)


def run(node: plan.Node, context: base.ExecContext | None = None) -> pa.Table:
    from segment import executor

    return executor.collect(node, context or base.ExecContext())


EPOCH = datetime.date(1970, 1, 1)
