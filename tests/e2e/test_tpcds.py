"""TPC-DS at SF 0.01 on a 2-segment cluster of this module's own: the 99 queries of DuckDB's
tpcds extension, answers compared with DuckDB over the same dsdgen data (workloads/tpcds/kit.py:
fact tables DISTRIBUTED BY their item key, small dimensions REPLICATED, COPY FROM STDIN,
ANALYZE; the oracle with PostgreSQL's NULL order and integer division). The data is
loaded by `raympp tpcds load` itself (a subprocess), and `raympp tpcds run --check` runs a
few queries the same way.

Every one of the 99 must be right: a wrong answer, a refusal (0A000), another error or a
timeout fails its test; the table of every query is printed by test_report (`-s`).
In the default run (about a minute and a half: generation, load, the 99 queries). Needs
`duckdb-extension-tpcds` (raympp's test extras, which pin duckdb 1.5.5).
RAYMPP_TPCDS_TIMEOUT sets the per-query statement_timeout (default 60 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import own_cluster
from workloads.tpcds import kit as tpcds_kit

SF = 0.01
TIMEOUT_S = float(os.environ.get("RAYMPP_TPCDS_TIMEOUT", "60"))
REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coordinator.cli", *args], cwd=str(REPO),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def kit():
    tpcds_kit.extension_file()  # the test extras are installed: a KitError is a failure
    return tpcds_kit


@pytest.fixture(scope="module")
def files_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("tpcds-files")


@pytest.fixture(scope="module")
def dataset(kit, files_dir):
    return kit.generate(files_dir, SF)


@pytest.fixture(scope="module")
def tpcds_server(ray_session, tmp_path_factory):
    """A cluster of this module's own: the TPC-DS table names (item, store, customer, ...)
    would collide with other tests' tables on the shared one."""
    yield from own_cluster(tmp_path_factory, "tpcds", 2)


@pytest.fixture(scope="module")
def loaded(kit, dataset, files_dir, tpcds_server):
    p = _cli("tpcds", "load", "--sf", str(SF), "--host", tpcds_server.host,
             "--port", str(tpcds_server.port), "--data-dir-for-files", str(files_dir))
    assert p.returncode == 0, f"raympp tpcds load failed ({p.returncode}):\n{p.stderr[-4000:]}"
    return tpcds_server


@pytest.fixture(scope="module")
def results(kit, dataset, loaded) -> dict:
    duck = kit.duck_connect(dataset.database, read_only=True, threads=2)
    try:
        texts = kit.query_texts(duck)
        assert sorted(texts) == kit.NUMBERS
        rs = kit.run_all(lambda: loaded.connect(), duck, texts, kit.NUMBERS, TIMEOUT_S)
    finally:
        duck.close()
    return {r.number: r for r in rs}


def test_loaded_row_counts(kit, dataset, loaded):
    with loaded.connect() as c:
        for t in kit.TABLES:
            assert c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == dataset.rows[t], t


def test_distribution_policies(kit, dataset, loaded):
    """Hashed tables on their key column, the small dimensions replicated
    (gp_distribution_policy: policytype 'p' with distkey the column's number, or 'r')."""
    with loaded.connect() as c:
        rows = c.execute("SELECT c.relname, p.policytype, p.distkey::text "
                         "FROM gp_distribution_policy p JOIN pg_class c "
                         "ON c.oid = p.localoid").fetchall()
    policy = {name: (kind, key) for name, kind, key in rows}
    for t in kit.TABLES:
        if t in kit.HASHED:
            names = [col for col, _ in dataset.columns[t]]
            want = ("p", str(names.index(kit.HASHED[t]) + 1))
        else:
            want = ("r", "")
        assert policy.get(t) == want, t


@pytest.mark.parametrize("number", list(range(1, 100)), ids=lambda n: f"q{n:02d}")
def test_query(results, number):
    r = results[number]
    if r.status != "right":
        pytest.fail(f"q{number:02d} {r.status}: "
                    + (f"[{r.sqlstate}] " if r.sqlstate else "") + (r.message or ""),
                    pytrace=False)


def test_load_refuses_existing_tables(loaded):
    """A second load without --replace stops before touching anything, naming the
    tables."""
    p = _cli("tpcds", "load", "--sf", str(SF), "--host", loaded.host,
             "--port", str(loaded.port))
    assert p.returncode == 1 and "exist already" in p.stderr and "--replace" in p.stderr, \
        p.stderr


def test_run_command_checks_answers(loaded, files_dir):
    """`raympp tpcds run --check` classifies each query against DuckDB's answer."""
    p = _cli("tpcds", "run", "--host", loaded.host, "--port", str(loaded.port),
             "--queries", "3,7,96", "--check", "--sf", str(SF),
             "--data-dir-for-files", str(files_dir))
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    for q in ("q03", "q07", "q96"):
        assert q in p.stdout, out
    assert "3 of 3 queries right" in p.stdout, out


def test_run_command_without_a_server():
    p = _cli("tpcds", "run", "--port", "1", "--queries", "1")
    assert p.returncode == 1 and "cannot connect to 127.0.0.1:1" in p.stderr, p.stderr


def test_report(kit, results):
    rs = [results[n] for n in sorted(results)]
    print()
    print(kit.table_text(rs))
    print(kit.summary_line(rs))
    wrong = [f"q{r.number:02d}: {r.message}" for r in rs if r.status == "wrong"]
    assert not wrong, "WRONG answers:\n" + "\n".join(wrong)


# --------------------------------------------------------------------------- no server

def test_comparer_ties_and_limits():
    """Rows tied on the ORDER BY keys may come in any order, and a LIMIT may cut a run of
    ties anywhere; any other difference is wrong."""
    from decimal import Decimal as D

    kit = tpcds_kit  # the module (the fixture of that name needs the extension)

    def outcome(rows, cols=("a", "b")):
        return kit.Outcome(None, 0.0, rows, list(cols))

    sql = "SELECT a, b FROM t ORDER BY a LIMIT 3"
    want = outcome([(1, "x"), (2, "y"), (2, "z")])
    assert kit.check(sql, outcome([(1, "x"), (2, "z"), (2, "y")]), want)[0]
    assert kit.check(sql, outcome([(1, "x"), (2, "y"), (2, "w")]), want)[0]     # cut at ties
    assert not kit.check(sql, outcome([(1, "w"), (2, "y"), (2, "z")]), want)[0]
    assert not kit.check(sql, outcome([(2, "y"), (1, "x"), (2, "z")]), want)[0]
    assert not kit.check(sql, outcome([(1, "x"), (2, "y")]), want)[0]
    # without LIMIT a run of ties must hold the same rows
    assert not kit.check("SELECT a, b FROM t ORDER BY a",
                         outcome([(1, "x"), (2, "y"), (2, "w")]), want)[0]
    # keys by position and by the selected expression; numbers with tolerance
    assert kit.order_info("SELECT a, sum(b) s FROM t GROUP BY a ORDER BY 2, sum(b) DESC LIMIT 5",
                          ["a", "s"]) == (True, True, [1, 1])
    assert kit.order_info("SELECT a FROM t", ["a"])[:2] == (False, False)
    assert kit.check("SELECT a, b FROM t", outcome([(D("1.50"), "x")]),
                     outcome([(1.5, "x")]))[0]
    assert not kit.check("SELECT a, b FROM t", outcome([(D("1.51"), "x")]),
                         outcome([(1.5, "x")]))[0]
