"""numba kernels of the aggregate's group table: group ids for key rows, and accumulators.

Keys arrive encoded as an (n, k) int64 matrix (segment/operators/agg_table.py does the
encoding: integers and dates as themselves, floats by their canonical bits, strings by a
global dictionary id, one extra column of NULL flags when a key may be NULL). `assign`
looks every row up in an open-addressing table (linear probing over a power-of-two array
of group ids, at most half full), appends the keys it has not seen as new groups and
writes each row's group id. It stops early, returning the row it stopped at, when the
group arrays are full, so the caller can grow them and go on: no kernel allocates.

The accumulators add one batch into per-group arrays by group id. Exact sums of integers
and scaled numerics are 128-bit two's complement (an unsigned low word and a signed high
word), so they never overflow however many rows a group has; the caller turns them into
int64 where every sum fits, decimal128(38, 0) otherwise (the same states agg_state.py's
Arrow path keeps).
"""

from __future__ import annotations

import numba
import numpy as np

from segment.kernels import join_hash

_jit = numba.njit(cache=True, nogil=True)
_inline = numba.njit(cache=True, nogil=True, inline="always")

EMPTY = -1


def table_size(n_groups: int) -> int:
    """Slots for n_groups groups: a power of two at least twice as many, at least 1024."""
    return join_hash.table_size(max(n_groups, 512))


@_inline
def _tag(h):  # pragma: no cover - compiled
    """The 31 high bits of a hash, kept in a slot beside the group id."""
    return np.int64(h >> np.uint64(33))


@_inline
def _find(keys, i, h, slots, gkeys):  # pragma: no cover - compiled
    """(slot, group) of row i's keys (hash h): the group's slot, or (the free slot where
    it would go, EMPTY)."""
    mask = np.uint64(slots.shape[0] - 1)
    tag = _tag(h)
    s = h & mask
    while True:
        e = slots[s]
        if e == EMPTY:
            return s, EMPTY
        if (e >> 32) == tag:
            g = e & 0xFFFFFFFF
            same = True
            for j in range(keys.shape[1]):
                if gkeys[g, j] != keys[i, j]:
                    same = False
                    break
            if same:
                return s, g
        s = (s + np.uint64(1)) & mask


@_jit
def assign(keys, start, slots, gkeys, n_groups, gid):  # pragma: no cover - compiled
    """Group ids of rows start.. of keys into gid; new keys become groups n_groups...
    A slot is one int64: EMPTY, or a tag of the key's hash (high 32 bits) and its group
    id (low 32 bits), so the table is 8 bytes a slot and a probe compares a group's keys
    (gkeys) only when the tags agree. Returns (next row, n_groups): next row < len(keys)
    when gkeys or half the slots filled up before it (grow them, `rehash`, and call
    again from there)."""
    limit = min(gkeys.shape[0], slots.shape[0] // 2)
    for i in range(start, keys.shape[0]):
        h = join_hash.hash_row(keys, i)
        s, g = _find(keys, i, h, slots, gkeys)
        if g == EMPTY:
            if n_groups >= limit:
                return i, n_groups
            g = n_groups
            slots[s] = (_tag(h) << 32) | g
            for j in range(keys.shape[1]):
                gkeys[g, j] = keys[i, j]
            n_groups += 1
        gid[i] = g
    return keys.shape[0], n_groups


@_jit
def lookup(keys, start, slots, gkeys, gid):  # pragma: no cover - compiled
    """Group ids of rows start.. of keys into gid, EMPTY where a row's keys are no group:
    `assign` of a table that takes no more groups (it is as big as its budget allows)."""
    for i in range(start, keys.shape[0]):
        gid[i] = _find(keys, i, join_hash.hash_row(keys, i), slots, gkeys)[1]


@_jit
def rehash(gkeys, n_groups, slots):  # pragma: no cover - compiled
    """Insert groups 0..n_groups-1 into empty slots (after the slots grew)."""
    mask = np.uint64(slots.shape[0] - 1)
    for g in range(n_groups):
        h = join_hash.hash_row(gkeys, g)
        s = h & mask
        while slots[s] != EMPTY:
            s = (s + np.uint64(1)) & mask
        slots[s] = (_tag(h) << 32) | g


@_jit
def count_rows(gid, counts):  # pragma: no cover - compiled
    for i in range(gid.shape[0]):
        counts[gid[i]] += 1


@_jit
def count_valid(gid, valid, counts):  # pragma: no cover - compiled
    for i in range(gid.shape[0]):
        if valid[i]:
            counts[gid[i]] += 1


@_jit
def sum_exact(gid, values, valid, lo, hi, seen):  # pragma: no cover - compiled
    """128-bit sums of integer values (any width); `valid` empty means no NULLs."""
    all_valid = valid.shape[0] == 0
    for i in range(gid.shape[0]):
        if all_valid or valid[i]:
            g = gid[i]
            v = np.int64(values[i])
            old = lo[g]
            new = old + np.uint64(v)
            lo[g] = new
            carry = np.int64(1) if new < old else np.int64(0)
            hi[g] += carry - (np.int64(1) if v < 0 else np.int64(0))
            seen[g] = True


@_jit
def sum_float(gid, values, valid, sums, seen):  # pragma: no cover - compiled
    all_valid = valid.shape[0] == 0
    for i in range(gid.shape[0]):
        if all_valid or valid[i]:
            g = gid[i]
            sums[g] += np.float64(values[i])
            seen[g] = True


@_jit
def min_max(gid, values, valid, acc, seen, is_max):  # pragma: no cover - compiled
    """Per-group min (or max) of integer-coded values (ints, dates, timestamps, scaled
    numerics): exact in int64."""
    all_valid = valid.shape[0] == 0
    for i in range(gid.shape[0]):
        if all_valid or valid[i]:
            g = gid[i]
            v = np.int64(values[i])
            if not seen[g]:
                acc[g] = v
                seen[g] = True
            elif is_max:
                if v > acc[g]:
                    acc[g] = v
            elif v < acc[g]:
                acc[g] = v


@_jit
def fits_int64(lo, hi, n):  # pragma: no cover - compiled
    """Whether every one of the first n 128-bit sums fits in an int64."""
    for g in range(n):
        top = np.int64(lo[g]) < 0
        if not ((hi[g] == 0 and not top) or (hi[g] == -1 and top)):
            return False
    return True


@_inline
def _direct_index(keys, i, los, spans, strides):  # pragma: no cover - compiled
    """The cell of row i's keys in a direct map: per key, its value's offset from the
    key's low bound, or the key's extra NULL cell; mixed radix over the keys."""
    flags = keys[i, keys.shape[1] - 1]
    idx = np.int64(0)
    for j in range(los.shape[0]):
        if (flags >> j) & 1:
            idx += spans[j] * strides[j]
        else:
            idx += (keys[i, j] - los[j]) * strides[j]
    return idx


@_jit
def assign_direct(keys, start, los, spans, strides, dmap, gkeys, n_groups, gid):  # pragma: no cover - compiled
    """Group ids of rows start.. of keys whose values all lie within [los, los + spans):
    `dmap` maps a row's cell (`_direct_index`) to its group (EMPTY: none yet), so there
    is no hashing and no probing. Returns (next row, n_groups) as `assign` does."""
    limit = gkeys.shape[0]
    k = keys.shape[1]
    n = keys.shape[0]
    for i in range(start, n):
        c = _direct_index(keys, i, los, spans, strides)
        g = dmap[c]
        if g == EMPTY:
            if n_groups >= limit:
                return i, n_groups
            g = n_groups
            dmap[c] = g
            for j in range(k):
                gkeys[g, j] = keys[i, j]
            n_groups += 1
        gid[i] = g
    return n, n_groups


@_jit
def lookup_direct(keys, start, los, spans, strides, dmap, gid):  # pragma: no cover - compiled
    """`lookup` in a direct map: EMPTY for a row whose keys are no group, a value outside
    the map's ranges among them."""
    flags_col = keys.shape[1] - 1
    for i in range(start, keys.shape[0]):
        inside = dmap.shape[0] > 0
        for j in range(los.shape[0]):
            if not (keys[i, flags_col] >> j) & 1:
                off = keys[i, j] - los[j]
                if off < 0 or off >= spans[j]:
                    inside = False
                    break
        gid[i] = dmap[_direct_index(keys, i, los, spans, strides)] if inside else EMPTY


@_jit
def direct_rebuild(gkeys, n_groups, los, spans, strides, dmap):  # pragma: no cover - compiled
    """Enter groups 0..n_groups-1 into an empty direct map of a new layout."""
    for g in range(n_groups):
        dmap[_direct_index(gkeys, g, los, spans, strides)] = g
