"""kill -9 in the middle of a large UPDATE, DELETE, MERGE or ALTER TABLE: of a segment, and
of the coordinator.

After the fault (and the restart), the table is exactly as before the statement or exactly
as after it, never a mix: every row's deletion and its new version (or the rewritten
chunks and the new definition) are published in one commit on every segment and the
catalog, or nowhere. MERGE runs in three steps (the not-matched rows kept at the
coordinator, the matched rows changed on the segments, the kept rows written): a kill
early and one late in it leave the table as before.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.conftest import kill_segment, own_cluster, wait_restarted
from tests.e2e.test_restart import Serve, _coordinator

ROWS = 1_000_000
CHECKSUM = ("SELECT count(*), sum(k), sum(v), (SELECT string_agg(column_name, ',') FROM "
            "information_schema.columns WHERE table_name = 'mf') FROM mf")

# (statement, the checksum it leads to from the loaded table's) — each changes every
# segment's rows: new versions in place, rows moved to other segments, rows deleted.
STATEMENTS = {
    "update": "UPDATE mf SET v = v + 1, s = s || 'u'",
    "update_key": "UPDATE mf SET k = k + 10000000 WHERE k % 2 = 0",
    "delete": "DELETE FROM mf WHERE k % 3 <> 0",
    "alter": "ALTER TABLE mf ADD COLUMN x int, DROP COLUMN s, ALTER COLUMN v TYPE numeric(20, 2)",
    # half the rows matched (a third of those deleted, the rest updated), 500,000 inserted
    "merge": ("MERGE INTO mf USING (SELECT g AS k FROM generate_series(500001, 1500000) g) s "
              "ON mf.k = s.k WHEN MATCHED AND s.k % 3 = 0 THEN DELETE "
              "WHEN MATCHED THEN UPDATE SET v = mf.v + 1, s = mf.s || 'm' "
              "WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.k % 11, 'new')"),
}


def _load(c) -> tuple:
    c.execute("DROP TABLE IF EXISTS mf")
    c.execute("CREATE TABLE mf (k bigint, v bigint, s text) DISTRIBUTED BY (k)")
    c.execute(f"INSERT INTO mf SELECT g, g % 5003, 's' || (g % 701) "
              f"FROM generate_series(1, {ROWS}) g")
    return c.execute(CHECKSUM).fetchone()


def _after(c, sql: str, took: list | None = None) -> tuple:
    """The checksum the statement leads to (run in a transaction that rolls back);
    `took` gets the seconds the statement ran."""
    c.execute("BEGIN")
    t0 = time.monotonic()
    c.execute(sql)
    if took is not None:
        took.append(time.monotonic() - t0)
    out = c.execute(CHECKSUM).fetchone()
    c.execute("ROLLBACK")
    return out


def _run_in_thread(connect, sql: str) -> dict:
    outcome: dict = {"done": False, "error": None}

    def run():
        try:
            with connect() as c:
                c.execute(sql)
                outcome["done"] = True
        except psycopg.Error as e:
            outcome["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    outcome["thread"] = t
    return outcome


@pytest.fixture(scope="module")
def own_server(ray_session, tmp_path_factory):
    """A cluster of this module's own: its tests kill its segments."""
    yield from own_cluster(tmp_path_factory, "modify_faults", 2)


@pytest.mark.parametrize("name,kill_after", [
    pytest.param("update", 0.8, marks=pytest.mark.heavy), ("update_key", 1.2),
    pytest.param("delete", 0.6, marks=pytest.mark.heavy), ("alter", 0.8)])
def test_segment_killed_during_statement(own_server, name, kill_after):
    sql = STATEMENTS[name]
    with own_server.connect() as c:
        before = _load(c)
        after = _after(c, sql)
    assert before != after
    outcome = _run_in_thread(own_server.connect, sql)
    time.sleep(kill_after)
    pid = kill_segment(own_server, 1)
    outcome["thread"].join(600)
    assert not outcome["thread"].is_alive()
    wait_restarted(own_server, 1, pid)
    with own_server.connect() as c:
        now = c.execute(CHECKSUM).fetchone()
    if outcome["done"]:
        assert now == after  # acknowledged: every row changed, on both segments
    else:
        assert outcome["error"].sqlstate in ("40001", "58000", "58030"), outcome["error"]
        assert now == before, (now, before, after)
    # The table still takes the statement afterwards, whole.
    with own_server.connect() as c:
        if now == before:
            c.execute(sql)
        assert c.execute(CHECKSUM).fetchone() == after


# The kill lands at a fraction of the time the statement took in the rehearsal: early (the
# not-matched rows being found) by default, late (rows being changed and written on the
# segments) on demand. Both must fail the statement and leave the table as before.
@pytest.mark.parametrize("fraction", [0.25, pytest.param(0.75, marks=pytest.mark.heavy)])
def test_segment_killed_during_merge(own_server, fraction):
    sql = STATEMENTS["merge"]
    took: list[float] = []
    with own_server.connect() as c:
        before = _load(c)
        after = _after(c, sql, took)
    assert before != after
    outcome = _run_in_thread(own_server.connect, sql)
    time.sleep(took[0] * fraction)
    pid = kill_segment(own_server, 1)
    outcome["thread"].join(600)
    assert not outcome["thread"].is_alive()
    wait_restarted(own_server, 1, pid)
    assert not outcome["done"], "the kill came after the MERGE had committed"
    assert outcome["error"].sqlstate in ("40001", "58000", "58030"), outcome["error"]
    with own_server.connect() as c:
        assert c.execute(CHECKSUM).fetchone() == before
        c.execute(sql)  # and the table takes the statement afterwards, whole
        assert c.execute(CHECKSUM).fetchone() == after


# Two whole clusters started twice each: about 90 s, so on demand (-m heavy).
@pytest.mark.heavy
@pytest.mark.parametrize("name", ["update_key", "delete", "alter"])
def test_coordinator_killed_during_statement(tmp_path, name):
    """kill -9 of the coordinator while the statement runs; the restarted cluster holds
    the table as before the statement or as after it."""
    sql = STATEMENTS[name]
    data = tmp_path / "data"
    serve = Serve(data)
    try:
        with serve.connect() as c:
            before = _load(c)
            after = _after(c, sql)
        outcome = _run_in_thread(serve.connect, sql)
        time.sleep(1.0)
        _coordinator(serve).kill()
        outcome["thread"].join(120)
        serve.proc.wait(60)
    finally:
        serve.kill()
    again = Serve(data)
    try:
        with again.connect() as c:
            now = c.execute(CHECKSUM).fetchone()
            assert now in (before, after), (now, before, after)
            if outcome["done"]:
                assert now == after
            # ... and takes the statement afterwards, whole.
            if now == before:
                c.execute(sql)
            assert c.execute(CHECKSUM).fetchone() == after
        assert not again.stop()
    finally:
        again.kill()
