"""A small sqllogictest runner for raympp, with DuckDB and PostgreSQL as oracles.

It parses .slt files and runs them against a raympp server through psycopg; it leaves
starting servers to the caller (tests/conftest.py, or `--port` and `--pg-port` on the
command line).

File format (in the style of DuckDB's and DataFusion's .slt files):

    # comment lines start with '#'; records are separated by blank lines
    # segments: 2           (header, before the first record: run only at these counts)
    # heavy                 (header: the file belongs to the heavy suite)
    # nojit: skip           (header: no run with jit off: the file's statements take no
                             compiled path of their own, as DDL and DML files)
    # oracle: postgres      (header: the oracles the file is mirrored into: duckdb,
                             postgres or 'duckdb, postgres'; without it: duckdb)

    statement ok
    CREATE TABLE t (k int8, x int4) DISTRIBUTED BY (k)

    statement error 42P01
    SELECT * FROM missing

    statement error 22012 division by zero     (SQLSTATE, then an optional regex on the
    SELECT 1 / 0                                message; or only a regex)

    query IT rowsort
    SELECT k, 'v' || k FROM t WHERE k < 3
    ----
    1 v1
    2 v2

    query IRN oracle rowsort
    SELECT k % 10, avg(x), sum(amount) FROM t GROUP BY 1

    query IT oracle postgres rowsort    (compare with PostgreSQL only, in a file mirrored
    SELECT k, 'v' || k FROM t            into both; 'oracle duckdb' likewise)

    onlyif duckdb          (or: skipif duckdb / onlyif raympp / skipif raympp /
    statement ok            onlyif postgres / skipif postgres; an oracle named here
    COPY (SELECT * FROM t) TO '__TEST_DIR__/t.csv' (FORMAT csv)    must be the file's)

Query types, one letter per result column: I integer, R float (compared with relative
tolerance 1e-9 against the oracle), N numeric (compared exactly as Decimal), T text,
B boolean, D date, P timestamp (a timestamptz is compared in UTC). Sort modes: nosort
(default: the order must match) and rowsort (rows are sorted before comparing).

Expected results (literal mode) are psql's text output of each value: NULL is written
`NULL`, the empty string `(empty)`, booleans `t`/`f`, numbers, dates and timestamps exactly
as the server prints them. One row per line; with several columns the values are separated
by whitespace (runs of spaces/tabs compare equal); a one-column result is compared line by
line exactly (trailing spaces aside), which keeps EXPLAIN's indentation meaningful.

Oracle mode (`oracle` instead of an expected block): the same SQL runs on the file's
oracles (every one named in its `# oracle:` header, DuckDB when there is none; `oracle
duckdb` or `oracle postgres` names one of them), which hold the same data because every
`statement ok` is mirrored into each of them, with raympp's `DISTRIBUTED BY (...)`,
`DISTRIBUTED RANDOMLY` and `DISTRIBUTED REPLICATED` clauses removed. Each oracle's result
must agree with raympp's, value by value as the query's type letters say.

- DuckDB runs in memory, fresh per file, set to PostgreSQL's semantics where they differ by
  default (integer division, NULLS LAST ascending / FIRST descending, TimeZone UTC).
  `statement error` records do not run on it.
- PostgreSQL: a fresh database per file (`CREATE DATABASE slt_<random>` on a server the
  caller provides, dropped afterwards), sessions at raympp's defaults (TimeZone UTC,
  IntervalStyle postgres, DateStyle ISO, MDY); values come back as psycopg's Python
  objects. Every `statement error` record also runs there and must fail there too (its
  SQLSTATE and regex are checked on raympp only). The server runs as another OS user:
  COPY to or from `__TEST_DIR__` on the server side needs `skipif postgres`.

`__TEST_DIR__` in any SQL is replaced by a scratch directory for the file.
Set RAYMPP_SLT_COMPLETE=1 to rewrite the expected blocks of literal queries with raympp's
actual output (like DataFusion's --complete); review the diff before keeping it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import re
import sys
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

TYPE_LETTERS = "IRNTBDP"
ORACLES = ("duckdb", "postgres")
ENGINES = ("raympp",) + ORACLES
ORACLE_NAMES = {"duckdb": "DuckDB", "postgres": "PostgreSQL"}
FLOAT_REL_TOL = 1e-9
FLOAT_ABS_TOL = 1e-12   # sums that cancel to zero differ by rounding noise only
_SQLSTATE = re.compile(r"^[0-9A-Z]{5}$")
_DISTRIBUTED = re.compile(r"\s+DISTRIBUTED\s+(?:BY\s*\([^)]*\)|RANDOMLY|REPLICATED)",
                          re.IGNORECASE)
_CREATE = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:RECURSIVE\s+)?(TABLE|VIEW)\s+"
                     r"(?:IF\s+NOT\s+EXISTS\s+)?(\"?[\w.]+\"?)", re.IGNORECASE)
_RENAME = re.compile(r"^\s*ALTER\s+(TABLE)\s+(?:IF\s+EXISTS\s+)?[\w.\"]+\s+RENAME\s+TO\s+"
                     r"(\"?[\w.]+\"?)", re.IGNORECASE)
_CREATE_SCHEMA = re.compile(r"^\s*CREATE\s+SCHEMA\s+(?:IF\s+NOT\s+EXISTS\s+)?(\"?\w+\"?)",
                            re.IGNORECASE)
# The OIDs raympp can send; each is read back as the server's text, as psql shows it.
_TEXT_OIDS = (16, 17, 19, 20, 21, 23, 25, 26, 114, 700, 701, 1042, 1043, 1082, 1083, 1114,
              1184, 1186, 1266, 1700, 2950, 3802)
_JSON_OIDS = (114, 3802)
# time and interval: PostgreSQL's text on the oracle's side too (psycopg's timedelta
# prints another way), compared with raympp's in T columns.
_TIME_OIDS = (1083, 1186, 1266)
_BYTEA_OIDS = (17,)  # bytea: its text (hex) form on both sides
_RECORD_OIDS = (2249,)  # anonymous records: their text form, `(a,"x y")`, on both sides
# Arrays and vectors: read as their text form on both sides (T columns compare it).
_ARRAY_OIDS = (22, 30, 1000, 1002, 1003, 1005, 1006, 1007, 1009, 1014, 1015, 1016, 1021,
               1022, 1028, 1115, 1182, 1185, 1187, 1231, 1008, 2210, 2211, 4090, 4097,
               1001, 2951, 199, 3807)


# --- records --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Statement:
    sql: str
    line: int
    expect_error: bool = False
    sqlstate: str | None = None
    pattern: str | None = None
    skip: frozenset = frozenset()      # engines that do not run it


@dataclass(frozen=True)
class Query:
    sql: str
    line: int
    types: str
    rowsort: bool = False
    oracle: bool = False
    oracles: frozenset = frozenset()    # oracle mode: the oracles it is compared with
    expected: tuple[str, ...] | None = None
    # Line indexes (0-based, end exclusive) of the expected block, for RAYMPP_SLT_COMPLETE.
    span: tuple[int, int] | None = None
    skip: frozenset = frozenset()


@dataclass(frozen=True)
class SltFile:
    path: Path
    records: tuple
    segments: frozenset | None = None   # None: every segment count
    heavy: bool = False
    oracles: frozenset = frozenset({"duckdb"})   # the engines every statement is mirrored into
    nojit: bool = True                  # also run at 2 segments with jit off

    def created_tables(self) -> list[tuple[str, str]]:
        """(TABLE or VIEW, name) of what the file creates (CREATE TABLE, CREATE VIEW,
        ALTER TABLE ... RENAME TO), views first (CASCADE drops the views over a table with
        it, as in PostgreSQL)."""
        names = []
        for r in self.records:
            m = _CREATE.match(r.sql) or _RENAME.match(r.sql)
            if m and "raympp" not in r.skip and (m.group(1).upper(), m.group(2)) not in names:
                names.append((m.group(1).upper(), m.group(2)))
        return sorted(names, key=lambda kn: kn[0] != "VIEW")

    def created_schemas(self) -> list[str]:
        names = []
        for r in self.records:
            m = _CREATE_SCHEMA.match(r.sql)
            if m and "raympp" not in r.skip and m.group(1).lower() != "authorization" \
                    and m.group(1) not in names:
                names.append(m.group(1))
        return names


class ParseError(Exception):
    pass


def parse_file(path: str | Path) -> SltFile:
    path = Path(path)
    return parse(path.read_text(), path)


def parse(text: str, path: Path = Path("<string>")) -> SltFile:  # noqa: C901 - a line scanner
    lines = text.split("\n")
    records = []
    segments = None
    heavy = False
    nojit = True
    oracles = frozenset({"duckdb"})
    skip: set[str] = set()
    i = 0

    def fail(msg):
        raise ParseError(f"{path}:{i + 1}: {msg}")

    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        if not line:
            i += 1
            continue
        if line.startswith("#"):
            body = line[1:].strip()
            if not records and body.lower().startswith("segments:"):
                segments = frozenset(int(x) for x in re.split(r"[,\s]+", body[9:].strip()) if x)
            elif not records and body.lower() == "heavy":
                heavy = True
            elif not records and body.lower().replace(" ", "") == "nojit:skip":
                nojit = False
            elif not records and body.lower().startswith("oracle:"):
                names = [x for x in re.split(r"[,\s]+", body[7:].strip().lower()) if x]
                if not names or any(n not in ORACLES for n in names):
                    fail(f"expected '# oracle: {'|'.join(ORACLES)}[, ...]'")
                oracles = frozenset(names)
            i += 1
            continue
        words = line.split()
        head = words[0].lower()
        if head in ("skipif", "onlyif"):
            if len(words) != 2 or words[1].lower() not in ENGINES:
                fail(f"expected '{head} {'|'.join(ENGINES)}'")
            engine = words[1].lower()
            if engine != "raympp" and engine not in oracles:
                fail(f"'{head} {engine}': the file is not mirrored into {engine} "
                     f"(header '# oracle: ...' names {sorted(oracles)})")
            skip |= {engine} if head == "skipif" else set(ENGINES) - {engine}
            i += 1
            continue
        if head == "halt":
            break
        start = i
        i += 1
        sql_lines = []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            sql_lines.append(lines[i])
            i += 1
        sql = "\n".join(sql_lines).strip()
        if not sql:
            fail("record without SQL")
        if head == "statement":
            if i < len(lines) and lines[i].strip() == "----":
                fail("a statement has no result block")
            records.append(_statement(words, sql, start + 1, frozenset(skip), fail))
        elif head == "query":
            records.append(_query(words, sql, start + 1, frozenset(skip), lines, i, fail,
                                  oracles))
            if not records[-1].oracle:
                i = records[-1].span[1]
            elif i < len(lines) and lines[i].strip() == "----":
                fail("an oracle query has no expected block")
        else:
            fail(f"unknown record '{words[0]}'")
        skip = set()
    return SltFile(path, tuple(records), segments, heavy, oracles, nojit)


def _statement(words, sql, line, skip, fail) -> Statement:
    if len(words) >= 2 and words[1].lower() == "ok":
        if len(words) > 2:
            fail("'statement ok' takes no arguments")
        return Statement(sql, line, skip=skip)
    if len(words) >= 2 and words[1].lower() == "error":
        rest = words[2:]
        sqlstate = None
        if rest and _SQLSTATE.match(rest[0]):
            sqlstate, rest = rest[0], rest[1:]
        pattern = " ".join(rest) or None
        return Statement(sql, line, True, sqlstate, pattern, skip)
    fail("expected 'statement ok' or 'statement error [SQLSTATE] [regex]'")


def _query(words, sql, line, skip, lines, i, fail, file_oracles=frozenset({"duckdb"})
           ) -> Query:
    if len(words) < 2:
        fail("expected 'query <types> [rowsort|nosort] [oracle [duckdb|postgres]]'")
    types = words[1].upper()
    if any(c not in TYPE_LETTERS for c in types):
        fail(f"unknown type letter in '{words[1]}' (known: {TYPE_LETTERS})")
    opts = {w.lower() for w in words[2:]}
    unknown = opts - {"rowsort", "nosort", "oracle"} - set(ORACLES)
    if unknown:
        fail(f"unknown query options {sorted(unknown)}")
    named = frozenset(opts & set(ORACLES))
    if named and "oracle" not in opts:
        fail(f"an oracle name needs the 'oracle' option: 'oracle {' '.join(sorted(named))}'")
    if named - file_oracles:
        fail(f"the file is not mirrored into {', '.join(sorted(named - file_oracles))} "
             f"(header '# oracle: ...' names {sorted(file_oracles)})")
    if "oracle" in opts:
        return Query(sql, line, types, "rowsort" in opts, True, named or file_oracles,
                     skip=skip)
    if i >= len(lines) or lines[i].strip() != "----":
        fail("a literal query needs a '----' block (or the 'oracle' option)")
    begin = i + 1
    end = begin
    while end < len(lines) and lines[end].strip():
        end += 1
    expected = tuple(lines[begin:end])
    return Query(sql, line, types, "rowsort" in opts, False, expected=expected,
                 span=(begin, end), skip=skip)


# --- engines --------------------------------------------------------------------------------

class EngineError(Exception):
    def __init__(self, sqlstate: str | None, message: str):
        super().__init__(f"{sqlstate or '-----'}: {message}")
        self.sqlstate = sqlstate
        self.message = message


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple]


def run_psycopg(conn, sql: str) -> "Result | None":
    """Run one statement on a psycopg connection: its rows, or EngineError(SQLSTATE)."""
    import psycopg

    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            if cur.description is None:
                return None
            return Result([c.name for c in cur.description], cur.fetchall())
    except psycopg.Error as e:
        message = e.diag.message_primary or str(e)
        raise EngineError(e.sqlstate, message) from None


class Raympp:
    """raympp through psycopg, every value read back as the text the server sent."""

    def __init__(self, conn):
        from psycopg.types.string import TextLoader

        self.conn = conn
        for oid in _TEXT_OIDS + _ARRAY_OIDS + _RECORD_OIDS:
            conn.adapters.register_loader(oid, TextLoader)

    @classmethod
    def connect(cls, host: str, port: int, user: str = "raympp", dbname: str = "raympp"):
        import psycopg

        return cls(psycopg.connect(host=host, port=port, user=user, dbname=dbname,
                                   autocommit=True, connect_timeout=30))

    def run(self, sql: str) -> Result | None:
        return run_psycopg(self.conn, sql)

    def close(self):
        self.conn.close()


class Oracle:
    """DuckDB in memory, set to PostgreSQL's semantics where the defaults differ."""

    SETUP = ("SET integer_division = true",
             "SET default_null_order = 'nulls_last_on_asc_first_on_desc'",
             "SET TimeZone = 'UTC'")

    def __init__(self):
        import duckdb

        self.conn = duckdb.connect(":memory:")
        for s in self.SETUP:
            self.conn.execute(s)

    @staticmethod
    def translate(sql: str) -> str:
        return _DISTRIBUTED.sub("", sql)

    def run(self, sql: str) -> Result | None:
        try:
            cur = self.conn.execute(self.translate(sql))
            if cur.description is None:
                return None
            return Result([d[0] for d in cur.description], cur.fetchall())
        except Exception as e:  # duckdb raises many error classes; all are test errors here
            first = str(e).strip().split("\n")[0]   # DuckDB appends long candidate lists
            raise EngineError(None, f"{type(e).__name__}: {first}") from None

    def close(self):
        self.conn.close()


@dataclass
class PgServer:
    """A running PostgreSQL server's address (the command line's --pg-host/--pg-port)."""

    host: str = "127.0.0.1"
    port: int = 5432
    user: str = "postgres"

    def connect(self, dbname: str = "postgres"):
        import psycopg

        return psycopg.connect(host=self.host, port=self.port, user=self.user, dbname=dbname,
                               autocommit=True, connect_timeout=30)


class PgOracle:
    """A fresh PostgreSQL database for one file, on a server that outlives it.

    `server` is anything with `connect(dbname) -> psycopg connection` (autocommit): a
    PgServer, or the tests' PostgresOracle (tests/pg_oracle.py). Values come back as
    psycopg's Python objects (int, Decimal, float, str, bool, date, datetime).
    """

    SETUP = ("SET TimeZone = 'UTC'", "SET IntervalStyle = 'postgres'",
             "SET DateStyle = 'ISO, MDY'")

    def __init__(self, server):
        import uuid

        self.server = server
        self.dbname = f"slt_{uuid.uuid4().hex[:16]}"
        self.admin = server.connect("postgres")
        self.conn = None
        try:
            self.admin.execute(f"CREATE DATABASE {self.dbname}")
            self.conn = server.connect(self.dbname)
            from psycopg.types.string import TextLoader
            # json, time, interval and bytea compare as PostgreSQL's text
            for oid in _ARRAY_OIDS + _JSON_OIDS + _TIME_OIDS + _BYTEA_OIDS + _RECORD_OIDS:
                self.conn.adapters.register_loader(oid, TextLoader)
            for s in self.SETUP:
                self.conn.execute(s)
        except BaseException:
            self.close()
            raise

    translate = staticmethod(Oracle.translate)

    def run(self, sql: str) -> Result | None:
        return run_psycopg(self.conn, self.translate(sql))

    def close(self):
        try:
            if self.conn is not None:
                self.conn.close()
                self.conn = None
        finally:
            try:
                self.admin.execute(f"DROP DATABASE IF EXISTS {self.dbname} WITH (FORCE)")
            finally:
                self.admin.close()


# --- values ---------------------------------------------------------------------------------

def show(value) -> str:
    """A raympp text value as written in expected blocks."""
    if value is None:
        return "NULL"
    if value == "":
        return "(empty)"
    return value


def pg_text(v) -> str:
    """An oracle's (Python) value as PostgreSQL would print it, for T columns."""
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, float):
        return float_text(v)
    if isinstance(v, (dt.datetime, dt.time)):
        text = v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
        # PostgreSQL drops trailing zeros of the fraction and prints the offset of a
        # timestamptz as +HH (+HH:MM when it is not whole hours)
        text = re.sub(r"(\.\d*?)0+(?=$|[+-])", r"\1", text)
        return re.sub(r"([+-]\d\d):00$", r"\1", text) if v.tzinfo is not None else text
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, Decimal):  # numeric_out: every digit of the scale, never an exponent
        return format(v, "f")
    return str(v)


def float_text(v: float) -> str:
    """PostgreSQL's float8 output (extra_float_digits 1): the shortest digits that read back
    as the same value, exponent form from 1e15 and below 1e-4, 'Infinity', 'NaN'. (For a
    few integral values from 2**53 up, PostgreSQL prints more digits than the shortest.)"""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    sign, digits, exp = Decimal(repr(v)).normalize().as_tuple()
    ds = "".join(map(str, digits))
    point = len(ds) + exp          # the position of the decimal point in ds
    e10 = point - 1                # the exponent in scientific notation
    if -4 <= e10 < 15:
        if point <= 0:
            body = "0." + "0" * -point + ds
        elif point >= len(ds):
            body = ds + "0" * (point - len(ds))
        else:
            body = ds[:point] + "." + ds[point:]
    else:
        body = ds[0] + ("." + ds[1:] if len(ds) > 1 else "") + f"e{e10:+03d}"
    return ("-" if sign else "") + body


def _datetime(s: str, letter: str) -> dt.datetime:
    s = s.strip()
    if letter == "D" and not re.fullmatch(r"-?\d{4,}-\d\d-\d\d", s):
        raise ValueError("not a date")
    s = re.sub(r"[+-]\d\d(:\d\d)?$", "", s) if len(s) > 10 else s   # timestamptz offset
    if len(s) == 10:
        return dt.datetime.combine(dt.date.fromisoformat(s), dt.time())
    return dt.datetime.fromisoformat(s)


def from_text(letter: str, s: str | None):
    """raympp's text value -> a comparable Python value."""
    if s is None:
        return None
    if letter == "I":
        return int(s)
    if letter == "R":
        return float(s)
    if letter == "N":
        try:
            return Decimal(s)
        except InvalidOperation:
            raise ValueError("not a numeric") from None
    if letter == "T":
        return s
    if letter == "B":
        return {"t": True, "f": False}[s]
    return _datetime(s, letter)


def from_oracle(letter: str, v):
    """An oracle's (DuckDB's, PostgreSQL's through psycopg) Python value -> a comparable
    Python value."""
    if v is None:
        return None
    if letter == "I":
        if isinstance(v, bool) or not isinstance(v, (int, Decimal)) or int(v) != v:
            raise ValueError(f"oracle gave {type(v).__name__} {v!r} for an I column")
        return int(v)
    if letter == "R":
        return float(v)
    if letter == "N":
        if not isinstance(v, (int, Decimal)) or isinstance(v, bool):
            raise ValueError(f"oracle gave {type(v).__name__} {v!r} for an N column: use R")
        return Decimal(v)
    if letter == "T":
        return v if isinstance(v, str) else pg_text(v)
    if letter == "B":
        return bool(v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc)
        return v.replace(tzinfo=None)
    if isinstance(v, dt.date):
        return dt.datetime.combine(v, dt.time())
    raise ValueError(f"oracle gave {type(v).__name__} {v!r} for a {letter} column")


def same(letter: str, a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if letter == "R":
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)
    return a == b


def sort_key(types: str, row: tuple):
    key = []
    for letter, v in zip(types, row):
        if v is None:
            key.append((1, 0))
        elif letter == "R":
            key.append((0, float(f"{v:.9g}")))   # near-equal floats sort alike on both sides
        else:
            key.append((0, v))
    return tuple(key)


def normalize_line(line: str, n_columns: int) -> str:
    return line.rstrip() if n_columns == 1 else " ".join(line.split())


# --- running --------------------------------------------------------------------------------

@dataclass
class Failure:
    line: int
    sql: str
    message: str

    def render(self, path: Path) -> str:
        sql = self.sql if len(self.sql) < 2000 else self.sql[:2000] + " ..."
        return f"{path}:{self.line}\n  SQL: {sql}\n  {self.message}"


@dataclass
class FileOutcome:
    path: Path
    n_segments: int | None
    records_run: int = 0
    failures: list[Failure] = field(default_factory=list)
    completions: dict[int, list[str]] = field(default_factory=dict)   # record index -> lines

    def report(self) -> str:
        where = f" at {self.n_segments} segments" if self.n_segments else ""
        head = (f"{len(self.failures)} of {self.records_run} records failed in "
                f"{self.path.name}{where}")
        return "\n\n".join([head] + [f.render(self.path) for f in self.failures])


def _table(rows, limit=12) -> str:
    out = [" | ".join(show(v) if isinstance(v, str) or v is None else repr(v) for v in r)
           for r in rows[:limit]]
    if len(rows) > limit:
        out.append(f"... ({len(rows)} rows)")
    return "\n      ".join(out) if out else "(no rows)"


class Runner:
    """Runs a parsed file on raympp and on the oracles it is given: `oracle` is DuckDB's,
    `postgres` PostgreSQL's (a PgOracle); either may be None (no comparison with it)."""

    def __init__(self, raympp: Raympp, oracle: Oracle | None, test_dir: str,
                 n_segments: int | None = None, complete: bool = False,
                 postgres: PgOracle | None = None):
        self.raympp = raympp
        self.oracle = oracle
        self.postgres = postgres
        self.test_dir = test_dir
        self.n_segments = n_segments
        self.complete = complete

    @property
    def oracles(self) -> dict:
        found = {"duckdb": self.oracle, "postgres": self.postgres}
        return {name: o for name, o in found.items() if o is not None}

    def sub(self, sql: str) -> str:
        return sql.replace("__TEST_DIR__", self.test_dir)

    def run_file(self, slt: SltFile) -> FileOutcome:
        out = FileOutcome(slt.path, self.n_segments)
        tables = slt.created_tables()
        schemas = slt.created_schemas()
        self.drop(tables, schemas)
        try:
            for index, record in enumerate(slt.records):
                out.records_run += 1
                msg = (self.run_statement(record) if isinstance(record, Statement)
                       else self.run_query(record, index, out))
                if msg:
                    out.failures.append(Failure(record.line, self.sub(record.sql), msg))
        finally:
            self.drop(tables, schemas)
        return out

    def drop(self, tables, schemas=()):
        """Drop the tables, views and schemas a file creates (with CASCADE: the views over
        a table with it, a schema with what it holds)."""
        statements = [f"DROP {kind} IF EXISTS {t} CASCADE" for kind, t in tables] + [
            f"DROP SCHEMA IF EXISTS {s} CASCADE" for s in schemas]
        for sql in statements:
            try:
                self.raympp.run(sql)
            except EngineError:
                pass   # the failure that matters is reported by the record that used it

    def run_statement(self, st: Statement) -> str | None:
        sql = self.sub(st.sql)
        problems = []
        if "raympp" not in st.skip:
            try:
                self.raympp.run(sql)
                if st.expect_error:
                    problems.append("expected error "
                                    f"{st.sqlstate or ''} {st.pattern or ''}".rstrip()
                                    + " but the statement succeeded")
            except EngineError as e:
                if not st.expect_error:
                    problems.append(f"raympp error {e}")
                elif st.sqlstate and e.sqlstate != st.sqlstate:
                    problems.append(f"expected SQLSTATE {st.sqlstate}, got {e}")
                elif st.pattern and not re.search(st.pattern, e.message, re.IGNORECASE):
                    problems.append(f"error message does not match /{st.pattern}/: {e}")
        for name, oracle in self.oracles.items():
            if name in st.skip or (st.expect_error and name != "postgres"):
                continue
            label = ORACLE_NAMES[name]
            try:
                oracle.run(sql)
                if st.expect_error:
                    problems.append(f"oracle ({label}) accepted the statement raympp is "
                                    f"expected to refuse\n  {label} SQL: "
                                    f"{oracle.translate(sql)}")
            except EngineError as e:
                if not st.expect_error:
                    problems.append(f"oracle ({label}) could not run the mirrored statement: "
                                    f"{e}\n  {label} SQL: {oracle.translate(sql)}")
        return "\n  ".join(problems) or None

    def run_query(self, q: Query, index: int, out: FileOutcome) -> str | None:
        if "raympp" in q.skip:
            return None
        sql = self.sub(q.sql)
        try:
            got = self.raympp.run(sql)
        except EngineError as e:
            return f"raympp error {e}"
        if got is None:
            return "the statement returned no result set"
        if len(got.columns) != len(q.types):
            return (f"raympp returned {len(got.columns)} columns {got.columns}, the record "
                    f"declares {len(q.types)} ('{q.types}')")
        if q.oracle:
            return self.compare_oracle(q, sql, got)
        return self.compare_literal(q, got, index, out)

    def compare_literal(self, q: Query, got: Result, index: int, out: FileOutcome):
        n = len(q.types)
        actual = [" ".join(show(v) for v in row) for row in got.rows]
        expected = list(q.expected)
        a_cmp = [normalize_line(x, n) for x in actual]
        e_cmp = [normalize_line(x, n) for x in expected]
        if q.rowsort:
            actual = sorted(actual, key=lambda x: normalize_line(x, n))
            a_cmp, e_cmp = sorted(a_cmp), sorted(e_cmp)
        if a_cmp == e_cmp:
            return None
        if self.complete:
            out.completions[index] = actual
        diff = [f"expected {len(e_cmp)} rows, got {len(a_cmp)}"]
        for i, (e, a) in enumerate(zip(e_cmp, a_cmp)):
            if e != a:
                diff.append(f"first difference at row {i + 1}: expected '{e}', got '{a}'")
                break
        shown = "\n      ".join(actual[:40]) + ("\n      ..." if len(actual) > 40 else "")
        return "; ".join(diff) + f"\n  raympp returned:\n      {shown or '(no rows)'}"

    def compare_oracle(self, q: Query, sql: str, got: Result) -> str | None:
        try:
            mine = [tuple(from_text(t, v) for t, v in zip(q.types, r)) for r in got.rows]
        except (ValueError, KeyError) as e:
            return f"raympp returned a value that is not of the declared type: {e!r}"
        if q.rowsort:
            mine.sort(key=lambda r: sort_key(q.types, r))
        problems = []
        for name, oracle in self.oracles.items():
            if name in q.oracles and name not in q.skip:
                problem = self.compare_with(ORACLE_NAMES[name], oracle, q, sql, got, mine)
                if problem:
                    problems.append(problem)
        return "\n  ".join(problems) or None

    @staticmethod
    def compare_with(label: str, oracle, q: Query, sql: str, got: Result, mine: list
                     ) -> str | None:
        try:
            want = oracle.run(sql)
        except EngineError as e:
            return f"oracle ({label}) failed: {e}"
        if want is None or len(want.columns) != len(q.types):
            return (f"oracle ({label}) returned columns {want and want.columns}, "
                    f"not '{q.types}'")
        try:
            theirs = [tuple(from_oracle(t, v) for t, v in zip(q.types, r)) for r in want.rows]
        except ValueError as e:
            return f"{label}: {e}"
        if q.rowsort:
            theirs.sort(key=lambda r: sort_key(q.types, r))
        problem = None
        if len(mine) != len(theirs):
            problem = f"raympp returned {len(mine)} rows, {label} {len(theirs)}"
        for i, (a, b) in enumerate(zip(mine, theirs)):
            for c, letter in enumerate(q.types):
                if not same(letter, a[c], b[c]):
                    problem = (f"row {i + 1} column {c + 1} ({got.columns[c]}): raympp "
                               f"{a[c]!r}, {label} {b[c]!r}" + (f"; also {problem}"
                                                                if problem else ""))
                    break
            else:
                continue
            break
        if problem is None:
            return None
        return (f"{problem}\n  raympp:\n      {_table(mine)}\n  {label}:\n      "
                f"{_table(theirs)}")


def rewrite(slt: SltFile, completions: dict[int, list[str]]) -> None:
    """Replace the expected blocks of the given literal queries (RAYMPP_SLT_COMPLETE)."""
    lines = slt.path.read_text().split("\n")
    for index in sorted(completions, key=lambda k: -slt.records[k].span[0]):
        begin, end = slt.records[index].span
        lines[begin:end] = completions[index]
    slt.path.write_text("\n".join(lines))


def run_path(path: Path, raympp: Raympp, n_segments: int | None, test_dir: str,
             complete: bool = False, postgres=None) -> FileOutcome:
    """Run one file. `postgres` (a PgServer, or anything with `connect(dbname)`) is
    required by files mirrored into PostgreSQL; each run gets a database of its own."""
    slt = parse_file(path)
    if "postgres" in slt.oracles and postgres is None:
        raise ValueError(f"{path} is mirrored into PostgreSQL ('# oracle:' header): "
                         f"give it a PostgreSQL server")
    oracle = Oracle() if "duckdb" in slt.oracles else None
    pg = None
    try:
        if "postgres" in slt.oracles:
            pg = PgOracle(postgres)
        outcome = Runner(raympp, oracle, test_dir, n_segments, complete,
                         postgres=pg).run_file(slt)
    finally:
        try:
            if pg is not None:
                pg.close()
        finally:
            if oracle is not None:
                oracle.close()
    if complete and outcome.completions:
        rewrite(slt, outcome.completions)
    return outcome


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Run .slt files against a running raympp server.")
    p.add_argument("files", nargs="+")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5433)
    p.add_argument("--segments", type=int, default=None,
                   help="the server's segment count (files with a '# segments:' header "
                        "that excludes it are skipped)")
    p.add_argument("--complete", action="store_true",
                   help="rewrite expected blocks of literal queries with actual output")
    p.add_argument("--pg-host", default="127.0.0.1",
                   help="the PostgreSQL server for files with '# oracle: postgres'")
    p.add_argument("--pg-port", type=int, default=None,
                   help="its port (without it, files mirrored into PostgreSQL are skipped); "
                        "each file gets a database of its own, created and dropped")
    p.add_argument("--pg-user", default="postgres",
                   help="a PostgreSQL role that may create databases")
    args = p.parse_args(argv)
    postgres = (PgServer(args.pg_host, args.pg_port, args.pg_user)
                if args.pg_port is not None else None)
    failed = 0
    for f in args.files:
        slt = parse_file(f)
        if args.segments and slt.segments and args.segments not in slt.segments:
            print(f"skip {f} (segments {sorted(slt.segments)})")
            continue
        if "postgres" in slt.oracles and postgres is None:
            print(f"skip {f} (its oracle is PostgreSQL: give --pg-port)")
            continue
        raympp = Raympp.connect(args.host, args.port)
        try:
            with tempfile.TemporaryDirectory() as d:
                outcome = run_path(Path(f), raympp, args.segments, d, args.complete,
                                   postgres)
        finally:
            raympp.close()
        print(outcome.report() if outcome.failures else
              f"ok {f} ({outcome.records_run} records)")
        failed += bool(outcome.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
