"""Where a time zone enters an expression, as explicit conversions that carry it.

PostgreSQL reads the session's TimeZone wherever an instant (timestamptz) meets a wall
clock. The binder writes those places with two conversions whose second argument is the
zone (`zone_literal`, a Zone's spec):
- Func.TO_LOCAL(instant, zone) -> timestamp: `timestamptz AT TIME ZONE zone`;
- Func.FROM_LOCAL(wall clock, zone) -> timestamptz: `timestamp AT TIME ZONE zone`;
and two for text: Func.TSTZ_OUT (text of an instant in a zone, its offset printed) and
Func.TSTZ_IN (text read in a zone unless it names its own offset).

In a UTC session the casts stay plain Casts (their conversions are the identity), so
plans and kernels of UTC sessions are unchanged. Otherwise:
- casts: timestamp/date -> timestamptz, timestamptz -> timestamp/date/text, text ->
  timestamptz (`cast`);
- date_trunc(field, timestamptz): truncated on the wall clock, read back in the zone;
- EXTRACT / date_part of timestamptz: fields of the wall clock (epoch stays absolute);
- timestamptz +/- interval: months, then days, added on the wall clock (as
  timestamptz_pl_interval does, so a day across a DST change is 23 or 25 hours), the
  time part added to the instant.
"""

from __future__ import annotations

from planner import errors, types
from planner import expr as ex
from planner.expr import Call, Cast, Func, Literal
from planner.fold import fold_constants
from planner.temporal import Infinite, Interval, interval_key
from planner.time_zones import Zone, add_in_zone, session_zone
from planner.types import Kind, SqlType
from planner.values import cast_value

_TSTZ = Kind.TIMESTAMPTZ


def zone_literal(zone: Zone) -> Literal:
    """The zone argument of the conversions: its spec, a text constant."""
    return Literal(zone.spec, types.TEXT)


def zoned() -> Zone | None:
    """The session's zone when it is not UTC (None: casts stay plain)."""
    zone = session_zone()
    return None if zone.is_utc else zone


def to_local(e: ex.Expr, zone: Zone) -> ex.Expr:
    return fold_constants(Call(Func.TO_LOCAL, (e, zone_literal(zone)), types.TIMESTAMP))


def from_local(e: ex.Expr, zone: Zone) -> ex.Expr:
    if e.type.kind is Kind.DATE:
        e = fold_constants(Cast(e, types.TIMESTAMP))
    return fold_constants(Call(Func.FROM_LOCAL, (e, zone_literal(zone)), types.TIMESTAMPTZ))


def contains_tstz(t: SqlType) -> bool:
    """Whether values of t hold timestamptz values (as elements or fields too)."""
    if t.kind is _TSTZ:
        return True
    if t.is_array:
        return contains_tstz(t.elem)
    return t.kind is Kind.RECORD and any(contains_tstz(ft) for _, ft in t.fields)


def refuse_in_json(name: str, args) -> None:
    """JSON text of timestamptz values is written in UTC by the segments' kernels: in a
    session in another zone such calls are refused rather than answered in UTC."""
    if zoned() is not None and any(contains_tstz(a.type) for a in args):
        raise errors.FeatureNotSupported(
            f"{name}() of timestamp with time zone values in a time zone other than UTC")


def involves(src: SqlType, dst: SqlType) -> bool:
    """Whether CAST(src AS dst) reads a time zone."""
    s, d = src.kind, dst.kind
    if src.is_array or dst.is_array:
        return involves(src.elem if src.is_array else src, dst.elem if dst.is_array else dst)
    if Kind.RECORD in (s, d):
        return contains_tstz(src) or contains_tstz(dst)
    if d is Kind.TIMETZ and (src.is_string or s is Kind.UNKNOWN):
        return True  # text without a zone is in the session's
    if (s is _TSTZ) == (d is _TSTZ):
        return False
    other = d if s is _TSTZ else s
    return other in (Kind.DATE, Kind.TIMESTAMP, Kind.UNKNOWN, Kind.TIME, Kind.TIMETZ) or (
        src.is_string if d is _TSTZ else dst.is_string)


def cast(e: ex.Expr, dst: SqlType, zone: Zone) -> ex.Expr:
    """CAST(e AS dst) for a pair that `involves` a zone, in `zone`."""
    src = e.type
    if dst.kind is Kind.TIMETZ and isinstance(e, Literal) and not src.is_array:
        # timetz_in of a constant reads the session's zone itself (planner/datetime_input.py)
        return Literal(cast_value(e.value, src, dst), dst)
    if src.is_array or dst.is_array or Kind.RECORD in (src.kind, dst.kind) \
            or Kind.TIMETZ in (src.kind, dst.kind):
        raise errors.FeatureNotSupported(
            f"casts between {src} and {dst} in a time zone other than UTC")
    if dst.kind is _TSTZ:
        if src.kind in (Kind.DATE, Kind.TIMESTAMP):
            return from_local(e, zone)
        if src.kind is Kind.TIME:
            raise errors.QueryError(f"cannot cast type {src} to {dst}", "42846")
        return fold_constants(Call(Func.TSTZ_IN, (e, zone_literal(zone)), types.TIMESTAMPTZ))
    if dst.kind is Kind.TIMESTAMP:
        return to_local(e, zone)
    if dst.kind in (Kind.DATE, Kind.TIME):
        return fold_constants(Cast(to_local(e, zone), dst))
    text = fold_constants(Call(Func.TSTZ_OUT, (e, zone_literal(zone)), types.TEXT))
    return text if dst.kind is Kind.TEXT else fold_constants(Cast(text, dst))


_SUB_DAY = ("microseconds", "milliseconds", "second", "minute", "hour")


def date_trunc(field: Literal, x: ex.Expr, zone: Zone) -> ex.Expr:
    """date_trunc(field, timestamptz) in `zone`: truncated on the wall clock. From a day
    up, the result is read back in the zone; below, it keeps x's own offset (as
    timestamptz_trunc_internal, so 01:30 in a repeated hour truncates to 01:00 of the
    same offset): x minus what truncation cut off."""
    local = to_local(x, zone)
    trunc = fold_constants(Call(Func.DATE_TRUNC, (field, local), types.TIMESTAMP))
    if field.value not in _SUB_DAY:
        return from_local(trunc, zone)
    cut = fold_constants(Call(Func.SUB, (local, trunc), types.INTERVAL))
    kept = fold_constants(Call(Func.SUB, (x, cut), types.TIMESTAMPTZ))
    # +/-infinity truncates to itself (and has no wall clock to subtract)
    finite = fold_constants(Call(Func.ISFINITE, (x,), types.BOOL))
    return fold_constants(ex.Case(((finite, kept),), x, types.TIMESTAMPTZ))


def add_interval(func: Func, x: ex.Expr, iv: ex.Expr, zone: Zone) -> ex.Expr:
    """timestamptz +/- interval in `zone`: months and days on the wall clock."""
    if not isinstance(iv, Literal):
        raise errors.FeatureNotSupported(
            "adding an interval that is not a constant to a timestamp with time zone in a "
            "time zone other than UTC")
    if iv.value is None:
        return Literal(None, types.TIMESTAMPTZ)
    v: Interval = iv.value
    sign = 1 if func is Func.ADD else -1
    for part in (Interval(months=v.months), Interval(days=v.days)):
        if part != Interval():
            step = Call(Func.ADD, (to_local(x, zone), Literal(_times(part, sign), types.INTERVAL)),
                        types.TIMESTAMP)
            x = from_local(fold_constants(step), zone)
    if v.micros:
        x = fold_constants(Call(Func.ADD, (x, Literal(Interval(micros=sign * v.micros),
                                                      types.INTERVAL)), types.TIMESTAMPTZ))
    return x


def _times(iv: Interval, sign: int) -> Interval:
    return Interval(iv.months * sign, iv.days * sign, iv.micros * sign)


SERIES_LIMIT = 10_000_000  # values of a timestamptz series computed while binding


def tstz_series(start: ex.Expr, stop: ex.Expr, step: ex.Expr, zone: Zone) -> ex.Expr:
    """generate_series(timestamptz, timestamptz, interval) with a step of days or months
    in `zone`: each value the one before plus the step on the wall clock, as
    generate_series_timestamptz adds it. Computed here from constants (an array literal
    the caller unnests); other arguments are 0A000."""
    args = (start, stop, step)
    if not all(isinstance(a, Literal) for a in args):
        raise errors.FeatureNotSupported(
            "generate_series of timestamp with time zone by days or months over values that "
            "are not constants, in a time zone other than UTC")
    t = types.array_of(types.TIMESTAMPTZ)
    if any(a.value is None for a in args):
        return Literal(None, t)
    lo, hi, iv = start.value, stop.value, step.value
    direction = interval_key(iv)
    if direction == 0:
        raise errors.InvalidParameterValue("step size cannot equal zero")
    if isinstance(lo, Infinite) or isinstance(hi, Infinite):
        raise errors.FeatureNotSupported("generate_series from or to infinity")
    out, cur = [], lo
    while (cur <= hi) if direction > 0 else (cur >= hi):
        out.append(cur)
        if len(out) > SERIES_LIMIT:
            raise errors.FeatureNotSupported(
                f"generate_series of more than {SERIES_LIMIT} timestamp with time zone values "
                "by days or months in a time zone other than UTC")
        cur = add_in_zone(cur, iv, zone)
    return Literal(tuple(out), t)
