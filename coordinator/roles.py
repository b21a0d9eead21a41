"""Roles: CREATE/ALTER/DROP ROLE against the catalog, and who may log in.

Statements (parsed by planner/role_statement.py) are checked as PostgreSQL 15 checks them:
creating a role takes CREATEROLE (a superuser, only a superuser), altering one takes
CREATEROLE except for a role's own password, superuser roles and the SUPERUSER attribute
only a superuser may touch; errors 42710 (exists), 42704 (does not exist), 42501
(permission), 42939 (reserved names: `pg_...`), 55006 (dropping the current user),
0A000 (renaming the session user), 2BP01 (dropping the bootstrap superuser). The session
user is the current user (SET ROLE is refused), found by name at every statement.

Passwords are kept as SCRAM-SHA-256 secrets (coordinator/pgwire/scram.py), never in
plain: a plain password is hashed (4096 iterations, a random 16-byte salt); a text that
already is a SCRAM-SHA-256 secret is kept as it is (what pg_dumpall writes); an empty
password, or a secret of the empty one, leaves the role without a password, as in
PostgreSQL. Role changes take effect at once (one SQLite transaction per statement), so
they are refused inside a transaction block (0A000), where PostgreSQL could roll them back.

`setup` gives the pgwire server its `Authenticator` (coordinator/pgwire/startup.py): with
`raympp serve --password PW` every login needs the role's password, and PW becomes the
bootstrap superuser's password at every start; without, logins are trusted, but only
roles that exist and may log in (LOGIN) get in.
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from coordinator.catalog import BOOTSTRAP_ROLE_OID, Catalog, Role
from coordinator.pgwire import scram, startup
from coordinator.pgwire.boundary import QueryResult, ResultKind
from planner import errors
from planner.role_statement import RoleSpec, RoleStatement

_MOCK_NONCE_KEY = "mock_auth_nonce"
# A SCRAM secret is checked against the empty password (PostgreSQL clears such a password)
# only up to this many iterations, so that a secret cannot make a statement hash for ever.
_MAX_CHECKED_ITERATIONS = 1_000_000
_RESERVED_DETAIL = 'Role names starting with "pg_" are reserved.'


# --- authentication --------------------------------------------------------------------
class Authenticator:
    """What pgwire's start-up asks about a user (startup.Authenticator)."""

    def __init__(self, catalog: Catalog, password_required: bool, mock_nonce: bytes):
        self.catalog = catalog
        self.password_required = password_required
        self.mock_nonce = mock_nonce

    def login(self, user: str) -> startup.Login | None:
        role = self.catalog.get_role(user)
        if role is None:
            return None
        verifier = scram.Verifier.parse(role.password) if role.password else None
        return startup.Login(role.login, verifier)


def setup(catalog: Catalog, password: str | None) -> Authenticator:
    """The server's authentication: `password` (raympp serve --password) requires passwords
    and becomes the bootstrap superuser's; None trusts every role that may log in."""
    nonce_hex = catalog.get_meta(_MOCK_NONCE_KEY)
    if nonce_hex is None:
        nonce_hex = secrets.token_hex(32)
        catalog.set_meta(_MOCK_NONCE_KEY, nonce_hex)
    if password is not None:
        current = catalog.bootstrap_role().password
        verifier = scram.Verifier.parse(current) if current else None
        if verifier is None or not verifier.verifies(password):
            secret = scram.Verifier.from_password(password).secret()

            def change(roles: dict[str, Role]):
                boot = next(r for r in roles.values() if r.oid == BOOTSTRAP_ROLE_OID)
                return [replace(boot, password=secret)], []
            catalog.change_roles(change)
    return Authenticator(catalog, password is not None, bytes.fromhex(nonce_hex))


def password_secret(password: str | None) -> str | None:
    """What a role keeps of `password` (PASSWORD 'x' / PASSWORD NULL)."""
    if password is None or password == "":
        return None
    verifier = scram.Verifier.parse(password)
    if verifier is None:
        return scram.Verifier.from_password(password).secret()
    if verifier.iterations <= _MAX_CHECKED_ITERATIONS and verifier.verifies(""):
        return None
    return password


# --- statements ------------------------------------------------------------------------
def execute(session, st: RoleStatement) -> QueryResult:
    """Run a role statement for `session` (coordinator/session.py)."""
    session.check_writable(st.command)
    if session.txn is not None and session.txn.explicit:
        raise errors.FeatureNotSupported(
            f"{st.command} inside a transaction block is not supported: role changes take "
            "effect at once and cannot be rolled back",
            hint="Run it outside BEGIN ... COMMIT.")
    catalog: Catalog = session.engine.catalog
    user = session.user
    if st.command == "CREATE ROLE":
        _create(catalog, user, st)
    elif st.command == "DROP ROLE":
        _drop(catalog, user, st)
    elif st.new_name is not None:
        _rename(catalog, user, st)
    else:
        _alter(catalog, user, st)
    tag = st.command
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag)


def _superuser(me: Role | None) -> bool:
    return me is not None and me.superuser


def _createrole(me: Role | None) -> bool:
    """PostgreSQL's have_createrole_privilege."""
    return me is not None and (me.superuser or me.createrole)


def _denied(message: str) -> errors.QueryError:
    return errors.QueryError(message, "42501")


def _missing(name: str) -> errors.QueryError:
    return errors.UndefinedObject(f'role "{name}" does not exist')


def _exists(name: str) -> errors.QueryError:
    return errors.QueryError(f'role "{name}" already exists', "42710")


def _check_reserved(name: str) -> None:
    if name.startswith("pg_"):
        raise errors.QueryError(f'role name "{name}" is reserved', "42939",
                                detail=_RESERVED_DETAIL)


def _target(spec: RoleSpec, user: str) -> str:
    """The name of the role a RoleSpec designates (CURRENT_USER and the like: `user`)."""
    if spec.special == "PUBLIC":
        raise _missing("public")
    return user if spec.special is not None else spec.name


def _create(catalog: Catalog, user: str, st: RoleStatement) -> None:
    opts, name = st.options, st.role.name
    secret = password_secret(opts["password"]) if "password" in opts else None

    def change(roles: dict[str, Role]):
        me = roles.get(user)
        if opts.get("superuser"):
            if not _superuser(me):
                raise _denied("must be superuser to create superusers")
        elif not _createrole(me):
            raise _denied("permission denied to create role")
        _check_reserved(name)
        if name in roles:
            raise _exists(name)
        role = Role(catalog.new_role_oid(), name, superuser=opts.get("superuser", False),
                    login=opts.get("canlogin", st.login_default),
                    createrole=opts.get("createrole", False),
                    inherit=opts.get("inherit", True), password=secret)
        return [role], []
    catalog.change_roles(change)


def _alter(catalog: Catalog, user: str, st: RoleStatement) -> None:
    opts = st.options
    name = _target(st.role, user)
    secret = password_secret(opts["password"]) if "password" in opts else None

    def change(roles: dict[str, Role]):
        target = roles.get(name)
        if target is None:
            raise _missing(name)
        me = roles.get(user)
        # PostgreSQL 15's AlterRole: superusers (and the SUPERUSER, REPLICATION and
        # BYPASSRLS attributes) take a superuser; else CREATEROLE, or a role changing
        # only its own password.
        if target.superuser or "superuser" in opts:
            if not _superuser(me):
                raise _denied("must be superuser to alter superuser roles or change "
                              "superuser attribute")
        elif target.replication or "replication" in opts:
            if not _superuser(me):
                raise _denied("must be superuser to alter replication roles or change "
                              "replication attribute")
        elif "bypassrls" in opts:
            if not _superuser(me):
                raise _denied("must be superuser to change bypassrls attribute")
        elif not _createrole(me):
            if not (set(opts) == {"password"} and me is not None and me.oid == target.oid):
                raise _denied("permission denied")
        changed = {}
        for option, attribute in (("superuser", "superuser"), ("canlogin", "login"),
                                  ("createrole", "createrole"), ("inherit", "inherit")):
            if option in opts:
                changed[attribute] = opts[option]
        if "password" in opts:
            changed["password"] = secret
        return [replace(target, **changed)], []
    catalog.change_roles(change)


def _rename(catalog: Catalog, user: str, st: RoleStatement) -> None:
    old, new = st.role.name, st.new_name

    def change(roles: dict[str, Role]):
        target = roles.get(old)
        if target is None:
            raise _missing(old)
        if target.name == user:
            raise errors.FeatureNotSupported("session user cannot be renamed")
        _check_reserved(old)
        _check_reserved(new)
        if new in roles:
            raise _exists(new)
        me = roles.get(user)
        if target.superuser:
            if not _superuser(me):
                raise _denied("must be superuser to rename superusers")
        elif not _createrole(me):
            raise _denied("permission denied to rename role")
        return [replace(target, name=new)], []
    catalog.change_roles(change)


def _drop(catalog: Catalog, user: str, st: RoleStatement) -> None:
    def change(roles: dict[str, Role]):
        me = roles.get(user)
        if not _createrole(me):
            raise _denied("permission denied to drop role")
        left, dropped = dict(roles), []
        # One role after the other, as PostgreSQL's DropRole: naming one twice finds it
        # gone the second time.
        for spec in st.drop:
            if spec.special is not None:
                raise errors.InvalidParameterValue(
                    "cannot use special role specifier in DROP ROLE")
            role = left.get(spec.name)
            if role is None:
                if st.if_exists:
                    continue  # PostgreSQL's NOTICE "role ... does not exist, skipping"
                raise _missing(spec.name)
            if role.name == user:
                raise errors.QueryError("current user cannot be dropped", "55006")
            if role.superuser and not _superuser(me):
                raise _denied("must be superuser to drop superusers")
            if role.oid == BOOTSTRAP_ROLE_OID:
                raise errors.QueryError(f"cannot drop role {role.name} because it is "
                                        "required by the database system", "2BP01")
            owned = [n.name for n in catalog.schemas() if n.owner == role.oid]
            if owned:  # a schema's owner must exist (committed schemas: the catalog's)
                raise errors.QueryError(
                    f'role "{role.name}" cannot be dropped because some objects depend on it',
                    "2BP01", detail="\n".join(f"owner of schema {n}" for n in owned))
            del left[role.name]
            dropped.append(role)
        return [], dropped
    catalog.change_roles(change)
