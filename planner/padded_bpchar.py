"""bpchar values that keep their trailing spaces (types.BPCHAR_PADDED).

PostgreSQL's common type of char(n) and another string type or char(m) (CASE, COALESCE,
UNION, VALUES, ARRAY[...]: coercion.common_type_of) is bpchar without a length, whose
values are the inputs' own, a char(n)'s padded to n: COALESCE('a'::char(3), 'b'::varchar)
prints 'a  '. raympp keeps other char values without trailing spaces (printed padded to
their n), so these carry them in the value and in the type: bpchar's semantics ignore
them, so every use but printing and the functions that see the output function's text
takes the value without them (coercion.unpadded): `call_args` for the functions and
operators, coercion.coerce / bind_cast for conversions, json_grouping for grouping keys,
segment/kernels/sort_order.py for ORDER BY, the GREATEST / LEAST kernel and the constant
folder for theirs. plan.Aggregate refuses min / max of them (bytes, not bpchar's order).
"""

from __future__ import annotations

from planner import errors, types
from planner import expr as ex
from planner.coercion import adopt, common_value, compare_operands, is_unknown, unpadded
from planner.expr import Call, Func, Literal
from planner.fold import fold_constants
from planner.types import Kind

# Functions that see a bpchar's trailing spaces in PostgreSQL (its output function's text,
# coercion.bpchar_padded) or keep the value as it is (the common-type constructs).
_SEE_SPACES = frozenset({
    Func.CONCAT_FN, Func.CONCAT_WS, Func.FORMAT, Func.QUOTE_LITERAL, Func.QUOTE_NULLABLE,
    Func.OCTET_LENGTH, Func.REGEXP_REPLACE, Func.REGEXP_MATCH, Func.REGEXP_MATCHES,
    Func.REGEXP_SPLIT, Func.REGEXP_SPLIT_ROWS, Func.REGEXP_LIKE, Func.REGEXP_COUNT,
    Func.REGEXP_INSTR, Func.REGEXP_SUBSTR, Func.SUBSTRING_REGEX, Func.TO_JSON, Func.TO_JSONB,
    Func.JSON_BUILD_OBJECT, Func.JSONB_BUILD_OBJECT, Func.JSON_BUILD_ARRAY,
    Func.JSONB_BUILD_ARRAY, Func.ARRAY, Func.COALESCE, Func.NULLIF, Func.GREATEST,
    Func.LEAST})


# Functions that compare array elements (the kernels compare their bytes).
_ELEMENTS_COMPARED = frozenset({
    Func.EQ, Func.NE, Func.LT, Func.LE, Func.GT, Func.GE, Func.ARRAY_EQ, Func.ARRAY_NE,
    Func.ARRAY_SORT_KEY, Func.ARRAY_CONTAINS, Func.ARRAY_CONTAINED, Func.ARRAY_OVERLAP,
    Func.ARRAY_POSITION, Func.ARRAY_POSITIONS, Func.ARRAY_REMOVE, Func.ARRAY_REPLACE,
    Func.ANY_OF, Func.ALL_OF})


def call_args(func: Func, args: list[ex.Expr]) -> list[ex.Expr]:
    """The arguments a call of `func` takes: padded bpchar values without their trailing
    spaces, unless `func` sees them."""
    if func in _ELEMENTS_COMPARED:
        no_padded_elements([a.type for a in args])
    if func in _SEE_SPACES or not any(a.type.padded for a in args):
        return args
    return [unpadded(a) for a in args]


def no_padded_elements(ts) -> None:
    """Arrays of padded bpchar values compare their elements' bytes: 0A000 where they
    would be compared."""
    if any(t.is_array and t.elem.padded for t in ts):
        raise errors.FeatureNotSupported(
            "comparing arrays of bpchar values of char(n) mixed with other lengths or "
            "string types")


def _involves_char(a: ex.Expr, b: ex.Expr) -> bool:
    return any(x.type.kind is Kind.CHAR for x in (a, b) if not is_unknown(x))


def nullif(a: ex.Expr, b: ex.Expr) -> ex.Expr:
    """NULLIF(a, b) of strings is PostgreSQL's `a = b` operator, and its value the left
    operand as that operator takes it: bpchar when one side is char and the other char,
    varchar or unknown (the left's own length kept, a varchar's trailing spaces too), text
    otherwise (text = text)."""
    kinds = {x.type.kind for x in (a, b) if not is_unknown(x)}
    if Kind.TEXT in kinds or not _involves_char(a, b):
        left = adopt(a, types.TEXT) if is_unknown(a) else a
        right = adopt(b, types.TEXT) if is_unknown(b) else b
        return Call(Func.NULLIF, (common_value(left, types.TEXT),
                                  common_value(right, types.TEXT)), types.TEXT)
    right = b if b.type.kind is Kind.CHAR and not b.type.padded else \
        common_value(unpadded(b), types.BPCHAR)  # as bpchar's = takes it: no trailing spaces
    if a.type.kind is Kind.CHAR and not a.type.padded:
        # char values are kept without trailing spaces: the kernel's byte comparison is
        # bpchar's
        return Call(Func.NULLIF, (a, right), a.type)
    t = a.type if a.type.kind is Kind.CHAR else _bpchar_of(a)
    left = common_value(a, t)
    x, y = compare_operands(Func.EQ, unpadded(left), right)
    equal = Call(Func.EQ, (x, y), types.BOOL)
    return fold_constants(ex.Case(((equal, Literal(None, t)),), left, t))


def _bpchar_of(e: ex.Expr) -> types.SqlType:
    """The bpchar type a varchar or unknown left operand becomes (its spaces kept)."""
    if isinstance(e, Literal) and not (isinstance(e.value, str) and e.value.endswith(" ")):
        return types.BPCHAR
    return types.BPCHAR_PADDED
