"""Refuse what the binder would silently drop: every clause and argument of a parsed
statement must be one the binder consumes.

sqlglot parses far more than raympp implements (FETCH ... WITH TIES, FOR UPDATE,
TABLESAMPLE, RETURNING, trim's characters, ...). The binder reads a node's arguments by
name, so anything it does not read would vanish from the statement without an error and
the answer would differ from PostgreSQL's. `check` walks the whole tree before anything
is planned or written and raises FeatureNotSupported (0A000), naming the clause as SQL,
for every argument that is set but not in `CONSUMED` for its node type.

`CONSUMED` is the binder's contract, kept next to it: when the binder learns to read a
new argument, add the argument here in the same change (and a test that uses it). A node
type that is not listed is checked by `_default_consumed`: functions the binder passes
positionally (`bind_expr._named_function`) consume every argument; other unlisted types
are ones the binder refuses by type, so their arguments need no check.
"""

from __future__ import annotations

from sqlglot import exp

from planner import bitwise_aggregates, errors, json_rules, regex_rules, regression_aggregates

_QUERY_MODIFIERS = {"with_", "where", "group", "having", "order", "limit", "offset"}

# node type -> the arguments the binder reads. Arguments sqlglot fills in by itself as
# annotations of the parse (not from anything the user wrote that changes the meaning)
# are listed too, with a comment.
CONSUMED: dict[type, frozenset[str]] = {k: frozenset(v) for k, v in {
    # --- queries
    exp.Select: _QUERY_MODIFIERS | {"expressions", "distinct", "from_", "joins", "windows"},
    exp.Union: _QUERY_MODIFIERS | {"this", "expression", "distinct"},
    exp.Intersect: _QUERY_MODIFIERS | {"this", "expression", "distinct"},
    exp.Except: _QUERY_MODIFIERS | {"this", "expression", "distinct"},
    exp.Subquery: {"this", "alias", "order", "limit", "offset", "with_"},
    exp.Values: {"expressions", "alias", "order", "limit", "offset"},
    exp.Tuple: {"expressions"},
    exp.AtTimeZone: {"this", "zone"},
    exp.With: {"expressions", "recursive"},
    exp.CTE: {"this", "alias"},
    exp.From: {"this"},
    exp.Where: {"this"},
    exp.Having: {"this"},
    exp.Group: {"expressions"},
    exp.Order: {"expressions"},
    exp.Ordered: {"this", "desc", "nulls_first"},
    exp.Limit: {"expression"},
    exp.Offset: {"expression"},
    exp.Fetch: {"direction", "count", "limit_options"},
    exp.LimitOptions: {"rows", "with_ties"},
    exp.Distinct: {"expressions", "on"},
    exp.Join: {"this", "on", "side", "kind", "using", "method"},
    exp.Table: {"this", "alias", "db", "catalog", "only"},  # no inheritance: ONLY t is t
    exp.TableAlias: {"this", "columns"},
    exp.Alias: {"this", "alias"},
    exp.Column: {"this", "table", "db"},  # schema.table.column (bind_expr checks the schema)
    exp.Star: set(),
    # --- window functions (planner/bind_window.py); `over` is the OVER keyword itself
    exp.Window: {"this", "partition_by", "order", "spec", "alias", "over"},
    exp.WindowSpec: {"kind", "start", "start_side", "end", "end_side", "exclude"},
    exp.Identifier: {"this", "quoted"},
    # --- statements
    exp.Insert: {"this", "expression", "with_", "returning", "conflict", "default"},  # coordinator/load.py, merge.py
    exp.Returning: {"expressions"},
    exp.Schema: {"this", "expressions"},
    exp.Create: {"this", "kind", "expression", "exists", "properties"},
    exp.Properties: {"expressions"},
    # UNLOGGED: our tables are always durable, a superset of what it asks for. TEMP is
    # refused by the DDL code with its own message.
    exp.UnloggedProperty: set(),
    exp.TemporaryProperty: {"this"},
    exp.WithDataProperty: set(),   # WITH DATA; WITH NO DATA sets `no` and is refused
    # Nothing depends on a table (no views, foreign keys or sequences yet), so CASCADE,
    # RESTRICT and RESTART IDENTITY change nothing.
    exp.Drop: {"kind", "this", "tables", "exists", "cascade", "restrict"},
    exp.TruncateTable: {"expressions", "only", "identity", "option"},
    # --- scalar expressions
    exp.Paren: {"this"},
    exp.Collate: {"this", "expression"},
    exp.Escape: {"this", "expression"},
    exp.Any: {"this"},
    exp.All: {"this"},
    exp.Array: {"expressions"},
    exp.Bracket: {"this", "expressions"},   # a[i], a[i:j] (planner/bind_array.py)
    exp.Slice: {"this", "expression"},
    exp.Literal: {"this", "is_string"},
    exp.Boolean: {"this"},
    exp.Null: set(),
    exp.Cast: {"this", "to"},
    exp.DataType: {"this", "expressions", "nested", "kind"},
    exp.DataTypeParam: {"this"},
    exp.Between: {"this", "low", "high", "symmetric"},
    exp.In: {"this", "expressions", "query"},
    exp.Like: {"this", "expression", "negate"},
    exp.ILike: {"this", "expression", "negate"},
    exp.Is: {"this", "expression", "negate"},
    exp.Case: {"this", "ifs", "default"},
    exp.If: {"this", "true", "false"},
    exp.Coalesce: {"this", "expressions"},
    exp.Nullif: {"this", "expression"},
    exp.Greatest: {"this", "expressions", "ignore_nulls"},  # PostgreSQL's greatest ignores NULLs
    exp.Least: {"this", "expressions", "ignore_nulls"},
    exp.Extract: {"this", "expression"},
    exp.DateTrunc: {"unit", "this"},
    exp.TimestampTrunc: {"this", "unit", "zone"},
    exp.Substring: {"this", "start", "length"},
    exp.StrPosition: {"this", "substr"},
    exp.Trim: {"this", "expression", "position"},
    exp.Round: {"this", "decimals"},
    # single_replace: sqlglot's note of PostgreSQL's first-match-only default.
    exp.RegexpReplace: {"this", "expression", "replacement", "position", "occurrence",
                        "modifiers", "single_replace"},
    exp.Left: {"this", "expression"},
    exp.Right: {"this", "expression"},
    exp.Interval: {"this", "unit", "fraction_in_string"},
    exp.Pow: {"this", "expression"},
    exp.Exists: {"this"},
    exp.Anonymous: {"this", "expressions"},
    exp.ExplodingGenerateSeries: {"start", "end", "step"},
    exp.Lateral: {"this", "alias"},  # bind_lateral.py, bind_lateral_subquery.py
    exp.Count: {"this", "big_int"},          # big_int: sqlglot's note that count is int8
    exp.Sum: {"this"},
    exp.GroupConcat: {"this", "separator"},
    exp.Filter: {"this", "expression"},       # planner/ordered_aggregates.py
    exp.WithinGroup: {"this", "expression"},
    exp.PercentileCont: {"this"},
    exp.PercentileDisc: {"this"},  # string_agg (planner/string_aggregates.py)
    # hypothetical-set aggregates (planner/hypothetical_aggregates.py); as window functions
    # their arguments are 42883 (planner/bind_window.py)
    exp.Rank: {"expressions"},
    exp.DenseRank: {"expressions"},
    exp.PercentRank: {"expressions"},
    exp.CumeDist: {"expressions"},
    # planner/regression_aggregates.py, planner/bitwise_aggregates.py
    **{node: {"this", "expression"} for node in regression_aggregates.NODES},
    **{node: {"this"} for node in bitwise_aggregates.NODES},
    exp.Avg: {"this"},
    exp.Min: {"this"},
    exp.Max: {"this"},
    exp.CurrentTimestamp: set(),
    exp.CurrentDate: set(),
    exp.CurrentTime: set(),  # current_time(p), localtime(p): the precision is refused
    exp.Localtime: set(),
    exp.Div: {"this", "expression", "typed", "safe"},  # typed/safe: dialect annotations
    exp.DPipe: {"this", "expression", "safe"},
    exp.Placeholder: {"this"},
    exp.Parameter: {"this"},
    # --- the system catalog's idioms (planner/catalog_functions.py)
    exp.Operator: {"this", "operator", "expression"},   # OPERATOR(pg_catalog.~)
    exp.RegexpLike: {"this", "expression", "flag"},      # ~; regexp_like(s, p, flags)
    exp.RegexpILike: {"this", "expression"},             # ~*
    exp.Dot: {"this", "expression"},                     # pg_catalog.f(...)
    exp.ObjectIdentifier: {"this"},                      # ::oid, ::regclass
}.items()}

# Single-argument and two-argument operators and functions the binder maps by type.
_UNARY = (exp.Not, exp.Neg, exp.Lower, exp.Upper, exp.Abs, exp.Sqrt, exp.Ln, exp.Exp)
_BINARY = (exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT,
           exp.GTE, exp.And, exp.Or, exp.NullSafeEQ, exp.NullSafeNEQ)
for _t in _UNARY:
    CONSUMED[_t] = frozenset({"this"})
for _t in _BINARY:
    CONSUMED[_t] = frozenset({"this", "expression"})
CONSUMED[exp.Length] = frozenset({"this"})
CONSUMED[exp.Floor] = frozenset({"this"})
CONSUMED[exp.Ceil] = frozenset({"this"})

# How to name an argument in the error, as the SQL the user wrote.
_CLAUSE_NAMES: dict[tuple[type, str], str] = {
    (exp.Select, "windows"): "WINDOW clause",
    (exp.Select, "locks"): "FOR UPDATE/FOR SHARE",
    (exp.Select, "into"): "SELECT INTO",
    (exp.Select, "laterals"): "LATERAL",
    (exp.Select, "qualify"): "QUALIFY",
    (exp.Select, "sample"): "TABLESAMPLE",
    (exp.Table, "sample"): "TABLESAMPLE",
    (exp.Table, "only"): "ONLY",
    (exp.Table, "ordinality"): "WITH ORDINALITY",
    (exp.Table, "rows_from"): "ROWS FROM",
    (exp.Table, "joins"): "parenthesized joins",
    (exp.Table, "laterals"): "LATERAL",
    (exp.Table, "pivots"): "PIVOT",
    (exp.Join, "method"): "join method",
    (exp.Insert, "returning"): "RETURNING",
    (exp.Insert, "overwrite"): "INSERT OVERWRITE",
    (exp.Insert, "alternative"): "INSERT OR ...",
    (exp.Insert, "where"): "INSERT ... WHERE",
    (exp.With, "search"): "WITH ... SEARCH",
    (exp.With, "cycle"): "WITH ... CYCLE",
    (exp.CTE, "materialized"): "WITH ... AS [NOT] MATERIALIZED",
    (exp.Ordered, "with_fill"): "WITH FILL",
    (exp.Group, "grouping_sets"): "GROUPING SETS",
    (exp.Group, "cube"): "CUBE",
    (exp.Group, "rollup"): "ROLLUP",
    (exp.Group, "all"): "GROUP BY ALL",
    (exp.Group, "totals"): "WITH TOTALS",
    (exp.LimitOptions, "percent"): "FETCH FIRST ... PERCENT",
    (exp.LimitOptions, "with_ties"): "FETCH FIRST ... WITH TIES",
    (exp.Limit, "limit_options"): "FETCH FIRST ... WITH TIES",
    (exp.Column, "db"): "column references qualified by a schema",
    (exp.Column, "catalog"): "column references qualified by a database",
    (exp.Trim, "collation"): "trim(... COLLATE ...)",
    (exp.Drop, "cascade"): "DROP ... CASCADE",
    (exp.Drop, "materialized"): "DROP MATERIALIZED",
    (exp.Drop, "concurrently"): "DROP ... CONCURRENTLY",
    (exp.Cast, "format"): "CAST ... FORMAT",
    (exp.DataType, "values"): "type arguments",
    (exp.Subquery, "pivots"): "PIVOT",
    (exp.WithDataProperty, "no"): "CREATE TABLE AS ... WITH NO DATA",
    (exp.Order, "this"): "ORDER BY inside an aggregate's arguments",
    (exp.Window, "first"): "KEEP (DENSE_RANK FIRST/LAST)",
}


# Constructs refused wherever they appear, named as SQL (the binder would refuse most of
# them too, but under a less helpful name).
REFUSED: dict[type, str] = {}


def _default_consumed(node: exp.Expression) -> frozenset[str] | None:
    """Unlisted functions are bound with all their arguments (bind_expr._named_function);
    other unlisted types are refused by the binder as a whole (None: nothing to check)."""
    if isinstance(node, exp.Func):
        return frozenset(node.arg_types)
    return None


def _is_set(value) -> bool:
    return value is not None and value is not False and value != [] and value != ""


def _describe(node: exp.Expression, key: str) -> str:
    name = _CLAUSE_NAMES.get((type(node), key))
    if name is not None:
        return name
    value = node.args[key]
    values = value if isinstance(value, list) else [value]
    text = ", ".join(v.sql(dialect="postgres") if isinstance(v, exp.Expression) else str(v)
                     for v in values)
    what = type(node).__name__.upper() if not isinstance(node, exp.Func) else (
        node.sql(dialect="postgres").split("(", 1)[0] + "()")
    return f"{key.replace('_', ' ').strip().upper()} {text!s} in {what}"[:200]


def _modify_item(node: exp.Expression) -> bool:
    """Whether `node` is an item of DELETE's USING or UPDATE's FROM, whose further items
    and joins sqlglot hangs on it (planner/modify.py joins them to the target)."""
    parent = node.parent
    if isinstance(parent, exp.From):
        parent = parent.parent if isinstance(parent.parent, exp.Update) else None
    return isinstance(node, (exp.Table, exp.Subquery)) and isinstance(
        parent, (exp.Delete, exp.Update))


def check(tree: exp.Expression) -> None:
    """Raise FeatureNotSupported for the first argument anywhere in `tree` that the binder
    would not consume."""
    for node in tree.walk():
        if type(node) in REFUSED:
            raise errors.FeatureNotSupported(f"{REFUSED[type(node)]} is not supported")
        if isinstance(node, exp.Property) and type(node) not in CONSUMED:
            raise errors.FeatureNotSupported(
                f"table option {node.sql(dialect='postgres')!r} is not supported")
        allowed = CONSUMED.get(type(node))
        if allowed is None:
            allowed = _default_consumed(node)
            if allowed is None:
                continue
        for key, value in node.args.items():
            if isinstance(node, exp.Order) and key == "this" and isinstance(
                    node.parent, (exp.ArrayAgg, exp.GroupConcat, exp.JSONArrayAgg,
                                  exp.JSONObjectAgg, exp.JSONBObjectAgg)):
                continue  # array_agg / string_agg / json_agg (x ORDER BY ...): the binder reads it
            if key == "ordinality" and isinstance(node, (exp.Table, exp.Lateral)) and isinstance(
                    node.this, exp.Anonymous) and node.this.name.lower() in (
                        json_rules.FROM_SRFS + regex_rules.SRFS):
                continue  # jsonb_array_elements(j) WITH ORDINALITY (planner/bind_lateral.py)
            if key == "joins" and _modify_item(node):
                continue  # DELETE ... USING a, b / UPDATE ... FROM a JOIN b (planner/modify.py)
            if key not in allowed and _is_set(value):
                raise errors.FeatureNotSupported(f"{_describe(node, key)} is not supported")
