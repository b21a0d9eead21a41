"""End to end with the psql client (PostgreSQL 15) as a subprocess."""

import os
import shutil
import subprocess

import pytest

PSQL = shutil.which("psql") or "/usr/bin/psql"
pytestmark = pytest.mark.skipif(not os.path.exists(PSQL), reason="psql is not installed")


def psql(pg, *args, stdin=None, password=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(PGCONNECT_TIMEOUT="10", PGSSLMODE="prefer")
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run([PSQL, "-h", "127.0.0.1", "-p", str(pg.port), "-U", "x", "-d", "db",
                           *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=30)


def test_aligned_output(pg):
    done = psql(pg, "-c", "select types")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split("|")[0].strip() == "b" and lines[0].split("|")[-1].strip() == "iv"
    first = [cell.strip() for cell in lines[2].split("|")]
    assert first == ["t", "1", "2", "3", "1.5", "0.1", "12.30", "-1234567890123456789012.5000",
                     "héllo", "abc", "ab", "2024-02-29", "2024-01-02 03:04:05.6",
                     "2024-01-02 03:04:05+00", "3 days 04:05:00"]
    assert "(3 rows)" in lines


def test_unaligned_tuples_only(pg):
    done = psql(pg, "-X", "-A", "-t", "-c", "select types")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "t|1|2|3|1.5|0.1|12.30|-1234567890123456789012.5000|héllo|abc|ab |2024-02-29|"
        "2024-01-02 03:04:05.6|2024-01-02 03:04:05+00|3 days 04:05:00",
        "||||||||||||||",
        "f|-32768|-2147483648|-9223372036854775808|Infinity|-1e+300|-0.05|0.0001|||x  |"
        "1999-12-31|2000-01-01 00:00:00|1999-12-31 23:59:59.999999+00|-1 days -00:00:00.0005"]
    assert psql(pg, "-X", "-A", "-t", "-c", "select 1").stdout == "1\n"


def test_errors_and_commands(pg):
    done = psql(pg, "-X", "-c", "select error")
    assert done.returncode == 1
    assert "ERROR:  division by zero" in done.stderr
    assert "DETAIL:  dividing 1 by 0" in done.stderr and "HINT:  do not do that" in done.stderr
    done = psql(pg, "-X", "-c", "create table t (a int)")
    assert done.returncode == 0 and done.stdout.strip() == "CREATE TABLE"


def test_script_with_transaction_and_on_error_stop(pg):
    script = "begin;\nselect 1;\ncommit;\nselect error;\nselect 1;\n"
    done = psql(pg, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", stdin=script)
    assert done.returncode == 3
    assert done.stdout.split() == ["BEGIN", "1", "COMMIT"]
    assert pg.engine.executed == ["begin", "select 1", "commit", "select error"]


def test_copy_from_and_to_stdin(pg):
    done = psql(pg, "-X", "-c", "copy t from stdin", stdin="1\tone\n2\ttwo\n3\tthree\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "COPY 3"
    assert pg.engine.copied["t"] == b"1\tone\n2\ttwo\n3\tthree\n"
    done = psql(pg, "-X", "-c", "copy t to stdout")
    assert done.stdout == "1\tone\n2\ttwo\n3\tthree\n"


def test_password_with_scram(pg_password):
    done = psql(pg_password, "-X", "-A", "-t", "-c", "select 1", password="s3cret")
    assert done.returncode == 0 and done.stdout == "1\n", done.stderr
    done = psql(pg_password, "-X", "-w", "-c", "select 1", password="nope")
    assert done.returncode == 2
    assert 'password authentication failed for user "x"' in done.stderr
