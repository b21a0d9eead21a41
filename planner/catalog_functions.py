"""The functions, casts and operators clients use on the system catalog.

- Types: oid (an integer, compared with integers), the reg* types (regclass, regtype,
  regproc, regnamespace, regrole) that print as a name and compare as their oid, name and
  "char" (strings), and the catalog's arrays and vectors, held as their text form.
  `convert` is every cast and implicit conversion from or to one of them; `cast_type`
  reads the type of a `::` cast that sqlglot leaves as an ObjectIdentifier or a
  user-defined (pg_catalog.x) type.
- Functions: `bind_function` binds format_type(), pg_typeof(), pg_get_userbyid(),
  pg_table_is_visible(), current_setting(), set_config(), has_*_privilege(), ... Values
  known at bind time are constants; the others are `expr.RowCall`s computed row by row
  by `IMPLEMENTATIONS`, reading the oid/name pairs of the catalog as the statement was
  bound (`RowData`).
- Regular expressions: `~`, `~*`, `!~`, `!~*` and OPERATOR(pg_catalog.~) with Python's
  `re`, refusing (0A000) the constructs whose meaning differs from PostgreSQL's ARE.
"""

from __future__ import annotations

import re

from sqlglot import exp

from planner import errors, functions, types
from planner import expr as ex
from planner import schema as sch
from planner import system_data
from planner import system_tables as st
from planner.coercion import coerce, no_function, no_operator
from planner.expr import Func
from planner.types import Kind, SqlType
from planner.values import parse_text

_INTS = (Kind.INT2, Kind.INT4, Kind.INT8)
# Kinds that are not plain strings: conversions to and from them are ours.
SPECIAL = (Kind.OID, Kind.XID, Kind.BYTEA, Kind.INET) + types.REG_KINDS + types.ARRAY_KINDS


def involved(*ts: SqlType) -> bool:
    return any(t.kind in SPECIAL for t in ts)


# --- the catalog as the statement sees it ------------------------------------------------
def _ctx():
    return st.context()


def search_path() -> list[str]:
    ctx = _ctx()
    return ctx.search_path() if ctx is not None else [sch.PG_CATALOG, sch.PUBLIC]


def relations() -> list[tuple[int, str, str]]:
    ctx = _ctx()
    if ctx is not None:
        return ctx.relations()
    return [(r.oid, r.schema, r.name) for r in st.RELATIONS.values()]


def _quote(name: str) -> str:
    return name if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) else '"' + name.replace('"', '""') + '"'


def relation_names() -> dict[int, str]:
    """oid -> the name regclass prints: qualified unless the search path finds it."""
    rels = relations()
    path = search_path()
    first: dict[str, int] = {}
    for schema in path:
        for oid, nsp, name in rels:
            if nsp == schema and name not in first:
                first[name] = oid
    return {oid: _quote(name) if first.get(name) == oid else f"{_quote(nsp)}.{_quote(name)}"
            for oid, nsp, name in rels}


def visible_relations() -> set[int]:
    path = search_path()
    first: dict[str, int] = {}
    for schema in path:
        for oid, nsp, name in relations():
            if nsp == schema and name not in first:
                first[name] = oid
    return set(first.values())


def role_names() -> dict[int, str]:
    ctx = _ctx()
    return dict(ctx.roles()) if ctx is not None else {st.BOOTSTRAP_ROLE_OID: "raympp"}


_PROC_ROWS = [dict(zip(system_data.PROC_COLUMNS, r)) for r in system_data.PROCS]
PROC_NAMES = {int(r["oid"]): r["proname"] for r in _PROC_ROWS}
# regproc names: pg_proc's functions and the type I/O functions pg_type's columns name.
REGPROC_NAMES = {**system_data.TYPE_IO_PROCS, **PROC_NAMES}


def reg_names(kind: Kind) -> dict[int, str]:
    """oid -> printed name for a reg* type."""
    if kind is Kind.REGCLASS:
        return relation_names()
    if kind is Kind.REGTYPE:
        return dict(st.REGTYPE_NAMES)
    if kind is Kind.REGPROC:
        return dict(REGPROC_NAMES)
    if kind is Kind.REGNAMESPACE:
        return {oid: name for name, oid in st.NAMESPACES.items()}
    return role_names()


def _split_name(text: str) -> list[str]:
    """A possibly qualified, possibly quoted name as PostgreSQL's stringToQualifiedNameList
    (SplitIdentifierString: whitespace around the dots is allowed)."""
    parts, i, s = [], 0, text
    n = len(s)

    def skip(j: int) -> int:
        while j < n and s[j].isspace():
            j += 1
        return j

    i = skip(i)
    if i == n:
        raise errors.SyntaxError_("invalid name syntax")
    while True:
        if s[i] == '"':
            j, out = i + 1, ""
            while True:
                k = s.find('"', j)
                if k < 0:
                    raise errors.SyntaxError_("invalid name syntax")
                if s[k + 1:k + 2] == '"':
                    out += s[j:k] + '"'
                    j = k + 2
                    continue
                out += s[j:k]
                i = k + 1
                break
            if not out:
                raise errors.SyntaxError_("invalid name syntax")
            parts.append(out)
        else:
            j = i
            while j < n and s[j] != "." and not s[j].isspace():
                j += 1
            if j == i:
                raise errors.SyntaxError_("invalid name syntax")
            parts.append(s[i:j].lower())
            i = j
        i = skip(i)
        if i < n and s[i] == ".":
            i = skip(i + 1)
            if i == n:
                raise errors.SyntaxError_("invalid name syntax")
            continue
        if i != n:
            raise errors.SyntaxError_("invalid name syntax")
        return parts


def reg_oid(kind: Kind, text: str) -> int:
    """The oid a reg* input names (a number is taken as the oid), or PostgreSQL's error."""
    t = text.strip()
    if t.isdigit():
        return int(t)
    if kind is Kind.REGTYPE:
        key = re.sub(r"\s*\(.*\)\s*$", "", " ".join(t.lower().split()))
        key = key[len("pg_catalog."):] if key.startswith("pg_catalog.") else key
        if t.strip() == '"char"' or key == 'pg_catalog."char"':
            return 18
        oid = st.TYPE_OID_BY_NAME.get(key.strip('"'))
        if oid is None:
            raise errors.UndefinedObject(f'type "{t}" does not exist')
        return oid
    parts = _split_name(t)
    if kind is Kind.REGCLASS:
        if len(parts) > 3:
            raise errors.SyntaxError_(f"improper relation name (too many dotted names): {t}")
        name, schema = parts[-1], parts[-2] if len(parts) > 1 else None
        rels = relations()
        if schema is not None:
            hit = [oid for oid, nsp, n in rels if nsp == schema and n == name]
        else:
            hit = []
            for s in search_path():
                hit = [oid for oid, nsp, n in rels if nsp == s and n == name]
                if hit:
                    break
        if not hit:
            shown = f"{schema}.{name}" if schema else name
            raise errors.UndefinedTable(f'relation "{shown}" does not exist')
        return hit[0]
    name = parts[-1]
    if kind is Kind.REGNAMESPACE:
        if name not in st.NAMESPACES:
            raise errors.QueryError(f'schema "{name}" does not exist', "3F000")
        return st.NAMESPACES[name]
    if kind is Kind.REGROLE:
        hit = [oid for oid, n in role_names().items() if n == name]
        if not hit:
            raise errors.UndefinedObject(f'role "{name}" does not exist')
        return hit[0]
    hit = [oid for oid, n in REGPROC_NAMES.items() if n == name]
    if not hit:
        raise errors.UndefinedFunction(f'function "{t}" does not exist')
    if len(hit) > 1:
        raise errors.QueryError(f'more than one function named "{t}"', "42725")
    return hit[0]


def _data(pairs) -> ex.RowData:
    return ex.RowData(tuple(sorted(pairs)))


# --- casts and conversions ----------------------------------------------------------------
def cast_type(to) -> SqlType | None:
    """The type of a cast target that sql_type does not read (None: sql_type's)."""
    if isinstance(to, exp.ObjectIdentifier):
        return _named_type(str(to.this).lower(), False)
    if isinstance(to, exp.DataType):
        if to.this == exp.DataType.Type.NAME:
            return types.NAME
        if to.this == exp.DataType.Type.USERDEFINED:
            kind = to.args.get("kind")
            if isinstance(kind, exp.Dot):
                schema = sch.identifier(kind.this) if isinstance(kind.this, exp.Identifier) else ""
                if schema != sch.PG_CATALOG:
                    raise errors.UndefinedObject(f'type "{kind.sql(dialect="postgres")}" does not exist')
                kind = kind.expression
            if isinstance(kind, exp.Identifier):
                if to.expressions:
                    raise errors.FeatureNotSupported(f"type modifiers of {kind.name}")
                return _named_type(kind.name if kind.quoted else kind.name.lower(), kind.quoted)
        if to.this == exp.DataType.Type.ARRAY:
            # local: bind_array and this module are in one import loop (test_layering.KNOWN_LOOPS)
            from planner.bind_array import array_type
            return array_type(to)
        if to.args.get("nested"):
            raise errors.FeatureNotSupported(f"type {to.sql(dialect='postgres')}")
    return None


_CATALOG_TYPES = {"oid": types.OID, "xid": SqlType(Kind.XID), "name": types.NAME,
                  "regclass": types.REGCLASS, "regtype": types.REGTYPE,
                  "regproc": SqlType(Kind.REGPROC), "regnamespace": SqlType(Kind.REGNAMESPACE),
                  "regrole": SqlType(Kind.REGROLE), "text": types.TEXT,
                  "pg_node_tree": SqlType(Kind.PG_NODE_TREE)}


def _named_type(name: str, quoted: bool) -> SqlType:
    if quoted and name == "char":
        return types.CHAR1
    if name in _CATALOG_TYPES:
        return _CATALOG_TYPES[name]
    if name.startswith("_") and name[1:] in _CATALOG_TYPES:  # _oid, _name: their arrays
        return types.array_of(_CATALOG_TYPES[name[1:]])
    try:
        return types.from_name(name)
    except errors.QueryError:
        raise errors.UndefinedObject(f'type "{name}" does not exist') from None


def _cannot(src: SqlType, dst: SqlType) -> errors.QueryError:
    return errors.QueryError(f"cannot cast type {src} to {dst}", "42846")


def _lit_value(e: ex.Expr):
    return e.value if isinstance(e, ex.Literal) else None


def convert(e: ex.Expr, dst: SqlType) -> ex.Expr:
    """e as type dst, where e's type or dst is one of SPECIAL (a cast, explicit or
    implicit). Constants convert now (a name that does not exist fails at bind time)."""
    src = e.type
    s, d = src.kind, dst.kind
    if s is d:
        return e
    lit = isinstance(e, ex.Literal)
    if lit and e.value is None:
        return ex.Literal(None, dst)
    string_src = src.is_string or s is Kind.UNKNOWN
    if d in (Kind.OID, Kind.XID):
        if s in _INTS:
            return _fold("int_to_oid", e, dst)
        if string_src:
            return _fold("text_to_oid", e, dst)
        if s in types.REG_KINDS and d is Kind.OID:
            return _fold("reg_to_oid", e, dst, _data((v, k) for k, v in reg_names(s).items()))
        if s in (Kind.OID, Kind.XID):
            return _fold("same", e, dst)
        raise _cannot(src, dst)
    if d in types.REG_KINDS:
        if s in _INTS or s is Kind.OID:
            names = reg_names(d)
            return _fold("oid_to_reg", e, dst, _data(names.items()))
        if string_src:
            if lit:
                oid = reg_oid(d, e.value)
                return ex.Literal(reg_names(d).get(oid, str(oid)), dst)
            names = reg_names(d)
            return ex.RowCall("text_to_reg", (e,), dst, _data(names.items()))
        raise _cannot(src, dst)
    if d in _INTS and s in (Kind.OID, Kind.XID):
        return _fold("oid_to_int", e, dst)
    if d in _INTS and s in types.REG_KINDS:
        return convert(convert(e, types.OID), dst)
    if dst.is_string:
        if s in (Kind.OID, Kind.XID):
            return _fold("to_text", e, dst)
        if s in types.REG_KINDS or s in types.ARRAY_KINDS or s is Kind.INET:
            return _fold("same", e, dst)
        if s is Kind.BYTEA:
            return _fold("bytea_text", e, dst)
    if d in types.ARRAY_KINDS or d in (Kind.INET, Kind.BYTEA):
        if s is Kind.UNKNOWN or (lit and src.is_string):
            return _fold("same", e, dst)
    raise _cannot(src, dst)


def _fold(name: str, e: ex.Expr, dst: SqlType, data: ex.RowData | None = None) -> ex.Expr:
    call = ex.RowCall(name, (e,), dst, data)
    if isinstance(e, ex.Literal):
        return ex.Literal(call_row(call, [e.value]), dst)
    return call


def common(a: SqlType, b: SqlType) -> SqlType | None:
    """The common type of two types one of which is SPECIAL (CASE, UNION, COALESCE)."""
    if a.kind is b.kind:
        return a
    for x, y in ((a, b), (b, a)):
        if x.kind is Kind.OID and (y.is_integer or y.kind in types.REG_KINDS):
            return types.OID
        if x.kind in types.REG_KINDS and y.is_integer:
            return types.OID
        if x.kind in SPECIAL and y.kind is Kind.UNKNOWN:
            return x
    return None


def compare_operands(func, a: ex.Expr, b: ex.Expr) -> tuple[ex.Expr, ex.Expr]:
    """Both sides of a comparison one of which is SPECIAL: oids compare with oids (integers
    and reg* values convert to oid), reg* values of one kind by name (unique, so equality
    is the oid's), the text forms of arrays with arrays of the same kind."""
    ka, kb = a.type.kind, b.type.kind
    if ka is kb and ka in types.ARRAY_KINDS:
        if func.value not in ("=", "<>"):
            raise errors.FeatureNotSupported(f"operator {func.value} on arrays ({a.type})")
        return a, b
    if ka in types.ARRAY_KINDS or kb in types.ARRAY_KINDS:
        raise errors.FeatureNotSupported(f"operators on arrays ({a.type} {func.value} {b.type})")
    if ka is kb:
        return a, b
    oidish = (Kind.OID,) + types.REG_KINDS + _INTS
    if ka in oidish and kb in oidish:
        return convert(a, types.OID) if ka is not Kind.OID else a, \
            convert(b, types.OID) if kb is not Kind.OID else b
    if ka in (Kind.XID,) and kb in _INTS:
        return a, convert(b, a.type)
    if kb in (Kind.XID,) and ka in _INTS:
        return convert(a, b.type), b
    raise no_operator(func, (a, b))


# --- row-by-row implementations -----------------------------------------------------------
def call_row(e: ex.RowCall, vals: list):
    impl = IMPLEMENTATIONS.get(e.name)
    if impl is None:
        raise errors.InternalError(f"no implementation of {e.name}")
    return impl(e, *vals)


def _strict(fn):
    def run(e, *vals):
        return None if any(v is None for v in vals) else fn(e, *vals)
    return run


def _mapping(e: ex.RowCall) -> dict:
    cache = getattr(_mapping, "cache", None)
    if cache is None or cache[0] is not e.data:
        _mapping.cache = cache = (e.data, dict(e.data.items) if e.data else {})
    return cache[1]


def _int_to_oid(e, v: int) -> int:
    if e.type.kind is Kind.OID and not (-2**31 <= v < 2**32):
        raise errors.NumericOutOfRange("OID out of range")
    return v + 2**32 if v < 0 else v


def _text_to_oid(e, v: str) -> int:
    t = v.strip()
    if not re.fullmatch(r"[+-]?\d+", t):
        raise errors.InvalidTextRepresentation(
            f'invalid input syntax for type {e.type.kind.value}: "{v}"')
    return _int_to_oid(e, int(t))


def _oid_to_int(e, v: int) -> int:
    if e.type.kind is Kind.INT4:
        return v - 2**32 if v >= 2**31 else v
    if e.type.kind is Kind.INT2:
        raise _cannot(e.args[0].type, e.type)
    return v


def _text_to_reg(e, v: str) -> str:
    oid = reg_oid(e.type.kind, v) if not v.strip().isdigit() else int(v)
    return _mapping(e).get(oid, str(oid))


def _reg_to_oid(e, v: str) -> int:
    found = _mapping(e).get(v)
    if found is None and v == "-":  # oid 0 prints as '-'
        return 0
    return found if found is not None else int(v)


def _regex(e, s: str, pattern: str) -> bool:
    return _compiled(pattern, e.data.items[0] if e.data else False).search(s) is not None


_REGEX_CACHE: dict = {}
_ARE_ONLY = re.compile(r"\[\[[:.=]|\\[mMyY]|^\*\*\*|\\[0-9]{3}")


def _compiled(pattern: str, icase: bool):
    key = (pattern, icase)
    if key not in _REGEX_CACHE:
        if _ARE_ONLY.search(pattern):
            raise errors.FeatureNotSupported(
                f"regular expression {pattern!r}: POSIX classes ([[:alpha:]]), \\m \\M \\y "
                "\\Y word anchors and *** directors differ from Python's re and are not "
                "supported")
        try:
            _REGEX_CACHE[key] = re.compile(pattern, re.IGNORECASE if icase else 0)
        except re.error as err:
            raise errors.QueryError(f"invalid regular expression: {err}", "2201B") from None
    return _REGEX_CACHE[key]


def _array_items(text: str) -> list[str | None]:
    """The elements of a one-dimensional array's text form ('{a,"b c",NULL}')."""
    t = text.strip()
    if t.startswith("[") or not (t.startswith("{") and t.endswith("}")):
        # int2vector/oidvector: space separated
        return t.split() if t and not t.startswith("{") else []
    body, out, i = t[1:-1], [], 0
    if not body:
        return []
    while i < len(body):
        if body[i] == '"':
            j, item = i + 1, ""
            while body[j] != '"':
                if body[j] == "\\":
                    j += 1
                item += body[j]
                j += 1
            out.append(item)
            i = j + 1
        else:
            j = body.find(",", i)
            j = len(body) if j < 0 else j
            item = body[i:j].strip()
            out.append(None if item.upper() == "NULL" else item)
            i = j
        if i < len(body) and body[i] == ",":
            i += 1
    return out


def _array_to_string(e, arr, sep, null=None):
    if arr is None or sep is None:
        return None
    items = _array_items(arr)
    return sep.join(x if x is not None else null for x in items if x is not None or null is not None)


def _function_result(e, oid):
    row = _PROC_BY_OID.get(oid)
    if row is None:
        return None
    name = st.format_type(int(row["prorettype"]), None)
    return ("SETOF " if row["proretset"] == "t" else "") + name


def _function_arguments(e, oid):
    row = _PROC_BY_OID.get(oid)
    if row is None:
        return None
    args = [st.format_type(int(t), None) for t in (row["proargtypes"] or "").split()]
    if row["provariadic"] not in (None, "0", "-") and args:
        args[-1] = "VARIADIC " + args[-1]
    return ", ".join(args)


_PROC_BY_OID = {int(r["oid"]): r for r in _PROC_ROWS}
_ENCODINGS = {0: "SQL_ASCII", 6: "UTF8", 8: "LATIN1"}

IMPLEMENTATIONS = {
    "same": _strict(lambda e, v: v),
    "int_to_oid": _strict(_int_to_oid),
    "text_to_oid": _strict(_text_to_oid),
    "oid_to_int": _strict(_oid_to_int),
    "to_text": _strict(lambda e, v: str(v)),
    "bytea_text": _strict(lambda e, v: "\\x" + bytes(v).hex()),
    "oid_to_reg": _strict(lambda e, v: "-" if v == 0 else
                          _mapping(e).get(_int_to_oid(e, v) if v < 0 else v, str(v))),
    "text_to_reg": _strict(_text_to_reg),
    "reg_to_oid": _strict(_reg_to_oid),
    "format_type": lambda e, oid, typmod=None: st.format_type(oid, typmod),
    "lookup": _strict(lambda e, v: _mapping(e).get(v)),
    "userbyid": _strict(lambda e, v: _mapping(e).get(v, f"unknown (OID={v})")),
    "visible": _strict(lambda e, v: _mapping(e).get(v)),
    "regex": _strict(_regex),
    "array_to_string": _array_to_string,
    "encoding_to_char": _strict(lambda e, v: _ENCODINGS.get(v, "")),
    "char_to_encoding": _strict(lambda e, v: {n.lower(): k for k, n in _ENCODINGS.items()}
                                .get(v.lower().replace("-", ""), -1)),
    "function_result": _strict(_function_result),
    "function_arguments": _strict(_function_arguments),
    "null": lambda e, *vals: None,
    "get_expr": lambda e, tree, *rest: _no_expression(tree),
    "viewdef": _strict(lambda e, oid: _no_viewdef(_mapping(e).get(oid))),
}


def _no_viewdef(view: str | None):
    if view is not None:
        raise errors.FeatureNotSupported(
            f'pg_get_viewdef of the system view "{view}": raympp computes its system views '
            "itself and has no SQL definition of them")
    return None


def _no_expression(tree):
    if tree is None:
        return None
    raise errors.FeatureNotSupported("pg_get_expr of an expression: raympp stores none")


# --- functions ----------------------------------------------------------------------------
def _oid_arg(e: ex.Expr, fname: str, args) -> ex.Expr:
    if e.type.kind is Kind.OID:
        return e
    if e.type.kind in _INTS or e.type.kind in types.REG_KINDS or e.type.kind is Kind.UNKNOWN \
            or (isinstance(e, ex.Literal) and e.type.is_string):
        return convert(e, types.OID)
    raise no_function(fname, args)


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
    "pg_get_viewdef": (1, 2), "pg_get_triggerdef": (1, 2), "pg_get_partkeydef": (1,),
    "pg_get_statisticsobjdef_columns": (1,), "pg_get_function_result": (1,),
    "pg_get_function_arguments": (1,), "pg_relation_is_publishable": (1,),
    "to_regclass": (1,), "to_regtype": (1,), "to_regnamespace": (1,), "to_regrole": (1,),
    "pg_my_temp_schema": (0,), "pg_is_other_temp_schema": (1,), "array_to_string": (2, 3),
    "pg_get_serial_sequence": (2,), "quote_ident": (1,),
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
        return ex.Literal(st.REGTYPE_NAMES.get(t.oid, t.kind.value), types.REGTYPE)
    if name == "pg_get_userbyid":
        return _row("userbyid", [_oid_arg(args[0], name, args)], types.NAME,
                    _data(role_names().items()))
    if name == "pg_table_is_visible":
        visible = visible_relations()
        pairs = [(oid, oid in visible) for oid, _n, _s in relations()]
        return _row("visible", [_oid_arg(args[0], name, args)], boolean, _data(pairs))
    if name == "pg_type_is_visible":
        return _row("visible", [_oid_arg(args[0], name, args)], boolean,
                    _data((oid, True) for oid in st.REGTYPE_NAMES))
    if name == "pg_function_is_visible":
        return _row("visible", [_oid_arg(args[0], name, args)], boolean,
                    _data((oid, True) for oid in PROC_NAMES))
    if name == "pg_collation_is_visible":
        # pg_collation's rows (default, C, POSIX) are all in pg_catalog.
        return _row("visible", [_oid_arg(args[0], name, args)], boolean,
                    _data((int(r[0]), True) for r in _collation_rows()))
    if name in ("obj_description", "col_description", "shobj_description"):
        # pg_description and pg_shdescription are empty: no object has a comment.
        _oid_arg(args[0], name, args)
        return ex.Literal(None, text)
    if name.startswith("has_") and name.endswith("_privilege"):
        # Every role has every privilege (no GRANT/REVOKE); a named table must exist.
        if name == "has_table_privilege":
            target = args[-2]
            if isinstance(target, ex.Literal) and isinstance(target.value, str) and \
                    target.type.kind is not Kind.OID:
                reg_oid(Kind.REGCLASS, target.value)
        return ex.Literal(True, boolean)
    if name == "current_setting":
        setting = _const_text(args[0], "current_setting")
        missing_ok = _bool_const(args[1], "current_setting") if len(args) > 1 else False
        ctx = _ctx()
        if setting is None:
            return ex.Literal(None, text)
        value = ctx.setting(setting, bool(missing_ok)) if ctx is not None else None
        return ex.Literal(value, text)
    if name == "set_config":
        setting = _const_text(args[0], "set_config")
        value = _const_text(args[1], "set_config")
        is_local = _bool_const(args[2], "set_config")
        ctx = _ctx()
        if setting is None:
            raise errors.QueryError("SET requires parameter name", "22023")
        if ctx is None:
            raise errors.FeatureNotSupported("set_config outside a session")
        return ex.Literal(ctx.set_setting(setting, value, bool(is_local)), text)
    if name == "current_schemas":
        implicit = _bool_const(args[0], "current_schemas")
        path = search_path()
        explicit = [s for s in path if s != sch.PG_CATALOG] if not implicit else path
        ctx = _ctx()
        listed = ctx.explicit_path() if ctx is not None and not implicit else explicit
        return ex.Literal(tuple(listed), types.array_of(types.NAME))
    if name == "pg_postmaster_start_time":
        ctx = _ctx()
        return ex.Literal(ctx.start_time() if ctx is not None else None, types.TIMESTAMPTZ)
    if name == "pg_encoding_to_char":
        return _row("encoding_to_char", [_int_arg(args[0], name, args)], types.NAME)
    if name == "pg_char_to_encoding":
        return _row("char_to_encoding", [_text_arg(args[0], name, args)], types.INT4)
    if name == "pg_get_expr":
        tree = args[0]
        if not (tree.type.is_string or tree.type.kind is Kind.UNKNOWN):
            raise no_function(name, args)
        return _row("get_expr", [tree] + args[1:], text)
    if name == "pg_get_viewdef":
        # No user views; the system views are computed by raympp and have no definition to
        # show, which is refused rather than given as NULL (SQLAlchemy's
        # get_view_definition would call an existing view missing).
        views = ((r.oid, r.qualified) for r in st.RELATIONS.values() if r.relkind == "v")
        return _row("viewdef", [_oid_arg(args[0], name, args)], text, _data(views))
    if name in ("pg_get_indexdef", "pg_get_constraintdef",
                "pg_get_triggerdef", "pg_get_partkeydef", "pg_get_statisticsobjdef_columns"):
        # There are no indexes, constraints, triggers, partitioned tables or
        # extended statistics to describe: PostgreSQL gives NULL for an unknown oid.
        _oid_arg(args[0], name, args)
        return ex.Literal(None, text)
    if name == "pg_get_serial_sequence":
        return ex.Literal(None, text)
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
            oid = reg_oid(kind, value)
        except (errors.UndefinedTable, errors.UndefinedObject, errors.UndefinedFunction):
            return ex.Literal(None, SqlType(kind))
        except errors.QueryError as err:
            if err.sqlstate != "3F000":
                raise
            return ex.Literal(None, SqlType(kind))
        return ex.Literal(reg_names(kind).get(oid, str(oid)), SqlType(kind))
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


IMPLEMENTATIONS["quote_ident"] = _strict(lambda e, v: _quote(v))


# --- regular expressions ------------------------------------------------------------------
_OPERATORS = {"~": (False, False), "~*": (True, False), "!~": (False, True),
              "!~*": (True, True)}


def bind_regex(node: exp.Expression, bind) -> ex.Expr:
    """s ~ pattern (RegexpLike), ~* (RegexpILike), their negations, OPERATOR(pg_catalog.op)."""
    if isinstance(node, exp.Operator):
        op = str(node.args.get("operator") or "").replace(" ", "")
        op = op[len("pg_catalog."):] if op.startswith("pg_catalog.") else op
        if op not in _OPERATORS:
            return _operator_call(op, node, bind)
        icase, negate = _OPERATORS[op]
    else:
        if node.args.get("flag") is not None:
            raise errors.FeatureNotSupported("regular expression flags")
        icase, negate = isinstance(node, exp.RegexpILike), False
    s, p = bind(node.this), bind(node.expression)
    for e in (s, p):
        if not (e.type.is_string or e.type.kind is Kind.UNKNOWN):
            raise errors.UndefinedFunction(f"operator does not exist: {s.type} ~ {p.type}")
    s = s if s.type.kind is not Kind.UNKNOWN else ex.Literal(s.value, types.TEXT)
    p = p if p.type.kind is not Kind.UNKNOWN else ex.Literal(p.value, types.TEXT)
    if isinstance(p, ex.Literal) and p.value is not None:
        _compiled(p.value, icase)  # a bad or unsupported pattern fails at bind time
    out = _row("regex", [s, p], types.BOOL, ex.RowData((icase,)))
    if negate:
        return functions.bind_call(Func.NOT, [out])
    return out


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
