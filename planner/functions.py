"""Typing of scalar operators, functions and casts as PostgreSQL types them: the binder's entry.

The binder calls `bind_call(func, args)` for every operator and function, `bind_cast` for
CAST and `::`, `bind_assign` for values stored into columns (INSERT, UPDATE), and
`bind_case` / `bind_in` / `bind_like` / `bind_is_null` for the other nodes; `literal` types
a Python constant. Each returns a typed node of planner/expr.py with implicit Casts
inserted. Quoted constants are PostgreSQL's *unknown* literals: they take the type their
context needs and are converted right here ('1998-12-01' compared with a date is a date
Literal; a bad one raises 22P02/22007 at bind time). Calls whose arguments are all
Literals are folded at once (`fold_constants`); segment/expr.py evaluates everything else
per batch.

The work is spread over: planner/typing_rules.py (the rule of each operator and function),
planner/coercion.py (casts, implicit conversions, common types), planner/fold.py (the
pure-Python constant folder), planner/values.py and planner/temporal.py (values, their text
input and output, casts of one value).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from planner import binary_rules, errors, padded_bpchar, types
from planner import expr as ex
from planner.coercion import (  # bind_assign, cast_type_ok: part of this module's interface
    TS_RANK, adopt, as_bool, as_bpchar, as_numeric, bind_assign, bind_cast, bpchar_padded,
    cast_type_ok, coerce, int_digits, is_unknown, type_name, unify, unpadded)
from planner.expr import Call, Func, Literal
from planner.fold import fold_constants
from planner.temporal import TEMPORAL, UTC
from planner.typing_rules import RULES
from planner.types import Kind, SqlType
from planner.values import check_like_pattern, int_fits, numeric_type_of

__all__ = ["bind_assign", "bind_call", "bind_case", "bind_cast", "bind_in", "bind_is_null",
           "bind_like", "cast_type_ok", "fold_constants", "literal"]


def literal(value) -> Literal:
    """A Literal typed as PostgreSQL types a constant: 42 int4, 3000000000 int8, larger
    ints and Decimals numeric with a tight precision (Decimal('1.5') is numeric(2,1)),
    float float8, str text (an unknown literal), date, datetime (aware: timestamptz), time,
    Interval, None unknown."""
    if value is None:
        return Literal(None, types.UNKNOWN)
    if isinstance(value, bool):
        return Literal(value, types.BOOL)
    if isinstance(value, int):
        if int_fits(value, types.INT4):
            return Literal(value, types.INT4)
        if int_fits(value, types.INT8):
            return Literal(value, types.INT8)
        value = Decimal(value)
    if isinstance(value, float):
        return Literal(value, types.FLOAT8)
    if isinstance(value, Decimal):
        return Literal(value, numeric_type_of(value))
    if isinstance(value, str):
        return Literal(value, types.TEXT)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return Literal(value.astimezone(UTC), types.TIMESTAMPTZ)
        return Literal(value, types.TIMESTAMP)
    if isinstance(value, dt.date):
        return Literal(value, types.DATE)
    if isinstance(value, dt.time):
        return Literal(value, types.TIME)
    if isinstance(value, ex.Interval):
        return Literal(value, types.INTERVAL)
    raise TypeError(f"no SQL literal for {type(value).__name__}")


def bind_call(func: Func, args: list[ex.Expr]) -> ex.Expr:
    """A typed Call of func over args, implicit casts inserted; folded when all args are
    Literals (a folding error is left for run time, where the row may never be reached)."""
    rule = RULES.get(func)
    if rule is None:
        raise errors.FeatureNotSupported(f"function {func.value} is not supported")
    if func in _VALUE_ONLY:  # the display scale does not matter: the value at scale S
        args = [Call(Func.NUMERIC_VALUE, (a,), types.numeric(None, a.type.scale))
                if a.type.is_dynamic else a for a in args]
    e = rule(func, padded_bpchar.call_args(func, list(args)))
    if isinstance(e, Call) and e.func not in _DSCALE_AWARE and any(
            a.type.is_dynamic for a in e.args):
        raise errors.FeatureNotSupported(
            f"{func.value}() of an unconstrained numeric (each value keeps its own scale)")
    if isinstance(e, Call) and e.func in (Func.ROUND, Func.TRUNC) and len(e.args) == 2 \
            and e.args[0].type.is_dynamic and not isinstance(e.args[1], Literal):
        raise errors.FeatureNotSupported(
            f"{func.value}() of an unconstrained numeric to a number of digits that is not "
            "a constant")
    return fold_constants(e) if isinstance(e, Call) and _all_literal(e.args) else e


# The functions whose kernels give each value of an unconstrained numeric argument the
# display scale PostgreSQL gives it (segment/kernels/expr_numeric.py, numeric_dscale.py);
# any other function of one is 0A000 rather than an answer at a fixed scale.
_DSCALE_AWARE = frozenset({
    Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD, Func.NEG, Func.ABS, Func.EQ, Func.NE,
    Func.LT, Func.LE, Func.GT, Func.GE, Func.ROUND, Func.TRUNC, Func.FLOOR, Func.CEIL,
    Func.GREATEST, Func.LEAST, Func.NULLIF, Func.COALESCE, Func.NUMERIC_VALUE,
    Func.NUMERIC_DSCALE, Func.NUMERIC_KEYED, Func.ARRAY, Func.ARRAY_APPEND,
    Func.ARRAY_PREPEND, Func.ARRAY_CAT, Func.ARRAY_POSITION, Func.ARRAY_POSITIONS,
    Func.ARRAY_REMOVE, Func.ARRAY_REPLACE, Func.NUMERIC_ROOT, Func.SQRT, Func.LN, Func.EXP,
    Func.POWER, Func.LOG, Func.LOG10})
# Functions of a numeric's value alone (to_char rounds to its template's digits first; div
# is an integral quotient, scale 0).
_VALUE_ONLY = frozenset({Func.TO_CHAR, Func.WIDTH_BUCKET, Func.DIV_INT})


def _all_literal(args) -> bool:
    return all(isinstance(a, Literal) for a in args)


def bind_case(whens: list[tuple[ex.Expr, ex.Expr]], else_: ex.Expr | None) -> ex.Expr:
    """Searched CASE; results coerced to their common type, a missing ELSE is NULL."""
    conds = [as_bool(c, "CASE/WHEN") for c, _ in whens]
    results = ([else_] if else_ is not None else []) + [r for _, r in whens]
    results, t = unify(results, "CASE")  # ELSE first, as PostgreSQL's transformCaseExpr
    default = results.pop(0) if else_ is not None else Literal(None, t)
    return fold_constants(ex.Case(tuple(zip(conds, results)), default, t))


def bind_in(arg: ex.Expr, vals: list[ex.Expr], negated: bool = False) -> ex.Expr:
    """arg [NOT] IN (values): literals that fit arg's type are converted to it; otherwise
    everything goes to the common type."""
    if not vals:
        raise errors.SyntaxError_("syntax error at or near \")\"")
    if arg.type.kind in (Kind.JSON, Kind.JSONB):
        # jsonb's equality is not its text's (1.5 = 1.50): the ORed comparisons, as
        # PostgreSQL reads IN; json has none (42883).
        eqs = [bind_call(Func.EQ, [arg, v]) for v in vals]
        either = eqs[0] if len(eqs) == 1 else bind_call(Func.OR, eqs)
        return bind_call(Func.NOT, [either]) if negated else either
    if any(x.type.kind is Kind.CHAR for x in [arg] + list(vals) if not is_unknown(x)):
        return _char_in(arg, list(vals), negated)
    fitted = [_fit_literal(v, arg.type) for v in vals] if not is_unknown(arg) else [None]
    if all(v is not None for v in fitted):
        return fold_constants(ex.InList(arg, tuple(fitted), negated))
    out, _ = unify([arg] + list(vals), "IN")
    return fold_constants(ex.InList(out[0], tuple(out[1:]), negated))


def _char_in(arg: ex.Expr, vals: list[ex.Expr], negated: bool) -> ex.Expr:
    """IN over strings with a char among them, as PostgreSQL's transformAExprIn: column
    references in the list compare one by one with their own `=` (char = varchar as
    bpchar, char = text as text), the other values too when there is one, else all at
    once in the common type of arg and them (select_common_type: the first one's)."""
    def plain_char(x):
        return x.type.kind is Kind.CHAR and not x.type.padded
    if plain_char(arg) and all(is_unknown(v) or plain_char(v) for v in vals):
        # bpchar throughout: char values are kept without trailing spaces, literals lose
        # theirs, so the list compares bytes
        fitted = [_fit_literal(v, arg.type) if is_unknown(v) else v for v in vals]
        return fold_constants(ex.InList(arg, tuple(fitted), negated))
    refs = [v for v in vals if isinstance(v, ex.ColumnRef)]
    others = [v for v in vals if not isinstance(v, ex.ColumnRef)]
    terms = []
    if len(others) > 1:
        out, _ = unify([arg] + others, "IN")
        out = [unpadded(o) for o in out]
        terms.append(fold_constants(ex.InList(out[0], tuple(out[1:]), False)))
    else:
        refs = others + refs
    terms += [bind_call(Func.EQ, [arg, v]) for v in refs]
    either = terms[0] if len(terms) == 1 else bind_call(Func.OR, terms)
    return bind_call(Func.NOT, [either]) if negated else either


def _fit_literal(v: ex.Expr, t: SqlType) -> Literal | None:
    """v converted to t when v is a literal that t represents exactly, else None."""
    if not isinstance(v, Literal):
        return None
    if v.value is None:
        return Literal(None, t)
    if t.kind is Kind.CHAR and is_unknown(v):
        return as_bpchar(v, t)
    if v.type == t or (v.type.is_string and t.is_string):
        return v
    try:
        if is_unknown(v):
            return coerce(adopt(v, t), t)
        if v.type.is_integer and t.is_integer:
            return coerce(v, t) if int_fits(v.value, t) else None
        if (v.type.is_integer or v.type.is_numeric) and t.is_numeric:
            w = as_numeric(v)
            fits = w.type.scale <= t.scale and (
                t.precision is None or int_digits(w.type) <= int_digits(t))
            return coerce(w, t) if fits else None
        if v.type.kind in TEMPORAL and t.kind in TEMPORAL:
            return coerce(v, t) if TS_RANK[t.kind] >= TS_RANK[v.type.kind] else None
    except errors.QueryError:
        return None
    return None


def bind_like(arg: ex.Expr, pattern: ex.Expr, negated: bool = False,
              case_insensitive: bool = False) -> ex.Expr:
    """arg [NOT] LIKE/ILIKE pattern (both text; backslash escapes as PostgreSQL)."""
    op = "~~*" if case_insensitive else "~~"
    if not case_insensitive and binary_rules.bytea_operands(arg, pattern):
        like = bind_call(Func.BYTEA_LIKE, [arg, pattern])  # PostgreSQL's bytealike
        return bind_call(Func.NOT, [like]) if negated else like
    if not (is_unknown(arg) or arg.type.is_string) or not (
            is_unknown(pattern) or pattern.type.is_string):
        op = ("!" if negated else "") + op
        raise errors.UndefinedFunction(
            f"operator does not exist: {type_name(arg)} {op} {type_name(pattern)}")
    # char(n) matches with its padding, as PostgreSQL's bpcharlike / bpchariclike
    arg, pattern = coerce(bpchar_padded(arg), types.TEXT), coerce(pattern, types.TEXT)
    if isinstance(pattern, Literal) and pattern.value is not None:
        check_like_pattern(pattern.value)
    return ex.Like(arg, pattern, negated, case_insensitive)


def bind_is_null(arg: ex.Expr, negated: bool = False) -> ex.Expr:
    return fold_constants(ex.IsNull(arg, negated))
