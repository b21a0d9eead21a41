"""The functions, casts and operators clients use on the system catalog.

- Types: oid, the reg* types, name and "char" and the catalog's arrays are catalog_types'
  (casts, comparisons); the names they print and read are catalog_names'; type names in
  SQL type_names'.
- Functions: `bind_function` binds format_type(), pg_typeof(), pg_get_userbyid(),
  pg_table_is_visible(), current_setting(), set_config(), has_*_privilege(), ... Values
  known at bind time are constants; the others are `expr.RowCall`s computed row by row
  by row_functions' `IMPLEMENTATIONS`, reading the oid/name pairs of the catalog as the
  statement was bound (`RowData`).
- Regular expressions: `~`, `~*`, `!~`, `!~*` and OPERATOR(pg_catalog.~), bound by
  regex_rules (PostgreSQL's ARE as planner/pg_regex.py translates it).
"""

from __future__ import annotations

from sqlglot import exp

from planner import catalog_names as cn
from planner import catalog_types, errors, regex_rules, types
from planner import expr as ex
from planner import schema as sch
from planner import system_tables as st
from planner.coercion import coerce, no_function
from planner.row_functions import call_row, data
from planner.session_info import catalog_context
from planner.types import Kind, SqlType
from planner.values import parse_text

_INTS = types.INTEGER_KINDS


# --- functions ----------------------------------------------------------------------------
def _oid_arg(e: ex.Expr, fname: str, args) -> ex.Expr:
    if e.type.kind is Kind.OID:
        return e
    if e.type.kind in _INTS or e.type.kind in types.REG_KINDS or e.type.kind is Kind.UNKNOWN \
            or (isinstance(e, ex.Literal) and e.type.is_string):
        return catalog_types.convert(e, types.OID)
    raise no_function(fname, args)


def _regclass_arg(e: ex.Expr, fname: str, args) -> ex.Expr:
    """An argument of type regclass: a literal is a relation's name (42P01 if none)."""
    if e.type.kind is Kind.UNKNOWN or (isinstance(e, ex.Literal) and e.type.is_string):
        e = catalog_types.convert(e, types.REGCLASS)
    return _oid_arg(e, fname, args)


def _text_arg(e: ex.Expr, fname: str, args) -> ex.Expr:
    if e.type.is_string or e.type.kind is Kind.UNKNOWN:
        return e if e.type.kind is not Kind.UNKNOWN else ex.Literal(e.value, types.TEXT)
    raise no_function(fname, args)


def _int_arg(e: ex.Expr, fname: str, args) -> ex.Expr:
    if e.type.is_integer:
        return e
    if e.type.kind is Kind.UNKNOWN or (isinstance(e, ex.Literal) and e.type.is_string):
        return coerce(ex.Literal(e.value, types.TEXT) if e.value is not None else e, types.INT4)
    raise no_function(fname, args)


def _const_text(e: ex.Expr, what: str) -> str | None:
    if not isinstance(e, ex.Literal):
        raise errors.FeatureNotSupported(f"{what} with an argument that is not a constant")
    return e.value


def _bool_const(e: ex.Expr, what: str) -> bool | None:
    if not isinstance(e, ex.Literal):
        raise errors.FeatureNotSupported(f"{what} with an argument that is not a constant")
    v = e.value
    if isinstance(v, str):
        v = parse_text(v, types.BOOL)
    return v


def _collation_rows() -> list[tuple]:
    return st.static_rows(st.RELATIONS[(sch.PG_CATALOG, "pg_collation")])


_PG_CLASS = 1259  # pg_description.classoid of relations and their columns


def _row(name: str, args, t: SqlType, data: ex.RowData | None = None) -> ex.Expr:
    call = ex.RowCall(name, tuple(args), t, data)
    if all(isinstance(a, ex.Literal) for a in args):
        return ex.Literal(call_row(call, [a.value for a in args]), t)
    return call


_ARITY = {
    "format_type": (2,), "pg_typeof": (1,), "pg_get_userbyid": (1,),
    "pg_table_is_visible": (1,), "pg_type_is_visible": (1,), "pg_function_is_visible": (1,),
    "pg_collation_is_visible": (1,),
    "obj_description": (1, 2), "col_description": (2,), "shobj_description": (2,),
    "has_table_privilege": (2, 3), "has_schema_privilege": (2, 3),
    "has_database_privilege": (2, 3), "has_column_privilege": (3, 4),
    "has_function_privilege": (2, 3), "has_any_column_privilege": (2, 3),
    "current_setting": (1, 2), "set_config": (3,), "current_schemas": (1,),
    "pg_postmaster_start_time": (0,), "pg_encoding_to_char": (1,), "pg_char_to_encoding": (1,),
    "pg_get_expr": (2, 3), "pg_get_indexdef": (1, 3), "pg_get_constraintdef": (1, 2),
    "pg_get_viewdef": (1, 2), "pg_get_ruledef": (1, 2), "pg_get_triggerdef": (1, 2), "pg_get_partkeydef": (1,),
    "pg_get_statisticsobjdef_columns": (1,), "pg_get_function_result": (1,),
    "pg_get_function_arguments": (1,), "pg_relation_is_publishable": (1,),
    "to_regclass": (1,), "to_regtype": (1,), "to_regnamespace": (1,), "to_regrole": (1,),
    "pg_my_temp_schema": (0,), "pg_is_other_temp_schema": (1,), "array_to_string": (2, 3),
    "pg_get_serial_sequence": (2,), "quote_ident": (1,),
    "pg_table_size": (1,), "pg_relation_size": (1,), "pg_total_relation_size": (1,),
    "pg_indexes_size": (1,), "pg_size_pretty": (1,),
}
NAMES = frozenset(_ARITY)


def bind_function(name: str, node: exp.Expression, args: list[ex.Expr]) -> ex.Expr | None:
    """A call of one of the catalog functions, or None when `name` is none of them."""
    if name not in _ARITY:
        return None
    if len(args) not in _ARITY[name]:
        raise no_function(name, args)
    text, boolean = types.TEXT, types.BOOL
    if name == "format_type":
        return _row("format_type", [_oid_arg(args[0], name, args), _int_arg(args[1], name, args)],
                    text)
    if name == "pg_typeof":
        raw = node.expressions[0] if isinstance(node, exp.Anonymous) else None
        if isinstance(raw, (exp.Literal, exp.Null)) and (isinstance(raw, exp.Null) or raw.is_string):
            return ex.Literal("unknown", types.REGTYPE)
        t = args[0].type
        return ex.Literal(cn.REGTYPE_NAMES.get(t.oid, t.kind.value), types.REGTYPE)
    if name == "pg_get_userbyid":
        return _row("userbyid", [_oid_arg(args[0], name, args)], types.NAME,
                    data(cn.role_names().items()))
    if name == "pg_table_is_visible":
        visible = cn.visible_relations()
        pairs = [(oid, oid in visible) for oid, _n, _s in cn.relations()]
        return _row("visible", [_oid_arg(args[0], name, args)], boolean, data(pairs))
    if name == "pg_type_is_visible":
        return _row("visible", [_oid_arg(args[0], name, args)], boolean,
                    data((oid, True) for oid in cn.REGTYPE_NAMES))
    if name == "pg_function_is_visible":
        return _row("visible", [_oid_arg(args[0], name, args)], boolean,
                    data((oid, True) for oid in cn.PROC_NAMES))
    if name == "pg_collation_is_visible":
        # pg_collation's rows (default, C, POSIX) are all in pg_catalog.
        return _row("visible", [_oid_arg(args[0], name, args)], boolean,
                    data((int(r[0]), True) for r in _collation_rows()))
    if name == "shobj_description":
        # pg_shdescription is empty: databases and roles have no comment here.
        _oid_arg(args[0], name, args)
        _text_arg(args[1], name, args)
        return ex.Literal(None, text)
    if name in ("obj_description", "col_description"):
        # COMMENT ON's comments (pg_description, coordinator/system_catalog.py).
        ctx = catalog_context()
        found = getattr(ctx, "descriptions", lambda: [])() if ctx is not None else []
        target = _oid_arg(args[0], name, args)
        if name == "col_description":
            return _row("pair_lookup", [target, _int_arg(args[1], name, args)], text,
                        data(((o, n), d) for c, o, n, d in found if c == _PG_CLASS))
        if len(args) == 1:  # the deprecated form: any catalog's object
            return _row("lookup", [target], text,
                        data((o, d) for _c, o, n, d in found if n == 0))
        # PostgreSQL's SQL body reads pg_class WHERE relname = $2 in pg_catalog: a name
        # of no catalog there (or qualified) finds nothing.
        catalog = st.RELATIONS.get((sch.PG_CATALOG, _const_text(
            _text_arg(args[1], name, args), name)))
        if catalog is None:
            return ex.Literal(None, text)
        classoid = catalog.oid
        return _row("lookup", [target], text,
                    data((o, d) for c, o, n, d in found if n == 0 and c == classoid))
    if name.startswith("has_") and name.endswith("_privilege"):
        # Every role has every privilege (no GRANT/REVOKE); a named table must exist.
        if name == "has_table_privilege":
            target = args[-2]
            if isinstance(target, ex.Literal) and isinstance(target.value, str) and \
                    target.type.kind is not Kind.OID:
                cn.reg_oid(Kind.REGCLASS, target.value)
        return ex.Literal(True, boolean)
    if name == "current_setting":
        setting = _const_text(args[0], "current_setting")
        missing_ok = _bool_const(args[1], "current_setting") if len(args) > 1 else False
        ctx = catalog_context()
        if setting is None:
            return ex.Literal(None, text)
        value = ctx.setting(setting, bool(missing_ok)) if ctx is not None else None
        return ex.Literal(value, text)
    if name == "set_config":
        setting = _const_text(args[0], "set_config")
        value = _const_text(args[1], "set_config")
        is_local = _bool_const(args[2], "set_config")
        ctx = catalog_context()
        if setting is None:
            raise errors.QueryError("SET requires parameter name", "22023")
        if ctx is None:
            raise errors.FeatureNotSupported("set_config outside a session")
        return ex.Literal(ctx.set_setting(setting, value, bool(is_local)), text)
    if name == "current_schemas":
        implicit = _bool_const(args[0], "current_schemas")
        path = cn.search_path()
        explicit = [s for s in path if s != sch.PG_CATALOG] if not implicit else path
        ctx = catalog_context()
        listed = ctx.explicit_path() if ctx is not None and not implicit else explicit
        return ex.Literal(tuple(listed), types.array_of(types.NAME))
    if name == "pg_postmaster_start_time":
        ctx = catalog_context()
        return ex.Literal(ctx.start_time() if ctx is not None else None, types.TIMESTAMPTZ)
    if name == "pg_encoding_to_char":
        return _row("encoding_to_char", [_int_arg(args[0], name, args)], types.NAME)
    if name == "pg_char_to_encoding":
        return _row("char_to_encoding", [_text_arg(args[0], name, args)], types.INT4)
    if name == "pg_get_expr":
        tree = args[0]
        if not (tree.type.is_string or tree.type.kind is Kind.UNKNOWN):
            raise no_function(name, args)
        pretty = len(args) > 2 and bool(_bool_const(args[2], name))
        return _row("get_expr_pretty" if pretty else "get_expr", [tree] + args[1:2], text)
    if name == "pg_get_viewdef":
        # The user's views: their definition (the query as sqlglot normalises it, in one
        # form whatever the pretty / wrap argument asks). The system views are computed
        # by raympp and have no definition to show, which is refused rather than given as
        # NULL (SQLAlchemy's get_view_definition would call an existing view missing).
        ctx = catalog_context()
        views = [(r.oid, ("system", r.qualified)) for r in st.RELATIONS.values()
                 if r.relkind == "v"]
        views += [(oid, ("user", d)) for oid, d in (ctx.view_definitions() if ctx else [])]
        if len(args) == 2 and not (args[1].type.kind in (Kind.BOOL, Kind.UNKNOWN)
                                   or args[1].type.is_integer):
            raise no_function(name, args)
        target = args[0]
        if target.type.kind is Kind.UNKNOWN or target.type.is_string:
            # pg_get_viewdef(text): the view's name, as PostgreSQL's text variant reads it
            target = catalog_types.convert(target, types.REGCLASS)
        return _row("viewdef", [_oid_arg(target, name, args)], text, data(views))
    if name == "pg_get_ruledef":
        # pg_rewrite is empty (views are not rules here): NULL, as for an unknown oid.
        _oid_arg(args[0], name, args)
        return ex.Literal(None, text)
    if name == "pg_get_constraintdef":
        # CHECK, PRIMARY KEY and UNIQUE constraints (coordinator/system_catalog.py): by
        # oid, the definition or (pretty) its form with the parentheses precedence needs.
        pretty = len(args) > 1 and bool(_bool_const(args[1], name))
        ctx = catalog_context()
        defs = getattr(ctx, "constraint_defs", lambda: [])() if ctx is not None else []
        return _row("lookup", [_oid_arg(args[0], name, args)], text,
                    data((oid, shown if pretty else plain) for oid, plain, shown in defs))
    if name == "pg_get_indexdef":
        # The indexes of keys and of CREATE INDEX (coordinator/index_catalog.py); pretty,
        # the table is named as regclass names it.
        ctx = catalog_context()
        defs = getattr(ctx, "index_defs", lambda: [])() if ctx is not None else []
        pretty = len(args) > 2 and bool(_bool_const(args[2], name))
        pairs = [((oid, 0), shown if pretty else full) for oid, full, shown, _cols in defs] + [
            ((oid, k), col) for oid, _full, _shown, cols in defs for k, col in cols]
        column = _int_arg(args[1], name, args) if len(args) > 1 else ex.Literal(0, types.INT4)
        return _row("indexdef", [_oid_arg(args[0], name, args), column], text, data(pairs))
    if name in ("pg_get_triggerdef", "pg_get_partkeydef", "pg_get_statisticsobjdef_columns"):
        # There are no triggers, partitioned tables or extended statistics to describe:
        # PostgreSQL gives NULL for an unknown oid.
        _oid_arg(args[0], name, args)
        return ex.Literal(None, text)
    if name in ("pg_table_size", "pg_relation_size", "pg_total_relation_size"):
        # A table's chunk files (it has no TOAST, free space map or index besides).
        ctx = catalog_context()
        sizes = getattr(ctx, "relation_sizes", lambda: [])() if ctx is not None else []
        return _row("lookup", [_regclass_arg(args[0], name, args)], types.INT8, data(sizes))
    if name == "pg_indexes_size":
        # No index has a structure to measure (coordinator/index_catalog.py).
        known = [(oid, 0) for oid, _s, _n in cn.relations()]
        return _row("lookup", [_regclass_arg(args[0], name, args)], types.INT8, data(known))
    if name == "pg_size_pretty":
        size = args[0]
        if size.type.kind is Kind.UNKNOWN or (isinstance(size, ex.Literal) and size.type.is_string):
            size = _int_arg(size, name, args)
        if not size.type.is_integer:
            raise no_function(name, args)
        return _row("size_pretty", [coerce(size, types.INT8)], text)
    if name == "pg_get_serial_sequence":
        ctx = catalog_context()
        owned = getattr(ctx, "serial_sequences", lambda: [])() if ctx is not None else []
        table, column = (_text_arg(a, name, args) for a in args)
        return _row("serial_sequence", [table, column], text, data(owned))
    if name == "pg_get_function_result":
        return _row("function_result", [_oid_arg(args[0], name, args)], text)
    if name == "pg_get_function_arguments":
        return _row("function_arguments", [_oid_arg(args[0], name, args)], text)
    if name == "pg_relation_is_publishable":
        _oid_arg(args[0], name, args)
        return ex.Literal(False, boolean)
    if name.startswith("to_reg"):
        kind = {"to_regclass": Kind.REGCLASS, "to_regtype": Kind.REGTYPE,
                "to_regnamespace": Kind.REGNAMESPACE, "to_regrole": Kind.REGROLE}[name]
        value = _const_text(_text_arg(args[0], name, args), name)
        if value is None:
            return ex.Literal(None, SqlType(kind))
        try:
            oid = cn.reg_oid(kind, value)
        except (errors.UndefinedTable, errors.UndefinedObject, errors.UndefinedFunction):
            return ex.Literal(None, SqlType(kind))
        except errors.QueryError as err:
            if err.sqlstate != "3F000":
                raise
            return ex.Literal(None, SqlType(kind))
        return ex.Literal(cn.reg_names(kind).get(oid, str(oid)), SqlType(kind))
    if name == "pg_my_temp_schema":
        return ex.Literal(0, types.OID)
    if name == "pg_is_other_temp_schema":
        _oid_arg(args[0], name, args)
        return ex.Literal(False, boolean)
    if name == "array_to_string":
        if args[0].type.kind not in types.ARRAY_KINDS and args[0].type.kind is not Kind.UNKNOWN:
            raise no_function(name, args)
        rest = [_text_arg(a, name, args) for a in args[1:]]
        return _row("array_to_string", [args[0]] + rest, text)
    if name == "quote_ident":
        return _row("quote_ident", [_text_arg(args[0], name, args)], text)
    return None


# --- regular expressions ------------------------------------------------------------------
_OPERATORS = ("~", "~*", "!~", "!~*")


def bind_regex(node: exp.Expression, bind) -> ex.Expr:
    """s ~ pattern (RegexpLike; with a flag regexp_like(s, p, flags)), ~* (RegexpILike),
    their negations and OPERATOR(pg_catalog.op)."""
    if isinstance(node, exp.Operator):
        op = str(node.args.get("operator") or "").replace(" ", "")
        op = op[len("pg_catalog."):] if op.startswith("pg_catalog.") else op
        if op not in _OPERATORS:
            return _operator_call(op, node, bind)
    elif node.args.get("flag") is not None:
        args = [bind(node.this), bind(node.expression), bind(node.args["flag"])]
        return regex_rules.bind_function("regexp_like", args)
    else:
        op = "~*" if isinstance(node, exp.RegexpILike) else "~"
    return regex_rules.bind_operator(op, bind(node.this), bind(node.expression))


def _operator_call(op: str, node, bind) -> ex.Expr:
    """OPERATOR(pg_catalog.op) for the ordinary operators: as if written bare."""
    cls = {"=": exp.EQ, "<>": exp.NEQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE,
           ">": exp.GT, ">=": exp.GTE, "+": exp.Add, "-": exp.Sub, "*": exp.Mul,
           "/": exp.Div, "||": exp.DPipe, "~~": exp.Like}.get(op)
    if cls is None:
        raise errors.FeatureNotSupported(f"OPERATOR(pg_catalog.{op})")
    return bind(cls(this=node.this, expression=node.expression))


def cast_output_name(to) -> str | None:
    """The column name PostgreSQL gives `expr::type` when expr is no column: the type's."""
    if isinstance(to, exp.ObjectIdentifier):
        return str(to.this).lower()
    if isinstance(to, exp.DataType) and to.this == exp.DataType.Type.USERDEFINED:
        kind = to.args.get("kind")
        kind = kind.expression if isinstance(kind, exp.Dot) else kind
        return kind.name if isinstance(kind, exp.Identifier) else None
    if isinstance(to, exp.DataType) and to.this == exp.DataType.Type.NAME:
        return "name"
    return None
