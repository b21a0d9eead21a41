"""A small sqllogictest runner for raympp, with DuckDB as the oracle.

It parses .slt files and runs them against a raympp server through psycopg; it leaves
starting servers to the caller (tests/conftest.py, or `--port` on the command line).

File format (in the style of DuckDB's and DataFusion's .slt files):

    # comment lines start with '#'; records are separated by blank lines
    # segments: 2           (header, before the first record: run only at these counts)
    # heavy                 (header: the file belongs to the heavy suite)

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

    onlyif duckdb          (or: skipif duckdb / onlyif raympp / skipif raympp)
    statement ok
    COPY (SELECT * FROM t) TO '__TEST_DIR__/t.csv' (FORMAT csv)

Query types, one letter per result column: I integer, R float (compared with relative
tolerance 1e-9 against the oracle), N numeric (compared exactly as Decimal), T text,
B boolean, D date, P timestamp. Sort modes: nosort (default: the order must match) and
rowsort (rows are sorted before comparing).

Expected results (literal mode) are psql's text output of each value: NULL is written
`NULL`, the empty string `(empty)`, booleans `t`/`f`, numbers, dates and timestamps exactly
as the server prints them. One row per line; with several columns the values are separated
by whitespace (runs of spaces/tabs compare equal); a one-column result is compared line by
line exactly (trailing spaces aside), which keeps EXPLAIN's indentation meaningful.

Oracle mode (`oracle` instead of an expected block): the same SQL runs on DuckDB, which
holds the same data because every `statement ok` is mirrored into it, with raympp's
`DISTRIBUTED ...` clauses removed. DuckDB is set to PostgreSQL's semantics where they
differ by default (integer division, NULLS LAST ascending / FIRST descending).

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
ENGINES = ("raympp", "duckdb")
FLOAT_REL_TOL = 1e-9
FLOAT_ABS_TOL = 1e-12   # sums that cancel to zero differ by rounding noise only
_SQLSTATE = re.compile(r"^[0-9A-Z]{5}$")
_DISTRIBUTED = re.compile(r"\s+DISTRIBUTED\s+(?:BY\s*\([^)]*\)|RANDOMLY|REPLICATED)",
                          re.IGNORECASE)
_CREATE = re.compile(r"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\"?[\w.]+\"?)",
                     re.IGNORECASE)
# The OIDs raympp can send; each is read back as the server's text, as psql shows it.
_TEXT_OIDS = (16, 17, 19, 20, 21, 23, 25, 26, 114, 700, 701, 1042, 1043, 1082, 1083, 1114,
              1184, 1186, 1700, 2950, 3802)


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

    def created_tables(self) -> list[str]:
        names = []
        for r in self.records:
            m = _CREATE.match(r.sql)
            if m and "raympp" not in r.skip and m.group(1) not in names:
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
            i += 1
            continue
        words = line.split()
        head = words[0].lower()
        if head in ("skipif", "onlyif"):
            if len(words) != 2 or words[1].lower() not in ENGINES:
                fail(f"expected '{head} raympp|duckdb'")
            engine = words[1].lower()
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
            records.append(_query(words, sql, start + 1, frozenset(skip), lines, i, fail))
            if not records[-1].oracle:
                i = records[-1].span[1]
            elif i < len(lines) and lines[i].strip() == "----":
                fail("an oracle query has no expected block")
        else:
            fail(f"unknown record '{words[0]}'")
        skip = set()
    return SltFile(path, tuple(records), segments, heavy)


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


def _query(words, sql, line, skip, lines, i, fail) -> Query:
    if len(words) < 2:
        fail("expected 'query <types> [rowsort|nosort] [oracle]'")
    types = words[1].upper()
    if any(c not in TYPE_LETTERS for c in types):
        fail(f"unknown type letter in '{words[1]}' (known: {TYPE_LETTERS})")
    opts = {w.lower() for w in words[2:]}
    unknown = opts - {"rowsort", "nosort", "oracle"}
    if unknown:
        fail(f"unknown query options {sorted(unknown)}")
    if "oracle" in opts:
        return Query(sql, line, types, "rowsort" in opts, True, skip=skip)
    if i >= len(lines) or lines[i].strip() != "----":
        fail("a literal query needs a '----' block (or the 'oracle' option)")
    begin = i + 1
    end = begin
    while end < len(lines) and lines[end].strip():
        end += 1
    expected = tuple(lines[begin:end])
    return Query(sql, line, types, "rowsort" in opts, False, expected, (begin, end), skip)


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


class Raympp:
    """raympp through psycopg, every value read back as the text the server sent."""

    def __init__(self, conn):
        from psycopg.types.string import TextLoader

        self.conn = conn
        for oid in _TEXT_OIDS:
            conn.adapters.register_loader(oid, TextLoader)

    @classmethod
    def connect(cls, host: str, port: int, user: str = "raympp", dbname: str = "raympp"):
        import psycopg

        return cls(psycopg.connect(host=host, port=port, user=user, dbname=dbname,
                                   autocommit=True, connect_timeout=30))

    def run(self, sql: str) -> Result | None:
        import psycopg

        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
                if cur.description is None:
                    return None
                return Result([c.name for c in cur.description], cur.fetchall())
        except psycopg.Error as e:
            message = e.diag.message_primary or str(e)
            raise EngineError(e.sqlstate, message) from None

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


# --- values ---------------------------------------------------------------------------------

def show(value) -> str:
    """A raympp text value as written in expected blocks."""
    if value is None:
        return "NULL"
    if value == "":
        return "(empty)"
    return value


def pg_text(v) -> str:
    """A DuckDB (Python) value as PostgreSQL would print it, for T columns."""
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


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
    """DuckDB's Python value -> a comparable Python value."""
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
    def __init__(self, raympp: Raympp, oracle: Oracle | None, test_dir: str,
                 n_segments: int | None = None, complete: bool = False):
        self.raympp = raympp
        self.oracle = oracle
        self.test_dir = test_dir
        self.n_segments = n_segments
        self.complete = complete

    def sub(self, sql: str) -> str:
        return sql.replace("__TEST_DIR__", self.test_dir)

    def run_file(self, slt: SltFile) -> FileOutcome:
        out = FileOutcome(slt.path, self.n_segments)
        tables = slt.created_tables()
        self.drop(tables)
        try:
            for index, record in enumerate(slt.records):
                out.records_run += 1
                msg = (self.run_statement(record) if isinstance(record, Statement)
                       else self.run_query(record, index, out))
                if msg:
                    out.failures.append(Failure(record.line, self.sub(record.sql), msg))
        finally:
            self.drop(tables)
        return out

    def drop(self, tables):
        for t in tables:
            try:
                self.raympp.run(f"DROP TABLE IF EXISTS {t}")
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
        if not st.expect_error and "duckdb" not in st.skip and self.oracle is not None:
            try:
                self.oracle.run(sql)
            except EngineError as e:
                problems.append(f"oracle (DuckDB) could not run the mirrored statement: "
                                f"{e.message}\n  DuckDB SQL: {self.oracle.translate(sql)}")
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
        if self.oracle is None:
            return None
        try:
            want = self.oracle.run(sql)
        except EngineError as e:
            return f"oracle (DuckDB) failed: {e.message}"
        if want is None or len(want.columns) != len(q.types):
            return f"oracle (DuckDB) returned columns {want and want.columns}, not '{q.types}'"
        try:
            mine = [tuple(from_text(t, v) for t, v in zip(q.types, r)) for r in got.rows]
        except (ValueError, KeyError) as e:
            return f"raympp returned a value that is not of the declared type: {e!r}"
        try:
            theirs = [tuple(from_oracle(t, v) for t, v in zip(q.types, r)) for r in want.rows]
        except ValueError as e:
            return f"{e}"
        if q.rowsort:
            mine.sort(key=lambda r: sort_key(q.types, r))
            theirs.sort(key=lambda r: sort_key(q.types, r))
        problem = None
        if len(mine) != len(theirs):
            problem = f"raympp returned {len(mine)} rows, DuckDB {len(theirs)}"
        for i, (a, b) in enumerate(zip(mine, theirs)):
            for c, letter in enumerate(q.types):
                if not same(letter, a[c], b[c]):
                    problem = (f"row {i + 1} column {c + 1} ({got.columns[c]}): raympp "
                               f"{a[c]!r}, DuckDB {b[c]!r}" + (f"; also {problem}"
                                                               if problem else ""))
                    break
            else:
                continue
            break
        if problem is None:
            return None
        return (f"{problem}\n  raympp:\n      {_table(mine)}\n  DuckDB:\n      {_table(theirs)}")


def rewrite(slt: SltFile, completions: dict[int, list[str]]) -> None:
    """Replace the expected blocks of the given literal queries (RAYMPP_SLT_COMPLETE)."""
    lines = slt.path.read_text().split("\n")
    for index in sorted(completions, key=lambda k: -slt.records[k].span[0]):
        begin, end = slt.records[index].span
        lines[begin:end] = completions[index]
    slt.path.write_text("\n".join(lines))


def run_path(path: Path, raympp: Raympp, n_segments: int | None, test_dir: str,
             complete: bool = False) -> FileOutcome:
    slt = parse_file(path)
    oracle = Oracle()
    try:
        outcome = Runner(raympp, oracle, test_dir, n_segments, complete).run_file(slt)
    finally:
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
    args = p.parse_args(argv)
    failed = 0
    for f in args.files:
        slt = parse_file(f)
        if args.segments and slt.segments and args.segments not in slt.segments:
            print(f"skip {f} (segments {sorted(slt.segments)})")
            continue
        raympp = Raympp.connect(args.host, args.port)
        try:
            with tempfile.TemporaryDirectory() as d:
                outcome = run_path(Path(f), raympp, args.segments, d, args.complete)
        finally:
            raympp.close()
        print(outcome.report() if outcome.failures else
              f"ok {f} ({outcome.records_run} records)")
        failed += bool(outcome.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
