"""workloads/tpch/query_files: the 22 TPC-H queries kept in the repository, for a checkout
without ../shared next to it; identical to the shared ones where those exist."""

from __future__ import annotations

from workloads.tpch import queries

KEPT = queries.Path(queries.__file__).parent / "query_files"
SHARED = queries.REPO.parent / "shared" / "tpch" / "queries"


def test_all_22_are_kept_and_equal_the_shared_ones_where_those_exist():
    names = [f"q{n:02d}.sql" for n in range(1, 23)]
    assert sorted(p.name for p in KEPT.glob("q*.sql")) == names
    for name in names:
        text = (KEPT / name).read_text()
        assert "select" in text.lower(), name
        if (SHARED / name).is_file():
            assert text == (SHARED / name).read_text(), name


def test_a_checkout_without_shared_uses_the_kept_copy(monkeypatch, tmp_path):
    monkeypatch.delenv("RAYMPP_TPCH_QUERIES", raising=False)
    monkeypatch.setattr(queries, "REPO", tmp_path / "repo")
    assert queries.default_dir() == KEPT
    assert queries.find_dir() == KEPT
