"""The build side of a hash join held in memory: key encoding and the hash table.

Every key column becomes int64 codes such that two values are equal as PostgreSQL's `=`
sees them exactly when their codes are: integers, dates, timestamps and scaled numerics
are their own codes; floats are their float64 bits with -0.0 made 0.0 and every NaN one NaN
(PostgreSQL orders NaN equal to NaN); intervals are their total microseconds (a month is
30 days, as PostgreSQL compares them). Strings are the number of their distinct value on
the build side, found through a numba hash table over their bytes (motion.hashing's hash,
verified byte by byte), and so are decimal128 values (their 16 bytes); other types
likewise through `pc.index_in`, which is slower (it hashes the build's values again for
every probe batch). A probe value
absent from the build side matches nothing. A dictionary-encoded probe column is looked
up once per dictionary value.

A composite key whose columns' build ranges multiply to less than 2**62 is packed into
one int64 (else it stays an n x k matrix); a one-column key whose build values are dense
is looked up directly (value minus the smallest), any other key through the numba hash
tables of segment/kernels/join_hash.py; a one-column key whose range is under 2**25
also gets a bitmap of its build values, which a probe reads before hashing (TPC-H Q17's
6M lineitems against 200 part keys spread over 200,000: 10 -> ~2 ns a probe row).

A `JoinTable` is built from one batch of build rows and answers, per probe batch, the
group of build rows each probe row matches and the (probe row, build row) pairs in bounded
chunks. What joins those pairs, evaluates residuals and handles the join types is
hash_join.py; spilling partitions of both sides to disk (grace hash join) would build one
JoinTable per partition.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from motion import hashing
from planner import errors
from planner.types import SqlType
from segment.kernels import group_keys, join_hash

_PACK_LIMIT = 1 << 62  # composite keys whose code space fits here become one int64
_DIRECT_MIN = 1 << 16  # a direct table this small is always worth it
_DIRECT_PER_ROW = 2  # otherwise up to this many slots per build row
_BITS_MAX = 1 << 25  # a hashed one-column key over a range this narrow gets a bitmap (4 MB)
_CANON_NAN = np.int64(0x7FF8000000000000)
_EMPTY_BOOL = np.zeros(0, np.bool_)


class ColumnCodes:
    """One key column of one side as int64 codes. `null` (None: no NULLs) marks NULLs;
    `found` (None: all) is False where a non-NULL value equals no build value. Codes at
    such rows are meaningless."""

    __slots__ = ("codes", "null", "found")

    def __init__(self, codes: np.ndarray, null: np.ndarray | None, found: np.ndarray | None):
        self.codes, self.null, self.found = codes, null, found


class Keys:
    """The encoded key of one side: its columns, and the lookup key: `codes` (one int64
    column, or an n x k matrix when the columns cannot be packed) and `valid` (empty
    when every row may match; otherwise False where a key is NULL or cannot match)."""

    __slots__ = ("columns", "codes", "valid", "n")

    def __init__(self, columns: list[ColumnCodes], codes: np.ndarray, valid: np.ndarray, n: int):
        self.columns, self.codes, self.valid, self.n = columns, codes, valid, n

    def null_rows(self) -> np.ndarray:
        """Rows with a NULL in any key column (bool per row)."""
        out = np.zeros(self.n, np.bool_)
        for c in self.columns:
            if c.null is not None:
                out |= c.null
        return out


def _kind(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return _kind(t.value_type)
    if (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)
            or pa.types.is_time(t) or pa.types.is_duration(t)):
        return "int"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_floating(t):
        return "float"
    if t == pa.month_day_nano_interval():
        return "interval"
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t)
            or pa.types.is_binary_view(t)):
        return "bytes"
    if pa.types.is_decimal128(t):
        return "bytes"  # its 16-byte values, as strings of one length
    return "dict"


def _array(arr) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _values(arr: pa.Array, dtype) -> np.ndarray:
    """Zero-copy view of a fixed-width array's values (any value under a NULL)."""
    dtype = np.dtype(dtype)
    buf = arr.buffers()[1]
    return np.frombuffer(buf, dtype=dtype, count=arr.offset + len(arr))[arr.offset:]


def _null_mask(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return pc.is_null(arr).to_numpy(zero_copy_only=False)


def _valid(null: np.ndarray | None) -> np.ndarray:
    return _EMPTY_BOOL if null is None else ~null


def _int_codes(arr: pa.Array) -> np.ndarray:
    t = arr.type
    width = t.bit_width // 8
    signed = not (pa.types.is_integer(t) and not pa.types.is_signed_integer(t))
    v = _values(arr, f"{'i' if signed else 'u'}{width}")
    # uint64 wraps into int64: a bijection, so equality is kept
    return v.view(np.int64) if v.dtype == np.uint64 else v.astype(np.int64, copy=False)


def _float_codes(arr: pa.Array) -> np.ndarray:
    v = _values(arr, {16: np.float16, 32: np.float32, 64: np.float64}[arr.type.bit_width])
    v = v.astype(np.float64) + 0.0  # a copy; x + 0.0 turns -0.0 into 0.0
    bits = v.view(np.int64)
    bits[np.isnan(v)] = _CANON_NAN
    return bits


def _interval_codes(arr: pa.Array) -> np.ndarray:
    rec = np.frombuffer(arr.buffers()[1], dtype=[("m", "<i4"), ("d", "<i4"), ("ns", "<i8")],
                        count=arr.offset + len(arr))[arr.offset:]
    days = rec["m"].astype(np.int64) * 30 + rec["d"]
    return days * 86_400_000_000 + rec["ns"] // 1_000


def _bytes_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (from the array's first row) and data buffer of a string array, or of
    a decimal128 array read as strings of 16 bytes."""
    if pa.types.is_decimal128(arr.type):
        offsets = np.arange(arr.offset, arr.offset + len(arr) + 1, dtype=np.int64) * 16
        return offsets, np.frombuffer(arr.buffers()[1], np.uint8)
    wide = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    offsets = np.frombuffer(arr.buffers()[1], np.int64 if wide else np.int32,
                            count=arr.offset + len(arr) + 1)[arr.offset:]
    data = arr.buffers()[2]
    return offsets, (np.zeros(0, np.uint8) if data is None else np.frombuffer(data, np.uint8))


def _plain_bytes_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_string_view(t):
        return pa.large_string()
    return pa.large_binary() if pa.types.is_binary_view(t) else t


class ColumnCoder:
    """Encodes one key column; fitted on the build side's column so that both sides'
    codes agree. `build_codes` are the build column's; `lo`/`hi` bound the codes of its
    matchable values (None when it has none)."""

    def __init__(self, build):
        build = _array(build)
        # Arrays match by their encoded bytes (equal exactly where the arrays are).
        self.lists = group_keys.needs_encoding(build.type)
        if self.lists:
            build = group_keys.encode(build)
        t = build.type.value_type if pa.types.is_dictionary(build.type) else build.type
        self.kind = _kind(t)
        self.type = _plain_bytes_type(t) if self.kind == "bytes" else t
        self.lo = self.hi = None
        if self.kind == "bytes":
            self.build_codes = self._fit_strings(self._conformed(build))
            return
        self.values = pc.unique(_decoded(build)).drop_null() if self.kind == "dict" else None
        self.build_codes = codes = self.encode(build)
        if self.kind == "dict":
            if len(self.values):
                self.lo, self.hi = 0, len(self.values) - 1
            return
        v = codes.codes if codes.null is None else codes.codes[~codes.null]
        if len(v):
            self.lo, self.hi = int(v.min()), int(v.max())

    def encode(self, arr) -> ColumnCodes:
        arr = _array(arr)
        if self.lists:
            arr = group_keys.encode(arr)
        arr = self._conformed(arr)
        if pa.types.is_dictionary(arr.type):
            return self._spread(self.encode(arr.dictionary), arr)
        null = _null_mask(arr)
        if self.kind == "bytes":
            offsets, data = _bytes_layout(arr)
            codes = join_hash.bytes_probe(offsets, data, _hashes(arr), _valid(null),
                                          self.slots, self.starts, self.build_data)
            return _looked_up(codes, null)
        if self.kind == "dict":
            idx = pc.index_in(arr, value_set=self.values)
            if not idx.null_count:
                return ColumnCodes(idx.to_numpy().astype(np.int64), null, None)
            return _looked_up(pc.fill_null(idx, -1).to_numpy().astype(np.int64), null)
        if self.kind == "int":
            codes = _int_codes(arr)
        elif self.kind == "float":
            codes = _float_codes(arr)
        elif self.kind == "interval":
            codes = _interval_codes(arr)
        else:
            codes = pc.fill_null(arr, False).to_numpy(zero_copy_only=False).astype(np.int64)
        return ColumnCodes(codes, null, None)

    def _fit_strings(self, build: pa.Array) -> ColumnCodes:
        if pa.types.is_dictionary(build.type):
            build = build.dictionary_decode()  # (probe codes refer to build rows' bytes)
        null = _null_mask(build)
        offsets, self.build_data = _bytes_layout(build)  # (a view: the table keeps it alive)
        self.slots, self.starts, codes, n_codes = join_hash.bytes_build(
            offsets, self.build_data, _hashes(build), _valid(null),
            join_hash.table_size(len(build) - build.null_count))
        if n_codes:
            self.lo, self.hi = 0, n_codes - 1
        return ColumnCodes(codes, null, None)

    def _conformed(self, arr: pa.Array) -> pa.Array:
        t = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
        if t == self.type or (self.kind == _kind(t) and self.kind not in ("dict", "bytes")):
            return arr  # (integers of any width compare by value)
        try:
            return arr.cast(pa.dictionary(arr.type.index_type, self.type)
                            if pa.types.is_dictionary(arr.type) else self.type)
        except pa.ArrowException as e:
            raise errors.InternalError(f"join keys of types {t} and {self.type}: {e}") from e

    @staticmethod
    def _spread(values: ColumnCodes, arr: pa.DictionaryArray) -> ColumnCodes:
        """Codes of a dictionary array from the codes of its dictionary's values."""
        null = _null_mask(arr)
        idx = arr.indices
        idx = (pc.fill_null(idx, 0) if idx.null_count else idx).to_numpy().astype(np.intp)
        codes = values.codes[idx] if len(values.codes) else np.zeros(len(idx), np.int64)
        found = None if values.found is None else values.found[idx]
        if found is not None and null is not None:
            found |= null
        return ColumnCodes(codes, null, found)


def _hashes(arr: pa.Array) -> np.ndarray:
    return hashing.hash_arrays([arr]).view(np.int64)


def _looked_up(codes: np.ndarray, null: np.ndarray | None) -> ColumnCodes:
    """Codes from a lookup in the build's values, -1 where absent (or NULL)."""
    missing = codes < 0
    if not missing.any():
        return ColumnCodes(codes, null, None)
    found = ~missing if null is None else (~missing | null)
    return ColumnCodes(codes, null, found)


def _decoded(arr: pa.Array) -> pa.Array:
    return arr.dictionary_decode() if pa.types.is_dictionary(arr.type) else arr


class KeyEncoder:
    """Encodes the key columns of either side; fitted on the build side's."""

    def __init__(self, build_columns: list[pa.Array]):
        self.coders = [ColumnCoder(c) for c in build_columns]
        build = [coder.build_codes for coder in self.coders]
        # With a column that has no matchable build value nothing can match.
        self.matchable = all(c.lo is not None for c in self.coders)
        self.multipliers: list[int] | None = None
        if self.matchable and len(self.coders) > 1:
            size, mults = 1, []
            for c in self.coders:
                mults.append(size)
                size *= c.hi - c.lo + 1
            if size <= _PACK_LIMIT:
                self.multipliers = mults
                self.packed_range = (0, size - 1)
        elif self.matchable:
            self.packed_range = (self.coders[0].lo, self.coders[0].hi)
        self.build_keys = self._combine(build, len(build_columns[0]))

    @property
    def single(self) -> bool:
        """Whether the lookup key is one int64 column."""
        return len(self.coders) == 1 or self.multipliers is not None

    def encode(self, columns: list) -> Keys:
        n = len(columns[0])
        return self._combine([c.encode(a) for c, a in zip(self.coders, columns)], n)

    def _combine(self, cols: list[ColumnCodes], n: int) -> Keys:
        bad = None
        for c in cols:
            for m in (c.null, None if c.found is None else ~c.found):
                if m is not None:
                    bad = m.copy() if bad is None else (bad | m)
        if not self.matchable or len(cols) == 1:
            codes = cols[0].codes
        elif self.multipliers is not None:
            codes = np.zeros(n, np.int64)
            for c, coder, mult in zip(cols, self.coders, self.multipliers):
                out = (c.codes < coder.lo) | (c.codes > coder.hi)
                if out.any():
                    bad = out if bad is None else (bad | out)
                # (wraps on out-of-range rows only; those are invalid)
                codes += (c.codes - coder.lo) * mult
        else:
            codes = np.ascontiguousarray(np.column_stack([c.codes for c in cols]))
        valid = _EMPTY_BOOL if bad is None else ~bad
        return Keys(cols, codes, valid, n)


class JoinTable:
    """The build rows (one batch) and their hash table on `key_positions`; with no key
    positions every probe row matches every build row (a nested-loop join)."""

    def __init__(self, batch: pa.RecordBatch, key_positions: tuple[int, ...],
                 key_types: tuple[SqlType, ...] = (), probe_types: tuple[SqlType, ...] = ()):
        _check_types(key_types, probe_types)
        self.batch = batch
        self.n = batch.num_rows
        self.encoder: KeyEncoder | None = None
        self.keys: Keys | None = None
        self.first_row: np.ndarray | None = None
        self.bits: np.ndarray | None = None  # "single" mode: the build keys' bitmap
        if not key_positions:
            self.mode = "all" if self.n else "none"
            self.offsets = np.array([0, self.n], np.int64)
            self.order = np.arange(self.n, dtype=np.int64)
            return
        self.encoder = enc = KeyEncoder([batch.column(i) for i in key_positions])
        self.keys = keys = enc.build_keys
        if not enc.matchable:
            self.mode = "none"
            return
        if enc.single:
            lo, hi = enc.packed_range
            if hi - lo < max(_DIRECT_PER_ROW * self.n, _DIRECT_MIN):
                self.mode, self.lo = "direct", lo
                groups = np.where(keys.valid, keys.codes - lo, -1) if len(keys.valid) \
                    else keys.codes - lo
                groups = groups.astype(np.int32)
                n_groups = hi - lo + 1
            else:
                self.mode = "single"
                self.slots, groups, n_groups = join_hash.build_single(
                    keys.codes, keys.valid, join_hash.table_size(self.n))
                if hi - lo < _BITS_MAX:
                    self.lo = lo
                    self.bits = join_hash.key_bits(keys.codes, keys.valid, lo, hi - lo + 1)
        else:
            self.mode = "multi"
            self.slot_group, groups, self.reps, n_groups = join_hash.build_multi(
                keys.codes, keys.valid, join_hash.table_size(self.n))
        self.offsets, self.order = join_hash.sort_by_group(groups, n_groups)
        if len(self.order) and int(np.diff(self.offsets).max()) == 1:
            # unique build keys (a primary key): each group's one row, straight from the group
            self.first_row = self.order[np.minimum(self.offsets[:-1], len(self.order) - 1)]

    def encode_probe(self, columns: list) -> Keys | None:
        return None if self.encoder is None else self.encoder.encode(columns)

    def groups(self, keys: Keys | None, n: int) -> np.ndarray:
        """The build group each of the n probe rows matches (int32), -1 for none."""
        if self.mode == "none":
            return np.full(n, -1, np.int32)
        if self.mode == "all":
            return np.zeros(n, np.int32)
        if self.mode == "direct":
            return join_hash.direct_groups(keys.codes, keys.valid, self.lo, self.offsets)
        if self.mode == "single":
            if self.bits is not None:
                return join_hash.probe_single_bits(keys.codes, keys.valid, self.slots,
                                                   self.lo, self.bits)
            return join_hash.probe_single(keys.codes, keys.valid, self.slots)
        return join_hash.probe_multi(keys.codes, keys.valid, self.slot_group, self.reps,
                                     self.keys.codes)

    def pairs(self, groups: np.ndarray, cap: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(probe rows, build rows) of every match, in probe-row order, at most cap at a
        time; a probe row with more than cap matches spans chunks."""
        if not len(groups) or self.mode == "none":
            return
        if self.first_row is not None:
            for start in range(0, len(groups), cap):
                yield join_hash.unique_pairs(groups, self.first_row, start,
                                             min(start + cap, len(groups)))
            return
        total = join_hash.match_totals(groups, self.offsets)
        n_pairs = int(total[-1])
        for start in range(0, n_pairs, cap):
            row = int(np.searchsorted(total, start, side="right"))
            skip = start - (int(total[row - 1]) if row else 0)
            yield join_hash.fill_pairs(groups, self.offsets, self.order, row, skip,
                                       min(cap, n_pairs - start))


def _check_types(build: tuple[SqlType, ...], probe: tuple[SqlType, ...]) -> None:
    for b, p in zip(build, probe):
        if b.is_scaled_int != p.is_scaled_int or (b.is_numeric and p.is_numeric
                                                  and b.scale != p.scale):
            raise errors.InternalError(f"join keys of types {p} and {b} are not comparable "
                                       "(the planner casts keys to one type)")
