"""Bind window function calls (f(...) OVER ...) of one SELECT to WindowAgg nodes.

SQL evaluates windows after FROM/WHERE/GROUP BY/HAVING and before the SELECT list's
final projection, DISTINCT, ORDER BY and LIMIT. The query binder (bind.py `_select`)
binds its SELECT list and ORDER BY with `hook` installed: each window call's arguments,
PARTITION BY and ORDER BY are bound like any other expression of that query level (so
over a grouped query they may use group keys and aggregates), and the call stands as a
placeholder column. `plan` then puts a Project of the expressions the windows read on
top of the query's rows, one WindowAgg per distinct (PARTITION BY, ORDER BY), and maps
the placeholders to the WindowAggs' output columns. avg() is sum() / count() over the
same frame, as the two-stage aggregates finish it (distribute.py). agg(x) FILTER (WHERE c)
is agg(CASE WHEN c THEN x END) (planner/ordered_aggregates.py); FILTER on a function that is
no aggregate is 0A000, as PostgreSQL.

Named windows (WINDOW w AS (...), OVER w, OVER (w ORDER BY ...)) follow PostgreSQL's
copy rules. Frames: ROWS, GROUPS and RANGE, EXCLUDE; RANGE offsets take the ORDER BY
key's type (integers, numerics, floats; intervals for dates and timestamps). lag/lead
offsets and nth_value's n may vary per row.

Every aggregate works over a window: the operator evaluates count, sum, min, max,
array_agg (each frame's values) and REGR (float8_regr_accum over the frame), and the others
are written over those as the grouped aggregates are (planner/*_aggregates.py), each base
call over the same window: string_agg and the json aggregates over array_agg, stddev and
variance over sums (integers, numerics) or REGR (floats), regr_*/corr/covar_* likewise,
bool_and/every/bool_or over min/max, bit_and & co. over bool windows. Refused (0A000) as in
PostgreSQL: DISTINCT or ORDER BY inside a window aggregate, ordered-set aggregates with
OVER; and IGNORE NULLS. Windows in WHERE, GROUP BY, HAVING, JOIN conditions, window
definitions and nested in another window are 42P20, inside an aggregate 42803, as in
PostgreSQL. Distribution (Motions) is distribute.py's.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field

from sqlglot import exp

from planner import (binary_rules, bitwise_aggregates, coercion, errors, functions, json_aggregates,
                     json_grouping, numeric_aggregates, ordered_aggregates, regression_aggregates,
                     statistics_aggregates, string_aggregates, types, values)
from planner import expr as ex
from planner import plan as pl
from planner import window as wn
from planner.bind_expr import AGGREGATES, STATISTICS
from planner.typing_rules import agg_result_type

# Placeholder columns for window results while the SELECT list is bound; far above any
# real column position.
PLACEHOLDER_BASE = 1 << 40

_NESTED_QUERY = (exp.Subquery, exp.Select, exp.Exists, exp.Union, exp.Intersect, exp.Except)

_RANKING = {exp.RowNumber: wn.WindowFunc.ROW_NUMBER, exp.Rank: wn.WindowFunc.RANK,
            exp.DenseRank: wn.WindowFunc.DENSE_RANK,
            exp.PercentRank: wn.WindowFunc.PERCENT_RANK, exp.CumeDist: wn.WindowFunc.CUME_DIST}
_RANKING_TYPES = {wn.WindowFunc.ROW_NUMBER: types.INT8, wn.WindowFunc.RANK: types.INT8,
                  wn.WindowFunc.DENSE_RANK: types.INT8, wn.WindowFunc.PERCENT_RANK: types.FLOAT8,
                  wn.WindowFunc.CUME_DIST: types.FLOAT8}
_VALUES = {exp.FirstValue: wn.WindowFunc.FIRST_VALUE, exp.LastValue: wn.WindowFunc.LAST_VALUE,
           exp.NthValue: wn.WindowFunc.NTH_VALUE}
_AGGS = {exp.Count: wn.WindowFunc.COUNT, exp.Sum: wn.WindowFunc.SUM, exp.Min: wn.WindowFunc.MIN,
         exp.Max: wn.WindowFunc.MAX}
_AGG_FUNCS = {wn.WindowFunc.COUNT: ex.AggFunc.COUNT, wn.WindowFunc.SUM: ex.AggFunc.SUM,
              wn.WindowFunc.MIN: ex.AggFunc.MIN, wn.WindowFunc.MAX: ex.AggFunc.MAX}


def windowing_error(message: str) -> errors.QueryError:
    return errors.QueryError(message, "42P20")


def windows_in(tree: exp.Expression | None, into_windows: bool = True) -> list[exp.Window]:
    """The window calls of this query level in `tree` (not those of subqueries)."""
    if tree is None:
        return []
    out = []
    for node in tree.walk(bfs=False, prune=lambda n: n is not tree and (
            isinstance(n, _NESTED_QUERY) or (not into_windows and isinstance(n, exp.Window)))):
        if isinstance(node, exp.Window) and node.args.get("over"):
            out.append(node)
    return out


def has_windows(select: exp.Select) -> bool:
    order = select.args.get("order")
    return any(windows_in(e) for e in select.expressions) or bool(
        order is not None and windows_in(order))


def check_clauses(select: exp.Select) -> None:
    """42P20/42803 for window calls where PostgreSQL does not allow them."""
    where, group, having = (select.args.get(k) for k in ("where", "group", "having"))
    for tree, clause in ((where, "WHERE"), (group, "GROUP BY"), (having, "HAVING")):
        if windows_in(tree):
            raise windowing_error(f"window functions are not allowed in {clause}")
    for j in select.args.get("joins") or []:
        if windows_in(j.args.get("on")):
            raise windowing_error("window functions are not allowed in JOIN conditions")
    for w in select.args.get("windows") or []:
        if windows_in(w):
            raise windowing_error("window functions are not allowed in window definitions")
    order = select.args.get("order")
    for tree in list(select.expressions) + ([order] if order is not None else []):
        for node in tree.walk(prune=lambda n: n is not tree and isinstance(n, _NESTED_QUERY)):
            if isinstance(node, AGGREGATES) and not _is_window_function(node) and any(
                    windows_in(c) for c in _args_of(node)):
                raise errors.GroupingError(
                    "aggregate function calls cannot contain window function calls")


def _is_window_function(node: exp.Expression) -> bool:
    return isinstance(node.parent, exp.Window) and node.arg_key == "this"


def _check_plain_aggregate(func: exp.Expression) -> None:
    """DISTINCT and ORDER BY inside an aggregate over a window are 0A000, as PostgreSQL."""
    for arg in func.iter_expressions():
        inner = arg.this if isinstance(arg, exp.Order) else arg
        if isinstance(inner, exp.Distinct):
            raise errors.FeatureNotSupported("DISTINCT is not implemented for window functions")
        if isinstance(arg, exp.Order):
            raise errors.FeatureNotSupported(
                "aggregate ORDER BY is not implemented for window functions")


def _is_regression(node: exp.Expression) -> bool:
    """Func.REGR(array_agg(x), array_agg(y), name), as planner/regression_aggregates.py and
    statistics_aggregates.py write the float regressions and statistics: over a window,
    one REGR call (Youngs-Cramer over the frame) rather than two gathered arrays."""
    return isinstance(node, exp.Anonymous) and node.name == ex.Func.REGR.value and \
        len(node.expressions) == 3 and all(isinstance(a, exp.ArrayAgg)
                                          for a in node.expressions[:2])


def _args_of(node: exp.Expression) -> list[exp.Expression]:
    return [v for v in node.args.values() if isinstance(v, exp.Expression)]


@dataclass
class _Spec:
    partition: list
    order: list
    frame: exp.WindowSpec | None


@dataclass
class _Call:
    func: wn.WindowFunc
    args: list[ex.Expr]          # bound over the query's rows: [arg] or [arg, default]
    partition: list[ex.Expr]
    order: list[tuple[ex.Expr, bool, bool]]   # (expr, descending, nulls_first)
    frame: wn.Frame
    n: int | None | ex.Expr   # an Expr: evaluated per row
    type: types.SqlType
    regression: str = ""      # REGR's final function


@dataclass
class WindowBinder:
    select: exp.Select
    calls: list[_Call] = field(default_factory=list)
    named: dict[str, exp.Window] = field(default_factory=dict)

    def __post_init__(self):
        for w in self.select.args.get("windows") or []:
            name = w.this.name if w.this.quoted else w.this.name.lower()
            if name in self.named:
                raise windowing_error(f'window "{name}" is already defined')
            self.named[name] = w

    def reset(self) -> None:
        """Forget the calls bound so far (the aggregate binder's first pass binds the
        SELECT list once only to find its aggregates)."""
        self.calls = []

    def hook(self, binder, inner=None):
        """An ExprBinder hook that binds window calls with `binder`, else asks `inner`."""
        def hook(tree):
            if isinstance(tree, exp.Window) and tree.args.get("over"):
                return self.bind(tree, binder)
            return inner(tree) if inner is not None else None
        return hook

    # --- one call ------------------------------------------------------------------------
    def bind(self, tree: exp.Window, binder) -> ex.Expr:
        spec = self._spec(tree)
        func_tree = tree.this
        if isinstance(func_tree, exp.WithinGroup):
            name = func_tree.this.sql(dialect="postgres").split("(", 1)[0].lower()
            raise errors.FeatureNotSupported(
                f"OVER is not supported for ordered-set aggregate {name}")
        cond = None
        if isinstance(func_tree, exp.Filter):
            # f(x) FILTER (WHERE c) OVER w: f(CASE WHEN c THEN x END), f ignoring NULLs
            if not isinstance(func_tree.this, AGGREGATES):
                raise errors.FeatureNotSupported(
                    "FILTER is not implemented for non-aggregate window functions")
            _check_plain_aggregate(func_tree.this)
            cond = ordered_aggregates.condition(func_tree)
            func_tree = func_tree.this if isinstance(func_tree.this, json_aggregates.NODES) \
                else ordered_aggregates.filtered(func_tree)
        elif isinstance(func_tree, AGGREGATES):
            _check_plain_aggregate(func_tree)
        if isinstance(func_tree, (exp.IgnoreNulls, exp.RespectNulls)):
            raise errors.FeatureNotSupported(
                "IGNORE NULLS / RESPECT NULLS in window functions is not supported")
        for c in _args_of(func_tree):
            if windows_in(c):
                raise windowing_error("window function calls cannot be nested")
        for e in spec.partition + [o.this for o in spec.order]:
            if windows_in(e):
                raise windowing_error("window functions are not allowed in window definitions")
        partition = [functions.fold_constants(binder.bind(e)) for e in spec.partition]
        order = []
        for o in spec.order:
            desc = bool(o.args.get("desc"))
            nf = o.args.get("nulls_first")
            text = o.sql(dialect="postgres").upper()
            if nf is None or ("NULLS FIRST" not in text and "NULLS LAST" not in text):
                nf = desc
            order.append((functions.fold_constants(binder.bind(o.this)), desc, bool(nf)))
        frame = self._frame(spec.frame, order, binder)
        over_base = self._over_base_aggregates(tree, func_tree, binder, cond)
        if over_base is not None:
            return over_base
        scaled = self._display_scaled(func_tree, binder, partition, order, frame)
        if scaled is not None:
            return scaled
        if type(func_tree) is exp.Avg:
            return self._avg(func_tree, binder, partition, order, frame)
        if _is_regression(func_tree):
            xs, ys, name = func_tree.expressions
            args = [functions.fold_constants(binder.bind(a.this)) for a in (xs, ys)]
            return self._add(_Call(wn.WindowFunc.REGR, args, partition, order, frame, 1,
                                   types.FLOAT8, name.name))
        func, args, n, typ = self._function(func_tree, binder)
        return self._add(_Call(func, args, partition, order, frame, n, typ))

    def _over_base_aggregates(self, tree: exp.Window, func: exp.Expression, binder,
                              cond: exp.Expression | None) -> ex.Expr | None:
        """The window call bound as an expression over windows of the aggregates the
        operator evaluates (count, sum, min, max, array_agg, and the float regressions),
        written as the grouped aggregates are (planner/*_aggregates.py), each of them
        over the same window; None for a call that is one of those itself."""
        bind = binder.bind

        def windowed(node):
            if isinstance(node, AGGREGATES) or _is_regression(node):
                w = tree.copy()
                w.set("this", node.copy())
                return w
            return node

        if isinstance(func, json_aggregates.NODES):  # over array_agg windows
            return json_aggregates.bind(
                func, lambda a: bind(a.transform(windowed, copy=True)), cond)
        if isinstance(func, STATISTICS):
            arg = func.this.expressions[0] if isinstance(func.this, exp.Distinct) else func.this
            simple = statistics_aggregates.rewrite(func, bind(arg).type.is_float)
        elif isinstance(func, (exp.LogicalAnd, exp.LogicalOr)):
            b = exp.Paren(this=func.this.copy())
            bit = exp.Case(ifs=[exp.If(this=b, true=exp.Literal.number(1)),
                                exp.If(this=exp.Not(this=b.copy()),
                                       true=exp.Literal.number(0))])
            agg = exp.Min if isinstance(func, exp.LogicalAnd) else exp.Max
            simple = exp.EQ(this=agg(this=bit), expression=exp.Literal.number(1))
        elif type(func) in regression_aggregates.NODES:
            simple = regression_aggregates.rewrite(func, bind)
        elif type(func) in bitwise_aggregates.NODES:
            simple = bitwise_aggregates.rewrite(func, bind)
        elif isinstance(func, exp.GroupConcat):
            simple = string_aggregates.rewrite(func, bind)
        elif isinstance(func, exp.Anonymous) and not _is_regression(func):
            simple = func  # array_agg(x) FILTER (...): LIST_FILTER over two array_aggs
        else:
            return None
        return bind(simple.transform(windowed, copy=True))

    def _add(self, call: _Call) -> ex.Expr:
        self.calls.append(call)
        name = "count" if call.func is wn.WindowFunc.COUNT_STAR else call.func.value
        return ex.ColumnRef(PLACEHOLDER_BASE + len(self.calls) - 1, call.type, name)

    def _avg(self, tree, binder, partition, order, frame) -> ex.Expr:
        arg = self._aggregate_arg(tree, binder)
        if arg.type.kind is types.Kind.FLOAT4:  # avg(real) accumulates in double precision
            arg = _cast(arg, types.FLOAT8)
        avg_type = agg_result_type(ex.AggFunc.AVG, arg.type)
        sum_type = agg_result_type(ex.AggFunc.SUM, arg.type)
        s = self._add(_Call(wn.WindowFunc.SUM, [arg], partition, order, frame, 1, sum_type))
        c = self._add(_Call(wn.WindowFunc.COUNT, [arg], partition, order, frame, 1, types.INT8))
        divisor = functions.bind_call(ex.Func.NULLIF, [c, ex.Literal(0, types.INT8)])
        numer = s if s.type.is_numeric or s.type.is_float else functions.bind_cast(
            s, types.numeric(None, 0))
        quotient = functions.bind_call(ex.Func.NUMERIC_QUOTIENT_AT, [
            numer, divisor, ex.Literal(numeric_aggregates.avg_storage_scale(arg.type),
                                       types.INT4)]) if not numer.type.is_float else \
            functions.bind_call(ex.Func.DIV, [numer, divisor])
        # numeric_avg: the quotient's own select_div_scale digits, value by value
        return functions.bind_cast(quotient, avg_type) if avg_type.is_float else quotient

    def _display_scaled(self, tree, binder, partition, order, frame) -> ex.Expr | None:
        """sum/avg/min/max OVER a window of an unconstrained numeric, as the grouped ones
        are bound (planner/numeric_aggregates.py): a sum of the values with the largest
        display scale, min/max over key bytes that hold the scale; None for others."""
        if type(tree) not in (exp.Sum, exp.Avg, exp.Min, exp.Max) or isinstance(
                tree.this, exp.Distinct):
            return None
        arg = self._aggregate_arg(tree, binder)
        if not arg.type.is_dynamic:
            return None

        def window(func, e: ex.Expr, t: types.SqlType) -> ex.Expr:
            return self._add(_Call(func, [e], partition, order, frame, 1, t))

        if type(tree) in (exp.Min, exp.Max):
            keyed = functions.bind_call(ex.Func.NUMERIC_KEYED, [arg])
            func = wn.WindowFunc.MIN if type(tree) is exp.Min else wn.WindowFunc.MAX
            return functions.bind_call(ex.Func.NUMERIC_UNKEYED, [
                window(func, keyed, keyed.type), ex.Literal(arg.type.scale, types.INT4)])
        value = functions.bind_call(ex.Func.NUMERIC_VALUE, [arg])
        total = functions.bind_call(ex.Func.NUMERIC_WITH_SCALE, [
            window(wn.WindowFunc.SUM, value, agg_result_type(ex.AggFunc.SUM, value.type)),
            window(wn.WindowFunc.MAX, functions.bind_call(ex.Func.NUMERIC_DSCALE, [arg]),
                   types.INT4)])
        if type(tree) is exp.Sum:
            return total
        count = window(wn.WindowFunc.COUNT, arg, types.INT8)
        return functions.bind_call(ex.Func.NUMERIC_QUOTIENT_AT, [total, functions.bind_call(
            ex.Func.NULLIF, [count, ex.Literal(0, types.INT8)]),
            ex.Literal(numeric_aggregates.avg_storage_scale(arg.type), types.INT4)])

    def _aggregate_arg(self, tree, binder) -> ex.Expr:
        inner = tree.this
        if isinstance(inner, exp.Distinct):
            raise errors.FeatureNotSupported("DISTINCT is not implemented for window functions")
        return functions.fold_constants(binder.bind(inner))

    def _function(self, tree, binder):
        name = tree.sql(dialect="postgres").split("(", 1)[0].lower()
        if type(tree) in _RANKING:
            if tree.args.get("expressions") or tree.args.get("this"):
                raise errors.UndefinedFunction(f"function {name} with arguments as a window "
                                               "function does not exist")
            func = _RANKING[type(tree)]
            return func, [], 1, _RANKING_TYPES[func]
        if isinstance(tree, exp.Ntile):
            if tree.this is None:
                raise errors.UndefinedFunction("function ntile() does not exist")
            n = _constant_int(tree.this, binder, "ntile", per_row=True)
            return wn.WindowFunc.NTILE, [], n, types.INT4
        if isinstance(tree, (exp.Lag, exp.Lead)):
            arg = _value(functions.fold_constants(binder.bind(tree.this)))
            off = tree.args.get("offset")
            n = 1 if off is None else _constant_int(off, binder, name + " offset", per_row=True)
            args = [arg]
            if tree.args.get("default") is not None:
                default = functions.fold_constants(binder.bind(tree.args["default"]))
                if all(x.type.is_string or coercion.is_unknown(x) for x in (arg, default)):
                    # lag(anycompatible, int, anycompatible): select_common_type, the
                    # value's first (a char(n) keeps its padding: planner/padded_bpchar.py)
                    args, t = coercion.unify([arg, default], name)
                else:
                    t = types.common_type(arg.type, default.type)
                    if t.kind is types.Kind.UNKNOWN:
                        t = types.TEXT
                    args = [_cast(arg, t), _cast(default, t)]
            func = wn.WindowFunc.LAG if isinstance(tree, exp.Lag) else wn.WindowFunc.LEAD
            return func, args, n, args[0].type
        if type(tree) in _VALUES:
            if tree.args.get("from_first") is not None:
                raise errors.FeatureNotSupported("nth_value(...) FROM FIRST/LAST is not supported")
            arg = _value(functions.fold_constants(binder.bind(tree.this)))
            n = 1
            if isinstance(tree, exp.NthValue):
                n = _constant_int(tree.args["offset"], binder, "nth_value", per_row=True)
            return _VALUES[type(tree)], [arg], n, arg.type
        if isinstance(tree, exp.ArrayAgg):
            arg = self._aggregate_arg(tree, binder)
            return wn.WindowFunc.ARRAY_AGG, [arg], 1, agg_result_type(ex.AggFunc.ARRAY_AGG,
                                                                      arg.type)
        if type(tree) in _AGGS:
            inner = tree.this
            if isinstance(tree, exp.Count) and (inner is None or isinstance(inner, exp.Star)):
                return wn.WindowFunc.COUNT_STAR, [], 1, types.INT8
            arg = self._aggregate_arg(tree, binder)
            func = _AGGS[type(tree)]
            if func in (wn.WindowFunc.MIN, wn.WindowFunc.MAX):
                if arg.type.kind is types.Kind.BOOL:
                    raise errors.UndefinedFunction(f"function {name}(boolean) does not exist")
                binary_rules.check_min_max(name, arg)
                _orderable(arg, f"{name}() over a window")
            return func, [arg], 1, agg_result_type(_AGG_FUNCS[func], arg.type)
        raise errors.FeatureNotSupported(f"{name}() as a window function is not supported")

    # --- the window ----------------------------------------------------------------------
    def _spec(self, tree: exp.Window) -> _Spec:
        own = _Spec(list(tree.args.get("partition_by") or []),
                    list(tree.args["order"].expressions) if tree.args.get("order") else [],
                    tree.args.get("spec"))
        ref = tree.args.get("alias")
        if ref is None:
            return own
        return self._copy(ref, own, whole=not own.order and own.frame is None
                          and not own.partition, seen=())

    def _named(self, ref: exp.Identifier, seen) -> _Spec:
        name = ref.name if ref.quoted else ref.name.lower()
        if name not in self.named or name in seen:
            raise errors.UndefinedObject(f'window "{name}" does not exist')
        w = self.named[name]
        own = _Spec(list(w.args.get("partition_by") or []),
                    list(w.args["order"].expressions) if w.args.get("order") else [],
                    w.args.get("spec"))
        if w.args.get("alias") is not None:
            return self._copy(w.args["alias"], own, whole=False, seen=seen + (name,))
        return own

    def _copy(self, ref: exp.Identifier, own: _Spec, whole: bool, seen) -> _Spec:
        """PostgreSQL's rules for a window that names another: PARTITION BY comes from
        the named one, ORDER BY from either (not both), and a named window with a frame
        is only usable whole (OVER w)."""
        base = self._named(ref, seen)
        name = ref.name if ref.quoted else ref.name.lower()
        if whole:
            return base
        if own.partition:
            raise windowing_error(f'cannot override PARTITION BY clause of window "{name}"')
        if own.order and base.order:
            raise windowing_error(f'cannot override ORDER BY clause of window "{name}"')
        if base.frame is not None:
            raise windowing_error(f'cannot copy window "{name}" because it has a frame clause')
        return _Spec(base.partition, own.order or base.order, own.frame)

    def _frame(self, spec: exp.WindowSpec | None, order, binder) -> wn.Frame:
        if spec is None:
            return wn.DEFAULT_FRAME
        kind = (spec.args.get("kind") or "").lower()
        if kind == "groups" and not order:
            raise windowing_error("GROUPS mode requires an ORDER BY clause")
        start, start_tree = _bound(spec.args.get("start"), spec.args.get("start_side"))
        if spec.args.get("end") is None:
            end, end_tree = wn.Bound.CURRENT_ROW, None
        else:
            end, end_tree = _bound(spec.args.get("end"), spec.args.get("end_side"))
        if start is wn.Bound.UNBOUNDED_FOLLOWING:
            raise windowing_error("frame start cannot be UNBOUNDED FOLLOWING")
        if end is wn.Bound.UNBOUNDED_PRECEDING:
            raise windowing_error("frame end cannot be UNBOUNDED PRECEDING")
        if start is wn.Bound.CURRENT_ROW and end is wn.Bound.PRECEDING:
            raise windowing_error("frame starting from current row cannot have preceding rows")
        if start is wn.Bound.FOLLOWING and end in (wn.Bound.PRECEDING, wn.Bound.CURRENT_ROW):
            raise windowing_error("frame starting from following row cannot have preceding rows")
        offsets = []
        for tree, what in ((start_tree, "starting"), (end_tree, "ending")):
            if tree is None:
                offsets.append(0)
            elif kind == "range":
                if len(order) != 1:
                    raise windowing_error("RANGE with offset PRECEDING/FOLLOWING requires "
                                          "exactly one ORDER BY column")
                offsets.append(_range_offset(binder.bind(tree), order[0][0].type, what))
            else:
                offsets.append(_row_offset(binder.bind(tree), what))
        exclude = spec.args.get("exclude")
        exclude = wn.Exclude(" ".join(exclude.name.upper().split())) if exclude is not None \
            else wn.Exclude.NO_OTHERS
        return wn.Frame(rows=kind == "rows", start=start, end=end, start_offset=offsets[0],
                        end_offset=offsets[1], groups=kind == "groups", exclude=exclude)

    # --- the plan ------------------------------------------------------------------------
    def plan(self, node: pl.Node, exprs: list[ex.Expr]) -> tuple[pl.Node, list[ex.Expr]]:
        """Put the windows on `node` (the query's rows: FROM ... HAVING); `exprs` (over
        `node` and the placeholders) become expressions over the result, whose first
        columns are `node`'s."""
        n = len(node.fields)
        inputs: list[ex.Expr] = []

        def column(e: ex.Expr) -> int:
            if isinstance(e, ex.ColumnRef) and e.index < n:
                return e.index
            if e not in inputs:
                inputs.append(e)
            return n + inputs.index(e)

        resolved = []
        for c in self.calls:
            args = [column(a) for a in c.args]
            # a per-row lag/lead offset or nth_value n: one more column the windows read
            n_col = column(c.n) if isinstance(c.n, ex.Expr) else None
            # jsonb partitions and orders by its sort key (planner/json_grouping.py)
            part = tuple(dict.fromkeys(column(json_grouping.group_key(p)) for p in c.partition))
            order = tuple((column(json_grouping.group_key(e)), d, nf) for e, d, nf in c.order)
            resolved.append((c, args, part, order, n_col))
        if inputs:
            keep = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(node.fields))
            node = pl.Project(node, keep + tuple(inputs), node.fields + tuple(
                pl.Field(ex.show(e), e.type) for e in inputs))
        windows: dict[tuple, list[int]] = {}
        for k, (c, args, part, order, _) in enumerate(resolved):
            windows.setdefault((part, order), []).append(k)
        mapping = {i: i for i in range(n)}
        for (part, order), ks in windows.items():
            names = [f.name for f in node.fields]
            keys = tuple(pl.SortKey(ex.ColumnRef(i, node.fields[i].type, node.fields[i].name),
                                    d, nf) for i, d, nf in order)
            calls = []
            for k in ks:
                c, args, _, _, n_col = resolved[k]
                regr = c.func is wn.WindowFunc.REGR
                calls.append(wn.WindowCall(
                    c.func, args[0] if args else None, c.type,
                    c.frame if c.func in wn.FRAMED else wn.DEFAULT_FRAME,
                    None if n_col is not None else c.n,
                    args[1] if len(args) > 1 and not regr else None, n_col=n_col,
                    arg2=args[1] if regr else None, regression=c.regression))
                mapping[PLACEHOLDER_BASE + k] = len(node.fields) + len(calls) - 1
            fields = node.fields + tuple(pl.Field(c.sql(names), c.type) for c in calls)
            node = pl.WindowAgg(node, part, keys, tuple(calls), fields)
        for i in range(n, n + len(inputs)):
            mapping[i] = i
        return node, [ex.map_columns(e, mapping) for e in exprs]


def _bound(value, side):
    """(Bound, the offset's expression or None) of one end of a frame."""
    side = (side or "").lower()
    if isinstance(value, str) and value.upper() == "UNBOUNDED":
        return (wn.Bound.UNBOUNDED_PRECEDING if side == "preceding"
                else wn.Bound.UNBOUNDED_FOLLOWING), None
    if isinstance(value, str) and value.upper() == "CURRENT ROW":
        return wn.Bound.CURRENT_ROW, None
    return (wn.Bound.PRECEDING if side == "preceding" else wn.Bound.FOLLOWING), value


def _offset_literal(e: ex.Expr, what: str) -> ex.Literal:
    e = functions.fold_constants(e)
    if not isinstance(e, ex.Literal):
        raise errors.FeatureNotSupported(
            "window frame offsets other than constants are not supported")
    if e.value is None:
        raise errors.QueryError(f"frame {what} offset must not be null", "22004")
    return e


def _row_offset(e: ex.Expr, what: str) -> int:
    """ROWS / GROUPS n PRECEDING / FOLLOWING: a count (bigint in PostgreSQL)."""
    e = _quoted_int(e)
    lit = _offset_literal(e, what)
    if not lit.type.is_integer:
        raise errors.FeatureNotSupported(
            "ROWS/GROUPS offsets other than integer constants are not supported")
    if lit.value < 0:
        raise errors.QueryError(f"frame {what} offset must not be negative", "22013")
    return int(lit.value)


_MICROS_PER_DAY = 86_400_000_000


def _range_offset(e: ex.Expr, key: types.SqlType, what: str) -> int | float:
    """RANGE offset PRECEDING / FOLLOWING in the ORDER BY key's physical units (see
    window_eval.py): integers as they are, scaled numerics at the key's scale, floats as
    float, dates and timestamps in microseconds, or (months, microseconds) for an
    interval with months."""
    def unsupported():
        return errors.FeatureNotSupported(
            f"RANGE with offset PRECEDING/FOLLOWING is not supported for column type {key}"
            f" and offset type {lit.type}")
    if e.type.kind is types.Kind.UNKNOWN or (
            isinstance(e, ex.Literal) and isinstance(e.value, str)):
        # a quoted offset ('1 day', '2') takes the type the key's in_range wants
        temporal = key.kind in (types.Kind.DATE, types.Kind.TIMESTAMP, types.Kind.TIMESTAMPTZ)
        e = functions.bind_cast(e, types.INTERVAL if temporal else
                                types.FLOAT8 if key.is_float else key)
    lit = _offset_literal(e, what)
    v = lit.value
    negative = errors.QueryError("invalid preceding or following size in window function",
                                 "22013")
    if key.is_integer:
        if not lit.type.is_integer:
            raise unsupported()
        if v < 0:
            raise negative
        return int(v)
    if key.is_float:
        if not (lit.type.is_number):
            raise unsupported()
        f = float(v)
        if f < 0 or f != f:
            raise negative
        return f
    if key.is_numeric and key.is_scaled_int:
        if not (lit.type.is_integer or lit.type.is_numeric):
            raise unsupported()
        d = decimal.Decimal(v)
        if d < 0:
            raise negative
        scaled = d.scaleb(key.scale, values.DEC)  # exact (the default context keeps 28)
        if scaled != scaled.to_integral_value():
            raise errors.FeatureNotSupported("RANGE offsets with more fractional digits than "
                                             "the ORDER BY column are not supported")
        return int(scaled)
    if key.kind in (types.Kind.DATE, types.Kind.TIMESTAMP, types.Kind.TIMESTAMPTZ):
        if lit.type.kind is not types.Kind.INTERVAL:
            raise unsupported()
        micros = v.days * _MICROS_PER_DAY + v.micros
        if v.months < 0 or micros < 0 or v.days < 0 or v.micros < 0:
            raise negative
        # with months: (months, microseconds), added to the key as a calendar does
        return (v.months, micros) if v.months else micros
    raise unsupported()


def _constant_int(tree, binder, what: str, per_row: bool = False) -> int | None | ex.Expr:
    """An integer argument: its value when constant (None: NULL); with `per_row`, any
    integer expression (evaluated for each row, as PostgreSQL's lag/lead offsets and
    nth_value's n are)."""
    e = functions.fold_constants(binder.bind(tree))
    if isinstance(e, ex.Literal) and e.value is None:
        return None
    if isinstance(e, ex.Literal) and e.type.is_integer:
        return int(e.value)
    e = _quoted_int(e)
    if isinstance(e, ex.Literal) and e.type.is_integer:
        return int(e.value)
    if per_row and e.type.is_integer:
        return _cast(e, types.INT8)
    raise errors.FeatureNotSupported(f"{what} other than an integer constant is not supported")


def _quoted_int(e: ex.Expr) -> ex.Expr:
    """'2' (a quoted constant, or a parameter substituted as one) read as a bigint, as
    PostgreSQL resolves an unknown literal for an integer argument; 22P02 if it is none."""
    if isinstance(e, ex.Literal) and isinstance(e.value, str) and (
            e.type.kind in (types.Kind.UNKNOWN, types.Kind.TEXT)):
        return functions.fold_constants(functions.bind_cast(e, types.INT8))
    return e


def _value(e: ex.Expr) -> ex.Expr:
    return _cast(e, types.TEXT) if e.type.kind is types.Kind.UNKNOWN else e


def _cast(e: ex.Expr, t: types.SqlType) -> ex.Expr:
    return e if e.type == t else functions.fold_constants(functions.bind_cast(e, t))


def _orderable(e: ex.Expr, what: str) -> None:
    """min/max over a window of intervals (the window operator's min/max are Arrow's,
    which does not order intervals by their span): 0A000 while planning."""
    if e.type.kind is types.Kind.INTERVAL:
        raise errors.FeatureNotSupported(f"{what} of intervals is not supported")
