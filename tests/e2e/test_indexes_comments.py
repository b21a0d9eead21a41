"""Keys, indexes and comments through psql, against PostgreSQL 15 (the pg_oracle fixture):
the same DDL on both, then psql's `\\d t`, `\\d+ t`, `\\di`, `\\dt+`, `\\di+`, `\\dv+`
and `\\dn+` print the same (owners and sizes aside: raympp's objects belong to its
bootstrap role, and its sizes are its chunk files'); and a comment or an
index another session creates is seen by this one only once that session commits."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")

_T = "e2e_idxc"
_DDL = [
    f"CREATE TABLE {_T} (id int PRIMARY KEY, a int, b text, c bigint NOT NULL, "
    f"CONSTRAINT {_T}_bk UNIQUE (b, id), UNIQUE (a, id), CONSTRAINT {_T}_pos CHECK (c > 0))",
    f"CREATE INDEX ON {_T} (a)",
    f"CREATE INDEX ON {_T} (a)",
    f"CREATE INDEX {_T}_named ON {_T} USING btree (b, a)",
    f"COMMENT ON TABLE {_T} IS 'the table'",
    f"COMMENT ON COLUMN {_T}.a IS 'column a'",
    f"COMMENT ON INDEX {_T}_named IS 'named index'",
    f"CREATE VIEW {_T}_v AS SELECT id, a FROM {_T}",
    f"COMMENT ON VIEW {_T}_v IS 'the view'",
    f"CREATE SCHEMA {_T}_s",
    f"COMMENT ON SCHEMA {_T}_s IS 'a schema'",
]
_CLEANUP = [f"DROP VIEW IF EXISTS {_T}_v", f"DROP TABLE IF EXISTS {_T}",
            f"DROP SCHEMA IF EXISTS {_T}_s"]


def _psql(host, port, user, db, *args) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    p = subprocess.run(["psql", "-X", "-h", host, "-p", str(port), "-U", user, "-d", db,
                        *args], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _without(text: str, *columns: int) -> list[list[str]]:
    """psql's unaligned rows without the given columns (owner, size)."""
    return [[f for i, f in enumerate(line.split("|")) if i not in columns]
            for line in text.splitlines()]


def test_psql_describe_like_postgresql(server, conn, pg_oracle):
    pg = pg_oracle.connect("postgres")
    pg.autocommit = True
    for c in (conn, pg):
        for sql in _CLEANUP + _DDL:
            c.execute(sql)
    try:
        def both(*args):
            return (_psql(server.host, server.port, "raympp", "raympp", *args),
                    _psql(pg_oracle.host, pg_oracle.port, "postgres", "postgres", *args))
        for cmd in (f"\\d {_T}", f"\\d+ {_T}"):
            ours, theirs = both("-c", cmd)
            assert ours == theirs, f"{cmd}\n--- raympp\n{ours}\n--- PostgreSQL\n{theirs}"
            assert "Indexes:" in ours
        # \di: Schema | Name | Type | Owner | Table
        ours, theirs = both("-At", "-c", f"\\di {_T}*")
        assert _without(ours, 3) == _without(theirs, 3), (ours, theirs)
        assert len(ours.splitlines()) == 6
        # The + forms, owner and size aside (raympp's sizes are its chunk files'):
        # \dt+: Schema | Name | Type | Owner | Persistence | Access method | Size | Description
        # \di+: ... | Owner | Table | Persistence | Access method | Size | Description
        # \dv+: ... | Owner | Persistence | Size | Description
        for cmd, owner, size in ((f"\\dt+ {_T}*", 3, 6), (f"\\di+ {_T}*", 3, 7),
                                 (f"\\dv+ {_T}*", 3, 5)):
            ours, theirs = both("-At", "-c", cmd)
            assert _without(ours, owner, size) == _without(theirs, owner, size), (cmd, ours,
                                                                                 theirs)
        assert _without(both("-At", "-c", f"\\dv+ {_T}*")[0], 3, 5) == [
            ["public", f"{_T}_v", "view", "permanent", "the view"]]
        # \dn+: Name | Owner | Access privileges | Description
        ours, theirs = both("-At", "-c", f"\\dn+ {_T}*")
        assert [(r[0], r[-1]) for r in _without(ours, 1)] == \
            [(r[0], r[-1]) for r in _without(theirs, 1)] == [(f"{_T}_s", "a schema")]
    finally:
        for c in (conn, pg):
            for sql in _CLEANUP:
                c.execute(sql)
        pg.close()


def test_comment_and_index_are_seen_after_commit(server, conn, table):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int, v int)")
    with server.connect() as other:
        other.execute("BEGIN")
        other.execute(f"COMMENT ON TABLE {t} IS 'pending'")
        other.execute(f"CREATE INDEX {t}_v ON {t} (v)")
        seen = "SELECT obj_description(%s::regclass, 'pg_class'), " \
               "(SELECT count(*) FROM pg_indexes WHERE tablename = %s)"
        assert other.execute(seen, (t, t)).fetchone() == ("pending", 1)
        assert conn.execute(seen, (t, t)).fetchone() == (None, 0)
        other.execute("COMMIT")
    assert conn.execute(seen, (t, t)).fetchone() == ("pending", 1)
    conn.execute(f"DROP TABLE {t}")
    assert conn.execute("SELECT count(*) FROM pg_description WHERE description = 'pending'"
                        ).fetchone() == (0,)
