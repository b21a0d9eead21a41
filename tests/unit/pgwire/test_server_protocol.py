"""The protocol state machine at byte level: message sequences psycopg does not expose."""

import struct
import time

import pytest

from coordinator.pgwire import codec
from coordinator.pgwire.codec import (Bind, Close, CopyData, CopyDone, CopyFail, Describe,
                                      Execute, Flush, Parse, Query, Sync)

from .raw_client import RawClient, cstrings, data_row, fields, types_of


@pytest.fixture
def raw(pg):
    """Opens RawClients to the server; closes them after the test."""
    opened = []

    def connect() -> RawClient:
        opened.append(RawClient(pg.host, pg.port))
        return opened[-1]
    yield connect
    for c in opened:
        c.close()


@pytest.fixture
def client(raw):
    c = raw()
    c.startup()
    return c


def error_of(messages) -> dict:
    (body,) = [b for t, b in messages if t == b"E"]
    return fields(body)


def test_ssl_and_gssenc_refused_then_startup(pg, raw):
    c = raw()
    c.send(codec.SSLRequest())
    assert c.read_byte() == b"N"
    c.send(codec.GSSENCRequest())
    assert c.read_byte() == b"N"
    messages = c.startup(application_name="app")
    assert messages[0] == (b"R", b"\0\0\0\0")
    status = dict(cstrings(b)[:2] for t, b in messages if t == b"S")
    assert status["server_version"] == "15.4"  # the engine's value wins over the default
    assert status["client_encoding"] == "UTF8" and status["DateStyle"] == "ISO, MDY"
    assert status["application_name"] == "app" and status["session_authorization"] == "raw"
    assert types_of(messages)[-2:] == "KZ" and messages[-1][1] == b"I"
    pid, secret = struct.unpack("!ii", messages[-2][1])
    assert pid >= 1000 and secret >= 0
    assert pg.engine.sessions[0].options == {"application_name": "app"}


def test_execute_with_max_rows_suspends_and_resumes(client):
    client.send(Parse("", "select series 5"), Bind("", "", (), (), (1,)), Describe(b"P", ""),
                Execute("", 2), Execute("", 2), Execute("", 2), Execute("", 0), Sync())
    messages = client.until_ready()
    assert types_of(messages) == "12TDDsDDsDCCZ"
    rows = [struct.unpack("!q", data_row(b)[0])[0] for t, b in messages if t == b"D"]
    assert rows == [0, 1, 2, 3, 4]
    tags = [cstrings(b)[0] for t, b in messages if t == b"C"]
    assert tags == ["SELECT 1", "SELECT 0"]  # rows of the last Execute, as PostgreSQL counts


def test_exact_limit_then_empty_execute(client):
    client.send(Parse("", "select series 2"), Bind("", ""), Execute("", 2), Execute("", 5),
                Sync())
    messages = client.until_ready()
    assert types_of(messages) == "12DDsCZ"
    assert cstrings(messages[-2][1]) == ["SELECT 0"]


def test_named_portals_live_until_transaction_end(client):
    client.send(Query("begin"))
    assert types_of(client.until_ready()) == "CZ"
    client.send(Parse("s", "select series 4"), Bind("a", "s"), Bind("b", "s"),
                Execute("a", 1), Execute("b", 3), Sync())
    assert types_of(client.until_ready()) == "122DsDDDsZ"
    client.send(Execute("a", 0), Sync())
    messages = client.until_ready()
    assert types_of(messages) == "DDDCZ" and messages[-1][1] == b"T"
    client.send(Query("commit"))
    assert client.until_ready()[-1][1] == b"I"
    client.send(Execute("b", 0), Sync())
    assert error_of(client.until_ready())["C"] == "34000"


def test_error_discards_messages_until_sync(client, pg):
    client.send(Parse("", "bogus"), Bind("", ""), Describe(b"P", ""), Execute("", 0),
                Query("select 1"), Sync())
    messages = client.until_ready()
    assert types_of(messages) == "EZ"
    assert error_of(messages) == {"S": "ERROR", "V": "ERROR", "C": "42601",
                                  "M": 'syntax error at or near "bogus"'}
    client.send(Parse("", "select 1"), Bind("", ""), Execute("", 0), Sync())
    assert types_of(client.until_ready()) == "12DCZ"


def test_describe_statement_and_portal(client):
    client.send(Parse("s1", "select echo $1, $2", (23,)), Describe(b"S", "s1"),
                Bind("p1", "s1", (1, 0), (struct.pack("!i", 7), b"x"), (1,)),
                Describe(b"P", "p1"), Execute("p1", 0),
                Parse("s2", "begin"), Describe(b"S", "s2"), Sync())
    messages = client.until_ready()
    assert types_of(messages) == "1tT2TDC1tnZ"
    assert messages[1][1] == struct.pack("!hII", 2, 23, 25)
    # statement Describe: text formats; portal Describe: the Bind's binary format
    assert messages[2][1].endswith(struct.pack("!IhIhih", 0, 0, 25, -1, -1, 0))
    assert messages[4][1].endswith(struct.pack("!IhIhih", 0, 0, 25, -1, -1, 1))
    assert data_row(messages[5][1]) == [b"int:7", b"str:'x'"]
    assert messages[8][1] == b"\0\0"


def test_parse_rejects_multiple_statements(client):
    client.send(Parse("", "select 1; select 1"), Sync())
    err = error_of(client.until_ready())
    assert (err["C"], err["M"]) == ("42601",
                                    "cannot insert multiple commands into a prepared statement")


def test_empty_queries(client):
    client.send(Query(""))
    assert types_of(client.until_ready()) == "IZ"
    client.send(Query(" ; ;"))
    assert types_of(client.until_ready()) == "IZ"
    client.send(Parse("", ""), Describe(b"S", ""), Bind("", ""), Execute("", 0), Sync())
    assert types_of(client.until_ready()) == "1tn2IZ"


@pytest.mark.parametrize("messages, code, text", [
    ([Parse("s", "select echo $1"), Bind("", "s", (), (b"1", b"2"))], "08P01",
     'bind message supplies 2 parameters, but prepared statement "s" requires 1'),
    ([Bind("", "nope")], "26000", 'prepared statement "nope" does not exist'),
    ([Execute("nope", 0)], "34000", 'portal "nope" does not exist'),
    ([Describe(b"P", "nope")], "34000", 'portal "nope" does not exist'),
    ([Parse("s", "select 1"), Parse("s", "select 1")], "42P05",
     'prepared statement "s" already exists'),
    ([Parse("s", "select echo $1", (23,)), Bind("", "s", (), (b"12x",))], "22P02",
     'invalid input syntax for type integer: "12x"'),
    ([Parse("s", "select echo $1", (23,)), Bind("", "s", (1,), (b"\0\1",))], "08P01",
     "incorrect binary data format for type integer"),
    ([Parse("s", "select 1"), Bind("", "s", (), (), (1, 1))], "08P01",
     "bind message has 2 result formats but query has 1 columns"),
    ([Parse("s", "select 1"), Bind("c", "s"), Bind("c", "s")], "42P03",
     'cursor "c" already exists'),
])
def test_extended_protocol_errors(client, messages, code, text):
    client.send(*messages, Sync())
    err = error_of(client.until_ready())
    assert (err["C"], err["M"]) == (code, text)
    client.send(Query("select 1"))
    assert types_of(client.until_ready()) == "TDCZ"


def test_close_statement_and_portal(client):
    client.send(Parse("s", "select 1"), Bind("p", "s"), Close(b"P", "p"), Close(b"S", "s"),
                Close(b"S", "never-existed"), Sync())
    assert types_of(client.until_ready()) == "12333Z"
    client.send(Bind("", "s"), Sync())
    assert error_of(client.until_ready())["C"] == "26000"


def test_flush_sends_pending_replies_before_sync(client):
    client.send(Parse("", "select 1"), Flush())
    assert client.recv() == (b"1", b"")
    client.send(Sync())
    assert types_of(client.until_ready()) == "Z"


def test_simple_query_error_skips_the_rest(client, pg):
    client.send(Query("select 1; select error; select 1"))
    messages = client.until_ready()
    assert types_of(messages) == "TDCEZ"
    assert error_of(messages)["H"] == "do not do that"
    assert pg.engine.executed == ["select 1", "select error"]


def test_parameter_status_follows_command_complete(client):
    client.send(Query("set datestyle = 'ISO, DMY'"))
    messages = client.until_ready()
    assert types_of(messages) == "CSZ"
    assert cstrings(messages[1][1]) == ["datestyle", "iso, dmy"]


def test_copy_in_binary_and_copy_fail(client, pg):
    client.send(Query("copy t from stdin binary"))
    assert client.recv() == (b"G", b"\x01\x00\x02\x00\x01\x00\x01")
    client.send(CopyData(b"ab"), Flush(), Sync(), CopyData(b"c\n"), CopyDone())
    messages = client.until_ready()
    assert types_of(messages) == "CZ" and cstrings(messages[0][1]) == ["COPY 1"]
    assert pg.engine.copied["t"] == b"abc\n"
    client.send(Query("copy u from stdin"))
    assert client.recv() == (b"G", b"\x00\x00\x02\x00\x00\x00\x00")
    client.send(CopyData(b"1\n"), CopyFail("client said no"))
    err = error_of(client.until_ready())
    assert (err["C"], err["M"]) == ("57014", "COPY from stdin failed: client said no")
    assert pg.engine.aborted == ["client said no"] and "u" not in pg.engine.copied
    client.send(CopyData(b"late"), CopyDone(), Query("select 1"))  # dropped, then served
    assert types_of(client.until_ready()) == "TDCZ"


def test_copy_in_through_extended_protocol(client, pg):
    # libpq sends Sync right after Execute and again after CopyDone; the first is ignored.
    client.send(Parse("", "copy t from stdin"), Bind("", ""), Execute("", 0), Sync())
    assert types_of([client.recv(), client.recv(), client.recv()]) == "12G"
    client.send(CopyData(b"1\tx\n2\ty\n"), CopyDone(), Sync())
    messages = client.until_ready()
    assert types_of(messages) == "CZ" and cstrings(messages[0][1]) == ["COPY 2"]


def test_copy_out(client):
    client.send(Query("copy t to stdout"))
    messages = client.until_ready()
    assert types_of(messages) == "HddcCZ"
    assert messages[0][1] == b"\x00\x00\x02\x00\x00\x00\x00"
    assert [b for t, b in messages if t == b"d"] == [b"1\tone\n", b"2\ttwo\n"]
    assert cstrings(messages[4][1]) == ["COPY 2"]


def test_cancel_request_by_key(pg, raw):
    victim = raw()
    pid, secret = struct.unpack("!ii", [b for t, b in victim.startup() if t == b"K"][0])
    wrong = raw()
    wrong.send(codec.CancelRequest(pid, secret ^ 1))
    assert wrong.closed_by_server()  # no reply, just a closed connection
    victim.send(Query("select slow"))
    assert pg.engine.slow_running.wait(5)
    time.sleep(0.1)
    assert not pg.engine.canceled.is_set()
    right = raw()
    right.send(codec.CancelRequest(pid, secret))
    assert right.closed_by_server()
    messages = victim.until_ready()
    assert types_of(messages) == "TDEZ"  # the rows made before the cancel come first
    assert error_of(messages)["C"] == "57014"


def test_unknown_message_type_is_fatal(client):
    client.send(codec.frame(b"z", b""))
    t, body = client.recv()
    assert t == b"E" and fields(body) == {"S": "FATAL", "V": "FATAL", "C": "08P01",
                                          "M": "invalid frontend message type 122"}
    assert client.closed_by_server()


@pytest.mark.parametrize("packet, code", [
    (codec.StartupMessage({"user": "x"}, 2 << 16), "0A000"),
    (codec.StartupMessage({"database": "db"}), "28000"),
    (struct.pack("!i", 3), "08P01"),
])
def test_bad_startup_is_fatal(pg, packet, code, raw):
    c = raw()
    c.send(packet)
    t, body = c.recv()
    assert t == b"E" and fields(body)["S"] == "FATAL" and fields(body)["C"] == code
    assert c.closed_by_server()


def test_newer_protocol_is_negotiated_down(pg, raw):
    c = raw()
    c.send(codec.StartupMessage({"user": "x", "_pq_.feature": "on"}, (3 << 16) | 2))
    messages = c.until_ready()
    assert messages[0] == (b"v", struct.pack("!ii", 0, 1) + b"_pq_.feature\0")
    assert types_of(messages)[1] == "R" and "_pq_.feature" not in pg.engine.sessions[0].options


def test_terminate_closes_the_session(client, pg):
    client.send(codec.Terminate())
    assert client.closed_by_server()
    deadline = time.monotonic() + 5
    while not pg.engine.sessions[0].closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pg.engine.sessions[0].closed


def test_error_after_some_rows(client):
    client.send(Query("select broken"))
    messages = client.until_ready()
    assert types_of(messages) == "TDEZ"
    assert error_of(messages) == {"S": "ERROR", "V": "ERROR", "C": "58000",
                                  "M": "segment 1 died", "D": "actor gone"}
    client.send(Parse("", "select broken"), Bind("", ""), Execute("", 0), Execute("", 0),
                Sync())
    messages = client.until_ready()
    assert types_of(messages) == "12DEZ"  # the failed portal is gone; Execute was skipped
    client.send(Query("select 1"))
    assert types_of(client.until_ready()) == "TDCZ"


def test_silent_client_is_dropped_after_startup_timeout(pg, monkeypatch, raw):
    from coordinator.pgwire import session
    monkeypatch.setattr(session, "STARTUP_TIMEOUT_SECONDS", 0.2)
    c = raw()
    started = time.monotonic()
    assert c.closed_by_server()
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("failed", [False, True], ids=["in-transaction", "failed-transaction"])
def test_idle_in_transaction_timeout_is_fatal(pg, raw, failed):
    pg.engine.idle_in_transaction_timeout = 0.3
    c = raw()
    c.startup()
    c.send(Query("begin"))
    assert c.until_ready()[-1] == (b"Z", b"T")
    if failed:
        c.send(Query("select error"))
        assert c.until_ready()[-1] == (b"Z", b"E")
    started = time.monotonic()
    t, body = c.recv()
    waited = time.monotonic() - started
    assert t == b"E" and fields(body) == {
        "S": "FATAL", "V": "FATAL", "C": "25P03",
        "M": "terminating connection due to idle-in-transaction timeout"}
    assert 0.2 < waited < 5
    assert c.closed_by_server()
    deadline = time.monotonic() + 5
    while not pg.engine.sessions[0].closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pg.engine.sessions[0].closed  # the engine session (and its transaction) ended


def test_idle_timeout_only_inside_a_transaction_block(pg, raw):
    pg.engine.idle_in_transaction_timeout = 0.2
    c = raw()
    c.startup()
    time.sleep(0.5)  # idle outside a block: no limit
    c.send(Query("begin"))
    assert c.until_ready()[-1] == (b"Z", b"T")
    time.sleep(0.1)
    c.send(Query("select 1"))  # activity re-arms the limit
    assert types_of(c.until_ready()) == "TDCZ"
    time.sleep(0.1)
    c.send(Query("commit"))
    assert c.until_ready()[-1] == (b"Z", b"I")
    time.sleep(0.5)
    c.send(Query("select 1"))
    assert types_of(c.until_ready()) == "TDCZ"


def test_client_disconnect_cancels_the_running_statement(pg, raw):
    c = raw()
    c.startup()
    c.send(Query("select slow"))  # one batch, then runs until cancelled (or 20 s)
    assert pg.engine.slow_running.wait(5)
    assert not pg.engine.canceled.is_set()
    closed = time.monotonic()
    c.sock.close()
    assert pg.engine.canceled.wait(5), "the statement was not cancelled"
    assert time.monotonic() - closed < 1.5
    deadline = time.monotonic() + 5
    while not pg.engine.sessions[0].closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pg.engine.sessions[0].closed


def test_client_disconnect_with_unread_messages_cancels(pg, raw):
    """A FIN behind messages the server has not read yet (a pipeline, then Terminate)
    still counts as the client going away."""
    c = raw()
    c.startup()
    c.send(Query("select slow"))
    assert pg.engine.slow_running.wait(5)
    c.send(Query("select 1"), Query("select 1"), codec.Terminate())
    c.sock.close()
    assert pg.engine.canceled.wait(5), "the statement was not cancelled"
