"""Row order by SQL sort keys, shared by Sort (sort.py) and Gather Merge (motion_recv.py).

Each key has its own direction and NULLS FIRST/LAST (Arrow's per-key null placement).
Arrow sorts NaN next to the nulls, while SQL orders NaN above every number; where the two
disagree (ASC NULLS FIRST, DESC NULLS LAST) an auxiliary is-NaN key goes first. Text sorts
by bytes, as DESIGN.md asks.
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from planner import plan
from segment.operators import base


def key_arrays(batch: pa.RecordBatch, keys: Sequence[plan.SortKey]) -> list[pa.Array]:
    """The sort key values of a batch (expressions evaluated by segment.expr)."""
    out = []
    for k in keys:
        v = base.evaluate(k.expr, batch)
        if isinstance(v, pa.ChunkedArray):
            v = v.combine_chunks()
        elif isinstance(v, pa.Scalar):
            v = pa.repeat(v, batch.num_rows)
        out.append(v)
    return out


def _sort_table(arrays: Sequence[pa.Array | pa.ChunkedArray],
                keys: Sequence[plan.SortKey]) -> tuple[pa.Table, list[tuple[str, str, str]]]:
    cols: dict[str, pa.Array] = {}
    spec: list[tuple[str, str, str]] = []
    for i, (arr, k) in enumerate(zip(arrays, keys)):
        order = "descending" if k.descending else "ascending"
        nulls = "at_start" if k.nulls_first else "at_end"
        if pa.types.is_floating(arr.type) and k.nulls_first != k.descending \
                and pc.any(pc.is_nan(arr)).as_py():
            cols[f"n{i}"] = pc.is_nan(arr)
            spec.append((f"n{i}", order, nulls))
        cols[f"k{i}"] = arr
        spec.append((f"k{i}", order, nulls))
    return pa.table(cols), spec


def sort_indices(arrays: Sequence[pa.Array | pa.ChunkedArray],
                 keys: Sequence[plan.SortKey]) -> pa.Array:
    """Indices that put rows in the order of `keys`; `arrays` are the key values."""
    table, spec = _sort_table(arrays, keys)
    return pc.sort_indices(table, sort_keys=spec)


def top_k_indices(arrays: Sequence[pa.Array | pa.ChunkedArray],
                  keys: Sequence[plan.SortKey], k: int) -> pa.Array:
    """Indices of the first k rows in the order of `keys`, in that order."""
    table, spec = _sort_table(arrays, keys)
    if k >= table.num_rows:
        return pc.sort_indices(table, sort_keys=spec)
    return pc.select_k_unstable(table, k, sort_keys=spec)
