"""SCRAM-SHA-256 server exchange against the RFC 7677 test vector, and its failures."""

import base64
import hashlib
import hmac

import pytest

from coordinator.pgwire import scram
from planner import errors

# RFC 7677, section 3: user "user", password "pencil".
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def exchange(password="pencil"):
    verifier = scram.Verifier.from_password(password, SALT, 4096)
    return scram.ServerExchange(verifier, server_nonce=SERVER_NONCE)


def test_rfc7677_vector():
    x = exchange()
    server_first = x.client_first(f"n,,n=user,r={CLIENT_NONCE}".encode())
    assert server_first == (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                            b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    assert x.client_final(CLIENT_FINAL) == SERVER_FINAL


def client_proof(password: str, client_first_bare: str, server_first: str, final_bare: str):
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), SALT, 4096)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    auth = f"{client_first_bare},{server_first},{final_bare}".encode()
    sig = hmac.new(hashlib.sha256(client_key).digest(), auth, hashlib.sha256).digest()
    return base64.b64encode(bytes(a ^ b for a, b in zip(client_key, sig))).decode()


def test_postgres_style_empty_username_and_random_nonce():
    verifier = scram.Verifier.from_password("s3cret", SALT)
    x = scram.ServerExchange(verifier)
    server_first = x.client_first(b"n,,n=,r=abcdef").decode()
    nonce = server_first.split(",")[0][2:]
    assert nonce.startswith("abcdef") and len(nonce) > len("abcdef") + 16
    final_bare = f"c=biws,r={nonce}"
    proof = client_proof("s3cret", "n=,r=abcdef", server_first, final_bare)
    assert x.client_final(f"{final_bare},p={proof}".encode()).startswith(b"v=")


def test_wrong_password_is_28P01():
    x = exchange("not pencil")
    x.client_first(f"n,,n=user,r={CLIENT_NONCE}".encode())
    with pytest.raises(errors.InvalidPassword) as e:
        x.client_final(CLIENT_FINAL)
    assert e.value.sqlstate == "28P01"


@pytest.mark.parametrize("first, match", [
    (b"p=tls-server-end-point,,n=,r=abc", "channel binding"),
    (b"x,,n=,r=abc", "malformed SCRAM message"),
    (b"n,a=admin,n=,r=abc", "malformed SCRAM message"),
    (b"n,,r=abc", "malformed SCRAM message"),
    (b"n,,n=,r=", "malformed SCRAM message"),
    (b"\xff", "invalid UTF-8"),
])
def test_malformed_client_first(first, match):
    with pytest.raises(errors.ProtocolViolation, match=match):
        exchange().client_first(first)


@pytest.mark.parametrize("final, match", [
    (b"c=biws,r=wrongnonce,p=AAAA", "nonce mismatch"),
    (b"c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA", "channel binding"),
    (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", "malformed"),
    (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=!!", "malformed"),
])
def test_malformed_client_final(final, match):
    x = exchange()
    x.client_first(f"n,,n=user,r={CLIENT_NONCE}".encode())
    with pytest.raises(errors.ProtocolViolation, match=match):
        x.client_final(final)


def test_y_flag_binds_its_own_header():
    x = exchange()
    x.client_first(f"y,,n=user,r={CLIENT_NONCE}".encode())
    with pytest.raises(errors.ProtocolViolation, match="channel binding"):
        x.client_final(CLIENT_FINAL)  # c=biws is "n,,", but the client sent "y,,"


def test_saslprep():
    assert scram.saslprep("pencil") == "pencil"
    assert scram.saslprep("I\u00adX") == "IX"             # soft hyphen maps to nothing
    assert scram.saslprep("a\u00a0b") == "a b"            # non-ASCII space maps to space
    assert scram.saslprep("\u2168") == "IX"               # NFKC
    assert scram.saslprep("a\u0007b") == "a\u0007b"       # prohibited: used unchanged
