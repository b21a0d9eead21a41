"""Roles and logins against a real cluster started with a password (as `raympp serve
--password PW`): the bootstrap superuser logs in with PW; CREATE/ALTER/DROP ROLE change
who may log in, with PostgreSQL's FATAL errors (28P01 for a wrong or missing password or
an unknown user, 28000 for a NOLOGIN role); roles and the bootstrap password across a
restart; the shared trust-mode server refuses users that do not exist."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import DBNAME, HOST, USER, start_server

BOOT_PASSWORD = "boot-pw"


@pytest.fixture(scope="module")
def own(ray_session, tmp_path_factory):
    """A 1-segment cluster of this module's own that requires passwords; `restart(pw)`
    starts a new coordinator on the same data directory with password `pw`."""
    data_dir = str(tmp_path_factory.mktemp("roles"))
    box = {"server": start_server(data_dir, 1, BOOT_PASSWORD)}

    def restart(password):
        box["server"].stop()
        box["server"] = start_server(data_dir, 1, password)
        return box["server"]
    box["restart"] = restart
    yield box
    box["server"].stop()


def connect(server, user, password=None, **kw):
    if password is not None:
        kw["password"] = password
    return psycopg.connect(host=HOST, port=server.port, user=user, dbname=DBNAME,
                           autocommit=True, connect_timeout=30, **kw)


def refused(server, user, password=None) -> psycopg.OperationalError:
    with pytest.raises(psycopg.OperationalError) as e:
        connect(server, user, password).close()
    return e.value


def assert_refused(server, user, password, message, sqlstate):
    e = refused(server, user, password)
    assert message in str(e), str(e)
    if e.sqlstate is not None:  # what libpq reports of a FATAL at start-up
        assert e.sqlstate == sqlstate


def test_bootstrap_superuser_logs_in_with_the_server_password(own):
    server = own["server"]
    with connect(server, USER, BOOT_PASSWORD) as c:
        assert c.pgconn.used_password
        assert c.execute("SELECT current_user, 1 + 1").fetchone() == (USER, 2)
    assert_refused(server, USER, "wrong", f'password authentication failed for user "{USER}"',
                   "28P01")
    assert "no password supplied" in str(refused(server, USER))


def test_unknown_user_and_nologin(own):
    server = own["server"]
    assert_refused(server, "ghost", "x", 'password authentication failed for user "ghost"',
                   "28P01")
    with connect(server, USER, BOOT_PASSWORD) as c:
        c.execute("CREATE ROLE e2e_nl PASSWORD 'nl-pw'")  # NOLOGIN: CREATE ROLE's default
    assert_refused(server, "e2e_nl", "nl-pw", 'role "e2e_nl" is not permitted to log in',
                   "28000")
    assert_refused(server, "e2e_nl", "wrong", 'password authentication failed for user '
                   '"e2e_nl"', "28P01")


def test_create_alter_drop_round_trip(own):
    server = own["server"]
    admin = connect(server, USER, BOOT_PASSWORD)
    admin.execute("CREATE USER e2e_alice WITH PASSWORD 'alice-1'")
    with pytest.raises(psycopg.errors.DuplicateObject):
        admin.execute("CREATE ROLE e2e_alice")
    with connect(server, "e2e_alice", "alice-1") as c:
        assert c.execute("SELECT current_user").fetchone() == ("e2e_alice",)
        # Every role has every privilege on tables (GRANT is refused, not ignored).
        c.execute("CREATE TABLE e2e_alice_t (a int)")
        c.execute("INSERT INTO e2e_alice_t VALUES (1), (2)")
        assert c.execute("SELECT sum(a) FROM e2e_alice_t").fetchone() == (2 + 1,)
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="GRANT"):
            c.execute("GRANT SELECT ON e2e_alice_t TO e2e_alice")
        # Not a superuser, no CREATEROLE: its own password only.
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="permission denied to create role"):
            c.execute("CREATE ROLE e2e_other")
        c.execute("ALTER ROLE e2e_alice PASSWORD 'alice-2'")
        c.execute("DROP TABLE e2e_alice_t")
    assert_refused(server, "e2e_alice", "alice-1",
                   'password authentication failed for user "e2e_alice"', "28P01")
    connect(server, "e2e_alice", "alice-2").close()

    admin.execute("ALTER ROLE e2e_alice NOLOGIN")
    assert_refused(server, "e2e_alice", "alice-2", 'role "e2e_alice" is not permitted to log in',
                   "28000")
    admin.execute("ALTER ROLE e2e_alice WITH LOGIN")
    admin.execute("ALTER ROLE e2e_alice RENAME TO e2e_bob")
    with connect(server, "e2e_bob", "alice-2") as c:  # SCRAM secrets do not hold the name
        assert c.execute("SELECT current_user").fetchone() == ("e2e_bob",)
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="permission denied to drop role"):
            c.execute("DROP ROLE e2e_bob")
    with pytest.raises(psycopg.errors.ObjectInUse, match="current user cannot be dropped"):
        admin.execute(f"DROP ROLE {USER}")
    assert_refused(server, "e2e_alice", "alice-2",
                   'password authentication failed for user "e2e_alice"', "28P01")

    admin.execute("DROP ROLE e2e_bob")
    with pytest.raises(psycopg.errors.UndefinedObject, match='role "e2e_bob" does not exist'):
        admin.execute("DROP ROLE e2e_bob")
    admin.execute("DROP ROLE IF EXISTS e2e_bob")
    assert_refused(server, "e2e_bob", "alice-2",
                   'password authentication failed for user "e2e_bob"', "28P01")
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="transaction block"):
        with admin.transaction():
            admin.execute("CREATE ROLE e2e_in_block")
    admin.close()


def test_prehashed_verifier_logs_in(own):
    """A SCRAM-SHA-256 secret (what pg_dumpall writes) is kept as it is and logs in with the
    password it was made from (this one PostgreSQL 15 made)."""
    server = own["server"]
    secret = ("SCRAM-SHA-256$4096:AOG63piz4sW8ul422c8zwA==$bKNBTf40m6wQm2Tz3dNSKESX9cvwdcTf3"
              "xs1sut7JmY=:cO1bBR+lMLyr8rIYxxbbANJ60M/XJp/y7hqzFGyhfnc=")
    with connect(server, USER, BOOT_PASSWORD) as c:
        c.execute(f"CREATE ROLE e2e_hashed LOGIN PASSWORD '{secret}'")
    connect(server, "e2e_hashed", "SCRAM-SHA-256$4096:c2FsdA==$bad").close()
    assert server.engine.catalog.get_role("e2e_hashed").password == secret


def test_roles_survive_a_restart_and_the_password_is_the_new_one(own):
    with connect(own["server"], USER, BOOT_PASSWORD) as c:
        c.execute("CREATE ROLE e2e_kept LOGIN PASSWORD 'kept-pw'")
        c.execute("CREATE ROLE e2e_kept_nl")
    server = own["restart"]("boot-pw-2")
    connect(server, "e2e_kept", "kept-pw").close()
    connect(server, USER, "boot-pw-2").close()
    assert_refused(server, USER, BOOT_PASSWORD,
                   f'password authentication failed for user "{USER}"', "28P01")
    # Without a password: trusted, but only roles that exist and may log in.
    server = own["restart"](None)
    connect(server, "e2e_kept").close()
    connect(server, USER).close()
    assert_refused(server, "ghost", None, 'role "ghost" does not exist', "28000")
    assert_refused(server, "e2e_kept_nl", None, 'role "e2e_kept_nl" is not permitted to log in',
                   "28000")


def test_shared_trust_server_refuses_unknown_users(server):
    """The shared server (trust, as `raympp serve` without --password) knows its roles."""
    e = refused(server, "nobody_here")
    assert 'role "nobody_here" does not exist' in str(e)
    with server.connect() as c:
        assert c.execute("SELECT current_user").fetchone() == (USER,)
