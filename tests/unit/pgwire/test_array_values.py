"""Array cells in text and binary format (array_out / array_send), checked by hand-built
bytes and by psycopg's own array loaders, and binary array parameters (array_recv)."""

import datetime as dt
import struct
from decimal import Decimal

import pyarrow as pa
import pytest
from psycopg import pq
from psycopg.adapt import Transformer

from coordinator.pgwire import params, values
from planner import errors
from planner import types as T

INTS = T.array_of(T.INT4)
TEXTS = T.array_of(T.TEXT)


def cells(arr, t, fmt):
    return values.encode_column(arr, t, fmt).to_pylist()


def test_text_cells():
    arr = pa.array([[1, None, 3], [], None], pa.list_(pa.int32()))
    assert cells(arr, INTS, 0) == ["{1,NULL,3}", "{}", None]
    arr = pa.array([["a b", "", None, 'q"t', "NULL", "x\\y", "é"]], pa.list_(pa.string()))
    assert cells(arr, TEXTS, 0) == ['{"a b","",NULL,"q\\"t","NULL","x\\\\y",é}']
    vec = pa.array([[1, 2], []], pa.list_(pa.int16()))
    assert cells(vec, T.SqlType(T.Kind.INT2VECTOR), 0) == ["1 2", ""]
    assert cells(pa.array([[True, False]], pa.list_(pa.bool_())), T.array_of(T.BOOL), 0) == \
        ["{t,f}"]
    num = pa.array([[125, -5, None]], pa.list_(pa.int64()))
    assert cells(num, T.array_of(T.numeric(5, 2)), 0) == ["{1.25,-0.05,NULL}"]
    ts = pa.array([[dt.datetime(2024, 1, 2, 3, 4, 5)]], pa.list_(pa.timestamp("us")))
    assert cells(ts, T.array_of(T.TIMESTAMP), 0) == ['{"2024-01-02 03:04:05"}']
    chars = pa.array([["ab"]], pa.list_(pa.string()))
    assert cells(chars, T.array_of(T.char(3)), 0) == ['{"ab "}']


def test_binary_cells_by_hand():
    arr = pa.array([[7, None], [], None], pa.list_(pa.int32()))
    full, empty, null = cells(arr, INTS, 1)
    assert full == struct.pack("!iiIii", 1, 1, 23, 2, 1) + struct.pack("!ii", 4, 7) + \
        struct.pack("!i", -1)
    assert empty == struct.pack("!iiI", 0, 0, 23)
    assert null is None
    vec = cells(pa.array([[3]], pa.list_(pa.int16())), T.SqlType(T.Kind.INT2VECTOR), 1)[0]
    assert vec == struct.pack("!iiIii", 1, 0, 21, 1, 0) + struct.pack("!ih", 2, 3)


@pytest.mark.parametrize(("t", "py"), [
    (INTS, [[1, None, -3], [], None]),
    (T.array_of(T.INT8), [[2**40, None]]),
    (TEXTS, [["a b", "", None, 'q"t', "{}", "x\\y"], []]),
    (T.array_of(T.FLOAT8), [[1.5, -0.25, None]]),
    (T.array_of(T.BOOL), [[True, None, False]]),
    (T.array_of(T.DATE), [[dt.date(2024, 2, 29), None]]),
    (T.array_of(T.numeric(None, 2)), [[Decimal("1.25"), Decimal("-100.00"), None]]),
])
def test_cells_load_back_with_psycopg(t, py):
    arr = pa.array(py, t.arrow_type())
    tx = Transformer()
    for fmt in (pq.Format.TEXT, pq.Format.BINARY):
        loader = tx.get_loader(t.oid, fmt)
        got = [None if c is None else loader.load(c if isinstance(c, bytes) else c.encode())
               for c in cells(arr, t, int(fmt))]
        assert got == py, fmt


def test_binary_parameters_decode_to_array_text():
    data = struct.pack("!iiIii", 1, 1, 23, 3, 1) + struct.pack("!ii", 4, 7) + \
        struct.pack("!i", -1) + struct.pack("!ii", 4, -2)
    assert params.decode(data, INTS, 1) == "{7,NULL,-2}"
    assert params.decode(struct.pack("!iiI", 0, 0, 23), INTS, 1) == "{}"
    text = struct.pack("!iiIii", 1, 0, 25, 2, 1) + struct.pack("!i", 3) + b"a b" + \
        struct.pack("!i", 0)
    assert params.decode(text, TEXTS, 1) == '{"a b",""}'
    assert params.decode(b"{1,2}", INTS, 0) == "{1,2}"  # text: the engine reads it
    with pytest.raises(errors.QueryError) as info:
        params.decode(data[:-2], INTS, 1)
    assert info.value.sqlstate == "08P01"


def test_row_description_types():
    assert INTS.oid == 1007 and INTS.typlen == -1 and INTS.typmod == -1
    assert T.array_of(T.varchar(10)).oid == 1015 and T.array_of(T.varchar(10)).typmod == 14
    assert T.array_of(T.numeric(5, 2)).oid == 1231
