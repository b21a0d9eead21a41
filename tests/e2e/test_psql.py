"""The psql client against raympp: -c queries in aligned and unaligned output, several
statements in one -c, errors, and \\copy from and to client files."""

from __future__ import annotations

import shutil
from decimal import Decimal

import pytest

pytestmark = pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")


def test_psql_select_aligned(psql):
    p = psql("-c", "SELECT 1 AS one, 'x' AS two")
    lines = [line.rstrip() for line in p.stdout.splitlines()]
    assert lines == [" one | two", "-----+-----", "   1 | x", "(1 row)", ""]


def test_psql_select_unaligned(psql):
    p = psql("-A", "-t", "-c",
             "SELECT i, i * 2 FROM generate_series(1, 3) AS g(i) ORDER BY i")
    assert p.stdout.splitlines() == ["1|2", "2|4", "3|6"]


def test_psql_several_statements(psql, table):
    t = table()
    p = psql("-A", "-t", "-c",
             f"CREATE TABLE {t} (k int8) DISTRIBUTED BY (k); "
             f"INSERT INTO {t} SELECT i FROM generate_series(1, 10) AS g(i); "
             f"SELECT sum(k) FROM {t}")
    assert p.stdout.strip().splitlines()[-1] == "55"


def test_psql_error(psql):
    p = psql("-c", "SELECT * FROM e2e_psql_no_such_table", check=False)
    assert p.returncode != 0
    assert "ERROR:" in p.stderr


def test_psql_backslash_copy_from_and_to(psql, conn, table, tmp_path):
    t = table()
    conn.execute(f"CREATE TABLE {t} (k int8, name text, amount numeric(10,2)) "
                 f"DISTRIBUTED BY (k)")
    src = tmp_path / "in.csv"
    rows = [(i, "" if i % 10 == 0 else f"name, {i}", f"{i % 1000}.{i % 100:02d}")
            for i in range(1, 20001)]
    src.write_text("".join(f'{k},"{n}",{a}\n' if n else f"{k},,{a}\n" for k, n, a in rows))
    psql("-c", f"\\copy {t} from '{src}' csv")
    got = conn.execute(f"SELECT count(*), count(name), sum(k), sum(amount) FROM {t}").fetchone()
    assert got == (20000, 18000, sum(r[0] for r in rows), sum(Decimal(r[2]) for r in rows))

    out = tmp_path / "out.csv"
    psql("-c", f"\\copy {t} to '{out}' csv")
    lines = out.read_text().splitlines()
    assert len(lines) == 20000
    assert '7,"name, 7",7.07' in lines and "10,,10.10" in lines
