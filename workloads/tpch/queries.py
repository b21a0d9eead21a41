"""The 22 TPC-H queries as files qNN.sql: where they are, which to run, their text.

They live in the project's shared directory, ../shared/tpch/queries next to the repository
(found from this file, so it works from a source checkout or an editable install); other
places are given with --queries-dir or RAYMPP_TPCH_QUERIES. A clone without the shared
directory next to it (a CI checkout elsewhere) uses the copy kept in query_files/, so the
TPC-H tests run there too instead of being skipped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NUMBERS = tuple(range(1, 23))


class QueryFileError(RuntimeError):
    """The query files are missing, the selection is bad, or the server is unreachable."""


def default_dir() -> Path:
    env = os.environ.get("RAYMPP_TPCH_QUERIES")
    if env:
        return Path(env)
    shared = REPO.parent / "shared" / "tpch" / "queries"
    return shared if (shared / "q01.sql").is_file() else Path(__file__).parent / "query_files"


def find_dir(given: str | Path | None = None) -> Path:
    d = Path(given) if given else default_dir()
    if not (d / "q01.sql").is_file():
        raise QueryFileError(f"no TPC-H queries (q01.sql ... q22.sql) in {d}; "
                             f"pass --queries-dir")
    return d


def parse_selection(text: str | None) -> list[int]:
    """'1,3,5-7' -> [1, 3, 5, 6, 7]; None or '' or 'all' -> 1..22."""
    if not text or text.strip().lower() == "all":
        return list(NUMBERS)
    out: list[int] = []
    for item in text.split(","):
        item = item.strip().lower().lstrip("q")
        if not item:
            continue
        m = re.fullmatch(r"(\d+)(?:-q?(\d+))?", item)
        if m is None:
            raise QueryFileError(f"bad query selection {item!r}: use numbers like 1,3,5-7")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        for n in range(lo, hi + 1):
            if n not in NUMBERS:
                raise QueryFileError(f"there is no TPC-H query {n} (1..22)")
            if n not in out:
                out.append(n)
    return out


def path(n: int, directory: Path) -> Path:
    return Path(directory) / f"q{n:02d}.sql"


def read(n: int, directory: Path | None = None) -> str:
    """The query text without its trailing semicolon (one statement)."""
    text = path(n, directory or find_dir()).read_text()
    return text.strip().rstrip(";").strip()


def has_order_by(sql: str) -> bool:
    """Whether the outermost query orders its rows (the last ORDER BY is at depth 0)."""
    depth, top = 0, False
    lowered = re.sub(r"--[^\n]*", "", sql).lower()
    for m in re.finditer(r"[()]|\border\s+by\b", lowered):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0:
            top = True
    return top
