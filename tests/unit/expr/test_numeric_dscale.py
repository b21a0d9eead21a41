"""Unconstrained numerics in batches (segment/kernels/numeric_dscale.py): each value keeps
its display scale through text output, min/max keys, hashing and grouping, while keys see
only the value (1.5 = 1.50)."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
from expr_helpers import col, py_values, raises_sqlstate

from motion.hashing import hash_arrays
from planner import functions as F
from planner import types as T
from planner.expr import Func
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
