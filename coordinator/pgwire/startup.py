"""Connection start-up: SSL/GSSAPI refusal, CancelRequest, the startup packet, authentication.

Follows PostgreSQL's order: an SSLRequest or GSSENCRequest is answered 'N' (no encryption)
and the real packet follows on the same connection; a CancelRequest is handed to the
server and the connection ends silently; a StartupMessage is checked (protocol 3.0, a
user) and authenticated.

Authentication is one of: trust for every user (no `auth`: an engine without roles); one
password for every user (a `scram.Verifier`); or an `Authenticator`, which knows the roles
(coordinator/roles.py). With an Authenticator, as PostgreSQL does: when passwords are
required, SCRAM-SHA-256 against the role's verifier, and a doomed exchange ending in
28P01 `password authentication failed for user "x"` for a role that does not exist or has
no password; then, after AuthenticationOk, a role that does not exist (trust) is FATAL
28000 `role "x" does not exist` and a NOLOGIN role 28000 `role "x" is not permitted to log
in`. Every error here is FATAL to the connection; the session sends it and hangs up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from coordinator.pgwire import backend, codec, scram
from coordinator.pgwire.stream import Connection
from planner import errors

_NO_ENCRYPTION = b"N"
_CONNECTION_KEYS = ("user", "database")


@dataclass(frozen=True)
class Startup:
    user: str
    database: str
    options: dict[str, str] = field(default_factory=dict)  # every other startup parameter


@dataclass(frozen=True)
class Login:
    """What authentication needs to know of a role."""

    can_login: bool
    verifier: scram.Verifier | None  # None: no password (a password login fails)


class Authenticator(Protocol):
    password_required: bool  # SCRAM-SHA-256 for every connection; else trust
    mock_nonce: bytes        # the secret of doomed exchanges' salts

    def login(self, user: str) -> Login | None:
        """The role `user` logs in as; None when there is no such role."""


async def negotiate(conn: Connection,
                    auth: "Authenticator | scram.Verifier | None",
                    cancel: Callable[[int, int], None]) -> Startup | None:
    """Run the start-up phase; None when the connection only carried a CancelRequest."""
    while True:
        msg = await conn.read_startup()
        if isinstance(msg, (codec.SSLRequest, codec.GSSENCRequest)):
            conn.send_bytes(_NO_ENCRYPTION)
            await conn.flush()
            continue
        if isinstance(msg, codec.CancelRequest):
            cancel(msg.pid, msg.secret)
            return None
        break
    startup = _check(conn, msg)
    if auth is None or isinstance(auth, scram.Verifier):
        if auth is not None:
            await _scram(conn, auth, startup.user)
        conn.send(backend.AuthenticationOk())
        return startup
    user = startup.user
    login = auth.login(user)
    if auth.password_required:
        verifier = login.verifier if login is not None else None
        if verifier is None:
            await _scram(conn, scram.mock_verifier(user, auth.mock_nonce), user, doomed=True)
        else:
            await _scram(conn, verifier, user)
    conn.send(backend.AuthenticationOk())
    if login is None:
        raise errors.QueryError(f'role "{user}" does not exist', "28000")
    if not login.can_login:
        raise errors.QueryError(f'role "{user}" is not permitted to log in', "28000")
    return startup


def _check(conn: Connection, msg: codec.StartupMessage) -> Startup:
    major, minor = msg.version >> 16, msg.version & 0xFFFF
    if major != 3:
        raise errors.FeatureNotSupported(
            f"unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0")
    protocol_options = tuple(k for k in msg.params if k.startswith("_pq_."))
    if minor > 0 or protocol_options:
        # A newer client asks for 3.x or protocol extensions: offer 3.0 without them.
        conn.send(backend.NegotiateProtocolVersion(0, protocol_options))
    user = msg.params.get("user")
    if not user:
        raise errors.QueryError("no PostgreSQL user name specified in startup packet", "28000")
    options = {k: v for k, v in msg.params.items()
               if k not in _CONNECTION_KEYS and not k.startswith("_pq_.")}
    return Startup(user, msg.params.get("database") or user, options)


async def _read_password_message(conn: Connection) -> bytes:
    await conn.flush()
    msg = await conn.read()
    if not isinstance(msg, codec.PasswordMessage):
        raise errors.ProtocolViolation(
            f"expected SASL response, got message type {type(msg).__name__}")
    return msg.data


async def _scram(conn: Connection, verifier: scram.Verifier, user: str,
                doomed: bool = False) -> None:
    conn.send(backend.AuthenticationSASL((scram.MECHANISM,)))
    initial = codec.SASLInitialResponse.decode(await _read_password_message(conn))
    if initial.mechanism != scram.MECHANISM:
        raise errors.ProtocolViolation(
            "client selected an invalid SASL authentication mechanism")
    if initial.data is None:
        raise errors.ProtocolViolation("malformed SCRAM message: empty initial response")
    exchange = scram.ServerExchange(verifier, doomed=doomed)
    conn.send(backend.AuthenticationSASLContinue(exchange.client_first(initial.data)))
    final_message = await _read_password_message(conn)
    try:
        server_final = exchange.client_final(final_message)
    except errors.InvalidPassword:
        raise errors.InvalidPassword(
            f'password authentication failed for user "{user}"') from None
    conn.send(backend.AuthenticationSASLFinal(server_final))
