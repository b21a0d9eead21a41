"""Exact bytes of every protocol message pgwire reads or writes."""

import struct

import pytest

from coordinator.pgwire import backend, codec
from planner import errors


def test_wire_constants():
    assert codec.PROTOCOL_3_0 == 196608
    assert codec.SSL_REQUEST_CODE == (1234 << 16) | 5679 == 80877103
    assert codec.GSSENC_REQUEST_CODE == 80877104
    assert codec.CANCEL_REQUEST_CODE == 80877102


# --- startup packets ----------------------------------------------------------------------

def test_startup_message_bytes_and_decode():
    raw = codec.StartupMessage({"user": "bob", "database": "db"}).encode()
    assert raw == (b"\x00\x00\x00\x1e" b"\x00\x03\x00\x00" b"user\x00bob\x00"
                   b"database\x00db\x00" b"\x00")
    msg = codec.decode_startup(raw[4:])
    assert msg == codec.StartupMessage({"user": "bob", "database": "db"}, 196608)


@pytest.mark.parametrize("msg, raw", [
    (codec.SSLRequest(), b"\x00\x00\x00\x08\x04\xd2\x16\x2f"),
    (codec.GSSENCRequest(), b"\x00\x00\x00\x08\x04\xd2\x16\x30"),
    (codec.CancelRequest(1234, -2),
     b"\x00\x00\x00\x10\x04\xd2\x16\x2e\x00\x00\x04\xd2\xff\xff\xff\xfe"),
])
def test_special_startup_packets(msg, raw):
    assert msg.encode() == raw
    assert codec.decode_startup(raw[4:]) == msg


def test_startup_truncated_is_protocol_violation():
    with pytest.raises(errors.ProtocolViolation, match="invalid string in message"):
        codec.decode_startup(b"\x00\x03\x00\x00user\x00bo")


# --- frontend messages --------------------------------------------------------------------

FRONTEND = [
    (codec.Query("select 1"), b"Q\x00\x00\x00\x0dselect 1\x00"),
    (codec.Parse("s1", "select $1", (23,)),
     b"P\x00\x00\x00\x17s1\x00select $1\x00\x00\x01\x00\x00\x00\x17"),
    (codec.Parse("", "x", ()), b"P\x00\x00\x00\x09\x00x\x00\x00\x00"),
    (codec.Bind("p", "s", (1,), (b"\x00\x00\x00\x05", None), (0, 1)),
     b"B\x00\x00\x00\x20p\x00s\x00\x00\x01\x00\x01\x00\x02\x00\x00\x00\x04\x00\x00\x00\x05"
     b"\xff\xff\xff\xff\x00\x02\x00\x00\x00\x01"),
    (codec.Describe(b"S", "s1"), b"D\x00\x00\x00\x08Ss1\x00"),
    (codec.Describe(b"P", ""), b"D\x00\x00\x00\x06P\x00"),
    (codec.Execute("", 10), b"E\x00\x00\x00\x09\x00\x00\x00\x00\x0a"),
    (codec.Close(b"P", "c"), b"C\x00\x00\x00\x07Pc\x00"),
    (codec.Sync(), b"S\x00\x00\x00\x04"),
    (codec.Flush(), b"H\x00\x00\x00\x04"),
    (codec.Terminate(), b"X\x00\x00\x00\x04"),
    (codec.CopyData(b"1\ta\n"), b"d\x00\x00\x00\x081\ta\n"),
    (codec.CopyDone(), b"c\x00\x00\x00\x04"),
    (codec.CopyFail("oops"), b"f\x00\x00\x00\x09oops\x00"),
    (codec.PasswordMessage(b"secret\x00"), b"p\x00\x00\x00\x0bsecret\x00"),
]


@pytest.mark.parametrize("msg, raw", FRONTEND, ids=[type(m).__name__ for m, _ in FRONTEND])
def test_frontend_message_bytes(msg, raw):
    assert msg.encode() == raw
    assert struct.unpack("!i", raw[1:5])[0] == len(raw) - 1
    assert codec.decode_frontend(raw[:1], raw[5:]) == msg


def test_sasl_messages():
    initial = codec.SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=abc")
    raw = initial.encode()
    assert raw == b"p\x00\x00\x00\x21SCRAM-SHA-256\x00\x00\x00\x00\x0bn,,n=,r=abc"
    body = codec.decode_frontend(raw[:1], raw[5:])
    assert codec.SASLInitialResponse.decode(body.data) == initial
    assert codec.SASLResponse(b"c=biws").encode() == b"p\x00\x00\x00\x0ac=biws"
    assert codec.SASLInitialResponse.decode(b"X\x00\xff\xff\xff\xff").data is None


def test_malformed_frontend_messages():
    with pytest.raises(codec.FramingError, match="invalid frontend message type 122"):
        codec.decode_frontend(b"z", b"")
    with pytest.raises(errors.ProtocolViolation, match="insufficient data"):
        codec.decode_frontend(b"E", b"portal\x00\x00")
    with pytest.raises(errors.ProtocolViolation, match="invalid DESCRIBE message subtype"):
        codec.decode_frontend(b"D", b"Xname\x00")
    with pytest.raises(errors.ProtocolViolation, match="invalid message format"):
        codec.decode_frontend(b"S", b"junk")
    with pytest.raises(errors.QueryError) as e:
        codec.decode_frontend(b"Q", b"\xff\xfe\x00")
    assert e.value.sqlstate == "22021"


# --- backend messages ---------------------------------------------------------------------

BACKEND = [
    (backend.AuthenticationOk(), b"R\x00\x00\x00\x08\x00\x00\x00\x00"),
    (backend.AuthenticationSASL(("SCRAM-SHA-256",)),
     b"R\x00\x00\x00\x17\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00"),
    (backend.AuthenticationSASLContinue(b"r=x"), b"R\x00\x00\x00\x0b\x00\x00\x00\x0br=x"),
    (backend.AuthenticationSASLFinal(b"v=y"), b"R\x00\x00\x00\x0b\x00\x00\x00\x0cv=y"),
    (backend.ParameterStatus("TimeZone", "UTC"), b"S\x00\x00\x00\x11TimeZone\x00UTC\x00"),
    (backend.BackendKeyData(7, 9), b"K\x00\x00\x00\x0c\x00\x00\x00\x07\x00\x00\x00\x09"),
    (backend.ReadyForQuery(b"I"), b"Z\x00\x00\x00\x05I"),
    (backend.RowDescription((backend.FieldDescription("a", 23, 4, -1, 0),
                             backend.FieldDescription("n", 1700, -1, 0x000F0006, 1))),
     b"T\x00\x00\x00\x2e\x00\x02"
     b"a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x17\x00\x04\xff\xff\xff\xff\x00\x00"
     b"n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x06\xa4\xff\xff\x00\x0f\x00\x06\x00\x01"),
    (backend.DataRow((b"1", None, b"")),
     b"D\x00\x00\x00\x13\x00\x03\x00\x00\x00\x011\xff\xff\xff\xff\x00\x00\x00\x00"),
    (backend.CommandComplete("SELECT 3"), b"C\x00\x00\x00\x0dSELECT 3\x00"),
    (backend.EmptyQueryResponse(), b"I\x00\x00\x00\x04"),
    (backend.ErrorResponse("ERROR", "22012", "division by zero", "d", "h"),
     b"E\x00\x00\x00\x32SERROR\x00VERROR\x00C22012\x00Mdivision by zero\x00Dd\x00Hh\x00\x00"),
    (backend.ErrorResponse("FATAL", "28P01", "no"),
     b"E\x00\x00\x00\x1eSFATAL\x00VFATAL\x00C28P01\x00Mno\x00\x00"),
    (backend.NoticeResponse("NOTICE", "00000", "hi"),
     b"N\x00\x00\x00\x20SNOTICE\x00VNOTICE\x00C00000\x00Mhi\x00\x00"),
    (backend.ParseComplete(), b"1\x00\x00\x00\x04"),
    (backend.BindComplete(), b"2\x00\x00\x00\x04"),
    (backend.CloseComplete(), b"3\x00\x00\x00\x04"),
    (backend.NoData(), b"n\x00\x00\x00\x04"),
    (backend.PortalSuspended(), b"s\x00\x00\x00\x04"),
    (backend.ParameterDescription((23, 25)),
     b"t\x00\x00\x00\x0e\x00\x02\x00\x00\x00\x17\x00\x00\x00\x19"),
    (backend.CopyInResponse(0, (0, 0)), b"G\x00\x00\x00\x0b\x00\x00\x02\x00\x00\x00\x00"),
    (backend.CopyOutResponse(1, (1,)), b"H\x00\x00\x00\x09\x01\x00\x01\x00\x01"),
    (backend.CopyData(b"ab"), b"d\x00\x00\x00\x06ab"),
    (backend.CopyDone(), b"c\x00\x00\x00\x04"),
    (backend.NegotiateProtocolVersion(0, ("_pq_.x",)),
     b"v\x00\x00\x00\x13\x00\x00\x00\x00\x00\x00\x00\x01_pq_.x\x00"),
]


@pytest.mark.parametrize("msg, raw", BACKEND, ids=[type(m).__name__ for m, _ in BACKEND])
def test_backend_message_bytes(msg, raw):
    assert msg.encode() == raw
    assert struct.unpack("!i", raw[1:5])[0] == len(raw) - 1
