"""planner.functions typing rules: result types, implicit casts, errors, literals."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from expr_helpers import L, col, raises_sqlstate

from planner import expr as ex
from planner import fold
from planner import functions as F
from planner import types as T
from planner.expr import Call, Cast, Func, Literal

I2, I4, I8 = col(0, T.INT2, "s"), col(1, T.INT4, "i"), col(2, T.INT8, "b")
N152, N104 = col(3, T.numeric(15, 2), "n"), col(4, T.numeric(10, 4), "m")
F8, F4 = col(5, T.FLOAT8, "f"), col(6, T.FLOAT4, "r")
D, TS, TZ = col(7, T.DATE, "d"), col(8, T.TIMESTAMP, "ts"), col(9, T.TIMESTAMPTZ, "tz")
TXT, VC, IV, BO = col(10, T.TEXT, "t"), col(11, T.varchar(5), "v"), col(12, T.INTERVAL), col(13, T.BOOL)
NUM = col(14, T.numeric(None, 3), "u")


def typ(func, *args):
    return F.bind_call(func, list(args)).type


@pytest.mark.parametrize("args,expected", [
    ((I4, I8), T.INT8), ((I2, I2), T.INT2), ((I2, I4), T.INT4), ((I4, F8), T.FLOAT8),
    ((F4, F4), T.FLOAT4), ((F4, I4), T.FLOAT8), ((N152, F8), T.FLOAT8),
    ((I4, N152), T.numeric(16, 2)), ((N152, N104), T.numeric(18, 4)),
    ((N152, N152), T.numeric(16, 2)), ((I8, N152), T.numeric(None, 2)),
    ((N152, NUM), T.numeric(None, 3)),
])
def test_add_result_types(args, expected):
    assert typ(Func.ADD, *args) == expected


def test_numeric_scales_follow_postgres():
    assert typ(Func.MUL, N152, N152) == T.numeric(None, 4)   # 30 digits: decimal128
    assert typ(Func.MUL, N104, L(Decimal("1.5"))) == T.numeric(12, 5)  # stays scaled int64
    assert typ(Func.SUB, L(1), N152) == T.numeric(16, 2)
    assert typ(Func.MOD, N152, N104) == T.numeric(10, 4)
    # quotients: select_div_scale per value, held at a storage scale of at least 24
    assert typ(Func.DIV, N152, L(3)) == T.dynamic_numeric(T.DIVISION_SCALE)
    assert typ(Func.DIV, N104, N104) == T.dynamic_numeric(24)
    assert typ(Func.DIV, col(0, T.numeric(30, 26)), I4) == T.dynamic_numeric(26)
    # over an unconstrained numeric: + - % the larger storage scale, * at most 16 or the
    # larger one
    u = col(0, T.UNCONSTRAINED)
    assert typ(Func.ADD, u, N152) == T.dynamic_numeric(16)
    assert typ(Func.MUL, u, N152) == T.dynamic_numeric(16)


def test_integer_division_stays_integer():
    e = F.bind_call(Func.DIV, [I4, I4])
    assert e.type == T.INT4
    assert F.bind_call(Func.DIV, [L(7), L(2)]) == Literal(3, T.INT4)
    assert F.bind_call(Func.DIV, [L(-7), L(2)]) == Literal(-3, T.INT4)


def test_implicit_casts_are_inserted():
    e = F.bind_call(Func.ADD, [I4, I8])
    assert e.args[0] == Cast(I4, T.INT8) and e.args[1] is I8
    e = F.bind_call(Func.ADD, [I4, N152])
    assert e.args[0] == Cast(I4, T.numeric(10, 0))
    e = F.bind_call(Func.ADD, [N152, F8])
    assert e.args[0] == Cast(N152, T.FLOAT8)


def test_literal_operands_are_folded_into_the_right_type():
    e = F.bind_call(Func.SUB, [L(1), N152])
    assert e.args[0] == Literal(Decimal(1), T.numeric(1, 0))
    e = F.bind_call(Func.LT, [D, L("1998-12-01")])
    assert e.args[1] == Literal(dt.date(1998, 12, 1), T.DATE)
    e = F.bind_call(Func.EQ, [I2, L(5)])  # literal narrowed, column not cast
    assert e.args == (I2, Literal(5, T.INT2))
    e = F.bind_call(Func.EQ, [I4, L(3000000000)])
    assert e.args[0] == Cast(I4, T.INT8)
    e = F.bind_call(Func.EQ, [N152, L("1.555")])  # unknown literal keeps its digits
    assert e.args[1] == Literal(Decimal("1.555"), T.numeric(4, 3))


def test_bad_literals_fail_at_bind_time():
    raises_sqlstate("22007", F.bind_call, Func.LT, [D, L("yesterday-ish")])
    raises_sqlstate("22008", F.bind_call, Func.LT, [D, L("1998-02-30")])
    raises_sqlstate("22P02", F.bind_call, Func.EQ, [I4, L("12a")])
    raises_sqlstate("22P02", F.bind_cast, L("abc"), T.INT4)
    raises_sqlstate("22003", F.bind_cast, L("99999999999"), T.INT4)


@pytest.mark.parametrize("func,args,expected", [
    (Func.ADD, (D, I4), T.DATE), (Func.ADD, (I4, D), T.DATE), (Func.SUB, (D, I4), T.DATE),
    (Func.SUB, (D, D), T.INT4), (Func.ADD, (D, IV), T.TIMESTAMP), (Func.SUB, (D, IV), T.TIMESTAMP),
    (Func.ADD, (IV, D), T.TIMESTAMP), (Func.ADD, (TS, IV), T.TIMESTAMP),
    (Func.SUB, (TZ, IV), T.TIMESTAMPTZ), (Func.SUB, (TS, TS), T.INTERVAL),
    (Func.SUB, (TS, D), T.INTERVAL), (Func.ADD, (IV, IV), T.INTERVAL),
    (Func.MUL, (IV, I4), T.INTERVAL), (Func.MUL, (F8, IV), T.INTERVAL),
    (Func.DIV, (IV, F8), T.INTERVAL),
])
def test_temporal_arithmetic_types(func, args, expected):
    assert typ(func, *args) == expected


@pytest.mark.parametrize("func,args,message", [
    (Func.ADD, (D, TXT), "operator does not exist: date + text"),
    (Func.ADD, (D, D), "operator does not exist: date + date"),
    (Func.ADD, (D, I8), "operator does not exist: date + bigint"),
    (Func.MOD, (F8, I4), "operator does not exist: double precision % integer"),
    (Func.EQ, (TXT, I4), "operator does not exist: text = integer"),
    (Func.EQ, (D, I4), "operator does not exist: date = integer"),
    (Func.LOWER, (I4,), "function lower(integer) does not exist"),
    (Func.ROUND, (F8, I4), "function round(double precision, integer) does not exist"),
    (Func.CONCAT, (I4, I4), "operator does not exist: integer || integer"),
    (Func.NEG, (TXT,), "operator does not exist: - text"),
])
def test_undefined_operators(func, args, message):
    err = raises_sqlstate("42883", F.bind_call, func, list(args))
    assert err.message == message


def test_unknown_literals_in_ambiguous_spots():
    raises_sqlstate("42725", F.bind_call, Func.ADD, [D, L("1 day")])
    raises_sqlstate("42725", F.bind_call, Func.ADD, [L(None), L(None)])
    assert F.bind_call(Func.EQ, [L("a"), L("b")]) == Literal(False, T.BOOL)


def test_boolean_operators_require_booleans():
    err = raises_sqlstate("42804", F.bind_call, Func.AND, [L(1), L(True)])
    assert err.message == "argument of AND must be type boolean, not type integer"
    err = raises_sqlstate("42804", F.bind_call, Func.NOT, [I4])
    assert err.message == "argument of NOT must be type boolean, not type integer"
    assert F.bind_call(Func.OR, [BO, L("true")]).args[1] == Literal(True, T.BOOL)
    assert F.bind_call(Func.AND, [BO, L(None)]).args[1] == Literal(None, T.BOOL)
    raises_sqlstate("42804", F.bind_case, [(I4, L(1))], None)


def test_rounding_and_math_types():
    assert typ(Func.ROUND, I4) == T.FLOAT8  # round(int) resolves to round(float8)
    assert typ(Func.ROUND, F4) == T.FLOAT8
    assert typ(Func.ROUND, N152) == T.numeric(14, 0)
    assert typ(Func.ROUND, N152, L(1)) == T.numeric(15, 1)
    assert typ(Func.ROUND, N152, L(5)) == T.numeric(None, 5)
    assert typ(Func.ROUND, N152, L(-2)) == T.numeric(14, 0)
    assert typ(Func.ROUND, N152, I4) == T.numeric(16, 2)  # digits unknown: keep the scale
    assert typ(Func.TRUNC, N152, L(1)) == T.numeric(14, 1)
    assert typ(Func.FLOOR, I8) == T.FLOAT8
    assert typ(Func.CEIL, N104) == T.numeric(7, 0)
    assert typ(Func.ABS, I2) == T.INT2 and typ(Func.NEG, N152) == T.numeric(15, 2)
    assert typ(Func.SQRT, I4) == T.FLOAT8 and typ(Func.POWER, I4, L(2)) == T.FLOAT8
    assert typ(Func.POWER, N152, F8) == T.FLOAT8  # a float argument: power(float8, float8)
    # numeric versions: PostgreSQL's scale varies per value, so over a column each value
    # keeps its own (an unconstrained numeric; power holds 20 digits, the others 24)
    assert typ(Func.POWER, N152, L(2)) == T.dynamic_numeric(20)
    assert typ(Func.LN, N152) == T.dynamic_numeric(T.DIVISION_SCALE)
    assert F.bind_call(Func.LN, [L(Decimal("2.0"))]) == Literal(
        Decimal("0.6931471805599453"), T.numeric(16, 16))


def test_variadic_common_types():
    # numerics of different scales: each value keeps its own (coalesce(x, 0) prints 0)
    assert typ(Func.COALESCE, N152, L(0)) == T.dynamic_numeric(2)
    assert typ(Func.COALESCE, N152, L(Decimal("0.00"))) == T.numeric(15, 2)
    assert typ(Func.COALESCE, I4, I8) == T.INT8
    assert typ(Func.GREATEST, I4, L(Decimal("2.5"))) == T.dynamic_numeric(1)
    assert typ(Func.LEAST, D, TS) == T.TIMESTAMP
    assert typ(Func.COALESCE, TXT, VC) == T.TEXT
    assert typ(Func.NULLIF, I4, L(0)) == T.INT4
    err = raises_sqlstate("42804", F.bind_call, Func.COALESCE, [I4, D])
    assert err.message == "COALESCE types integer and date cannot be matched"


C3, C5 = col(15, T.char(3), "c"), col(16, T.char(5), "c5")


@pytest.mark.parametrize("args,expected", [
    ((TXT, VC), T.TEXT), ((VC, TXT), T.varchar()), ((C3, VC), T.BPCHAR_PADDED),
    ((VC, C3), T.varchar()), ((C3, TXT), T.BPCHAR_PADDED), ((C3, C3), T.char(3)),
    ((C3, C5), T.BPCHAR_PADDED), ((C3, L("x")), T.BPCHAR_PADDED),
    ((C3, Literal(None, T.UNKNOWN)), T.char(3)), ((VC, L("x")), T.varchar()),
    ((Literal(None, T.char(2)), L("x")), T.BPCHAR),
])
def test_string_common_types(args, expected):
    """select_common_type: the first string type wins, a length only when all have it,
    a bpchar without one padded when an input may carry trailing spaces."""
    assert typ(Func.COALESCE, *args) == expected


def test_case_resolves_else_first():
    case = F.bind_case([(col(13, T.BOOL), C3)], VC)
    assert case.type == T.varchar()
    case = F.bind_case([(col(13, T.BOOL), VC)], C3)
    assert case.type == T.BPCHAR_PADDED


def test_padded_values_unpadded_for_semantics():
    e = F.bind_call(Func.COALESCE, [C3, VC])
    assert F.bind_call(Func.LENGTH, [e]).args[0] == Cast(e, T.BPCHAR)
    assert Cast(e, T.BPCHAR) not in F.bind_call(Func.CONCAT_FN, [e]).args  # sees the spaces
    padded = F.bind_call(Func.COALESCE, [Literal("a", T.char(3)), L("b")])
    assert padded == Literal("a  ", T.BPCHAR_PADDED)
    assert F.bind_call(Func.EQ, [padded, L("a")]) == Literal(True, T.BOOL)


def test_string_function_types():
    assert typ(Func.LENGTH, VC) == T.INT4
    assert typ(Func.SUBSTRING, TXT, L(1), L(2)) == T.TEXT
    assert typ(Func.POSITION, TXT, L("a")) == T.INT4
    assert typ(Func.STARTS_WITH, TXT, L("a")) == T.BOOL
    e = F.bind_call(Func.CONCAT, [TXT, I4])
    assert e.type == T.TEXT and e.args[1] == Cast(I4, T.TEXT)
    assert F.bind_call(Func.CONCAT, [L("a"), L(1)]) == Literal("a1", T.TEXT)
    assert F.bind_call(Func.CONCAT_FN, [L("a"), L(None), L(2)]) == Literal("a2", T.TEXT)
    raises_sqlstate("42883", F.bind_call, Func.SUBSTRING, [TXT])


def test_extract_and_date_trunc_types():
    assert typ(Func.EXTRACT, L("year"), D) == T.numeric(7, 0)
    assert typ(Func.EXTRACT, L("YEARS"), TS) == T.numeric(7, 0)
    assert typ(Func.EXTRACT, L("second"), TS) == T.numeric(8, 6)
    assert typ(Func.EXTRACT, L("epoch"), TS) == T.numeric(18, 6)
    assert typ(Func.EXTRACT, L("epoch"), D) == T.numeric(15, 0)
    assert typ(Func.EXTRACT, L("epoch"), IV) == T.numeric(None, 6)
    assert typ(Func.DATE_PART, L("hour"), D) == T.FLOAT8
    assert typ(Func.DATE_TRUNC, L("month"), D) == T.TIMESTAMPTZ  # as PostgreSQL: no date variant
    assert typ(Func.DATE_TRUNC, L("day"), TZ) == T.TIMESTAMPTZ
    assert F.bind_call(Func.EXTRACT, [L("Mon"), D]).args[0] == Literal("month", T.TEXT)
    err = raises_sqlstate("0A000", F.bind_call, Func.EXTRACT, [L("hour"), D])
    assert err.message == 'unit "hour" not supported for type date'
    err = raises_sqlstate("22023", F.bind_call, Func.DATE_TRUNC, [L("bogus"), TS])
    assert err.message == 'unit "bogus" not recognized for type timestamp without time zone'
    assert typ(Func.NOW) == T.TIMESTAMPTZ


def test_like_in_case_helpers():
    e = F.bind_like(VC, L("a%"), negated=True, case_insensitive=True)
    assert isinstance(e, ex.Like) and e.negated and e.case_insensitive
    raises_sqlstate("22025", F.bind_like, TXT, L("ab\\"))
    err = raises_sqlstate("42883", F.bind_like, I4, L("1%"))
    assert err.message == "operator does not exist: integer ~~ unknown"
    e = F.bind_in(I2, [L(1), L(2), L(None)])
    assert e.arg is I2 and [v.type for v in e.values] == [T.INT2] * 3
    e = F.bind_in(I4, [L(1), L(Decimal("2.5"))])
    assert e.arg.type.is_numeric and all(v.type == e.arg.type for v in e.values)
    e = F.bind_in(D, [L("2000-01-01")])
    assert e.values[0] == Literal(dt.date(2000, 1, 1), T.DATE)
    c = F.bind_case([(F.bind_call(Func.GT, [I4, L(0)]), I4)], L(Decimal("0.5")))
    assert c.type == T.dynamic_numeric(1) and c.whens[0][1] == Cast(I4, T.dynamic_numeric(1))
    c = F.bind_case([(BO, L(1))], None)
    assert c.else_ == Literal(None, T.INT4)
    assert isinstance(F.bind_is_null(I4), ex.IsNull)
    assert F.bind_is_null(L(None)) == Literal(True, T.BOOL)


def test_cast_type_ok_matrix():
    ok = [(T.INT4, T.BOOL), (T.BOOL, T.INT4), (T.TEXT, T.DATE), (T.DATE, T.TEXT),
          (T.FLOAT8, T.numeric(5, 2)), (T.DATE, T.TIMESTAMP), (T.TIMESTAMPTZ, T.DATE),
          (T.UNKNOWN, T.INTERVAL), (T.INTERVAL, T.TEXT)]
    bad = [(T.INT8, T.BOOL), (T.DATE, T.INT4), (T.INT4, T.DATE), (T.BOOL, T.FLOAT8),
           (T.INTERVAL, T.DATE), (T.TIMESTAMP, T.INTERVAL)]
    assert all(F.cast_type_ok(a, b) for a, b in ok)
    assert not any(F.cast_type_ok(a, b) for a, b in bad)
    err = raises_sqlstate("42846", F.bind_cast, I8, T.BOOL)
    assert err.message == "cannot cast type bigint to boolean"


def test_bind_cast_unconstrained_numeric_keeps_scale():
    unconstrained = T.numeric(None, 0)  # what `::numeric` binds to
    assert F.bind_cast(N152, unconstrained) is N152
    assert F.bind_cast(I4, unconstrained) == Cast(I4, T.numeric(10, 0))
    assert F.bind_cast(F8, unconstrained).type == T.dynamic_numeric(T.FLOAT_NUMERIC_SCALE)
    assert F.bind_cast(TXT, unconstrained).type == T.UNCONSTRAINED
    assert F.bind_cast(L("1.50"), unconstrained) == Literal(Decimal("1.50"), T.numeric(3, 2))
    assert F.bind_cast(L(0.1), unconstrained) == Literal(Decimal("0.1"), T.numeric(1, 1))
    # varchar::text is a text value (pg_typeof, array_agg's type), the same strings
    assert F.bind_cast(TXT, T.TEXT) is TXT and F.bind_cast(VC, T.TEXT) == Cast(VC, T.TEXT)


def test_literal_guesses_types_like_postgres():
    assert L(42).type == T.INT4 and L(-2**31).type == T.INT4
    assert L(3000000000).type == T.INT8
    assert L(2**70).type == T.numeric(None, 0)
    assert L(Decimal("1.5")).type == T.numeric(2, 1)
    assert L(Decimal("0.05")).type == T.numeric(2, 2)
    assert L(Decimal("1E+3")).type == T.numeric(4, 0)
    assert L(1.5).type == T.FLOAT8 and L(True).type == T.BOOL and L("x").type == T.TEXT
    assert L(None).type == T.UNKNOWN and L(dt.date(2000, 1, 1)).type == T.DATE
    assert L(dt.datetime(2000, 1, 1)).type == T.TIMESTAMP
    assert L(dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)).type == T.TIMESTAMPTZ
    assert L(ex.Interval(1, 2, 3)).type == T.INTERVAL
    raises_sqlstate("22003", L, Decimal("1" * 39))


def test_calls_of_literals_are_folded():
    e = F.bind_call(Func.SUB, [F.bind_cast(L("1998-12-01"), T.DATE), L(ex.Interval(0, 90, 0))])
    assert e == Literal(dt.datetime(1998, 9, 2), T.TIMESTAMP)
    assert F.bind_call(Func.ADD, [L(Decimal("0.06")), L(Decimal("0.01"))]) == Literal(
        Decimal("0.07"), T.numeric(3, 2))
    e = F.bind_call(Func.DIV, [F.bind_cast(L(1), T.numeric(None, 0)), L(3)])
    assert e == Literal(Decimal("0.33333333333333333333"), T.numeric(None, 20))
    assert isinstance(F.bind_call(Func.DIV, [L(1), L(0)]), Call)  # the error waits for run time
    assert isinstance(F.bind_call(Func.NOW, []), Call)


def test_date_vs_midnight_timestamp_compares_dates():
    cutoff = F.bind_call(Func.SUB, [F.bind_cast(L("1998-12-01"), T.DATE), L(ex.Interval(0, 90, 0))])
    e = F.bind_call(Func.LE, [D, cutoff])
    assert e.args == (D, Literal(dt.date(1998, 9, 2), T.DATE))
    noon = F.bind_cast(L("1998-09-02 12:00"), T.TIMESTAMP)
    e = F.bind_call(Func.GT, [noon, D])
    assert e.args == (noon, Cast(D, T.TIMESTAMP))


def test_bind_assign_follows_assignment_casts():
    err = raises_sqlstate("42804", F.bind_assign, L(12), T.DATE, "d")
    assert err.message == 'column "d" is of type date but expression is of type integer'
    assert err.hint == "You will need to rewrite or cast the expression."
    for e, t in ((TXT, T.INT4), (L(1), T.BOOL), (BO, T.INT4), (I4, T.INTERVAL)):
        raises_sqlstate("42804", F.bind_assign, e, t, "c")
    assert F.bind_assign(L("12"), T.INT4) == Literal(12, T.INT4)
    assert F.bind_assign(L(Decimal("2.5")), T.INT4) == Literal(3, T.INT4)
    assert F.bind_assign(L(Decimal("1.005")), T.numeric(5, 2)) == Literal(Decimal("1.01"), T.numeric(5, 2))
    assert F.bind_assign(I4, T.TEXT) == Cast(I4, T.TEXT)
    assert F.bind_assign(L("ab   "), T.varchar(5)) == Literal("ab   ", T.varchar(5))
    assert F.bind_assign(L("ab      "), T.char(3)) == Literal("ab", T.char(3))
    too_long = F.bind_assign(L("too long"), T.varchar(5))  # fails when executed
    raises_sqlstate("22001", fold.evaluate_constant, too_long, ["too long"])
    e = F.bind_assign(TXT, T.varchar(5))
    assert e == Call(Func.FIT_STRING, (TXT,), T.varchar(5))
