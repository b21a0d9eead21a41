"""Errors in the extended protocol as drivers rely on them (asyncpg waits after a Flush):
the ErrorResponse goes out at once, what follows is skipped until Sync, and ReadyForQuery
then tells the transaction state (E in a failed block, also after an error pgwire raised
itself). Also: notifications to an idle session, Describe of a SQL cursor's portal, and
binary rows of a FETCH from a BINARY cursor in the simple protocol."""

import struct
import time

import pytest

from coordinator.pgwire.boundary import ResultColumn
from coordinator.pgwire.codec import (Bind, Describe, Execute, Flush, Parse, Query, Sync,
                                      Terminate)
from planner import types

from .raw_client import RawClient, cstrings, data_row, fields, types_of


@pytest.fixture
def client(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    yield c
    c.close()


def silent(c: RawClient, seconds: float = 0.3) -> bool:
    """Whether the server sends nothing for `seconds`."""
    c.sock.settimeout(seconds)
    try:
        c.recv()
    except TimeoutError:
        return True
    finally:
        c.sock.settimeout(10)
    return False


def begin(c: RawClient) -> None:
    c.send(Query("begin"))
    assert c.until_ready()[-1] == (b"Z", b"T")


def test_parse_error_is_sent_at_flush_without_sync(client):
    client.send(Parse("s", "bogus"), Describe(b"S", "s"), Flush())
    t, body = client.recv()
    assert t == b"E" and fields(body)["C"] == "42601"
    # Messages up to Sync are discarded, a Flush among them too: nothing more comes.
    client.send(Bind("", "s"), Execute("", 0), Flush())
    assert silent(client)
    client.send(Sync())
    assert client.until_ready() == [(b"Z", b"I")]
    client.send(Parse("", "select 1"), Bind("", ""), Execute("", 0), Sync())
    assert types_of(client.until_ready()) == "12DCZ"


@pytest.mark.parametrize("failing, code", [
    ([Parse("", "select echo $1", (23,)), Bind("", "", (), (b"x",))], "22P02"),
    ([Describe(b"P", "no_portal")], "34000"),
    ([Bind("", "no_statement")], "26000"),
    ([Parse("", "select error"), Bind("", ""), Execute("", 0)], "22012"),
])
def test_error_in_a_block_is_sent_at_once_and_fails_it(client, failing, code):
    begin(client)
    client.send(*failing, Flush())
    got = []
    while not got or got[-1][0] != b"E":
        got.append(client.recv())
    assert fields(got[-1][1])["C"] == code
    client.send(Parse("", "select 1"), Bind("", ""), Execute("", 0), Sync())
    assert client.until_ready() == [(b"Z", b"E")]  # failed block: only ROLLBACK helps
    client.send(Query("select 1"))
    messages = client.until_ready()
    assert fields(messages[0][1])["C"] == "25P02" and messages[-1] == (b"Z", b"E")
    client.send(Query("rollback"))
    assert client.until_ready()[-1] == (b"Z", b"I")


def test_error_outside_a_block_leaves_it_idle(client):
    client.send(Parse("", "select 1"), Bind("", "", (), (), (1, 1)), Flush())
    assert client.recv() == (b"1", b"")
    t, body = client.recv()
    assert t == b"E" and fields(body)["C"] == "08P01"
    client.send(Sync())
    assert client.until_ready() == [(b"Z", b"I")]


def test_suspended_portal_keeps_status_of_the_block(client):
    begin(client)
    client.send(Parse("", "select series 5"), Bind("p", ""), Execute("p", 2), Sync())
    messages = client.until_ready()
    assert types_of(messages) == "12DDsZ" and messages[-1] == (b"Z", b"T")


def test_notification_reaches_an_idle_session(pg, client):
    time.sleep(0.05)
    pg.engine.notify(4242, "chan", "payload")
    t, body = client.recv()
    assert t == b"A"
    assert struct.unpack("!i", body[:4])[0] == 4242 and cstrings(body[4:]) == ["chan",
                                                                              "payload"]


def test_notification_waits_for_the_end_of_the_block(pg, client):
    begin(client)
    pg.engine.notify(1, "chan", "")
    assert silent(client)
    client.send(Query("commit"))
    messages = client.until_ready()
    assert types_of(messages) == "CAZ" and messages[-1] == (b"Z", b"I")


def test_describe_portal_of_a_sql_cursor(pg, client):
    pg.engine.cursors["cur"] = [ResultColumn("k", types.INT8), ResultColumn("v", types.TEXT)]
    client.send(Describe(b"P", "cur"), Sync())
    messages = client.until_ready()
    assert types_of(messages) == "TZ"
    assert messages[0][1][:2] == struct.pack("!h", 2) and b"k\0" in messages[0][1]
    # The cursor's name is taken: a protocol portal of that name cannot be made.
    client.send(Parse("", "select 1"), Bind("cur", ""), Sync())
    messages = client.until_ready()
    assert fields(messages[1][1])["C"] == "42P03"


def test_fetch_from_binary_cursor_in_simple_protocol(client):
    client.send(Query("fetch binary"))
    messages = client.until_ready()
    assert types_of(messages) == "TDCZ"
    assert messages[0][1].endswith(struct.pack("!h", 1))  # the field's format code
    assert data_row(messages[1][1]) == [struct.pack("!i", 1)]
    client.send(Parse("", "fetch binary"), Bind("", ""), Execute("", 0), Sync())
    messages = client.until_ready()
    assert data_row(messages[2][1]) == [b"1"]  # extended: Bind's formats (text) rule


def test_terminate_while_notifications_wait(pg, client):
    pg.engine.notify(1, "a", "b")
    assert client.recv()[0] == b"A"
    client.send(Terminate())
    assert client.closed_by_server()
