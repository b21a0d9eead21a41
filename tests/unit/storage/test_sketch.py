"""segment/sketch.py: the KMV sketch built chunk by chunk equals the K smallest distinct
hashes of the whole column, for unique, repeated, dictionary-encoded and NULL values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from motion import hashing
from segment import sketch

K = 256


def _exact(arrays: list[pa.Array], k: int = K) -> np.ndarray:
    values = pa.concat_arrays([a.dictionary_decode() if pa.types.is_dictionary(a.type) else a
                               for a in arrays]).drop_null()
    return np.unique(hashing.hash_arrays([values], None))[:k]


def _chunks(kind: str, rng) -> list[pa.Array]:
    n = 5_000
    if kind == "unique":
        return [pa.array(rng.permutation(100_000)[i * n:(i + 1) * n]) for i in range(6)]
    if kind == "few":
        return [pa.array(rng.integers(0, 40, n)) for _ in range(6)]
    if kind == "around_k":  # distinct values near K: the partition step is inconclusive
        return [pa.array(rng.integers(0, K + 30, n)) for _ in range(6)]
    if kind == "strings_dictionary":
        vocab = [f"v{i}" for i in range(700)]
        return [pc.dictionary_encode(pa.array([vocab[j] for j in rng.integers(0, 700, n)]))
                for _ in range(6)]
    if kind == "nulls":
        return [pa.array([None if j % 3 else int(j) for j in rng.integers(0, 50_000, n)])
                for _ in range(6)] + [pa.nulls(10, pa.int64())]
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["unique", "few", "around_k", "strings_dictionary", "nulls"])
def test_sketch_is_the_k_smallest_distinct_hashes(kind):
    chunks = _chunks(kind, np.random.default_rng(7))
    s = np.empty(0, np.uint64)
    for c in chunks:
        s = sketch.update(s, c, K)
    assert np.array_equal(s, _exact(chunks))
