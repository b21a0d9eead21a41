"""Bind sqlglot scalar expressions to typed planner expressions (planner/expr.py).

Names resolve against a `Scope`; types and coercions come from planner/functions.py. An
optional `hook` lets the query binder replace whole subtrees first (aggregate calls and
GROUP BY expressions become references to the Aggregate node's output).
"""

from __future__ import annotations

import decimal
import math
import re
from typing import Callable

from sqlglot import exp

from planner import (binary_values, bind_array, bind_json, bitwise_aggregates,
                     catalog_functions, datetime_rules, errors, functions, math_rules,
                     pg_functions, regex_rules, regression_aggregates, row_comparison,
                     time_zones, types, zone_rules)
from planner import expr as ex
from planner import interval_literal as interval_values, overlaps, sequence_calls, typing_rules
from planner.coercion import is_unknown, no_function
from planner.expr import Func
from planner.schema import identifier
from planner.scope import Scope
from planner.session_info import SESSION_INFO
from planner.type_names import cast_type, sql_type

# Values of session functions (current_user, current_database, ...) for the statement
# being bound; the coordinator sets them per session before binding.
SERVER_VERSION = "15.0"
VERSION_TEXT = "PostgreSQL 15.0 (raympp 0.1.0) on x86_64-pc-linux-gnu, distributed MPP over Ray"

RADIANS_PER_DEGREE = 0.0174532925199432957692  # PostgreSQL's constant (float.c)

Hook = Callable[[exp.Expression], "ex.Expr | None"]

_BINARY = {
    exp.Add: Func.ADD, exp.Sub: Func.SUB, exp.Mul: Func.MUL, exp.Div: Func.DIV,
    exp.Mod: Func.MOD, exp.EQ: Func.EQ, exp.NEQ: Func.NE, exp.LT: Func.LT, exp.LTE: Func.LE,
    exp.GT: Func.GT, exp.GTE: Func.GE, exp.And: Func.AND, exp.Or: Func.OR,
    exp.DPipe: Func.CONCAT, exp.BitwiseAnd: Func.BIT_AND, exp.BitwiseOr: Func.BIT_OR,
    exp.BitwiseXor: Func.BIT_XOR, exp.BitwiseLeftShift: Func.SHIFT_LEFT,
    exp.BitwiseRightShift: Func.SHIFT_RIGHT,
}
_UNARY = {
    exp.Lower: Func.LOWER, exp.Upper: Func.UPPER, exp.Length: Func.LENGTH, exp.Abs: Func.ABS,
    exp.Floor: Func.FLOOR, exp.Ceil: Func.CEIL, exp.Sqrt: Func.SQRT, exp.Ln: Func.LN,
    exp.Exp: Func.EXP, exp.BitwiseNot: Func.BIT_NOT,
}
_NAMED = {f.value: f for f in Func}
_NAMED.update({"strpos": Func.POSITION, "concat": Func.CONCAT_FN, "ceiling": Func.CEIL,
               "char_length": Func.LENGTH, "character_length": Func.LENGTH, "pow": Func.POWER,
               "trim": Func.TRIM, "substr": Func.SUBSTRING})
# var_samp & co. are bound as expressions over sum/count (planner/statistics_aggregates.py).
STATISTICS = (exp.Stddev, exp.StddevSamp, exp.StddevPop, exp.Variance, exp.VariancePop)
AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.ArrayAgg, exp.LogicalAnd,
              exp.LogicalOr, exp.GroupConcat, exp.Filter, exp.WithinGroup) + STATISTICS \
    + bind_json.AGGREGATES + tuple(regression_aggregates.NODES) \
    + tuple(bitwise_aggregates.NODES)
_NESTED_QUERY = (exp.Subquery, exp.Select, exp.Exists, exp.Union, exp.Intersect, exp.Except)


def over_no_rows(e: exp.Expression) -> exp.Expression:
    """`e` with each aggregate call replaced by its value over no rows: count() (also with
    FILTER) 0, every other aggregate NULL."""
    def empty(node):
        if isinstance(node, exp.Filter):
            node = node.this
        if isinstance(node, exp.Count):
            return exp.Literal.number(0)
        if isinstance(node, AGGREGATES):
            return exp.Null()
        return node
    return e.transform(empty, copy=True)


def find_aggregate(tree: exp.Expression) -> exp.Expression | None:
    """The first aggregate call of `tree` that belongs to this query level: aggregates
    inside a subquery are the subquery's own."""
    for node in tree.walk(bfs=True, prune=lambda n: n is not tree and isinstance(n, _NESTED_QUERY)):
        if isinstance(node, AGGREGATES) and not (  # sum(x) OVER (...) is a window function
                _window_function(node) or isinstance(node.parent, exp.Filter)
                and node.arg_key == "this" and _window_function(node.parent)):
            return node
    return None


def _window_function(node: exp.Expression) -> bool:
    return isinstance(node.parent, exp.Window) and node.arg_key == "this"


def number_literal(text: str) -> ex.Literal:
    """Type a numeric literal as PostgreSQL does: int4, then int8, then numeric. A
    negated literal comes here with its sign (the grammar's doNegate), so -2147483648 is
    int4 and -9223372036854775808 int8. A numeric of more than 38 digits (raympp's numerics
    hold 38) is an unconstrained numeric constant that only a conversion to a float can
    use (1e300::float8, a float8 column's INSERT); anything else that computes or shows it
    is 22003 (values.fit_numeric)."""
    if re.fullmatch(r"-?\d+", text):
        v = int(text)
        if -2**31 <= v <= 2**31 - 1:
            return ex.Literal(v, types.INT4)
        if -2**63 <= v <= 2**63 - 1:
            return ex.Literal(v, types.INT8)
    try:
        d = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise errors.SyntaxError_(f'invalid number "{text}"')
    if "e" in text.lower():
        d = d.normalize() if d == d.to_integral_value() else d
    sign, digits, exponent = d.as_tuple()
    scale = max(0, -exponent)
    if exponent > 0:
        # An integer written with an exponent (1e30): as many digits as it has, more than
        # the default context's 28.
        d = d.quantize(decimal.Decimal(1), context=decimal.Context(prec=len(digits) + exponent))
        digits = d.as_tuple().digits
    precision = max(len(digits), scale, 1)
    if precision > 38:
        return ex.Literal(d, types.numeric(None, min(scale, 38)))
    return ex.Literal(d, types.numeric(max(precision, scale), scale))


class ExprBinder:
    """Binds one expression tree. `params` are the types of $1..$n (mutable: inferred)."""

    def __init__(self, scope: Scope, params: list[types.SqlType] | None = None,
                 hook: Hook | None = None, subquery: Callable | None = None):
        self.scope = scope
        self.params = params if params is not None else []
        self.hook = hook
        self.subquery = subquery

    def bind(self, node: exp.Expression) -> ex.Expr:
        if self.hook is not None:
            hooked = self.hook(node)
            if hooked is not None:
                return hooked
        return self._bind(node)

    def _bind(self, node: exp.Expression) -> ex.Expr:  # noqa: C901 - one dispatch table
        b = self.bind
        if isinstance(node, exp.Paren):
            return b(node.this)
        if self.subquery is not None and isinstance(node, exp.Array) and node.expressions \
                and isinstance(node.expressions[0], (exp.Select, exp.Subquery)):
            return self.subquery(node)  # ARRAY(subquery): subquery_predicates.array_form
        js = bind_json.bind(self, node)  # -> ->> #> @> ? and the json functions
        if js is not None:
            return js
        arr = bind_array.bind(self, node)  # ARRAY[...], a[i], array functions, ANY (array)
        if arr is not None:
            return arr
        if isinstance(node, exp.AtTimeZone):
            return self._at_time_zone(b(node.this), node.args["zone"])
        if isinstance(node, exp.Collate):
            # Text compares byte-wise, which is what the "C" and "POSIX" collations do
            # (and "default", the database's, which is C here).
            coll = node.expression
            ident = coll.this if isinstance(coll, exp.Column) else coll
            name = ident.name if isinstance(ident, exp.Identifier) and ident.quoted else ident.name.lower()
            if name not in ("C", "POSIX", "default", "ucs_basic"):
                raise errors.FeatureNotSupported(
                    f'collation "{name}" (only "C", "POSIX" and "default" are implemented)')
            arg = b(node.this)
            if not (arg.type.is_string or arg.type.kind is types.Kind.UNKNOWN):
                raise errors.DatatypeMismatch(
                    f"collations are not supported by type {arg.type}")
            return arg
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise errors.SyntaxError_("'*' is not allowed here")
            db = node.args.get("db")
            name = node.name.lower() if not node.this.quoted else node.name
            # schema.table.column: the table must be that schema's
            try:
                i = self.scope.resolve(name, identifier(node.args["table"])
                                       if node.args.get("table") else None,
                                       identifier(db) if db is not None else None)
            except errors.UndefinedColumn:
                whole = None if node.args.get("table") else self._whole_row(name)
                if whole is None:
                    raise
                return whole
            col = self.scope.columns[i]
            return ex.ColumnRef(i, col.type, col.name)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return ex.Literal(node.this, types.TEXT)
            return number_literal(node.this)
        if isinstance(node, exp.ByteString) and not node.args.get("is_bytes"):
            return ex.Literal(node.this, types.TEXT)  # E'...': sqlglot has read its escapes
        if isinstance(node, exp.Null):
            return ex.Literal(None, types.UNKNOWN)
        if isinstance(node, exp.Boolean):
            return ex.Literal(bool(node.this), types.BOOL)
        if isinstance(node, exp.Parameter) or isinstance(node, exp.Placeholder):
            return self._param(node)
        if self.subquery is not None and _subquery_predicate(node):
            return self.subquery(node)  # EXISTS / IN / ANY / ALL (subquery) as a value
        if type(node) in _COMPARISONS and _quantifier(node.expression) is not None:
            return self._quantified(node)
        rows = row_comparison.rewrite(node)  # (a, b) < (c, d): comparisons of fields
        if rows is not None:
            return b(rows)
        if type(node) in _BINARY:
            return functions.bind_call(_BINARY[type(node)], [b(node.this), b(node.expression)])
        if isinstance(node, exp.Neg):
            inner = node.this
            while isinstance(inner, exp.Paren):  # -(2147483648) too: parentheses are no node
                inner = inner.this
            if isinstance(inner, exp.Literal) and inner.is_number \
                    and re.fullmatch(r"\d+", inner.name):
                return number_literal("-" + inner.name)
            return functions.bind_call(Func.NEG, [b(node.this)])
        if isinstance(node, exp.Not):
            return functions.bind_call(Func.NOT, [b(node.this)])
        if type(node) in _UNARY:
            return functions.bind_call(_UNARY[type(node)], [b(node.this)])
        dated = self._math_or_datetime(node)
        if dated is not None:
            return dated
        if isinstance(node, exp.Cast):
            target = cast_type(node.to)  # oid, regclass, pg_catalog.text
            e = functions.bind_cast(b(node.this), target or sql_type(node.to))
            if isinstance(e, ex.Literal) and e.type.kind is types.Kind.TEXT:
                return ex.Literal(e.value, types.TEXT_EXPLICIT)  # 'x'::text is text
            return e
        if isinstance(node, (exp.RegexpLike, exp.RegexpILike, exp.Operator)):
            return catalog_functions.bind_regex(node, b)
        if isinstance(node, exp.Dot) and isinstance(node.this, exp.Paren) \
                and isinstance(node.expression, exp.Identifier):
            ident = node.expression  # (record).field
            return field_of(b(node.this.this), ident.name if ident.quoted else ident.name.lower())
        if isinstance(node, exp.Dot) and isinstance(node.this, exp.Identifier) \
                and isinstance(node.expression, exp.Func):
            # pg_catalog.f(...): every function raympp has is pg_catalog's.
            schema = node.this.name if node.this.quoted else node.this.name.lower()
            if schema != "pg_catalog":
                args = [b(a) for a in node.expression.args.get("expressions") or []]
                raise errors.UndefinedFunction(
                    f"function {schema}.{pg_name(node.expression)}"
                    f"({', '.join(str(a.type) for a in args)}) does not exist")
            return b(node.expression)
        if isinstance(node, exp.Interval):
            return ex.Literal(interval_values.interval_literal(node), types.INTERVAL)
        if isinstance(node, exp.Overlaps):
            return overlaps.bind_overlaps(node, b)
        if isinstance(node, exp.Between):
            arg, lo, hi = b(node.this), b(node.args["low"]), b(node.args["high"])

            def between(low, high):
                return functions.bind_call(Func.AND, [functions.bind_call(Func.GE, [arg, low]),
                                                      functions.bind_call(Func.LE, [arg, high])])
            if node.args.get("symmetric"):
                # BETWEEN SYMMETRIC: either order of the bounds.
                return functions.bind_call(Func.OR, [between(lo, hi), between(hi, lo)])
            return between(lo, hi)
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, (exp.Like, exp.ILike)):
            return self._like(node, negated=bool(node.args.get("negate")))
        if isinstance(node, exp.Escape) and isinstance(node.this, (exp.Like, exp.ILike)):
            return self._like(node.this, negated=bool(node.this.args.get("negate")),
                              escape=node.expression)
        if isinstance(node, (exp.Array, exp.Any, exp.All)):
            raise errors.FeatureNotSupported("arrays" if isinstance(node, exp.Array) else
                                             "ANY/SOME/ALL other than over an ARRAY[...] list")
        if isinstance(node, exp.Is):
            return self._is(node)
        if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            return self._distinct(b(node.this), b(node.expression),
                                  distinct=isinstance(node, exp.NullSafeNEQ))
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.If):
            return functions.bind_case([(b(node.this), b(node.args["true"]))],
                                       b(node.args["false"]) if node.args.get("false") else None)
        if isinstance(node, exp.Coalesce):
            return functions.bind_call(Func.COALESCE, [b(node.this)] + [b(e) for e in node.expressions])
        if isinstance(node, exp.Nullif):
            return functions.bind_call(Func.NULLIF, [b(node.this), b(node.expression)])
        if isinstance(node, (exp.Greatest, exp.Least)):
            f = Func.GREATEST if isinstance(node, exp.Greatest) else Func.LEAST
            return functions.bind_call(f, [b(node.this)] + [b(e) for e in node.expressions])
        if isinstance(node, exp.Extract):
            field = node.this.name.lower()
            return functions.bind_call(Func.EXTRACT, [ex.Literal(field, types.TEXT), b(node.expression)])
        if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):
            unit = node.args["unit"]
            # a quoted unit is a Var here (sqlglot's TimeUnit); a column, a cast or any
            # other expression is bound as written (sql_dialect keeps a bare name so)
            if unit is None or isinstance(unit, exp.Var):
                field = ex.Literal(unit.name.lower() if unit is not None else "day", types.TEXT)
            else:  # 'hour'::text, a column: typed as written
                field = functions.fold_constants(b(unit))
            zone = node.args.get("zone")
            if zone is None:
                return functions.bind_call(Func.DATE_TRUNC, [field, b(node.this)])
            return self._date_trunc_in(field, b(node.this), zone)
        if isinstance(node, exp.Substring):
            args = [b(node.this), b(node.args["start"]) if node.args.get("start") else ex.Literal(1, types.INT4)]
            if node.args.get("length") is not None:
                args.append(b(node.args["length"]))
            if _text_pattern(args[1]):  # substring(s FROM pattern): text, not a position
                return regex_rules.bind_substring_regex(*args)
            return functions.bind_call(Func.SUBSTRING, args)
        if isinstance(node, exp.StrPosition):
            return functions.bind_call(Func.POSITION, [b(node.this), b(node.args["substr"])])
        if isinstance(node, exp.Trim):
            # trim([LEADING|TRAILING|BOTH] [chars] FROM s), ltrim/rtrim/btrim(s [, chars])
            position = (node.args.get("position") or "BOTH").upper()
            f = {"LEADING": Func.LTRIM, "TRAILING": Func.RTRIM, "BOTH": Func.TRIM}[position]
            chars = node.args.get("expression")
            return functions.bind_call(f, [b(node.this)] + ([b(chars)] if chars is not None else []))
        if isinstance(node, exp.Round):
            args = [b(node.this)] + ([b(node.args["decimals"])] if node.args.get("decimals") else [])
            return functions.bind_call(Func.ROUND, args)
        if isinstance(node, (exp.SimilarTo, exp.Escape)) and isinstance(
                node.this if isinstance(node, exp.Escape) else node, exp.SimilarTo):
            sim = node.this if isinstance(node, exp.Escape) else node
            escape = b(node.expression) if isinstance(node, exp.Escape) else None
            return regex_rules.bind_similar(b(sim.this), b(sim.expression), escape,
                                            negate=False)
        if isinstance(node, (exp.RegexpReplace, exp.RegexpSubstr, exp.RegexpCount,
                             exp.RegexpInstr, exp.Overlay, exp.Format)):
            name = {exp.RegexpReplace: "regexp_replace", exp.RegexpSubstr: "regexp_substr",
                    exp.RegexpCount: "regexp_count", exp.RegexpInstr: "regexp_instr",
                    exp.Overlay: "overlay", exp.Format: "format"}[type(node)]
            return regex_rules.bind_function(name, [b(a) for a in _in_order(node)])
        if isinstance(node, (exp.Left, exp.Right)):
            f = Func.LEFT if isinstance(node, exp.Left) else Func.RIGHT
            return functions.bind_call(f, [b(node.this), b(node.expression)])
        if isinstance(node, (exp.CurrentTimestamp,)):
            return functions.bind_call(Func.NOW, [])
        if isinstance(node, exp.CurrentDate):
            return functions.bind_cast(functions.bind_call(Func.NOW, []), types.DATE)
        if isinstance(node, exp.Localtimestamp):
            if node.this is not None:
                raise errors.FeatureNotSupported("LOCALTIMESTAMP with a precision")
            return functions.bind_cast(functions.bind_call(Func.NOW, []), types.TIMESTAMP)
        if isinstance(node, (exp.CurrentTime, exp.Localtime)):  # the statement's, in UTC
            t = types.TIMETZ if isinstance(node, exp.CurrentTime) else types.TIME
            return functions.bind_cast(functions.bind_call(Func.NOW, []), t)
        if isinstance(node, exp.CurrentVersion):
            return ex.Literal(VERSION_TEXT, types.TEXT)
        if isinstance(node, (exp.CurrentSchema, exp.CurrentDatabase, exp.CurrentUser)):
            key = {exp.CurrentSchema: "schema", exp.CurrentDatabase: "database",
                   exp.CurrentUser: "user"}[type(node)]
            default = "public" if key == "schema" else "raympp"
            return ex.Literal(SESSION_INFO.get().get(key, default), types.TEXT)
        if isinstance(node, (exp.Pow,)):
            return functions.bind_call(Func.POWER, [b(node.this), b(node.expression)])
        if isinstance(node, exp.AggFunc) and not isinstance(node, AGGREGATES):
            # Named before its arguments are bound, which could fail first (42803).
            raise errors.FeatureNotSupported(f"aggregate function {pg_name(node)}()")
        if isinstance(node, AGGREGATES):
            raise errors.GroupingError("aggregate functions are not allowed here")
        if isinstance(node, exp.Subquery) and self.subquery is not None:
            return self.subquery(node)
        if isinstance(node, exp.Exists):
            raise errors.FeatureNotSupported(
                "EXISTS other than as a condition AND-ed into WHERE")
        if isinstance(node, (exp.Subquery, exp.Select)):
            raise errors.FeatureNotSupported("subqueries in this position")
        if isinstance(node, exp.Pad):  # lpad / rpad
            f = Func.LPAD if node.args.get("is_left") else Func.RPAD
            return functions.bind_call(f, [b(a) for a in node.iter_expressions()])
        if isinstance(node, exp.Initcap):  # sqlglot adds a default delimiter argument
            return functions.bind_call(Func.INITCAP, [b(node.this)])
        if isinstance(node, exp.Anonymous) or isinstance(node, exp.Func):
            return self._named_function(node)
        raise errors.FeatureNotSupported(f"expression {node.sql(dialect='postgres')!r}")

    # --- pieces ------------------------------------------------------------------------
    def _math_or_datetime(self, node) -> ex.Expr | None:
        """The functions sqlglot parses into nodes of their own: log10 (a Log whose base
        it made up), div (a cast of IntDiv), random (Rand), make_interval,
        make_timestamp (TimestampFromParts), date_bin, make_time (TimeFromParts). None
        for others."""
        b = self.bind
        if isinstance(node, exp.Log) and node.expression is not None \
                and isinstance(node.this, exp.Literal) and not node.this.meta:
            return functions.bind_call(Func.LOG10, [b(node.expression)])  # log10(x)
        if isinstance(node, exp.Log):
            args = [b(node.this)] + ([b(node.expression)] if node.expression else [])
            return functions.bind_call(Func.LOG, args)
        if isinstance(node, exp.Cast) and isinstance(node.this, exp.IntDiv):
            return functions.bind_call(Func.DIV_INT, [b(node.this.this),
                                                      b(node.this.expression)])
        if isinstance(node, exp.Rand):
            return functions.bind_call(Func.RANDOM, [b(a) for a in node.iter_expressions()])
        if isinstance(node, exp.MakeInterval):
            return functions.bind_call(Func.MAKE_INTERVAL,
                                       datetime_rules.bind_make_interval(node, b))
        if isinstance(node, exp.TimestampFromParts):
            return functions.bind_call(Func.MAKE_TIMESTAMP,
                                       [b(a) for a in node.iter_expressions()])
        if isinstance(node, exp.DateBin):
            # sqlglot reads a quoted origin as a unit name (a Var): it is a literal
            origin = node.args.get("unit")
            if isinstance(origin, exp.Var):
                origin = exp.Literal.string(origin.name)
            args = [node.this, node.expression] + ([origin] if origin is not None else [])
            return functions.bind_call(Func.DATE_BIN, [b(a) for a in args])
        if isinstance(node, exp.TimeFromParts):
            raise errors.FeatureNotSupported("function make_time() (the time type)")
        return None

    def _param(self, node) -> ex.Expr:
        text = node.this.this if isinstance(node.this, exp.Literal) else node.name
        try:
            n = int(text)
        except (TypeError, ValueError):
            raise errors.SyntaxError_(f"bad parameter reference {node.sql()}")
        if n < 1:
            raise errors.SyntaxError_(f"there is no parameter ${n}")
        while len(self.params) < n:
            self.params.append(types.UNKNOWN)
        # Only reached while describing a statement: values are substituted into the
        # sqlglot tree before binding for execution (substitute_params).
        return ex.Literal(None, self.params[n - 1])

    def _in(self, node: exp.In) -> ex.Expr:
        if node.args.get("query") is not None:
            raise errors.FeatureNotSupported("IN (subquery) other than as a condition AND-ed "
                                             "into WHERE")
        if isinstance(node.this, exp.Tuple):
            # (a, b) IN ((1, 2), ...): PostgreSQL's row-wise `=` OR-ed over the list
            return self.bind(exp.or_(*[exp.EQ(this=node.this.copy(), expression=v.copy())
                                       for v in node.expressions]))
        arg = self.bind(node.this)
        values = [self.bind(v) for v in node.expressions]
        return functions.bind_in(arg, values, negated=False)

    def _is(self, node: exp.Is) -> ex.Expr:
        negate = bool(node.args.get("negate"))
        if isinstance(node.this, exp.Tuple) and isinstance(node.expression, exp.Null):
            # (a, b) IS NULL: a row constructor
            arg = row_of([(f"f{i + 1}", self.bind(e))
                          for i, e in enumerate(node.this.expressions)])
        else:
            arg = self.bind(node.this)
        if isinstance(node.expression, exp.Null):
            if arg.type.kind is types.Kind.RECORD:
                return _row_is_null(arg, negate)
            return ex.IsNull(arg, negated=negate)
        if isinstance(node.expression, exp.Boolean):
            # x IS TRUE is never NULL: false when x is NULL.
            value = arg if node.expression.this else functions.bind_call(Func.NOT, [arg])
            test = functions.bind_call(Func.COALESCE, [value, ex.Literal(False, types.BOOL)])
            return functions.bind_call(Func.NOT, [test]) if negate else test
        raise errors.FeatureNotSupported(f"IS {node.expression.sql(dialect='postgres')}")

    def _distinct(self, a: ex.Expr, b: ex.Expr, distinct: bool) -> ex.Expr:
        """a IS [NOT] DISTINCT FROM b: equality where NULL equals NULL, never NULL."""
        both = functions.bind_call(Func.AND, [ex.IsNull(a, False), ex.IsNull(b, False)])
        either = functions.bind_call(Func.OR, [ex.IsNull(a, False), ex.IsNull(b, False)])
        same = functions.bind_case(
            [(both, ex.Literal(True, types.BOOL)), (either, ex.Literal(False, types.BOOL))],
            functions.bind_call(Func.EQ, [a, b]))
        return functions.bind_call(Func.NOT, [same]) if distinct else same

    def _like(self, node, negated: bool, escape: exp.Expression | None = None) -> ex.Expr:
        arg = self.bind(node.this)
        pattern = self.bind(node.expression)
        if escape is not None:
            pattern = _with_escape(functions.fold_constants(pattern),
                                   functions.fold_constants(self.bind(escape)))
        return functions.bind_like(arg, pattern, negated=negated,
                                   case_insensitive=isinstance(node, exp.ILike))

    def _quantified(self, node) -> ex.Expr:
        """x op ANY|SOME (ARRAY[a, b, ...]) is (x op a) OR (x op b) ..., ALL the same with
        AND: SQL's three-valued rules of the quantifiers are those of OR and AND."""
        kind, items = _quantifier(node.expression)
        if not items:
            raise errors.FeatureNotSupported("ANY/ALL over an empty array")
        arg = self.bind(node.this)
        func = _BINARY[type(node)]
        parts = [functions.bind_call(func, [arg, self.bind(v)]) for v in items]
        join = Func.OR if kind == "any" else Func.AND
        out = parts[0]
        for p in parts[1:]:
            out = functions.bind_call(join, [out, p])
        return out

    def _whole_row(self, name: str) -> ex.Expr | None:
        """`t` naming no column but a table or alias of the FROM clause: its whole row, a
        record of its visible columns by name (PostgreSQL's whole-row reference), or
        None."""
        try:
            positions = self.scope.star(name)
        except errors.UndefinedTable:
            return None
        cols = [(self.scope.columns[i].name, ex.ColumnRef(i, self.scope.columns[i].type,
                                                          self.scope.columns[i].name))
                for i in positions]
        return row_of(cols)

    def _date_trunc_in(self, field: ex.Literal, x: ex.Expr, zone_node: exp.Expression) -> ex.Expr:
        """date_trunc(field, timestamptz, zone) (timestamptz_trunc_zone): truncated on the
        zone's wall clock with the rules of date_trunc in a session in that zone."""
        x = functions.bind_cast(x, types.TIMESTAMPTZ)
        z = self.bind(zone_node)
        if not isinstance(z, ex.Literal) or not (z.type.is_string or is_unknown(z)):
            if z.type.is_string or is_unknown(z):
                raise errors.FeatureNotSupported("date_trunc() with a zone that is not a constant")
            raise errors.UndefinedFunction(
                f"function date_trunc(unknown, {x.type.base_sql()}, {z.type.base_sql()}) "
                "does not exist")
        zone = None if z.value is None else time_zones.parse_at_zone(z.value)
        out = typing_rules.date_trunc(field, x, None if zone is None or zone.is_utc else zone)
        return ex.Literal(None, types.TIMESTAMPTZ) if z.value is None else out

    def _at_time_zone(self, x: ex.Expr, zone_node: exp.Expression) -> ex.Expr:
        """x AT TIME ZONE zone (and timezone(zone, x)): a timestamptz's wall clock there,
        or the instant of a timestamp's wall clock there."""
        if isinstance(zone_node, exp.Interval) or (
                isinstance(zone_node, exp.Cast) and zone_node.to.is_type("interval")):
            iv = self.bind(zone_node)
            iv = functions.bind_cast(iv, types.INTERVAL)
            if not isinstance(iv, ex.Literal):
                raise errors.FeatureNotSupported("AT TIME ZONE with a zone that is not a constant")
            if iv.value is None:
                return ex.Literal(None, types.TIMESTAMP if x.type.kind is types.Kind.TIMESTAMPTZ
                                  else types.TIMESTAMPTZ)
            v = iv.value
            zone = time_zones.interval_zone(v.months, v.days, v.micros, zone_node.sql("postgres"))
        else:
            z = self.bind(zone_node)
            if not isinstance(z, ex.Literal) or not (z.type.is_string or
                                                    z.type.kind is types.Kind.UNKNOWN):
                if z.type.is_string or z.type.kind is types.Kind.UNKNOWN:
                    raise errors.FeatureNotSupported(
                        "AT TIME ZONE with a zone that is not a constant")
                raise errors.UndefinedFunction(
                    f"function timezone({z.type}, {x.type}) does not exist")
            if z.value is None:
                zone = None
            else:
                zone = time_zones.parse_at_zone(z.value)
        k = x.type.kind
        if k is types.Kind.TIMESTAMP:
            out_type = types.TIMESTAMPTZ
        elif k in (types.Kind.TIMESTAMPTZ, types.Kind.DATE, types.Kind.UNKNOWN) or (
                isinstance(x, ex.Literal) and x.type.is_string):
            x = functions.bind_cast(x, types.TIMESTAMPTZ)
            out_type = types.TIMESTAMP
        else:
            raise errors.FeatureNotSupported(f"AT TIME ZONE of type {x.type}")
        if zone is None:
            return ex.Literal(None, out_type)
        if out_type is types.TIMESTAMPTZ:
            return zone_rules.from_local(x, zone)
        return zone_rules.to_local(x, zone)

    def _case(self, node: exp.Case) -> ex.Expr:
        subject = self.bind(node.this) if node.this is not None else None
        whens = []
        for branch in node.args.get("ifs") or []:
            cond = self.bind(branch.this)
            if subject is not None:
                cond = functions.bind_call(Func.EQ, [subject, cond])
            whens.append((cond, self.bind(branch.args["true"])))
        default = node.args.get("default")
        return functions.bind_case(whens, self.bind(default) if default is not None else None)

    def _named_function(self, node) -> ex.Expr:
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        args = [self.bind(a) for a in node.args.get("expressions") or []] if isinstance(
            node, exp.Anonymous) else [self.bind(a) for a in node.iter_expressions()]
        if isinstance(node, exp.Uuid):  # sqlglot's name for gen_random_uuid()
            name = "gen_random_uuid"
        elif isinstance(node, exp.SHA2Digest):  # sha256(x): (x, 256)
            name, args = f"sha{node.args['length'].name}", args[:1]
        elif isinstance(node, exp.Getbit):  # sqlglot's name for get_bit(x, n)
            name = "get_bit"
        if name in catalog_functions.NAMES:
            return catalog_functions.bind_function(name, node, args)
        if name in sequence_calls.NAMES:
            return sequence_calls.bind(name, args)
        if name in regex_rules.NAMES:
            return regex_rules.bind_function(name, args)
        if name in ("version", "current_schema", "current_database", "current_user",
                    "session_user", "pg_backend_pid"):
            key = {"current_schema": "schema", "current_database": "database",
                   "session_user": "user", "current_user": "user"}.get(name, name)
            if name == "version":
                return ex.Literal(VERSION_TEXT, types.TEXT)
            return ex.Literal(SESSION_INFO.get().get(key, "public" if key == "schema" else "raympp"),
                              types.INT4 if name == "pg_backend_pid" else types.TEXT)
        if name == "timezone" and isinstance(node, exp.Anonymous) and len(args) == 2:
            return self._at_time_zone(args[1], node.expressions[0])
        if name in ("date_part", "datepart"):
            return functions.bind_call(Func.DATE_PART, args)
        if name == "row":  # ROW(a, b): fields f1, f2, ... (an unknown literal is text)
            return row_of([(f"f{i + 1}", a) for i, a in enumerate(args)])
        if name == NAMED_ROW:  # bind_srfs.select_srfs: _pg_expandarray's (x, n) & co.
            row = row_of([(args[k].value, args[k + 1]) for k in range(1, len(args), 2)])
            return functions.bind_case([(ex.IsNull(args[0], negated=True), row)], None)
        if name == "octet_length" and len(args) == 1 and args[0].type.kind is types.Kind.CHAR \
                and args[0].type.length is not None:
            # char(n) values are stored without their trailing pad; PostgreSQL counts it.
            pad = functions.bind_call(Func.SUB, [ex.Literal(args[0].type.length, types.INT4),
                                                 functions.bind_call(Func.LENGTH, args)])
            return functions.bind_call(Func.ADD, [functions.bind_call(Func.OCTET_LENGTH, args), pad])
        if name == "bit_length" and len(args) == 1:  # PostgreSQL's octet_length * 8
            arg = args[0]
            if arg.type.kind is types.Kind.CHAR:  # bit_length(text): char loses its pad
                arg = functions.bind_cast(arg, types.TEXT)
            try:
                octet = functions.bind_call(Func.OCTET_LENGTH, [arg])
            except errors.UndefinedFunction:
                raise no_function("bit_length", args) from None
            return functions.bind_call(Func.MUL, [octet, ex.Literal(8, types.INT4)])
        if name == "pi" and not args:
            return ex.Literal(math.pi, types.FLOAT8)
        if name in ("degrees", "radians") and len(args) == 1:
            # PostgreSQL's degrees/radians are float8_div/float8_mul by RADIANS_PER_DEGREE,
            # with those operators' overflow and underflow errors.
            if not (args[0].type.is_number or args[0].type.kind is types.Kind.UNKNOWN):
                raise undefined_function(node, args)
            x = functions.bind_cast(args[0], types.FLOAT8)
            f = Func.DIV if name == "degrees" else Func.MUL
            return functions.bind_call(f, [x, ex.Literal(RADIANS_PER_DEGREE, types.FLOAT8)])
        if name == "age" and len(args) == 1:
            return _age_from_today(args[0])
        if name == "setseed":
            return math_rules.bind_setseed(args)
        if name in _NAMED:
            return functions.bind_call(_NAMED[name], args)
        if pg_functions.is_builtin(name):
            raise errors.FeatureNotSupported(f"function {pg_name(node)}()")
        raise undefined_function(node, args)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def _text_pattern(e: ex.Expr) -> bool:
    """Whether substring's second argument is text (a pattern): PostgreSQL resolves an
    unknown literal to the text overload too."""
    return e.type.is_string or (isinstance(e, ex.Literal) and e.type.kind is types.Kind.UNKNOWN
                                and e.value is not None)


def _in_order(node: exp.Func) -> list[exp.Expression]:
    """A sqlglot function's arguments in the order written (its arg_types' order)."""
    out = []
    for key in node.arg_types:
        v = node.args.get(key)
        if isinstance(v, list):
            out.extend(v)
        elif isinstance(v, exp.Expression):
            out.append(v)
    return out


def _age_from_today(x: ex.Expr) -> ex.Expr:
    """age(x): age(current_date at midnight, x), as timestamp for a timestamp, else as
    timestamptz (a date too); an unknown literal is 42725, as in PostgreSQL."""
    if is_unknown(x):
        raise datetime_rules.not_unique("age")
    today = functions.bind_cast(functions.bind_call(Func.NOW, []), types.DATE)
    t = types.TIMESTAMP if x.type.kind is types.Kind.TIMESTAMP else types.TIMESTAMPTZ
    return functions.bind_call(Func.AGE, [functions.bind_cast(today, t), x])


def _subquery_predicate(node) -> bool:
    """EXISTS, IN or a comparison with ANY/SOME/ALL, over a subquery."""
    if isinstance(node, exp.Exists) or (isinstance(node, exp.In) and node.args.get("query")):
        return True
    q = node.expression if type(node) in _COMPARISONS else None
    if not isinstance(q, (exp.Any, exp.All)):
        return False
    inner = q.this
    while isinstance(inner, (exp.Paren, exp.Subquery)):
        inner = inner.this
    return isinstance(inner, (exp.Select, exp.Union, exp.Intersect, exp.Except))


def _quantifier(node) -> tuple[str, list] | None:
    """('any' | 'all', the elements) when `node` is ANY/SOME/ALL over ARRAY[...]; None
    when it is no quantifier. Quantifiers over anything else are refused."""
    if isinstance(node, exp.Any):
        kind, inner = "any", node.this
    elif isinstance(node, exp.All):
        kind, inner = "all", node.this
    elif isinstance(node, exp.Anonymous) and node.name.upper() in ("ALL", "ANY", "SOME") \
            and len(node.expressions) == 1:
        kind, inner = ("all" if node.name.upper() == "ALL" else "any"), node.expressions[0]
    else:
        return None
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if not isinstance(inner, exp.Array):
        raise errors.FeatureNotSupported(
            f"{kind.upper()} over {'a subquery' if isinstance(inner, (exp.Subquery, exp.Select)) else 'an array value'} "
            "(only over an ARRAY[...] list)")
    return kind, list(inner.expressions)


def _with_escape(pattern: ex.Expr, escape: ex.Expr) -> ex.Expr:
    """A LIKE pattern with ESCAPE e rewritten to the default escape (backslash)."""
    if not (isinstance(escape, ex.Literal) and isinstance(pattern, ex.Literal)):
        raise errors.FeatureNotSupported("LIKE ... ESCAPE with a pattern or escape that is "
                                         "not a constant")
    if pattern.value is None or escape.value is None:
        return ex.Literal(None, pattern.type)
    esc, p = escape.value, pattern.value
    if len(esc) > 1:
        raise errors.QueryError("invalid escape string", "22025",
                                hint="Escape string must be empty or one character.")
    out, i = [], 0
    while i < len(p):
        c = p[i]
        if esc and c == esc:
            if i + 1 == len(p):
                raise errors.QueryError("LIKE pattern must not end with escape character",
                                        "22025")
            n = p[i + 1]
            out.append("\\" + n if n in "%_\\" else n)
            i += 2
            continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return ex.Literal("".join(out), pattern.type)


def pg_name(node: exp.Expression) -> str:
    """A function call's name as PostgreSQL spells it (the user's, for unknown ones)."""
    if isinstance(node, exp.Anonymous):
        return node.name
    return node.sql(dialect="postgres").split("(", 1)[0].strip().lower() or node.sql_name().lower()


def undefined_function(node: exp.Expression, args: list[ex.Expr]) -> errors.QueryError:
    """42883 naming the function as the user spelled it (sqlglot renames many internally:
    bool_and is LogicalAnd, string_agg GroupConcat) with its argument types, as PostgreSQL."""
    arg_types = [str(a.type) if a.type.kind is not types.Kind.UNKNOWN else "unknown"
                 for a in args]
    text = node.sql(dialect="postgres")
    if isinstance(node, exp.Binary) or (len(args) == 2 and not text.endswith(")")):
        left, right = node.this.sql(dialect="postgres"), node.expression.sql(dialect="postgres")
        if text.startswith(left) and text.endswith(right):
            op = text[len(left):len(text) - len(right)].strip()
            return errors.UndefinedFunction(
                f"operator does not exist: {arg_types[0]} {op} {arg_types[1]}",
                hint="No operator matches the given name and argument types. You might "
                     "need to add explicit type casts.")
    name = pg_name(node)
    arg_types = ", ".join(arg_types)
    return errors.UndefinedFunction(f"function {name}({arg_types}) does not exist",
                                    hint="No function matches the given name and argument "
                                         "types. You might need to add explicit type casts.")


def substitute_params(tree: exp.Expression, values: list, param_types: list) -> exp.Expression:
    """Replace $n placeholders in a sqlglot tree by literals of the client's values.

    Values arrive decoded (see pgwire); a value whose type the client left unspecified is
    text and stays a string literal, which coerces to the type its context needs, as
    PostgreSQL's 'unknown' literals do.
    """
    def replace(node):
        if not isinstance(node, (exp.Parameter, exp.Placeholder)):
            return node
        n = int(node.this.this if isinstance(node.this, exp.Literal) else node.name)
        if n > len(values):
            raise errors.ProtocolViolation(f"there is no parameter ${n}")
        return to_literal(values[n - 1], param_types[n - 1] if n <= len(param_types) else None)
    return tree.transform(replace, copy=True)


def to_literal(value, declared: "types.SqlType | None") -> exp.Expression:
    """A sqlglot literal for a Python value, cast to the declared type when there is one."""
    if value is None:
        lit = exp.Null()
    elif isinstance(value, bool):
        lit = exp.Boolean(this=value)
    elif isinstance(value, (int, float, decimal.Decimal)):
        lit = exp.Literal.number(str(value))
        if isinstance(value, float) or (isinstance(value, decimal.Decimal) and not value.is_finite()):
            lit = exp.Literal.string(repr(value) if isinstance(value, float) else str(value))
            declared = declared or types.FLOAT8
    elif isinstance(value, bytes):  # bytea and uuid parameters: their text form
        lit = exp.Literal.string(
            binary_values.format_uuid(value) if declared is not None
            and declared.kind is types.Kind.UUID else binary_values.format_bytea(value))
    else:
        lit = exp.Literal.string(str(value))
    if declared is None or declared.kind is types.Kind.UNKNOWN:
        return lit
    if declared.is_array:  # `_int4`: sqlglot does not read every `x[]` (oid[]) as a type
        return exp.Cast(this=lit, to=exp.DataType(this=exp.DataType.Type.USERDEFINED,
                                                  kind=exp.to_identifier(
                                                      bind_array.type_name(declared))))
    return exp.Cast(this=lit, to=exp.DataType.build(declared.sql(), dialect="postgres"))


# A function of records in a SELECT list (information_schema._pg_expandarray,
# json(b)_each(_text), json(b)_populate_record(set)) becomes a call of this over its
# columns (bind_srfs.select_srfs): (present, 'name1', value1, 'name2', value2, ...), the
# record of those fields, NULL where `present` is (the function had ended while another
# of the SELECT list went on: NULL, as in PostgreSQL, not a record of NULLs). No user can
# write the name.
NAMED_ROW = "?named_row"


def row_of(named: list[tuple[str, ex.Expr]]) -> ex.Expr:
    """A record of the named values (PostgreSQL's anonymous record)."""
    args = [functions.bind_cast(a, types.TEXT) if a.type.kind is types.Kind.UNKNOWN else a
            for _, a in named]
    t = types.record_of([(n, a.type) for (n, _), a in zip(named, args)])
    return ex.Call(Func.ROW, tuple(args), t)


def _row_is_null(row: ex.Expr, negated: bool) -> ex.Expr:
    """row IS [NOT] NULL: whether every field is NULL (every field is not), PostgreSQL's
    test of a composite value; a NULL row has only NULL fields. A field that is a row
    itself counts as NULL only when it is the null value (not by its fields)."""
    out = None
    for i, (name, t) in enumerate(row.type.fields):
        field = row.args[i] if isinstance(row, ex.Call) and row.func is Func.ROW else \
            ex.Call(Func.FIELD, (row, ex.Literal(name, types.TEXT)), t)
        test = ex.IsNull(field, negated=negated)
        out = test if out is None else functions.bind_call(Func.AND, [out, test])
    # a record of no fields: IS NULL is true (all of none), so is IS NOT NULL
    return out if out is not None else ex.Literal(True, types.BOOL)


def field_of(record: ex.Expr, name: str) -> ex.Expr:
    """(record).name; 42809 on a value that is not a record, 42703 for a field it lacks."""
    t = record.type
    if t.kind is not types.Kind.RECORD:
        raise errors.QueryError(f"column notation .{name} applied to type {t}, which is not "
                                "a composite type", "42809")
    names = [n for n, _ in t.fields]
    if name not in names:
        raise errors.UndefinedColumn(f'could not identify column "{name}" in record data type')
    i = names.index(name)
    if isinstance(record, ex.Call) and record.func is Func.ROW:
        return record.args[i]  # ROW(a, b).f2 is b
    return ex.Call(Func.FIELD, (record, ex.Literal(name, types.TEXT)), t.fields[i][1])

