"""ProjectSet (unnest / generate_subscripts in lockstep) over batches with NULL and empty
arrays, several batches, and an int2vector's 0-based subscripts."""

import pyarrow as pa
from opkit import col, run, source

from planner import plan
from planner import types as T

INTS = T.array_of(T.INT4)
TEXTS = T.array_of(T.TEXT)


def _node(src, arrays, subs):
    fields = src.fields + tuple(plan.Field(f"u{i}", T.INT4 if s else a.type.elem)
                                for i, (a, s) in enumerate(zip(arrays, subs)))
    return plan.ProjectSet(src, tuple(arrays), tuple(subs), fields)


def test_lockstep_with_padding_and_subscripts():
    t = pa.table({"k": pa.array([1, 2, 3, 4], pa.int32()),
                  "a": pa.array([[10, 20], [], None, [40]], pa.list_(pa.int32())),
                  "b": pa.array([["x"], ["y", "z"], None, []], pa.list_(pa.string()))})
    src = source(t, [T.INT4, INTS, TEXTS], batch_rows=3)
    out = run(_node(src, [col(1, INTS), col(2, TEXTS), col(1, INTS)], [False, False, True]))
    rows = list(zip(*(out.column(i).to_pylist() for i in (0, 3, 4, 5))))
    assert rows == [(1, 10, "x", 1), (1, 20, None, 2), (2, None, "y", None),
                    (2, None, "z", None), (4, 40, None, 1)]


def test_vector_subscripts_start_at_zero():
    vec = T.SqlType(T.Kind.INT2VECTOR)
    t = pa.table({"v": pa.array([[3, 1]], pa.list_(pa.int16()))})
    out = run(_node(source(t, [vec]), [col(0, vec), col(0, vec)], [False, True]))
    assert out.column(1).to_pylist() == [3, 1]
    assert out.column(2).to_pylist() == [0, 1]


def test_no_rows_when_every_array_is_empty():
    t = pa.table({"a": pa.array([[], None], pa.list_(pa.int32()))})
    out = run(_node(source(t, [INTS]), [col(0, INTS)], [False]))
    assert out.num_rows == 0
