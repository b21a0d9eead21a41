"""Keeping Python's cyclic garbage collector out of the queries' way.

A segment process holds a large heap of objects that live as long as it does: numba's
compiled kernels and their type metadata (each loaded kernel adds thousands of objects),
pyarrow's and Ray's modules. CPython's full (generation 2) collection walks every one of
them with the whole process stalled; on a TPC-DS run such a collection took 50-185 ms,
mid-query, each time the objects that survived young collections grew by a quarter of
the heap (TPC-DS q45, 60 ms warm, took 290 ms when two of them fell into it).

So the objects that will live for the process are moved out of the collector's sight
(`gc.freeze`): once after the warm-up has loaded the cached kernels, and again when the
segment falls idle after a query that loaded or compiled kernels. Objects frozen stay
alive until the process ends, garbage or not; young garbage is collected before each
freeze, so what is frozen is what outlived two collections while the segment was idle.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_grown = False  # kernels were loaded since the last freeze


def kernels_loaded() -> None:
    """A kernel was compiled or loaded from disk: its objects live as long as the process."""
    global _grown
    _grown = True


def settle(full: bool = False) -> None:
    """Collect young garbage (or all of it, `full`), then freeze what is left."""
    global _grown
    with _lock:
        gc.collect(2 if full else 1)
        gc.freeze()
        _grown = False


def at_idle() -> None:
    """The segment runs no slice now: freeze what the last queries' kernels added."""
    if _grown:
        settle()
