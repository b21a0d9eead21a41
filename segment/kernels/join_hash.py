"""numba kernels of the hash join: the build side's hash table and the probe.

Keys arrive already encoded as int64 codes (segment/operators/join_table.py): a matrix of
n rows by k key columns, plus a validity vector (a row with any NULL key never matches;
an empty vector means every row is valid). The build kernel gives every distinct key a
group id and one representative row; rows are then counting-sorted by group, so a group's
build rows are `order[offsets[g]:offsets[g + 1]]`. The probe maps each probe row to its
group (or -1), and `fill_pairs` expands groups into (probe row, build row) pairs from any
position of the pair sequence, so the operator can cut the output of a many-to-many join
into bounded chunks.

The table is open addressing with linear probing over a power-of-two array of group ids,
at most half full. A one-column key keeps the key itself next to the group id, so a probe
touches one cache line per lookup instead of two (slot, then the representative's key):
6M probes of random int64 keys against 1.5M build keys take ~0.15 s, the build ~0.1 s.
"""

from __future__ import annotations

import numba
import numpy as np

from motion.hashing import fmix64

_jit = numba.njit(cache=True, nogil=True)
_inline = numba.njit(cache=True, nogil=True, inline="always")

_U = np.uint64
_SEED = _U(0x9E3779B97F4A7C15)
# The one hash's 64-bit finalizer (motion/hashing.py) spreads keys over the slots.
_fmix64 = fmix64


@_inline
def hash_row(keys, i):  # pragma: no cover - compiled
    """The hash of row i of an (n, k) int64 key matrix (group_table.py uses it too)."""
    h = _SEED
    for j in range(keys.shape[1]):
        h = _fmix64(h ^ np.uint64(keys[i, j]))
    return h


@_inline
def _same(keys_a, i, keys_b, r):  # pragma: no cover - compiled
    for j in range(keys_a.shape[1]):
        if keys_a[i, j] != keys_b[r, j]:
            return False
    return True


def table_size(n_rows: int) -> int:
    """Slots for n_rows distinct keys: a power of two at least twice as many."""
    size = 16
    while size < 2 * n_rows:
        size *= 2
    return size


@_jit
def build_single(keys, valid, size):  # pragma: no cover - compiled
    """One-column keys: (slots, group per row (-1 invalid), n_groups). slots[s] holds a
    key and its group id (-1: empty) side by side, so a lookup reads one cache line."""
    n = keys.shape[0]
    has_valid = valid.shape[0] > 0
    mask = _U(size - 1)
    slots = np.empty((size, 2), np.int64)
    slots[:, 1] = -1
    group = np.empty(n, np.int32)
    n_groups = 0
    for i in range(n):
        if has_valid and not valid[i]:
            group[i] = -1
            continue
        v = keys[i]
        s = _fmix64(_SEED ^ np.uint64(v)) & mask
        while True:
            g = slots[s, 1]
            if g < 0:
                slots[s, 0] = v
                slots[s, 1] = n_groups
                group[i] = n_groups
                n_groups += 1
                break
            if slots[s, 0] == v:
                group[i] = g
                break
            s = (s + _U(1)) & mask
    return slots, group, n_groups


@_inline
def _lookup(slots, mask, v):  # pragma: no cover - compiled
    """The group of one-column key v in build_single's slots, -1 when absent."""
    s = _fmix64(_SEED ^ np.uint64(v)) & mask
    while True:
        g = slots[s, 1]
        if g < 0 or slots[s, 0] == v:
            return g
        s = (s + _U(1)) & mask


@_jit
def probe_single(keys, valid, slots):  # pragma: no cover - compiled
    n = keys.shape[0]
    has_valid = valid.shape[0] > 0
    mask = _U(slots.shape[0] - 1)
    out = np.empty(n, np.int32)
    for i in range(n):
        out[i] = -1
        if has_valid and not valid[i]:
            continue
        out[i] = _lookup(slots, mask, keys[i])
    return out


@_jit
def key_bits(keys, valid, lo, n_bits):  # pragma: no cover - compiled
    """A bitmap over the key range [lo, lo + n_bits): bit v - lo is set when a build row
    has key v (probe_single_bits reads it before the hash table)."""
    bits = np.zeros((n_bits + 63) // 64, np.uint64)
    has_valid = valid.shape[0] > 0
    for i in range(keys.shape[0]):
        if has_valid and not valid[i]:
            continue
        d = keys[i] - lo
        bits[d >> 6] |= _U(1) << _U(d & 63)
    return bits


@_jit
def probe_single_bits(keys, valid, slots, lo, bits):  # pragma: no cover - compiled
    """probe_single with the build keys' bitmap read first: a probe key outside the range
    or without its bit (most of them, when few build keys spread over a wide range) costs
    a compare and a load from a bitmap that stays in the cache, not a hash."""
    n = keys.shape[0]
    has_valid = valid.shape[0] > 0
    n_bits = _U(bits.shape[0] * 64)
    mask = _U(slots.shape[0] - 1)
    out = np.empty(n, np.int32)
    for i in range(n):
        out[i] = -1
        if has_valid and not valid[i]:
            continue
        v = keys[i]
        d = _U(v) - _U(lo)  # (wraps below lo: then beyond n_bits)
        if d >= n_bits or not (bits[d >> _U(6)] >> (d & _U(63))) & _U(1):
            continue
        out[i] = _lookup(slots, mask, v)
    return out


@_jit
def build_multi(keys, valid, size):  # pragma: no cover - compiled
    """k-column keys (n x k matrix): (slot_group, group per row, representative row of
    each group, n_groups)."""
    n = keys.shape[0]
    has_valid = valid.shape[0] > 0
    mask = _U(size - 1)
    slot_group = np.full(size, -1, np.int32)
    group = np.empty(n, np.int32)
    reps = np.empty(n, np.int64)
    n_groups = 0
    for i in range(n):
        if has_valid and not valid[i]:
            group[i] = -1
            continue
        s = hash_row(keys, i) & mask
        while True:
            g = slot_group[s]
            if g < 0:
                slot_group[s] = n_groups
                reps[n_groups] = i
                group[i] = n_groups
                n_groups += 1
                break
            if _same(keys, i, keys, reps[g]):
                group[i] = g
                break
            s = (s + _U(1)) & mask
    return slot_group, group, reps[:n_groups].copy(), n_groups


@_jit
def probe_multi(keys, valid, slot_group, reps, build_keys):  # pragma: no cover - compiled
    n = keys.shape[0]
    has_valid = valid.shape[0] > 0
    mask = _U(slot_group.shape[0] - 1)
    out = np.empty(n, np.int32)
    for i in range(n):
        out[i] = -1
        if has_valid and not valid[i]:
            continue
        s = hash_row(keys, i) & mask
        while True:
            g = slot_group[s]
            if g < 0:
                break
            if _same(keys, i, build_keys, reps[g]):
                out[i] = g
                break
            s = (s + _U(1)) & mask
    return out


@_jit
def direct_groups(keys, valid, lo, offsets):  # pragma: no cover - compiled
    """Dense one-column keys: the group is the key minus the smallest build key; -1 when
    NULL, outside the build side's range or a value no build row has."""
    n = keys.shape[0]
    n_groups = offsets.shape[0] - 1
    hi = lo + (n_groups - 1)  # (no overflow: both ends are build keys)
    has_valid = valid.shape[0] > 0
    out = np.empty(n, np.int32)
    for i in range(n):
        out[i] = -1
        if has_valid and not valid[i]:
            continue
        v = keys[i]
        if v < lo or v > hi:
            continue
        g = v - lo
        if offsets[g + 1] > offsets[g]:
            out[i] = g
    return out


@_jit
def sort_by_group(group, n_groups):  # pragma: no cover - compiled
    """Stable counting sort of the rows with a group: (offsets[n_groups + 1], order)."""
    offsets = np.zeros(n_groups + 1, np.int64)
    for i in range(group.shape[0]):
        g = group[i]
        if g >= 0:
            offsets[g + 1] += 1
    for g in range(n_groups):
        offsets[g + 1] += offsets[g]
    pos = offsets[:-1].copy()
    order = np.empty(offsets[n_groups], np.int64)
    for i in range(group.shape[0]):
        g = group[i]
        if g >= 0:
            order[pos[g]] = i
            pos[g] += 1
    return offsets, order


@_jit
def match_totals(groups, offsets):  # pragma: no cover - compiled
    """The running total (inclusive) of the build rows matching each probe row."""
    n = groups.shape[0]
    total = np.empty(n, np.int64)
    acc = 0
    for i in range(n):
        g = groups[i]
        if g >= 0:
            acc += offsets[g + 1] - offsets[g]
        total[i] = acc
    return total


@_jit
def fill_pairs(groups, offsets, order, row, skip, n_out):  # pragma: no cover - compiled
    """n_out pairs starting at probe row `row`, after its first `skip` matches."""
    probe = np.empty(n_out, np.int64)
    build = np.empty(n_out, np.int64)
    k = 0
    i = row
    while k < n_out:
        g = groups[i]
        if g >= 0:
            s = offsets[g] + skip
            e = offsets[g + 1]
            while s < e and k < n_out:
                probe[k] = i
                build[k] = order[s]
                k += 1
                s += 1
        skip = 0
        i += 1
    return probe, build


@_jit
def unique_pairs(groups, first_row, start, end):  # pragma: no cover - compiled
    """The pairs of probe rows start..end-1 when every group holds one build row,
    first_row[g]: one pass, no counting."""
    n = 0
    for i in range(start, end):
        if groups[i] >= 0:
            n += 1
    probe = np.empty(n, np.int64)
    build = np.empty(n, np.int64)
    k = 0
    for i in range(start, end):
        g = groups[i]
        if g >= 0:
            probe[k] = i
            build[k] = first_row[g]
            k += 1
    return probe, build


# --- strings: distinct values by hash, verified byte by byte -----------------------------
# A slot is [word, code << 32 | length] (code -1: empty). For strings of up to 8 bytes the
# word is the bytes themselves, so a lookup compares within the slot; for longer ones it is
# the hash, and `starts[code]` locates the build's bytes, read only when hash and length
# agree. Slots stay 16 bytes: 32-byte slots (start and prefix inline) made probes ~5x
# slower here, the larger table missing the TLB far more often.
_LOW32 = np.int64(0xFFFFFFFF)
_S8 = _U(8)


@_inline
def _word(data, start, length, h):  # pragma: no cover - compiled
    """A short string's bytes as one int64 (with its length, exact), else its hash."""
    if length > 8:
        return h
    w = _U(0)
    for p in range(length - 1, -1, -1):
        w = (w << _S8) | _U(data[start + p])
    return np.int64(w)


@_inline
def _same_bytes(data_a, a, length, data_b, b):  # pragma: no cover - compiled
    for p in range(length):
        if data_a[a + p] != data_b[b + p]:
            return False
    return True


@_jit
def bytes_build(offsets, data, hashes, valid, size):  # pragma: no cover - compiled
    """Codes 0.. of the distinct strings (offsets/data as Arrow lays them out, hashes as
    int64 from motion.hashing): (slots, starts, code per row (-1 NULL), n_codes)."""
    n = hashes.shape[0]
    has_valid = valid.shape[0] > 0
    mask = _U(size - 1)
    slots = np.empty((size, 2), np.int64)
    slots[:, 1] = -1
    starts = np.empty(n, np.int64)
    codes = np.empty(n, np.int64)
    n_codes = 0
    for i in range(n):
        if has_valid and not valid[i]:
            codes[i] = -1
            continue
        h = hashes[i]
        start = np.int64(offsets[i])
        length = np.int64(offsets[i + 1]) - start
        word = _word(data, start, length, h)
        s = _fmix64(_SEED ^ np.uint64(h)) & mask
        while True:
            w = slots[s, 1]
            if w < 0:
                slots[s, 0] = word
                slots[s, 1] = (np.int64(n_codes) << 32) | length
                starts[n_codes] = start
                codes[i] = n_codes
                n_codes += 1
                break
            if (slots[s, 0] == word and (w & _LOW32) == length
                    and (length <= 8
                         or _same_bytes(data, start, length, data, starts[w >> 32]))):
                codes[i] = w >> 32
                break
            s = (s + _U(1)) & mask
    return slots, starts[:n_codes].copy(), codes, n_codes


@_jit
def bytes_probe(offsets, data, hashes, valid, slots, starts,
                build_data):  # pragma: no cover - compiled
    """The build code of each probe string, -1 when NULL or absent from the build side."""
    n = hashes.shape[0]
    has_valid = valid.shape[0] > 0
    mask = _U(slots.shape[0] - 1)
    codes = np.empty(n, np.int64)
    for i in range(n):
        codes[i] = -1
        if has_valid and not valid[i]:
            continue
        h = hashes[i]
        start = np.int64(offsets[i])
        length = np.int64(offsets[i + 1]) - start
        word = _word(data, start, length, h)
        s = _fmix64(_SEED ^ np.uint64(h)) & mask
        while True:
            w = slots[s, 1]
            if w < 0:
                break
            if (slots[s, 0] == word and (w & _LOW32) == length
                    and (length <= 8 or _same_bytes(data, start, length, build_data,
                                                    starts[w >> 32]))):
                codes[i] = w >> 32
                break
            s = (s + _U(1)) & mask
    return codes
