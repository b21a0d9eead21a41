"""segment.expr: string functions, dates, timestamps and intervals."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from expr_helpers import L, col, py_values, raises_sqlstate

from planner import fold, temporal
from planner import functions as F
from planner import types as T
from planner.expr import Func, Interval
from segment.expr import evaluate

bc = F.bind_call
S, N = col(0, T.TEXT, "s"), col(1, T.INT4, "n")
STRINGS = ["hello", "héllo wörld", None, "", "  pad  "]


@pytest.fixture
def text():
    return pa.record_batch([pa.array(STRINGS), pa.array([2, -1, 3, None, 0], pa.int32())],
                           names=["s", "n"])


def expect(e, batch, fn):
    assert py_values(e, batch) == [None if v is None else fn(v) for v in STRINGS]


def test_case_and_lengths(text):
    expect(bc(Func.UPPER, [S]), text, str.upper)
    expect(bc(Func.LOWER, [bc(Func.UPPER, [S])]), text, lambda v: v.upper().lower())
    expect(bc(Func.LENGTH, [S]), text, len)
    expect(bc(Func.OCTET_LENGTH, [S]), text, lambda v: len(v.encode()))


@pytest.mark.parametrize("args", [(2,), (-1, 3), (0,), (2, 100), (6,), (1, 0), (3, 2)])
def test_substring_constant_bounds(text, args):
    e = bc(Func.SUBSTRING, [S] + [L(a) for a in args])
    expect(e, text, lambda v: fold.substring(v, *args))


def test_substring_per_row_bounds(text):
    e = bc(Func.SUBSTRING, [S, N, L(3)])
    assert py_values(e, text) == [fold.substring("hello", 2, 3), fold.substring("héllo wörld", -1, 3),
                                  None, None, fold.substring("  pad  ", 0, 3)]
    e = bc(Func.SUBSTRING, [S, L(2), N])
    raises_sqlstate("22011", evaluate, e, text)
    raises_sqlstate("22011", evaluate, bc(Func.SUBSTRING, [S, L(1), L(-1)]), text)


@pytest.mark.parametrize("k", [2, -2, 0, 20, -20])
def test_left_right(text, k):
    expect(bc(Func.LEFT, [S, L(k)]), text, lambda v: v[:k] if k >= 0 else v[:max(len(v) + k, 0)])
    expect(bc(Func.RIGHT, [S, L(k)]), text,
           lambda v: v[max(len(v) - k, 0):] if k >= 0 else v[min(-k, len(v)):])


def test_left_right_per_row(text):
    assert py_values(bc(Func.LEFT, [S, N]), text) == ["he", "héllo wörl", None, None, ""]
    assert py_values(bc(Func.RIGHT, [S, N]), text) == ["lo", "éllo wörld", None, None, ""]


def test_strpos_counts_characters(text):
    expect(bc(Func.POSITION, [S, L("l")]), text, lambda v: v.find("l") + 1)
    expect(bc(Func.POSITION, [S, L("wö")]), text, lambda v: v.find("wö") + 1)
    expect(bc(Func.POSITION, [S, L("")]), text, lambda v: 1)


def test_replace_trim_starts_with(text):
    expect(bc(Func.REPLACE, [S, L("l"), L("L")]), text, lambda v: v.replace("l", "L"))
    expect(bc(Func.REPLACE, [S, L(""), L("x")]), text, lambda v: v)
    expect(bc(Func.TRIM, [S]), text, lambda v: v.strip(" "))
    expect(bc(Func.LTRIM, [S]), text, lambda v: v.lstrip(" "))
    expect(bc(Func.RTRIM, [S, L("do ")]), text, lambda v: v.rstrip("do "))
    expect(bc(Func.STARTS_WITH, [S, L("h")]), text, lambda v: v.startswith("h"))
    tab = pa.record_batch([pa.array(["\ta\t"])], names=["s"])
    assert py_values(bc(Func.TRIM, [S]), tab) == ["\ta\t"]  # btrim trims spaces only


def test_regexp_replace(text):
    expect(bc(Func.REGEXP_REPLACE, [S, L("l"), L("L")]), text, lambda v: v.replace("l", "L", 1))
    expect(bc(Func.REGEXP_REPLACE, [S, L("l"), L("L"), L("g")]), text, lambda v: v.replace("l", "L"))
    expect(bc(Func.REGEXP_REPLACE, [S, L("(l+)"), L("[\\1\\&]")]), text,
           lambda v: v.replace("ll", "[llll]", 1) if "ll" in v else v)
    expect(bc(Func.REGEXP_REPLACE, [S, L("H"), L("x"), L("i")]), text, lambda v: v.replace("h", "x", 1))
    urls = pa.record_batch([pa.array(["https://www.example.com/a/b", "http://x.org/", "nope", None])],
                           names=["s"])
    e = bc(Func.REGEXP_REPLACE, [S, L("^https?://(?:www\\.)?([^/]+)/.*$"), L("\\1")])
    assert py_values(e, urls) == ["example.com", "x.org", "nope", None]
    nl = pa.record_batch([pa.array(["a\nb"])], names=["s"])
    assert py_values(bc(Func.REGEXP_REPLACE, [S, L("a.b"), L("x")]), nl) == ["x"]
    assert py_values(bc(Func.REGEXP_REPLACE, [S, L("a"), L("\\\\")]), nl) == ["\\\nb"]
    raises_sqlstate("2201B", evaluate, bc(Func.REGEXP_REPLACE, [S, L("("), L("x")]), nl)


def test_concat(text):
    expect(bc(Func.CONCAT, [S, L("!")]), text, lambda v: v + "!")
    e = bc(Func.CONCAT, [S, N])
    assert py_values(e, text) == ["hello2", "héllo wörld-1", None, None, "  pad  0"]
    e = bc(Func.CONCAT_FN, [S, N, L(None), L(Decimal("2.50"))])
    assert py_values(e, text) == ["hello22.50", "héllo wörld-12.50", "32.50", "2.50", "  pad  02.50"]


def test_per_row_patterns():
    b = pa.record_batch([pa.array(["abcabc", "abcabc", None, "x"]), pa.array(["b", "c", "a", None])],
                        names=["s", "p"])
    s, p = col(0, T.TEXT), col(1, T.TEXT)
    assert py_values(bc(Func.POSITION, [s, p]), b) == [2, 3, None, None]
    assert py_values(bc(Func.REPLACE, [s, p, L("_")]), b) == ["a_ca_c", "ab_ab_", None, None]
    assert py_values(bc(Func.TRIM, [s, p]), b) == ["abcabc", "abcab", None, None]


# --- dates and times -----------------------------------------------------------------------
DATES = [dt.date(2000, 1, 31), dt.date(1998, 12, 1), None, dt.date(2000, 2, 29), dt.date(1969, 12, 31)]
STAMPS = [dt.datetime(2000, 1, 31, 10, 11, 12, 500000), dt.datetime(1998, 12, 1, 23, 59, 59),
          None, dt.datetime(2000, 2, 29), dt.datetime(1969, 12, 31, 12, 0, 0, 1)]
D, TS, IV = col(0, T.DATE, "d"), col(1, T.TIMESTAMP, "ts"), col(2, T.INTERVAL, "iv")


@pytest.fixture
def times():
    ivs = [pa.MonthDayNano([1, 0, 0]), pa.MonthDayNano([0, -1, -7200 * 10**9]), None,
           pa.MonthDayNano([-12, 1, 10**9]), pa.MonthDayNano([0, 0, 0])]
    return pa.record_batch([pa.array(DATES), pa.array(STAMPS, pa.timestamp("us")),
                            pa.array(ivs, pa.month_day_nano_interval())], names=["d", "ts", "iv"])


def test_date_arithmetic(times):
    assert py_values(bc(Func.ADD, [D, L(1)]), times) == [
        None if d is None else d + dt.timedelta(days=1) for d in DATES]
    assert py_values(bc(Func.SUB, [D, L(31)]), times)[0] == dt.date(1999, 12, 31)
    assert py_values(bc(Func.ADD, [L(2), D]), times)[1] == dt.date(1998, 12, 3)
    assert py_values(bc(Func.SUB, [D, F.bind_cast(L("2000-01-01"), T.DATE)]), times) == [
        30, -396, None, 59, -10958]


def test_interval_arithmetic_matches_pure_python(times):
    for sign, func in ((1, Func.ADD), (-1, Func.SUB)):
        got = py_values(bc(func, [TS, IV]), times)
        ivs = [Interval(1, 0, 0), Interval(0, -1, -7200 * 10**6), None, Interval(-12, 1, 10**6),
               Interval(0, 0, 0)]
        want = [None if t is None or iv is None else temporal.add_interval(t, iv, sign)
                for t, iv in zip(STAMPS, ivs)]
        assert got == want
    month = F.bind_cast(L("1 month"), T.INTERVAL)
    assert py_values(bc(Func.ADD, [D, month]), times) == [
        dt.datetime(2000, 2, 29), dt.datetime(1999, 1, 1), None, dt.datetime(2000, 3, 29),
        dt.datetime(1970, 1, 31)]
    assert py_values(bc(Func.SUB, [TS, F.bind_cast(L("1 year"), T.INTERVAL)]), times)[3] == \
        dt.datetime(1999, 2, 28)


def test_timestamp_difference_and_interval_ops(times):
    e = bc(Func.SUB, [TS, F.bind_cast(L("2000-01-01"), T.TIMESTAMP)])
    assert py_values(e, times)[0] == pa.MonthDayNano([0, 30, (10 * 3600 + 11 * 60 + 12) * 10**9 + 5 * 10**8])
    assert py_values(F.bind_cast(e, T.TEXT), times) == [
        "30 days 10:11:12.5", "-395 days -00:00:01", None, "59 days", "-10957 days -11:59:59.999999"]
    assert py_values(F.bind_cast(bc(Func.MUL, [IV, L(2)]), T.TEXT), times) == [
        "2 mons", "-2 days -04:00:00", None, "-2 years +2 days 00:00:02", "00:00:00"]
    assert py_values(F.bind_cast(bc(Func.DIV, [IV, L(2)]), T.TEXT), times) == [
        "15 days", "-13:00:00", None, "-6 mons +12:00:00.5", "00:00:00"]
    assert py_values(F.bind_cast(bc(Func.NEG, [IV]), T.TEXT), times)[1] == "1 day 02:00:00"
    assert py_values(bc(Func.GT, [IV, F.bind_cast(L("29 days"), T.INTERVAL)]), times) == [
        True, False, None, False, False]


@pytest.mark.parametrize("field,want", [
    ("year", [2000, 1998, None, 2000, 1969]), ("month", [1, 12, None, 2, 12]),
    ("day", [31, 1, None, 29, 31]), ("dow", [1, 2, None, 2, 3]), ("isodow", [1, 2, None, 2, 3]),
    ("doy", [31, 335, None, 60, 365]), ("quarter", [1, 4, None, 1, 4]),
    ("week", [5, 49, None, 9, 1]), ("isoyear", [2000, 1998, None, 2000, 1970]),
    ("decade", [200, 199, None, 200, 196]), ("century", [20, 20, None, 20, 20]),
    ("millennium", [2, 2, None, 2, 2]), ("epoch", [949276800, 912470400, None, 951782400, -86400]),
    ("julian", [2451575, 2451149, None, 2451604, 2440587]),
])
def test_extract_from_date(times, field, want):
    assert py_values(bc(Func.EXTRACT, [L(field), D]), times) == [
        None if w is None else Decimal(w) for w in want]


def test_extract_from_timestamp(times):
    ex_ = lambda f: py_values(bc(Func.EXTRACT, [L(f), TS]), times)  # noqa: E731
    assert ex_("hour") == [10, 23, None, 0, 12]
    assert ex_("minute") == [11, 59, None, 0, 0]
    assert ex_("second") == [Decimal("12.500000"), Decimal("59.000000"), None, Decimal("0E-6"),
                             Decimal("0.000001")]
    assert ex_("milliseconds")[0] == Decimal("12500.000")
    assert ex_("microseconds")[0] == Decimal(12500000)
    assert ex_("epoch")[0] == Decimal("949313472.500000")
    assert ex_("epoch")[4] == Decimal("-43199.999999")
    assert py_values(bc(Func.DATE_PART, [L("second"), TS]), times)[0] == 12.5
    assert py_values(bc(Func.DATE_PART, [L("hour"), D]), times)[0] == 0.0
    assert py_values(bc(Func.EXTRACT, [L("month"), IV]), times) == [1, 0, None, 0, 0]
    assert py_values(bc(Func.EXTRACT, [L("epoch"), IV]), times)[3] == Decimal("-31471199.000000")


@pytest.mark.parametrize("field,want", [
    ("microseconds", STAMPS[0]), ("milliseconds", dt.datetime(2000, 1, 31, 10, 11, 12, 500000)),
    ("second", dt.datetime(2000, 1, 31, 10, 11, 12)), ("minute", dt.datetime(2000, 1, 31, 10, 11)),
    ("hour", dt.datetime(2000, 1, 31, 10)), ("day", dt.datetime(2000, 1, 31)),
    ("week", dt.datetime(2000, 1, 31)), ("month", dt.datetime(2000, 1, 1)),
    ("quarter", dt.datetime(2000, 1, 1)), ("year", dt.datetime(2000, 1, 1)),
    ("decade", dt.datetime(2000, 1, 1)), ("century", dt.datetime(1901, 1, 1)),
    ("millennium", dt.datetime(1001, 1, 1)),
])
def test_date_trunc(times, field, want):
    got = py_values(bc(Func.DATE_TRUNC, [L(field), TS]), times)
    assert got[0] == want and got[2] is None
    assert py_values(bc(Func.DATE_TRUNC, [L("day"), TS]), times)[4] == dt.datetime(1969, 12, 31)
    # date_trunc(date) is timestamptz, as in PostgreSQL (the date is cast first)
    assert py_values(bc(Func.DATE_TRUNC, [L("week"), D]), times)[1] == dt.datetime(1998, 11, 30, tzinfo=dt.timezone.utc)


def test_timestamp_out_of_range():
    b = pa.record_batch([pa.array([2**62], pa.int64()).cast(pa.timestamp("us"))], names=["ts"])
    big = F.bind_cast(L("300000 years"), T.INTERVAL)
    raises_sqlstate("22008", evaluate, bc(Func.ADD, [col(0, T.TIMESTAMP), big]), b)
    # 2**31 - 1 days is +infinity (segment/kernels/infinite.py): no finite date reaches it
    d = pa.record_batch([pa.array([2**31 - 2], pa.int32()).cast(pa.date32())], names=["d"])
    raises_sqlstate("22008", evaluate, bc(Func.ADD, [col(0, T.DATE), L(1)]), d)


def test_timestamptz_is_utc():
    b = pa.record_batch([pa.array([dt.datetime(2000, 1, 1, 23, 30)], pa.timestamp("us", tz="UTC"))],
                        names=["tz"])
    tz = col(0, T.TIMESTAMPTZ)
    assert py_values(F.bind_cast(tz, T.TEXT), b) == ["2000-01-01 23:30:00+00"]
    assert py_values(F.bind_cast(tz, T.DATE), b) == [dt.date(2000, 1, 1)]
    assert py_values(bc(Func.EXTRACT, [L("hour"), tz]), b) == [23]
    assert py_values(bc(Func.LT, [tz, L("2000-01-02 00:00:00+01")]), b) == [False]


def test_fit_string_on_batches():
    b = pa.record_batch([pa.array(["abc", "abcde", "ab   ", None, "abcdef  "])], names=["s"])
    e = F.bind_assign(col(0, T.TEXT), T.varchar(5))
    raises_sqlstate("22001", evaluate, e, b)
    assert py_values(e, b.slice(0, 4)) == ["abc", "abcde", "ab   ", None]
    e = F.bind_assign(col(0, T.TEXT), T.char(3))
    assert py_values(e, pa.record_batch([pa.array(["ab", "abc   ", None])], names=["s"])) == [
        "ab", "abc", None]
    err = raises_sqlstate("22001", evaluate, e, b)
    assert err.message == "value too long for type character(3)"
