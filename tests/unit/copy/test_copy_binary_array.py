"""Binary COPY FROM of arrays, json and jsonb: array_recv's layout and its errors, elements
of every kind conformed as columns are, jsonb's version byte."""

from __future__ import annotations

import struct

import pytest

from coordinator.pgwire import numeric
from planner import types as T
from planner.schema import ColumnDef
from segment.ingest import copy_binary as cb
from test_copy_binary import NULL, field, tup
from test_copy_binary import error as _error
from test_copy_binary import parse as _parse


def parse(tuples: bytes, cols):
    return _parse(cb.HEADER + tuples + cb.TRAILER, cols)


def error(tuples: bytes, cols):
    return _error(cb.HEADER + tuples + cb.TRAILER, cols)


def array(oid: int, items: list[bytes | None], ndim: int = 1, lower: int = 1,
          flags: int | None = None) -> bytes:
    """array_send's bytes for a one-dimensional array (ndim 0 when `items` is empty)."""
    has_null = int(any(i is None for i in items)) if flags is None else flags
    if not items and ndim == 1:
        return struct.pack("!iiI", 0, has_null, oid)
    head = struct.pack("!iiI", ndim, has_null, oid) + struct.pack("!ii", len(items), lower)
    return head + b"".join(NULL if i is None else field(i) for i in items)


def i4(v: int) -> bytes:
    return struct.pack("!i", v)


INTS = [ColumnDef("a", T.array_of(T.INT4))]


def test_int_arrays_with_nulls_empty_and_null_cells():
    data = tup(field(array(23, [i4(1), None, i4(-3)]))) + tup(field(array(23, []))) + \
        tup(NULL) + tup(field(array(23, [i4(7)], flags=0)))
    assert parse(data, INTS) == [([1, None, -3],), ([],), (None,), ([7],)]


def test_elements_are_conformed_like_columns():
    cols = [ColumnDef("n", T.array_of(T.numeric(5, 2))), ColumnDef("c", T.array_of(T.char(3))),
            ColumnDef("t", T.array_of(T.TEXT)), ColumnDef("j", T.array_of(T.JSONB))]
    row = tup(field(array(1700, [numeric.encode(15, 1), None])),
              field(array(1042, [b"ab ", b""])),
              field(array(25, ["é,\"x\"".encode(), b""])),
              field(array(3802, [b'\x01{"b": 1, "a": 2}'])))
    got = parse(row, cols)
    assert got == [([150, None], ["ab", ""], ['é,"x"', ""], ['{"a": 2, "b": 1}'])]


def test_element_errors_name_the_array_element():
    e = error(tup(field(array(1043, [b"ab", b"abcd"]))), [ColumnDef("v", T.array_of(T.varchar(3)))])
    assert (e.sqlstate, e.message) == ("22001", "value too long for type character varying(3)")
    e = error(tup(field(array(23, [i4(1)]))) + tup(field(array(23, [i4(1), b"\x00\x01"]))), INTS)
    assert (e.sqlstate, e.message) == ("22P03", "improper binary format in array element 2")
    assert "line 2, column a" in e.context


@pytest.mark.parametrize("cell, state, message", [
    (struct.pack("!iiI", -1, 0, 23), "22P03", "invalid number of dimensions: -1"),
    (struct.pack("!iiI", 7, 0, 23), "54000",
     "number of array dimensions (7) exceeds the maximum allowed (6)"),
    (struct.pack("!iiI", 1, 2, 23) + struct.pack("!ii", 1, 1) + field(i4(1)), "22P03",
     "invalid array flags"),
    (array(20, [struct.pack("!q", 1)]), "42804",
     "binary data has array element type 20 (bigint) instead of expected 23 (integer)"),
    (array(23, [i4(1)])[:-2], "22P03", "insufficient data left in message"),
    (array(23, [i4(1)]) + b"\x00", "22P03", "incorrect binary data format"),
    (struct.pack("!iiI", 2, 0, 23) + struct.pack("!iiii", 1, 1, 1, 1) + field(i4(1)), "0A000",
     "multidimensional arrays"),
    (array(23, [i4(1)], lower=0), "0A000", "arrays with lower bound 0 (raympp's arrays start at 1)"),
])
def test_malformed_cells(cell, state, message):
    e = error(tup(field(cell)), INTS)
    assert (e.sqlstate, e.message) == (state, message)


def test_json_is_its_text_and_jsonb_has_a_version_byte():
    cols = [ColumnDef("j", T.JSON), ColumnDef("b", T.JSONB)]
    data = tup(field(b'{"a":  [1, 2]}'), field(b'\x01{"b":1,"a":1.50}')) + tup(NULL, NULL)
    assert parse(data, cols) == [('{"a":  [1, 2]}', '{"a": 1.50, "b": 1}'), (None, None)]
    assert error(tup(field(b"{"), NULL), cols).sqlstate == "22P02"
    e = error(tup(NULL, field(b"\x02{}")), cols)
    assert (e.sqlstate, e.message) == ("XX000", "unsupported jsonb version number 2")
    assert error(tup(NULL, field(b"")), cols).message == "insufficient data left in message"


def test_int2vector_starts_at_zero_and_has_no_nulls():
    cols = [ColumnDef("v", T.SqlType(T.Kind.INT2VECTOR))]
    two = struct.pack("!h", 2)
    assert parse(tup(field(array(21, [two, two], lower=0))), cols) == [([2, 2],)]
    for cell in (array(21, [two], lower=1), array(21, [two, None], lower=0), array(21, [])):
        e = error(tup(field(cell)), cols)
        assert (e.sqlstate, e.message) == ("22P03", "invalid int2vector data")
