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

from planner import catalog_functions, errors, functions, json_rules, types
from planner import expr as ex
from planner import plan as pl
from planner.array_rules import rule_quantified
from planner.coercion import no_function
from planner.expr import Func
from planner.scope import Scope, ScopeColumn
from planner.system_tables import TYPE_NAMES

_OPERATORS = {exp.ArrayContainsAll: Func.ARRAY_CONTAINS, exp.ArrayContainedBy: Func.ARRAY_CONTAINED,
              exp.ArrayOverlaps: Func.ARRAY_OVERLAP}
_COMPARISONS = {exp.EQ: Func.EQ, exp.NEQ: Func.NE, exp.LT: Func.LT, exp.LTE: Func.LE,
                exp.GT: Func.GT, exp.GTE: Func.GE}
_NAMED = {"cardinality": Func.CARDINALITY, "array_upper": Func.ARRAY_UPPER,
          "array_lower": Func.ARRAY_LOWER, "array_ndims": Func.ARRAY_NDIMS,
          "array_dims": Func.ARRAY_DIMS, "array_length": Func.ARRAY_LENGTH,
          "array_position": Func.ARRAY_POSITION, "array_cat": Func.ARRAY_CAT,
          "array_append": Func.ARRAY_APPEND, "array_prepend": Func.ARRAY_PREPEND,
          "string_to_array": Func.STRING_TO_ARRAY, "array_to_string": Func.ARRAY_TO_STRING}
# PostgreSQL's other array functions: refused by name rather than "does not exist".
_REFUSED = ("array_remove", "array_replace", "array_fill", "array_positions", "trim_array",
            "array_sample", "array_shuffle", "unnest", "generate_subscripts", "array_agg",
            "regexp_split_to_array", "array_to_json", "string_to_table")
_SRF = ("unnest", "generate_subscripts", "string_to_table")


def array_type(dt: exp.DataType) -> types.SqlType:
    """The type an ARRAY DataType names (`int[]`, `varchar(3)[]`, `oid[]`)."""
    inner = dt.expressions[0] if len(dt.expressions) == 1 else None
    if not isinstance(inner, exp.DataType):
        raise errors.FeatureNotSupported(f"type {dt.sql(dialect='postgres')}")
    if inner.this == exp.DataType.Type.ARRAY:
        raise errors.FeatureNotSupported("multidimensional arrays")
    # local: bind_expr and this module are in one import loop (test_layering.KNOWN_LOOPS)
    from planner.bind_expr import sql_type
    element = catalog_functions.cast_type(inner) or sql_type(inner)
    if element.is_array:
        raise errors.FeatureNotSupported("multidimensional arrays")
    return types.array_of(element)


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
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Array) \
            and not node.this.expressions:
        # local: bind_expr and this module are in one import loop (test_layering.KNOWN_LOOPS)
        from planner.bind_expr import sql_type
        t = catalog_functions.cast_type(node.to) or sql_type(node.to)
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
            args = [b(a) for a in node.expressions]
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


def unnest_from(query_binder, rel: exp.Unnest, alias: str | None, col_aliases: list[str]):
    """FROM unnest(a1 [, a2 ...]) [WITH ORDINALITY] [AS q(c1, ... [, n])] over constant
    arrays: a Values leaf, the arrays side by side (shorter ones padded with NULL), the
    1-based ordinality last. Arrays that are not constants (a column: implicit LATERAL)
    are 0A000."""
    # local: bind_expr and this module are in one import loop (test_layering.KNOWN_LOOPS)
    from planner.bind_expr import ExprBinder
    binder = ExprBinder(Scope([]), query_binder.params)
    arrays = []
    for arg in rel.expressions:
        try:
            e = functions.fold_constants(binder.bind(arg))
        except errors.QueryError as err:
            if err.sqlstate in ("42703", "42P01"):
                raise errors.FeatureNotSupported(
                    "unnest() of a column of another FROM item (LATERAL)") from None
            raise
        if isinstance(e, ex.Literal) and e.type.kind is types.Kind.UNKNOWN:
            raise errors.QueryError("could not determine polymorphic type because input has "
                                    "type unknown", "42804")
        if not e.type.is_array:
            raise no_function("unnest", [e])
        arrays.append(e)
    if not arrays:
        raise errors.UndefinedFunction("function unnest() does not exist")
    ordinality = rel.args.get("offset")
    if not all(isinstance(a, ex.Literal) for a in arrays):  # string_to_array('a,b', ','):
        return _unnest_computed(arrays, ordinality, alias, col_aliases)  # a ProjectSet
    width = max((len(a.value) for a in arrays if a.value is not None), default=0)
    rows = []
    for i in range(width):
        row = [ex.Literal(a.value[i] if a.value is not None and i < len(a.value) else None,
                          a.type.elem) for a in arrays]
        if ordinality:
            row.append(ex.Literal(i + 1, types.INT8))
        rows.append(tuple(row))
    q = alias or "unnest"
    default = [alias] if alias and len(arrays) == 1 else ["unnest"] * len(arrays)
    names = (col_aliases + default[len(col_aliases):])[:len(arrays)]
    col_types = [a.type.elem for a in arrays]
    if ordinality:
        extra = col_aliases[len(arrays)] if len(col_aliases) > len(arrays) else (
            ordinality.name.lower() if isinstance(ordinality, exp.Identifier) else "ordinality")
        names.append(extra)
        col_types.append(types.INT8)
    node = pl.Values(tuple(rows), pl.fields_of(zip(names, col_types)))
    return node, Scope([ScopeColumn(q, n, t) for n, t in zip(names, col_types)])


def type_name(t: types.SqlType) -> str:
    """The pg_type name of an array type (`_int4`), which types.from_name reads back."""
    if t.kind in (types.Kind.INT2VECTOR, types.Kind.OIDVECTOR):
        return t.kind.value
    return "_" + TYPE_NAMES[t.elem.oid]


def _srf_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Explode):
        return "unnest"
    if isinstance(node, exp.ExplodingGenerateSeries):
        return "generate_series"
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.Identifier) and isinstance(
            node.expression, exp.Anonymous) and node.this.name.lower() == "information_schema" \
            and node.expression.name.lower() == "_pg_expandarray":
        return "_pg_expandarray"  # (x, n) records of an array's elements (JDBC reads them)
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("unnest",
                                                                 "generate_subscripts"):
        return node.name.lower()
    if isinstance(node, exp.Anonymous) and node.name.lower() in json_rules.SRFS and \
            "_each" not in node.name.lower():  # json_each & co. give records: not here
        return node.name.lower()
    return None


def select_srfs(query_binder, select: exp.Select, node, scope):
    """unnest(a), generate_subscripts(a, 1) and generate_series(start, stop[, step]) of
    integers in the SELECT list: one ProjectSet over the
    FROM rows (after WHERE, which cannot see them) computing them in lockstep, each call
    replaced by a reference to its column. (select, node, scope) unchanged when there is
    none. With GROUP BY, aggregates, DISTINCT or window functions (which PostgreSQL runs
    before them) they are 0A000."""
    # local: bind_expr and this module are in one import loop (test_layering.KNOWN_LOOPS)
    from planner.bind_expr import EXPANDARRAY_ROW, ExprBinder, find_aggregate
    def find(tree):
        return [n for item in tree.expressions for n in item.walk(
            prune=lambda x: isinstance(x, (exp.Subquery, exp.Select)) and x is not tree)
            if _srf_name(n) is not None]
    if not find(select):
        return select, node, scope
    select = select.copy()  # the statement's tree is bound again at Execute: never change it
    calls = find(select)
    if select.args.get("group") or select.args.get("having") or select.args.get("distinct") \
            or any(find_aggregate(i) for i in select.expressions) \
            or any(isinstance(n, exp.Window) for i in select.expressions for n in i.walk()):
        raise errors.FeatureNotSupported(
            "set-returning functions in the SELECT list with GROUP BY, aggregates, DISTINCT "
            "or window functions")
    binder = ExprBinder(scope, query_binder.params)
    arrays, subs, cols = [], [], []
    replaced = {}
    for i, call in enumerate(calls):
        name = _srf_name(call)
        args = [call.this] + list(call.expressions) if isinstance(call, exp.Explode) \
            else [call.args.get(k) for k in ("start", "end", "step")] if isinstance(
                call, exp.ExplodingGenerateSeries) else list(call.expressions)
        args = [a for a in args if a is not None]
        if name == "_pg_expandarray":
            arr = binder.bind(call.expression.expressions[0]) \
                if len(call.expression.expressions) == 1 else None
            if arr is None or not arr.type.is_array:
                raise no_function("information_schema._pg_expandarray",
                                  [arr] if arr is not None else [])
            ones = functions.bind_cast(arr, types.array_of(arr.type.elem))  # n counts from 1
            cols_here = []
            for sub_, t in ((False, arr.type.elem), (True, types.INT4)):
                arrays.append(ones)
                subs.append(sub_)
                cols_here.append(f"?srf{i}{'n' if sub_ else 'x'}")
                cols.append(ScopeColumn("?srf", cols_here[-1], t, hidden=True))
            replaced[id(call)] = (tuple(cols_here), name)
            continue
        if name == "generate_series":  # integers only: planner/array_rules.py
            arr = functions.bind_call(Func.SERIES, [binder.bind(a) for a in args])
            arrays.append(arr)
            subs.append(False)
            col = f"?srf{i}"
            cols.append(ScopeColumn("?srf", col, arr.type.elem, hidden=True))
            replaced[id(call)] = (col, name)
            continue
        if name in json_rules.SRFS:  # jsonb_array_elements(j) & co.: one array each
            (arr, _), = json_rules.rule_srf(name, [binder.bind(a) for a in args])
            arrays.append(arr)
            subs.append(False)
            cols.append(ScopeColumn("?srf", f"?srf{i}", arr.type.elem, hidden=True))
            replaced[id(call)] = (f"?srf{i}", name)
            continue
        if name == "unnest" and len(args) != 1:
            raise errors.FeatureNotSupported("unnest() of several arrays outside FROM")
        if name == "generate_subscripts" and len(args) not in (2, 3):
            raise errors.UndefinedFunction("function generate_subscripts does not exist")
        arr = binder.bind(args[0])
        if not arr.type.is_array:
            raise no_function(name, [arr])
        if name == "generate_subscripts":
            dim = functions.fold_constants(binder.bind(args[1]))
            # A parameter only describes here (its value is bound before execution);
            # a client's untyped 1 arrives as the text '1'.
            described = args[1].find(exp.Parameter, exp.Placeholder) is not None
            if len(args) == 3 or not (described or isinstance(dim, ex.Literal) and (
                    dim.value == 1 or dim.value == "1")):
                raise errors.FeatureNotSupported(
                    "generate_subscripts other than (array, 1)")
            elem = types.INT4
        else:
            elem = arr.type.elem
        arrays.append(arr)
        subs.append(name == "generate_subscripts")
        col = f"?srf{i}"
        cols.append(ScopeColumn("?srf", col, elem, hidden=True))
        replaced[id(call)] = (col, name)

    def swap(n):
        hit = replaced.get(id(n))
        if hit is None:
            return n
        if isinstance(hit[0], tuple):  # _pg_expandarray: the record of its two columns
            return exp.Anonymous(this=EXPANDARRAY_ROW, expressions=[
                exp.Column(this=exp.to_identifier(c, quoted=True),
                           table=exp.to_identifier("?srf", quoted=True)) for c in hit[0]])
        return exp.Column(this=exp.to_identifier(hit[0], quoted=True),
                          table=exp.to_identifier("?srf", quoted=True))

    items = []
    for item in select.expressions:
        bare = _srf_name(item) is not None
        new = item.transform(swap, copy=False) if not bare else swap(item)
        items.append(exp.alias_(new, replaced[id(item)][1], quoted=False) if bare else new)
    select.set("expressions", items)
    fields = node.fields + tuple(pl.Field(c.name, c.type) for c in cols)
    node = pl.ProjectSet(node, tuple(arrays), tuple(subs), fields)
    return select, node, Scope(list(scope.columns) + cols, star_order=scope.star_order,
                               marker=scope.marker)


def _names(arrays, ordinality, alias, col_aliases) -> list[str]:
    default = [alias] if alias and len(arrays) == 1 else ["unnest"] * len(arrays)
    names = (col_aliases + default[len(col_aliases):])[:len(arrays)]
    if ordinality:
        names.append(col_aliases[len(arrays)] if len(col_aliases) > len(arrays) else (
            ordinality.name.lower() if isinstance(ordinality, exp.Identifier)
            else "ordinality"))
    return names


def _unnest_computed(arrays, ordinality, alias, col_aliases):
    """unnest of array expressions without columns that are not folded to constants: a
    ProjectSet over one row without columns."""
    exprs, subs = list(arrays), [False] * len(arrays)
    col_types = [a.type.elem for a in arrays]
    if ordinality:
        if len(arrays) > 1:
            raise errors.FeatureNotSupported(
                "unnest() of several computed arrays WITH ORDINALITY")
        exprs.append(functions.bind_cast(arrays[0], types.array_of(arrays[0].type.elem)))
        subs.append(True)
        col_types.append(types.INT8)
    names = _names(arrays, ordinality, alias, col_aliases)
    one_row = pl.Values(rows=((),), fields=())
    node = pl.ProjectSet(one_row, tuple(exprs), tuple(subs),
                         pl.fields_of(zip(names, col_types)))
    q = alias or "unnest"
    return node, Scope([ScopeColumn(q, n, t) for n, t in zip(names, col_types)])


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
