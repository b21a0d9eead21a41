"""Grouping by jsonb: GROUP BY, DISTINCT, UNION / INTERSECT / EXCEPT, count(DISTINCT) and
window PARTITION BY / ORDER BY over jsonb values.

jsonb values are Arrow strings holding their jsonb_out text, and two equal values may have
different texts (1.5 and 1.50 are equal in jsonb, as numerics are). Every layer below the
planner groups, hashes (Redistribute Motions, spill partitions) and compares strings by
their bytes, so a jsonb key is replaced here by its sort key (json_values.sort_key), whose
bytes are equal exactly where the values are equal and order as the values do: an
Aggregate groups by `jsonb_sort_key(k)` and outputs min(k) of each group as the key, one
of the group's own values as PostgreSQL returns one of them. Done as a plan rewrite, the
two-phase aggregation, the Motions and the spilling need nothing of their own.

json has no equality (42883, as PostgreSQL). What it leaves to others: the sort key itself
(json_values / expr_json) and the binders that build the nodes (bind.py, set_operations.py,
bind_window.py).
"""

from __future__ import annotations

from planner import coercion, json_rules
from planner import expr as ex
from planner import plan as pl
from planner.types import Kind, SqlType


def group_key(e: ex.Expr) -> ex.Expr:
    """What rows are grouped and compared by for the key `e`: its sort key for jsonb, a
    padded bpchar without its trailing spaces (planner/padded_bpchar.py)."""
    if e.type.padded:
        return coercion.unpadded(e)
    return json_rules.sort_key(e) if e.type.kind is Kind.JSONB else e


def _rekeyed(t: SqlType) -> bool:
    return t.kind is Kind.JSONB or t.padded


def _distinct_arg(a: ex.AggCall) -> ex.AggCall:
    """count(DISTINCT j) counts the distinct sort keys (other DISTINCT aggregates of jsonb
    keep their value and stay refused by plan.Aggregate)."""
    if a.distinct and a.func is ex.AggFunc.COUNT and a.arg is not None \
            and _rekeyed(a.arg.type):
        return ex.AggCall(a.func, group_key(a.arg), True, a.type, a.order)
    return a


def _shown(k: ex.Expr) -> ex.Expr:
    """The value a group shows for key k: one of its own (min; a padded bpchar's the
    longest, max, as text, whose min / max plan.Aggregate would refuse: as PostgreSQL's
    hashing keeps the first, a char(n) column's padded value when the left side is one)."""
    return coercion.bpchar_padded(k) if k.type.padded else k


def _restored(e: ex.Expr, t: SqlType) -> ex.Expr:
    return ex.Cast(e, t) if e.type != t else e


def aggregate(child: pl.Node, keys, aggs, fields) -> pl.Node:
    """pl.Aggregate(child, keys, aggs, SINGLE, fields) with jsonb keys grouped by their
    sort keys; the output is that Aggregate's (same columns, names and types)."""
    keys, aggs = tuple(keys), tuple(_distinct_arg(a) for a in aggs)
    json_rules.check_keys([k.type for k in keys], "GROUP BY")
    jsonb = [i for i, k in enumerate(keys) if _rekeyed(k.type)]
    if not jsonb:
        return pl.Aggregate(child, keys, aggs, pl.AggMode.SINGLE, tuple(fields))
    nk, na = len(keys), len(aggs)
    firsts = tuple(ex.AggCall(ex.AggFunc.MAX if keys[i].type.padded else ex.AggFunc.MIN,
                              _shown(keys[i]), False, _shown(keys[i]).type) for i in jsonb)
    inner_fields = tuple(pl.Field(f.name, group_key(keys[i]).type) if i in jsonb else f
                         for i, f in enumerate(fields[:nk])) + tuple(fields[nk:]) + tuple(
        pl.Field(f"{fields[i].name}?value", _shown(keys[i]).type) for i in jsonb)
    agg = pl.Aggregate(child, tuple(group_key(k) for k in keys), aggs + firsts,
                       pl.AggMode.SINGLE, inner_fields)
    exprs = [_restored(ex.ColumnRef(nk + na + jsonb.index(i), _shown(keys[i]).type, f.name),
                       f.type) if i in jsonb else ex.ColumnRef(i, f.type, f.name)
             for i, f in enumerate(fields[:nk])]
    exprs += [ex.ColumnRef(nk + j, f.type, f.name) for j, f in enumerate(fields[nk:])]
    return pl.Project(agg, tuple(exprs), tuple(fields))
