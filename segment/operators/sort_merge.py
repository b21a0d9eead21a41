"""Sorted runs on disk and their k-way merge: the external half of sort.py.

A run is a spill file of batches in sort order; each batch holds the payload columns
(p0..) and then the evaluated sort keys (k0..), so merging never evaluates expressions.
Runs are numbered in input order, and rows with equal keys stay in (run, position) order
throughout, so the result is exactly the stable in-memory sort of the same input.

Merging is vectorized, one round per batch rather than per row: with the current batch of
every run in memory (a "head"), the bound is the head whose last row comes first; every
row up to that row, from all heads, precedes everything not yet read, so it can go out.
One small sort of each head's first and last rows finds the bound and the heads that
reach below it (often just the bound's own head: presorted or disjoint runs pass through
without sorting); only those heads' remaining rows are sorted together (ordering.py, the
same comparisons as the in-memory sort; the concatenation in run order makes the stable
sort break ties by (run, position)), and the prefix up to the bound is emitted. Memory is
one batch per run merged; more runs than the budget allows heads for (`fan_in`) are first
merged group by group into longer runs.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa

from planner import plan
from segment import memory
from segment.operators import base
from segment.kernels import sort_order

FAN_IN = 16          # runs merged at once when the budget allows
MAX_FAN_IN = 64
MIN_RUN_BATCH_BYTES = 64 << 10
MIN_RUN_BATCH_ROWS = 1024


def run_batch_rows(nbytes: int, rows: int, budget: memory.MemoryBudget) -> int:
    """Rows per batch of a run, so that FAN_IN heads (and their merge) fit the budget."""
    target = max(budget.limit // (4 * FAN_IN), MIN_RUN_BATCH_BYTES)
    per_row = max(1, nbytes // max(rows, 1))
    return max(MIN_RUN_BATCH_ROWS, target // per_row)


def write_run(res: memory.Reservation, rows: list[pa.RecordBatch], keys: list[list[pa.Array]],
              sort_keys: Sequence[plan.SortKey], payload: pa.Schema) -> memory.SpillFile:
    """Sort the held batches (with their key arrays) and write them as one run."""
    table = pa.Table.from_batches(rows, payload)
    arrays = [_concat([ks[i] for ks in keys]) for i in range(len(sort_keys))]
    idx = sort_order.sort_indices(arrays, sort_keys)
    n = len(idx)
    nbytes = table.nbytes + sum(a.nbytes for a in arrays)
    step = run_batch_rows(nbytes, n, res.budget)
    names = run_names(len(payload), len(sort_keys))
    f = res.spill_file()
    try:
        for start in range(0, n, step):
            part = idx.slice(start, step)
            cols = [_combined(c.take(part)) for c in table.columns] + [a.take(part)
                                                                        for a in arrays]
            f.write(pa.RecordBatch.from_arrays(cols, names=names))
    except BaseException:
        f.close()
        raise
    return f


def run_names(n_payload: int, n_keys: int) -> list[str]:
    return [f"p{i}" for i in range(n_payload)] + [f"k{j}" for j in range(n_keys)]


def fan_in(res: memory.Reservation, runs: Sequence[memory.SpillFile]) -> int:
    """How many runs to merge at once: a head (one batch) per run, about three times over
    (the heads, their concatenation and the output), within what the budget has left."""
    batch = max((f.nbytes // max(f.num_batches, 1) for f in runs), default=1)
    room = res.budget.available + res.size
    return int(min(MAX_FAN_IN, max(2, room // max(1, 3 * batch))))


def merge(res: memory.Reservation, runs: list[memory.SpillFile],
          sort_keys: Sequence[plan.SortKey], n_payload: int,
          check_cancel=lambda: None) -> Iterator[pa.RecordBatch]:
    """The rows of all runs in order (payload and key columns), in bounded memory. Runs
    are closed as they are used up; every longer run made on the way is appended to
    `runs`, so that the caller's `finally` closes whatever is left on any exit."""
    current = list(runs)
    while len(current) > fan_in(res, current):
        width = fan_in(res, current)
        merged = []
        for start in range(0, len(current), width):
            group = current[start:start + width]
            if len(group) == 1:
                merged.append(group[0])
                continue
            out = res.spill_file()
            runs.append(out)
            merged.append(out)
            step = None
            for b in _merge_group(res, group, sort_keys, n_payload):
                check_cancel()  # (these passes yield nothing the executor could check at)
                if step is None:
                    step = run_batch_rows(b.nbytes, b.num_rows, res.budget)
                for s in range(0, b.num_rows, step):
                    out.write(b.slice(s, step))
            memory.close_all(group)
        current = merged
    yield from _merge_group(res, current, sort_keys, n_payload)


class _Head:
    """The current batch of one run and how far it has been emitted."""

    def __init__(self, run: memory.SpillFile):
        self.run = run
        self.batches = run.batches()
        self.batch: pa.RecordBatch | None = None
        self.pos = 0

    def load(self) -> bool:
        """Move to the next non-empty batch; False (and the run closed) at its end."""
        for b in self.batches:
            if b.num_rows:
                self.batch, self.pos = b, 0
                return True
        self.batch = None
        self.run.close()
        return False

    @property
    def left(self) -> int:
        return self.batch.num_rows - self.pos

    def rest(self) -> pa.RecordBatch:
        return self.batch.slice(self.pos)


def _merge_group(res, runs, sort_keys, n_payload) -> Iterator[pa.RecordBatch]:
    nk = len(sort_keys)
    heads = [h for h in (_Head(r) for r in runs) if h.load()]
    while len(heads) > 1:
        res.resize(sum(h.batch.nbytes for h in heads))
        bound, involved = _bound(heads, sort_keys, n_payload)
        if len(involved) == 1:
            out = heads[bound].rest()
            heads[bound].pos = heads[bound].batch.num_rows
        else:
            parts = [heads[i].rest() for i in involved]
            table = pa.Table.from_batches(parts)
            arrays = [_combined(table.column(n_payload + j)) for j in range(nk)]
            order = _np(sort_order.sort_indices(arrays, sort_keys))
            lens = np.array([p.num_rows for p in parts], np.int64)
            ends = np.cumsum(lens)
            b = involved.index(bound)
            last = int(ends[b]) - 1  # the bound: the last row of its head
            cut = int(np.flatnonzero(order == last)[0]) + 1
            take = order[:cut]
            owner = np.repeat(np.arange(len(parts)), lens)
            counts = np.bincount(owner[take], minlength=len(parts))
            for i, c in zip(involved, counts):
                heads[i].pos += int(c)
            out = base.table_to_batch(table.take(pa.array(take)))
        yield out
        heads = [h for h in heads if h.left or h.load()]
    if heads:
        h = heads[0]
        res.resize(h.batch.nbytes)
        yield h.rest()
        while h.load():
            yield h.batch


def _bound(heads: list[_Head], sort_keys, n_payload) -> tuple[int, list[int]]:
    """The head whose last row comes first, and the heads whose first row does not come
    after it (those that have rows to emit in this round, the bound's own included).
    Rows are laid out first_0, last_0, first_1, ... so that the stable sort breaks ties
    between runs by run order, as the merge does."""
    nk = len(sort_keys)
    probes = []
    for h in heads:
        probes.append(h.batch.slice(h.pos, 1))
        probes.append(h.batch.slice(h.batch.num_rows - 1, 1))
    table = pa.Table.from_batches(probes)
    arrays = [_combined(table.column(n_payload + j)) for j in range(nk)]
    order = _np(sort_order.sort_indices(arrays, sort_keys))
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    first, last = rank[0::2], rank[1::2]
    bound = int(np.argmin(last))
    involved = [i for i in range(len(heads)) if first[i] < last[bound] or i == bound]
    return bound, involved


def _np(idx) -> np.ndarray:
    return idx if isinstance(idx, np.ndarray) else idx.to_numpy(zero_copy_only=False)


def _concat(arrays: list[pa.Array]) -> pa.Array:
    return arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)


def _combined(c) -> pa.Array:
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
