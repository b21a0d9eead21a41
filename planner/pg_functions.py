"""The names of PostgreSQL 15's built-in functions (pg15_functions.txt, read from its
pg_proc), so that a call raympp does not implement is refused as not supported (0A000)
rather than reported as a function that does not exist (42883)."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def _names() -> frozenset[str]:
    text = (Path(__file__).with_name("pg15_functions.txt")).read_text()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def is_builtin(name: str) -> bool:
    """Whether PostgreSQL 15 has a built-in function of this (lower-case) name."""
    return name in _names()
