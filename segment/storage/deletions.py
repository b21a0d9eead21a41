"""Deletion files: which rows of one immutable chunk a DELETE or UPDATE has removed.

A deletion file is written once and never changed, like a chunk: it lists the positions
(sorted, unique, uint32) of the chunk's deleted rows as a NumPy .npy file. A later delete
from the same chunk writes a new file with the union, and the manifest (or a transaction's
delta) switches the chunk to it at commit, so a reader of an older snapshot keeps reading
the older file. Files are small next to their chunk: 4 bytes per deleted row.

Reads are cached by path (the files are immutable, and a scan of a chunk with deletes reads
its file on every query).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from planner import errors

_CACHE_FILES = 256
_cache: OrderedDict[str, np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()


def write(path: str, positions: np.ndarray) -> None:
    """Write `positions` (sorted, unique) as a new deletion file; not fsync'd here (the
    store syncs a transaction's files at prepare)."""
    with open(path, "xb") as f:  # never overwrite: deletion files are immutable
        np.save(f, np.ascontiguousarray(positions, dtype=np.uint32), allow_pickle=False)


def read(path: str) -> np.ndarray:
    """The deleted positions a deletion file lists."""
    with _cache_lock:
        hit = _cache.get(path)
        if hit is not None:
            _cache.move_to_end(path)
            return hit
    try:
        positions = np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise errors.UndefinedFile(f"deletion file {path} does not exist (table dropped or "
                                   f"vacuumed after the snapshot)") from exc
    positions.setflags(write=False)
    with _cache_lock:
        _cache[path] = positions
        while len(_cache) > _CACHE_FILES:
            _cache.popitem(last=False)
    return positions


def forget(path: str) -> None:
    with _cache_lock:
        _cache.pop(path, None)


def keep_mask(rows: int, positions: np.ndarray) -> np.ndarray:
    """A boolean mask over a chunk's `rows` rows: True for the rows not deleted."""
    mask = np.ones(rows, dtype=np.bool_)
    mask[positions] = False
    return mask


def union(old: np.ndarray | None, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(old ∪ new sorted, the positions of `new` that were not deleted yet, each once)."""
    fresh = np.unique(new.astype(np.uint32, copy=False))
    if old is not None and len(old):
        fresh = fresh[~np.isin(fresh, old, assume_unique=True)]
        merged = np.union1d(old, fresh).astype(np.uint32, copy=False)
    else:
        merged = fresh
    return merged, fresh
