"""Bind the json syntax of sqlglot trees: -> ->> #> #>> @> <@ ? ?| ?& and the json functions.

`bind(binder, node)` is called by bind_expr.ExprBinder for every node before the array
syntax and returns None for nodes that are not json syntax. sqlglot reads `x -> 'a'` as
JSONExtract over a JSONPath ('a' a JSONPathKey, 1 a JSONPathSubscript; anything else, as
-1 or a column, stays an expression), `x #> p` as JSONBExtract, `@>` as
ArrayContainsAll (bound here when a side is jsonb, else handed on to the arrays), and
json_extract_path(x, ...) as JSONExtract with only_json_types unset. Typing is
planner/json_rules.py's. What is not implemented is refused with 0A000 naming it.
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors, functions, json_rules, types
from planner import expr as ex
from planner.coercion import no_function
from planner.expr import Func

_FUNCTIONS = {
    "json_typeof": Func.JSON_TYPEOF, "jsonb_typeof": Func.JSONB_TYPEOF,
    "json_array_length": Func.JSON_ARRAY_LENGTH, "jsonb_array_length": Func.JSONB_ARRAY_LENGTH,
    "json_build_object": Func.JSON_BUILD_OBJECT, "jsonb_build_object": Func.JSONB_BUILD_OBJECT,
    "json_build_array": Func.JSON_BUILD_ARRAY, "jsonb_build_array": Func.JSONB_BUILD_ARRAY,
    "to_json": Func.TO_JSON, "to_jsonb": Func.TO_JSONB, "jsonb_set": Func.JSONB_SET,
    "jsonb_delete_path": Func.JSONB_DELETE_PATH, "jsonb_insert": Func.JSONB_INSERT,
    "jsonb_strip_nulls": Func.JSONB_STRIP_NULLS, "jsonb_pretty": Func.JSONB_PRETTY,
    "json_strip_nulls": Func.JSON_STRIP_NULLS,
    "json_extract_path": Func.JSON_PATH, "jsonb_extract_path": Func.JSON_PATH,
    "json_extract_path_text": Func.JSON_PATH_TEXT,
    "jsonb_extract_path_text": Func.JSON_PATH_TEXT,
}
# Set-returning json functions: json_rules.SRFS in FROM (bind_lateral) and the SELECT list
# (bind_srfs.select_srfs), not elsewhere; the record-returning ones only in FROM.
_SRF = json_rules.SRFS + json_rules.RECORD_SRFS + json_rules.POPULATE_SRFS + (
    "jsonb_path_query",)
# Other json functions PostgreSQL has: refused by name rather than "does not exist".
_REFUSED = ("json_object",
            "jsonb_object", "jsonb_path_exists",
            "jsonb_path_match", "jsonb_path_query_array", "jsonb_path_query_first",
            "json_scalar",
            "jsonb_concat", "jsonb_contains", "jsonb_exists", "jsonb_delete",
            "jsonb_exists_any", "jsonb_exists_all", "jsonb_contained")


class JSONBArrayAgg(exp.JSONArrayAgg):
    """jsonb_agg(x [ORDER BY ...]), which sqlglot reads as an Anonymous call."""

    _sql_names = ["JSONB_AGG"]


# The json aggregates (planner/json_aggregates.py binds them over array_agg).
AGGREGATES = (exp.JSONArrayAgg, exp.JSONObjectAgg, exp.JSONBObjectAgg)
AGGREGATE_NAMES = {JSONBArrayAgg: "jsonb_agg", exp.JSONArrayAgg: "json_agg",
                   exp.JSONObjectAgg: "json_object_agg", exp.JSONBObjectAgg: "jsonb_object_agg"}


class Every(exp.LogicalAnd):
    """every(b), PostgreSQL's SQL-standard name of bool_and, which sqlglot reads as an
    Anonymous call; a node of its own so that its result column is named every."""

    _sql_names = ["EVERY"]


def mark_aggregates(tree: exp.Expression) -> None:
    """jsonb_agg(x) as the aggregate node JSONBArrayAgg and every(b) as Every (in place,
    after parsing), so that the binder finds them among the aggregates."""
    for node in list(tree.find_all(exp.Anonymous)):
        if node.name.lower() == "jsonb_agg" and len(node.expressions) == 1:
            node.replace(JSONBArrayAgg(this=node.expressions[0].copy()))
        elif node.name.lower() == "every" and len(node.expressions) == 1:
            node.replace(Every(this=node.expressions[0].copy()))


_EXISTS = {exp.JSONBContainsTopKey: (Func.JSONB_EXISTS, "?"),
           exp.JSONBContainsAnyTopKeys: (Func.JSONB_EXISTS_ANY, "?|"),
           exp.JSONBContainsAllTopKeys: (Func.JSONB_EXISTS_ALL, "?&")}


def _path_step(binder, node: exp.Expression) -> ex.Expr:
    """The key or index of `->`: sqlglot's JSONPath of one step, or an expression."""
    if isinstance(node, exp.JSONPath):
        steps = [s for s in node.expressions if not isinstance(s, exp.JSONPathRoot)]
        if len(steps) != 1:
            raise errors.FeatureNotSupported(f"json path {node.sql(dialect='postgres')}")
        step = steps[0]
        if isinstance(step, exp.JSONPathKey) and isinstance(step.this, str):
            return ex.Literal(step.this, types.TEXT)
        if isinstance(step, exp.JSONPathSubscript) and isinstance(step.this, int):
            return functions.literal(step.this)
        raise errors.FeatureNotSupported(f"json path {node.sql(dialect='postgres')}")
    return binder.bind(node)


def _extract_path_args(binder, node: exp.Expression) -> list[ex.Expr]:
    """json_extract_path(x, 'a', 'b') as sqlglot reads it: its JSONPath's keys."""
    expr = node.expression
    if isinstance(expr, exp.JSONPath):
        out = []
        for s in expr.expressions:
            if isinstance(s, exp.JSONPathRoot):
                continue
            if not isinstance(s, (exp.JSONPathKey, exp.JSONPathSubscript)):
                raise errors.FeatureNotSupported(f"json path {expr.sql(dialect='postgres')}")
            out.append(ex.Literal(str(s.this), types.TEXT))
        return out
    return [binder.bind(expr)]


def _unlambda(node: exp.Lambda) -> exp.Expression:
    """sqlglot reads `j -> 'a' ...` inside a function's arguments as a lambda `j -> body`
    (raympp has no lambdas): the operator applied to j and the body's leftmost operand,
    which is how PostgreSQL groups `j -> 'a' -> 'b' = x`."""
    params = node.expressions
    if len(params) != 1 or not isinstance(params[0], exp.Identifier):
        raise errors.FeatureNotSupported(f"expression {node.sql(dialect='postgres')!r}")
    body = node.this.copy()
    parent, leaf = None, body
    while isinstance(leaf, (exp.Binary, exp.JSONExtract, exp.JSONExtractScalar)) \
            and leaf.this is not None:
        parent, leaf = leaf, leaf.this
    extract = exp.JSONExtract(this=exp.Column(this=params[0].copy()), expression=leaf.copy(),
                              only_json_types=True)
    if parent is None:
        return extract
    parent.set("this", extract)
    return body


def bind(binder, node: exp.Expression) -> ex.Expr | None:
    b = binder.bind
    if isinstance(node, exp.Lambda):
        return b(_unlambda(node))
    if isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)):
        scalar = isinstance(node, exp.JSONExtractScalar)
        # json(b)_extract_path(_text)(x, 'a', ...) has a JSONPath and no only_json_types;
        # `x -> k` over an expression k has neither, as json_extract_path(x, k) would
        # (read as the operator, the same but for a subscript-like key of an array).
        if not node.args.get("only_json_types") and isinstance(node.expression, exp.JSONPath):
            name = "json_extract_path_text" if scalar else "json_extract_path"
            args = [b(node.this)] + _extract_path_args(binder, node)
            return json_rules.rule_function(_FUNCTIONS[name], name, args)
        x, key = b(node.this), _path_step(binder, node.expression)
        op = "->>" if scalar else "->"
        return json_rules.rule_get(Func.JSON_GET_TEXT if scalar else Func.JSON_GET, x, key, op)
    if isinstance(node, (exp.JSONBExtract, exp.JSONBExtractScalar)):
        scalar = isinstance(node, exp.JSONBExtractScalar)
        return json_rules.rule_path(Func.JSON_PATH_TEXT if scalar else Func.JSON_PATH,
                                    b(node.this), b(node.expression), "#>>" if scalar else "#>")
    if type(node) in _EXISTS:
        func, op = _EXISTS[type(node)]
        return json_rules.rule_exists(func, b(node.this), b(node.expression), op)
    if isinstance(node, exp.JSONBDeleteAtPath):
        return json_rules.rule_delete_path(b(node.this), b(node.expression))
    if isinstance(node, (exp.ArrayContainsAll, exp.ArrayContainedBy)):
        x, y = b(node.this), b(node.expression)
        op = "@>" if isinstance(node, exp.ArrayContainsAll) else "<@"
        if json_rules.involved(x, y):
            return json_rules.rule_contains(x, y, op)
        f = Func.ARRAY_CONTAINS if op == "@>" else Func.ARRAY_CONTAINED
        return functions.bind_call(f, [x, y])
    if isinstance(node, AGGREGATES):  # outside an aggregating select list or HAVING
        raise errors.FeatureNotSupported(
            f"aggregate function {AGGREGATE_NAMES[type(node)]}() here")
    name = node.name.lower() if isinstance(node, exp.Anonymous) else None
    if name is None:
        return None
    if name in _FUNCTIONS:
        args = [b(a) for a in node.expressions]
        return json_rules.rule_function(_FUNCTIONS[name], name, args)
    if name == "jsonb_set_lax":
        return _set_lax([b(a) for a in node.expressions])
    if name in ("row_to_json", "array_to_json"):
        return _to_json_of(name, [b(a) for a in node.expressions])
    if name in _SRF:
        raise errors.FeatureNotSupported(f"set-returning function {name}()" + (
            " here (only in FROM and in the SELECT list)" if name in json_rules.SRFS else ""))
    if name in _REFUSED:
        raise errors.FeatureNotSupported(
            f"{'aggregate ' if name.endswith('_agg') else ''}function {name}()")
    if name == "jsonb_sort_key":  # an internal function of ours, not PostgreSQL's
        args = ", ".join(str(b(a).type) for a in node.expressions)
        raise errors.UndefinedFunction(f"function {name}({args}) does not exist")
    return None


_NULL_TREATMENTS = ("delete_key", "return_target", "use_json_null", "raise_exception")


def _set_lax(args: list[ex.Expr]) -> ex.Expr:
    """jsonb_set_lax(target, path, new_value [, create_if_missing [, null_value_treatment]]):
    jsonb_set where new_value is not NULL; where it is, what the (constant) treatment says:
    jsonb_set of JSON null, target #- path, target itself, or 22004. NULL target, path or
    create_if_missing give NULL, as PostgreSQL's checks before any other."""
    if not 3 <= len(args) <= 5:
        raise no_function("jsonb_set_lax", args)
    target, path, new = args[:3]
    create = args[3] if len(args) > 3 else ex.Literal(True, types.BOOL)
    treatment = functions.fold_constants(functions.bind_cast(args[4], types.TEXT)) \
        if len(args) > 4 else ex.Literal("use_json_null", types.TEXT)
    if not isinstance(treatment, ex.Literal):
        raise errors.FeatureNotSupported("jsonb_set_lax() with a null_value_treatment that "
                                         "is not a constant")
    if treatment.value not in _NULL_TREATMENTS:
        raise errors.InvalidParameterValue(
            'null_value_treatment must be "delete_key", "return_target", "use_json_null", '
            'or "raise_exception"')
    new = json_rules.as_json(new, types.JSONB)
    plain = json_rules.rule_function(Func.JSONB_SET, "jsonb_set_lax",
                                     [target, path, new, create])
    target, path, new, create = plain.args
    if isinstance(new, ex.Literal) and new.value is not None:
        return plain
    if treatment.value == "raise_exception":
        if not isinstance(new, ex.Literal):
            raise errors.FeatureNotSupported("jsonb_set_lax() raising on a new value that is "
                                             "not a constant")
        raise errors.QueryError(
            "JSON value must not be null", "22004",
            detail='Exception was raised because null_value_treatment is "raise_exception".',
            hint="To avoid, either change the null_value_treatment argument or ensure that "
                 "an SQL NULL is not passed.")
    if treatment.value == "use_json_null":
        when_null = ex.Call(Func.JSONB_SET, (target, path, ex.Literal("null", types.JSONB),
                                             create), types.JSONB)
    elif treatment.value == "delete_key":
        when_null = ex.Call(Func.JSONB_DELETE_PATH, (target, path), types.JSONB)
    else:
        when_null = target
    null_args = functions.bind_call(Func.OR, [functions.bind_call(
        Func.OR, [ex.IsNull(target, False), ex.IsNull(path, False)]), ex.IsNull(create, False)])
    return functions.bind_case([(null_args, ex.Literal(None, types.JSONB)),
                                (ex.IsNull(new, False), when_null)], plain)


def _to_json_of(name: str, args: list[ex.Expr]) -> ex.Expr:
    """row_to_json(record [, pretty]) and array_to_json(anyarray [, pretty]): to_json of
    the value. Pretty output (a line feed between top-level elements) is refused."""
    wanted = (lambda t: t.kind is types.Kind.RECORD) if name == "row_to_json" else \
        (lambda t: t.is_array)
    if not 1 <= len(args) <= 2 or not wanted(args[0].type) or (
            len(args) == 2 and args[1].type.kind not in (types.Kind.BOOL, types.Kind.UNKNOWN)):
        raise no_function(name, args)
    if len(args) == 2:
        pretty = functions.fold_constants(functions.bind_cast(args[1], types.BOOL))
        if not isinstance(pretty, ex.Literal):
            raise errors.FeatureNotSupported(f"{name}() with a pretty flag that is not a constant")
        if pretty.value is None:  # strict
            return ex.Literal(None, types.JSON)
        if pretty.value:
            raise errors.FeatureNotSupported(f"{name}() with pretty output")
    return ex.Call(Func.TO_JSON, (args[0],), types.JSON)


def output_name(e: exp.Expression) -> str | None:
    """PostgreSQL's name of a select-list item that is json syntax: operators are
    ?column?, json_extract_path(...) keeps its name; None for other items."""
    if isinstance(e, AGGREGATES):
        return AGGREGATE_NAMES[type(e)]
    if isinstance(e, (exp.JSONExtract, exp.JSONExtractScalar)):
        if not e.args.get("only_json_types") and isinstance(e.expression, exp.JSONPath):
            return "json_extract_path_text" if isinstance(e, exp.JSONExtractScalar) \
                else "json_extract_path"
        return "?column?"
    if isinstance(e, (exp.JSONBExtract, exp.JSONBExtractScalar, exp.JSONBContainsTopKey,
                      exp.JSONBContainsAnyTopKeys, exp.JSONBContainsAllTopKeys,
                      exp.JSONBDeleteAtPath, exp.Lambda)):
        return "?column?"
    return None
