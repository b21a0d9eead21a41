"""KMV sketches for ANALYZE's distinct estimates: the K smallest distinct hash values of a
column (the one hash, motion/hashing.py), merged across chunks here and across segments
by the coordinator.

Only the K smallest matter, so a chunk's hashes are first cut at the sketch's current
largest value and then selected in linear time (np.partition) rather than sorted whole;
a column of few distinct values is reduced to its distinct values (Arrow's hash-based
unique) before it is hashed.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from motion import hashing
from planner import types
from segment.kernels import expr_pgarray as xpa

KMV_SIZE = 4096  # hashes a column's sketch keeps (ANALYZE's distinct-value estimate)


def update(sketch: np.ndarray, arr: pa.Array, k: int, scale: list[int] | None = None) -> np.ndarray:
    """The sketch (sorted uint64, at most k values) with the non-null values of arr added."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary  # the chunk's distinct values
    if pa.types.is_list(arr.type):  # arrays: hash their elements' text, joined
        p = xpa.Parts(arr)
        items = xpa.flat(p)
        if types.is_dynamic_arrow(items.type):  # unconstrained numerics: by value
            items = items.flatten()[0]
        items = pc.cast(items, pa.string()).fill_null("\x00")
        arr, scale = pc.binary_join(xpa.build(items, p.lengths, p.valid, pa.string()), "\x1f"), None
    values = arr.drop_null()
    if len(values) == 0:
        return sketch
    h = hashing.hash_arrays([values], scale)
    if len(sketch) == k:
        h = h[h < sketch[-1]]  # anything larger cannot enter a full sketch
    smallest = _smallest_distinct(h, k)
    if smallest is None:  # mostly repeats: hash each distinct value once
        smallest = np.unique(hashing.hash_arrays([pc.unique(values)], scale))[:k]
    return np.unique(np.concatenate([sketch, smallest]))[:k]


def _smallest_distinct(h: np.ndarray, k: int) -> np.ndarray | None:
    """The k smallest distinct values of h, sorted (all of them if fewer), or None when
    repeats make the linear-time selection inconclusive."""
    if len(h) <= 4 * k:
        return np.unique(h)[:k]
    kth = np.partition(h, k - 1)[k - 1]  # the k-th smallest, counting repeats
    below = np.unique(h[h <= kth])
    # With at least k distinct values at or below kth, the k smallest distinct are there.
    return below[:k] if len(below) >= k else None
