"""segment/jit: compiled expression loops answer exactly as the general evaluator
(segment/expr.py), over random expression trees of the types they compile, with NULLs,
NaN, -0.0, zero divisors and values near the ranges' ends; rows the compiled loop leaves
to the general path (overflow, division by zero) must make it hand the batch back;
constants are arguments (one kernel for x > 5 and x > 7); leaves (LIKE) are evaluated
first."""

from __future__ import annotations

import datetime
import decimal
import random

import numpy as np
import pyarrow as pa
import pytest

from planner import errors
from planner import expr as ex
from planner import types as T
from segment import expr as sexpr
from segment.jit import codegen, evaluate as jev

F = ex.Func
N152 = T.numeric(15, 2)
N184 = T.numeric(18, 4)
COLS = [("i4", T.INT4), ("i8", T.INT8), ("f8", T.FLOAT8), ("n", N152), ("d", T.DATE),
        ("b", T.BOOL), ("s", T.TEXT), ("i2", T.INT2)]
N_ROWS = 3000


def _batch(seed: int) -> pa.RecordBatch:
    rng = np.random.default_rng(seed)

    def nulls(values, frac=0.15):
        return pa.array(values, mask=rng.random(N_ROWS) < frac)

    f8 = rng.choice([0.0, -0.0, 1.5, -2.25, np.nan, np.inf, 1e300, 3.0, 7.0], N_ROWS)
    return pa.record_batch([
        nulls(rng.choice([0, 1, -1, 5, 7, 2**31 - 1, -2**31, 1000], N_ROWS).astype(np.int32)),
        nulls(rng.choice([0, 3, -9, 2**62, -2**62, 12345678901], N_ROWS).astype(np.int64)),
        nulls(f8),
        nulls(rng.integers(-10**6, 10**6, N_ROWS)),
        nulls(rng.integers(9000, 9100, N_ROWS).astype(np.int32)).cast(pa.date32()),
        nulls(rng.random(N_ROWS) < 0.5),
        nulls(np.array([f"x{v}" for v in rng.integers(0, 5, N_ROWS)])),
        nulls(rng.choice([0, 1, -3, 32767, -32768, 200], N_ROWS).astype(np.int16)),
    ], names=[c for c, _ in COLS])


def col(name: str) -> ex.ColumnRef:
    i = [c for c, _ in COLS].index(name)
    return ex.ColumnRef(i, COLS[i][1], name)


def call(f, t, *args):
    return ex.Call(f, tuple(args), t)


def lit(v, t):
    return ex.Literal(v, t)


def _numbers(rng: random.Random, depth: int) -> ex.Expr:
    """A random expression of one number family (int8, int4, float8 or numeric)."""
    family = rng.choice(["i8", "i4", "f8", "n"])
    return _number(rng, family, depth)


def _number(rng: random.Random, family: str, depth: int) -> ex.Expr:
    t = {"i8": T.INT8, "i4": T.INT4, "f8": T.FLOAT8, "n": N152}[family]
    if depth == 0 or rng.random() < 0.3:
        pick = rng.random()
        if pick < 0.2:
            v = {"i8": rng.choice([0, 2, -7, 2**40]), "i4": rng.choice([0, 1, 3, 2**30]),
                 "f8": rng.choice([0.0, 0.5, -1.25, float("nan")]),
                 "n": decimal.Decimal(rng.choice(["0.00", "1.50", "-2.25", "100.00"]))}[family]
            return lit(v, t)
        if pick < 0.25:
            return lit(None, t)
        if family == "i4" and rng.random() < 0.3:
            return ex.Cast(col("i2"), T.INT4)
        if family == "i8" and rng.random() < 0.3:
            return ex.Cast(col("i4"), T.INT8)
        if family == "f8" and rng.random() < 0.3:
            return ex.Cast(col("i4"), T.FLOAT8)
        return col(family)
    if rng.random() < 0.15:
        cond = _predicate(rng, depth - 1)
        return ex.Case(((cond, _number(rng, family, depth - 1)),),
                       _number(rng, family, depth - 1), t)
    f = rng.choice([F.ADD, F.SUB, F.MUL] + ([F.DIV] if family != "n" else []))
    a, b = _number(rng, family, depth - 1), _number(rng, family, depth - 1)
    if family == "n":
        if f is F.MUL:
            return ex.Cast(call(F.MUL, N184, a, b), N184) if False else call(
                F.MUL, T.numeric(18, 4), a, b) if True else None
        return call(f, T.numeric(16, 2), a, b)
    return call(f, t, a, b)


def _predicate(rng: random.Random, depth: int) -> ex.Expr:
    pick = rng.random()
    if depth <= 0 or pick < 0.4:
        family = rng.choice(["i8", "i4", "f8", "n", "d", "b", "like"])
        if family == "d":
            return call(rng.choice([F.LT, F.GE, F.EQ]), T.BOOL, col("d"),
                        lit(datetime.date(1994, 9, rng.randint(1, 28)), T.DATE))
        if family == "b":
            return col("b") if rng.random() < 0.5 else ex.IsNull(col("b"), rng.random() < 0.5)
        if family == "like":
            return ex.Like(col("s"), lit("x%1", T.TEXT), rng.random() < 0.5, False)
        if rng.random() < 0.2:
            return _in_list(rng, family)
        a, b = _number(rng, family, 1), _number(rng, family, 1)
        if a.type != b.type and family == "n":
            return call(F.GT, T.BOOL, a, b) if a.type.scale == b.type.scale else \
                call(F.EQ, T.BOOL, a, b)
        return call(rng.choice([F.EQ, F.NE, F.LT, F.LE, F.GT, F.GE]), T.BOOL, a, b)
    if pick < 0.55:
        return call(F.NOT, T.BOOL, _predicate(rng, depth - 1))
    return call(rng.choice([F.AND, F.OR]), T.BOOL, _predicate(rng, depth - 1),
                _predicate(rng, depth - 1))


def _in_list(rng: random.Random, family: str) -> ex.InList:
    """x [NOT] IN (constants of x's type, NULL among them at times)."""
    t = {"i8": T.INT8, "i4": T.INT4, "f8": T.FLOAT8, "n": N152}[family]
    pool = {"i8": [0, 3, -9, 2**62, 7], "i4": [0, 1, -1, 5, 2**31 - 1],
            "f8": [0.0, -0.0, 1.5, float("nan"), float("inf")],
            "n": [decimal.Decimal(v) for v in ("0.00", "1.50", "-2.25", "4.00")]}[family]
    values = [rng.choice(pool + [None]) for _ in range(rng.randint(1, 4))]
    arg = _number(rng, family, 1)
    return ex.InList(arg, tuple(lit(v, arg.type) for v in values), rng.random() < 0.4)


def _general(e, batch):
    try:
        return sexpr.evaluate(e, batch)
    except errors.QueryError as err:
        return err.sqlstate


@pytest.mark.parametrize("seed", range(40))
def test_random_expressions_answer_as_the_general_evaluator(seed):
    rng = random.Random(seed)
    batch = _batch(seed)
    exprs = [_numbers(rng, 3) for _ in range(3)]
    pred = _predicate(rng, 3)
    compiled = jev.try_compile(exprs, pred)
    plain = jev.try_compile([pred] + exprs)
    for c, use_pred in ((compiled, True), (plain, False)):
        if c is None:
            continue
        out = c.run(batch)
        if use_pred:
            mask = _general(pred, batch)
            kept = batch.filter(mask) if not isinstance(mask, str) else None
            want = [_general(e, kept) for e in exprs] if kept is not None else None
        else:
            want = [_general(e, batch) for e in [pred] + exprs]
        if out is None:
            continue  # handed back: the general path decides (it may raise or not)
        sel, got = out
        assert want is not None and not any(isinstance(w, str) for w in want), \
            "the compiled loop answered where the general evaluator raises"
        if use_pred:
            assert len(sel) == kept.num_rows
        for g, w in zip(got, want):
            w = w if isinstance(w, pa.Array) else pa.repeat(w, len(g))
            assert g.type == w.type
            assert g.to_pylist() == w.to_pylist() or _same_floats(g, w)


def _same_floats(a: pa.Array, b: pa.Array) -> bool:
    x, y = a.to_pylist(), b.to_pylist()
    return all(p == q or (p != p and q != q) for p, q in zip(x, y))


def test_constants_are_arguments():
    a = jev.Compiled([], call(F.GT, T.BOOL, col("i8"), lit(5, T.INT8)))
    b = jev.Compiled([], call(F.GT, T.BOOL, col("i8"), lit(7, T.INT8)))
    assert a.kernel is b.kernel


def test_overflow_and_division_by_zero_go_back_to_the_general_path():
    batch = _batch(1)
    over = jev.Compiled([call(F.MUL, T.INT8, col("i8"), lit(2**40, T.INT8))])
    assert over.run(batch) is None and over.fallbacks == 1
    with pytest.raises(errors.QueryError) as e:
        sexpr.evaluate(over.program and call(F.MUL, T.INT8, col("i8"), lit(2**40, T.INT8)),
                       batch)
    assert e.value.sqlstate == "22003"
    div = jev.Compiled([call(F.DIV, T.INT4, col("i4"), col("i4"))])
    assert div.run(batch) is None


def test_int_division_truncates_toward_zero():
    batch = pa.record_batch([pa.array([-7, 7, -7, 7], pa.int32())], names=["i4"])
    c = jev.Compiled([call(F.DIV, T.INT4, ex.ColumnRef(0, T.INT4), lit(2, T.INT4))])
    _, (got,) = c.run(batch)
    assert got.to_pylist() == [-3, 3, -3, 3]


def test_leaves_are_read_as_columns_and_strings_alone_do_not_compile():
    like = ex.Like(col("s"), lit("x1", T.TEXT), False, False)
    assert jev.try_compile([], like) is None
    pred = call(F.AND, T.BOOL, like, call(F.GT, T.BOOL, col("i4"), lit(0, T.INT4)))
    c = jev.Compiled([], pred)
    assert len(c.program.leaves) == 1
    batch = _batch(3)
    sel, _ = c.run(batch)
    assert len(sel) == batch.filter(sexpr.evaluate(pred, batch)).num_rows


def test_in_lists_of_constants_compile_and_long_ones_stay_a_leaf():
    batch = _batch(5)
    for negated in (False, True):
        for values in ([5, 7], [5, None], [None], [-1, 1, 0]):
            pred = ex.InList(col("i4"), tuple(lit(v, T.INT4) for v in values), negated)
            c = jev.Compiled([pred])
            assert not c.program.leaves
            _, (got,) = c.run(batch)
            assert got.to_pylist() == sexpr.evaluate(pred, batch).to_pylist()
    long = ex.InList(col("i4"), tuple(lit(v, T.INT4) for v in range(codegen.IN_LIST_MAX + 1)),
                     False)
    assert jev.try_compile([long]) is None  # alone, a leaf leaves nothing to compile
    c = jev.Compiled([], call(F.AND, T.BOOL, long, call(F.GT, T.BOOL, col("i8"), lit(0, T.INT8))))
    assert len(c.program.leaves) == 1
    # int2 against int4 constants (as `TraficSourceID IN (-1, 6)` binds)
    pred = ex.InList(col("i2"), (lit(-3, T.INT4), lit(200, T.INT4)), False)
    c = jev.Compiled([], pred)
    assert not c.program.leaves
    sel, _ = c.run(batch)
    assert len(sel) == batch.filter(sexpr.evaluate(pred, batch)).num_rows


def test_not_compiled_for_types_the_loop_cannot_hold():
    with pytest.raises(codegen.NotCompiled):
        codegen.compile_program([col("s")], None)


def test_numeric_products_wider_than_18_digits_compute_in_the_loop():
    # numeric(15,2) * numeric(15,2) is numeric(30,4): decimal128 in batches, an int64 in
    # the loop while it fits, widened back to decimal128 on the way out.
    n152 = T.numeric(15, 2)
    wide = T.numeric(30, 4)
    batch = pa.record_batch([pa.array([12345, -250, None, 10**12], pa.int64()),
                             pa.array([300, 7, 5, 10**6], pa.int64())], names=["a", "b"])
    prod = call(F.MUL, wide, ex.ColumnRef(0, n152), ex.ColumnRef(1, n152))
    c = jev.Compiled([prod])
    _, (got,) = c.run(batch)
    assert got.type == wide.arrow_type()
    assert got.to_pylist() == sexpr.evaluate(prod, batch).to_pylist()
    # past int64 the general path decides
    big = pa.record_batch([pa.array([10**13], pa.int64()), pa.array([10**13], pa.int64())],
                          names=["a", "b"])
    assert c.run(big) is None
    assert sexpr.evaluate(prod, big).to_pylist() == [decimal.Decimal(10**22)]


def test_decimal128_columns_are_not_read_by_the_loop():
    wide = T.numeric(30, 4)
    w = ex.ColumnRef(0, wide)
    with pytest.raises(codegen.NotCompiled):
        codegen.compile_program([call(F.ADD, wide, w, w)], None)
