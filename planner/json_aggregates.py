"""json_agg, jsonb_agg, json_object_agg and jsonb_object_agg as expressions over array_agg,
so that they distribute as array_agg does (the input gathered in order per group):

    json_agg(x ORDER BY o)           = JSON_AGG(array_agg(x ORDER BY o))
    json_object_agg(k, v ORDER BY o) = JSON_OBJECT_AGG(array_agg(k ORDER BY o),
                                                       array_agg(v ORDER BY o))

array_agg keeps NULL inputs (json_agg shows them as null) and is NULL over no rows (so is
json_agg). The finishing calls (segment/kernels/expr_json.py) print PostgreSQL's text:
json_agg `[1, null, 2]`, json_object_agg `{ "a" : 1, "b" : 2 }` (keys repeated as given),
the jsonb forms canonical jsonb (keys deduplicated, the last wins). A NULL key is 22023
`field name must not be null` when the group is finished; a key of a json, jsonb, array or
record type is 22023 `key value must be scalar, not array, composite, or json`, as in
PostgreSQL. json_agg(DISTINCT x) is JSON_AGG of array_agg(DISTINCT x)'s array (x of no
json type: jsonb's equality is not its text's, 0A000); json_object_agg(DISTINCT ...) is
0A000. bind_json.mark_aggregates makes sqlglot's jsonb_agg (an Anonymous call) an
aggregate node so that the binder sees an aggregate.
"""

from __future__ import annotations

from sqlglot import exp

from planner import bind_json, errors, ordered_aggregates, types, zone_rules
from planner import expr as ex
from planner.expr import Func
from planner.types import Kind

NODES = bind_json.AGGREGATES


def _name(tree: exp.Expression) -> str:
    return {bind_json.JSONBArrayAgg: "jsonb_agg", exp.JSONArrayAgg: "json_agg",
            exp.JSONObjectAgg: "json_object_agg",
            exp.JSONBObjectAgg: "jsonb_object_agg"}[type(tree)]


def _arguments(tree: exp.Expression) -> list[exp.Expression]:
    if isinstance(tree, exp.JSONObjectAgg):
        return list(tree.expressions)
    if isinstance(tree, exp.JSONBObjectAgg):
        return [a for a in (tree.this, tree.expression) if a is not None]
    return [tree.this] if tree.this is not None else []


def bind(tree: exp.Expression, bind_agg, cond: exp.Expression | None = None) -> ex.Expr:
    """The expression the json aggregate `tree` equals; `bind_agg` binds a sqlglot
    aggregate call of the query level (array_agg here) to its reference. With a FILTER
    condition `cond`, each array_agg is filtered by it as array_agg(...) FILTER is
    (planner/ordered_aggregates.py)."""
    name = _name(tree)
    args = _arguments(tree)
    order = None
    if args and isinstance(args[-1], exp.Order):  # ORDER BY is written after the last
        order = args[-1]
        args[-1] = order.this
    want = 1 if name in ("json_agg", "jsonb_agg") else 2
    if len(args) == 1 and isinstance(args[0], exp.Distinct) and want == 1:
        return _distinct(name, args[0], order, bind_agg, cond)
    if any(isinstance(a, exp.Distinct) for a in args):
        raise errors.FeatureNotSupported(f"{name}(DISTINCT ...)")
    if len(args) != want:
        raise errors.UndefinedFunction(f"function {name} with {len(args)} arguments does "
                                       "not exist")

    def array_agg(a: exp.Expression) -> ex.Expr:
        inner = a.copy()
        if order is not None:
            inner = order.copy()
            inner.set("this", a.copy())
        if cond is not None:
            return bind_agg(ordered_aggregates.filtered_array_agg(exp.ArrayAgg(this=inner), cond))
        return bind_agg(exp.ArrayAgg(this=inner))

    out = types.JSONB if name.startswith("jsonb") else types.JSON
    arrays = tuple(array_agg(a) for a in args)
    zone_rules.refuse_in_json(name, arrays)
    if len(arrays) == 1:
        return ex.Call(Func.JSON_AGG, arrays, out)
    key = arrays[0].type.elem
    if key.kind in (Kind.JSON, Kind.JSONB) or key.is_array:
        raise errors.InvalidParameterValue(
            "key value must be scalar, not array, composite, or json")
    return ex.Call(Func.JSON_OBJECT_AGG, arrays, out)


def _distinct(name: str, distinct: exp.Distinct, order: exp.Order | None, bind_agg,
              cond: exp.Expression | None) -> ex.Expr:
    """json_agg(DISTINCT x [ORDER BY x]) [FILTER ...]: JSON_AGG of the distinct x sorted
    as array_agg(DISTINCT x) is (planner/ordered_aggregates.py). json has no equality
    (42883, as PostgreSQL); jsonb's is not its text's, which the de-duplication compares
    (0A000)."""
    if len(distinct.expressions) != 1:
        raise errors.UndefinedFunction(f"function {name} with several arguments does "
                                       "not exist")
    x = distinct.expressions[0]
    keys = list(order.expressions) if order is not None else []
    if any(k.this != x for k in keys):
        raise errors.QueryError("in an aggregate with DISTINCT, ORDER BY expressions "
                                "must appear in argument list", "42P10")
    array = bind_agg(ordered_aggregates.distinct_list(x, keys, cond))
    elem = array.type.elem
    if elem.kind is Kind.JSON:
        raise errors.UndefinedFunction(f"could not identify an equality operator for type {elem}")
    if elem.kind is Kind.JSONB or elem.kind is Kind.RECORD:
        raise errors.FeatureNotSupported(f"{name}(DISTINCT ...) of {elem} values")
    return ex.Call(Func.JSON_AGG, (array,), types.JSONB if name == "jsonb_agg" else types.JSON)
