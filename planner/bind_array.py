"""Bind the array syntax of sqlglot trees: ARRAY[...], a[i], a[i:j], array functions and
operators, `x op ANY|ALL (array value)`, array type names.

`bind(binder, node)` is called by bind_expr.ExprBinder for every node first and returns
None for nodes that are not array syntax. Typing is planner/array_rules.py's; evaluation
segment/kernels/expr_pgarray.py's. What is not implemented is refused (0A000) here,
naming it: multidimensional arrays, ARRAY(subquery), set-returning functions in
expressions (unnest, generate_subscripts) and array_agg.
"""

from __future__ import annotations

import re

from sqlglot import exp

from planner import catalog_functions, errors, functions, types
from planner import expr as ex
from planner.array_rules import rule_quantified
from planner.coercion import no_function
from planner.expr import Func
from planner.catalog_names import TYPE_NAMES
from planner.type_names import cast_type, sql_type

_OPERATORS = {exp.ArrayContainsAll: Func.ARRAY_CONTAINS, exp.ArrayContainedBy: Func.ARRAY_CONTAINED,
              exp.ArrayOverlaps: Func.ARRAY_OVERLAP}
_COMPARISONS = {exp.EQ: Func.EQ, exp.NEQ: Func.NE, exp.LT: Func.LT, exp.LTE: Func.LE,
                exp.GT: Func.GT, exp.GTE: Func.GE}
_NAMED = {"cardinality": Func.CARDINALITY, "array_upper": Func.ARRAY_UPPER,
          "array_lower": Func.ARRAY_LOWER, "array_ndims": Func.ARRAY_NDIMS,
          "array_dims": Func.ARRAY_DIMS, "array_length": Func.ARRAY_LENGTH,
          "array_position": Func.ARRAY_POSITION, "array_cat": Func.ARRAY_CAT,
          "array_append": Func.ARRAY_APPEND, "array_prepend": Func.ARRAY_PREPEND,
          "string_to_array": Func.STRING_TO_ARRAY, "array_to_string": Func.ARRAY_TO_STRING,
          "array_remove": Func.ARRAY_REMOVE, "array_replace": Func.ARRAY_REPLACE,
          "array_positions": Func.ARRAY_POSITIONS}
# PostgreSQL's other array functions: refused by name rather than "does not exist".
_REFUSED = ("array_fill", "trim_array",
            "array_sample", "array_shuffle", "unnest", "generate_subscripts", "array_agg",
            "array_to_json", "string_to_table")
_SRF = ("unnest", "generate_subscripts", "string_to_table")


def _variadic_null_count(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() in (
        "num_nulls", "num_nonnulls") and len(node.expressions) == 1 and isinstance(
        node.expressions[0], exp.Variadic)


def _null_count(binder, node: exp.Anonymous) -> ex.Expr:
    """num_nulls / num_nonnulls(VARIADIC a): a's NULL (non-NULL) elements, counted as
    cardinality(a) less (or only) cardinality(array_remove(a, NULL)); NULL for a NULL a."""
    a = binder.bind(node.expressions[0].this)
    if not a.type.is_array:
        raise errors.DatatypeMismatch("VARIADIC argument must be an array")
    call = functions.bind_call
    without_nulls = call(Func.ARRAY_REMOVE, [a, ex.Literal(None, types.UNKNOWN)])
    present = call(Func.CARDINALITY, [without_nulls])
    if node.name.lower() == "num_nonnulls":
        return present
    return call(Func.SUB, [call(Func.CARDINALITY, [a]), present])


def _fn_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Func):  # sqlglot's own nodes: ArrayRemove, Unnest, ...
        return node.sql_name().lower()
    return None


def _is_array_cast(node: exp.Cast) -> bool:
    to = node.to
    return isinstance(to, exp.DataType) and to.this == exp.DataType.Type.ARRAY


def bind(binder, node: exp.Expression) -> ex.Expr | None:
    b = binder.bind
    call = functions.bind_call
    if isinstance(node, exp.Array):
        items = node.expressions
        if len(items) == 1 and isinstance(items[0], (exp.Select, exp.Subquery, exp.Union)):
            raise errors.FeatureNotSupported("ARRAY(subquery)")
        if any(isinstance(i, exp.Array) for i in items):
            raise errors.FeatureNotSupported("multidimensional arrays")
        return call(Func.ARRAY, [b(i) for i in items])
    if _variadic_null_count(node):
        return _null_count(binder, node)
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Array) \
            and not node.this.expressions:
        t = cast_type(node.to) or sql_type(node.to)
        if not t.is_array:
            raise errors.QueryError("cannot determine type of empty array", "42P18")
        return ex.Literal((), t)
    if isinstance(node, exp.Bracket):
        return _subscript(binder, node)
    if type(node) in _OPERATORS:
        return call(_OPERATORS[type(node)], [b(node.this), b(node.expression)])
    if type(node) in _COMPARISONS:
        q = _quantifier(node.expression)
        if q is None:
            return None
        all_, inner = q
        x, arr = b(node.this), b(inner)
        return functions.fold_constants(rule_quantified(_COMPARISONS[type(node)], x, arr, all_))
    if isinstance(node, exp.ArraySize):
        args = [b(node.this)] + ([b(node.expression)] if node.expression is not None else [])
        return call(Func.ARRAY_LENGTH, args)
    if isinstance(node, exp.ArrayToString):
        args = [b(node.this), b(node.expression)]
        if node.args.get("null") is not None:
            args.append(b(node.args["null"]))
        if args[0].type.kind in types.ARRAY_KINDS:  # aclitem[], anyarray: text forms
            return catalog_functions.bind_function("array_to_string", node, args)
        return call(Func.ARRAY_TO_STRING, args)
    if isinstance(node, exp.StringToArray):
        args = [b(node.this), b(node.expression)]
        if node.args.get("null") is not None:
            args.append(b(node.args["null"]))
        return call(Func.STRING_TO_ARRAY, args)
    if isinstance(node, (exp.ArrayAppend, exp.ArrayPrepend)):
        a, x = b(node.this), b(node.expression)
        # sqlglot reads array_prepend(x, a) as ArrayPrepend(this=a, expression=x)
        if isinstance(node, exp.ArrayAppend):
            return call(Func.ARRAY_APPEND, [a, x])
        return call(Func.ARRAY_PREPEND, [x, a])
    if isinstance(node, exp.ArrayConcat):
        args = [b(node.this)] + [b(e) for e in node.expressions]
        if len(args) != 2:
            raise no_function("array_cat", args)
        return call(Func.ARRAY_CAT, args)
    if isinstance(node, exp.ArrayPosition):  # sqlglot keeps a third argument as zero_based
        start = node.args.get("zero_based")
        extra = [b(start)] if isinstance(start, exp.Expression) else []
        return call(Func.ARRAY_POSITION, [b(node.this), b(node.expression)] + extra)
    if isinstance(node, exp.Explode):
        raise errors.FeatureNotSupported(
            "set-returning function unnest() here (only in FROM and in the SELECT list)")
    if isinstance(node, exp.ArrayAgg):
        raise errors.FeatureNotSupported("aggregate function array_agg()")
    name = _fn_name(node)
    if name is not None:
        if name in _NAMED:
            args = [b(a) for a in ([node.this, node.expression] if isinstance(
                node, exp.ArrayRemove) else node.expressions)]
            if name == "array_to_string" and args and args[0].type.kind in types.ARRAY_KINDS:
                return catalog_functions.bind_function(name, node, args)
            return call(_NAMED[name], [_as_text_array(a) for a in args])
        if name in _SRF:
            raise errors.FeatureNotSupported(
                f"set-returning function {name}() here (only in FROM and in the SELECT list)")
        if name in _REFUSED:
            raise errors.FeatureNotSupported(f"function {name}()")
    return None


def _as_text_array(e: ex.Expr) -> ex.Expr:
    """aclitem[] and anyarray (held as their text form) read as text[]."""
    if e.type.kind in types.ARRAY_KINDS:
        return functions.bind_cast(functions.bind_cast(e, types.TEXT),
                                   types.array_of(types.TEXT))
    return e


def _quantifier(node) -> tuple[bool, exp.Expression] | None:
    """(is ALL, the array expression) for ANY/SOME/ALL over an array value that is not an
    ARRAY[...] list (bind_expr expands those); None otherwise."""
    if isinstance(node, exp.Any):
        all_, inner = False, node.this
    elif isinstance(node, exp.All):
        all_, inner = True, node.this
    elif isinstance(node, exp.Anonymous) and node.name.upper() in ("ALL", "ANY", "SOME") \
            and len(node.expressions) == 1:
        all_, inner = node.name.upper() == "ALL", node.expressions[0]
    else:
        return None
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Array) and inner.expressions and not isinstance(
            inner.expressions[0], (exp.Select, exp.Subquery)):
        return None
    if isinstance(inner, (exp.Subquery, exp.Select)):
        return None  # bind_expr refuses ANY (subquery)
    return all_, inner


def _shifted(bracket: exp.Bracket) -> bool:
    """Whether sqlglot made the subscript 0-based while parsing: it subtracts 1 from
    integer-typed subscripts of values it types as arrays or does not type ('a[1]' is read
    as a[0], 'a[0]' as a[-1]), not of others ('x::int2vector' is a user-defined type)."""
    from sqlglot.optimizer.annotate_types import annotate_types
    this = bracket.this
    if this.type is None:
        annotate_types(this, dialect="postgres")
    if this.type.this not in (exp.DataType.Type.UNKNOWN, exp.DataType.Type.ARRAY):
        return False
    idx = annotate_types(bracket.expressions[0].copy(), dialect="postgres")
    return idx.type is not None and idx.type.this in exp.DataType.INTEGER_TYPES


def mark_subscripts(tree: exp.Expression) -> None:
    """Note on each subscript whether sqlglot shifted it, right after parsing: parameters
    substituted later ($1 becomes CAST('2' AS INT)) must not look shifted."""
    for node in tree.find_all(exp.Bracket):
        if len(node.expressions) == 1 and not isinstance(node.expressions[0], exp.Slice):
            node.meta["raympp_shifted"] = _shifted(node)


def _index(binder, bracket: exp.Bracket) -> ex.Expr:
    e = binder.bind(bracket.expressions[0])
    shifted = bracket.meta.get("raympp_shifted") if bracket.meta else None
    if shifted if shifted is not None else _shifted(bracket):
        e = functions.bind_call(Func.ADD, [e, ex.Literal(1, types.INT4)])
    return e


def _subscript(binder, node: exp.Bracket) -> ex.Expr:
    if node.args.get("offset") or node.args.get("safe"):
        raise errors.FeatureNotSupported("subscript options")
    if len(node.expressions) != 1 or isinstance(node.this, exp.Bracket):
        raise errors.FeatureNotSupported("multidimensional array subscripts")
    arr = binder.bind(node.this)
    sub = node.expressions[0]
    if isinstance(sub, exp.Slice):
        if sub.args.get("step") is not None:
            raise errors.SyntaxError_("syntax error at or near \":\"")
        bounds = []
        for part in (sub.this, sub.expression):
            if part is None:
                bounds.append(ex.Literal(None, types.UNKNOWN))
            else:
                e = binder.bind(part)
                if isinstance(e, ex.Literal) and e.type.kind is types.Kind.UNKNOWN:
                    e = ex.Literal(None, types.INT4)
                bounds.append(e)
        return functions.bind_call(Func.SLICE, [arr] + bounds)
    return functions.bind_call(Func.SUBSCRIPT, [arr, _index(binder, node)])


_OUTPUT_NAMES = {exp.Array: "array", exp.ArraySize: "array_length",
                 exp.ArrayToString: "array_to_string", exp.StringToArray: "string_to_array",
                 exp.ArrayAppend: "array_append", exp.ArrayPrepend: "array_prepend",
                 exp.ArrayConcat: "array_cat", exp.ArrayPosition: "array_position",
                 exp.ArrayContainsAll: "?column?", exp.ArrayContainedBy: "?column?",
                 exp.ArrayOverlaps: "?column?"}


def output_name(e: exp.Expression) -> str | None:
    """PostgreSQL's name of a select-list item that is array syntax (a[i] is named after
    a; bind.py reads that one), None for other items."""
    if isinstance(e, exp.Bracket):
        return "?column?"
    return _OUTPUT_NAMES.get(type(e))


def type_name(t: types.SqlType) -> str:
    """The pg_type name of an array type (`_int4`), which types.from_name reads back."""
    if t.kind in (types.Kind.INT2VECTOR, types.Kind.OIDVECTOR):
        return t.kind.value
    return "_" + TYPE_NAMES[t.elem.oid]


# `::oid[]`, `AS regtype[]`: sqlglot reads the catalog types' names as identifiers, so
# `oid[]` would parse as a subscript; their array types' own names (`_oid`) parse.
_CATALOG_ARRAY = re.compile(r"""
      (?<![A-Za-z0-9_$\x80-\uffff])[Ee]'(?:[^'\\]|\\.|'')*'
    | '(?:[^']|'')*'
    | "(?:[^"]|"")*"
    | --[^\n]*
    | /\*.*?\*/
    | (?P<cast>(?:::|(?<![A-Za-z0-9_])AS\s+)\s*(?:pg_catalog\s*\.\s*)?)
      (?P<name>oid|xid|regtype|regclass|regproc|regnamespace|regrole)\s*\[\s*\]
    """, re.DOTALL | re.VERBOSE | re.IGNORECASE)


def catalog_array_names(text: str) -> str:
    """`x::oid[]` as `x::_oid` (outside strings, quoted names and comments)."""
    if "[" not in text:
        return text
    return _CATALOG_ARRAY.sub(lambda m: m.group("cast") + "_" + m.group("name").lower()
                              if m.group("name") else m.group(0), text)
