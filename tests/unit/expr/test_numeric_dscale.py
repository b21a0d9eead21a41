"""Unconstrained numerics in batches (segment/kernels/numeric_dscale.py): each value keeps
its display scale through text output, min/max keys, hashing and grouping, while keys see
only the value (1.5 = 1.50)."""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Decimal, localcontext

import pyarrow as pa
import pytest
from expr_helpers import col, py_values, raises_sqlstate

from motion.hashing import hash_arrays
from planner import functions as F
from planner import types as T
from planner.expr import Func
from planner.values import div_scale, scale_of
from segment.expr import evaluate
from segment.kernels import group_keys
from segment.kernels import numeric_dscale as nd

TEXTS = ["1.5", "1.50", "-0.001", None, "0", "0.00", "-12345.678", "123456789012.1234567891"]


def dynamic(texts, storage=16) -> pa.Array:
    return nd.from_decimals([None if t is None else Decimal(t) for t in texts], storage)


def test_values_print_at_their_own_scale():
    arr = dynamic(TEXTS)
    assert arr.type == T.UNCONSTRAINED.arrow_type()
    out = nd.per_scale_text(arr, lambda dec, scale: dec.cast(pa.string()))
    assert out.to_pylist() == TEXTS
    batch = pa.record_batch([arr], names=["x"])
    assert py_values(F.bind_cast(col(0, T.UNCONSTRAINED), T.TEXT), batch) == TEXTS


def test_more_digits_than_the_storage_scale_is_22003():
    raises_sqlstate("22003", dynamic, ["0.12345678901234567"])
    raises_sqlstate("22003", nd.build, pa.array([Decimal("1.5")], pa.decimal128(38, 2)), 3, 2)


def test_keyed_orders_by_value_and_keeps_the_scale():
    arr = dynamic(TEXTS)
    keys = nd.keyed(arr)
    back = nd.unkeyed(keys, 16)
    assert nd.per_scale_text(back, lambda d, s: d.cast(pa.string())).to_pylist() == TEXTS
    live = [(k, t) for k, t in zip(keys.to_pylist(), TEXTS) if t is not None]
    ordered = [t for _, t in sorted(live)]
    assert [Decimal(t) for t in ordered] == sorted(Decimal(t) for _, t in live)


def test_equal_values_of_different_scales_hash_and_group_alike():
    arr = dynamic(["1.5", "1.50", "1.500", "0", "0.00", "2"])
    h = hash_arrays([arr])
    assert h[0] == h[1] == h[2] and h[3] == h[4] and h[0] != h[5]
    fixed = pa.array([Decimal("1.5")], pa.decimal128(38, 4))
    assert hash_arrays([fixed])[0] == h[0]  # as numeric(p, 4) 1.5000 hashes
    table = pa.table({"k": arr, "n": pa.array([1] * 6)})
    out = group_keys.group_by(table, ["k"], [("n", "sum")])
    assert sorted(out.column("n_sum").to_pylist()) == [1, 2, 3]


def test_arithmetic_gives_postgres_scales():
    batch = pa.record_batch([dynamic(["1.5", "2.50", "-3", None])], names=["x"])
    x = col(0, T.UNCONSTRAINED)
    texts = lambda e: [None if v is None else str(v) for v in py_values(e, batch)]  # noqa: E731
    assert texts(F.bind_call(Func.ADD, [x, x])) == ["3.0", "5.00", "-6", None]
    assert texts(F.bind_call(Func.MUL, [x, x])) == ["2.25", "6.2500", "9", None]
    assert texts(F.bind_call(Func.NEG, [x])) == ["-1.5", "-2.50", "3", None]
    assert texts(F.bind_call(Func.DIV, [x, x])) == [
        "1.00000000000000000000", "1.00000000000000000000", "1.00000000000000000000", None]
    e = evaluate(F.bind_call(Func.DIV, [x, x]), batch)
    assert e.type == T.dynamic_numeric(T.DIVISION_SCALE).arrow_type()


def _quotient(a: Decimal, b: Decimal) -> Decimal:
    """PostgreSQL's a / b: select_div_scale digits, rounded half away from zero."""
    with localcontext() as ctx:
        ctx.prec = 200
        scale = div_scale(a, b, scale_of(a), scale_of(b))
        return (a / b).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)


def _fits(q: Decimal) -> bool:
    """Whether raympp's layout holds quotient q (24 fractional, 14 integer digits)."""
    return abs(q) < Decimal(10) ** 14 and scale_of(q) <= T.DIVISION_SCALE


def _operands(rng: random.Random, n: int, digits: int) -> list:
    out = []
    for _ in range(n):
        scale = rng.choice([0, 1, 2, 4, 8, 12, 16])
        v = Decimal(rng.randint(1, 10**rng.randint(1, digits))).scaleb(-scale)
        out.append(-v if rng.random() < 0.5 else v)
    return out


@pytest.mark.parametrize("digits", [14, 22])  # divisors within 64 bits / beyond them
def test_quotients_match_postgres_row_by_row(digits):
    rng = random.Random(digits)
    a, b = _operands(rng, 600, 18), _operands(rng, 600, digits)
    a[3], b[5], a[7] = None, None, Decimal("0.00")
    fits = [i for i in range(len(a))
            if a[i] is None or b[i] is None or _fits(_quotient(a[i], b[i]))]
    a, b = [a[i] for i in fits], [b[i] for i in fits]
    batch = pa.record_batch([dynamic_values(a), dynamic_values(b)], names=["a", "b"])
    x, y = col(0, T.UNCONSTRAINED), col(1, T.UNCONSTRAINED)
    got = py_values(F.bind_call(Func.DIV, [x, y]), batch)
    want = [None if p is None or q is None else _quotient(p, q) for p, q in zip(a, b)]
    assert [None if v is None else str(v) for v in got] == [
        None if v is None else str(abs(v) if v == 0 else v) for v in want]
    # a constant divisor broadcasts
    small = [p for p in a if p is None or _fits(_quotient(p, Decimal("7.0")))]
    batch = pa.record_batch([dynamic_values(small)], names=["a"])
    got = py_values(F.bind_call(Func.DIV, [x, F.literal(Decimal("7.0"))]), batch)
    assert got == [None if p is None else _quotient(p, Decimal("7.0")) for p in small]


def test_quotient_edges():
    batch = pa.record_batch([dynamic(["1", "-1e20", "5"]), dynamic(["0", "3", "0.1"])],
                            names=["a", "b"])
    e = F.bind_call(Func.DIV, [col(0, T.UNCONSTRAINED), col(1, T.UNCONSTRAINED)])
    raises_sqlstate("22012", py_values, e, batch)
    raises_sqlstate("22003", py_values, e, batch.slice(1))  # 20 integer digits
    assert py_values(e, batch.slice(2)) == [Decimal("50.000000000000000")]
    assert py_values(e, batch.slice(0, 0)) == []


def dynamic_values(values: list) -> pa.Array:
    return nd.from_decimals(values, 16)


def test_weight_first_matches_the_python_reading_within_and_beyond_64_bits():
    """weight_first (compiled: native steps within 64 bits, 32-bit limbs beyond) against
    _py_weight_first over random 128-bit values of every length, both signs, at scales
    0, 4, 16 and 24."""
    import numpy as np
    from segment.kernels import numeric_dscale as nd

    rng = np.random.default_rng(5)
    values = [0, 1, -1, 9999, 10000, 10**19 - 1, 10**19, 2**64 - 1, 2**64, 10**38 - 1]
    values += [int(rng.integers(1, 10)) * 10**int(rng.integers(0, 38)) + int(rng.integers(0, 10**6))
               for _ in range(300)]
    values += [-v for v in values]
    words = [v & ((1 << 128) - 1) for v in values]
    lo = np.array([w & ((1 << 64) - 1) for w in words], dtype=np.uint64).view(np.int64)
    hi = np.array([w >> 64 for w in words], dtype=np.uint64).view(np.int64)
    for scale in (0, 4, 16, 24):
        weight, first = nd.weight_first(lo, hi, scale)
        want = [nd._py_weight_first(v, scale) for v in values]
        assert list(zip(weight.tolist(), first.tolist())) == want
