"""bit_and, bit_or and bit_xor over smallint, integer and bigint as expressions over the
aggregates raympp has, so that they distribute in two phases as those do. Bit k of the
result (c = 2^k, the sign bit for the last) is

    bit_and(x): bool_and(x & c <> 0)     bit_or(x): bool_or(x & c <> 0)
    bit_xor(x): count(CASE WHEN x & c <> 0 THEN 1 END) % 2 = 1

and the result, of the argument's type, is the OR of the bits set, NULL where count(x) = 0
(no rows, or only NULLs), as PostgreSQL's. bit_and/bit_or(DISTINCT x) are the same values;
bit_xor(DISTINCT x) counts distinct values. Other argument types are 42883 (PostgreSQL's
bit and bit varying are not raympp types).
"""

from __future__ import annotations

from sqlglot import exp

from planner import coercion, errors, sql_templates, types

NODES = {exp.BitwiseAndAgg: "bit_and", exp.BitwiseOrAgg: "bit_or", exp.BitwiseXorAgg: "bit_xor"}
_WIDTHS = {types.Kind.INT2: (16, "smallint"), types.Kind.INT4: (32, "integer"),
           types.Kind.INT8: (64, "bigint")}


def rewrite(tree: exp.Expression, bind) -> exp.Expression:
    """The expression the aggregate `tree` (one of NODES) equals; `bind` binds a sqlglot
    expression of the query level (to type the argument)."""
    name = NODES[type(tree)]
    inner = tree.this
    distinct = isinstance(inner, exp.Distinct)
    if distinct:
        inner = inner.expressions[0]
    if isinstance(inner, exp.Order):
        raise errors.FeatureNotSupported(f"{name}(... ORDER BY ...)")
    arg = bind(inner)
    if arg.type.kind not in _WIDTHS:
        shown = coercion.type_name(arg).split("(")[0]  # PostgreSQL's names: no typmods
        raise errors.UndefinedFunction(f"function {name}({shown}) does not exist")
    width, t = _WIDTHS[arg.type.kind]
    return sql_templates.instantiate(_text(name, distinct, width, t), {_ARG: inner})


_ARG = "__bitwise_argument__"


def _text(name: str, distinct: bool, width: int, t: str) -> str:
    """The expression of `name` over the column _ARG (parsed once: planner/sql_templates)."""
    x = f"({_ARG})"
    bits = []
    for k in range(width):
        c = f"({1 << k if k < width - 1 else -(1 << k)})::{t}"
        on = f"{x} & {c} <> 0"
        if name == "bit_and":
            agg = f"bool_and({on})"
        elif name == "bit_or":
            agg = f"bool_or({on})"
        elif distinct:
            agg = f"count(DISTINCT CASE WHEN {on} THEN {x} END) % 2 = 1"
        else:
            agg = f"count(CASE WHEN {on} THEN 1 END) % 2 = 1"
        bits.append(f"CASE WHEN {agg} THEN {c} ELSE (0)::{t} END")
    return f"CASE WHEN count({x}) > 0 THEN {' | '.join(bits)} END"
