"""segment/jit/warmup.py: a new process loads, before any call, the signatures numba's disk
cache holds for the static kernels and for the generated kernels used most recently,
without compiling anything; a function whose code changed since is not loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SOURCE = "def kernel(x):\n    return x.sum() * 2\n"

FIRST = textwrap.dedent(f"""
    import numpy as np
    from segment.jit import kernels
    from segment.kernels import join_hash
    keys = np.arange(10, dtype=np.int64)
    join_hash.build_single(keys, np.zeros(0, np.bool_), 32)
    assert kernels.kernel({SOURCE!r})(keys) == 90
""")

SECOND = textwrap.dedent(f"""
    import json, time
    from segment.jit import kernels, warmup
    from segment.kernels import join_hash
    deadline = time.monotonic() + 60
    static = warmup.load_cached(join_hash.build_single, deadline)
    generated = warmup._generated(deadline)
    fn = kernels.kernel({SOURCE!r})
    print(json.dumps(dict(
        static=static, generated=generated,
        loaded_before_call=len(fn.overloads),
        misses=sum(fn.stats.cache_misses.values())
               + sum(join_hash.build_single.stats.cache_misses.values()),
        again=warmup.load_cached(join_hash.build_single, deadline))))
""")


def _python(code: str, cache: str) -> str:
    env = dict(os.environ, RAYMPP_JIT_CACHE=cache, RAYMPP_JIT_WARMUP="0")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, text=True,
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_new_process_loads_cached_signatures_without_compiling(tmp_path):
    cache = str(tmp_path / "jit")
    _python(FIRST, cache)
    got = json.loads(_python(SECOND, cache).strip().splitlines()[-1])
    assert got["static"] >= 1
    assert got["generated"] == 1
    assert got["loaded_before_call"] == 1  # loaded by the warm-up, not by a call
    assert got["misses"] == 0  # nothing compiled
    assert got["again"] == 0  # loaded signatures are not loaded twice


def test_stale_cache_entries_are_not_loaded(tmp_path):
    """A kernel source file whose text is not the prelude plus a kernel is passed over,
    and an empty cache directory loads nothing."""
    cache = tmp_path / "jit"
    cache.mkdir()
    (cache / "k_0123.py").write_text("print('not a kernel')\n")
    got = _python("import time; from segment.jit import warmup; "
                  "print(warmup._generated(time.monotonic() + 30))", str(cache))
    assert got.strip() == "0"
