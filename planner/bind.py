"""Bind a sqlglot SELECT to a plan tree without Motions (distribute.py adds those).

The shape follows SQL's evaluation order: FROM -> WHERE -> GROUP BY/aggregates -> HAVING
-> SELECT list -> DISTINCT -> ORDER BY -> LIMIT/OFFSET. Names resolve through Scopes;
expressions come from bind_expr.py, joins from bind_join.py, subqueries in expressions
from bind_subquery.py (those of GROUP BY keys, evaluated before the grouping, from
group_subqueries.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields

from sqlglot import exp

from planner import (binary_rules, bind_array, bind_join, bind_json, bind_lateral,
                     bind_lateral_subquery, bind_recursive, bind_srfs, bind_subquery,
                     bind_window, catalog_functions, bitwise_aggregates, coercion,
                     datetime_values,
                     distinct_on, errors, functions, grouping_sets,
                     hypothetical_aggregates, json_aggregates, json_grouping, json_rules,
                     ordered_aggregates, regression_aggregates, set_operations,
                     statistics_aggregates, string_aggregates, subquery_domain, system_tables,
                     table_functions, types, view_expand)
from planner import expr as ex
from planner import group_subqueries, interval_aggregates, numeric_aggregates
from planner import plan as pl
from planner import row_aggregates
from planner.bind_expr import AGGREGATES, STATISTICS, ExprBinder, find_aggregate, row_of
from planner.typing_rules import agg_result_type
from planner.schema import (MODIFY_TARGET, ROW_ID, SEGMENT_ID, SEGMENT_ID_COLUMN,
                            CatalogView, Relation, ViewDef,
                            identifier, relation_name, schema_of)
from planner.system_tables import resolve_relation
from planner.scope import LayeredScope, Scope, ScopeColumn
from planner.temporal import TEMPORAL, USECS_PER_DAY


@dataclass(frozen=True)
class BoundQuery:
    node: pl.Node
    names: tuple[str, ...]


def _calls_random(node: pl.Node) -> bool:
    """Whether any expression of the plan calls random()."""
    for n in pl.walk(node):
        for f in dataclass_fields(n):
            value = getattr(n, f.name)
            for e in value if isinstance(value, tuple) else (value,):
                e = e.arg if isinstance(e, ex.AggCall) else e  # sum(random())
                if isinstance(e, ex.Expr) and ex.is_volatile(e):
                    return True
    return False


def _names_segment_id(rel: exp.Table) -> bool:
    """Whether the statement `rel` is in names the gp_segment_id column anywhere (then its
    tables' scans give it; others read no more than before)."""
    return any(c.name.lower() == SEGMENT_ID_COLUMN for c in rel.root().find_all(exp.Column))


class QueryBinder:
    def __init__(self, catalog: CatalogView, params: list[types.SqlType] | None = None,
                 run_plan=None):
        self.catalog = catalog
        self.params = params if params is not None else []
        # Runs a plan before the statement (an uncorrelated scalar subquery: an InitPlan;
        # a recursive CTE's steps), returning its rows as an Arrow table; None while only
        # describing a statement.
        self.run_plan = run_plan
        self.ctes: dict[str, BoundQuery] = {}
        # The tables and views the statement names, in the order it names them (CREATE
        # VIEW records them as the view's dependencies), shared by every binder of it.
        self.reads: list[Relation] = []
        # The ids of the views being expanded around this binder (a view reaching itself
        # is 42P17).
        self.expanding: tuple[int, ...] = ()

    def child(self) -> "QueryBinder":
        """A binder for a subquery, derived table or set-operation branch: the same
        catalog, parameters and InitPlan runner, and the CTEs visible here."""
        qb = QueryBinder(self.catalog, self.params, run_plan=self.run_plan)
        qb.ctes = dict(self.ctes)
        qb.reads, qb.expanding = self.reads, self.expanding
        return qb

    def view_binder(self, catalog: CatalogView, view_id: int) -> "QueryBinder":
        """A binder for the query of view `view_id` read here (planner/view_expand.py):
        its own names (`catalog`), no parameters and no CTEs of the reading query. Its
        `reads` are its own: what the view's query names (not the reading statement's)."""
        qb = QueryBinder(catalog, [], run_plan=self.run_plan)
        qb.expanding = self.expanding + (view_id,)
        return qb

    def with_relation(self, name: str, node: pl.Node, names: tuple[str, ...]) -> None:
        """Make `node` readable in FROM as `name` (as a CTE is)."""
        self.ctes[name] = BoundQuery(node, names)

    # --- entry ---------------------------------------------------------------------------
    def bind(self, tree: exp.Expression) -> BoundQuery:
        if isinstance(tree, exp.Subquery):
            # (query) ORDER BY ... LIMIT ...: the modifiers apply to the inner result.
            inner = self.bind(tree.this)
            return self._modified(inner, tree)
        with_ = tree.args.get("with_") or tree.args.get("with")
        if with_ is not None:
            for cte in with_.expressions:
                alias = cte.args.get("alias")
                cols = [c.name.lower() for c in alias.columns] if alias is not None else []
                name = identifier(cte.args["alias"].this)
                if with_.args.get("recursive"):
                    recursive = bind_recursive.bind(self, name, cte.this, cols)
                    if recursive is not None:
                        self.ctes[name] = BoundQuery(*recursive)
                        continue
                bq = self.bind(cte.this)
                if len(cols) > len(bq.names):
                    raise errors.QueryError(
                        f'WITH query "{cte.alias_or_name}" has {len(bq.names)} columns '
                        f"available but {len(cols)} columns specified", "42P10")
                node = bq.node
                if self.run_plan is not None and _calls_random(node):
                    # Each reference reads the same rows, as PostgreSQL's CTE scan does
                    # (a plan per reference would draw random() anew).
                    node = pl.Materialized(self.run_plan(node), node.fields)
                self.ctes[identifier(cte.args["alias"].this)] = BoundQuery(
                    node, tuple(cols) + bq.names[len(cols):])
        if isinstance(tree, exp.Select):
            return self._select(tree)
        if isinstance(tree, (exp.Union, exp.Intersect, exp.Except)):
            return self._set_operation(tree)
        if isinstance(tree, exp.Values):
            return self._modified(self._values(tree), tree)
        raise errors.FeatureNotSupported(f"statement {tree.key.upper()}")

    def _modified(self, bq: BoundQuery, tree) -> BoundQuery:
        """`bq` with the ORDER BY / LIMIT / OFFSET / FETCH written on `tree` applied."""
        if not any(tree.args.get(k) for k in ("order", "limit", "offset")):
            return bq
        return BoundQuery(self._order_limit(bq.node, tree, bq.names), bq.names)

    # --- FROM ----------------------------------------------------------------------------
    def _from(self, select: exp.Select, where: list | None = None,
              outer: Scope | None = None) -> tuple[pl.Node, Scope, list]:
        """The FROM clause's plan and scope, with the WHERE conjuncts `where` (sqlglot)
        applied: a join group orders its joins by them. With `outer`, conjuncts may use
        the outer query's columns; those are returned, bound against outer columns
        followed by this FROM's, for the caller to turn into join conditions."""
        from_ = select.args.get("from_") or select.args.get("from")
        where = where or []
        laterals: dict[int, bind_lateral.Item] = {}
        if from_ is None:
            parts, scope, joins = [bind_join.Part(pl.Values(rows=((),), fields=()), [])], \
                Scope([]), []
        else:
            joins = select.args.get("joins") or []
            columns, parts = [], []
            for k, rel in enumerate([from_.this] + [j.this for j in joins]):
                start = len(columns)
                call = bind_lateral.call_of(rel)
                if call is not None and bind_lateral.is_lateral(self, call):
                    # FROM t, unnest(t.a) / generate_series(1, t.n): implicit LATERAL
                    try:
                        item = bind_lateral.bind(self, call, Scope(list(columns)))
                    except (errors.UndefinedColumn, errors.UndefinedTable):
                        if outer is None:
                            raise
                        # The outer query's columns in a function's arguments: not a
                        # join's condition; the caller evaluates the subquery otherwise.
                        raise errors.FeatureNotSupported(
                            "outer references in a FROM function of a subquery") from None
                    laterals[k] = item
                    columns += item.columns
                    parts.append(None)  # a ProjectSet over the items before it
                    continue
                if bind_lateral_subquery.is_subquery(rel):
                    try:
                        item = bind_lateral_subquery.describe(self, rel, Scope(list(columns)),
                                                              start)
                    except (errors.UndefinedColumn, errors.UndefinedTable):
                        if outer is None:
                            raise
                        raise errors.FeatureNotSupported(
                            "outer references in a LATERAL subquery of a subquery") from None
                    if item is not None:
                        laterals[k] = item
                        columns += item.columns
                        parts.append(None)  # joined to the items before it
                        continue
                if isinstance(rel, exp.Lateral) and call is not None:  # of constants
                    rel = bind_lateral.unwrapped(rel)
                node, sc = self._relation(rel)
                columns += sc.columns
                parts.append(bind_join.Part(node, list(range(start, len(columns)))))
            scope = Scope(columns)
        # USING / NATURAL first: WHERE reads their merged columns (not ambiguous).
        ons = self._join_conditions(parts, joins, scope, laterals) \
            if from_ is not None and joins else None
        n_outer = len(outer.columns) if outer is not None else 0
        bind_scope = LayeredScope(scope, outer) if outer is not None else scope
        preds, correlated = [], []
        for tree in where:
            e = self._predicate(tree, bind_scope, "WHERE")
            for c in bind_join.conjuncts(e):
                used = ex.columns_used(c)
                if outer is not None and any(i < n_outer for i in used):
                    correlated.append(c)
                elif outer is not None:
                    preds.append(ex.map_columns(c, {i: i - n_outer for i in used}))
                else:
                    preds.append(c)
        if laterals:
            return self._lateral_parts(parts, joins, scope, preds, laterals, ons), scope, \
                correlated
        return self._join_parts(parts, joins, scope, preds, ons), scope, correlated

    def lateral_columns(self, rel: exp.Lateral, before: Scope) -> list[ScopeColumn]:
        """The columns of the FROM item LATERAL (subquery) after the columns `before`."""
        item = bind_lateral_subquery.describe(self, rel, before, len(before.columns))
        return list(item.columns) if item is not None else self._relation(rel)[1].columns

    def _lateral_parts(self, parts, joins, scope: Scope, preds: list,
                       laterals: dict, ons: list | None) -> pl.Node:
        """The FROM's plan when items at `laterals` read the items before them: the join
        of those items (with the WHERE conjuncts over their columns only), a ProjectSet of
        the function over it, and so on; the rest as _join_parts joins it. `ons` are
        _join_conditions' (a LATERAL subquery's ON, USING or NATURAL among them)."""
        group, group_joins, group_ons = [], [], []
        for k, part in enumerate(parts):
            if k not in laterals:
                if group:
                    group_joins.append(joins[k - 1])
                    group_ons.append(ons[k - 1])
                group.append(part)
                continue
            item = laterals[k]
            subquery = isinstance(item, bind_lateral_subquery.Item)
            if subquery:
                left = bind_lateral_subquery.check_join(joins[k - 1])
                if not left and (joins[k - 1].args.get("side") or ""):
                    raise bind_lateral_subquery.invalid_join(item)
                on_conds = list(ons[k - 1])
            else:
                on, left = bind_lateral.check_join(joins[k - 1] if k > 0 else None)
                on_conds = [] if on is None else bind_join.conjuncts(
                    self._predicate(on, scope, "JOIN/ON"))
            if not left:
                preds, on_conds = preds + on_conds, []
            before = [p for p in preds if all(i < item.base for i in ex.columns_used(p))]
            preds = [p for p in preds if all(p is not b for b in before)]
            if group:
                sub = Scope(scope.columns[:item.base], star_order=scope.star_order)
                node = self._join_parts(group, group_joins, sub, before, group_ons)
            else:
                node = pl.Values(rows=((),), fields=())
                if before:
                    node = pl.Filter(node, functions.fold_constants(bind_join.conjoin(before)),
                                     node.fields)
            if subquery:
                node = bind_lateral_subquery.join(self, node, item, scope.columns[:item.base],
                                                  left, on_conds)
            else:
                node = bind_lateral.project_set(node, item, outer=left)
            group = [bind_join.Part(node, list(range(item.base + len(item.columns))))]
            group_joins, group_ons = [], []
        return self._join_parts(group, group_joins, scope, preds, group_ons)

    def _join_conditions(self, parts, joins, gscope: Scope,
                         laterals: dict | None = None) -> list[list[ex.Expr]]:
        """Each join's ON / USING / NATURAL condition as conjuncts, bound in join order.
        USING and NATURAL hide the merged column's other copy in `gscope` (bind WHERE
        after this, so that it reads the merged column). A lateral function's join
        (`laterals`, no part) has none here: _lateral_parts binds its ON."""
        laterals = laterals or {}
        binder = ExprBinder(gscope, self.params)
        out = []
        n_base = len(gscope.columns)  # FULL JOIN's merged columns come after
        last = max(laterals, default=0)
        for k, j in enumerate(joins, start=1):
            natural = (j.args.get("method") or "").upper() == "NATURAL"
            item = laterals.get(k)
            if item is not None and not isinstance(item, bind_lateral_subquery.Item):
                out.append([])
                continue
            if (j.args.get("side") or "").upper() == "FULL" and k < last and (
                    natural or j.args.get("using")):
                # Its merged column would come after the LATERAL item's columns.
                raise errors.FeatureNotSupported(
                    "FULL JOIN with USING or NATURAL before a LATERAL item")
            part = parts[k] if item is None else bind_join.Part(
                None, list(range(item.base, item.base + len(item.columns))))
            on = [self._join_condition(j, part, n_base, gscope, binder)] if (
                j.args.get("on") is not None or j.args.get("using") or natural) else []
            out.append([c for e in on if e is not None for c in bind_join.conjuncts(e)])
        return out

    def _join_parts(self, parts, joins, gscope: Scope, preds: list,
                    ons: list[list[ex.Expr]] | None = None) -> pl.Node:
        if not joins and len(parts) == 1:
            node = parts[0].node
            pred = bind_join.conjoin(preds)
            return pl.Filter(node, functions.fold_constants(pred), node.fields) \
                if pred is not None else node
        planner = bind_join.JoinPlanner(gscope)
        if ons is None:
            ons = self._join_conditions(parts, joins, gscope)
        group, pending = [parts[0]], []
        kinds = bind_join.reduced([bind_join.join_type_of(j) for j in joins], parts, preds)
        for k, (jt, part, on) in enumerate(zip(kinds, parts[1:], ons)):
            if jt is pl.JoinType.INNER:
                group.append(part)
                pending += on
                continue
            # A WHERE conjunct over the group's columns alone filters the group before
            # this outer join when the group is preserved by it and by every outer join
            # above (all LEFT): each output row is a group row extended, so the row the
            # conjunct rejects goes either way. Its equalities then order the group's
            # joins (TPC-DS q72: `d1.d_week_seq = d2.d_week_seq` under two LEFT JOINs).
            if all(t in (pl.JoinType.INNER, pl.JoinType.LEFT) for t in kinds[k:]):
                have = {c for p in group for c in p.cols}
                mine = [p for p in preds if ex.columns_used(p) and ex.columns_used(p) <= have]
                preds = [p for p in preds if all(p is not m for m in mine)]
                pending += mine
            current, pending = planner.inner_group(group, pending)
            group = [_with_merged(planner.join(current, part, jt, on), gscope)]
        # WHERE applies to the outer joins' results, never inside them; the last group
        # (the outer joins' result and the relations inner-joined after it) is at the
        # top, where WHERE's equalities are its join keys as well as anywhere.
        current, rest = planner.inner_group(group, pending + preds)
        current = planner.filter_rest(current, rest)
        return bind_join.output_project(current, len(gscope.columns), gscope)

    def _join_condition(self, j, part, n_base, gscope, binder) -> ex.Expr | None:
        using = [ident.name if ident.quoted else ident.name.lower()
                 for ident in j.args.get("using") or []]
        # The left side: the items before this one and the merged columns of earlier joins.
        left_side = [g for g in range(len(gscope.columns)) if g < part.cols[0] or g >= n_base]
        if (j.args.get("method") or "").upper() == "NATURAL":
            # NATURAL: USING every column name both sides show, in the left side's order.
            mine = {gscope.columns[g].name for g in part.cols}
            using = []
            for g in self._star_order(gscope, left_side):
                c = gscope.columns[g]
                if c.name in mine and c.name not in using and not (c.hidden or c.qualified_only):
                    using.append(c.name)
            if not using:
                return None  # no common columns: a cross join
        elif not using:
            return self._predicate(j.args["on"], gscope, "JOIN/ON")
        jt = bind_join.join_type_of(j)
        eqs, merged = [], []
        for name in using:
            mine = [g for g in part.cols if gscope.columns[g].name == name
                    and not gscope.columns[g].qualified_only]
            before = [g for g in left_side if gscope.columns[g].name == name
                      and not gscope.columns[g].hidden and not gscope.columns[g].qualified_only]
            if len(mine) != 1 or len(before) != 1:
                raise errors.UndefinedColumn(
                    f'column "{name}" specified in USING clause does not exist in both tables'
                    if not mine or not before else f'common column name "{name}" appears '
                    f"more than once")
            left = ex.ColumnRef(before[0], gscope.columns[before[0]].type, name)
            right = ex.ColumnRef(mine[0], gscope.columns[mine[0]].type, name)
            eqs.append(functions.bind_call(ex.Func.EQ, [left, right]))
            if jt is pl.JoinType.FULL:
                # Either copy may be NULL-extended: the merged column is COALESCE(left,
                # right), a column of its own, and both copies stay reachable qualified.
                for g in (before[0], mine[0]):
                    gscope.columns[g] = replace(gscope.columns[g], qualified_only=True)
                t = functions.bind_call(ex.Func.COALESCE, [left, right]).type
                merged.append(len(gscope.columns))
                gscope.columns.append(ScopeColumn(None, name, t, merged=(before[0], mine[0])))
                continue
            # The unqualified name and SELECT * mean the merged column: the left copy,
            # or the right one for a RIGHT join (where it is never NULL-extended).
            if jt is pl.JoinType.RIGHT and right.type.kind is types.Kind.CHAR \
                    and left.type.kind in (types.Kind.VARCHAR, types.Kind.TEXT):
                # PostgreSQL's merged column is the right copy in the common type, the
                # left's: the char(n) value without its padding
                raise errors.FeatureNotSupported(
                    "RIGHT JOIN ... USING a char(n) column with a varchar or text one")
            keep, other = (mine[0], before[0]) if jt is pl.JoinType.RIGHT else (before[0], mine[0])
            gscope.columns[other] = replace(gscope.columns[other], qualified_only=True)
            merged.append(keep)
        # SELECT * shows the merged columns first, then the rest of each side (PostgreSQL).
        rest = [g for g in self._star_order(gscope, left_side) + list(part.cols)
                if g not in merged]
        gscope.star_order = merged + rest + list(range(part.cols[-1] + 1, n_base))
        return bind_join.conjoin(eqs)

    @staticmethod
    def _star_order(gscope: Scope, positions: list[int]) -> list[int]:
        """SELECT *'s order of the columns at `positions`."""
        among = set(positions)
        order = [g for g in (gscope.star_order or range(len(gscope.columns))) if g in among]
        return order + [g for g in positions if g not in set(order)]

    def _relation(self, rel: exp.Expression) -> tuple[pl.Node, Scope]:
        alias = identifier(rel.args["alias"].this) if rel.alias else None
        col_aliases = [c.name.lower() for c in rel.args["alias"].columns] \
            if rel.args.get("alias") is not None and rel.args["alias"].columns else []
        if isinstance(rel, exp.Table) and isinstance(rel.this, exp.ExplodingGenerateSeries):
            return self._generate_series(rel.this, alias, col_aliases)
        if isinstance(rel, exp.Table) and isinstance(rel.this, exp.Explode) and (
                rel.db or "").lower() in ("", "pg_catalog"):
            # pg_catalog.unnest(a): sqlglot reads the qualified call as an Explode table.
            rel = exp.Unnest(expressions=[rel.this.this.copy()], alias=rel.args.get("alias"))
            return bind_srfs.unnest_from(self, rel, alias, col_aliases)
        if isinstance(rel, exp.Table) and isinstance(rel.this, exp.Anonymous):
            return self._table_function(rel.this, alias, col_aliases)
        if isinstance(rel, exp.Table) and isinstance(rel.this, exp.Func):
            raise errors.FeatureNotSupported(
                f"function {rel.this.sql(dialect='postgres')} in FROM")
        if isinstance(rel, exp.Table):
            name = relation_name(rel).name
            if name in self.ctes and not rel.db:
                bq = self.ctes[name]
                scope = self._scope_of(bq, alias or name, col_aliases)
                if name == subquery_domain.DOMAIN:  # a decorrelated subquery's SELECT *
                    scope = Scope([replace(c, hidden=True) for c in scope.columns])
                return bq.node, scope
            system = system_tables.find(self.catalog, relation_name(rel))
            if system is not None:  # pg_catalog.*, information_schema.*: the coordinator's rows
                node = system_tables.bind(system)
                q = alias or name
                names = col_aliases + [c.name for c in system.columns][len(col_aliases):]
                return node, Scope([ScopeColumn(q, n, c.type,
                                                schema=None if alias else system.schema)
                                    for n, c in zip(names, system.columns)])
            sequence = system_tables.sequence_relation(self.catalog, relation_name(rel))
            if sequence is not None:  # SELECT last_value FROM s: the counter's row now
                q = alias or name
                names = col_aliases + [f.name for f in sequence.fields][len(col_aliases):]
                return sequence, Scope([ScopeColumn(q, n, f.type,
                                                    schema=None if alias else "public")
                                        for n, f in zip(names, sequence.fields)])
            # [[database.]schema.]name through the search path; 42P01 as PostgreSQL says it.
            table = resolve_relation(self.catalog, rel)
            self.reads.append(table)  # what the query names (a view binder has its own list)
            if isinstance(table, ViewDef):
                return self._view(table, alias, col_aliases)
            cols = tuple(range(len(table.columns)))
            names_of = [c.name for c in table.columns]
            if _names_segment_id(rel) and table.column_index(SEGMENT_ID_COLUMN) is None:
                # Greenplum's system column: the segment the row is on (not in SELECT *).
                cols += (SEGMENT_ID,)
                names_of.append(SEGMENT_ID_COLUMN)
            if rel.meta.get(MODIFY_TARGET):  # DELETE/UPDATE's target: where each row is
                cols += (SEGMENT_ID, ROW_ID)
                names_of += [table.column(SEGMENT_ID).name, table.column(ROW_ID).name]
            fields = tuple(pl.Field(nm, table.column(c).type) for nm, c in zip(names_of, cols))
            q = alias or name
            names = col_aliases + [f.name for f in fields][len(col_aliases):]
            schema = None if alias else schema_of(self.catalog, table)
            scope = Scope([ScopeColumn(q, n, f.type, hidden=c < 0, schema=schema)
                           for n, f, c in zip(names, fields, cols)])
            return pl.Scan(table=table, columns=cols, fields=fields), scope
        if isinstance(rel, exp.Values):  # (VALUES (...), ...) AS v(a, b)
            if alias is None:
                raise errors.SyntaxError_("VALUES in FROM must have an alias",
                                          hint="For example, FROM (VALUES ...) [AS] foo.")
            bq = self._modified(self.child()._values(rel), rel)
            if len(col_aliases) > len(bq.names):
                raise errors.QueryError(
                    f'table "{alias}" has {len(bq.names)} columns available but '
                    f"{len(col_aliases)} columns specified", "42P10")
            return bq.node, self._scope_of(bq, alias, col_aliases)
        if bind_lateral_subquery.is_subquery(rel):  # reads no earlier FROM item
            return self._relation(bind_lateral_subquery.derived(rel))
        if isinstance(rel, exp.Subquery):
            sub = self.child().bind(rel.this)
            return sub.node, self._scope_of(sub, alias, col_aliases)
        if isinstance(rel, exp.Unnest):  # constant arrays (planner/bind_srfs.py)
            return bind_srfs.unnest_from(self, rel, alias, col_aliases)
        raise errors.FeatureNotSupported(f"FROM item {rel.sql(dialect='postgres')!r}")

    def _view(self, view: ViewDef, alias: str | None,
              col_aliases: list[str]) -> tuple[pl.Node, Scope]:
        """A view in FROM: its query bound as a subquery, with the view's columns."""
        if len(col_aliases) > len(view.columns):
            raise errors.QueryError(
                f'table "{alias or view.name}" has {len(view.columns)} columns available but '
                f"{len(col_aliases)} columns specified", "42P10")
        node = view_expand.bind_view(self, view)
        names = col_aliases + [c.name for c in view.columns][len(col_aliases):]
        q = alias or view.name
        return node, Scope([ScopeColumn(q, n, c.type,
                                         schema=None if alias else schema_of(self.catalog, view))
                            for n, c in zip(names, view.columns)])

    @staticmethod
    def _scope_of(bq: BoundQuery, qualifier: str | None, col_aliases: list[str]) -> Scope:
        names = col_aliases + list(bq.names)[len(col_aliases):]
        return Scope([ScopeColumn(qualifier, n, f.type) for n, f in zip(names, bq.node.fields)])

    def _constant_int(self, arg, what: str) -> int | None:
        e = functions.fold_constants(ExprBinder(Scope([]), self.params).bind(arg))
        if not isinstance(e, ex.Literal) or not (e.type.is_integer or e.value is None):
            raise errors.FeatureNotSupported(f"{what} needs constant integer arguments")
        return e.value

    def _table_function(self, call, alias, col_aliases) -> tuple[pl.Node, Scope]:
        name = call.name.lower()
        if not table_functions.exists(name):
            raise errors.UndefinedFunction(f"function {name} does not exist")
        node = table_functions.bind(
            name, [self._constant_int(a, name) for a in call.expressions])
        q = alias or name
        names = col_aliases + [f.name for f in node.fields][len(col_aliases):]
        return node, Scope([ScopeColumn(q, n, f.type) for n, f in zip(names, node.fields)])

    def _generate_series(self, gs, alias, col_aliases) -> tuple[pl.Node, Scope]:
        args = [functions.fold_constants(ExprBinder(Scope([]), self.params).bind(gs.args[k]))
                for k in ("start", "end", "step") if gs.args.get(k) is not None]
        if any(a.type.kind in TEMPORAL + (types.Kind.INTERVAL,) for a in args):
            return self._timestamp_series(args, alias, col_aliases)
        vals, wide = [], False
        for key in ("start", "end", "step"):
            arg = gs.args.get(key)
            vals.append(1 if arg is None else self._constant_int(arg, "generate_series"))
            if arg is not None:
                t = functions.fold_constants(ExprBinder(Scope([]), self.params).bind(arg)).type
                wide |= t.kind is types.Kind.INT8
        if vals[2] == 0:
            raise errors.InvalidParameterValue("step size cannot equal zero")
        # generate_series(int4, int4) is int4 and (int8, int8) int8, as PostgreSQL picks.
        t = types.INT8 if wide or any(v is not None and not -2**31 <= v < 2**31 for v in vals) \
            else types.INT4
        name = col_aliases[0] if col_aliases else (alias or "generate_series")
        fields = (pl.Field(name, t),)
        node = pl.GenerateSeries(start=vals[0], stop=vals[1], step=vals[2], fields=fields)
        return node, Scope([ScopeColumn(alias or "generate_series", name, t)])

    @staticmethod
    def _timestamp_series(args, alias, col_aliases) -> tuple[pl.Node, Scope]:
        """generate_series of timestamps over constants. With a step of days and time, the
        integer series of k = 0 .. count - 1 as start + k * step (streamed, and split over
        the segments when long, as an integer series is); a step of months moves on the
        calendar: its array (Func.SERIES) unnested by a ProjectSet over one row."""
        series = functions.bind_call(ex.Func.SERIES, args)
        t = series.type.elem
        name = col_aliases[0] if col_aliases else (alias or "generate_series")
        scope = Scope([ScopeColumn(alias or "generate_series", name, t)])
        start, stop, step = series.args if isinstance(series, ex.Call) else (None, None, None)
        if isinstance(series, ex.Call) and all(isinstance(a, ex.Literal) and a.value is not None for a in series.args) \
                and step.value.months == 0:
            step_us = step.value.days * USECS_PER_DAY + step.value.micros
            if step_us == 0:
                raise errors.InvalidParameterValue("step size cannot equal zero")
            span = datetime_values.micros(stop.value) - datetime_values.micros(start.value)
            count = span // step_us + 1 if span == 0 or (span > 0) == (step_us > 0) else 0
            k = pl.GenerateSeries(start=0, stop=count - 1, step=1,
                                  fields=(pl.Field("?k", types.INT8),))
            value = ex.Call(ex.Func.TIMESTAMP_STEP, (start, ex.ColumnRef(0, types.INT8, "?k"),
                                                     ex.Literal(step_us, types.INT8)), t)
            return pl.Project(k, (value,), pl.fields_of([(name, t)])), scope
        node = pl.ProjectSet(pl.Values(rows=((),), fields=()), (series,), (False,),
                             pl.fields_of([(name, t)]))
        return node, scope

    # --- SELECT --------------------------------------------------------------------------
    def _select(self, select: exp.Select) -> BoundQuery:
        bind_window.check_clauses(select)
        windows = bind_window.WindowBinder(select) if bind_window.has_windows(select) else None
        where = select.args.get("where")
        conj = bind_subquery.split_and(where.this) if where is not None else []
        plain = [c for c in conj if not bind_subquery.has_subquery(c)]
        node, scope, _ = self._from(select, plain)
        subq = bind_subquery.SubqueryBinder(self, node, scope)
        for c in conj:
            if bind_subquery.has_subquery(c):
                subq.where_conjunct(c)
        select, subq.node, subq.scope = bind_srfs.select_srfs(  # unnest(a): ProjectSet
            self, select, subq.node, subq.scope)
        node, scope = subq.node, subq.scope

        items = self._expand_star(select.expressions, scope)
        names = tuple(_output_name(e) for e in items)
        group = select.args.get("group")
        having = select.args.get("having")
        order = select.args.get("order")
        order_items = list(order.expressions) if order is not None else []
        has_aggs = any(find_aggregate(e) for e in items) or having is not None or (
            any(find_aggregate(o) for o in order_items))

        grouped = None
        if group is not None or has_aggs:
            grouped, binder = self._aggregate(node, scope, items, group, having, order_items,
                                              windows)
            if windows is not None:
                windows.reset()
        else:
            # Scalar subqueries in the SELECT list and ORDER BY: run once ahead when
            # uncorrelated, LEFT joined to the FROM rows when correlated (subq.node grows).
            binder = ExprBinder(scope, self.params, subquery=subq.scalar)
            if windows is not None:  # window calls: planner/bind_window.py
                binder.hook = windows.hook(binder)

        outputs = [binder.bind(_unalias(e)) for e in items]
        sort_keys: list[pl.SortKey] = []
        extra: list[ex.Expr] = []
        on = select.args["distinct"].args.get("on") if select.args.get("distinct") else None
        for o in order_items:
            target = self._order_target(o.this, items, names, outputs)
            if target is None:
                if select.args.get("distinct") is not None and on is None:
                    raise errors.QueryError("for SELECT DISTINCT, ORDER BY expressions must "
                                            "appear in select list", "42P10")
                extra.append(binder.bind(o.this))
                target = len(outputs) + len(extra) - 1
            desc = bool(o.args.get("desc"))
            nulls_first = o.args.get("nulls_first")
            nulls_first = desc if nulls_first is None or _nulls_default(o) else bool(nulls_first)
            all_exprs = outputs + extra
            sort_keys.append(pl.SortKey(ex.ColumnRef(target, all_exprs[target].type,
                                                     _name_at(target, names)), desc, nulls_first))
        on_keys = None if on is None else self._distinct_on(on, items, names, outputs, extra,
                                                            binder, sort_keys)
        # Correlated subqueries joined their rows to the FROM rows, or to the groups.
        node = subq.node if grouped is None else grouped.node
        all_exprs = outputs + extra
        if windows is not None and windows.calls:  # WindowAggs between the rows and the list
            node, all_exprs = windows.plan(node, all_exprs)
        fields = tuple(pl.Field(_name_at(i, names), e.type) for i, e in enumerate(all_exprs))
        node = pl.Project(node, tuple(all_exprs), fields)

        if on_keys is not None:
            node = distinct_on.first_rows(node, on_keys, sort_keys)
        elif select.args.get("distinct") is not None:
            keys = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(node.fields))
            node = json_grouping.aggregate(node, keys, (), node.fields)  # jsonb: sort keys
        if sort_keys:
            json_rules.check_order([k.expr.type for k in sort_keys])
            node = pl.Sort(node, tuple(sort_keys), node.fields)
        limit, offset = self._limit(select)
        ties = self._with_ties(select, sort_keys)
        if limit is not None or offset:
            node = pl.Limit(node, limit, offset, node.fields, ties=ties)
        if extra:
            keep = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields[:len(outputs)]))
            node = pl.Project(node, keep, fields[:len(outputs)])
        return BoundQuery(node, names)

    def _set_operation(self, tree) -> BoundQuery:
        """UNION [ALL], INTERSECT, EXCEPT: an Append of both inputs (cast to common column
        types); DISTINCT forms group by every column, so NULLs compare equal as SQL's set
        operations require; INTERSECT and EXCEPT [ALL] count each row's occurrences per side."""
        left, right = self._branch(tree.this), self._branch(tree.expression)
        if len(left.node.fields) != len(right.node.fields):
            raise errors.SyntaxError_(f"each {tree.key.upper()} query must have the same "
                                      "number of columns")
        col_types = []
        for a, b in zip(left.node.fields, right.node.fields):
            col_types.append(set_operations.column_type(a.type, b.type))
        fields = tuple(pl.Field(n, t) for n, t in zip(left.names, col_types))
        distinct = bool(tree.args.get("distinct"))
        if isinstance(tree, exp.Union):
            node = pl.Append((set_operations.cast_to(left.node, fields), set_operations.cast_to(right.node, fields)),
                             fields)
            if distinct:
                node = set_operations.distinct(node)
        else:
            combine = set_operations.intersect_except if distinct \
                else set_operations.intersect_except_all
            node = combine(left.node, right.node, fields, isinstance(tree, exp.Intersect))
        node = self._order_limit(node, tree, left.names)
        return BoundQuery(node, left.names)

    def _branch(self, tree) -> BoundQuery:
        return self.child().bind(tree)

    def _order_limit(self, node: pl.Node, tree, names) -> pl.Node:
        order = tree.args.get("order")
        keys = []
        if order is not None:
            for o in order.expressions:
                t = o.this
                _constant_position(t, "ORDER BY")
                if isinstance(t, exp.Literal) and not t.is_string and not (
                        1 <= int(t.this) <= len(names)):
                    raise errors.QueryError(f"ORDER BY position {t.this} is not in select list",
                                            "42P10")
                if isinstance(t, exp.Literal) and not t.is_string:
                    i = int(t.this) - 1
                elif isinstance(t, exp.Column) and t.name.lower() in names:
                    i = list(names).index(t.name.lower())
                elif isinstance(t, exp.Column):
                    raise errors.UndefinedColumn(f'column "{t.sql(dialect="postgres")}" '
                                                 "does not exist")
                else:
                    raise errors.FeatureNotSupported(
                        "ORDER BY of a set operation or VALUES on anything but its output "
                        "columns")
                desc = bool(o.args.get("desc"))
                nf = o.args.get("nulls_first")
                nf = desc if nf is None or _nulls_default(o) else bool(nf)
                f = node.fields[i]
                keys.append(pl.SortKey(ex.ColumnRef(i, f.type, f.name), desc, nf))
            json_rules.check_order([k.expr.type for k in keys])
            node = pl.Sort(node, tuple(keys), node.fields)
        limit, offset = self._limit(tree)
        if limit is not None or offset:
            node = pl.Limit(node, limit, offset, node.fields, ties=self._with_ties(tree, keys))
        return node

    def _values(self, values: exp.Values) -> BoundQuery:
        binder = ExprBinder(Scope([]), self.params)
        rows = [[functions.fold_constants(binder.bind(v)) for v in t.expressions]
                for t in values.expressions]
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            raise errors.SyntaxError_("VALUES lists must all be the same length")
        col_types = []
        for j in range(width):
            column = [r[j] for r in rows]
            t = coercion.common_type_of(column, "VALUES", nulls_typed=True) if all(
                v.type.is_string or coercion.is_unknown(v) for v in column) else None
            if t is None:
                t = column[0].type
                for v in column[1:]:
                    t = types.common_type(t, v.type)
            col_types.append(types.TEXT if t.kind is types.Kind.UNKNOWN else t)
        rows = tuple(tuple(_values_item(v, col_types[j]) for j, v in enumerate(r))
                     for r in rows)
        names = tuple(f"column{j + 1}" for j in range(width))
        return BoundQuery(pl.Values(rows, pl.fields_of(zip(names, col_types))), names)

    def _expand_star(self, items, scope: Scope) -> list[exp.Expression]:
        out = []
        for e in items:
            star_of = None
            if isinstance(e, exp.Star):
                star_of = ("",)
            elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
                star_of = (identifier(e.args.get("table")),)
            if star_of is None:
                out.append(e)
                continue
            for i in scope.star(star_of[0] or None):
                c = scope.columns[i]
                # With its schema when FROM a.t, b.t has two tables called t.
                db = c.schema if any(o.qualifier == c.qualifier and o.schema != c.schema
                                     for o in scope.columns) else None
                out.append(exp.column(c.name, c.qualifier, db=db, quoted=True))
        return out

    def _predicate(self, node, scope, clause: str, hook=None, subquery=None) -> ex.Expr:
        e = ExprBinder(scope, self.params, hook, subquery=subquery).bind(node)
        if e.type.kind is types.Kind.UNKNOWN:
            e = functions.bind_cast(e, types.BOOL)
        if e.type.kind is not types.Kind.BOOL:
            raise errors.DatatypeMismatch(
                f"argument of {clause} must be type boolean, not type {e.type}")
        return functions.fold_constants(e)

    # --- aggregation ---------------------------------------------------------------------
    def _aggregate(self, node, scope, items, group, having, order_items, windows=None):
        names = [_output_name(e) for e in items]
        key_trees = []
        sets = None  # ROLLUP / CUBE / GROUPING SETS: positions in key_trees per set
        group_items = group.expressions if group is not None else []
        if grouping_sets.has_sets(group):
            group_items, sets = grouping_sets.expand(group)
        for g in group_items:
            if _constant_position(g, "GROUP BY") is not None:
                pos = int(g.this)
                if not 1 <= pos <= len(items):
                    raise errors.QueryError(f"GROUP BY position {pos} is not in select list",
                                            "42P10")
                key_trees.append(_unalias(items[pos - 1]))
            elif isinstance(g, exp.Column) and not g.table and g.name.lower() in names \
                    and not any(c.name == g.name.lower() for c in scope.columns):
                key_trees.append(_unalias(items[names.index(g.name.lower())]))
            else:
                key_trees.append(g)
        if group_subqueries.has_subquery(key_trees):  # evaluated before the grouping
            pre = group_subqueries.KeySubqueries(self, node, scope)
            keys = pre.bind_keys(key_trees)
            node, scope = pre.node, pre.scope
            plain = ExprBinder(scope, self.params, subquery=pre.lookup)
        else:
            plain = ExprBinder(scope, self.params)
            keys = [functions.fold_constants(plain.bind(k)) for k in key_trees]
        if sets is not None:  # one key per distinct expression, however it was written
            distinct = list(dict.fromkeys(keys))
            sets = [tuple(dict.fromkeys(distinct.index(keys[i]) for i in s)) for s in sets]
            keys = distinct
        aggs = _Aggregates()
        calls: dict[int, tuple[exp.Expression, ex.AggCall]] = {}
        grouping = grouping_sets.Grouping([])

        def extra() -> int:  # the Aggregate's columns between the keys and the aggregates
            return 0 if sets is None else 1 + len(grouping.calls)

        def hook(tree):
            if isinstance(tree, exp.Grouping):
                args = []
                for a in tree.expressions:
                    bound = functions.fold_constants(plain.bind(a))
                    if bound not in keys:
                        raise errors.GroupingError("arguments to GROUPING must be grouping "
                                                   "expressions of the associated query level")
                    args.append(keys.index(bound))
                if sets is None:
                    return ex.Literal(0, types.INT4)  # every key is in the one set
                return ex.ColumnRef(len(keys) + 1 + grouping.position(tuple(args)), types.INT4,
                                    "grouping")
            if windows is not None and isinstance(tree, exp.Window):
                return windows.bind(tree, binder)  # its arguments through this hook
            if isinstance(tree, exp.Filter):  # agg(x) FILTER (WHERE c): agg(CASE ...)
                inner = tree.this
                if isinstance(inner, exp.WithinGroup) and \
                        type(inner.this) in hypothetical_aggregates.NODES:
                    return binder.bind(hypothetical(inner, ordered_aggregates.condition(tree)))
                if isinstance(inner, json_aggregates.NODES):
                    return json_aggregates.bind(inner, binder.bind,
                                                ordered_aggregates.condition(tree))
            if isinstance(tree, exp.WithinGroup) and \
                    type(tree.this) in hypothetical_aggregates.NODES:  # rank(v) & co.: counts
                return binder.bind(hypothetical(tree))
            if isinstance(tree, json_aggregates.NODES) and not isinstance(
                    tree, (exp.Filter, exp.WithinGroup)):  # json_agg & co. over array_agg
                return json_aggregates.bind(tree, binder.bind)
            simple = rewritten(tree)
            if simple is not None:
                return binder.bind(simple)
            if isinstance(tree, AGGREGATES):
                # Each item is bound twice (to collect the aggregates, then as output): the
                # call is made once per tree, kept with the tree so its id stays its own.
                known = calls.get(id(tree))
                call = known[1] if known is not None else self._agg_call(tree, scope)
                calls[id(tree)] = (tree, call)
                primary = next((a.order for a in aggs
                                if a.func is ex.AggFunc.ARRAY_AGG and a.order), None)
                if call.func is ex.AggFunc.ARRAY_AGG and call.order and primary is not None \
                        and call.order != primary:
                    return _sorted_array_agg(call, aggs, len(keys) + extra())
                return ex.ColumnRef(len(keys) + extra() + aggs.position(call), call.type,
                                    call.sql())
            if find_aggregate(tree) is None and not isinstance(tree, (exp.Literal, exp.Null, exp.Boolean)):
                try:
                    bound = plain.bind(tree)
                except errors.QueryError:
                    bound = None
                if bound is not None and bound in keys:
                    i = keys.index(bound)
                    return ex.ColumnRef(i, bound.type, ex.show(bound))
                if isinstance(tree, exp.Column):
                    raise errors.GroupingError(
                        f'column "{tree.sql(dialect="postgres")}" must appear in the GROUP BY '
                        "clause or be used in an aggregate function")
            return None

        def rewritten(tree) -> exp.Expression | None:
            """The expression over plain aggregates that an aggregate bound by rewriting
            stands for (None for others). subquery_predicates marks its aggregates in
            place of the whole (`hook.rewrite`)."""
            if isinstance(tree, STATISTICS):
                arg = plain.bind(tree.this.expressions[0] if isinstance(tree.this, exp.Distinct)
                                 else tree.this)
                return statistics_aggregates.rewrite(tree, arg.type.is_float)
            inner = tree.this if isinstance(tree, exp.Filter) else tree
            if isinstance(inner, json_aggregates.NODES) or (isinstance(
                    inner, exp.WithinGroup) and type(inner.this) in hypothetical_aggregates.NODES):
                return None  # bound by the hook itself, not through a rewrite
            if isinstance(tree, exp.Filter):  # agg(x) FILTER (WHERE c): agg(CASE ...)
                return ordered_aggregates.filtered(tree)
            if isinstance(tree, exp.WithinGroup):  # percentiles over array_agg
                return ordered_aggregates.within_group(
                    tree, lambda e: functions.fold_constants(plain.bind(e)))
            if type(tree) in regression_aggregates.NODES:  # regr_*, corr, covar_*
                return regression_aggregates.rewrite(tree, plain.bind)
            if type(tree) in bitwise_aggregates.NODES:  # bit_and & co., bit by bit
                return bitwise_aggregates.rewrite(tree, plain.bind)
            if isinstance(tree, exp.GroupConcat):  # string_agg over array_agg
                return string_aggregates.rewrite(tree, plain.bind)
            if isinstance(tree, exp.ArrayAgg) and ordered_aggregates.is_distinct(tree):
                return ordered_aggregates.distinct_array_agg(tree)
            arg_type = interval_aggregates.argument_type(tree, plain.bind)
            if interval_aggregates.applies(arg_type):  # sum/avg/min/max(interval)
                return interval_aggregates.rewrite(tree)
            if numeric_aggregates.applies(tree, arg_type):  # display scales, numeric_avg
                return numeric_aggregates.rewrite(tree, plain.bind)
            return None
        hook.rewrite = rewritten

        def hypothetical(tree, cond=None):
            return hypothetical_aggregates.rewrite(
                tree, lambda e: functions.fold_constants(plain.bind(e)), binder.bind, cond,
                grouping_sets=sets is not None)

        # Subqueries run after grouping: uncorrelated ones once ahead; correlated ones
        # see the group keys as the outer query's columns and are joined to the groups
        # (`grouped`, made once the aggregates are known). The first pass only collects
        # the aggregates, so a correlated subquery stands there as an untyped NULL.
        initplans = bind_subquery.SubqueryBinder(self, node, scope, correlated=False,
                                                 hook=hook)

        def first_pass(tree):
            try:
                return initplans.scalar(tree)
            except bind_subquery.CorrelatedNotHere:
                return ex.Literal(None, types.UNKNOWN)
        binder = ExprBinder(scope, self.params, hook, subquery=first_pass)
        # Bind everything that may mention aggregates once, so `aggs` is complete
        # before the Aggregate node is built; the outputs are re-bound by the caller.
        for e in items:
            binder.bind(_unalias(e))
        for o in order_items:
            if not (isinstance(o.this, exp.Literal) or (isinstance(o.this, exp.Column) and
                                                         o.this.name.lower() in names)):
                binder.bind(o.this)
        if having is not None:
            self._predicate(having.this, scope, "HAVING", hook, subquery=first_pass)
        if len({a.order for a in aggs if a.func is ex.AggFunc.ARRAY_AGG and a.order}) > 1:
            raise errors.FeatureNotSupported("array_agg calls with different ORDER BY in one "
                                             "query level")
        agg_fields = tuple(pl.Field(a.sql(), a.type) for a in aggs)
        json_rules.check_keys([k.type for k in keys], "GROUP BY")
        if sets is None:
            key_fields = tuple(pl.Field(ex.show(k), k.type) for k in keys)
            node = json_grouping.aggregate(node, keys, aggs, key_fields + agg_fields)
        else:
            node, agg_keys, key_fields = grouping_sets.plan(node, keys, sets, grouping)
            node = json_grouping.aggregate(node, agg_keys, aggs, key_fields + agg_fields)
        grouped = bind_subquery.SubqueryBinder(
            self, node, _grouped_scope(scope, keys, key_fields[len(keys):], aggs),
            ungrouped=scope, initplans=initplans, hook=hook)
        binder = ExprBinder(scope, self.params, hook, subquery=grouped.scalar)
        if having is not None:
            pred = self._predicate(having.this, scope, "HAVING", hook, subquery=grouped.scalar)
            grouped.node = pl.Filter(grouped.node, pred, grouped.node.fields)
        return grouped, binder

    def _agg_call(self, tree, scope) -> ex.AggCall:
        inner = tree.this
        distinct = isinstance(inner, exp.Distinct)
        if distinct:
            if len(inner.expressions) != 1:
                raise errors.FeatureNotSupported("aggregates over several DISTINCT arguments")
            inner = inner.expressions[0]
        if isinstance(tree, exp.Count) and (inner is None or isinstance(inner, exp.Star)):
            return ex.AggCall(ex.AggFunc.COUNT_STAR, None, False, types.INT8)
        if isinstance(tree, exp.ArrayAgg):
            return self._array_agg(inner, distinct, scope)
        if inner is not None and find_aggregate(inner):
            raise errors.GroupingError("aggregate function calls cannot be nested")
        arg = functions.fold_constants(ExprBinder(scope, self.params).bind(
            row_aggregates.argument(inner)))
        if arg.type.kind is types.Kind.RECORD:  # count((a, b)): of the row's key
            name = _AGG_NAMES.get(type(tree), type(tree).__name__.lower())
            arg = row_aggregates.counted(name, arg, distinct)
        if isinstance(tree, (exp.LogicalAnd, exp.LogicalOr)):
            # bool_and is min over booleans (false < true), bool_or max: NULLs ignored,
            # NULL over no rows, two phases as min/max, as PostgreSQL's.
            name = "bool_and" if isinstance(tree, exp.LogicalAnd) else "bool_or"
            if arg.type.kind is types.Kind.UNKNOWN:
                arg = functions.bind_cast(arg, types.BOOL)
            if arg.type.kind is not types.Kind.BOOL:
                raise errors.UndefinedFunction(f"function {name}({arg.type}) does not exist")
            func = ex.AggFunc.MIN if isinstance(tree, exp.LogicalAnd) else ex.AggFunc.MAX
            return ex.AggCall(func, arg, distinct, types.BOOL)
        func = {exp.Count: ex.AggFunc.COUNT, exp.Sum: ex.AggFunc.SUM, exp.Avg: ex.AggFunc.AVG,
                exp.Min: ex.AggFunc.MIN, exp.Max: ex.AggFunc.MAX}[type(tree)]
        if func in (ex.AggFunc.MIN, ex.AggFunc.MAX):
            binary_rules.check_min_max(func.value, arg)
        return ex.AggCall(func, arg, distinct, agg_result_type(func, arg.type))

    def _array_agg(self, inner, distinct: bool, scope) -> ex.AggCall:
        """array_agg(x [ORDER BY ...]): its input in order, one array per group."""
        if distinct:
            raise errors.FeatureNotSupported("array_agg(DISTINCT ...)")
        order = []
        if isinstance(inner, exp.Order):
            binder = ExprBinder(scope, self.params)
            for o in inner.expressions:
                if find_aggregate(o.this):
                    raise errors.GroupingError("aggregate function calls cannot be nested")
                desc = bool(o.args.get("desc"))
                nf = o.args.get("nulls_first")
                nf = desc if nf is None or _nulls_default(o) else bool(nf)
                order.append((functions.fold_constants(binder.bind(o.this)), desc, nf))
            inner = inner.this
        if find_aggregate(inner):
            raise errors.GroupingError("aggregate function calls cannot be nested")
        arg = functions.fold_constants(ExprBinder(scope, self.params).bind(inner))
        t = types.TEXT if arg.type.kind is types.Kind.UNKNOWN else arg.type
        if arg.type != t:
            arg = functions.bind_cast(arg, t)
        if t.is_array:
            raise errors.FeatureNotSupported("array_agg of arrays (multidimensional arrays)")
        return ex.AggCall(ex.AggFunc.ARRAY_AGG, arg, False, types.array_of(t), tuple(order))

    # --- ORDER BY / LIMIT ----------------------------------------------------------------
    def _distinct_on(self, on, items, names, outputs, extra, binder, sort_keys) -> list[int]:
        """The positions (among outputs + extra) of the DISTINCT ON keys, resolved as ORDER
        BY items are (output name, position, expression; others join `extra`)."""
        keys: list[int] = []
        for tree in on.expressions:
            pos = _constant_position(tree, "DISTINCT ON")
            if pos is not None and not 1 <= pos <= len(items):
                raise errors.QueryError(f"SELECT DISTINCT ON position {pos} is not in "
                                        "select list", "42P10")
            target = self._order_target(tree, items, names, outputs)
            if target is None:
                bound = binder.bind(tree)
                target = next((len(outputs) + i for i, e in enumerate(extra) if e == bound),
                              None)
                if target is None:
                    extra.append(bound)
                    target = len(outputs) + len(extra) - 1
            if target not in keys:
                keys.append(target)
        distinct_on.check_order(keys, sort_keys)
        return keys

    def _order_target(self, tree, items, names, outputs) -> int | None:
        if _constant_position(tree, "ORDER BY") is not None:
            pos = int(tree.this)
            if not 1 <= pos <= len(items):
                raise errors.QueryError(f"ORDER BY position {pos} is not in select list", "42P10")
            return pos - 1
        if isinstance(tree, exp.Column) and not tree.table and tree.name.lower() in names:
            matches = [i for i, n in enumerate(names) if n == tree.name.lower()]
            # Output columns of one name must be one expression (findTargetlistEntrySQL92)
            same = (lambda i: outputs[i] == outputs[matches[0]]) if len(outputs) == len(items) \
                else (lambda i: _unalias(items[i]) == _unalias(items[matches[0]]))
            if not all(same(i) for i in matches[1:]):
                raise errors.QueryError(f'ORDER BY "{tree.name}" is ambiguous', "42702")
            return matches[0]
        for i, item in enumerate(items):
            if _unalias(item) == tree:
                return i
        return None

    def _limit(self, select) -> tuple[int | None, int]:
        def const(node, what):
            if node is None or (what == "LIMIT" and isinstance(node, exp.Var)
                                and node.name.upper() == "ALL"):
                return None  # LIMIT ALL: no limit
            e = functions.fold_constants(ExprBinder(Scope([]), self.params).bind(node))
            if not isinstance(e, ex.Literal) or not (e.type.is_integer or e.value is None):
                raise errors.QueryError(f"argument of {what} must be an integer constant", "42804")
            if e.value is not None and e.value < 0:
                raise errors.QueryError(f"{what} must not be negative", "2201W" if what == "LIMIT" else "2201X")
            return e.value
        lim = select.args.get("limit")
        off = select.args.get("offset")
        if isinstance(lim, exp.Fetch):
            # FETCH FIRST|NEXT [n] ROW[S] ONLY|WITH TIES: n defaults to 1.
            count = lim.args.get("count")
            limit = 1 if count is None else const(count, "FETCH FIRST")
        else:
            limit = const(lim.expression if lim is not None else None, "LIMIT")
        offset = const(off.expression if off is not None else None, "OFFSET")
        return limit, offset or 0

    @staticmethod
    def _with_ties(tree, sort_keys) -> tuple:
        """The ORDER BY keys when the query says FETCH ... WITH TIES, else ()."""
        lim = tree.args.get("limit")
        opts = lim.args.get("limit_options") if isinstance(lim, exp.Fetch) else None
        if opts is None or not opts.args.get("with_ties"):
            return ()
        if not sort_keys:
            raise errors.SyntaxError_("WITH TIES cannot be specified without ORDER BY clause")
        return tuple(sort_keys)


def _values_item(v: ex.Expr, t: types.SqlType) -> ex.Expr:
    """A VALUES item as its column's type t (a char(n) padded in BPCHAR_PADDED)."""
    if t.padded:
        return coercion.common_value(v, t)
    return functions.bind_cast(v, t) if v.type != t else v


def _with_merged(part: bind_join.Part, gscope: Scope) -> bind_join.Part:
    """`part` with the FULL JOIN ... USING columns (ScopeColumn.merged) whose two copies
    it now has: COALESCE(left, right)."""
    have = set(part.cols)
    new = [g for g, c in enumerate(gscope.columns)
           if c.merged is not None and g not in have and set(c.merged) <= have]
    if not new:
        return part
    exprs = [part.local(functions.bind_call(ex.Func.COALESCE, [
        ex.ColumnRef(i, gscope.columns[i].type, gscope.columns[i].name)
        for i in gscope.columns[g].merged])) for g in new]
    fields = part.node.fields
    refs = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields))
    node = pl.Project(part.node, refs + tuple(exprs), fields + tuple(
        pl.Field(gscope.columns[g].name, e.type) for g, e in zip(new, exprs)))
    return bind_join.Part(node, part.cols + new)


class _Aggregates(list):
    """A query level's aggregates in the order first met, each found by hash: a list's
    membership test and index compare a call with every earlier one, quadratic in the
    aggregates (90 sums took 20 ms of planning that way)."""

    def __init__(self):
        super().__init__()
        self._at: dict[ex.AggCall, int] = {}

    def position(self, call: ex.AggCall) -> int:
        """The column of `call` among the aggregates, added at the end if new."""
        i = self._at.get(call)
        if i is None:
            i = self._at[call] = len(self)
            self.append(call)
        return i


def _sorted_array_agg(call: ex.AggCall, aggs: "_Aggregates", base: int) -> ex.Expr:
    """array_agg(x ORDER BY k...) where the query level's first ordered array_agg has
    another order (that one's input arrives sorted): the array of ROW(k..., x), in any
    order, each array then sorted by its keys (stable: ties keep their input order, as
    any order is PostgreSQL's for them) and x kept."""
    rec = row_of([(f"k{i}", e) for i, (e, _, _) in enumerate(call.order)] + [("v", call.arg)])
    agg = ex.AggCall(ex.AggFunc.ARRAY_AGG, rec, False, types.array_of(rec.type), ())
    ref = ex.ColumnRef(base + aggs.position(agg), agg.type, agg.sql())
    desc = "".join("1" if d else "0" for _, d, _ in call.order)
    nulls_first = "".join("1" if nf else "0" for _, _, nf in call.order)
    return ex.Call(ex.Func.SORT_LIST, (ref, ex.Literal(desc, types.TEXT),
                                       ex.Literal(nulls_first, types.TEXT)), call.type)


def _grouped_scope(scope: Scope, keys, extra_fields, aggs) -> Scope:
    """The columns of an Aggregate's output as a correlated subquery above it sees them:
    a group key that is a column keeps that column's name; other keys, the grouping
    sets' columns and the aggregates have no name a subquery could write."""
    cols = []
    for i, k in enumerate(keys):
        if isinstance(k, ex.ColumnRef):
            c = scope.columns[k.index]
            cols.append(ScopeColumn(c.qualifier, c.name, k.type, schema=c.schema))
        else:
            cols.append(ScopeColumn(None, f"?key{i}", k.type, hidden=True))
    cols += [ScopeColumn(None, f.name, f.type, hidden=True) for f in extra_fields]
    cols += [ScopeColumn(None, f"?agg{i}", a.type, hidden=True) for i, a in enumerate(aggs)]
    return Scope(cols)


def _constant_position(tree: exp.Expression, clause: str) -> int | None:
    """A GROUP BY / ORDER BY item that is an integer literal is a select-list position;
    any other constant is an error (PostgreSQL: 42601), not a constant key."""
    if isinstance(tree, exp.Literal) and not tree.is_string and tree.this.isdigit():
        return int(tree.this)
    if isinstance(tree, (exp.Literal, exp.Boolean, exp.Null)):
        raise errors.SyntaxError_(f"non-integer constant in {clause}")
    return None


def _unalias(e: exp.Expression) -> exp.Expression:
    return e.this if isinstance(e, exp.Alias) else e


def _output_name(e: exp.Expression) -> str:
    while isinstance(e, exp.Paren):  # (x) is named x: PostgreSQL's parser keeps no parens
        e = e.this
    if isinstance(e, exp.Alias):
        return e.alias if e.args["alias"].quoted else e.alias.lower()
    if isinstance(e, exp.Column):
        return e.name if e.this.quoted else e.name.lower()
    if isinstance(e, exp.Dot) and isinstance(e.expression, exp.Func):
        return _output_name(e.expression)  # pg_catalog.f(...)
    if isinstance(e, exp.Window):
        return _output_name(e.this)  # f(...) OVER (...) is named after f
    if isinstance(e, (exp.WithinGroup, exp.Filter)):
        return _output_name(e.this)  # f(...) WITHIN GROUP / FILTER (...) too
    if isinstance(e, (exp.RegexpLike, exp.RegexpILike, exp.Operator)):
        return "?column?"  # the ~ operators
    if bind_json.output_name(e) is not None:  # -> ->> #> @> ?, json_extract_path
        return bind_json.output_name(e)
    if bind_array.output_name(e) is not None:  # a[i], ARRAY[...], array functions
        return _output_name(e.this) if isinstance(e, exp.Bracket) else bind_array.output_name(e)
    if isinstance(e, exp.Cast):
        # PostgreSQL's FigureColname: a cast keeps the name of a column or function call
        # under it, else takes its type's name (int4, not int).
        inner = e.this
        if isinstance(inner, (exp.Column, exp.Dot)) or (
                isinstance(inner, exp.Func) and not isinstance(inner, (exp.Cast, exp.Case))):
            return _output_name(inner)
        return catalog_functions.cast_output_name(e.to) or _TYPE_NAMES.get(
            e.to.this, e.to.this.name.lower() if isinstance(e.to, exp.DataType) else "?column?")
    if isinstance(e, exp.Interval):
        return "interval"
    if isinstance(e, AGGREGATES):
        return _AGG_NAMES.get(type(e), type(e).__name__.lower())
    if isinstance(e, exp.Uuid):
        return "gen_random_uuid"
    if isinstance(e, exp.SHA2Digest):
        return f"sha{e.args['length'].name}"
    if isinstance(e, exp.Getbit):
        return "get_bit"
    if isinstance(e, (exp.Func,)) and not isinstance(e, exp.Anonymous):
        name = e.sql_name().lower()
        return {"timestamp_trunc": "date_trunc", "current_version": "version",
                "current_schema": "current_schema", "str_position": "strpos"}.get(name, name)
    if isinstance(e, exp.Anonymous):
        return e.name.lower()
    if isinstance(e, exp.Case):
        return "case"
    return "?column?"


_AGG_NAMES = {exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or", exp.ArrayAgg: "array_agg",
              exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop",
              exp.VariancePop: "var_pop", exp.GroupConcat: "string_agg",
              **regression_aggregates.NODES, **bitwise_aggregates.NODES}
_T = exp.DataType.Type
# The names PostgreSQL's parser gives the types it writes as keywords.
_TYPE_NAMES = {_T.INT: "int4", _T.SMALLINT: "int2", _T.BIGINT: "int8", _T.FLOAT: "float4",
               _T.DOUBLE: "float8", _T.DECIMAL: "numeric", _T.BOOLEAN: "bool",
               _T.VARCHAR: "varchar", _T.CHAR: "bpchar", _T.TEXT: "text", _T.DATE: "date",
               _T.TIMESTAMP: "timestamp", _T.TIMESTAMPTZ: "timestamptz",
               _T.INTERVAL: "interval", _T.TIME: "time", _T.UUID: "uuid", _T.JSON: "json",
               _T.JSONB: "jsonb", _T.VARBINARY: "bytea"}


def _name_at(i: int, names) -> str:
    return names[i] if i < len(names) else f"?sort{i}"


def _nulls_default(o: exp.Ordered) -> bool:
    """sqlglot fills nulls_first itself; treat it as explicit only if the text says so."""
    text = o.sql(dialect="postgres").upper()
    return "NULLS FIRST" not in text and "NULLS LAST" not in text
