"""Frames: header bytes, HELLO keys, schema/batch/error bodies, dictionary decoding, and the
pieces every transport shares (MotionError pickling, Endpoint, SpillFile)."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pyarrow as pa
import pytest

from motion import channel, frames, spill
from motion.errors import MotionError
from motion.frames import Kind


def test_header_bytes_are_pinned():
    assert frames.header(Kind.BATCH, 0x0102, frames.FLAG_SHM) == (
        b"RMF1" + bytes([3, 1, 0, 0]) + (0x0102).to_bytes(8, "little"))
    assert frames.HEADER_SIZE == 16


@pytest.mark.parametrize("kind", list(Kind))
def test_header_round_trip(kind):
    assert frames.parse_header(frames.header(kind, 77)) == (kind, 0, 77)


@pytest.mark.parametrize("data, needle", [
    (b"XXXX" + bytes(12), "magic"),
    (b"RMF1" + bytes([99]) + bytes(11), "kind"),
    (b"RMF1", "truncated"),
    (frames.header(Kind.SCHEMA, frames.MAX_SMALL_BODY + 1), "too large"),
])
def test_bad_headers(data, needle):
    with pytest.raises(MotionError, match=needle) as exc:
        frames.parse_header(data)
    assert exc.value.sqlstate == "XX000"


def test_batch_length_is_not_limited():
    assert frames.parse_header(frames.header(Kind.BATCH, 1 << 40))[2] == 1 << 40


def test_control_frame():
    data = frames.control(Kind.STOP)
    assert frames.parse_header(data) == (Kind.STOP, 0, 0) and len(data) == 16


@pytest.mark.parametrize("key", [("q1", 2, 0), (7,), ("query-ü", -1, 10**12)])
def test_hello_round_trip(key):
    assert frames.read_hello(frames.hello_body(key, 3)) == (key, 3)


@pytest.mark.parametrize("key", [(), ["q", 1], ("q", 1.5), ("q", None), ("q", True), "q"])
def test_bad_keys(key):
    with pytest.raises(MotionError):
        frames.check_key(key)


def test_bad_hello():
    with pytest.raises(MotionError, match="HELLO"):
        frames.read_hello(b"{not json")
    with pytest.raises(MotionError, match="HELLO"):
        frames.read_hello(b'{"key": ["q"], "sender": -1}')


def test_schema_and_batch_bodies_zero_copy():
    batch = pa.record_batch({"a": pa.array(np.arange(1000)), "s": pa.array(["x"] * 1000)})
    schema = frames.read_schema(frames.schema_body(batch.schema))
    assert schema.equals(batch.schema)
    body = frames.batch_body(batch)
    got = frames.read_batch(body, schema)
    assert got.equals(batch)
    data = got.column(0).buffers()[1]
    assert body.address <= data.address < body.address + body.size


def test_malformed_bodies():
    with pytest.raises(MotionError, match="SCHEMA"):
        frames.read_schema(pa.py_buffer(b"garbage!"))
    schema = pa.schema([("a", pa.int64())])
    with pytest.raises(MotionError, match="BATCH"):
        frames.read_batch(pa.py_buffer(b"\xff\xff\xff\xff\x08\x00\x00\x00garbage!"), schema)


def _said(error: MotionError) -> tuple[str, str, str]:
    return error.sqlstate, error.message, error.kind


def test_error_body():
    assert _said(frames.read_error(frames.error_body("division by zero", "22012"))) == (
        "22012", "division by zero", "")
    assert _said(frames.read_error(frames.error_body("moved", "40001", "PlacementChanged"))) \
        == ("40001", "moved", "PlacementChanged")
    state, message, _ = _said(frames.read_error(frames.error_body("x" * 100_000)))
    assert state == "XX000" and len(message) < 20_000 and message.endswith("...")
    assert _said(frames.read_error(b"plain text")) == ("XX000", "plain text", "")
    # A body without a kind (the format before it had one) reads as no kind.
    assert _said(frames.read_error(b'{"sqlstate": "22012", "message": "m"}')) == (
        "22012", "m", "")


def test_dictionaries_are_decoded():
    d = pa.array(["a", "b", "a", None]).dictionary_encode()
    batch = pa.record_batch({"d": d, "n": pa.array([1, 2, 3, 4])})
    schema = frames.plain_schema(batch.schema)
    assert schema.field("d").type == pa.string()
    plain = frames.plain_batch(batch, schema)
    assert plain.column(0).to_pylist() == ["a", "b", "a", None]
    with pytest.raises(MotionError, match="differs"):
        frames.plain_batch(pa.record_batch({"x": pa.array([1])}), schema)


def test_motion_error_pickles_with_sqlstate():
    err = pickle.loads(pickle.dumps(MotionError("gone", "58030")))
    assert isinstance(err, MotionError) and err.sqlstate == "58030" and str(err) == "gone"


def test_endpoint_pickles():
    ep = channel.Endpoint(channel.local_node_id(), "127.0.0.1", 5432, "\0abstract")
    assert pickle.loads(pickle.dumps(ep)) == ep
    assert channel.local_node_id() == channel.local_node_id()


def test_spill_file(tmp_path):
    f = spill.SpillFile(str(tmp_path))
    a, b = pa.py_buffer(os.urandom(100_000)), pa.py_buffer(os.urandom(3000))
    oa = f.reserve(len(a))
    ob = f.reserve(len(b))
    f.write(oa, a)
    f.write(ob, b)
    assert oa % spill.ALIGN == 0 and ob % spill.ALIGN == 0
    assert list(tmp_path.iterdir()) == []  # unnamed: nothing to see, nothing to leave
    assert f.read(ob, len(b)).equals(b)
    assert f.read(oa, len(a)).equals(a)
    assert f.size_on_disk() == 0  # truncated once nothing is left to read
    assert f.reserve(10) == 0
    f.close()
    with pytest.raises(MotionError):
        f.reserve(10)
