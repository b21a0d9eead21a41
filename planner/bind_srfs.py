"""Set-returning functions over arrays and series, bound at the query level.

`unnest_from` binds FROM unnest(a1 [, a2 ...]) [WITH ORDINALITY] over constant arrays (a
Values leaf) or computed ones (a ProjectSet over one row); `select_srfs` binds unnest(),
generate_subscripts(), generate_series(), the json SRFs and _pg_expandarray() in the SELECT
list as one ProjectSet over the FROM rows. bind.QueryBinder calls both; they bind their
arguments with bind_expr.ExprBinder (the array syntax itself is bind_array's).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from planner import errors, functions, json_rules, regex_rules, types
from planner import expr as ex
from planner import plan as pl
from planner import bind_lateral
from planner.bind_expr import NAMED_ROW, ExprBinder, find_aggregate
from planner.coercion import no_function
from planner.expr import Func
from planner.scope import Scope, ScopeColumn


def unnest_from(query_binder, rel: exp.Unnest, alias: str | None, col_aliases: list[str]):
    """FROM unnest(a1 [, a2 ...]) [WITH ORDINALITY] [AS q(c1, ... [, n])] over constant
    arrays: a Values leaf, the arrays side by side (shorter ones padded with NULL), the
    1-based ordinality last. Arrays that are not constants (a column: implicit LATERAL)
    are 0A000."""
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


def _srf_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Explode):
        return "unnest"
    if isinstance(node, exp.ExplodingGenerateSeries):
        return "generate_series"
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.Identifier) and isinstance(
            node.expression, exp.Anonymous) and node.this.name.lower() == "information_schema" \
            and node.expression.name.lower() == "_pg_expandarray":
        return "_pg_expandarray"  # (x, n) records of an array's elements (JDBC reads them)
    if isinstance(node, exp.Anonymous) and node.name.lower() in (
            "unnest", "generate_subscripts", "string_to_table"):
        return node.name.lower()
    if isinstance(node, exp.Anonymous) and node.name.lower() in (
            json_rules.SRFS + json_rules.POPULATE_SRFS):
        return node.name.lower()
    if isinstance(node, exp.Anonymous) and node.name.lower() in regex_rules.SRFS:
        return node.name.lower()
    return None


def select_srfs(query_binder, select: exp.Select, node, scope):
    """unnest(a), generate_subscripts(a, 1), string_to_table(s, d [, null]) and
    generate_series(start, stop[, step]) of integers in the SELECT list: one ProjectSet over the
    FROM rows (after WHERE, which cannot see them) computing them in lockstep, each call
    replaced by a reference to its column. (select, node, scope) unchanged when there is
    none. With GROUP BY, aggregates, DISTINCT or window functions (which PostgreSQL runs
    before them) they are 0A000."""
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
    # json(b)_populate_record's fields: scalars computed per FROM row by a Project below
    # the ProjectSet (it is no set-returning function: its record repeats alongside one)
    scalars: list[ex.Expr] = []
    scope_extra: list[ScopeColumn] = []
    # id of each call -> (its column, its name), or a _Record of its columns
    replaced: dict[int, tuple[str, str] | _Record] = {}

    def column(arr: ex.Expr, col: str, sub: bool = False, t=None) -> str:
        """A ProjectSet column unnesting `arr` (its subscripts where `sub`)."""
        arrays.append(arr)
        subs.append(sub)
        cols.append(ScopeColumn("?srf", col, t or arr.type.elem, hidden=True))
        return col

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
            x, n = column(ones, f"?srf{i}x"), column(ones, f"?srf{i}n", True, types.INT4)
            replaced[id(call)] = _Record(name, (x, n), ("x", "n"), n)
            continue
        if name == "generate_series":  # integers only: planner/array_rules.py
            arr = functions.bind_call(Func.SERIES, [binder.bind(a) for a in args])
            replaced[id(call)] = (column(arr, f"?srf{i}"), name)
            continue
        if name in json_rules.SRFS or name in regex_rules.SRFS:
            rule = json_rules.rule_srf if name in json_rules.SRFS else regex_rules.rule_srf
            pairs = rule(name, [binder.bind(a) for a in args])
            if len(pairs) == 1:
                replaced[id(call)] = (column(pairs[0][0], f"?srf{i}"), name)
                continue
            # json(b)_each(_text): a (key, value) record; a key is never NULL
            key, value = (column(a, f"?srf{i}{k}") for (a, _), k in zip(pairs, "kv"))
            replaced[id(call)] = _Record(name, (key, value), ("key", "value"), key)
            continue
        if name in json_rules.POPULATE_SRFS:  # a record of the named row type
            if len(args) != 2:
                raise errors.FeatureNotSupported(f"{name}() of {len(args)} arguments")
            columns, defaults = bind_lateral.row_type(query_binder, binder, name, args[0])
            x = binder.bind(args[1])
            pairs = json_rules.rule_record(name, [x], columns, defaults)
            if any(t is not None for _, t in pairs):
                raise errors.FeatureNotSupported(
                    f"{name}() with array columns outside FROM")
            here = tuple(f"?srf{i}c{j}" for j in range(len(pairs)))
            names = tuple(n for n, _ in columns)
            if not name.endswith("recordset"):
                # its one row's fields; NULL when x is, unless a base record fills them
                present = ex.Literal(1, types.INT4) if defaults is not None else x
                values = [functions.bind_call(Func.SUBSCRIPT, [arr, ex.Literal(1, types.INT4)])
                          for arr, _ in pairs] + [present]
                scalars += values
                scope_extra += [ScopeColumn("?srf", c, e.type, hidden=True)
                                for c, e in zip(here + (f"?srf{i}p",), values)]
                replaced[id(call)] = _Record(name, here, names, f"?srf{i}p")
                continue
            for (arr, _), col in zip(pairs, here):
                column(arr, col)
            # the first column's subscripts: not NULL while the function gives rows
            present = column(functions.bind_cast(pairs[0][0], pairs[0][0].type), f"?srf{i}p",
                             True, types.INT8)
            replaced[id(call)] = _Record(name, here, names, present)
            continue
        if name == "string_to_table":  # the elements of string_to_array's array
            arr = functions.bind_call(Func.STRING_TO_ARRAY, [binder.bind(a) for a in args])
            replaced[id(call)] = (column(arr, f"?srf{i}"), name)
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
        replaced[id(call)] = (column(arr, f"?srf{i}", name == "generate_subscripts", elem),
                              name)

    def swap(n):
        hit = replaced.get(id(n))
        if hit is None:
            return n
        if isinstance(hit, _Record):  # (present, 'name', value, ...)
            named = [e for c, n in zip(hit.columns, hit.names)
                     for e in (exp.Literal.string(n), _srf_column(c))]
            return exp.Anonymous(this=NAMED_ROW, expressions=[_srf_column(hit.present)] + named)
        return _srf_column(hit[0])

    items = []
    for item in select.expressions:
        record = _star_of(item, replaced)
        if record is not None:  # (jsonb_each(j)).*: the record's fields, by their names
            items += [exp.alias_(_srf_column(c), n, quoted=True)
                      for c, n in zip(record.columns, record.names)]
            continue
        hit = replaced.get(id(item)) if _srf_name(item) is not None else None
        if hit is None:
            items.append(item.transform(swap, copy=False))
        else:  # the bare call: named after the function
            items.append(exp.alias_(swap(item), hit.name if isinstance(hit, _Record)
                                    else hit[1], quoted=False))
    select.set("expressions", items)
    if scalars:
        node = pl.Project(node, tuple(ex.ColumnRef(k, f.type, f.name)
                                      for k, f in enumerate(node.fields)) + tuple(scalars),
                          node.fields + tuple(pl.Field(c.name, c.type) for c in scope_extra))
    if arrays:
        fields = node.fields + tuple(pl.Field(c.name, c.type) for c in cols)
        node = pl.ProjectSet(node, tuple(arrays), tuple(subs), fields)
    return select, node, Scope(list(scope.columns) + scope_extra + cols,
                               star_order=scope.star_order, marker=scope.marker)


def _srf_column(name: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name, quoted=True),
                      table=exp.to_identifier("?srf", quoted=True))


@dataclass(frozen=True)
class _Record:
    """A SELECT-list function of records: its columns, named `names` in the record, and
    the column that is NULL once the function has ended (bind_expr.NAMED_ROW)."""

    name: str
    columns: tuple[str, ...]
    names: tuple[str, ...]
    present: str


def _star_of(item: exp.Expression, replaced: dict) -> _Record | None:
    """The record `(f(...)).*` expands, when f's call was replaced by one."""
    if not (isinstance(item, exp.Dot) and isinstance(item.expression, exp.Star)):
        return None
    inner = item.this
    while isinstance(inner, exp.Paren):
        inner = inner.this
    hit = replaced.get(id(inner))
    return hit if isinstance(hit, _Record) else None


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
