"""Tests of the one distribution hash: pinned values, canonical equalities, jump consistency.

The pinned values below are part of the storage format (they decide which segment holds a
row). They must never change; a change needs a new hashing.HASH_VERSION and a
redistribution of every stored table.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from motion import hashing

M64 = (1 << 64) - 1


# --- a pure-Python reference of the kernels (slow, obviously right) ------------------------
def _fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def ref_numeric(value: int, scale: int) -> int:
    """Hash of value * 10**-scale for an arbitrary Python int `value`."""
    while scale > 0 and value % 10 == 0:
        value //= 10
        scale -= 1
    if -(1 << 63) <= value < (1 << 63):
        return _fmix64(((value & M64) + scale * 0x85EBCA77C2B2AE63 & M64) ^ 0x9E3779B97F4A7C15)
    lo, hi = value & M64, (value >> 64) & M64
    return _fmix64((_fmix64(lo ^ 0x9E3779B97F4A7C15) + hi * 0x27D4EB2F165667C5
                    + scale * 0x85EBCA77C2B2AE63) & M64)


def ref_float(x: float) -> int:
    if x != x:
        bits = 0x7FF8000000000000
    elif x == 0.0:
        bits = 0
    else:
        bits = int(np.array([x], np.float64).view(np.uint64)[0])
    return _fmix64(bits ^ 0xC2B2AE3D27D4EB4F)


def ref_bytes(b: bytes) -> int:
    p1, p2, p3, p4, p5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                          0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)
    h = (0x165667B19E3779F9 + p5 + len(b)) & M64
    p = 0
    while p + 8 <= len(b):
        w = int.from_bytes(b[p:p + 8], "little")
        h ^= (_rotl(w * p2 & M64, 31) * p1) & M64
        h = (_rotl(h, 27) * p1 + p4) & M64
        p += 8
    if p + 4 <= len(b):
        h ^= (int.from_bytes(b[p:p + 4], "little") * p1) & M64
        h = (_rotl(h, 23) * p2 + p3) & M64
        p += 4
    for c in b[p:]:
        h ^= (c * p5) & M64
        h = (_rotl(h, 11) * p1) & M64
    return _fmix64(h)


def ref_combine(a: int, b: int) -> int:
    return _fmix64((a * 0xFF51AFD7ED558CCD + b) & M64)


def ref_jump(key: int, n: int) -> int:
    b, j = -1, 0
    while j < n:
        b = j
        key = (key * 2862933555777941757 + 1) & M64
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def h(arr, scale=None) -> list[int]:
    return [int(x) for x in hashing.hash_arrays([arr], [scale])]


# --- pinned values: never change these ----------------------------------------------------
PINNED = [
    (pa.array([0, 1, -1, 5, 2**63 - 1, -2**63, None], pa.int64()), None,
     [0x9CA066F1A4AB2EEA, 0x25B775FAECA8F520, 0x3CD617BBBCC39640, 0xF9A60599C02ADCDD,
      0xF2A9E4C522CF7451, 0x11C0B7745EB88D61, 0x6A09E667F3BCC909],
     {2: [1, 1, 1, 0, 1, 1, 1], 3: [1, 1, 1, 0, 1, 2, 1], 4: [1, 1, 1, 0, 1, 2, 3]}),
    (pa.array([1230, 150, -1, 0], pa.int64()), 2,
     [0x8FC187DC1158CEBB, 0xD5ADE09AF345D2A5, 0xBB406F7284CC3F27, 0x9CA066F1A4AB2EEA],
     {2: [1, 1, 0, 1], 3: [1, 1, 2, 1], 4: [1, 1, 2, 1]}),
    (pa.array([Decimal("12.30"), Decimal("-0.01"), Decimal(10**30),
               Decimal("-123456789012345678901234.56")], pa.decimal128(38, 2)), None,
     [0x8FC187DC1158CEBB, 0xBB406F7284CC3F27, 0x18207D2EBFE3CB80, 0x29A854CF28F545CF],
     {2: [1, 0, 0, 1], 3: [1, 2, 2, 2], 4: [1, 2, 2, 3]}),
    (pa.array([0.0, 1.5, -2.25, float("nan"), float("inf")]), None,
     [0x0FF2E69699C4857E, 0x934550418FF75071, 0x0B98BB68C84ADDA9, 0xBCF6768A415923A8,
      0x4E4C46B68126B332],
     {2: [1, 1, 1, 1, 0], 3: [1, 1, 1, 1, 0], 4: [1, 1, 1, 1, 0]}),
    (pa.array([True, False]), None, [0x25B775FAECA8F520, 0x9CA066F1A4AB2EEA],
     {2: [1, 1], 3: [1, 1], 4: [1, 1]}),
    (pa.array([dt.date(2024, 1, 1), dt.date(1970, 1, 1)]), None,
     [0x63DF1790B477507B, 0x9CA066F1A4AB2EEA], {2: [1, 1], 3: [2, 1], 4: [2, 1]}),
    (pa.array([dt.datetime(2024, 1, 1, 12, 30, 15, 123456)], pa.timestamp("us")), None,
     [0xFB80F4A7CE9F46F7], {2: [1], 3: [1], 4: [1]}),
    (pa.array(["", "a", "hello", "hello world, longer than 16 bytes", "ü"]), None,
     [0x93D63BB2D8653747, 0x6212C4B55BCAE9CB, 0xF1330C98542C363B, 0x37D55DDC9A494A15,
      0xDF4FAE12014C3FE6],
     {2: [1, 0, 1, 1, 0], 3: [1, 2, 2, 1, 0], 4: [1, 3, 2, 1, 0]}),
]


@pytest.mark.parametrize("arr,scale,hashes,segments", PINNED, ids=lambda p: str(getattr(p, "type", "")))
def test_pinned_hashes_and_segments(arr, scale, hashes, segments):
    got = hashing.hash_arrays([arr], [scale])
    assert [int(x) for x in got] == hashes
    for n, expected in segments.items():
        assert hashing.segment_ids([arr], n, [scale]).tolist() == expected
        assert hashing.jump_consistent(got, n).dtype == np.int32


def test_pinned_composite_and_small_ranges():
    assert h(pa.array([1]))[0] == 0x25B775FAECA8F520
    assert int(hashing.hash_arrays([pa.array([1]), pa.array(["a"])])[0]) == 0xFCFD05F3808D900B
    assert int(hashing.hash_arrays([pa.array(["a"]), pa.array([1])])[0]) == 0x530C0E14B5B12E3A
    ints = pa.array(range(12))
    assert hashing.segment_ids([ints], 2).tolist() == [1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert hashing.segment_ids([ints], 3).tolist() == [1, 1, 0, 2, 2, 0, 2, 2, 1, 1, 2, 2]
    assert hashing.segment_ids([ints], 4).tolist() == [1, 1, 0, 2, 2, 0, 2, 3, 1, 1, 3, 2]
    keys = pa.array([f"k{i}" for i in range(12)])
    assert hashing.segment_ids([keys], 2).tolist() == [1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1]
    assert hashing.segment_ids([keys], 3).tolist() == [2, 0, 1, 0, 0, 0, 2, 1, 2, 2, 0, 2]
    assert hashing.segment_ids([keys], 4).tolist() == [2, 0, 1, 0, 0, 3, 3, 3, 3, 2, 3, 3]


def test_same_hashes_in_a_fresh_process_with_another_hash_seed():
    code = ("from motion import hashing; import pyarrow as pa; "
            "print(hashing.hash_arrays([pa.array(['a', 'bc']), pa.array([1, None])]).tolist())")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, check=True,
                         capture_output=True, text=True).stdout
    here = hashing.hash_arrays([pa.array(["a", "bc"]), pa.array([1, None])]).tolist()
    assert out.strip() == str(here)


# --- the kernels agree with the reference --------------------------------------------------
def test_kernels_match_reference():
    rng = np.random.default_rng(7)
    ints = rng.integers(-2**63, 2**63 - 1, 500, dtype=np.int64).tolist() + [0, -1, 10, -10]
    assert h(pa.array(ints, pa.int64())) == [ref_numeric(v, 0) for v in ints]
    assert h(pa.array(ints, pa.int64()), 3) == [ref_numeric(v, 3) for v in ints]
    floats = rng.normal(size=200).tolist() + [1e300, -1e-300, float("-inf")]
    assert h(pa.array(floats)) == [ref_float(x) for x in floats]
    strs = ["x" * k for k in range(20)] + ["Grüße, 世界", "a\x00b"]
    assert h(pa.array(strs)) == [ref_bytes(s.encode()) for s in strs]
    decs = [10**37 + 3, -(10**37) + 7, 2**64, -(2**64), 2**63, -(2**63), 12345, 10**36 * 7]
    arr = pa.array([Decimal(f"{v}E-4") for v in decs], pa.decimal128(38, 4))
    assert h(arr) == [ref_numeric(v, 4) for v in decs]
    comp = hashing.hash_arrays([pa.array([3]), pa.array(["z"]), pa.array([2.5])])
    assert int(comp[0]) == ref_combine(ref_combine(ref_numeric(3, 0), ref_bytes(b"z")), ref_float(2.5))
    keys = rng.integers(0, 2**63, 300, dtype=np.uint64)
    for n in (1, 2, 3, 7, 100, 2**20):
        assert hashing.jump_consistent(keys, n).tolist() == [ref_jump(int(k), n) for k in keys]


# --- canonical equalities ------------------------------------------------------------------
def test_integer_widths_hash_alike():
    vals = [0, 1, -1, 127, -128, None]
    expected = h(pa.array(vals, pa.int64()))
    for t in (pa.int8(), pa.int16(), pa.int32()):
        assert h(pa.array(vals, t)) == expected
    pos = [0, 1, 127, 255, None]
    for t in (pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()):
        assert h(pa.array(pos, t)) == h(pa.array(pos, pa.int64()))
    assert h(pa.array([2**63 - 1], pa.uint64())) == h(pa.array([2**63 - 1], pa.int64()))


def test_bool_date_and_timestamps_hash_as_int64():
    assert h(pa.array([True, False, None])) == h(pa.array([1, 0, None]))
    assert h(pa.array([dt.date(1970, 1, 11)])) == h(pa.array([10]))
    assert h(pa.array([dt.date(1970, 1, 11)], pa.date64())) == h(pa.array([10]))
    ts = dt.datetime(2001, 2, 3, 4, 5, 6)
    expected = h(pa.array([ts], pa.timestamp("us")))
    assert expected == h(pa.array([int(ts.replace(tzinfo=dt.timezone.utc).timestamp()) * 10**6]))
    for unit in ("s", "ms", "ns"):
        assert h(pa.array([ts], pa.timestamp(unit))) == expected
    assert h(pa.array([ts], pa.timestamp("us", tz="UTC"))) == expected
    early = dt.datetime(1960, 1, 1, 0, 0, 0, 1)
    assert h(pa.array([early], pa.timestamp("ns"))) == h(pa.array([early], pa.timestamp("us")))
    assert h(pa.array([dt.timedelta(seconds=2)], pa.duration("ms"))) == h(pa.array([2_000_000]))


def test_interval_hashes_like_postgres_compares():
    iv = pa.array([pa.MonthDayNano([1, 0, 0]), pa.MonthDayNano([0, 30, 0]),
                   pa.MonthDayNano([0, 1, 0]), pa.MonthDayNano([0, 0, 86_400 * 10**9])])
    hs = h(iv)
    assert hs[0] == hs[1] and hs[2] == hs[3] and hs[0] != hs[2]


def test_numeric_scaled_and_decimal_hash_like_integers():
    assert h(pa.array([500, -700, 0], pa.int64()), 2) == h(pa.array([5, -7, 0]))
    assert h(pa.array([150], pa.int64()), 2) == h(pa.array([15], pa.int64()), 1)
    assert h(pa.array([150], pa.int64()), 2) != h(pa.array([15], pa.int64()))
    assert h(pa.array([1230], pa.int32()), 2) == h(pa.array([123], pa.int64()), 1)
    d2 = pa.array([Decimal("5.00"), Decimal("1.50"), Decimal("-0.01"), None], pa.decimal128(38, 2))
    d1 = pa.array([Decimal("5.0"), Decimal("1.5"), None], pa.decimal128(10, 1))
    assert h(d2)[:2] == h(d1)[:2] == [h(pa.array([5]))[0], h(pa.array([15]), 1)[0]]
    assert h(d2)[2] == h(pa.array([-1]), 2)[0]
    assert h(d2)[3] == h(d1)[2] == int(hashing.NULL_HASH)
    assert h(d2, 2) == h(d2)


def test_wide_decimals_and_big_unsigned():
    big = 10**20 + 7
    assert h(pa.array([Decimal(big)], pa.decimal128(38, 0))) == \
        h(pa.array([Decimal(big)], pa.decimal128(38, 5)))
    assert h(pa.array([Decimal(2**63 + 5)], pa.decimal128(38, 0))) == \
        h(pa.array([2**63 + 5], pa.uint64()))
    extremes = pa.array([Decimal(10**38 - 1), Decimal(-(10**38) + 1)], pa.decimal128(38, 0))
    assert len(set(h(extremes))) == 2
    for t in (pa.decimal32(9, 2), pa.decimal64(18, 2)):
        assert h(pa.array([Decimal("1.50")], t)) == h(pa.array([15]), 1)


def test_floats_zero_and_nan():
    nan2 = np.array([0x7FF0000000000001, 0xFFF8000000000000], np.uint64).view(np.float64)
    hs = h(pa.array([0.0, -0.0, float("nan"), nan2[0], nan2[1], None]))
    assert hs[0] == hs[1] and hs[2] == hs[3] == hs[4] and hs[5] == int(hashing.NULL_HASH)
    assert h(pa.array([1.5, -0.0, float("nan")], pa.float32())) == h(pa.array([1.5, 0.0, float("nan")]))


def test_string_layouts_hash_alike():
    vals = ["apple", "", None, "ü" * 9]
    expected = h(pa.array(vals, pa.string()))
    for t in (pa.large_string(), pa.string_view()):
        assert h(pa.array(vals, t)) == expected
    assert h(pa.array(vals).dictionary_encode()) == expected
    raw = [v.encode() if v is not None else None for v in vals]
    for t in (pa.binary(), pa.large_binary()):
        assert h(pa.array(raw, t)) == expected


def test_nulls():
    null = int(hashing.NULL_HASH)
    for arr in (pa.array([None], pa.int32()), pa.array([None], pa.string()),
                pa.array([None], pa.bool_()), pa.array([None], pa.date32()), pa.nulls(1)):
        assert h(arr) == [null]
    comp = hashing.hash_arrays([pa.array([None, None]), pa.array([1, None])])
    assert int(comp[0]) != int(comp[1])
    assert int(comp[1]) == ref_combine(null, null)


def test_composite_keys_order_and_widths():
    a, b = pa.array([1, 2, 3], pa.int32()), pa.array(["x", "y", "z"])
    ab = hashing.hash_arrays([a, b])
    assert hashing.hash_arrays([a.cast(pa.int64()), b.cast(pa.large_string())]).tolist() == ab.tolist()
    assert hashing.hash_arrays([b, a]).tolist() != ab.tolist()
    swapped = hashing.hash_arrays([pa.array([1, 2]), pa.array([2, 1])])
    assert swapped[0] != swapped[1]
    scaled = hashing.hash_arrays([pa.array([100]), pa.array([250])], [2, 2])
    assert scaled.tolist() == hashing.hash_arrays([pa.array([1]), pa.array([25])], [None, 1]).tolist()


def test_sliced_and_chunked_arrays():
    arrays = [
        pa.array([1, None, 3, 4, 5, None, 7, 8, 9, 10, 11], pa.int16()),
        pa.array([True, None, False, True, True, False, None, True, False, True, False]),
        pa.array(["a", None, "ccc", "", "eeeee", "f", None, "hh", "i", "jj", "kkkkkkkkkk"]),
        pa.array([Decimal(i) / 4 if i % 3 else None for i in range(11)], pa.decimal128(20, 2)),
        pa.array([0.5 * i if i % 4 else None for i in range(11)], pa.float32()),
        pa.array([dt.date(2020, 1, i + 1) if i % 5 else None for i in range(11)]),
    ]
    for arr in arrays:
        full = h(arr)
        for start in (1, 3, 7):
            assert h(arr.slice(start)) == full[start:], arr.type
            assert h(arr.slice(start, 2)) == full[start:start + 2], arr.type
        chunked = pa.chunked_array([arr.slice(0, 4), arr.slice(4, 0), arr.slice(4)])
        assert h(chunked) == full
    comp = hashing.hash_arrays([pa.chunked_array([arrays[0][:5], arrays[0][5:]]), arrays[2]])
    assert comp.tolist() == hashing.hash_arrays([arrays[0], arrays[2]]).tolist()


def test_empty_input_and_errors():
    assert hashing.hash_arrays([pa.array([], pa.int64())]).shape == (0,)
    assert hashing.hash_arrays([pa.chunked_array([], pa.string())]).shape == (0,)
    with pytest.raises(ValueError):
        hashing.hash_arrays([])
    with pytest.raises(ValueError):
        hashing.hash_arrays([pa.array([1]), pa.array([1, 2])])
    with pytest.raises(ValueError):
        hashing.hash_arrays([pa.array(["a"])], [2])
    with pytest.raises(ValueError):
        hashing.hash_arrays([pa.array([1])], [2, 3])
    with pytest.raises(ValueError):
        hashing.hash_arrays([pa.array([Decimal("1.5")], pa.decimal128(5, 1))], [2])
    with pytest.raises(TypeError):
        hashing.hash_arrays([pa.array([{"a": 1}])])
    with pytest.raises(TypeError):
        hashing.hash_arrays([[1, 2]])
    with pytest.raises(ValueError):
        hashing.jump_consistent(np.zeros(1, np.uint64), 0)


def test_arrays_hash_by_their_elements_in_order():
    def h(values, typ=None, scale=None):
        return hashing.hash_arrays([pa.array(values, typ)], [scale]).tolist()
    got = h([[1, 2], [2, 1], [], [None], None, [1, 2], [None, None]])
    assert got[0] == got[5] and len(set(got[:5] + got[6:])) == 6
    assert got[4] == int(hashing.NULL_HASH)
    # Elements hash as their type does: widths and numeric scales alike, strings by bytes.
    assert h([[1, 2]], pa.list_(pa.int32())) == h([[1, 2]], pa.list_(pa.int64()))
    assert h([[150]], pa.list_(pa.int64()), 2) == h([[15]], pa.list_(pa.int64()), 1)
    assert h([["a", "b"]]) != h([["ab"]])
    assert h([[0.0]]) == h([[-0.0]])
    # Sliced lists and large lists hash alike.
    arr = pa.array([[1], [2, 3], None, [4]])
    assert hashing.hash_arrays([arr.slice(1)]).tolist() == h([[2, 3], None, [4]])
    assert h([[2, 3]], pa.large_list(pa.int64())) == h([[2, 3]])


# --- jump consistent hashing ---------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 8, 15])
def test_growing_segments_moves_about_one_nth(n):
    hashes = hashing.hash_arrays([pa.array(np.arange(200_000, dtype=np.int64))])
    before, after = hashing.jump_consistent(hashes, n), hashing.jump_consistent(hashes, n + 1)
    moved = before != after
    fraction = moved.mean()
    print(f"n={n}->{n + 1}: moved {fraction:.4f}, ideal {1 / (n + 1):.4f}")
    assert abs(fraction - 1 / (n + 1)) < 0.01
    assert (after[moved] == n).all()  # keys only move to the new segment
    counts = np.bincount(after, minlength=n + 1)
    assert counts.min() > 0.95 * len(hashes) / (n + 1)


# --- partition -----------------------------------------------------------------------------
def test_partition_keeps_every_row_in_order():
    n_rows = 10_000
    batch = pa.record_batch({"k": pa.array(np.arange(n_rows) % 997, pa.int32()),
                             "s": pa.array([f"r{i}" if i % 10 else None for i in range(n_rows)]),
                             "pos": pa.array(np.arange(n_rows))})
    seg = hashing.segment_ids([batch.column(0), batch.column(1)], 4)
    parts = hashing.partition(batch, [0, 1], 4)
    assert len(parts) == 4 and sum(len(p) for p in parts) == n_rows
    for b, part in enumerate(parts):
        assert part.schema == batch.schema
        pos = part.column(2).to_numpy()
        assert (np.diff(pos) > 0).all()  # order kept within a part
        assert (seg[pos] == b).all()
        assert pos.tolist() == np.flatnonzero(seg == b).tolist()


def test_partition_edge_cases():
    batch = pa.record_batch({"k": pa.array([1, 2, 3])})
    assert hashing.partition(batch, [0], 1) == [batch]
    empty = hashing.partition(batch.slice(0, 0), [0], 3)
    assert [len(p) for p in empty] == [0, 0, 0]
    sliced = hashing.partition(batch.slice(1), [0], 2)
    assert sorted(v for p in sliced for v in p.column(0).to_pylist()) == [2, 3]
    with pytest.raises(ValueError):
        hashing.partition(batch, [1], 2)
    scaled = hashing.partition(pa.record_batch({"k": pa.array([500])}), [0], 3, [2])
    assert [len(p) for p in scaled] == [len(p) for p in hashing.partition(
        pa.record_batch({"k": pa.array([5])}), [0], 3)]


# Timing of 10M rows depends on the machine and its load: with -m heavy only.
@pytest.mark.heavy
def test_speed_sanity():
    arr = pa.array(np.arange(10_000_000, dtype=np.int64))
    hashing.hash_arrays([arr[:10]])
    t0 = time.perf_counter()
    hashes = hashing.hash_arrays([arr])
    t1 = time.perf_counter()
    hashing.jump_consistent(hashes, 16)
    t2 = time.perf_counter()
    print(f"hash 10M int64: {t1 - t0:.3f}s, jump 10M to 16 segments: {t2 - t1:.3f}s")
    assert t1 - t0 < 5.0  # loose: only catches a fall back to Python-speed hashing
