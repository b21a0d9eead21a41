"""Temporary tables across sessions: each session's own, hidden from the others (also
from their cached plans), gone when the session ends."""

from __future__ import annotations

import time

import psycopg
import pytest


def _schemas(conn) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'pg_temp%' ORDER BY 1")]


def test_each_session_has_its_own_and_loses_it_at_the_end(server):
    with server.connect() as c, server.connect() as d:
        c.execute("DROP TABLE IF EXISTS tmp_e")
        c.execute("CREATE TABLE tmp_e (a int4)")
        c.execute("INSERT INTO tmp_e VALUES (1)")
        c.execute("CREATE TEMP TABLE tmp_e (a int4)")
        c.execute("INSERT INTO tmp_e VALUES (2)")
        assert c.execute("SELECT a FROM tmp_e").fetchall() == [(2,)]
        # The same text in the other session: the permanent table, not c's cached plan.
        assert d.execute("SELECT a FROM tmp_e").fetchall() == [(1,)]
        d.execute("CREATE TEMP TABLE tmp_e AS SELECT 3 AS a")
        assert d.execute("SELECT a FROM tmp_e").fetchall() == [(3,)]
        assert c.execute("SELECT a FROM tmp_e").fetchall() == [(2,)]
        mine = _schemas(c)
        assert len(mine) == 2
        with pytest.raises(psycopg.errors.UndefinedTable):
            d.execute("SELECT * FROM tmp_nowhere")
    with server.connect() as e:
        deadline = time.monotonic() + 10
        while set(_schemas(e)) & set(mine) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not set(_schemas(e)) & set(mine)
        assert e.execute("SELECT a FROM tmp_e").fetchall() == [(1,)]
        e.execute("DROP TABLE tmp_e")
