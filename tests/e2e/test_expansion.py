"""Growing a running cluster (coordinator/expansion.py): `ALTER SYSTEM EXPAND SEGMENTS TO n`
adds segments and moves every table onto them while clients query and write; a kill -9
of the coordinator in the middle leaves each table where it was or moved, never half, and
the same command resumes; a kill -9 of a segment in the middle of a table's move undoes
that move, which then runs again."""

from __future__ import annotations

import threading
import time

import pytest

from tests.e2e.test_restart import Serve, _coordinator, psutil

ROWS = 60_000


def _load(c) -> None:
    c.execute("CREATE TABLE h (k int8, v text) DISTRIBUTED BY (k)")
    c.execute("CREATE TABLE o (k int8, w int8) DISTRIBUTED BY (k)")
    c.execute("CREATE TABLE r (k int8) DISTRIBUTED RANDOMLY")
    c.execute("CREATE TABLE p (k int8, name text) DISTRIBUTED REPLICATED")
    c.execute("CREATE TABLE u (k int8 PRIMARY KEY, v int8)")
    c.execute(f"INSERT INTO h SELECT g, 'v' || g FROM generate_series(1, {ROWS}) g")
    c.execute(f"INSERT INTO o SELECT g, g % 7 FROM generate_series(1, {ROWS}) g")
    c.execute(f"INSERT INTO r SELECT g FROM generate_series(1, {ROWS}) g")
    c.execute("INSERT INTO p SELECT g, 'n' || g FROM generate_series(1, 100) g")
    c.execute(f"INSERT INTO u SELECT g, g FROM generate_series(1, {ROWS}) g")
    c.execute("CREATE VIEW hv AS SELECT k, v FROM h WHERE k <= 1000")


# Queries whose answers the writers below never change (they write keys above ROWS).
CHECKS = {
    f"SELECT count(*), sum(h.k + o.w) FROM h JOIN o USING (k) WHERE h.k <= {ROWS}":
        (ROWS, sum(k + k % 7 for k in range(1, ROWS + 1))),
    f"SELECT count(*) FROM h JOIN p ON h.k = p.k WHERE h.k <= {ROWS}": (100,),
    "SELECT count(*), sum(k) FROM r": (ROWS, ROWS * (ROWS + 1) // 2),
    f"SELECT count(*) FROM u JOIN o USING (k) WHERE u.v = o.k AND u.k <= {ROWS}": (ROWS,),
    "SELECT w, count(*) FROM o GROUP BY w ORDER BY w LIMIT 1":
        (0, sum(1 for k in range(1, ROWS + 1) if k % 7 == 0)),
    "SELECT count(*) FROM hv JOIN r USING (k)": (1000,),
}


class Clients:
    """Readers that check answers and writers that record what was acknowledged."""

    JOIN_SECONDS = 60

    def __init__(self, serve: Serve, readers: int = 2, writers: int = 2):
        self.serve = serve
        self.stop = threading.Event()
        self.wrong: list = []
        self.failed: list = []
        self.answered = 0
        self.acknowledged: list[int] = []
        self.threads = [threading.Thread(target=self._read, daemon=True)
                        for _ in range(readers)]
        self.threads += [threading.Thread(target=self._write, args=(i,), daemon=True)
                         for i in range(writers)]

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(self.JOIN_SECONDS)
        # What they acknowledged is checked next: none may still be writing.
        assert not any(t.is_alive() for t in self.threads), "a client did not stop"

    def _read(self):
        with self.serve.connect() as c:
            while not self.stop.is_set():
                for sql, want in CHECKS.items():
                    try:
                        got = tuple(c.execute(sql).fetchone())
                    except Exception as e:  # noqa: BLE001 - recorded, the test fails
                        self.failed.append((sql, repr(e)))
                        continue
                    if tuple(int(x) for x in got) != want:
                        self.wrong.append((sql, got, want))
                    self.answered += 1

    def _write(self, i: int):
        k = ROWS + 1_000_000 * (i + 1)
        with self.serve.connect() as c:
            while not self.stop.is_set():
                try:
                    if k % 2:
                        c.execute("INSERT INTO h VALUES (%s, 'w'), (%s, 'w')", (k, k + 1))
                    else:  # a transaction of two statements, one into a keyed table
                        with c.transaction():
                            c.execute("INSERT INTO h VALUES (%s, 'w')", (k,))
                            c.execute("INSERT INTO u VALUES (%s, 0)", (k + 1,))
                    self.acknowledged += [k, k + 1]
                except Exception as e:  # noqa: BLE001 - recorded, the test fails
                    self.failed.append(("insert", repr(e)))
                k += 2


def _written(c) -> set[int]:
    rows = c.execute(f"SELECT k FROM h WHERE k > {ROWS} UNION ALL "
                     f"SELECT k FROM u WHERE k > {ROWS}").fetchall()
    keys = [r[0] for r in rows]
    assert len(keys) == len(set(keys)), "a row written during the move is there twice"
    return set(keys)


def _placement(c) -> dict[str, int]:
    return dict(c.execute(
        "SELECT c.relname, p.numsegments FROM gp_distribution_policy p "
        "JOIN pg_class c ON c.oid = p.localoid ORDER BY 1").fetchall())


def _spread(c, table: str) -> dict[int, int]:
    return dict(c.execute(f"SELECT gp_segment_id, count(*) FROM {table} GROUP BY 1").fetchall())


def test_expand_online_while_clients_query_and_write(tmp_path):
    serve = Serve(tmp_path / "data", segments=2)
    try:
        with serve.connect() as c:
            _load(c)
            with Clients(serve) as clients:
                time.sleep(2)
                t0 = time.monotonic()
                c.execute("ALTER SYSTEM EXPAND SEGMENTS TO 3")
                took = time.monotonic() - t0
                time.sleep(1)
            assert not clients.failed, clients.failed[:5]
            assert not clients.wrong, clients.wrong[:5]
            assert clients.answered > len(CHECKS), clients.answered
            assert _written(c) == set(clients.acknowledged)
            assert set(_placement(c).values()) == {3}
            moved = {r[0]: r[1:] for r in c.execute(
                "SELECT table_name, status, old_segments, new_segments, rows_moved "
                "FROM raympp_expansion")}
            assert {m[:3] for m in moved.values()} == {("done", 2, 3)}
            # Jump-consistent hashing moves about 1 - 2/3 of each hashed table.
            assert abs(moved["o"][3] / ROWS - 1 / 3) < 0.02, moved["o"]
            assert moved["p"][3] == 100  # a replicated table: one whole copy
            for table in ("h", "o", "u"):
                spread = _spread(c, table)
                assert sorted(spread) == [0, 1, 2], (table, spread)
            # A random table keeps its rows where they were and gives the new segment
            # its share (one INSERT ... SELECT from the coordinator put them on one).
            spread = _spread(c, "r")
            assert abs(spread[2] / ROWS - 1 / 3) < 0.02, spread
            for sql, want in CHECKS.items():
                assert tuple(int(x) for x in c.execute(sql).fetchone()) == want, sql
            plan = "\n".join(r[0] for r in c.execute("EXPLAIN SELECT * FROM h JOIN o USING (k)"))
            # Both moved: joined where they are again.
            assert "Redistribute" not in plan and "Broadcast" not in plan, plan
            assert "Segments: 3" in plan, plan
        assert took < 120
    finally:
        serve.kill()
    # The grown cluster is what the data directory starts with from now on.
    again = Serve(tmp_path / "data", segments=2)
    try:
        with again.connect() as c:
            assert c.execute("SELECT count(*) FROM gp_segment_configuration "
                             "WHERE content >= 0").fetchone() == (3,)
            for sql, want in CHECKS.items():
                assert tuple(int(x) for x in c.execute(sql).fetchone()) == want, sql
    finally:
        again.kill()


def test_kill_9_of_the_coordinator_during_expansion_then_resume(tmp_path):
    data = tmp_path / "data"
    serve = Serve(data, segments=2)
    try:
        with serve.connect() as c:
            for t in ("a", "b", "c"):
                c.execute(f"CREATE TABLE {t} (k int8, v text) DISTRIBUTED BY (k)")
                c.execute(f"INSERT INTO {t} SELECT g, 'x' || g FROM generate_series(1, 400000) g")
        errors = []

        def expand():
            try:
                with serve.connect() as e:
                    e.execute("ALTER SYSTEM EXPAND SEGMENTS TO 4")
            except Exception as exc:  # noqa: BLE001 - the kill ends it
                errors.append(exc)
        threading.Thread(target=expand, daemon=True).start()
        with serve.connect() as c:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not c.execute(
                    "SELECT count(*) FROM raympp_expansion WHERE status = 'done'").fetchone()[0]:
                time.sleep(0.05)
        time.sleep(0.3)  # into the second table's move
        _coordinator(serve).kill()
        serve.proc.wait(60)
    finally:
        serve.kill()
    again = Serve(data, segments=2)
    try:
        with again.connect() as c:
            placement = _placement(c)
            assert placement["a"] == 4, placement  # the first table's move had committed
            for t in ("a", "b", "c"):
                assert c.execute(f"SELECT count(*), sum(k) FROM {t}").fetchone() == \
                    (400000, 400000 * 400001 // 2), t
                on = set(_spread(c, t))
                assert on == set(range(placement[t])), (t, placement[t], on)
            assert c.execute("SELECT count(*) FROM a JOIN b USING (k) JOIN c USING (k)"
                             ).fetchone() == (400000,)
            c.execute("ALTER SYSTEM EXPAND SEGMENTS")  # resumes: the rest moves
            assert set(_placement(c).values()) == {4}
            for t in ("a", "b", "c"):
                assert c.execute(f"SELECT count(*), sum(k) FROM {t}").fetchone() == \
                    (400000, 400000 * 400001 // 2), t
                assert sorted(_spread(c, t)) == [0, 1, 2, 3]
    finally:
        again.kill()


def _segment_processes(serve: Serve) -> list[psutil.Process]:
    return [p for p in psutil.Process(serve.proc.pid).children(recursive=True)
            if "SegmentActor" in " ".join(p.cmdline())]


def test_kill_9_of_a_segment_during_a_move_is_retried(tmp_path):
    """A segment killed while a table moves: the move's transaction is lost (40001) and
    undone, the segment is restarted and healed, and the move runs again; the statement
    succeeds with every row once."""
    serve = Serve(tmp_path / "data", segments=2)
    try:
        with serve.connect() as c:
            c.execute("CREATE TABLE big (k int8, v text) DISTRIBUTED BY (k)")
            c.execute("INSERT INTO big SELECT g, repeat('y', 40) FROM generate_series(1, 2000000) g")
            victims = _segment_processes(serve)
            assert len(victims) == 2, victims
            outcome = []

            def expand():
                try:
                    with serve.connect() as e:
                        e.execute("ALTER SYSTEM EXPAND SEGMENTS TO 3")
                    outcome.append("ok")
                except Exception as exc:  # noqa: BLE001 - recorded, the test fails
                    outcome.append(exc)
            th = threading.Thread(target=expand, daemon=True)
            th.start()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not c.execute(
                    "SELECT count(*) FROM raympp_expansion WHERE status = 'moving'"
            ).fetchone()[0]:
                time.sleep(0.05)
            time.sleep(0.5)
            victims[0].kill()
            th.join(300)
            assert outcome == ["ok"], outcome
            assert c.execute("SELECT count(*), sum(k), count(DISTINCT k) FROM big").fetchone() \
                == (2000000, 2000000 * 2000001 // 2, 2000000)
            assert sorted(_spread(c, "big")) == [0, 1, 2]
            assert _placement(c) == {"big": 3}
    finally:
        serve.kill()
