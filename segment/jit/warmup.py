"""Loading compiled code from the disk cache before the first query asks for it.

numba keeps each compiled function on disk (cache=True), but a new process still loads
it at the function's first call: about 130 ms for the first one (numba's code generator
starts), 3-10 ms for each after it. A query touches dozens (the static kernels of
segment/kernels/ and the generated expression loops of segment/jit/), so the first run
of TPC-H Q06 on a fresh segment took 635 ms where later runs take 58. A segment process
therefore loads, in a background thread as it starts, every signature the cache holds
for the static kernels, then the generated kernels used most recently (kernels.py
touches a kernel's source file when a process loads it), until a time budget runs out.
It also takes the first-call costs of pyarrow that a query would (`_pyarrow`).

Only signatures that the cache holds for the function as it is now are loaded (the
cache's own index key matches), so this never compiles anything. It is best effort: a
failure is logged and ends the warm-up, and a query that needs a function meanwhile
just loads it itself (numba's compiler lock orders the two).
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import threading
import time

from segment import heap
from segment.jit import kernels

log = logging.getLogger(__name__)

BUDGET_SECONDS = 20.0  # the warm-up stops loading after this long
# Generated kernels loaded at most, most recently used first: each costs the process about
# 0.3 MB of machine code and metadata (487 of them took 143 MB), whether used or not.
GENERATED_MAX = 256
_STATIC_PACKAGES = ("segment.kernels", "segment.jit", "segment.operators", "motion")

_started = False
_lock = threading.Lock()


def start() -> None:
    """Warm this process up in a daemon thread (once per process)."""
    global _started
    with _lock:
        if _started or os.environ.get("RAYMPP_JIT_WARMUP") == "0":
            return
        _started = True
    threading.Thread(target=_run, name="jit-warmup", daemon=True).start()


def _run() -> None:
    deadline = time.monotonic() + BUDGET_SECONDS
    started = time.monotonic()
    try:
        _pyarrow()
        n_static = sum(load_cached(d, deadline) for d in _static_dispatchers())
        n_generated = _generated(deadline)
        heap.settle(full=True)  # what was loaded lives as long as the process
        log.info("jit warm-up: %d static and %d generated signatures loaded in %.2f s",
                 n_static, n_generated, time.monotonic() - started)
    except Exception:  # noqa: BLE001 - best effort: a query loads what it needs itself
        log.warning("jit warm-up stopped", exc_info=True)


def _pyarrow() -> None:
    """pyarrow converts a Python value to a decimal through its pandas shim, which imports
    pandas (when installed) at the first such call: 250 ms of the first query's scan."""
    import pyarrow as pa

    pa.scalar(1, pa.decimal128(10, 2))


def _static_dispatchers():
    import numba.core.registry

    for package_name in _STATIC_PACKAGES:
        package = importlib.import_module(package_name)
        names = [package_name] + [f"{package_name}.{m.name}" for m in
                                  pkgutil.iter_modules(package.__path__)]
        for name in names:
            module = importlib.import_module(name)
            for value in list(vars(module).values()):
                if isinstance(value, numba.core.registry.CPUDispatcher) and \
                        getattr(value, "__module__", None) == name:
                    yield value


def _generated(deadline: float) -> int:
    directory = kernels.cache_dir()
    paths = []
    for entry in os.scandir(directory):
        if entry.name.startswith("k_") and entry.name.endswith(".py"):
            paths.append((entry.stat().st_mtime, entry.path))
    paths.sort(reverse=True)
    loaded = 0
    for _mtime, path in paths[:GENERATED_MAX]:
        if time.monotonic() > deadline:
            break
        with open(path) as f:
            text = f.read()
        if not text.startswith(kernels.PRELUDE):
            continue
        loaded += load_cached(kernels.kernel(text[len(kernels.PRELUDE):]), deadline)
    return loaded


def load_cached(dispatcher, deadline: float) -> int:
    """Load every signature of `dispatcher` that numba's disk cache holds for its current
    code; the number loaded."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is None:
        return 0  # not a cached function
    codegen = dispatcher.targetctx.codegen()
    loaded = 0
    for key in cache_file._load_index():
        if time.monotonic() > deadline:
            break
        sig = key[0]
        if key != cache._index_key(sig, codegen) or tuple(sig) in dispatcher.overloads:
            continue  # stale (the function changed since), or loaded already
        dispatcher.compile(sig)
        loaded += 1
    return loaded
