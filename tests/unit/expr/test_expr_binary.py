"""bytea and uuid kernels (segment/kernels/expr_binary.py) against the pure-Python values
of planner/binary_values.py (what the constant folder computes): text output and input
on their vectorized and per-value paths, sliced arrays, the functions over columns, and
PostgreSQL's errors; chunk statistics and pruning of binary columns."""

from __future__ import annotations

import random
import uuid

import pyarrow as pa
import pytest
from expr_helpers import col, py_values, raises_sqlstate

from planner import binary_values as bv
from planner import expr as ex
from planner import functions as F
from planner import types as T
from segment.kernels import expr_binary as xbin
from segment.operators.chunk_pruning import can_skip
from segment.storage.stats import MAX_STRING_CHARS, column_stats

_RNG = random.Random(14)
BYTES = [b"", b"\x00", b"\\", b"\xde\xad\xbe\xef", None, b"hello", bytes(range(256)),
         *(bytes(_RNG.randrange(256) for _ in range(_RNG.randrange(40))) for _ in range(50))]
UUIDS = [uuid.UUID(int=0).bytes, None, uuid.UUID(int=2**128 - 1).bytes,
         *(uuid.UUID(int=_RNG.getrandbits(128)).bytes for _ in range(20))]


def _arr(values):
    return pa.array(values, pa.binary())


@pytest.mark.parametrize("offset", [0, 3])
def test_hex_output_is_byteaout(offset):
    arr = _arr(BYTES).slice(offset)
    want = [None if v is None else bv.format_bytea(v) for v in BYTES[offset:]]
    assert xbin.to_text(arr, T.BYTEA).to_pylist() == want


@pytest.mark.parametrize("offset", [0, 1])
def test_uuid_output_is_uuid_out(offset):
    arr = _arr(UUIDS).slice(offset)
    want = [None if v is None else str(uuid.UUID(bytes=v)) for v in UUIDS[offset:]]
    assert xbin.to_text(arr, T.UUID).to_pylist() == want


def test_bytea_input_fast_and_per_value_paths():
    hexes = [None if v is None else bv.format_bytea(v) for v in BYTES]
    assert xbin.from_text(pa.array(hexes, pa.string()), T.BYTEA).to_pylist() == BYTES
    mixed = ["\\x41", "abc", "a\\\\b\\000", "\\x 41\n", None, "\\x"]
    want = [b"A", b"abc", b"a\\b\x00", b"A", None, b""]
    assert xbin.from_text(pa.array(mixed), T.BYTEA).to_pylist() == want
    assert xbin.from_text(pa.array(mixed).slice(1), T.BYTEA).to_pylist() == want[1:]


@pytest.mark.parametrize("text,sqlstate", [
    ("\\x4", "22023"), ("\\xzz", "22023"), ("\\x4 1", "22023"), ("a\\b", "22P02"),
    ("\\400", "22P02"),
    ("\\", "22P02"), ("\\X41", "22P02"),
])
def test_bytea_input_errors(text, sqlstate):
    raises_sqlstate(sqlstate, xbin.from_text, pa.array(["\\x41", text]), T.BYTEA)
    raises_sqlstate(sqlstate, bv.parse_bytea, text)


def test_uuid_input_spellings_and_errors():
    good = ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", None]
    want = [None if g is None else uuid.UUID(g).bytes for g in good]
    assert xbin.from_text(pa.array(good), T.UUID).to_pylist() == want
    for bad in ("x", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "{a0eebc999c0b4ef8bb6d6bb9bd380a11",
                "a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11", " a0eebc999c0b4ef8bb6d6bb9bd380a11",
                "a0eebc999c0b4ef8bb6d6bb9bd380a11-", "a0eebc999c0b4ef8bb6d6bb9bd380a11\n"):
        e = raises_sqlstate("22P02", xbin.from_text, pa.array(good[:1] + [bad]), T.UUID)
        assert e.message == f'invalid input syntax for type uuid: "{bad}"'


@pytest.mark.parametrize("fmt", ["hex", "base64", "escape"])
def test_encode_decode_over_columns_match_the_folder(fmt):
    x = col(0, T.BYTEA)
    batch = pa.record_batch({"b": _arr(BYTES)})
    enc = F.bind_call(ex.Func.ENCODE, [x, F.literal(fmt)])
    texts = py_values(enc, batch)
    assert texts == [None if v is None else bv.encode(v, fmt) for v in BYTES]
    dec = F.bind_call(ex.Func.DECODE, [col(0, T.TEXT), F.literal(fmt)])
    assert py_values(dec, pa.record_batch({"t": pa.array(texts)})) == BYTES


def test_encode_formats_as_postgresql():
    assert bv.encode(b"\x00\xff\\A\n", "escape") == "\\000\\377\\\\A\n"
    assert bv.encode(b"x" * 60, "base64").split("\n") == ["eHh4" * 19, "eHh4"]
    assert bv.decode("YW Jj\nZA==", "base64") == b"abcd"
    assert bv.decode("YQ=x", "base64") == b"a"   # PostgreSQL reads on after the padding
    for bad, message in (("abc", "invalid base64 end sequence"),
                         ("a===", 'unexpected "=" while decoding base64 sequence'),
                         ("ab*c", 'invalid symbol "*" found while decoding base64 sequence')):
        assert raises_sqlstate("22023", bv.decode, bad, "base64").message == message
    assert raises_sqlstate("22023", bv.encode, b"", "Base32").message == \
        'unrecognized encoding: "Base32"'


def test_functions_over_columns_match_the_folder():
    x = col(0, T.BYTEA)
    k = col(1, T.INT4)
    ks = pa.array([i % 7 - 2 for i in range(len(BYTES))], pa.int32())
    batch = pa.record_batch({"b": _arr(BYTES), "k": ks})
    cases = [
        (F.bind_call(ex.Func.LENGTH, [x]), lambda v, n: len(v)),
        (F.bind_call(ex.Func.MD5, [x]), lambda v, n: bv.DIGESTS["md5"](v).hexdigest()),
        (F.bind_call(ex.Func.SHA256, [x]), lambda v, n: bv.DIGESTS["sha256"](v).digest()),
        (F.bind_call(ex.Func.CONCAT, [x, x]), lambda v, n: v + v),
        (F.bind_call(ex.Func.SUBSTRING, [x, F.literal(2), F.literal(3)]),
         lambda v, n: bv.substring(v, 2, 3)),
        (F.bind_call(ex.Func.SUBSTRING, [x, F.literal(-1), F.literal(3)]),
         lambda v, n: bv.substring(v, -1, 3)),
        (F.bind_call(ex.Func.SUBSTRING, [x, F.literal(2)]), lambda v, n: bv.substring(v, 2)),
        (F.bind_call(ex.Func.SUBSTRING, [x, F.literal(2**31 - 1)]),
         lambda v, n: bv.substring(v, 2**31 - 1)),
        (F.bind_call(ex.Func.SUBSTRING, [x, F.literal(3), F.literal(2**31 - 1)]),
         lambda v, n: bv.substring(v, 3, 2**31 - 1)),
        (F.bind_call(ex.Func.SUBSTRING, [x, F.literal(-2**31), F.literal(2**31 - 1)]),
         lambda v, n: bv.substring(v, -2**31, 2**31 - 1)),
        (F.bind_call(ex.Func.SUBSTRING, [x, k]), lambda v, n: bv.substring(v, n)),
        (F.bind_call(ex.Func.POSITION, [x, F.literal("\\x00")]), lambda v, n: v.find(b"\0") + 1),
        (F.bind_call(ex.Func.TRIM, [x, F.literal("\\x005c")]), lambda v, n: v.strip(b"\0\\")),
        (F.bind_call(ex.Func.GET_BIT, [x, F.literal(0)]),
         lambda v, n: bv.get_bit(v, 0) if v else "error"),
        (F.bind_call(ex.Func.SUBSTRING, [x, F.literal(1), k]),
         lambda v, n: bv.substring(v, 1, n) if n >= 0 else "error"),
    ]
    ks = batch.column(1).to_pylist()
    for e, fn in cases:
        want = [None if v is None else fn(v, n) for v, n in zip(BYTES, ks)]
        if "error" in want:
            raises_sqlstate("2202E" if e.func is ex.Func.GET_BIT else "22011",
                            py_values, e, batch)
        else:
            assert py_values(e, batch) == want, e


def test_bits_least_significant_first():
    assert [bv.get_bit(b"\x01\x80", i) for i in (0, 1, 7, 8, 15)] == [1, 0, 0, 0, 1]
    assert bv.set_bit(b"\x00\x00", 9, 1) == b"\x00\x02"
    raises_sqlstate("22023", bv.set_bit, b"\x00", 0, 2)
    assert raises_sqlstate("2202E", bv.get_bit, b"\x00", 8).message == \
        "index 8 out of valid range, 0..7"


def test_byte_access_errors_name_the_range():
    e = raises_sqlstate("2202E", bv.get_byte, b"\x01\x02", 2)
    assert e.message == "index 2 out of valid range, 0..1"
    assert bv.set_byte(b"\x01\x02", 0, 511) == b"\xff\x02"


def test_convert_from_checks_utf8():
    x = col(0, T.BYTEA)
    e = F.bind_call(ex.Func.CONVERT_FROM, [x, F.literal("UTF8")])
    ok = [b"h\xc3\xa9", None, b""]
    assert py_values(e, pa.record_batch({"b": _arr(ok)})) == ["hé", None, ""]
    for bad, shown in ((b"a\xff", "0xff"), (b"\xde\xff", "0xde 0xff"), (b"a\x00", "0x00"),
                       (b"\xe2\x82", "0xe2 0x82")):
        err = raises_sqlstate("22021", py_values, e, pa.record_batch({"b": _arr(ok + [bad])}))
        assert err.message == f'invalid byte sequence for encoding "UTF8": {shown}'


def test_gen_random_uuid_is_version_4_and_new_per_row():
    arr = xbin.gen_random_uuid(1000)
    values = arr.to_pylist()
    assert len(set(values)) == 1000
    assert all(uuid.UUID(bytes=v).version == 4 and uuid.UUID(bytes=v).variant == uuid.RFC_4122
               for v in values)


def test_binary_chunk_statistics_prune():
    st = column_stats(_arr([b"\x10", b"\x20\x00", None]))
    assert (st.min, st.max, st.null_count) == ("10", "2000", 1)
    x = col(0, T.BYTEA)

    def skip(func, value):
        pred = ex.Call(func, (x, ex.Literal(value, T.BYTEA)), T.BOOL)
        return can_skip(pred, lambda i: (st, T.BYTEA), 3)
    assert skip(ex.Func.EQ, b"\x05") and skip(ex.Func.EQ, b"\x20\x00\x00")
    assert not skip(ex.Func.EQ, b"\x20") and not skip(ex.Func.EQ, b"\x11\xff")
    assert skip(ex.Func.LT, b"\x10")
    assert not skip(ex.Func.LE, b"\x10")
    assert skip(ex.Func.GT, b"\x20\x00")
    assert not skip(ex.Func.GT, b"\x20")
    long = column_stats(_arr([b"\x01" * (MAX_STRING_CHARS + 1)]))
    assert long.min == "01" * MAX_STRING_CHARS and long.max is None


def test_like_matches_byte_by_byte():
    assert bv.like(b"\xc3\xa9", b"__") and not bv.like(b"\xc3\xa9", b"_")  # bytes, not chars
    assert bv.like(b"a\nb", b"a%b") and bv.like(b"a%b", b"a\\%b") and not bv.like(b"ab", b"a\\%b")
    assert bv.like(b".*", b".*") and not bv.like(b"ab", b".*")  # no regex leaks through
    raises_sqlstate("22025", bv.like, b"a", b"a\\")
    e = F.bind_like(col(0, T.BYTEA), F.literal("%\\000%"), negated=True)
    batch = pa.record_batch({"b": _arr([b"\x00", b"x", None])})
    assert py_values(e, batch) == [False, True, None]
