"""Cross-check of typing + evaluation against a real PostgreSQL 15 (see conftest.pg).

Each case is written once in a small DSL that yields both the SQL text (run by PostgreSQL
over a table) and the bound expression (run by segment.expr over the same rows as an Arrow
batch). Results are compared as PostgreSQL's text output, so formats are checked too;
numeric quotients, whose scale PostgreSQL picks per value, are compared as numbers at the
smaller of the two scales, and so are CASE / COALESCE / LEAST over numerics of different
scales (PostgreSQL keeps each value's own scale, a raympp column has one). Errors must carry
the same SQLSTATE.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal

import pyarrow as pa
import pytest
from expr_helpers import L

from planner import errors
from planner import expr as ex
from planner import functions as F
from planner import types as T
from planner import values as V
from planner.expr import Func, Interval
from segment.expr import evaluate
from segment.kernels import expr_cast

UTC = dt.timezone.utc
COLUMNS = [  # name, SqlType, PostgreSQL type
    ("i", T.INT4, "int4"), ("s", T.INT2, "int2"), ("b", T.INT8, "int8"),
    ("n", T.numeric(15, 2), "numeric(15,2)"), ("m", T.numeric(10, 4), "numeric(10,4)"),
    ("f", T.FLOAT8, "float8"), ("r", T.FLOAT4, "float4"), ("d", T.DATE, "date"),
    ("ts", T.TIMESTAMP, "timestamp"), ("tz", T.TIMESTAMPTZ, "timestamptz"),
    ("iv", T.INTERVAL, "interval"), ("t", T.TEXT, "text"), ("v", T.varchar(10), "varchar(10)"),
    ("bo", T.BOOL, "boolean"),
]
ROWS = [
    (7, 3, 10, Decimal("1234.56"), Decimal("0.0001"), 1.5, 2.5, dt.date(2000, 1, 31),
     dt.datetime(2000, 1, 31, 10, 11, 12, 500000), dt.datetime(2000, 1, 31, 10, tzinfo=UTC),
     Interval(1, 0, 0), "héllo wörld", "abc", True),
    (-7, -32768, -20, Decimal("-0.05"), Decimal("-1.2345"), -0.0, -1.25, dt.date(1998, 12, 1),
     dt.datetime(1998, 12, 1, 23, 59, 59), dt.datetime(1998, 12, 1, tzinfo=UTC),
     Interval(0, -1, -7200 * 10**6), "a_c", "A%C", False),
    (None,) * 14,
    (0, 0, 0, Decimal("0.00"), Decimal("0.0000"), 0.1, 0.0, dt.date(2000, 2, 29),
     dt.datetime(2000, 2, 29), dt.datetime(2000, 2, 29, 23, 59, tzinfo=UTC),
     Interval(12, 2, 10**6), "", "", True),
    (2147483647, 32767, 9223372036854775807, Decimal("9999999999999.99"), Decimal("999999.9999"),
     1e300, 3.4e38, dt.date(1969, 12, 31), dt.datetime(1969, 12, 31, 12, 0, 0, 1),
     dt.datetime(1969, 12, 31, 12, tzinfo=UTC), Interval(0, 0, 0), "  pad  ", "xyz", False),
    (12, 5, 123456789, Decimal("-98765.43"), Decimal("3.1416"), 2.675, 0.1, dt.date(2024, 12, 29),
     dt.datetime(2024, 12, 29, 18, 30), dt.datetime(2024, 12, 29, 18, 30, tzinfo=UTC),
     Interval(-14, 45, 90061 * 10**6), "ABC abc Abc", "a\\b", None),
]
SAFE = (1, 2, 3, 4, 6)  # rows where nothing overflows


class Q:
    """An expression as SQL text and as a bound planner expression (or the error binding
    raised, which PostgreSQL must raise too)."""

    def __init__(self, sql: str, expr=None, error: errors.QueryError | None = None):
        self.sql, self.expr, self.error = sql, expr, error


def _bind(sql: str, parts: list, fn) -> Q:
    failed = next((p.error for p in parts if p.error is not None), None)
    if failed is not None:
        return Q(sql, error=failed)
    try:
        return Q(sql, fn())
    except errors.QueryError as exc:
        return Q(sql, error=exc)


def c(name: str) -> Q:
    i = next(k for k, col in enumerate(COLUMNS) if col[0] == name)
    return Q(name, ex.ColumnRef(i, COLUMNS[i][1], name))


def lit(sql: str) -> Q:
    if re.fullmatch(r"-?\d+", sql):
        return Q(f"({sql})", L(int(sql)))
    if re.fullmatch(r"-?\d*\.\d+|-?\d+\.\d*", sql):
        return Q(f"({sql})", L(Decimal(sql)))
    m = re.fullmatch(r"(date|timestamp|timestamptz|interval) '(.*)'", sql)
    if m:
        return _bind(sql, [], lambda: F.bind_cast(L(m.group(2)), T.from_name(m.group(1))))
    if sql.startswith("'"):
        return Q(sql, L(sql[1:-1].replace("''", "'")))
    return Q(sql, {"NULL": L(None), "true": L(True), "false": L(False)}[sql])


_OPS = {Func.ADD: "+", Func.SUB: "-", Func.MUL: "*", Func.DIV: "/", Func.MOD: "%", Func.EQ: "=",
        Func.NE: "<>", Func.LT: "<", Func.LE: "<=", Func.GT: ">", Func.GE: ">=", Func.AND: "AND",
        Func.OR: "OR", Func.CONCAT: "||"}


def op(func: Func, *args: Q) -> Q:
    if func in _OPS:
        sql = f"({f' {_OPS[func]} '.join(a.sql for a in args)})"
    elif func is Func.NEG:
        sql = f"(- {args[0].sql})"
    elif func is Func.NOT:
        sql = f"(NOT {args[0].sql})"
    elif func is Func.EXTRACT:
        sql = f"extract({args[0].expr.value} from {args[1].sql})"
    else:
        sql = f"{func.value}({', '.join(a.sql for a in args)})"
    return _bind(sql, list(args), lambda: F.bind_call(func, [a.expr for a in args]))


def cast(q: Q, typename: str) -> Q:
    m = re.fullmatch(r"(\w+(?: \w+)*)(?:\((\d+)(?:,(\d+))?\))?", typename)
    t = T.from_name(m.group(1), tuple(int(g) for g in m.groups()[1:] if g is not None))
    return _bind(f"CAST({q.sql} AS {typename})", [q], lambda: F.bind_cast(q.expr, t))


def case(whens: list[tuple[Q, Q]], default: Q | None = None) -> Q:
    sql = " ".join(f"WHEN {a.sql} THEN {b.sql}" for a, b in whens)
    sql = f"(CASE {sql}{f' ELSE {default.sql}' if default else ''} END)"
    parts = [x for w in whens for x in w] + ([default] if default else [])
    return _bind(sql, parts, lambda: F.bind_case([(a.expr, b.expr) for a, b in whens],
                                                 default.expr if default else None))


def in_(q: Q, values: list[Q], negated: bool = False) -> Q:
    sql = f"({q.sql} {'NOT ' if negated else ''}IN ({', '.join(v.sql for v in values)}))"
    return _bind(sql, [q] + values, lambda: F.bind_in(q.expr, [v.expr for v in values], negated))


def like(q: Q, pattern: str, negated=False, ci=False) -> Q:
    kw = ("NOT " if negated else "") + ("ILIKE" if ci else "LIKE")
    return _bind(f"({q.sql} {kw} {pattern})", [q],
                 lambda: F.bind_like(q.expr, lit(pattern).expr, negated, ci))


def isnull(q: Q, negated=False) -> Q:
    return _bind(f"({q.sql} IS {'NOT ' if negated else ''}NULL)", [q],
                 lambda: F.bind_is_null(q.expr, negated))


A = Func


def cases():
    """(name, builder, rows, mode): mode 'text' compares text exactly, 'num' as numbers."""
    i, s, b, n, m, f, r = (c(x) for x in "i s b n m f r".split())
    d, ts, tz, iv, t, v, bo = (c(x) for x in "d ts tz iv t v bo".split())
    yield from [
        # integers
        ("int add", lambda: op(A.ADD, i, s), SAFE, "text"),
        ("int mixed", lambda: op(A.MUL, i, b), SAFE, "text"),
        ("int div", lambda: op(A.DIV, i, lit("2")), SAFE, "text"),
        ("int div neg", lambda: op(A.DIV, lit("-7"), c("i")), (1, 2, 6), "text"),
        ("int mod", lambda: op(A.MOD, i, lit("3")), SAFE, "text"),
        ("int overflow", lambda: op(A.ADD, i, lit("1")), None, "text"),
        ("int2 overflow", lambda: op(A.MUL, s, s), None, "text"),
        ("int8 overflow", lambda: op(A.MUL, b, lit("2")), None, "text"),
        ("div zero", lambda: op(A.DIV, lit("1"), i), None, "text"),
        ("mod zero", lambda: op(A.MOD, b, i), None, "text"),
        ("neg smallint", lambda: op(A.NEG, s), None, "text"),
        ("abs", lambda: op(A.ABS, i), SAFE, "text"),
        # numerics
        ("num add", lambda: op(A.ADD, n, m), None, "text"),
        ("num sub int", lambda: op(A.SUB, lit("1"), n), None, "text"),
        ("num mul", lambda: op(A.MUL, n, m), None, "text"),
        ("num mul chain", lambda: op(A.MUL, op(A.MUL, n, op(A.SUB, lit("1"), m)),
                                     op(A.ADD, lit("1"), m)), None, "text"),
        ("num div", lambda: op(A.DIV, n, lit("3")), None, "num"),
        ("num div col", lambda: op(A.DIV, m, n), (1, 2, 3, 5, 6), "num"),
        ("num div zero", lambda: op(A.DIV, m, n), None, "num"),
        ("num mod", lambda: op(A.MOD, n, lit("7.5")), None, "text"),
        ("num neg", lambda: op(A.NEG, n), None, "text"),
        ("num abs", lambda: op(A.ABS, m), None, "text"),
        ("num round", lambda: op(A.ROUND, n), None, "text"),
        ("num round 1", lambda: op(A.ROUND, n, lit("1")), None, "text"),
        ("num round -2", lambda: op(A.ROUND, n, lit("-2")), None, "text"),
        ("num round 6", lambda: op(A.ROUND, m, lit("6")), None, "text"),
        ("num trunc 3", lambda: op(A.TRUNC, m, lit("3")), None, "text"),
        ("num floor", lambda: op(A.FLOOR, m), None, "text"),
        ("num ceil", lambda: op(A.CEIL, m), None, "text"),
        ("num cmp", lambda: op(A.GT, n, m), None, "text"),
        ("num cmp lit", lambda: op(A.LE, m, lit("0.0001")), None, "text"),
        ("num vs int", lambda: op(A.EQ, n, i), None, "text"),
        ("num vs float", lambda: op(A.ADD, n, f), SAFE, "text"),
        ("int + numeric lit", lambda: op(A.ADD, i, lit("0.5")), SAFE, "text"),
        ("int / numeric", lambda: op(A.DIV, i, cast(lit("3"), "numeric")), None, "num"),
        # floats
        ("float mul", lambda: op(A.MUL, f, lit("2")), None, "text"),
        ("float overflow", lambda: op(A.MUL, f, f), None, "text"),
        ("float div zero", lambda: op(A.DIV, f, r), None, "text"),
        ("float4 ops", lambda: op(A.ADD, r, r), None, "text"),
        ("float round", lambda: op(A.ROUND, f), None, "text"),
        ("float floor", lambda: op(A.FLOOR, r), None, "text"),
        ("int round", lambda: op(A.ROUND, i), SAFE, "text"),
        ("sqrt", lambda: op(A.SQRT, f), None, "text"),
        ("sqrt neg", lambda: op(A.SQRT, r), None, "text"),
        ("ln", lambda: op(A.LN, op(A.ABS, f)), (1, 3, 5, 6), "text"),
        ("exp", lambda: op(A.EXP, r), SAFE, "text"),
        ("power", lambda: op(A.POWER, f, lit("2")), SAFE, "text"),
        # comparisons and logic
        ("cmp text", lambda: op(A.LT, t, v), None, "text"),
        ("cmp date lit", lambda: op(A.LT, d, lit("'1999-01-01'")), None, "text"),
        ("cmp date ts", lambda: op(A.LE, d, op(A.SUB, lit("date '1998-12-01'"),
                                                 lit("interval '90 day'"))), None, "text"),
        ("cmp ts tz", lambda: op(A.GE, ts, tz), None, "text"),
        ("cmp interval", lambda: op(A.GT, iv, lit("interval '29 days'")), None, "text"),
        ("cmp bool", lambda: op(A.LT, bo, lit("true")), None, "text"),
        ("cmp float", lambda: op(A.GT, f, lit("1.0")), None, "text"),
        ("and or", lambda: op(A.OR, op(A.AND, bo, op(A.GT, i, lit("0"))), isnull(t)), None, "text"),
        ("not", lambda: op(A.NOT, bo), None, "text"),
        ("and lazy", lambda: op(A.AND, op(A.NE, i, lit("0")), op(A.GT, op(A.DIV, lit("10"), i),
                                                                 lit("0"))), None, "text"),
        # CASE and friends
        ("case lazy", lambda: case([(op(A.NE, i, lit("0")), op(A.DIV, lit("100"), i))], lit("-1")),
         None, "text"),
        ("case mixed types", lambda: case([(bo, n)], lit("0")), None, "num"),
        ("case no else", lambda: case([(op(A.GT, i, lit("0")), t)]), None, "text"),
        ("coalesce", lambda: op(A.COALESCE, n, m, lit("0")), None, "num"),
        ("coalesce lazy", lambda: op(A.COALESCE, i, op(A.DIV, lit("1"), op(A.SUB, i, i))),
         SAFE, "text"),
        ("nullif", lambda: op(A.NULLIF, i, lit("0")), None, "text"),
        ("greatest", lambda: op(A.GREATEST, i, s, lit("NULL")), None, "text"),
        ("least text", lambda: op(A.LEAST, t, v), None, "text"),
        ("least num", lambda: op(A.LEAST, n, m, lit("2.5")), None, "num"),
        ("in", lambda: in_(i, [lit("7"), lit("0"), lit("NULL")]), None, "text"),
        ("not in", lambda: in_(i, [lit("7"), lit("12")], negated=True), None, "text"),
        ("in text", lambda: in_(t, [lit("'a_c'"), lit("''")]), None, "text"),
        ("in date", lambda: in_(d, [lit("'2000-02-29'"), lit("'1969-12-31'")]), None, "text"),
        ("is null", lambda: isnull(n), None, "text"),
        ("is not null", lambda: isnull(f, negated=True), None, "text"),
        # strings
        ("like", lambda: like(t, "'a_c'"), None, "text"),
        ("like escape", lambda: like(v, "'A\\%C'"), None, "text"),
        ("like percent", lambda: like(t, "'%b%'"), None, "text"),
        ("ilike", lambda: like(t, "'abc%'", ci=True), None, "text"),
        ("not like", lambda: like(t, "'h%'", negated=True), None, "text"),
        ("lower upper", lambda: op(A.CONCAT, op(A.LOWER, t), op(A.UPPER, t)), None, "text"),
        ("length", lambda: op(A.LENGTH, t), None, "text"),
        ("octet_length", lambda: op(A.OCTET_LENGTH, t), None, "text"),
        ("substring", lambda: op(A.SUBSTRING, t, lit("2"), lit("3")), None, "text"),
        ("substring neg", lambda: op(A.SUBSTRING, t, lit("-1"), lit("3")), None, "text"),
        ("substring col", lambda: op(A.SUBSTRING, t, s), SAFE, "text"),
        ("substring bad", lambda: op(A.SUBSTRING, t, lit("1"), i), None, "text"),
        ("strpos", lambda: op(A.POSITION, t, lit("'l'")), None, "text"),
        ("replace", lambda: op(A.REPLACE, t, lit("'l'"), lit("'LL'")), None, "text"),
        ("regexp", lambda: op(A.REGEXP_REPLACE, t, lit("'(l+)'"), lit("'<\\1>'")), None, "text"),
        ("regexp g", lambda: op(A.REGEXP_REPLACE, t, lit("'[aeiou]'"), lit("'_'"), lit("'g'")),
         None, "text"),
        ("regexp i", lambda: op(A.REGEXP_REPLACE, t, lit("'ABC'"), lit("'x\\&x'"), lit("'gi'")),
         None, "text"),
        ("btrim", lambda: op(A.TRIM, t), None, "text"),
        ("ltrim chars", lambda: op(A.LTRIM, t, lit("' ph'")), None, "text"),
        ("left", lambda: op(A.LEFT, t, lit("-2")), None, "text"),
        ("right", lambda: op(A.RIGHT, t, lit("3")), None, "text"),
        ("left col", lambda: op(A.LEFT, t, s), SAFE, "text"),
        ("starts_with", lambda: op(A.STARTS_WITH, t, lit("'a'")), None, "text"),
        ("concat op", lambda: op(A.CONCAT, t, i), None, "text"),
        ("concat fn", lambda: _bind(f"concat({t.sql}, {n.sql}, NULL, {bo.sql})", [], lambda: F.bind_call(
            A.CONCAT_FN, [t.expr, n.expr, L(None), bo.expr])), None, "text"),
        # dates and times
        ("date + int", lambda: op(A.ADD, d, i), (2, 3, 4, 6), "text"),
        ("date - int", lambda: op(A.SUB, d, lit("31")), None, "text"),
        ("date - date", lambda: op(A.SUB, d, lit("date '2000-01-01'")), None, "text"),
        ("date + interval", lambda: op(A.ADD, d, lit("interval '1 month'")), None, "text"),
        ("date - interval", lambda: op(A.SUB, d, iv), None, "text"),
        ("ts + interval", lambda: op(A.ADD, ts, iv), None, "text"),
        ("ts - interval", lambda: op(A.SUB, ts, lit("interval '1 year 1 day 1 second'")), None, "text"),
        ("tz + interval", lambda: op(A.ADD, tz, lit("interval '1 mon -1 day'")), None, "text"),
        ("ts - ts", lambda: op(A.SUB, ts, lit("timestamp '2000-01-01 12:00'")), None, "text"),
        ("ts - date", lambda: op(A.SUB, ts, d), None, "text"),
        ("interval ops", lambda: op(A.SUB, op(A.MUL, iv, lit("3")), lit("interval '1 hour'")), None, "text"),
        ("interval div", lambda: op(A.DIV, iv, lit("2")), None, "text"),
        ("interval mul float", lambda: op(A.MUL, iv, f), (1, 2, 3, 4), "text"),
        ("interval neg", lambda: op(A.NEG, iv), None, "text"),
        *[(f"extract {fl} date", (lambda fl=fl: op(A.EXTRACT, lit(f"'{fl}'"), d)), None, "text")
          for fl in ("year", "month", "day", "dow", "isodow", "doy", "quarter", "week", "isoyear",
                     "decade", "century", "millennium", "epoch", "julian")],
        *[(f"extract {fl} ts", (lambda fl=fl: op(A.EXTRACT, lit(f"'{fl}'"), ts)), None, "text")
          for fl in ("year", "hour", "minute", "second", "milliseconds", "microseconds", "epoch",
                     "week", "dow")],
        *[(f"extract {fl} interval", (lambda fl=fl: op(A.EXTRACT, lit(f"'{fl}'"), iv)), None, "text")
          for fl in ("year", "month", "day", "hour", "minute", "second", "epoch")],
        ("extract tz", lambda: op(A.EXTRACT, lit("'hour'"), tz), None, "text"),
        ("date_part", lambda: _bind(f"date_part('second', {ts.sql})", [], lambda: F.bind_call(
            A.DATE_PART, [L("second"), ts.expr])), None, "text"),
        ("date_part epoch", lambda: _bind(f"date_part('epoch', {ts.sql})", [], lambda: F.bind_call(
            A.DATE_PART, [L("epoch"), ts.expr])), None, "text"),
        *[(f"date_trunc {fl}", (lambda fl=fl: _bind(f"date_trunc('{fl}', {ts.sql})", [], lambda: F.bind_call(
            A.DATE_TRUNC, [L(fl), ts.expr]))), None, "text")
          for fl in ("microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
                     "month", "quarter", "year", "decade", "century", "millennium")],
        # casts
        *[(f"cast {name} to text", (lambda name=name: cast(c(name), "text")), None, "text")
          for name, _, _ in COLUMNS],
        ("cast num int", lambda: cast(n, "int4"), SAFE, "text"),
        ("cast num int overflow", lambda: cast(n, "int4"), None, "text"),
        ("cast float int", lambda: cast(f, "int8"), SAFE, "text"),
        ("cast float4 int", lambda: cast(r, "int2"), SAFE, "text"),
        ("cast float numeric", lambda: cast(f, "numeric(12,2)"), SAFE, "text"),
        ("cast float overflow", lambda: cast(f, "numeric(12,2)"), None, "text"),
        ("cast num typmod", lambda: cast(m, "numeric(6,2)"), SAFE, "text"),
        ("cast num typmod overflow", lambda: cast(n, "numeric(6,2)"), None, "text"),
        ("cast int8 int4", lambda: cast(b, "int4"), None, "text"),
        ("cast int bool", lambda: cast(i, "boolean"), None, "text"),
        ("cast bool int", lambda: cast(bo, "int4"), None, "text"),
        ("cast float float4", lambda: cast(f, "float4"), None, "text"),
        ("cast ts date", lambda: cast(ts, "date"), None, "text"),
        ("cast tz ts", lambda: cast(tz, "timestamp"), None, "text"),
        ("cast date tz", lambda: cast(d, "timestamptz"), None, "text"),
        ("cast text varchar", lambda: cast(t, "varchar(3)"), None, "text"),
        ("cast text int", lambda: cast(v, "int4"), None, "text"),
        ("cast text numeric", lambda: cast(lit("'  12.345 '"), "numeric(5,2)"), None, "text"),
        ("cast interval text", lambda: cast(cast(cast(iv, "text"), "interval"), "text"), None, "text"),
        ("cast int float4 text", lambda: cast(cast(b, "float4"), "text"), None, "text"),
    ]


def _pg_rows(pg, sql: str, rows) -> list | errors.QueryError:
    where = f"WHERE id IN ({', '.join(str(k) for k in rows)})" if rows else ""
    try:
        cur = pg.execute(f"SELECT ({sql})::text FROM expr_t {where} ORDER BY id")
        return [r[0] for r in cur.fetchall()]
    except Exception as exc:  # psycopg.Error
        return errors.QueryError(str(exc), getattr(exc, "sqlstate", None) or "XX000")


def _ours(q: Q, batch: pa.RecordBatch) -> list | errors.QueryError:
    try:
        return evaluate(F.bind_cast(q.expr, T.TEXT), batch).to_pylist()
    except errors.QueryError as exc:
        return exc


def _numbers_equal(ours: str, theirs: str) -> bool:
    a, b = Decimal(ours), Decimal(theirs)
    scale = min(-a.as_tuple().exponent, -b.as_tuple().exponent)
    q = Decimal(1).scaleb(-scale)
    return a.quantize(q, ROUND_HALF_UP) == b.quantize(q, ROUND_HALF_UP)


@pytest.fixture(scope="module")
def table(pg):
    cols = ", ".join(f"{name} {pgtype}" for name, _, pgtype in COLUMNS)
    pg.execute("DROP TABLE IF EXISTS expr_t")
    pg.execute(f"CREATE TABLE expr_t (id int, {cols})")
    with pg.cursor() as cur:
        for k, row in enumerate(ROWS, 1):
            vals = [V.format_text(v, t) for v, (_, t, _) in zip(row, COLUMNS)]
            cur.execute(f"INSERT INTO expr_t VALUES ({k}, {', '.join(['%s'] * len(vals))})", vals)
    return pg


def _batch(rows) -> pa.RecordBatch:
    picked = [ROWS[k - 1] for k in (rows or range(1, len(ROWS) + 1))]
    arrays = [expr_cast.to_arrow([r[j] for r in picked], t) for j, (_, t, _) in enumerate(COLUMNS)]
    return pa.record_batch(arrays, names=[name for name, _, _ in COLUMNS])


CASES = list(cases())


@pytest.mark.parametrize("name,builder,rows,mode", CASES, ids=[x[0] for x in CASES])
def test_against_postgres(table, name, builder, rows, mode):
    q = builder()
    theirs = _pg_rows(table, q.sql, rows)
    ours = q.error if q.error is not None else _ours(q, _batch(rows))
    if isinstance(theirs, errors.QueryError) or isinstance(ours, errors.QueryError):
        assert isinstance(theirs, errors.QueryError) and isinstance(ours, errors.QueryError), \
            f"{q.sql}: postgres {theirs!r} / raympp {ours!r}"
        assert ours.sqlstate == theirs.sqlstate, f"{q.sql}: {ours.message} / {theirs}"
        return
    if mode == "num":
        assert all((a is None and b is None) or (a is not None and b is not None and _numbers_equal(a, b))
                   for a, b in zip(ours, theirs)), (q.sql, ours, theirs)
    else:
        assert ours == theirs, q.sql


@pytest.mark.parametrize("name,builder,rows,mode", CASES, ids=[x[0] for x in CASES])
def test_cases_on_empty_null_and_sliced_batches(name, builder, rows, mode):
    """No PostgreSQL needed: every case evaluates on 0 rows, on all-NULL rows and on a
    slice, with the declared type and length (NULL inputs never raise)."""
    q = builder()
    if q.error is not None:
        return
    full = _batch(None)
    nulls = pa.record_batch([pa.nulls(3, a.type) for a in full.columns], schema=full.schema)
    for batch in (full.slice(0, 0), nulls, _batch(rows).slice(1)):
        try:
            out = evaluate(q.expr, batch)
        except errors.QueryError:
            assert batch.num_rows and batch is not nulls, name
            continue
        assert len(out) == batch.num_rows and out.type == q.expr.type.arrow_type(), name
