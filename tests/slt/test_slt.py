"""Runs every tests/slt/*.slt file against raympp at 1, 2 and 3 segments.

Each (file, segment count) is one test. The three servers are started once per session
(tests/conftest.py) and shared; a file starts from a clean slate because the runner drops
the tables it creates before and after running it, and its DuckDB oracle is fresh.
A `# segments: N` header limits a file to those counts (EXPLAIN output is pinned at 2).
A file with the header `# oracle: postgres` is compared with PostgreSQL: the session's
private server (fixture `pg_oracle`), started only when such a file runs; each run gets a
fresh database on it.
At 2 segments every file runs twice: with `SET jit_above_cost = 0` (every operator that
has a compiled path takes it, from the first batch, however small) and with `SET jit =
off` (id `...-2seg-nojit`: the general Arrow operators), held to the same answers,
unless its header says `# nojit: skip` (DDL and DML files, whose statements take no
compiled path of their own).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import runner

SLT_DIR = Path(__file__).parent
SEGMENT_COUNTS = (1, 2, 3)


def _cases():
    for path in sorted(SLT_DIR.glob("*.slt")):
        slt = runner.parse_file(path)
        marks = [pytest.mark.heavy] if slt.heavy else []
        for n in SEGMENT_COUNTS:
            if slt.segments is None or n in slt.segments:
                yield pytest.param(path, n, "postgres" in slt.oracles, True,
                                   id=f"{path.stem}-{n}seg", marks=marks)
        if slt.nojit and (slt.segments is None or NO_JIT_SEGMENTS in slt.segments):
            yield pytest.param(path, NO_JIT_SEGMENTS, "postgres" in slt.oracles, False,
                               id=f"{path.stem}-{NO_JIT_SEGMENTS}seg-nojit", marks=marks)


NO_JIT_SEGMENTS = 2


@pytest.mark.parametrize(("path", "n_segments", "needs_postgres", "jit"), list(_cases()))
def test_slt(path, n_segments, needs_postgres, jit, raympp_cluster, tmp_path, request):
    postgres = request.getfixturevalue("pg_oracle") if needs_postgres else None
    server = raympp_cluster(n_segments)
    raw = server.connect(autocommit=True)
    if not jit:
        raw.execute("SET jit = off")
    elif n_segments == NO_JIT_SEGMENTS:
        raw.execute("SET jit_above_cost = 0")
    conn = runner.Raympp(raw)
    try:
        outcome = runner.run_path(path, conn, n_segments, str(tmp_path),
                                  complete=os.environ.get("RAYMPP_SLT_COMPLETE") == "1",
                                  postgres=postgres)
    finally:
        conn.close()
    if outcome.failures:
        pytest.fail(outcome.report(), pytrace=False)
