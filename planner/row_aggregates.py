"""Aggregates over a row value: count((a, b)) and count(DISTINCT (a, b)).

PostgreSQL counts row values that are not NULL, and a row constructor is never NULL, even
when every field is (count(DISTINCT (NULL, NULL)) is 1); DISTINCT compares rows field by
field with NULLs alike (record_eq). Both are counts of the row's canonical key,

    count([DISTINCT] (a, b)) = count([DISTINCT] ?row_key(ROW(a, b)))

bytes equal exactly where the rows are, NULL only where the row itself is NULL (a FILTER
that does not keep the row: CASE WHEN c THEN ROW(a, b) END), so the key groups, hashes
(Motions, spill partitions) and de-duplicates as any bytea does and count(DISTINCT)
distributes as before (segment/kernels/expr_record.py computes it). min, max, sum and avg
of a record do not exist in PostgreSQL (42883). What it leaves to others: binding the
aggregate call (bind.py; array_agg of a row is its own), and FILTER
(planner/ordered_aggregates.py).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from planner import errors, types
from planner import expr as ex
from planner.types import Kind


def argument(tree: exp.Expression | None) -> exp.Expression | None:
    """An aggregate's argument as written, with `(a, b)` read as the row constructor
    ROW(a, b), which it is in PostgreSQL."""
    if isinstance(tree, exp.Tuple):  # its fields may be rows too: ((a, b), c)
        return exp.Anonymous(this="ROW", expressions=[argument(e.copy())
                                                      for e in tree.expressions])
    return tree


def counted(name: str, arg: ex.Expr, distinct: bool) -> ex.Expr:
    """What the aggregate `name` (count, or another, which has no record signature)
    reads of the record `arg`: its key."""
    if name != "count":
        raise errors.UndefinedFunction(f"function {name}(record) does not exist")
    if distinct:
        _check_fields(arg.type)
    return _keyed(arg)


def _keyed(e: ex.Expr) -> ex.Expr:
    """?row_key(e), taken inside a CASE (a FILTER's), whose branches are records."""
    if isinstance(e, ex.Case):
        return replace(e, whens=tuple((c, _keyed(v)) for c, v in e.whens),
                       else_=_keyed(e.else_), type=_BYTEA)
    if isinstance(e, ex.Literal) and e.value is None:
        return ex.Literal(None, _BYTEA)
    return ex.Call(ex.Func.ROW_KEY, (e,), _BYTEA)


def _check_fields(t: types.SqlType) -> None:
    """json has no equality (42883, as PostgreSQL); jsonb's is not its text's, which the
    key is made of (0A000)."""
    for _, f in t.fields:
        elem = f.elem if f.is_array else f
        if elem.kind is Kind.JSON:
            raise errors.UndefinedFunction(
                f"could not identify an equality operator for type {f}")
        if elem.kind is Kind.JSONB:
            raise errors.FeatureNotSupported(f"count(DISTINCT ...) of rows with {f} fields")
        if elem.kind is Kind.RECORD:
            _check_fields(elem)


_BYTEA = types.SqlType(Kind.BYTEA)
