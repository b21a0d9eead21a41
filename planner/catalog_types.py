"""The catalog's types as values: oid, xid, the reg* types, inet and the catalog's
arrays and vectors (held as their text form).

`convert` is every cast and implicit conversion from or to one of them (types.SPECIAL);
`compare_operands` types a comparison with one of them. Constants convert at bind time
(a name that does not exist fails then); other values through row_functions' RowCalls.
coercion calls both for these types; the common type of two of them is types.common_type's.
"""

from __future__ import annotations

from planner import catalog_names as cn
from planner import errors, types
from planner import expr as ex
from planner.row_functions import call_row, cannot_cast, data
from planner.types import SPECIAL, Kind, SqlType

_INTS = types.INTEGER_KINDS


def involved(*ts: SqlType) -> bool:
    """Whether any of ts is one of the catalog's types (their conversions are ours)."""
    return any(t.kind in SPECIAL for t in ts)


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
            return _fold("reg_to_oid", e, dst, data((v, k) for k, v in cn.reg_names(s).items()))
        if s in (Kind.OID, Kind.XID):
            return _fold("same", e, dst)
        raise cannot_cast(src, dst)
    if d in types.REG_KINDS:
        if s in _INTS or s is Kind.OID:
            names = cn.reg_names(d)
            return _fold("oid_to_reg", e, dst, data(names.items()))
        if string_src:
            if lit:
                oid = cn.reg_oid(d, e.value)
                return ex.Literal(cn.reg_names(d).get(oid, str(oid)), dst)
            names = cn.reg_names(d)
            return ex.RowCall("text_to_reg", (e,), dst, data(names.items()))
        raise cannot_cast(src, dst)
    if d in _INTS and s in (Kind.OID, Kind.XID):
        return _fold("oid_to_int", e, dst)
    if d in _INTS and s in types.REG_KINDS:
        return convert(convert(e, types.OID), dst)
    if dst.is_string:
        if s in (Kind.OID, Kind.XID):
            return _fold("to_text", e, dst)
        if s in types.REG_KINDS or s in types.ARRAY_KINDS or s is Kind.INET:
            return _fold("same", e, dst)
    if d in types.ARRAY_KINDS or d is Kind.INET:
        if s is Kind.UNKNOWN or (lit and src.is_string):
            return _fold("same", e, dst)
    raise cannot_cast(src, dst)


def _fold(name: str, e: ex.Expr, dst: SqlType, data: ex.RowData | None = None) -> ex.Expr:
    call = ex.RowCall(name, (e,), dst, data)
    if isinstance(e, ex.Literal):
        return ex.Literal(call_row(call, [e.value]), dst)
    return call


def compare_operands(func, a: ex.Expr, b: ex.Expr) -> tuple[ex.Expr, ex.Expr] | None:
    """Both sides of a comparison one of which is SPECIAL: oids compare with oids (integers
    and reg* values convert to oid), reg* values of one kind by name (unique, so equality
    is the oid's), the text forms of arrays with arrays of the same kind. None: no such
    operator (the caller says so, 42883)."""
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
    return None
