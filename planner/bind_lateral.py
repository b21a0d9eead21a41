"""Set-returning functions in FROM whose arguments are not constants: implicit LATERAL.

PostgreSQL lets a function in FROM read the columns of the FROM items before it
(`FROM t, unnest(t.a)`, `FROM t, generate_series(1, t.n) s`, also written with LATERAL),
and a function of a correlated subquery read the outer query's columns. Such an item is a
ProjectSet over the join of the items before it (over one row without columns when it
comes first): each of those rows gives as many rows as its function does (none when the
array is NULL or empty, or the range empty), as an inner join with the function's rows
would. The items after it join the ProjectSet's output as usual.

In a correlated subquery the outer columns are the columns of the domain of outer values,
which subquery_domain.py puts first in the subquery's FROM; an outer reference in a
function's arguments thus reads an earlier item like any other. What it leaves to others:
constant arguments (bind.py's GenerateSeries node and bind_srfs.unnest_from's Values),
the functions of the SELECT list (bind_srfs.select_srfs) and LATERAL subqueries
(bind_lateral_subquery.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from planner import errors, functions, json_rules, regex_rules, types
from planner import expr as ex
from planner import plan as pl
from planner.bind_expr import ExprBinder
from planner.coercion import bind_input, no_function
from planner import system_tables, type_names
from planner.schema import RelationName, identifier, lookup_relation
from planner.scope import Scope, ScopeColumn
from planner.type_names import sql_type

_CORRELATED = (errors.UndefinedColumn, errors.UndefinedTable)


@dataclass(frozen=True, slots=True)
class Call:
    """A FROM item that is a set-returning function call: the call (exp.Unnest or
    exp.ExplodingGenerateSeries) and its alias."""

    call: exp.Expression
    alias: str | None
    col_aliases: tuple[str, ...]
    ordinality: bool = False  # WITH ORDINALITY of a json function (unnest keeps its own)
    # `AS a(c1 t1, ...)`: a column definition list's types (json(b)_to_record(set))
    col_types: tuple[types.SqlType, ...] | None = None


@dataclass(frozen=True, slots=True)
class Item:
    """A bound lateral function item: its columns start at `base` in the FROM's scope;
    each of `arrays` gives one of them (its elements, or its subscripts where `subs`)."""

    base: int
    arrays: tuple[ex.Expr, ...]
    subs: tuple[bool, ...]
    columns: tuple[ScopeColumn, ...]
    # Per column, the type its unnested text is cast to (json(b)_to_record's array
    # columns: an array's elements cannot be arrays); empty or None: none.
    casts: tuple[types.SqlType | None, ...] = ()


def call_of(rel: exp.Expression) -> Call | None:
    """The function call of a FROM item that is unnest(...) or generate_series(...)
    (LATERAL written or not), None for any other item."""
    alias_node = rel.args.get("alias")
    ordinality = bool(rel.args.get("ordinality"))
    if isinstance(rel, exp.Lateral):
        rel = rel.this
        alias_node = alias_node or rel.args.get("alias")
    call = rel
    if isinstance(rel, exp.Table) and _json_srf(rel.this) and (rel.db or "").lower() in (
            "", "pg_catalog"):
        call = rel.this
    if _json_srf(call):
        alias = alias_node.name.lower() if alias_node is not None and alias_node.name else None
        cols, col_types = _column_list(alias_node)
        return Call(call, alias, cols, ordinality, col_types)
    if isinstance(rel, exp.Table) and isinstance(rel.this, exp.ExplodingGenerateSeries) and (
            rel.db or "").lower() in ("", "pg_catalog"):
        call = rel.this
    elif isinstance(rel, exp.Table) and isinstance(rel.this, exp.Explode) and (
            rel.db or "").lower() in ("", "pg_catalog"):
        call = exp.Unnest(expressions=[rel.this.this.copy()])
    if not isinstance(call, (exp.Unnest, exp.ExplodingGenerateSeries)):
        return None
    alias = alias_node.name.lower() if alias_node is not None and alias_node.name else None
    cols, col_types = _column_list(alias_node)
    if col_types is not None:
        raise _only_for_records()
    return Call(call, alias, cols)


def _column_list(alias_node) -> tuple[tuple[str, ...], tuple[types.SqlType, ...] | None]:
    """The column aliases of `AS a(c1, ...)`, and the types of a column definition list
    `AS a(c1 t1, ...)` (None when there is none)."""
    if alias_node is None:
        return (), None
    names, kinds = [], []
    for c in alias_node.columns:
        names.append(identifier(c.this if isinstance(c, exp.ColumnDef) else c))
        kinds.append(c.args.get("kind") if isinstance(c, exp.ColumnDef) else None)
    if not any(k is not None for k in kinds):
        return tuple(names), None
    if not all(k is not None for k in kinds):
        raise errors.SyntaxError_("a column definition list needs a type for every column")
    return tuple(names), tuple(sql_type(k) for k in kinds)


def _only_for_records() -> errors.QueryError:
    return errors.QueryError(
        'a column definition list is only allowed for functions returning "record"', "42601")


def _json_srf(node) -> bool:
    """jsonb_array_elements(j) & co. (json_rules.SRFS), json(b)_to_record(set)
    (json_rules.RECORD_SRFS) and regexp_matches / regexp_split_to_table
    (regex_rules.SRFS): a ProjectSet here, over one row when its arguments are
    constants."""
    if not isinstance(node, exp.Anonymous):
        return False
    name = node.name.lower()
    return name in json_rules.FROM_SRFS or name in regex_rules.SRFS


def unwrapped(rel: exp.Lateral) -> exp.Expression:
    """`LATERAL f(...) [AS a]` as the FROM item `f(...) [AS a]`."""
    inner = rel.this.copy()
    alias = rel.args.get("alias")
    if isinstance(inner, exp.ExplodingGenerateSeries):
        return exp.Table(this=inner, alias=alias.copy() if alias is not None else None)
    if alias is not None:
        inner.set("alias", alias.copy())
    return inner


def is_lateral(qb, c: Call) -> bool:
    """Whether the call's arguments are not constants (read columns or functions that
    are computed per query), so that bind.py's constant forms do not apply."""
    args = _args(c.call)
    if _json_srf(c.call) or any(a.find(exp.Column) is not None for a in args):
        return True
    if isinstance(c.call, exp.Unnest):
        return False  # constant or computed arrays: bind_srfs.unnest_from
    binder = ExprBinder(Scope([]), qb.params)
    return not all(isinstance(functions.fold_constants(binder.bind(a)), ex.Literal)
                   for a in args)


def bind(qb, c: Call, scope: Scope) -> Item:
    """The call's arrays bound against the columns before it (`scope`)."""
    binder = ExprBinder(scope, qb.params)
    if isinstance(c.call, exp.ExplodingGenerateSeries):
        return _series(binder, c, len(scope.columns))
    if _json_srf(c.call):
        return _json(qb, binder, c, len(scope.columns))
    arrays = [binder.bind(a) for a in c.call.expressions]
    if not arrays:
        raise errors.UndefinedFunction("function unnest() does not exist")
    for a in arrays:
        if not a.type.is_array:
            raise no_function("unnest", arrays)
    q = c.alias or "unnest"
    default = [q] if c.alias is not None and len(arrays) == 1 else ["unnest"] * len(arrays)
    names = (list(c.col_aliases) + default[len(c.col_aliases):])[:len(arrays)]
    exprs, subs = list(arrays), [False] * len(arrays)
    cols = [ScopeColumn(q, n, a.type.elem) for a, n in zip(arrays, names)]
    ordinality = c.call.args.get("offset")
    if ordinality:
        if len(arrays) > 1:
            raise errors.FeatureNotSupported(
                "unnest() of several arrays of another FROM item WITH ORDINALITY")
        extra = c.col_aliases[len(arrays)] if len(c.col_aliases) > len(arrays) else (
            ordinality.name.lower() if isinstance(ordinality, exp.Identifier) else "ordinality")
        # the ordinality is the array's subscripts counted from 1
        exprs.append(functions.bind_cast(arrays[0], types.array_of(arrays[0].type.elem)))
        subs.append(True)
        cols.append(ScopeColumn(q, extra, types.INT8))
    return Item(len(scope.columns), tuple(exprs), tuple(subs), tuple(cols))


def _series(binder: ExprBinder, c: Call, base: int) -> Item:
    args = [binder.bind(a) for a in _args(c.call)]
    series = functions.bind_call(ex.Func.SERIES, args)
    q = c.alias or "generate_series"
    name = c.col_aliases[0] if c.col_aliases else q
    if len(c.col_aliases) > 1:
        raise errors.QueryError(f'table "{q}" has 1 columns available but '
                                f"{len(c.col_aliases)} columns specified", "42P10")
    return Item(base, (series,), (False,), (ScopeColumn(q, name, series.type.elem),))


def _json(qb, binder: ExprBinder, c: Call, base: int) -> Item:
    """A set-returning json function: one array per output column (json_rules.rule_srf),
    named as PostgreSQL names them (value; key, value; or the function's or alias's name),
    the aliases renaming them in order; WITH ORDINALITY counts the first one's elements."""
    name = c.call.name.lower()
    if name in json_rules.RECORD_SRFS:
        return _record(binder, c, base)
    if name in json_rules.POPULATE_SRFS:
        return _populate(qb, binder, c, base)
    if c.col_types is not None:
        raise _only_for_records()
    rule = json_rules.rule_srf if name in json_rules.SRFS else regex_rules.rule_srf
    pairs = rule(name, [binder.bind(a) for a in c.call.expressions])
    q = c.alias or name
    return _named_item(base, c, q, [a for a, _ in pairs], [n or q for _, n in pairs],
                       [a.type.elem for a, _ in pairs])


def _named_item(base: int, c: Call, q: str, arrays: list, names: list[str],
                col_types: list, casts: list | None = None) -> Item:
    """The item of a function's `arrays`: columns `names` of `col_types` (`casts`: the
    type each unnested value is cast to, if any), renamed in order by the column aliases
    (42P10 for too many), and WITH ORDINALITY the first array's subscripts counted from 1."""
    names = names + (["ordinality"] if c.ordinality else [])
    if len(c.col_aliases) > len(names):
        raise errors.QueryError(f'table "{q}" has {len(names)} columns available but '
                                f"{len(c.col_aliases)} columns specified", "42P10")
    names = list(c.col_aliases) + names[len(c.col_aliases):]
    exprs, subs = list(arrays), [False] * len(arrays)
    casts = list(casts or [None] * len(arrays))
    cols = [ScopeColumn(q, n, t) for n, t in zip(names, col_types)]
    if c.ordinality:
        exprs.append(functions.bind_cast(arrays[0], arrays[0].type))
        subs.append(True)
        casts.append(None)
        cols.append(ScopeColumn(q, names[-1], types.INT8))
    return Item(base, tuple(exprs), tuple(subs), tuple(cols), tuple(casts))


def _record(binder: ExprBinder, c: Call, base: int) -> Item:
    """json(b)_to_record(set)(x) AS a(c1 t1, ...): the columns the definition list
    declares (json_rules.rule_record)."""
    name = c.call.name.lower()
    if c.col_types is None:
        raise errors.QueryError(
            'a column definition list is required for functions returning "record"', "42601")
    if c.ordinality:
        raise errors.QueryError(
            "WITH ORDINALITY cannot be used with a column definition list", "42601")
    seen = set()
    for n in c.col_aliases:
        if n in seen:
            raise errors.QueryError(f'column name "{n}" specified more than once', "42701")
        seen.add(n)
    columns = list(zip(c.col_aliases, c.col_types))
    pairs = json_rules.rule_record(name, [binder.bind(a) for a in c.call.expressions],
                                   columns)
    q = c.alias or name
    cols = tuple(ScopeColumn(q, n, t or a.type.elem) for (n, _), (a, t) in zip(columns, pairs))
    return Item(base, tuple(a for a, _ in pairs), (False,) * len(pairs), cols,
                tuple(t for _, t in pairs))


def _populate(qb, binder: ExprBinder, c: Call, base: int) -> Item:
    """json(b)_populate_record(set)(NULL::t, x): the columns of the row type of table or
    view `t` (the first argument only names it), read as json(b)_to_record(set) reads a
    column definition list (json_rules.rule_record); renamed by column aliases, counted
    WITH ORDINALITY. A base record `ROW(...)::t` fills the keys an object lacks (and is the
    row of a NULL record argument)."""
    name = c.call.name.lower()
    args = list(c.call.expressions)
    if len(args) == 3:  # json_populate_record(set)(base, x, use_json_as_text), a relic
        raise errors.FeatureNotSupported(f"{name}() with a third argument (use_json_as_text)")
    if len(args) != 2:
        raise no_function(name, [binder.bind(a) for a in args])
    if c.col_types is not None:
        raise errors.QueryError("a column definition list is redundant for a function "
                                "returning a named composite type", "42601")
    columns, defaults = row_type(qb, binder, name, args[0])
    pairs = json_rules.rule_record(name, [binder.bind(args[1])], columns, defaults)
    return _named_item(base, c, c.alias or name, [a for a, _ in pairs],
                       [n for n, _ in columns], [t or a.type.elem for a, t in pairs],
                       [t for _, t in pairs])


def row_type(qb, binder: ExprBinder, name: str, arg: exp.Expression
              ) -> tuple[list[tuple[str, types.SqlType]], list[ex.Expr] | None]:
    """The (name, type) columns of the row type that the base record `NULL::t`,
    `CAST(NULL AS s.t)` or `ROW(...)::t` has: a table's or a view's, as PostgreSQL gives
    each its row type (42704 for no such type, 42804 for a type that is not a row type);
    and the ROW's fields cast to them (None for NULL)."""
    while isinstance(arg, exp.Paren):
        arg = arg.this
    fields = None
    if isinstance(arg, exp.Cast) and isinstance(arg.this, exp.Tuple):  # (a, b)::t
        fields = list(arg.this.expressions)
    elif isinstance(arg, exp.Cast) and isinstance(arg.this, exp.Anonymous) and \
            arg.this.name.lower() == "row":
        fields = list(arg.this.expressions)
    elif not isinstance(arg, exp.Cast) or not isinstance(arg.this, exp.Null):
        raise errors.FeatureNotSupported(
            f"{name}() with a base record other than NULL::t or ROW(...)::t")
    to = arg.args["to"]
    if to.this != exp.DataType.Type.USERDEFINED:
        sql_type(to)  # a type raympp lacks is 0A000 as in any cast
        raise errors.QueryError(f"first argument of {name} must be a row type", "42804")
    kind = to.args.get("kind")
    parts = list(kind.flatten()) if isinstance(kind, exp.Dot) else [kind]
    if len(parts) > 3 or not all(isinstance(p, exp.Identifier) for p in parts):
        raise errors.FeatureNotSupported(f"type {to.sql(dialect='postgres')} in {name}()")
    rel = RelationName(*[identifier(p) for p in reversed(parts)])
    found = lookup_relation(qb.catalog, rel)
    if found is None:
        if system_tables.find(qb.catalog, rel) is not None:
            raise errors.FeatureNotSupported(f"{name}() of the row type of system table {rel}")
        if len(parts) == 1 and type_names.cast_type(to) is not None:
            raise errors.QueryError(f"first argument of {name} must be a row type", "42804")
        raise errors.QueryError(f'type "{rel}" does not exist', "42704")
    columns = [(col.name, col.type) for col in found.columns]
    if fields is None:
        return columns, None
    if len(fields) != len(columns):  # PostgreSQL's record-to-composite cast
        raise errors.QueryError(
            f"cannot cast type record to {rel}", "42846",
            detail=f"Input has too {'few' if len(fields) < len(columns) else 'many'} columns.")
    return columns, [functions.bind_cast(binder.bind(f), t)
                     for f, (_, t) in zip(fields, columns)]


def _args(call: exp.Expression) -> list[exp.Expression]:
    if isinstance(call, exp.ExplodingGenerateSeries):
        return [call.args[k] for k in ("start", "end", "step") if call.args.get(k) is not None]
    return list(call.expressions)


def check_join(join: exp.Join | None) -> tuple[exp.Expression | None, bool]:
    """How a lateral item joined by `join` joins: (the condition to apply above it, None
    for a comma or CROSS JOIN; whether it is LEFT JOIN ... ON true). Other outer joins to
    it are 0A000."""
    if join is None:
        return None, False
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    on = join.args.get("on")
    if side == "LEFT" and kind in ("", "OUTER") and isinstance(on, exp.Boolean) and \
            on.this is True and not join.args.get("using"):
        return None, True
    if side or kind not in ("", "CROSS", "INNER") or join.args.get("using") \
            or (join.args.get("method") or "").upper() == "NATURAL":
        what = " ".join(w for w in (side, kind) if w) or "USING or NATURAL"
        raise errors.FeatureNotSupported(
            f"{what} JOIN to a set-returning function that reads other FROM items (LATERAL)"
            + (" other than LEFT JOIN ... ON true" if side == "LEFT" else ""))
    return on, False


def project_set(node: pl.Node, item: Item, outer: bool = False) -> pl.Node:
    """The ProjectSet that adds the item's columns to `node` (the items before it), and
    the Project of the casts of its columns that have one."""
    casts = item.casts or (None,) * len(item.columns)
    fields = node.fields + tuple(pl.Field(c.name, types.TEXT if t is not None else c.type)
                                 for c, t in zip(item.columns, casts))
    out = pl.ProjectSet(node, item.arrays, item.subs, fields, outer=outer)
    if not any(t is not None for t in casts):
        return out
    exprs = [ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields)]
    for j, t in enumerate(casts):
        if t is not None:
            k = len(node.fields) + j
            exprs[k] = bind_input(exprs[k], t, fields[k].name)
    return pl.Project(out, tuple(exprs), tuple(pl.Field(f.name, e.type)
                                               for f, e in zip(fields, exprs)))


def scope_of(qb, rel: exp.Expression, scope: Scope) -> Scope | None:
    """The columns a lateral function item adds after `scope`'s (for a correlated
    subquery's inner scope), or None when `rel` is not one."""
    c = call_of(rel)
    if c is None or not is_lateral(qb, c):
        return None
    return Scope(list(bind(qb, c, scope).columns))
