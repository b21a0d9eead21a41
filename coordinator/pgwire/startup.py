"""Connection start-up: SSL/GSSAPI refusal, CancelRequest, the startup packet, authentication.

Follows PostgreSQL's order: an SSLRequest or GSSENCRequest is answered 'N' (no encryption)
and the real packet follows on the same connection; a CancelRequest is handed to the
server and the connection ends silently; a StartupMessage is checked (protocol 3.0, a
user) and authenticated: trust when the server has no password, SCRAM-SHA-256 otherwise.
Every error here is FATAL to the connection; the session sends it and hangs up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

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


async def negotiate(conn: Connection, verifier: scram.Verifier | None,
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
    if verifier is not None:
        await _scram(conn, verifier, startup.user)
    conn.send(backend.AuthenticationOk())
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


async def _scram(conn: Connection, verifier: scram.Verifier, user: str) -> None:
    conn.send(backend.AuthenticationSASL((scram.MECHANISM,)))
    initial = codec.SASLInitialResponse.decode(await _read_password_message(conn))
    if initial.mechanism != scram.MECHANISM:
        raise errors.ProtocolViolation(
            "client selected an invalid SASL authentication mechanism")
    if initial.data is None:
        raise errors.ProtocolViolation("malformed SCRAM message: empty initial response")
    exchange = scram.ServerExchange(verifier)
    conn.send(backend.AuthenticationSASLContinue(exchange.client_first(initial.data)))
    final_message = await _read_password_message(conn)
    try:
        server_final = exchange.client_final(final_message)
    except errors.InvalidPassword:
        raise errors.InvalidPassword(
            f'password authentication failed for user "{user}"') from None
    conn.send(backend.AuthenticationSASLFinal(server_final))
