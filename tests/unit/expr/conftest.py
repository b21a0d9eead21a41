"""Fixtures for the expression tests: a PostgreSQL 15 oracle.

The oracle is a private server (initdb into a temporary directory, pg_ctl on a free loopback
port, UTF-8 character classes with byte-order collation, UTC) started once per session by the tests that ask for it; they are
skipped when the binaries, psycopg or (as root) a `postgres` account are missing.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def pg():
    """A psycopg connection to a private PostgreSQL server (TimeZone UTC, collation C)."""
    psycopg = pytest.importorskip("psycopg")
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not (initdb and pg_ctl):
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    prefix: list[str] = []
    tmp = tempfile.mkdtemp(prefix="raympp-expr-pg-")
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(tmp)
            pytest.skip("running as root and there is no postgres account")
        os.chown(tmp, account.pw_uid, account.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port = os.path.join(tmp, "data"), _free_port()
    try:
        subprocess.run(prefix + [initdb, "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                                 "--locale=C.UTF-8", "--lc-collate=C", "--no-sync"], check=True, capture_output=True)
        subprocess.run(prefix + [pg_ctl, "-D", data, "-w", "-l", os.path.join(tmp, "log"), "-o",
                                 f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off",
                                 "start"], check=True, capture_output=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.skip(f"could not start PostgreSQL: {exc}")
    conn = psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                           autocommit=True)
    conn.execute("SET TimeZone = 'UTC'")
    conn.execute("SET IntervalStyle = 'postgres'")
    conn.execute("SET DateStyle = 'ISO, MDY'")
    try:
        yield conn
    finally:
        conn.close()
        subprocess.run(prefix + [pg_ctl, "-D", data, "-m", "fast", "-w", "stop"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
