"""Row-by-row implementations of the catalog's functions and conversions.

`expr.RowCall(name, args, type, data)` is an expression computed one row at a time by
`IMPLEMENTATIONS[name]` (catalog_functions and catalog_types bind them; constant folding
and the segments' evaluator run them, segment/expr.py). `data` carries what the call read
from the catalog when it was bound (oid/name pairs), so a segment computes it without the
catalog. Conversions between oid, the reg* types and integers; format_type and the
pg_proc lookups.
"""

from __future__ import annotations

import re

from planner import catalog_names as cn
from planner import errors, pretty_expr
from planner import expr as ex
from planner import system_tables as st
from planner.types import Kind, SqlType


def data(pairs) -> ex.RowData:
    """The catalog pairs a RowCall carries, in a canonical order (plans compare equal)."""
    return ex.RowData(tuple(sorted(pairs)))


def cannot_cast(src: SqlType, dst: SqlType) -> errors.QueryError:
    return errors.QueryError(f"cannot cast type {src} to {dst}", "42846")


# --- the implementations -----------------------------------------------------------
def call_row(e: ex.RowCall, vals: list):
    impl = IMPLEMENTATIONS.get(e.name)
    if impl is None:
        raise errors.InternalError(f"no implementation of {e.name}")
    return impl(e, *vals)


def strict(fn):
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
        raise cannot_cast(e.args[0].type, e.type)
    return v


def _text_to_reg(e, v: str) -> str:
    oid = cn.reg_oid(e.type.kind, v) if not v.strip().isdigit() else int(v)
    return _mapping(e).get(oid, str(oid))


def _reg_to_oid(e, v: str) -> int:
    found = _mapping(e).get(v)
    if found is None and v == "-":  # oid 0 prints as '-'
        return 0
    return found if found is not None else int(v)


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
    return sep.join(x if x is not None else null for x in items
                    if x is not None or null is not None)


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


_PROC_BY_OID = {int(r["oid"]): r for r in cn.PROC_ROWS}
_ENCODINGS = {0: "SQL_ASCII", 6: "UTF8", 8: "LATIN1"}

IMPLEMENTATIONS = {
    "same": strict(lambda e, v: v),
    "int_to_oid": strict(_int_to_oid),
    "text_to_oid": strict(_text_to_oid),
    "oid_to_int": strict(_oid_to_int),
    "to_text": strict(lambda e, v: str(v)),
    "oid_to_reg": strict(lambda e, v: "-" if v == 0 else
                          _mapping(e).get(_int_to_oid(e, v) if v < 0 else v, str(v))),
    "text_to_reg": strict(_text_to_reg),
    "reg_to_oid": strict(_reg_to_oid),
    "format_type": lambda e, oid, typmod=None: st.format_type(oid, typmod),
    "lookup": strict(lambda e, v: _mapping(e).get(v)),
    "pair_lookup": strict(lambda e, a, b: _mapping(e).get((a, b))),
    "size_pretty": strict(lambda e, v: size_pretty(v)),
    "userbyid": strict(lambda e, v: _mapping(e).get(v, f"unknown (OID={v})")),
    "visible": strict(lambda e, v: _mapping(e).get(v)),
    "array_to_string": _array_to_string,
    "encoding_to_char": strict(lambda e, v: _ENCODINGS.get(v, "")),
    "char_to_encoding": strict(lambda e, v: {n.lower(): k for k, n in _ENCODINGS.items()}
                                .get(v.lower().replace("-", ""), -1)),
    "function_result": strict(_function_result),
    "function_arguments": strict(_function_arguments),
    "null": lambda e, *vals: None,
    # adbin and conbin hold the expression's text (coordinator/system_catalog.py)
    "get_expr": lambda e, tree, *rest: tree,
    "get_expr_pretty": lambda e, tree, *rest: None if tree is None else pretty_expr.pretty(tree),
    "serial_sequence": lambda e, table, column: _serial_sequence(e, table, column),
    "viewdef": strict(lambda e, oid: _viewdef(_mapping(e).get(oid))),
    # pg_get_indexdef(oid, column, pretty): by (oid, column), 0 the whole definition; a
    # column the index has not is '' as in PostgreSQL, an oid of no index NULL
    "indexdef": strict(lambda e, oid, col: _mapping(e).get(
        (oid, col), "" if (oid, 0) in _mapping(e) else None)),
    "quote_ident": strict(lambda e, v: cn.quote_ident(v)),
}


# pg_size_pretty's units as PostgreSQL 15's dbsize.c has them: (name, limit, half-rounded,
# bits)
_SIZE_UNITS = (("bytes", 10 * 1024, False, 0), ("kB", 20 * 1024 - 1, True, 10),
               ("MB", 20 * 1024 - 1, True, 20), ("GB", 20 * 1024 - 1, True, 30),
               ("TB", 20 * 1024 - 1, True, 40), ("PB", 20 * 1024 - 1, True, 50))


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncating toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def size_pretty(size: int) -> str:
    """pg_size_pretty(bigint), as PostgreSQL 15 computes it."""
    for i, (name, limit, rounded, bits) in enumerate(_SIZE_UNITS):
        last = i == len(_SIZE_UNITS) - 1
        if last or abs(size) < limit:
            if rounded:
                size = _c_div(size + (-1 if size < 0 else 1), 2)
            return f"{size} {name}"
        nxt = _SIZE_UNITS[i + 1]
        shift = nxt[3] - bits - (1 if nxt[2] else 0) + (1 if rounded else 0)
        size = _c_div(size, 1 << shift)
    raise AssertionError("unreachable")


def _viewdef(view: tuple[str, str] | None) -> str | None:
    """A view's definition from ("user", definition) or ("system", name) (refused);
    NULL for an oid that is no view."""
    if view is None:
        return None
    kind, text = view
    if kind == "system":
        raise errors.FeatureNotSupported(
            f'pg_get_viewdef of the system view "{text}": raympp computes its system views '
            "itself and has no SQL definition of them")
    return text


def _serial_sequence(e, table: str | None, column: str | None):
    """pg_get_serial_sequence(table, column): the sequence the column owns, qualified;
    42P01 for a table that does not exist, 42703 for a column it does not have."""
    if table is None or column is None:
        return None
    rel = cn.reg_names(Kind.REGCLASS).get(cn.reg_oid(Kind.REGCLASS, table))
    name = rel.split(".")[-1].strip('"') if rel else table
    owned = dict(e.data.items) if e.data is not None else {}
    found = owned.get((name, column))
    if found is None and not any(t == name for t, _c in owned):
        return None
    return found
