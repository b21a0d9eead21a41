"""COPY FROM in TEXT and CSV format: options, escapes, quoting, headers, the end marker,
errors with line numbers, input cut at every byte, and a 1M-row timing."""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
import pytest

from planner import errors
from planner import copy_options
from planner import types as T
from planner.copy_options import CopyFormat
from planner.schema import ColumnDef
from segment.ingest import copy_text

COLS = [ColumnDef("a", T.INT4), ColumnDef("b", T.TEXT)]
TEXT, CSV = CopyFormat.TEXT, CopyFormat.CSV


def parse(data: bytes, fmt=TEXT, cols=COLS, pieces=None, block_bytes=copy_text.BLOCK_BYTES,
          batch_rows=copy_text.BATCH_ROWS, **params):
    params = {k: v for k, v in params.items()}
    if fmt is CSV:
        params.setdefault("format", "csv")
    parser = copy_text.CopyParser(cols, fmt, copy_options.parse_copy_options(params), table="t",
                                  block_bytes=block_bytes, batch_rows=batch_rows)
    batches = []
    for piece in pieces or [data]:
        batches += parser.feed(piece)
    batches += parser.finish()
    rows = [r for b in batches for r in b.to_pylist()]
    assert parser.rows == len(rows)
    assert all(b.num_rows <= batch_rows for b in batches)
    return [tuple(r.values()) for r in rows]


def error(data: bytes, fmt=TEXT, cols=COLS, **kw) -> errors.QueryError:
    with pytest.raises(errors.QueryError) as info:
        parse(data, fmt, cols, **kw)
    return info.value


# --- options ----------------------------------------------------------------------------
def test_option_defaults():
    text = copy_options.parse_copy_options({})
    assert (text.format, text.delimiter, text.null, text.header) == (
        CopyFormat.TEXT, "\t", "\\N", False)
    csv = copy_options.parse_copy_options({"format": "CSV", "header": None})
    assert (csv.format, csv.delimiter, csv.null, csv.quote, csv.escape, csv.header) == \
        (CopyFormat.CSV, ",", "", '"', '"', True)
    match = copy_options.parse_copy_options({"format": "csv", "header": "match"})
    assert match.header and match.header_match
    custom = copy_options.parse_copy_options({"format": "csv", "quote": "'", "delimiter": ";",
                                              "null": "NULL", "encoding": "utf-8"})
    assert (custom.quote, custom.escape, custom.delimiter, custom.null) == ("'", "'", ";", "NULL")
    assert copy_options.parse_copy_options({"format": "binary"}).format is CopyFormat.BINARY


@pytest.mark.parametrize("params, state, message", [
    ({"format": "xml"}, "22023", 'COPY format "xml" not recognized'),
    ({"delimiter": "ab"}, "0A000", "COPY delimiter must be a single one-byte character"),
    ({"delimiter": "\n"}, "22023", "COPY delimiter cannot be newline or carriage return"),
    ({"delimiter": "a"}, "22023", 'COPY delimiter cannot be "a"'),
    ({"quote": "'"}, "0A000", "COPY quote available only in CSV mode"),
    ({"format": "csv", "delimiter": '"'}, "22023", "COPY delimiter and quote must be different"),
    ({"format": "csv", "null": "a,b"}, "22023",
     "COPY delimiter must not appear in the NULL specification"),
    ({"format": "binary", "null": "x"}, "42601", "cannot specify NULL in BINARY mode"),
    ({"format": "binary", "header": "true"}, "42601", "cannot specify HEADER in BINARY mode"),
    ({"header": "perhaps"}, "22023", 'header requires a Boolean value or "match"'),
    ({"encoding": "LATIN1"}, "0A000", 'COPY encoding "LATIN1" is not supported (only UTF8)'),
    ({"oids": "true"}, "42601", 'option "oids" not recognized'),
    ({"null": "a\nb"}, "22023", "COPY null representation cannot use newline or carriage return"),
])
def test_option_errors(params, state, message):
    with pytest.raises(errors.QueryError) as info:
        copy_options.parse_copy_options(params)
    assert (info.value.sqlstate, info.value.located) == (state, message)


# --- TEXT format ------------------------------------------------------------------------
def test_text_nulls_escapes_and_empty_strings():
    data = (b"1\tplain\n2\t\\N\n3\t\n4\t\\\\N\n5\ta\\tb\\nc\\\\d\\re\n"
            b"6\t\\101\\x42\\303\\251\\q\\N\n7\t\\b\\f\\v\n")
    assert parse(data) == [(1, "plain"), (2, None), (3, ""), (4, "\\N"), (5, "a\tb\nc\\d\re"),
                           (6, "ABéqN"), (7, "\b\f\v")]


def test_text_custom_delimiter_and_null_and_escaped_delimiter():
    assert parse(b"1|a\\|b\n2|NULL\n3|\\N\n", delimiter="|", null="NULL") == \
        [(1, "a|b"), (2, None), (3, "N")]
    assert parse(b"1,a\\,b\n", delimiter=",") == [(1, "a,b")]


def test_text_line_endings_and_last_line_without_newline():
    assert parse(b"1\tx\r\n2\ty\r\n") == [(1, "x"), (2, "y")]
    assert parse(b"1\tx\n2\ty") == [(1, "x"), (2, "y")]
    assert parse(b"") == []
    # A backslash before a real newline makes the newline data, as in PostgreSQL.
    assert parse(b"1\ta\\\nb\n2\tc\n") == [(1, "a\nb"), (2, "c")]


def test_text_end_marker_stops_the_data():
    assert parse(b"1\tx\n\\.\n2\ty\n") == [(1, "x")]
    assert parse(b"1\tx\n\\.") == [(1, "x")]
    assert parse(b"1\tx\n\\.\r\n") == [(1, "x")]
    assert parse(b"\\.\n") == []
    # PostgreSQL 15 ends TEXT data at an unescaped backslash-dot anywhere in a line: the
    # text before it is the last row, and anything but a newline after it is an error.
    assert parse(b"1\t\\.\n2\tb\n") == [(1, "")]
    assert parse(b"1\t\\\\.\n") == [(1, "\\.")]
    e = error(b"1\tx\n\\.x\n")
    assert (e.sqlstate, e.located) == ("22P04", "COPY t, line 2: end-of-copy marker corrupt")


def test_text_single_column_empty_line_is_empty_string():
    assert parse(b"a\n\nb\n", cols=[ColumnDef("s", T.TEXT)]) == [("a",), ("",), ("b",)]


def test_text_header_skipped_and_matched():
    assert parse(b"a\tb\n1\tx\n", header="true") == [(1, "x")]
    assert parse(b"a\tb\n1\tx\n", header="match") == [(1, "x")]
    e = error(b"a\tc\n1\tx\n", header="match")
    assert (e.sqlstate, e.located) == (
        "22P04", 'COPY t, line 1: column name mismatch in header line field 2: got "c", '
                 'expected "b"')
    e = error(b"a\n1\tx\n", header="match")
    assert e.located == "COPY t, line 1: wrong number of fields in header line: got 1, expected 2"
    assert parse(b"a\tb", header="true") == []


def test_text_nul_byte_and_bad_utf8():
    e = error(b"1\tx\n2\ta\x00b\n")
    assert (e.sqlstate, e.located) == ("22021", 'COPY t, line 2: invalid byte sequence for '
                                                'encoding "UTF8": 0x00')
    e = error(b"1\tx\n2\tx\n3\t\xff\n")
    assert (e.sqlstate, e.located) == ("22021", 'COPY t, line 3: invalid byte sequence for '
                                                'encoding "UTF8": 0xff')
    assert error(b"1\t\\377\n").sqlstate == "22021"
    assert error(b"1\t\\000\n").sqlstate == "22021"


# --- CSV format -------------------------------------------------------------------------
def test_csv_quoting_and_nulls():
    data = b'1,x\n2,\n3,""\n4,"a,b\n""c"""\n5,"\\N"\n'
    assert parse(data, CSV) == [(1, "x"), (2, None), (3, ""), (4, 'a,b\n"c"'), (5, "\\N")]


def test_csv_null_string_quoted_is_not_null():
    cols = COLS + [ColumnDef("c", T.TEXT)]
    assert parse(b'1;NULL;\n2;"NULL";x\n', CSV, cols, delimiter=";", null="NULL") == \
        [(1, None, ""), (2, "NULL", "x")]


def test_csv_escape_differs_from_quote():
    data = b'1,"x\\"y\\\\z"\n2,a\\b\n3,"p\\q"\n'
    assert parse(data, CSV, escape="\\") == [(1, 'x"y\\z'), (2, "a\\b"), (3, "p\\q")]
    assert parse(b"1,'it''s'\n", CSV, quote="'") == [(1, "it's")]


def test_csv_header_and_end_marker():
    assert parse(b'a,"b\nb"\n1,x\n', CSV, header="true") == [(1, "x")]
    assert parse(b'1,x\n\\.\n2,y\n', CSV) == [(1, "x")]
    assert parse(b'1,"\n\\.\n"\n', CSV) == [(1, "\n\\.\n")]  # inside quotes: data


def test_csv_unterminated_quote():
    e = error(b'1,x\n2,"abc\n', CSV)
    assert (e.sqlstate, e.located) == ("22P04", "COPY t, line 2: unterminated CSV quoted field")


# --- errors with line numbers -----------------------------------------------------------
@pytest.mark.parametrize("fmt, data, message", [
    (TEXT, b"1\tx\n2\tx\n3\tx\n4\tx\n5\tx\ty\n",
     "COPY t, line 5: extra data after last expected column"),
    (TEXT, b"1\tx\n2\n", 'COPY t, line 2: missing data for column "b"'),
    (CSV, b'1,x\n2,"a\nb",c\n', "COPY t, line 2: extra data after last expected column"),
    (CSV, b"1,x\n2\n", 'COPY t, line 2: missing data for column "b"'),
    (CSV, b"1,x\n\n", 'COPY t, line 2: missing data for column "b"'),
])
def test_column_count_errors(fmt, data, message):
    e = error(data, fmt)
    assert (e.sqlstate, e.located) == ("22P04", message)


def test_short_row_converts_present_fields_first():
    # PostgreSQL converts the fields it has before it notices the missing one.
    e = error(b"1\tx\n\n3\tz\n")
    assert (e.sqlstate, e.located) == (
        "22P02", 'COPY t, line 2, column a: invalid input syntax for type integer: ""')
    e = error(b"1\tx\nbad\n")
    assert e.located == 'COPY t, line 2, column a: invalid input syntax for type integer: "bad"'


def test_value_errors_name_line_and_column():
    e = error(b"1\tx\nabc\ty\n")
    assert (e.sqlstate, e.located) == (
        "22P02", 'COPY t, line 2, column a: invalid input syntax for type integer: "abc"')
    e = error(b"a,b\n1,x\n99999999999,y\n", CSV, header="true")
    assert (e.sqlstate, e.located) == (
        "22003", 'COPY t, line 3, column a: value "99999999999" is out of range for type integer')
    # A bad value before a bad record is reported first, as PostgreSQL reads row by row.
    e = error(b"1\tx\nzz\ty\n3\n")
    assert e.sqlstate == "22P02" and "line 2" in e.located


def test_not_null_violation_with_line():
    cols = [ColumnDef("a", T.INT4), ColumnDef("b", T.TEXT, not_null=True)]
    e = error(b"1\tx\n2\t\\N\n", cols=cols)
    assert (e.sqlstate, e.located) == (
        "23502", 'COPY t, line 2: null value in column "b" of relation "t" violates '
                 "not-null constraint")


def test_line_numbers_continue_across_blocks():
    data = b"".join(b"%d\tx\n" % i for i in range(1, 200)) + b"oops\tx\n"
    e = error(data, block_bytes=64, header="true")
    assert e.located == 'COPY t, line 200, column a: invalid input syntax for type integer: "oops"'


def test_many_blocks_and_batch_sizes():
    data = b"".join(b"%d\tv%d\n" % (i, i) for i in range(5000))
    rows = parse(data, pieces=[data[i:i + 999] for i in range(0, len(data), 999)],
                 block_bytes=4096, batch_rows=700)
    assert rows == [(i, f"v{i}") for i in range(5000)]


# --- chunk boundaries -------------------------------------------------------------------
AWKWARD_TEXT = ("1\tplain\n2\t\\N\n3\ttab\\there\n4\tnew\\nline\\\\slash\n5\tünï€😀\n"
                "6\t\n7\ta\\\\\n8\t\\\\.\n\\.\nignored\n").encode()
AWKWARD_CSV = ('1,plain\n2,\n3,""\n4,"multi\nline ""quoted"", comma"\n5,ünï€😀\n'
               '6,"\\."\n7,"\r\n"\n').encode()


@pytest.mark.parametrize("fmt, data", [(TEXT, AWKWARD_TEXT), (CSV, AWKWARD_CSV)])
def test_every_split_position(fmt, data):
    expected = parse(data, fmt)
    assert len(expected) == 7 or len(expected) == 8
    for cut in range(len(data) + 1):
        for block in (1, 7, 1 << 20):
            got = parse(data, fmt, pieces=[data[:cut], data[cut:]], block_bytes=block)
            assert got == expected, (cut, block)


@pytest.mark.parametrize("fmt, data", [(TEXT, AWKWARD_TEXT), (CSV, AWKWARD_CSV)])
def test_byte_by_byte(fmt, data):
    expected = parse(data, fmt)
    for block in (1, 5, 64):
        assert parse(data, fmt, pieces=[data[i:i + 1] for i in range(len(data))],
                     block_bytes=block) == expected


def test_csv_escape_split_everywhere():
    data = b'1,"a\\"b\nc"\n2,"\\\\"\n3,x\n'
    expected = parse(data, CSV, escape="\\")
    assert expected == [(1, 'a"b\nc'), (2, "\\"), (3, "x")]
    for cut in range(len(data) + 1):
        assert parse(data, CSV, pieces=[data[:cut], data[cut:]], block_bytes=3,
                     escape="\\") == expected


# --- speed ------------------------------------------------------------------------------
# Timing of 1M rows depends on the machine and its load: with -m heavy only.
@pytest.mark.heavy
def test_one_million_rows_timing():
    rng = np.random.default_rng(7)
    a, b = rng.integers(-10**12, 10**12, 1_000_000), rng.integers(0, 10**6, 1_000_000)
    lines = pa.compute.binary_join_element_wise(pa.array(a).cast(pa.string()),
                                                pa.array(b).cast(pa.string()), "\t")
    data = "\n".join(lines.to_pylist()).encode() + b"\n"
    cols = [ColumnDef("a", T.INT8), ColumnDef("b", T.INT8)]
    for fmt, payload in ((TEXT, data), (CSV, data.replace(b"\t", b","))):
        start = time.perf_counter()
        parser = copy_text.CopyParser(cols, fmt, copy_options.parse_copy_options(
            {"format": "csv"} if fmt is CSV else {}))
        batches = []
        for i in range(0, len(payload), 1 << 16):
            batches += parser.feed(payload[i:i + (1 << 16)])
        batches += parser.finish()
        elapsed = time.perf_counter() - start
        print(f"\nCOPY {fmt.name} 1M rows x 2 bigint ({len(payload) >> 20} MB): {elapsed:.3f} s")
        assert parser.rows == 1_000_000
        assert pa.Table.from_batches(batches).column("a").to_numpy().tolist()[:3] == \
            a[:3].tolist()
        assert elapsed < 10


# --- FORCE_NOT_NULL / FORCE_NULL (results checked against PostgreSQL 15) ----------------
FORCE_DATA = b'1,,\n2,"",""\n3,x,NULL\n4,"NULL",\n'
FORCE_COLS = [ColumnDef("a", T.INT4), ColumnDef("s", T.TEXT), ColumnDef("v", T.TEXT)]


@pytest.mark.parametrize("params, expected", [
    ({"force_not_null": "v"}, [(1, None, ""), (2, "", ""), (3, "x", "NULL"), (4, "NULL", "")]),
    ({"force_null": "s,v"}, [(1, None, None), (2, None, None), (3, "x", "NULL"),
                             (4, "NULL", None)]),
    ({"force_null": "v", "force_not_null": "v"}, [(1, None, ""), (2, "", None), (3, "x", "NULL"),
                                                  (4, "NULL", "")]),
    ({"force_null": "v", "null": "NULL"}, [(1, "", ""), (2, "", ""), (3, "x", None),
                                           (4, "NULL", "")]),
    ({"force_not_null": "s, v"}, [(1, "", ""), (2, "", ""), (3, "x", "NULL"), (4, "NULL", "")]),
])
def test_csv_force_null_options(params, expected):
    assert parse(FORCE_DATA, CSV, FORCE_COLS, **params) == expected


def test_force_option_errors():
    with pytest.raises(errors.QueryError) as info:
        parse(FORCE_DATA, CSV, FORCE_COLS, force_null="nope")
    assert (info.value.sqlstate, info.value.located) == (
        "42P10", 'FORCE_NULL column "nope" not referenced by COPY')
    with pytest.raises(errors.FeatureNotSupported) as info:
        copy_options.parse_copy_options({"force_quote": "*"})
    assert info.value.located == "COPY force quote available only in CSV mode"
    for option in ("force_null", "force_not_null"):  # '*' only for FORCE_QUOTE before PG 17
        with pytest.raises(errors.InvalidParameterValue) as info:
            copy_options.parse_copy_options({"format": "csv", option: "*"})
        assert info.value.message == f'argument to option "{option}" must be a list of column names'
    opts = copy_options.parse_copy_options({"format": "csv", "force_quote": '(a, "B c")'})
    assert opts.force_quote == ("a", "B c")
