"""Without Ray: role statements (planner/role_statement.py, coordinator/roles.py) run by a
real engine session over a real catalog, SCRAM-SHA-256 verifiers kept in the catalog, the
Catalog.roles() API, and logins through pgwire (startup.py) against the roles.

Expected errors and messages are PostgreSQL 15's (checked against it by hand)."""

from __future__ import annotations

import dataclasses

import psycopg
import pytest

from coordinator import roles
from coordinator.catalog import BOOTSTRAP_ROLE_OID, Catalog, Role
from coordinator.pgwire import scram
from coordinator.pgwire.boundary import CancelToken
from coordinator.pgwire.server import PgServer
from coordinator.session import Session
from coordinator.transaction import NameLocks
from planner import errors, role_statement, statements

# What PostgreSQL 15 stored for CREATE ROLE h PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$bad'
# (not a valid secret, so a plain password to PostgreSQL too).
PG_SECRET = ("SCRAM-SHA-256$4096:AOG63piz4sW8ul422c8zwA==$bKNBTf40m6wQm2Tz3dNSKESX9cvwdcTf3xs1"
             "sut7JmY=:cO1bBR+lMLyr8rIYxxbbANJ60M/XJp/y7hqzFGyhfnc=")
PG_SECRET_PASSWORD = "SCRAM-SHA-256$4096:c2FsdA==$bad"


class CatalogEngine:
    """An engine with a catalog and no segments: enough for role statements and SHOW."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.cluster = None  # BEGIN/ROLLBACK of a transaction that wrote nothing need none
        self.locks = NameLocks()

    def open_session(self, user, database, options):
        return Session(self, user, database, options)


@pytest.fixture
def catalog(tmp_path):
    c = Catalog(str(tmp_path))
    yield c
    c.close()


@pytest.fixture
def run(catalog):
    """run(sql, user="raympp") -> the command tags; sessions are kept per user."""
    engine = CatalogEngine(catalog)
    sessions: dict[str, Session] = {}

    def run_sql(sql: str, user: str = "raympp") -> list[str]:
        session = sessions.setdefault(user, Session(engine, user, user, {}))
        tags = []
        for stmt in session.prepare(sql, []):
            tags.append(session.execute(stmt, [], CancelToken()).tag())
        return tags
    yield run_sql
    for s in sessions.values():
        s.close()


def fails(run, sql, user="raympp") -> errors.QueryError:
    with pytest.raises(errors.QueryError) as e:
        run(sql, user)
    return e.value


def role(catalog, name) -> Role:
    r = catalog.get_role(name)
    assert r is not None, name
    return r


# --- the catalog API ---------------------------------------------------------------------
def test_bootstrap_superuser_always_exists(tmp_path):
    c = Catalog(str(tmp_path))
    (boot,) = c.roles()
    assert (boot.oid, boot.name, boot.superuser, boot.login, boot.createrole, boot.inherit,
            boot.password) == (BOOTSTRAP_ROLE_OID, "raympp", True, True, True, True, None)
    assert (boot.createdb, boot.replication, boot.bypassrls, boot.connection_limit,
            boot.valid_until) == (True, True, True, -1, None)
    assert c.bootstrap_role() == boot
    with pytest.raises(dataclasses.FrozenInstanceError):
        boot.name = "x"  # type: ignore[misc]
    c.close()
    assert Catalog(str(tmp_path)).roles() == [boot]


def test_roles_persist_in_oid_order(tmp_path, run, catalog):
    run("CREATE ROLE b; CREATE USER a PASSWORD 'pw'")
    listed = catalog.roles()
    assert [r.name for r in listed] == ["raympp", "b", "a"]
    assert [r.oid for r in listed] == [10, 16384, 16385]
    a = listed[2]
    assert (a.login, a.superuser, a.createrole, a.inherit) == (True, False, False, True)
    assert (a.createdb, a.replication, a.bypassrls, a.connection_limit) == (False, False,
                                                                            False, -1)
    catalog.close()
    again = Catalog(str(tmp_path))
    assert again.roles() == listed
    again.close()


# --- SCRAM-SHA-256 verifiers, never the password ----------------------------------------------
def test_password_is_kept_as_a_scram_verifier(run, catalog):
    run("CREATE ROLE alice LOGIN PASSWORD 's3cret!'")
    secret = role(catalog, "alice").password
    assert secret.startswith("SCRAM-SHA-256$4096:") and "s3cret" not in secret
    verifier = scram.Verifier.parse(secret)
    assert len(verifier.salt) == 16 and verifier.verifies("s3cret!")
    assert not verifier.verifies("s3cret")
    assert verifier.secret() == secret
    run("ALTER ROLE alice PASSWORD 'other'")
    assert scram.Verifier.parse(role(catalog, "alice").password).verifies("other")
    # ENCRYPTED PASSWORD is the same thing; dollar quotes and E'' strings are strings.
    run("ALTER USER alice WITH ENCRYPTED PASSWORD $q$dollar quoted$q$")
    assert scram.Verifier.parse(role(catalog, "alice").password).verifies("dollar quoted")
    run("ALTER ROLE alice PASSWORD E'a\\tb'")
    assert scram.Verifier.parse(role(catalog, "alice").password).verifies("a\tb")
    run("ALTER ROLE alice PASSWORD 'it''s'")
    assert scram.Verifier.parse(role(catalog, "alice").password).verifies("it's")


def test_hashed_verifier_is_kept_as_given(run, catalog):
    run(f"CREATE ROLE h LOGIN PASSWORD '{PG_SECRET}'")
    assert role(catalog, "h").password == PG_SECRET
    assert scram.Verifier.parse(PG_SECRET).verifies(PG_SECRET_PASSWORD)


def test_text_that_is_not_a_verifier_is_a_password(run, catalog):
    run(f"CREATE ROLE h PASSWORD '{PG_SECRET_PASSWORD}'")
    stored = role(catalog, "h").password
    assert stored != PG_SECRET_PASSWORD
    assert scram.Verifier.parse(stored).verifies(PG_SECRET_PASSWORD)


def test_empty_and_null_passwords_clear_it(run, catalog):
    empty_secret = scram.Verifier.from_password("").secret()
    run("CREATE ROLE a PASSWORD 'x'; CREATE ROLE b PASSWORD 'x'; CREATE ROLE c PASSWORD 'x'")
    run(f"ALTER ROLE a PASSWORD ''; ALTER ROLE b PASSWORD NULL; "
        f"ALTER ROLE c PASSWORD '{empty_secret}'")
    assert [role(catalog, n).password for n in "abc"] == [None, None, None]


def test_md5_hashes_are_refused(run, catalog):
    e = fails(run, "CREATE ROLE m PASSWORD 'md5" + "0" * 32 + "'")
    assert e.sqlstate == "0A000" and "MD5" in e.message
    assert catalog.get_role("m") is None


# --- CREATE / ALTER / DROP -------------------------------------------------------------
def test_create_user_role_group_defaults_and_tags(run, catalog):
    assert run("CREATE USER u; CREATE ROLE r; CREATE GROUP g; CREATE USER n NOLOGIN") == [
        "CREATE ROLE"] * 4
    assert [role(catalog, x).login for x in ("u", "r", "g", "n")] == [True, False, False, False]
    assert run("ALTER ROLE r LOGIN; ALTER USER u NOLOGIN; ALTER GROUP g RENAME TO g2") == [
        "ALTER ROLE"] * 3
    assert (role(catalog, "r").login, role(catalog, "u").login) == (True, False)
    assert run("DROP USER u; DROP GROUP g2; DROP ROLE r, n") == ["DROP ROLE"] * 3
    assert [r.name for r in catalog.roles()] == ["raympp"]


def test_options_are_stored(run, catalog):
    run("CREATE ROLE s WITH SUPERUSER CREATEROLE NOINHERIT LOGIN")
    s = role(catalog, "s")
    assert (s.superuser, s.createrole, s.inherit, s.login) == (True, True, False, True)
    run("ALTER ROLE s NOSUPERUSER NOCREATEROLE INHERIT NOLOGIN")
    s = role(catalog, "s")
    assert (s.superuser, s.createrole, s.inherit, s.login) == (False, False, True, False)
    run('CREATE ROLE q "login"')  # PostgreSQL reads these options from identifiers
    assert role(catalog, "q").login


def test_names_fold_and_quote(run, catalog):
    run('CREATE ROLE MiXed; CREATE ROLE "MiXed"; CREATE ROLE "with space"')
    assert {"mixed", "MiXed", "with space"} <= {r.name for r in catalog.roles()}
    long = "x" * 70
    run(f"CREATE ROLE {long}")
    assert catalog.get_role("x" * 63) is not None


@pytest.mark.parametrize("sql, sqlstate, message", [
    ("CREATE ROLE raympp", "42710", 'role "raympp" already exists'),
    ("ALTER ROLE nosuch LOGIN", "42704", 'role "nosuch" does not exist'),
    ("ALTER ROLE nosuch RENAME TO x", "42704", 'role "nosuch" does not exist'),
    ("DROP ROLE nosuch", "42704", 'role "nosuch" does not exist'),
    ("ALTER ROLE public LOGIN", "42704", 'role "public" does not exist'),
    ("CREATE ROLE public", "42939", 'role name "public" is reserved'),
    ("CREATE ROLE none", "42939", 'role name "none" is reserved'),
    ("CREATE ROLE pg_x", "42939", 'role name "pg_x" is reserved'),
    ("CREATE ROLE current_user", "42939", "CURRENT_USER cannot be used as a role name here"),
    ("DROP ROLE current_user", "22023", "cannot use special role specifier in DROP ROLE"),
    ("DROP ROLE public", "22023", "cannot use special role specifier in DROP ROLE"),
    ("DROP ROLE raympp", "55006", "current user cannot be dropped"),
    ("ALTER ROLE raympp RENAME TO boss", "0A000", "session user cannot be renamed"),
    ("CREATE ROLE d foo", "42601", 'unrecognized role option "foo"'),
    ('CREATE ROLE d "LOGIN"', "42601", 'unrecognized role option "LOGIN"'),
    ("CREATE ROLE d LOGIN NOLOGIN", "42601", "conflicting or redundant options"),
    ("CREATE ROLE d PASSWORD NULL ENCRYPTED PASSWORD 'x'", "42601",
     "conflicting or redundant options"),
    ("CREATE ROLE d select", "42601", 'syntax error at or near "select"'),
    ("CREATE ROLE", "42601", "syntax error at end of input"),
    ("ALTER ROLE d SYSID 3", "42601", 'syntax error at or near "SYSID"'),
    ("ALTER ROLE d IN ROLE e", "42601", 'syntax error at or near "ROLE"'),
    ('CREATE ROLE ""', "42601", 'zero-length delimited identifier at or near """"'),
    ("CREATE ROLE d CONNECTION LIMIT -2", "22023", "invalid connection limit: -2"),
    ("CREATE ROLE d UNENCRYPTED PASSWORD 'x'", "0A000",
     "UNENCRYPTED PASSWORD is no longer supported"),
])
def test_errors_as_postgresql(run, sql, sqlstate, message):
    e = fails(run, sql)
    assert (e.sqlstate, e.message) == (sqlstate, message)


@pytest.mark.parametrize("sql, named", [
    ("CREATE ROLE d CREATEDB", "CREATEDB"),
    ("CREATE ROLE d REPLICATION", "REPLICATION"),
    ("CREATE ROLE d BYPASSRLS", "BYPASSRLS"),
    ("CREATE ROLE d CONNECTION LIMIT 5", "CONNECTION LIMIT"),
    ("CREATE ROLE d VALID UNTIL 'infinity'", "VALID UNTIL"),
    ("CREATE ROLE d IN ROLE raympp", "IN ROLE"),
    ("CREATE ROLE d IN GROUP raympp", "IN GROUP"),
    ("CREATE ROLE d ROLE raympp", "ROLE"),
    ("CREATE ROLE d ADMIN raympp", "ADMIN"),
    ("CREATE GROUP d USER raympp", "USER"),
    ("ALTER ROLE raympp CREATEDB", "CREATEDB"),
    ("ALTER ROLE raympp SET work_mem = '1MB'", "ALTER ROLE ... SET"),
    ("ALTER ROLE ALL SET work_mem = '1MB'", "ALTER ROLE ... SET"),
    ("ALTER ROLE raympp IN DATABASE raympp SET work_mem = '1MB'", "ALTER ROLE ... SET"),
    ("ALTER GROUP raympp ADD USER x", "ADD USER"),
    ("CREATE USER MAPPING FOR raympp SERVER s", "USER MAPPING"),
    ("GRANT SELECT ON t TO raympp", "GRANT is not supported: every role has every privilege"),
    ("REVOKE ALL ON t FROM raympp", "REVOKE is not supported"),
    ("GRANT raympp TO x", "GRANT"),
])
def test_unimplemented_options_are_refused(run, catalog, sql, named):
    e = fails(run, sql)
    assert e.sqlstate == "0A000" and named in e.message, e.message
    assert catalog.get_role("d") is None and len(catalog.roles()) == 1


def test_noop_options_are_accepted(run, catalog):
    run("CREATE ROLE d NOCREATEDB NOREPLICATION NOBYPASSRLS CONNECTION LIMIT -1 SYSID 42 "
        "INHERIT")
    assert role(catalog, "d") == Role(role(catalog, "d").oid, "d")
    run("ALTER ROLE d NOCREATEDB NOREPLICATION NOBYPASSRLS CONNECTION LIMIT -1")
    assert role(catalog, "d") == Role(role(catalog, "d").oid, "d")


def test_drop_is_all_or_nothing_and_one_by_one(run, catalog):
    run("CREATE ROLE a; CREATE ROLE b")
    assert fails(run, "DROP ROLE a, nosuch").sqlstate == "42704"
    assert fails(run, "DROP ROLE a, a").message == 'role "a" does not exist'
    assert catalog.get_role("a") is not None
    assert run("DROP ROLE IF EXISTS nosuch, a") == ["DROP ROLE"]
    assert catalog.get_role("a") is None and catalog.get_role("b") is not None


def test_bootstrap_superuser_cannot_be_dropped(run, catalog):
    run("CREATE ROLE su SUPERUSER LOGIN")
    e = fails(run, "DROP ROLE raympp", user="su")
    assert (e.sqlstate, e.message) == (
        "2BP01", "cannot drop role raympp because it is required by the database system")
    # ... but renamed, as PostgreSQL allows; --password then applies to the new name.
    run("ALTER ROLE raympp RENAME TO boss", user="su")
    assert catalog.bootstrap_role().name == "boss"


def test_rename(run, catalog):
    run("CREATE ROLE a PASSWORD 'pw'; CREATE ROLE b")
    assert fails(run, "ALTER ROLE a RENAME TO b").message == 'role "b" already exists'
    assert fails(run, "ALTER ROLE a RENAME TO a").sqlstate == "42710"
    assert fails(run, "ALTER ROLE a RENAME TO pg_a").sqlstate == "42939"
    assert fails(run, "ALTER ROLE a RENAME TO none").sqlstate == "42939"
    oid = role(catalog, "a").oid
    run("ALTER ROLE a RENAME TO c")
    c = role(catalog, "c")
    assert c.oid == oid and catalog.get_role("a") is None
    assert scram.Verifier.parse(c.password).verifies("pw")  # SCRAM is not salted by name


# --- privileges ------------------------------------------------------------------------------
def test_privileges_of_a_plain_role(run, catalog):
    run("CREATE ROLE plain LOGIN PASSWORD 'pw'; CREATE ROLE other; CREATE ROLE su SUPERUSER")
    for sql, message in (
            ("CREATE ROLE z", "permission denied to create role"),
            ("CREATE ROLE z SUPERUSER", "must be superuser to create superusers"),
            ("ALTER ROLE plain LOGIN", "permission denied"),
            ("ALTER ROLE other PASSWORD 'x'", "permission denied"),
            ("ALTER ROLE plain PASSWORD 'x' LOGIN", "permission denied"),
            ("ALTER ROLE plain NOCREATEDB", "permission denied"),
            ("ALTER ROLE plain NOREPLICATION", "must be superuser to alter replication roles "
             "or change replication attribute"),
            ("ALTER ROLE plain NOBYPASSRLS", "must be superuser to change bypassrls attribute"),
            ("ALTER ROLE su PASSWORD 'x'", "must be superuser to alter superuser roles or "
             "change superuser attribute"),
            ("ALTER ROLE plain NOSUPERUSER", "must be superuser to alter superuser roles or "
             "change superuser attribute"),
            ("ALTER ROLE other RENAME TO o2", "permission denied to rename role"),
            ("ALTER ROLE su RENAME TO su2", "must be superuser to rename superusers"),
            ("DROP ROLE other", "permission denied to drop role"),
            ("DROP ROLE IF EXISTS nosuch", "permission denied to drop role")):
        e = fails(run, sql, user="plain")
        assert (e.sqlstate, e.message) == ("42501", message), sql
    # Its own password it may change (also through CURRENT_USER).
    run("ALTER ROLE plain PASSWORD 'new'", user="plain")
    run("ALTER ROLE CURRENT_USER WITH PASSWORD 'newer'", user="plain")
    assert scram.Verifier.parse(role(catalog, "plain").password).verifies("newer")
    assert fails(run, "ALTER ROLE nosuch PASSWORD 'x'", user="plain").sqlstate == "42704"


def test_privileges_of_createrole(run, catalog):
    run("CREATE ROLE cr LOGIN CREATEROLE; CREATE ROLE su SUPERUSER")
    run("CREATE ROLE z; ALTER ROLE z LOGIN; ALTER ROLE z RENAME TO z2; DROP ROLE z2",
        user="cr")
    for sql, message in (
            ("CREATE ROLE z SUPERUSER", "must be superuser to create superusers"),
            ("ALTER ROLE su PASSWORD 'x'", "must be superuser to alter superuser roles or "
             "change superuser attribute"),
            ("DROP ROLE su", "must be superuser to drop superusers"),
            ("ALTER ROLE su RENAME TO s3", "must be superuser to rename superusers")):
        e = fails(run, sql, user="cr")
        assert (e.sqlstate, e.message) == ("42501", message), sql
    assert fails(run, "DROP ROLE cr", user="cr").sqlstate == "55006"
    run("ALTER ROLE cr NOLOGIN", user="cr")


def test_a_role_that_is_gone_has_no_privileges(run, catalog):
    run("CREATE ROLE cr LOGIN CREATEROLE")
    run("CREATE ROLE a", user="cr")
    run("DROP ROLE cr")
    assert fails(run, "CREATE ROLE b", user="cr").sqlstate == "42501"


# --- transactions ---------------------------------------------------------------------------
def test_refused_in_a_transaction_block(run, catalog):
    run("BEGIN")
    e = fails(run, "CREATE ROLE a")
    assert e.sqlstate == "0A000" and "transaction block" in e.message
    run("ROLLBACK")
    assert catalog.get_role("a") is None
    run("CREATE ROLE a")


def test_read_only_transactions(run, catalog):
    run("SET default_transaction_read_only = on")
    for sql, command in (("CREATE ROLE a", "CREATE ROLE"), ("ALTER ROLE raympp LOGIN",
                                                            "ALTER ROLE"),
                         ("DROP ROLE IF EXISTS a", "DROP ROLE")):
        e = fails(run, sql)
        assert (e.sqlstate, e.message) == (
            "25006", f"cannot execute {command} in a read-only transaction")


def test_classified_with_parse_errors_at_prepare():
    st = statements.classify("create user bob with password 'x'")
    assert st.kind is statements.Kind.ROLE and st.role.command == "CREATE ROLE"
    assert st.role.login_default and st.role.options == {"password": "x"}
    assert role_statement.parse("DROP ROLE IF EXISTS a, \"B\"").drop == (
        role_statement.RoleSpec("a"), role_statement.RoleSpec("B"))
    with pytest.raises(errors.SyntaxError_):
        statements.classify("CREATE ROLE a b c")


# --- authentication: startup.py against the roles, through pgwire -----------------------------
@pytest.fixture
def serve(catalog):
    servers = []

    def start(password):
        authenticator = roles.setup(catalog, password)
        server = PgServer(CatalogEngine(catalog), "127.0.0.1", 0, authenticator=authenticator)
        server.start_in_thread()
        servers.append(server)
        return lambda **kw: psycopg.connect(host="127.0.0.1", port=server.port,
                                            dbname="raympp", autocommit=True,
                                            connect_timeout=10, **kw)
    yield start
    for s in servers:
        s.stop_thread()


def login_error(connect, **kw) -> str:
    with pytest.raises(psycopg.OperationalError) as e:
        connect(**kw).close()
    return str(e.value)


def test_password_logins(serve, run, catalog):
    connect = serve("boot-pw")
    assert scram.Verifier.parse(catalog.bootstrap_role().password).verifies("boot-pw")
    with connect(user="raympp", password="boot-pw") as c:
        assert c.pgconn.used_password
        c.execute("CREATE ROLE alice LOGIN PASSWORD 'apw'; CREATE ROLE nl PASSWORD 'npw'; "
                  "CREATE ROLE nopw LOGIN")
    with connect(user="alice", password="apw") as c:
        assert c.execute("SHOW session_authorization").fetchone() == ("alice",)
    for user, password in (("alice", "wrong"), ("raympp", "apw"), ("nosuch", "x"),
                           ("nopw", "x"), ("nl", "wrong")):
        message = login_error(connect, user=user, password=password)
        assert f'password authentication failed for user "{user}"' in message, message
    assert "no password supplied" in login_error(connect, user="alice")
    assert 'role "nl" is not permitted to log in' in login_error(connect, user="nl",
                                                                  password="npw")


def test_doomed_exchange_looks_like_a_real_one(catalog):
    nonce = roles.setup(catalog, "x").mock_nonce
    a, b = scram.mock_verifier("ghost", nonce), scram.mock_verifier("ghost", nonce)
    assert a.salt == b.salt and len(a.salt) == 16 and a.iterations == 4096
    assert scram.mock_verifier("other", nonce).salt != a.salt
    assert roles.setup(catalog, None).mock_nonce == nonce  # kept in the catalog


def test_password_of_the_bootstrap_superuser_at_every_start(catalog):
    roles.setup(catalog, "one")
    first = catalog.bootstrap_role().password
    roles.setup(catalog, "one")
    assert catalog.bootstrap_role().password == first  # unchanged: it still verifies
    roles.setup(catalog, "two")
    assert scram.Verifier.parse(catalog.bootstrap_role().password).verifies("two")
    roles.setup(catalog, None)  # trust: the stored password stays
    assert scram.Verifier.parse(catalog.bootstrap_role().password).verifies("two")


def test_trust_logins(serve, run):
    connect = serve(None)
    run("CREATE ROLE alice LOGIN; CREATE ROLE nl")
    with connect(user="alice") as c:
        assert not c.pgconn.used_password
    with connect(user="raympp", password="ignored") as c:
        assert c.execute("SHOW session_authorization").fetchone() == ("raympp",)
    assert 'role "nosuch" does not exist' in login_error(connect, user="nosuch")
    assert 'role "nl" is not permitted to log in' in login_error(connect, user="nl")


# --- the messages at start-up, byte level ---------------------------------------------------
@pytest.fixture
def raw_server(catalog):
    from tests.unit.pgwire.raw_client import RawClient

    servers, clients = [], []

    def start(password):
        server = PgServer(CatalogEngine(catalog), "127.0.0.1", 0,
                          authenticator=roles.setup(catalog, password))
        server.start_in_thread()
        servers.append(server)

        def client():
            clients.append(RawClient("127.0.0.1", server.port))
            return clients[-1]
        return client
    yield start
    for c in clients:
        c.close()
    for s in servers:
        s.stop_thread()


def _fatal_after_auth_ok(c, user):
    from coordinator.pgwire import codec
    from tests.unit.pgwire.raw_client import fields

    c.send(codec.StartupMessage({"user": user, "database": "raympp"}))
    kind, body = c.recv()
    assert (kind, body) == (b"R", b"\0\0\0\0")  # AuthenticationOk, then the FATAL
    kind, body = c.recv()
    assert kind == b"E"
    assert c.closed_by_server()
    return fields(body)


def test_trust_refusals_are_fatal_28000(raw_server, run):
    client = raw_server(None)
    run("CREATE ROLE nl")
    f = _fatal_after_auth_ok(client(), "nosuch")
    assert (f["S"], f["C"], f["M"]) == ("FATAL", "28000", 'role "nosuch" does not exist')
    f = _fatal_after_auth_ok(client(), "nl")
    assert (f["S"], f["C"], f["M"]) == ("FATAL", "28000", 'role "nl" is not permitted to log in')


def test_unknown_user_gets_a_doomed_scram_exchange_28P01(raw_server):
    import base64

    from coordinator.pgwire import codec
    from tests.unit.pgwire.raw_client import fields

    client = raw_server("pw")
    salts = []
    for user in ("ghost", "ghost", "raympp"):
        c = client()
        c.send(codec.StartupMessage({"user": user, "database": "raympp"}))
        kind, body = c.recv()
        assert kind == b"R" and body[:4] == b"\0\0\0\x0a" and b"SCRAM-SHA-256" in body
        c.send(codec.SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=clientnonce"))
        kind, body = c.recv()
        assert kind == b"R" and body[:4] == b"\0\0\0\x0b"
        attrs = dict(part.split("=", 1) for part in body[4:].decode().split(","))
        assert attrs["i"] == "4096" and attrs["r"].startswith("clientnonce")
        salts.append(attrs["s"])
        proof = base64.b64encode(bytes(32)).decode()
        c.send(codec.SASLResponse(f"c=biws,r={attrs['r']},p={proof}".encode()))
        kind, body = c.recv()
        assert kind == b"E"
        f = fields(body)
        assert (f["S"], f["C"], f["M"]) == (
            "FATAL", "28P01", f'password authentication failed for user "{user}"')
    # The same salt every time for an unknown user: nothing tells it from a real one.
    assert salts[0] == salts[1] != salts[2]
