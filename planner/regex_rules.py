"""Binding of the regular-expression functions, SIMILAR TO and the quoting/format functions.

`bind_function(name, args)` types regexp_match, regexp_like, regexp_count,
regexp_instr, regexp_substr, regexp_split_to_array and regexp_replace (PostgreSQL 15's
overloads: text arguments, int4 start/N/endoption/subexpr), format, quote_literal,
quote_nullable and overlay; `bind_operator` the ~ ~* !~ !~* operators (regexp_like with the
flags 'c' or 'i'); `bind_similar` SIMILAR TO ... [ESCAPE e]; `rule_srf` the set-returning
regexp_matches and regexp_split_to_table as the arrays a ProjectSet unnests (bind_srfs,
bind_lateral). Values are computed by planner/pg_regex.py (folding) and
segment/kernels/expr_regex.py (batches). A function's bad pattern fails when a row is
computed, as PostgreSQL's do (not over no rows); the operators' and SIMILAR TO's constant
patterns are checked at bind time, where PostgreSQL's planner compiles them.
"""

from __future__ import annotations

from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from planner import binary_rules, errors, pg_regex, types
from planner import expr as ex
from planner.coercion import bind_cast, bpchar_padded, coerce, is_unknown, no_function
from planner.expr import Call, Func, Literal
from planner.fold import fold_constants
from planner.types import Kind, SqlType

TEXT_ARRAY = types.array_of(types.TEXT)
# regexp_matches' rows: an array of text[] values, only ever unnested by a ProjectSet.
MATCH_ROWS = SqlType(Kind.ARRAY, element=TEXT_ARRAY)

# name -> (Func, result type, the argument signatures PostgreSQL 15 has: s text, i int4)
_FUNCTIONS = {
    "regexp_match": (Func.REGEXP_MATCH, TEXT_ARRAY, ("ss", "sss")),
    "regexp_split_to_array": (Func.REGEXP_SPLIT, TEXT_ARRAY, ("ss", "sss")),
    "regexp_like": (Func.REGEXP_LIKE, types.BOOL, ("ss", "sss")),
    "regexp_count": (Func.REGEXP_COUNT, types.INT4, ("ss", "ssi", "ssis")),
    "regexp_instr": (Func.REGEXP_INSTR, types.INT4,
                     ("ss", "ssi", "ssii", "ssiii", "ssiiis", "ssiiisi")),
    "regexp_substr": (Func.REGEXP_SUBSTR, types.TEXT, ("ss", "ssi", "ssii", "ssiis", "ssiisi")),
    "regexp_replace": (Func.REGEXP_REPLACE, types.TEXT,
                       ("sss", "ssss", "sssi", "sssii", "sssiis")),
    "quote_literal": (Func.QUOTE_LITERAL, types.TEXT, ("s",)),
    "quote_nullable": (Func.QUOTE_NULLABLE, types.TEXT, ("s",)),
    "overlay": (Func.OVERLAY, types.TEXT, ("ssi", "ssii")),
}
SRFS = ("regexp_matches", "regexp_split_to_table")
_SRF_SIGS = {"regexp_matches": (Func.REGEXP_MATCHES, MATCH_ROWS),
             "regexp_split_to_table": (Func.REGEXP_SPLIT_ROWS, TEXT_ARRAY)}
NAMES = frozenset(_FUNCTIONS) | {"format"}


def _fits(kind: str, e: ex.Expr) -> bool:
    if is_unknown(e):
        return True
    if kind == "s":
        return e.type.is_string
    return e.type.kind in (Kind.INT2, Kind.INT4)


def _signature(name: str, sigs, args) -> str:
    """The overload PostgreSQL picks: the one every argument fits, an unknown literal
    preferring text (regexp_replace(s, p, r, 'g') is the flags form)."""
    fitting = [s for s in sigs if len(s) == len(args) and all(_fits(k, a) for k, a in zip(s, args))]
    if not fitting:
        raise no_function(name, args)
    return max(fitting, key=lambda s: sum(k == "s" and is_unknown(a) for k, a in zip(s, args)))


def _typed(sig: str, args) -> tuple:
    return tuple(coerce(a, types.TEXT) if k == "s" and (is_unknown(a) or a.type.kind
                                                          is not Kind.TEXT)
                 else coerce(a, types.INT4) if k == "i" else a for k, a in zip(sig, args))


def bind_function(name: str, args: list[ex.Expr]) -> ex.Expr:
    """A call of one of NAMES, typed, checked and folded when its arguments are constants."""
    if name == "format":
        return _format(args)
    if name == "overlay" and args and args[0].type.kind is Kind.BYTEA:
        return binary_rules.rule_overlay(args)
    func, result, sigs = _FUNCTIONS[name]
    if func in (Func.QUOTE_LITERAL, Func.QUOTE_NULLABLE) and len(args) == 1 and not (
            args[0].type.is_string or is_unknown(args[0])):
        if args[0].type.kind is Kind.RECORD:
            raise errors.FeatureNotSupported(f"{name}() of a record")
        args = [_as_text(args[0])]  # the anyelement overload: the value's text
    sig = _signature(name, sigs, args)
    # A bad constant pattern or flag fails when a row is computed, as in PostgreSQL
    # (constant arguments: at once, by folding's fallback to the segments).
    return fold_constants(Call(func, _typed(sig, args), result))


def rule_srf(name: str, args: list[ex.Expr]) -> list[tuple[ex.Expr, str | None]]:
    """regexp_matches / regexp_split_to_table as the array a ProjectSet unnests (named
    after the function, as PostgreSQL names a function's single column)."""
    func, result = _SRF_SIGS[name]
    sig = _signature(name, ("ss", "sss"), args)
    return [(fold_constants(Call(func, _typed(sig, args), result)), None)]


_OPERATORS = {"~": ("c", False), "~*": ("i", False), "!~": ("c", True), "!~*": ("i", True)}


def bind_operator(op: str, s: ex.Expr, p: ex.Expr) -> ex.Expr:
    """s ~ p and its case-insensitive and negated forms: regexp_like with flags c or i
    (negated with NOT)."""
    flags, negate = _OPERATORS[op]
    for e in (s, p):
        if not (e.type.is_string or is_unknown(e)):
            raise errors.UndefinedFunction(f"operator does not exist: {s.type} {op} {p.type}")
    args = _typed("sss", [bpchar_padded(s), p, Literal(flags, types.TEXT)])
    if isinstance(args[1], Literal) and args[1].value is not None:
        pg_regex.compile_are(args[1].value, pg_regex.parse_flags(flags))
    out = fold_constants(Call(Func.REGEXP_LIKE, args, types.BOOL))
    return fold_constants(Call(Func.NOT, (out,), types.BOOL)) if negate else out


def bind_similar(s: ex.Expr, pattern: ex.Expr, escape: ex.Expr | None, negate: bool
                 ) -> ex.Expr:
    """s [NOT] SIMILAR TO pattern [ESCAPE e]: text arguments (42883 otherwise)."""
    args = [s, pattern] + ([escape] if escape is not None else [])
    if not all(a.type.is_string or is_unknown(a) for a in args):
        name = "similar_to_escape" if escape is not None else "similar_escape"
        raise no_function(name, args[1:])
    if escape is None:
        escape = Literal("\\", types.TEXT)
    typed = _typed("sss", [bpchar_padded(s), pattern, escape])
    if all(isinstance(a, Literal) and a.value is not None for a in typed[1:]):
        pg_regex.compile_are(pg_regex.similar_to_are(typed[1].value, typed[2].value),
                             pg_regex.Options())
    out = fold_constants(Call(Func.SIMILAR, typed, types.BOOL))
    return fold_constants(Call(Func.NOT, (out,), types.BOOL)) if negate else out


def bind_substring_regex(s: ex.Expr, pattern: ex.Expr, escape: ex.Expr | None = None
                         ) -> ex.Expr:
    """substring(s FROM pattern) with a text pattern, the POSIX regular-expression form;
    with FOR escape the SQL (SIMILAR) form."""
    args = [s, pattern] + ([escape] if escape is not None else [])
    if not all(a.type.is_string or is_unknown(a) for a in args):
        raise no_function("substring", args)
    typed = _typed("sss"[:len(args)], args)
    func = Func.SUBSTRING_SIMILAR if escape is not None else Func.SUBSTRING_REGEX
    return fold_constants(Call(func, typed, types.TEXT))


def _format(args: list[ex.Expr]) -> ex.Expr:
    """format(fmt, args...): the format text, then any values, each given as its text
    (a NULL stays NULL: %s prints '' and %L NULL). Constant formats are checked now."""
    if not args:
        raise no_function("format", args)
    fmt = args[0]
    if not (fmt.type.is_string or is_unknown(fmt)):
        raise no_function("format", args)
    rest = []
    for a in args[1:]:
        if a.type.kind is Kind.RECORD:
            raise errors.FeatureNotSupported("format() of a record argument")
        rest.append(coerce(a, types.TEXT) if is_unknown(a) else _as_text(a))
    typed = (coerce(fmt, types.TEXT) if is_unknown(fmt) else fmt,) + tuple(rest)
    return fold_constants(Call(Func.FORMAT, typed, types.TEXT))


def _as_text(a: ex.Expr) -> ex.Expr:
    """An argument as format() prints it: with its type's output function."""
    if a.type.kind is Kind.CHAR:
        return bpchar_padded(a)
    if a.type.kind is Kind.BOOL:  # format prints a boolean with its output function
        return fold_constants(ex.Case(((a, Literal("t", types.TEXT)),
                                       (Call(Func.NOT, (a,), types.BOOL),
                                        Literal("f", types.TEXT))),
                                      Literal(None, types.TEXT), types.TEXT))
    return a if a.type.kind is Kind.TEXT else bind_cast(a, types.TEXT)


def _rule(func: Func, args) -> ex.Expr:
    """The typing rule of these functions for functions.bind_call (by their names)."""
    if func is Func.FORMAT:
        return _format(list(args))
    if func is Func.SIMILAR and len(args) == 3:
        return bind_similar(args[0], args[1], args[2], negate=False)
    if func in (Func.SUBSTRING_REGEX, Func.SUBSTRING_SIMILAR) and len(args) in (2, 3):
        return bind_substring_regex(*args)
    name = next((n for n, (f, _, _) in _FUNCTIONS.items() if f is func), None)
    if name is None:
        raise no_function(func.value, args)
    return bind_function(name, list(args))


RULES = {f: _rule for f in [f for f, _, _ in _FUNCTIONS.values()]
         + [Func.FORMAT, Func.SIMILAR, Func.SUBSTRING_REGEX, Func.SUBSTRING_SIMILAR]}


def substring_similar_syntax(text: str) -> str:
    """SQL text with `substring(s SIMILAR p ESCAPE e)`, which sqlglot does not parse,
    written as PostgreSQL's equivalent `substring(s FROM p FOR e)` (outside strings and
    comments: the statement's tokens are read)."""
    low = text.lower()
    if "substring" not in low or "similar" not in low:
        return text
    try:
        tokens = Postgres().tokenize(text)
    except TokenError:
        return text  # the parser reports it
    edits = []
    for i, tok in enumerate(tokens[:-1]):
        if tok.text.lower() != "substring" or tokens[i + 1].token_type is not TokenType.L_PAREN:
            continue
        depth, found = 0, []
        for t in tokens[i + 1:]:
            if t.token_type is TokenType.L_PAREN:
                depth += 1
            elif t.token_type is TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1 and t.token_type is TokenType.VAR and t.text.lower() == "similar":
                found.append((t, "FROM"))
            elif depth == 1 and t.token_type is TokenType.ESCAPE and found:
                found.append((t, "FOR"))
        if len(found) == 2:  # without ESCAPE it is a syntax error, as in PostgreSQL
            edits.extend(found)
    for t, word in sorted(edits, key=lambda e: -e[0].start):
        text = text[:t.start] + word + text[t.end + 1:]
    return text
