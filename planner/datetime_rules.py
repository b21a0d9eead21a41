"""Typing rules of make_date, make_timestamp[tz], make_interval, justify_*, age and
date_bin, as PostgreSQL 15 resolves them. make_timestamptz's fields are a wall clock in the
session's zone (or the zone given), and age of timestamptz values subtracts their wall
clocks there (planner/zone_rules.py): both are written over the timestamp functions.

A date argument of age and date_bin resolves to timestamptz, the preferred type of the
datetime category, as PostgreSQL picks it. Values are computed by
segment/kernels/expr_make_datetime.py (columns) and planner/datetime_values.py (constants).
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors, types, zone_rules
from planner import expr as ex
from planner.coercion import adopt, coerce, is_unknown, no_function
from planner.expr import Call, Cast, Func, Literal
from planner.fold import fold_constants
from planner.temporal import TEMPORAL
from planner.time_zones import parse_at_zone, session_zone
from planner.types import Kind

# make_interval's parameters in order, with their types (all default to 0)
INTERVAL_PARAMS = ("years", "months", "weeks", "days", "hours", "mins", "secs")
_SQLGLOT_KEYS = ("year", "month", "week", "day", "hour", "minute", "second")


def _int4(func: Func, a: ex.Expr, args) -> ex.Expr:
    a = adopt(a, types.INT4) if is_unknown(a) else a
    if a.type.kind not in (Kind.INT2, Kind.INT4):
        raise no_function(func.value, args)
    return coerce(a, types.INT4)


def _float8(func: Func, a: ex.Expr, args) -> ex.Expr:
    a = adopt(a, types.FLOAT8) if is_unknown(a) else a
    if not a.type.is_number:
        raise no_function(func.value, args)
    return coerce(a, types.FLOAT8)


def _rule_make(func: Func, args) -> ex.Expr:
    """make_date(y, m, d); make_timestamp[tz](y, m, d, h, mi, sec float8)."""
    if func is Func.MAKE_TIMESTAMPTZ:
        # The fields are a wall clock in the zone given, else the session's.
        zone = session_zone()
        if len(args) == 7:
            name = args[6]
            if not (isinstance(name, Literal) and isinstance(name.value, str)):
                raise errors.FeatureNotSupported(
                    "make_timestamptz() with a time zone that is not a constant")
            zone = parse_at_zone(name.value)
        local = fold_constants(_rule_make(Func.MAKE_TIMESTAMP, args[:6]))
        if zone.is_utc:
            return fold_constants(Cast(local, types.TIMESTAMPTZ))
        return zone_rules.from_local(local, zone)
    want = 3 if func is Func.MAKE_DATE else 6
    if len(args) != want:
        raise no_function(func.value, args)
    out = [_int4(func, a, args) for a in args[:5]]
    if want == 6:
        out.append(_float8(func, args[5], args))
    result = types.DATE if func is Func.MAKE_DATE else types.TIMESTAMP
    return Call(func, tuple(out), result)


def _rule_make_interval(func: Func, args) -> ex.Expr:
    """make_interval's seven arguments (bind_make_interval fills the defaults)."""
    if len(args) != len(INTERVAL_PARAMS):
        raise no_function(func.value, args)
    out = [_int4(func, a, args) for a in args[:6]] + [_float8(func, args[6], args)]
    return Call(func, tuple(out), types.INTERVAL)


def bind_make_interval(node: exp.MakeInterval, bind) -> list[ex.Expr]:
    """make_interval's arguments by position and by name (years => 1, secs => 1.5), the
    ones not given 0; a name PostgreSQL does not have is 42883."""
    values: list[ex.Expr | None] = [None] * len(INTERVAL_PARAMS)
    named = False
    for i, key in enumerate(_SQLGLOT_KEYS):
        arg = node.args.get(key)
        if arg is None:
            continue
        if isinstance(arg, exp.Kwarg):
            name = arg.this.name.lower()
            if name not in INTERVAL_PARAMS:
                raise errors.UndefinedFunction(
                    f"function make_interval({name} => {arg.expression.sql('postgres')}) "
                    "does not exist")
            values[INTERVAL_PARAMS.index(name)] = bind(arg.expression)
            named = True
        else:
            if named:
                raise errors.SyntaxError_("positional argument cannot follow named argument")
            values[i] = bind(arg)
    zero = [ex.Literal(0, types.INT4)] * 6 + [ex.Literal(0.0, types.FLOAT8)]
    return [v if v is not None else z for v, z in zip(values, zero)]


def _interval_arg(func: Func, a: ex.Expr, args) -> ex.Expr:
    a = adopt(a, types.INTERVAL) if is_unknown(a) else a
    if a.type.kind is not Kind.INTERVAL:
        raise no_function(func.value, args)
    return a


def _rule_justify(func: Func, args) -> ex.Expr:
    if len(args) != 1:
        raise no_function(func.value, args)
    return Call(func, (_interval_arg(func, args[0], args),), types.INTERVAL)


def timestamp_args(name: str, args) -> tuple[ex.Expr, ...]:
    """Arguments of a (timestamp, timestamp) / (timestamptz, timestamptz) pair of
    signatures: timestamp when an argument is one and none is timestamptz (more exact
    matches), else timestamptz (the preferred type; also for unknown literals alone)."""
    known = [a for a in args if not is_unknown(a)]
    if any(a.type.kind not in TEMPORAL for a in known):
        raise no_function(name, args)
    kinds = {a.type.kind for a in known}
    t = types.TIMESTAMP if Kind.TIMESTAMP in kinds and Kind.TIMESTAMPTZ not in kinds \
        else types.TIMESTAMPTZ
    return tuple(coerce(adopt(a, t) if is_unknown(a) else a, t) for a in args)


def _rule_age(func: Func, args) -> ex.Expr:
    """age(a, b): the symbolic years, months, days and time from b to a."""
    if len(args) != 2:
        raise no_function(func.value, args)
    a, b = timestamp_args(func.value, args)
    zone = zone_rules.zoned() if a.type.kind is Kind.TIMESTAMPTZ else None
    if zone is not None:  # the difference of the wall clocks in the session's zone
        a, b = zone_rules.to_local(a, zone), zone_rules.to_local(b, zone)
    return Call(func, (a, b), types.INTERVAL)


def _rule_date_bin(func: Func, args) -> ex.Expr:
    """date_bin(stride, source, origin): source's bin start, for timestamp[tz]."""
    if len(args) != 3:
        raise no_function(func.value, args)
    stride = _interval_arg(func, args[0], args)
    source, origin = timestamp_args(func.value, args[1:])
    return Call(func, (stride, source, origin), source.type)


def not_unique(name: str) -> errors.QueryError:
    """42725 for f(unknown) where PostgreSQL has f of types of several categories."""
    return errors.QueryError(f"function {name}(unknown) is not unique", "42725",
                             hint="Could not choose a best candidate function. You might "
                                  "need to add explicit type casts.")


RULES = {
    Func.MAKE_DATE: _rule_make, Func.MAKE_TIMESTAMP: _rule_make,
    Func.MAKE_TIMESTAMPTZ: _rule_make, Func.MAKE_INTERVAL: _rule_make_interval,
    Func.JUSTIFY_DAYS: _rule_justify, Func.JUSTIFY_HOURS: _rule_justify,
    Func.JUSTIFY_INTERVAL: _rule_justify, Func.AGE: _rule_age, Func.DATE_BIN: _rule_date_bin,
}
