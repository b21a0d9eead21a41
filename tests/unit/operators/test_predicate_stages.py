"""predicate_stages: conjuncts in stages of rising cost keep exactly the rows the whole
predicate keeps (NULLs, dictionaries, all/none passing, jit on and off), and costlier
conjuncts see only the survivors of the cheaper ones."""

from __future__ import annotations

import pyarrow as pa
import pytest

import opkit as k
from planner import expr as ex
from planner import plan
from planner import types as T
from segment.operators import base
from segment.operators import predicate_stages as ps

F = ex.Func


def _table(n=2000):
    return pa.table({
        "a": pa.array([i if i % 7 else None for i in range(n)], pa.int64()),
        "s": pa.array([None if i % 11 == 0 else f"x{i % 97}google{i % 5}" if i % 3 == 0
                       else f"row{i}" for i in range(n)]),
        "t": pa.array([f"t{i % 4}" for i in range(n)]).dictionary_encode(),
    })


def _like(col, pattern, negated=False):
    return ex.Like(col, k.lit(pattern, T.TEXT), negated, False)


A, S, TT = k.col(0, T.INT8), k.col(1, T.TEXT), k.col(2, T.TEXT)
PREDICATES = [
    k.call(F.AND, _like(S, "%google%"), k.call(F.GT, A, k.lit(500, T.INT8))),
    k.call(F.AND, k.call(F.NE, TT, k.lit("t1", T.TEXT)), _like(S, "%google1%"),
           _like(S, "%x1%", negated=True)),
    k.call(F.AND, _like(S, "%zzz%"), k.call(F.LT, A, k.lit(10**6, T.INT8))),  # none pass
    k.call(F.AND, k.call(F.GE, A, k.lit(0, T.INT8)), _like(S, "%o%")),  # all non-NULL a
]


@pytest.mark.parametrize("pred", PREDICATES)
@pytest.mark.parametrize("jit", [True, False])
def test_stages_keep_what_one_evaluation_keeps(pred, jit):
    t = _table()
    src = k.source(t, [T.INT8, T.TEXT, T.TEXT], batch_rows=700)
    staged = ps.PredicateStages(pred)
    assert len(staged.stages) > 1
    ctx = k.ctx(jit=jit, jit_above_rows=0)
    got = [staged.apply(ctx, b) for b in t.to_batches(max_chunksize=700)]
    want = [base.filter_batch(b, base.evaluate(pred, b, None))
            for b in t.to_batches(max_chunksize=700)]
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            assert g is not None and g.equals(w)
    out = k.run(plan.Filter(src, pred, src.fields), ctx)
    assert out.num_rows == sum(0 if w is None else w.num_rows for w in want)


def test_costly_conjuncts_see_only_survivors(monkeypatch):
    seen = []
    real = ps._passing

    def spy(ctx, pred, jit, batch):
        seen.append(batch.num_rows)
        return real(ctx, pred, jit, batch)

    monkeypatch.setattr(ps, "_passing", spy)
    t = _table(1000)
    pred = k.call(F.AND, _like(S, "%google%"), k.call(F.LT, A, k.lit(100, T.INT8)))
    staged = ps.PredicateStages(pred)
    out = staged.apply(k.ctx(), t.to_batches()[0])
    assert seen[0] == 1000 and seen[1] < 100  # the LIKE saw the rows a < 100 only
    assert out.column(0).to_pylist() == [i for i in range(100) if i % 7 and i % 3 == 0
                                         and i % 11]


def test_one_stage_when_costs_do_not_differ():
    assert len(ps.PredicateStages(k.call(F.GT, A, k.lit(1, T.INT8))).stages) == 1
    assert len(ps.PredicateStages(
        k.call(F.AND, _like(S, "%a%"), _like(S, "%b%"))).stages) == 1
    assert ps._cost(k.call(F.NE, S, k.lit("", T.TEXT))) == ps._COMPARED
    assert ps._cost(_like(S, "%a%")) == ps._COSTLY
