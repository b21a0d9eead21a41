"""WindowAgg (segment/operators/window.py, window_eval.py, kernels/window_frames.py) on
hand-built batches without Ray: every function against a row-by-row Python reference,
over NULLs and duplicate keys, partitions that span input batches, one row, empty input,
and a sort that spills under a tiny budget; the kernels on their own edge cases."""

from __future__ import annotations

import decimal
import random

import numpy as np
import pyarrow as pa
import pytest

import opkit as k
from planner import errors
from planner import plan
from planner import types as T
from planner import window as wn
from segment.kernels import window_frames as kern

F = wn.WindowFunc
B = wn.Bound
TYPES = [T.INT4, T.INT4, T.INT8, T.TEXT]   # g (partition), o (order, duplicates), id, s


def _rows(n: int, seed: int = 3, groups: int = 4) -> list[tuple]:
    rnd = random.Random(seed)
    return [(rnd.choice(list(range(groups)) + [None]), rnd.choice([1, 2, 2, 3, None]), i,
             rnd.choice(["a", "b", None])) for i in range(n)]


def _source(rows, batch_rows=None):
    cols = list(zip(*rows)) if rows else [[], [], [], []]
    table = pa.table({"g": pa.array(cols[0], pa.int32()), "o": pa.array(cols[1], pa.int32()),
                      "id": pa.array(cols[2], pa.int64()), "s": pa.array(cols[3], pa.string())})
    return k.source(table, TYPES, batch_rows)


def _node(src, calls, partition=(0,), order=((1, False, False), (2, False, False))):
    keys = tuple(plan.SortKey(k.col(i, src.fields[i].type), d, nf) for i, d, nf in order)
    fields = src.fields + tuple(plan.Field(f"w{j}", c.type) for j, c in enumerate(calls))
    return plan.WindowAgg(src, tuple(partition), keys, tuple(calls), fields)


def _sort_key(v, desc, nulls_first):
    # SQL order of one key: NULLs first or last, values ascending or descending
    if v is None:
        return (0,) if nulls_first else (2,)
    return (1, -v if desc else v)


def _reference(rows, call: wn.WindowCall, partition, order):
    """The call's value for every row, computed row by row as PostgreSQL defines it."""
    parts: dict = {}
    for r in rows:
        parts.setdefault(tuple(r[i] for i in partition), []).append(r)
    out = {}
    for part in parts.values():
        part.sort(key=lambda r: tuple(_sort_key(r[i], d, nf) for i, d, nf in order))
        n = len(part)
        peer = [tuple(r[i] for i, _, _ in order) for r in part]
        for pos, r in enumerate(part):
            first = min(j for j in range(n) if peer[j] == peer[pos])
            last = max(j for j in range(n) if peer[j] == peer[pos]) + 1
            lo, hi = _ref_frame(call.frame, pos, n, first, last, peer, order, part)
            members = [j for j in range(lo, hi) if not _excluded(call.frame.exclude, j, pos,
                                                                   peer)]
            vals = [part[j][call.arg] for j in members] if call.arg is not None else []
            nn = [v for v in vals if v is not None]
            f = call.func
            if f is F.ROW_NUMBER:
                v = pos + 1
            elif f is F.RANK:
                v = first + 1
            elif f is F.DENSE_RANK:
                v = len({peer[j] for j in range(first + 1)})
            elif f is F.PERCENT_RANK:
                v = first / (n - 1) if n > 1 else 0.0
            elif f is F.CUME_DIST:
                v = last / n
            elif f is F.NTILE:
                per, extra = divmod(n, call.n)
                v = pos // (per + 1) + 1 if pos < (per + 1) * extra else \
                    extra + (pos - (per + 1) * extra) // per + 1
            elif f in (F.LAG, F.LEAD):
                j = pos - call.n if f is F.LAG else pos + call.n
                v = part[j][call.arg] if 0 <= j < n else (
                    None if call.default is None else r[call.default])
            elif f is F.FIRST_VALUE:
                v = vals[0] if vals else None
            elif f is F.LAST_VALUE:
                v = vals[-1] if vals else None
            elif f is F.NTH_VALUE:
                v = vals[call.n - 1] if len(vals) >= call.n else None
            elif f is F.COUNT_STAR:
                v = len(members)
            elif f is F.COUNT:
                v = len(nn)
            elif f is F.SUM:
                v = sum(nn) if nn else None
            elif f is F.MIN:
                v = min(nn) if nn else None
            else:
                v = max(nn) if nn else None
            out[r[2]] = v
    return [out[r[2]] for r in rows]


def _excluded(exclude: wn.Exclude, j, pos, peer) -> bool:
    if exclude is wn.Exclude.CURRENT_ROW:
        return j == pos
    if exclude is wn.Exclude.GROUP:
        return peer[j] == peer[pos]
    if exclude is wn.Exclude.TIES:
        return peer[j] == peer[pos] and j != pos
    return False


def _ref_frame(f: wn.Frame, pos, n, first, last, peer, order, part):
    groups = sorted(set(peer), key=peer.index)  # peer groups in order

    def bound(b, off, start):
        if b is B.UNBOUNDED_PRECEDING:
            return 0
        if b is B.UNBOUNDED_FOLLOWING:
            return n
        if b is B.CURRENT_ROW:
            return (pos if start else pos + 1) if f.rows else (first if start else last)
        if f.groups:
            g = groups.index(peer[pos]) + (-off if b is B.PRECEDING else off)
            if g < 0:
                return 0
            if g >= len(groups):
                return n
            rows = [j for j in range(n) if peer[j] == groups[g]]
            return rows[0] if start else rows[-1] + 1
        if not f.rows:  # RANGE offset over the one ORDER BY key
            col, desc, _ = order[0]
            v = part[pos][col]
            if v is None:
                return first if start else last
            t = v + off if (b is B.PRECEDING) == desc else v - off
            inside = [j for j in range(n) if part[j][col] is not None and (
                (part[j][col] <= t if desc else part[j][col] >= t) if start else
                (part[j][col] < t if desc else part[j][col] > t))]
            if start:
                return inside[0] if inside else max(
                    [j + 1 for j in range(n) if part[j][col] is not None] or [0])
            return inside[0] if inside else max(
                [j + 1 for j in range(n) if part[j][col] is not None] or [0])
        if b is B.PRECEDING:
            return max(0, pos - off + (0 if start else 1))
        return min(n, pos + off + (0 if start else 1))
    lo, hi = bound(f.start, f.start_offset, True), bound(f.end, f.end_offset, False)
    return lo, max(lo, hi)


def _run(rows, calls, batch_rows=None, context=None, **kw):
    node = _node(_source(rows, batch_rows), calls, **kw)
    out = k.run(node, context)
    by_id = {r["id"]: r for r in out.to_pylist()}
    assert len(by_id) == len(rows) == out.num_rows
    return node, [[by_id[r[2]][f"w{j}"] for r in rows] for j in range(len(calls))]


ROWS = wn.Frame(rows=True)
CALLS = [
    wn.WindowCall(F.ROW_NUMBER, None, T.INT8), wn.WindowCall(F.RANK, None, T.INT8),
    wn.WindowCall(F.DENSE_RANK, None, T.INT8), wn.WindowCall(F.PERCENT_RANK, None, T.FLOAT8),
    wn.WindowCall(F.CUME_DIST, None, T.FLOAT8), wn.WindowCall(F.NTILE, None, T.INT4, n=3),
    wn.WindowCall(F.LAG, 2, T.INT8), wn.WindowCall(F.LEAD, 2, T.INT8, n=2),
    wn.WindowCall(F.LAG, 3, T.TEXT, n=1, default=3),
    wn.WindowCall(F.FIRST_VALUE, 3, T.TEXT), wn.WindowCall(F.LAST_VALUE, 1, T.INT4),
    wn.WindowCall(F.NTH_VALUE, 1, T.INT4, n=2),
    wn.WindowCall(F.COUNT_STAR, None, T.INT8), wn.WindowCall(F.COUNT, 1, T.INT8),
    wn.WindowCall(F.SUM, 1, T.INT8), wn.WindowCall(F.MIN, 3, T.TEXT),
    wn.WindowCall(F.MAX, 1, T.INT4),
    wn.WindowCall(F.SUM, 2, T.numeric(38, 0), wn.Frame(True, B.PRECEDING, B.FOLLOWING, 2, 1)),
    wn.WindowCall(F.MAX, 2, T.INT8, wn.Frame(True, B.CURRENT_ROW, B.UNBOUNDED_FOLLOWING)),
    wn.WindowCall(F.MIN, 1, T.INT4, wn.Frame(True, B.PRECEDING, B.PRECEDING, 3, 1)),
    wn.WindowCall(F.COUNT, 3, T.INT8, wn.Frame(True, B.FOLLOWING, B.FOLLOWING, 1, 4)),
    wn.WindowCall(F.FIRST_VALUE, 2, T.INT8, wn.Frame(True, B.FOLLOWING, B.UNBOUNDED_FOLLOWING, 2)),
    wn.WindowCall(F.NTH_VALUE, 2, T.INT8, wn.Frame(True, B.CURRENT_ROW, B.FOLLOWING, 0, 3), n=3),
    wn.WindowCall(F.SUM, 1, T.INT8, wn.Frame(False, B.CURRENT_ROW, B.UNBOUNDED_FOLLOWING)),
    wn.WindowCall(F.LAST_VALUE, 2, T.INT8, ROWS),
]


def _check(rows, calls=CALLS, **kw):
    node, got = _run(rows, calls, **kw)
    for c, values in zip(calls, got):
        want = _reference(rows, c, node.partition, [
            (key.expr.index, key.descending, key.nulls_first) for key in node.order])
        for g, w in zip(values, want):
            if isinstance(w, float):
                assert g == pytest.approx(w), c
            else:
                assert g == w, c


@pytest.mark.parametrize("batch_rows", [None, 1, 7, 64])
def test_every_function_matches_the_reference(batch_rows):
    _check(_rows(300), batch_rows=batch_rows)


def test_partitions_by_two_columns_and_descending_nulls_first_order():
    _check(_rows(200, seed=9), partition=(0, 3), order=((1, True, True), (2, True, False)))


def test_no_partition_is_one_window():
    _check(_rows(150, seed=4), partition=(), batch_rows=16)


def test_no_order_makes_every_row_a_peer():
    calls = [c for c in CALLS if c.func not in (F.LAG, F.LEAD, F.ROW_NUMBER, F.NTILE)
             and c.frame == wn.DEFAULT_FRAME and c.func not in (F.FIRST_VALUE, F.LAST_VALUE,
                                                                 F.NTH_VALUE)]
    _check(_rows(100, seed=5), calls=calls, order=())


def test_one_row_and_empty_input():
    _check([(1, None, 0, None)])
    node = _node(_source([]), CALLS)
    assert k.run(node).num_rows == 0


def test_many_partitions_with_a_spilling_sort(tmp_path):
    rows = _rows(8_000, seed=11, groups=300)
    budget = k.budget(tmp_path, 32 << 10)
    _check(rows, calls=CALLS[:3] + CALLS[12:18], batch_rows=2000,
           context=k.ctx(memory=budget))
    assert budget.spilled_bytes > 0
    k.check_clean(budget, tmp_path)


def test_sum_types_and_overflow():
    big = 2 ** 62
    table = pa.table({"g": pa.array([1, 1, 1], pa.int32()), "v": pa.array([big, big, big]),
                      "n": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")],
                                    pa.decimal128(38, 2))})
    src = k.source(table, [T.INT4, T.INT8, T.numeric(38, 2)])
    calls = [wn.WindowCall(F.SUM, 1, T.numeric(38, 0)), wn.WindowCall(F.SUM, 2, T.numeric(38, 2))]
    fields = src.fields + tuple(plan.Field(f"w{j}", c.type) for j, c in enumerate(calls))
    out = k.run(plan.WindowAgg(src, (0,), (), tuple(calls), fields)).to_pylist()
    assert [r["w0"] for r in out] == [decimal.Decimal(3 * big)] * 3  # exact past int64
    assert [r["w1"] for r in out] == [decimal.Decimal("-2.25")] * 3
    # sum(int4) is bigint: past it, 22003 as PostgreSQL says
    calls = [wn.WindowCall(F.SUM, 1, T.INT8)]
    fields = src.fields + (plan.Field("w0", T.INT8),)
    with pytest.raises(errors.NumericOutOfRange):
        k.run(plan.WindowAgg(src, (0,), (), tuple(calls), fields))


def test_float_sums_accumulate_in_row_order():
    v = np.array([1e16, 1.0, -1e16, 1.0])
    valid = np.ones(4, dtype=np.bool_)
    lo = np.zeros(4, dtype=np.int64)
    hi = np.arange(1, 5, dtype=np.int64)
    # running: ((1e16 + 1) - 1e16) + 1 = 1.0 in float64 (PostgreSQL's order), not 2.0
    assert list(kern.frame_sums_float(v, valid, lo, hi, 0.0)) == [1e16, 1e16, 0.0, 1.0]


def test_kernels_group_bounds_and_extremes():
    flags = np.array([True, False, True, False, False])
    start, end = kern.group_bounds(flags)
    assert list(start) == [0, 0, 2, 2, 2] and list(end) == [2, 2, 5, 5, 5]
    codes = np.array([3, 1, 2, 5, 4], dtype=np.int64)
    valid = np.array([True, True, False, True, True])
    lo = np.array([0, 1, 2, 3, 4], dtype=np.int64)
    hi = np.array([5, 5, 5, 5, 5], dtype=np.int64)
    assert list(kern.frame_extremes(codes, valid, lo, hi, False, True)) == [1, 1, 4, 4, 4]
    assert list(kern.frame_extremes(codes, valid, lo, hi, True, False)) == [3, 3, 3, 3, 4]
    empty = np.array([2, 2, 2, 2, 2], dtype=np.int64)
    assert list(kern.frame_extremes(codes, valid, empty, empty, True, False)) == [-1] * 5


def test_ntile_and_nth_value_arguments():
    with pytest.raises(errors.QueryError) as e:
        _run(_rows(5), [wn.WindowCall(F.NTILE, None, T.INT4, n=0)])
    assert e.value.sqlstate == "22014"
    with pytest.raises(errors.QueryError) as e:
        _run(_rows(5), [wn.WindowCall(F.NTH_VALUE, 1, T.INT4, n=0)])
    assert e.value.sqlstate == "22016"
    _, got = _run(_rows(5), [wn.WindowCall(F.NTILE, None, T.INT4, n=None),
                             wn.WindowCall(F.LAG, 1, T.INT4, n=None)])
    assert got == [[None] * 5, [None] * 5]


GROUPS = wn.Frame(groups=True)
FRAMED_CALLS = [
    wn.WindowCall(F.SUM, 2, T.numeric(38, 0), wn.Frame(False, B.PRECEDING, B.FOLLOWING, 1, 1)),
    wn.WindowCall(F.COUNT_STAR, None, T.INT8, wn.Frame(False, B.CURRENT_ROW, B.FOLLOWING, 0, 2)),
    wn.WindowCall(F.MIN, 2, T.INT8, wn.Frame(False, B.PRECEDING, B.PRECEDING, 3, 1)),
    wn.WindowCall(F.MAX, 2, T.INT8, wn.Frame(False, B.FOLLOWING, B.UNBOUNDED_FOLLOWING, 1)),
    wn.WindowCall(F.SUM, 2, T.numeric(38, 0), wn.Frame(False, B.PRECEDING, B.FOLLOWING, 1, 1,
                                                        groups=True)),
    wn.WindowCall(F.COUNT, 3, T.INT8, wn.Frame(False, B.FOLLOWING, B.FOLLOWING, 1, 2,
                                               groups=True)),
    wn.WindowCall(F.FIRST_VALUE, 1, T.INT4, wn.Frame(False, B.PRECEDING, B.CURRENT_ROW, 2,
                                                     groups=True)),
    wn.WindowCall(F.COUNT_STAR, None, T.INT8, wn.Frame(False, B.UNBOUNDED_PRECEDING,
                                                       B.PRECEDING, 0, 1, groups=True)),
]


@pytest.mark.parametrize("direction", [(False, False), (True, True), (False, True),
                                       (True, False)], ids=["asc", "desc", "asc_nulls_first",
                                                            "desc_nulls_last"])
@pytest.mark.parametrize("batch_rows", [None, 9])
def test_range_offsets_and_groups_match_the_reference(direction, batch_rows):
    rows = [(g, None if o is None else o * 3 % 17, i, s) for g, o, i, s in _rows(250, seed=21)]
    _check(rows, calls=FRAMED_CALLS, order=((1, *direction),), batch_rows=batch_rows)


@pytest.mark.parametrize("exclude", list(wn.Exclude), ids=lambda e: e.name)
def test_exclude_matches_the_reference(exclude):
    import dataclasses
    frames = [wn.Frame(True, B.PRECEDING, B.FOLLOWING, 2, 2), wn.Frame(),
              wn.Frame(False, B.PRECEDING, B.FOLLOWING, 1, 1, groups=True),
              wn.Frame(True, B.CURRENT_ROW, B.CURRENT_ROW)]
    calls = []
    for fr in frames:
        fr = dataclasses.replace(fr, exclude=exclude)
        calls += [wn.WindowCall(F.SUM, 2, T.numeric(38, 0), fr),
                  wn.WindowCall(F.COUNT_STAR, None, T.INT8, fr),
                  wn.WindowCall(F.COUNT, 3, T.INT8, fr), wn.WindowCall(F.MIN, 3, T.TEXT, fr),
                  wn.WindowCall(F.MAX, 1, T.INT4, fr), wn.WindowCall(F.FIRST_VALUE, 2, T.INT8, fr),
                  wn.WindowCall(F.LAST_VALUE, 2, T.INT8, fr),
                  wn.WindowCall(F.NTH_VALUE, 2, T.INT8, fr, n=2)]
    _check(_rows(200, seed=31), calls=calls, order=((1, False, False),), batch_rows=13)


def test_per_row_arguments():
    # one partition ordered by id; n per row in column o: NULL, 2, 3, 1, NULL, 2
    rows = [(1, o, i, None) for i, o in enumerate([None, 2, 3, 1, None, 2])]
    calls = [wn.WindowCall(F.NTILE, None, T.INT4, n=None, n_col=1),
             wn.WindowCall(F.LAG, 2, T.INT8, n=None, n_col=1),
             wn.WindowCall(F.LEAD, 2, T.INT8, n=None, n_col=1, default=2),
             wn.WindowCall(F.NTH_VALUE, 2, T.INT8, ROWS, n=None, n_col=1)]
    _, got = _run(rows, calls, order=((2, False, False),))
    # ntile: NULL until the first row with n (row 1: 2 buckets of the 6 rows, counted
    # from there), as PostgreSQL reads it
    assert got[0] == [None, 1, 1, 1, 2, 2]
    assert got[1] == [None, None, None, 2, None, 3]
    assert got[2] == [None, 3, 5, 4, None, 5]
    assert got[3] == [None, 1, 2, 0, None, 1]


def test_months_move_by_the_calendar():
    from segment.operators import window_eval
    day = 86_400_000_000
    dates = np.array(["2024-01-31", "2024-03-31", "2023-03-31", "2024-02-29"],
                     dtype="datetime64[D]").astype(np.int64) * day + 3_600_000_000
    back = window_eval._add_months(dates, -1).astype("datetime64[us]").astype(str).tolist()
    assert back == ["2023-12-31T01:00:00.000000", "2024-02-29T01:00:00.000000",
                    "2023-02-28T01:00:00.000000", "2024-01-29T01:00:00.000000"]
