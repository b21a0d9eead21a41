"""(S1, E1) OVERLAPS (S2, E2): whether two periods of time overlap, with PostgreSQL's
rules for NULL ends (overlaps_timestamp in timestamp.c).

Each end may be an interval (the period is S .. S + E). A period's ends are taken in
order; a period with one NULL end is the non-NULL end alone, which decides only where the
other period's ends do. Bound as CASE expressions over comparisons, so it runs as any
other expression, vectorized, on every type with an order (date, time, timetz,
timestamp, timestamptz).
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors, functions, types
from planner import expr as ex
from planner.coercion import unify
from planner.expr import Func

_NULL = ex.Literal(None, types.BOOL)
_TRUE = ex.Literal(True, types.BOOL)
_FALSE = ex.Literal(False, types.BOOL)


def bind_overlaps(node: exp.Overlaps, bind) -> ex.Expr:
    """The OVERLAPS predicate; 42601 unless both sides are pairs, 42883 for types that
    have no overlaps()."""
    sides = []
    for side in (node.this, node.expression):
        items = side.expressions if isinstance(side, exp.Tuple) else None
        if items is None or len(items) != 2:
            which = "left" if side is node.this else "right"
            raise errors.QueryError(f"wrong number of parameters on {which} side of OVERLAPS "
                                    "expression", "42601")
        start, end = bind(items[0]), bind(items[1])
        if end.type.kind is types.Kind.INTERVAL:
            end = functions.bind_call(Func.ADD, [start, end])
        sides.append((start, end))
    ends = [e for pair in sides for e in pair]
    try:
        ends, t = unify(ends, "OVERLAPS")
    except errors.QueryError:
        raise errors.UndefinedFunction(
            f"function pg_catalog.overlaps({', '.join(str(e.type) for e in ends)}) does not exist")
    if not (t.is_temporal or t.kind in (types.Kind.TIME, types.Kind.TIMETZ)):
        raise errors.UndefinedFunction(f"function pg_catalog.overlaps({', '.join([str(t)] * 4)}) does not exist")
    (s1, e1), (s2, e2) = _period(*ends[:2]), _period(*ends[2:])
    return _case([(_either_null(s1, s2), _NULL),
                  (_cmp(Func.GT, s1, s2), _later(s1, e1, e2)),
                  (_cmp(Func.LT, s1, s2), _later(s2, e2, e1))],
                 _case([(_either_null(e1, e2), _NULL)], _TRUE))


def _period(a: ex.Expr, b: ex.Expr) -> tuple[ex.Expr, ex.Expr]:
    """A period's (start, end) in order; a NULL end leaves the other end as the start and
    no end (NULL), as PostgreSQL takes them."""
    start = functions.bind_case([(ex.IsNull(a, False), b), (ex.IsNull(b, False), a)],
                                functions.bind_call(Func.LEAST, [a, b]))
    end = functions.bind_case([(_either_null(a, b), ex.Literal(None, a.type))],
                              functions.bind_call(Func.GREATEST, [a, b]))
    return start, end


def _later(s_late: ex.Expr, e_late: ex.Expr, e_early: ex.Expr) -> ex.Expr:
    """The periods overlap when the one starting later starts before the other ends."""
    return _case([(ex.IsNull(e_early, False), _NULL),
                  (_cmp(Func.LT, s_late, e_early), _TRUE),
                  (ex.IsNull(e_late, False), _NULL)], _FALSE)


def _either_null(a: ex.Expr, b: ex.Expr) -> ex.Expr:
    return functions.bind_call(Func.OR, [ex.IsNull(a, False), ex.IsNull(b, False)])


def _cmp(func: Func, a: ex.Expr, b: ex.Expr) -> ex.Expr:
    return functions.bind_call(func, [a, b])


def _case(whens, default: ex.Expr) -> ex.Expr:
    return functions.bind_case(whens, default)
