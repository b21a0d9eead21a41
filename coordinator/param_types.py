"""The types of a statement's $n parameters, inferred from where they stand, as PostgreSQL
infers them at Parse (what ParameterDescription reports and clients encode values for).

PostgreSQL gives an untyped parameter the type its context asks for: the other operand's
type in a comparison (`id = $1` on an int8 column is int8; a varchar column compares as
text, a char(n) one as bpchar), the other operand's in arithmetic (`$1 + 1` is int4), text
for LIKE and ||, the list's or the tested value's in IN and BETWEEN, the target type of a
cast, boolean where a condition stands, int8 in LIMIT and OFFSET, the target column's type
in INSERT, the others' common type in COALESCE/NULLIF/GREATEST/LEAST; a bare parameter in
the SELECT list, or one compared with another parameter, is text. Types are reported
without typmods (numeric, varchar), as PostgreSQL does.

The binder types the other operand: the FROM clause of the parameter's SELECT is bound for
its scope (an outer query's columns are visible in a subquery), and the operand is bound
in it. A parameter whose context is none of these, or whose context does not bind, stays
unknown (reported as text, and its value typed by the binder as an unknown literal).
Declared types (the client's Parse OIDs, PREPARE's list) are never changed.
"""

from __future__ import annotations

import logging

from sqlglot import exp

from planner import bind_recursive, errors, types
from planner.bind import BoundQuery, QueryBinder
from planner.typing_rules import agg_result_type
from planner.bind_expr import AGGREGATES, ExprBinder, find_aggregate
from planner.type_names import cast_type, sql_type
from planner.expr import AggFunc
from planner.scope import LayeredScope, Scope
from planner.types import Kind, SqlType

log = logging.getLogger(__name__)

_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ,
                exp.NullSafeNEQ)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)
_TEXT_OPERATORS = (exp.Like, exp.ILike, exp.DPipe)
_CONDITIONS = (exp.And, exp.Or, exp.Not, exp.Where, exp.Having)
_COMMON = (exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least)
_QUERIES = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values, exp.Subquery)
_AGG_FUNCS = {exp.Count: AggFunc.COUNT, exp.Sum: AggFunc.SUM, exp.Avg: AggFunc.AVG,
              exp.Min: AggFunc.MIN, exp.Max: AggFunc.MAX}


def infer(catalog, tree: exp.Expression, params: list[SqlType],
          insert_target=None) -> list[SqlType]:
    """`params` with its UNKNOWN entries replaced by the types their contexts give.
    `insert_target(tree.this)` gives an INSERT's (table, target column positions)."""
    out = list(params)
    try:
        _Inference(catalog, out, insert_target).statement(tree)
    except Exception:  # inference only informs: binding reports errors later
        log.debug("parameter types of %s not inferred", tree.sql()[:200], exc_info=True)
    return out


def parameter_number(node: exp.Expression) -> int | None:
    """n of a $n placeholder node, else None."""
    if not isinstance(node, (exp.Parameter, exp.Placeholder)):
        return None
    text = node.this.this if isinstance(node.this, exp.Literal) else node.name
    return int(text) if str(text).isdigit() else None


def reported(t: SqlType) -> SqlType:
    """The type as a parameter has it: without typmod; unknown is text."""
    if t.kind is Kind.NUMERIC:
        return types.numeric(None, 0)
    if t.kind is Kind.VARCHAR:
        return types.varchar(None)
    if t.kind is Kind.CHAR:
        return types.SqlType(Kind.CHAR)
    return t


class _Inference:
    def __init__(self, catalog, params: list[SqlType], insert_target):
        self.catalog = catalog
        self.params = params
        self.insert_target = insert_target

    # --- statements and queries ----------------------------------------------------------
    def statement(self, tree: exp.Expression) -> None:
        if isinstance(tree, exp.Insert):
            self._insert(tree)
        elif isinstance(tree, _QUERIES):
            self.query(tree, None, {})

    def _insert(self, tree: exp.Insert) -> None:
        if self.insert_target is None:
            return
        table, cols = self.insert_target(tree.this)
        source = tree.expression
        rows = []
        if isinstance(source, exp.Values):
            rows = [list(t.expressions) for t in source.expressions]
        elif isinstance(source, exp.Select):
            rows = [list(source.expressions)]
        for row in rows:
            for j, item in enumerate(row):
                item = item.this if isinstance(item, exp.Alias) else item
                while isinstance(item, exp.Paren):
                    item = item.this
                n = parameter_number(item)
                if n is not None and j < len(cols):
                    self._set(n, table.columns[cols[j]].type)
        if isinstance(source, _QUERIES):
            self.query(source, None, {})

    def query(self, tree, outer: Scope | None, ctes: dict) -> None:
        if isinstance(tree, exp.Subquery):
            self.query(tree.this, outer, ctes)
            self._modifiers(tree)
            return
        ctes = dict(ctes)
        with_ = tree.args.get("with_") or tree.args.get("with")
        if with_ is not None:
            for cte in with_.expressions:
                alias = cte.args.get("alias")
                cols = [c.name.lower() for c in alias.columns] if alias is not None else []
                name = cte.alias_or_name.lower()
                recursive = bool(with_.args.get("recursive")) and bool(
                    bind_recursive.references(cte.this, name))
                if recursive:  # its recursive term reads it: known before its parameters
                    try:
                        ctes[name] = BoundQuery(*bind_recursive.bind(
                            self._binder(ctes), name, cte.this, cols))
                    except errors.QueryError:
                        pass  # (correlated, or an error binding reports later)
                self.query(cte.this, outer, ctes)
                if recursive:
                    continue
                bq = self._binder(ctes).bind(cte.this)
                ctes[name] = BoundQuery(bq.node, tuple(cols) + bq.names[len(cols):])
        if isinstance(tree, exp.Select):
            self._select(tree, outer, ctes)
        elif isinstance(tree, (exp.Union, exp.Intersect, exp.Except)):
            self.query(tree.this, outer, ctes)
            self.query(tree.expression, outer, ctes)
            self._modifiers(tree)

    def _binder(self, ctes: dict) -> QueryBinder:
        qb = QueryBinder(self.catalog, [types.UNKNOWN] * len(self.params))
        qb.ctes = dict(ctes)
        return qb

    def _select(self, select: exp.Select, outer: Scope | None, ctes: dict) -> None:
        # Subqueries of FROM first: they are bound with the FROM below, and their own
        # parameters are theirs.
        from_ = select.args.get("from_") or select.args.get("from")
        items = ([from_.this] if from_ is not None else []) + [
            j.this for j in select.args.get("joins") or []]
        for item in items:
            if isinstance(item, exp.Subquery):
                self.query(item.this, None, ctes)
        try:
            _, scope, _ = self._binder(ctes)._from(select)
        except errors.QueryError:
            scope = Scope([])
        if outer is not None:
            scope = LayeredScope(scope, outer)
        self._clauses(select, scope, ctes)

    def _modifiers(self, tree) -> None:
        """LIMIT / OFFSET / FETCH written on a set operation or a parenthesized query."""
        for key in ("limit", "offset"):
            arg = tree.args.get(key)
            for n in (arg.walk() if arg is not None else ()):
                k = parameter_number(n)
                if k is not None and self._context(n, Scope([])) is types.INT8:
                    self._set(k, types.INT8)

    def _clauses(self, node, scope, ctes: dict | None = None) -> None:
        """The parameters of one query level (not of the queries nested in it)."""
        def nested(n):
            return n is not node and isinstance(n, _QUERIES)
        for n in node.walk(prune=nested):
            if n is node:
                continue
            if isinstance(n, _QUERIES):
                if not isinstance(n.parent, (exp.From, exp.Join, exp.CTE)):
                    # A subquery in an expression sees this level's columns (those of
                    # FROM and WITH are done by `query`).
                    self.query(n.this if isinstance(n, exp.Subquery) else n, scope,
                               ctes or {})
                continue
            k = parameter_number(n)
            if k is not None:
                t = self._context(n, scope)
                if t is not None:
                    self._set(k, t)

    def _set(self, n: int, t: SqlType) -> None:
        while len(self.params) < n:
            self.params.append(types.UNKNOWN)
        if self.params[n - 1].kind is Kind.UNKNOWN and t.kind is not Kind.UNKNOWN:
            self.params[n - 1] = reported(t)

    # --- contexts --------------------------------------------------------------------------
    def _context(self, p, scope) -> SqlType | None:
        node, parent = p, p.parent
        while isinstance(parent, exp.Paren):
            node, parent = parent, parent.parent
        if parent is None:
            return None
        if isinstance(parent, exp.Cast) and parent.this is node:
            # $1::oid[], $1::regclass: the catalog types, as the binder reads them
            return cast_type(parent.to) or sql_type(parent.to)
        if isinstance(parent, _COMPARISONS):
            other = parent.expression if parent.this is node else parent.this
            if isinstance(other, (exp.Any, exp.All)):  # $1 = ANY(a): a's element type
                t = self._type_of(other.this, scope)
                return _compared(t.elem) if t is not None and t.is_array else None
            return _compared(self._type_of(other, scope))
        if isinstance(parent, (exp.Any, exp.All)) and isinstance(parent.parent, _COMPARISONS) \
                and parent.parent.expression is parent:  # x = ANY($1): an array of x's type
            t = self._type_of(parent.parent.this, scope)
            return types.array_of(_compared(t)) if t is not None and \
                t.kind in types.ELEMENT_KINDS else None
        if isinstance(parent, exp.Bracket) and parent.this is not node:
            return types.INT4  # a[$1]
        if isinstance(parent, _TEXT_OPERATORS):
            return types.TEXT
        if isinstance(parent, _ARITHMETIC):
            other = parent.expression if parent.this is node else parent.this
            t = self._type_of(other, scope)
            return t if t is not None and t.is_number else None
        if isinstance(parent, exp.Between):
            if parent.this is node:
                bounds = [parent.args.get("low"), parent.args.get("high")]
                return _compared(self._common(bounds, scope))
            return _compared(self._type_of(parent.this, scope))
        if isinstance(parent, exp.In):
            if parent.this is node:
                return _compared(self._common(parent.expressions, scope))
            return _compared(self._type_of(parent.this, scope))
        if isinstance(parent, (exp.Limit, exp.Offset)) or (
                isinstance(parent, exp.Fetch) and parent.args.get("count") is node):
            return types.INT8
        if isinstance(parent, _CONDITIONS) or (
                isinstance(parent, exp.Join) and parent.args.get("on") is node):
            return types.BOOL
        if isinstance(parent, _COMMON):
            return _compared(self._common([a for a in parent.iter_expressions()
                                           if a is not node], scope))
        if isinstance(parent, exp.If) and parent.this is node:
            return types.BOOL  # CASE WHEN $1 THEN ...
        return None

    def _common(self, exprs, scope) -> SqlType | None:
        t = None
        for e in exprs:
            if e is None or parameter_number(_unparen(e)) is not None:
                continue
            u = self._type_of(e, scope)
            if u is None:
                return None
            try:
                t = u if t is None else types.common_type(t, u)
            except errors.QueryError:
                return None
        return t

    def _type_of(self, e, scope) -> SqlType | None:
        """The type of the expression `e` in `scope`, None when it does not bind."""
        e = _unparen(e)
        if parameter_number(e) is not None:
            return types.UNKNOWN
        try:
            if isinstance(e, (exp.Select, exp.Subquery)):
                bq = self._binder({}).bind(e.this if isinstance(e, exp.Subquery) else e)
                return bq.node.fields[0].type if bq.node.fields else None
            if isinstance(e, AGGREGATES):
                return self._aggregate(e, scope)
            if find_aggregate(e) is not None:
                return None
            return ExprBinder(scope, [types.UNKNOWN] * len(self.params)).bind(e).type
        except (errors.QueryError, KeyError, AttributeError, TypeError, ValueError):
            return None

    def _aggregate(self, e, scope) -> SqlType | None:
        inner = e.this
        if isinstance(inner, exp.Distinct) and len(inner.expressions) == 1:
            inner = inner.expressions[0]
        if isinstance(e, exp.Count):
            return types.INT8
        if inner is None:
            return None
        arg = ExprBinder(scope, [types.UNKNOWN] * len(self.params)).bind(inner)
        return agg_result_type(_AGG_FUNCS[type(e)], arg.type)


def _unparen(e):
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _compared(t: SqlType | None) -> SqlType | None:
    """The parameter's type when compared with a value of type t: varchar compares as
    text (it has no operators of its own), unknown (another parameter, NULL) as text."""
    if t is None:
        return None
    if t.kind in (Kind.VARCHAR, Kind.UNKNOWN):
        return types.TEXT
    return t
