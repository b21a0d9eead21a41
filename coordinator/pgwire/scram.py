"""SCRAM-SHA-256 server side (RFC 5802, RFC 7677) as PostgreSQL speaks it.

PostgreSQL offers the single mechanism 'SCRAM-SHA-256' (no channel binding, so no -PLUS),
ignores the SASL user name (the startup packet names the user: 'n,,n=,r=...'), and keeps
a verifier (salt, iterations, StoredKey, ServerKey) instead of the password, as the text
`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64; pg_authid.rolpassword).
This module is pure: the session moves the messages; a wrong proof raises InvalidPassword
(28P01), malformed messages ProtocolViolation (08P01). hashlib and hmac only.

A user without a verifier (no such role, or no password) gets a *doomed* exchange, as in
PostgreSQL: the server answers with a mock salt derived from the user name and a secret
nonce (the same every time, so the answer does not tell whether the user exists) and
fails at the end with the same 28P01.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import stringprep
import unicodedata
from dataclasses import dataclass

from planner import errors

MECHANISM = "SCRAM-SHA-256"
DEFAULT_ITERATIONS = 4096  # PostgreSQL's scram_iterations default
_NONCE_BYTES = 18          # PostgreSQL's SCRAM_RAW_NONCE_LEN
SALT_BYTES = 16            # PostgreSQL's SCRAM_DEFAULT_SALT_LEN
_KEY_BYTES = 32            # SHA-256
# PostgreSQL's parse_scram_secret: scheme$iterations:salt$StoredKey:ServerKey
_SECRET = re.compile(r"SCRAM-SHA-256\$([^:$]+):([^$]+)\$([^:]+):(.+)", re.DOTALL)


def _hmac(key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def saslprep(password: str) -> str:
    """RFC 4013 SASLprep; like PostgreSQL, a password it rejects is used unchanged."""
    mapped = "".join(" " if stringprep.in_table_c12(c) else c
                     for c in password if not stringprep.in_table_b1(c))
    normalized = unicodedata.normalize("NFKC", mapped)
    prohibited = (stringprep.in_table_c12, stringprep.in_table_c21_c22, stringprep.in_table_c3,
                  stringprep.in_table_c4, stringprep.in_table_c5, stringprep.in_table_c6,
                  stringprep.in_table_c7, stringprep.in_table_c8, stringprep.in_table_c9,
                  stringprep.in_table_a1)
    if any(check(c) for c in normalized for check in prohibited):
        return password
    return normalized


@dataclass(frozen=True)
class Verifier:
    """What the server keeps of a password (PostgreSQL's pg_authid.rolpassword)."""

    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    @classmethod
    def from_password(cls, password: str, salt: bytes | None = None,
                      iterations: int = DEFAULT_ITERATIONS) -> "Verifier":
        salt = salt if salt is not None else secrets.token_bytes(16)
        salted = hashlib.pbkdf2_hmac("sha256", saslprep(password).encode(), salt, iterations)
        return cls(salt, iterations, hashlib.sha256(_hmac(salted, b"Client Key")).digest(),
                   _hmac(salted, b"Server Key"))

    @classmethod
    def parse(cls, secret: str) -> "Verifier | None":
        """The verifier a `SCRAM-SHA-256$...` secret holds, or None when the text is not one
        (PostgreSQL's parse_scram_secret: then the text is a plain password)."""
        m = _SECRET.fullmatch(secret)
        if m is None or not re.fullmatch(r"\s*[+-]?\d+", m.group(1)):
            return None
        try:
            salt, stored, server = (base64.b64decode(g, validate=True) for g in m.group(2, 3, 4))
        except ValueError:
            return None
        if len(stored) != _KEY_BYTES or len(server) != _KEY_BYTES:
            return None
        return cls(salt, int(m.group(1)), stored, server)

    def secret(self) -> str:
        """The text PostgreSQL keeps in pg_authid.rolpassword (and pg_dumpall prints)."""
        return (f"{MECHANISM}${self.iterations}:{_b64(self.salt)}$"
                f"{_b64(self.stored_key)}:{_b64(self.server_key)}")

    def verifies(self, password: str) -> bool:
        """Whether `password` is the one this verifier was made from."""
        if self.iterations < 1:
            return False
        other = Verifier.from_password(password, self.salt, self.iterations)
        return hmac.compare_digest(other.stored_key, self.stored_key)


def mock_verifier(user: str, nonce: bytes) -> Verifier:
    """The verifier of a doomed exchange for `user` (PostgreSQL's scram_mock_salt): its salt
    depends only on the user name and the server's secret `nonce`."""
    salt = hashlib.sha256(nonce + user.encode()).digest()[:SALT_BYTES]
    return Verifier(salt, DEFAULT_ITERATIONS, bytes(_KEY_BYTES), bytes(_KEY_BYTES))


def _attributes(message: str, expected: str) -> dict[str, str]:
    """The a=value pairs of a SCRAM message, checking they come in the `expected` order."""
    pairs = {}
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise _malformed(message)
        pairs[part[0]] = part[2:]
    if "".join(pairs)[:len(expected)] != expected:
        raise _malformed(message)
    return pairs


def _malformed(message: str) -> errors.QueryError:
    return errors.ProtocolViolation("malformed SCRAM message", detail=message)


class ServerExchange:
    """One authentication: `client_first` -> server-first-message, then `client_final` ->
    server-final-message (or InvalidPassword). A `doomed` exchange (no such user, no
    password) runs the same way and always ends in InvalidPassword."""

    def __init__(self, verifier: Verifier, server_nonce: str | None = None,
                 doomed: bool = False):
        self._verifier = verifier
        self._doomed = doomed
        self._server_nonce = server_nonce or _b64(secrets.token_bytes(_NONCE_BYTES))
        self._gs2_header = self._client_first_bare = self._server_first = self._nonce = ""

    def client_first(self, data: bytes) -> bytes:
        text = _decode(data)
        # gs2-header: cbind-flag "," [authzid] ","
        flag, _, rest = text.partition(",")
        authzid, _, bare = rest.partition(",")
        if flag.startswith("p="):
            raise errors.ProtocolViolation(
                "invalid channel binding request: the server does not support channel binding")
        if flag not in ("n", "y") or authzid or not bare:
            raise _malformed(text)
        attrs = _attributes(bare, "nr")
        if not attrs["r"] or any(c < "!" or c > "~" or c == "," for c in attrs["r"]):
            raise _malformed(text)
        self._gs2_header = f"{flag},{authzid},"
        self._client_first_bare = bare
        self._nonce = attrs["r"] + self._server_nonce
        v = self._verifier
        self._server_first = f"r={self._nonce},s={_b64(v.salt)},i={v.iterations}"
        return self._server_first.encode()

    def client_final(self, data: bytes) -> bytes:
        text = _decode(data)
        without_proof, sep, proof_b64 = text.rpartition(",p=")
        if not sep:
            raise _malformed(text)
        attrs = _attributes(without_proof, "cr")
        if attrs["c"] != _b64(self._gs2_header.encode()):
            raise errors.ProtocolViolation("SCRAM channel binding check failed")
        if attrs["r"] != self._nonce:
            raise errors.ProtocolViolation("SCRAM nonce mismatch")
        try:
            proof = base64.b64decode(proof_b64, validate=True)
        except ValueError:
            raise _malformed(text) from None
        v = self._verifier
        auth_message = ",".join((self._client_first_bare, self._server_first,
                                 without_proof)).encode()
        signature = _hmac(v.stored_key, auth_message)
        if len(proof) != len(signature):
            raise _malformed(text)
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), v.stored_key) or (
                self._doomed):
            raise errors.InvalidPassword("password authentication failed")
        return f"v={_b64(_hmac(v.server_key, auth_message))}".encode()


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.ProtocolViolation("malformed SCRAM message: invalid UTF-8") from None
