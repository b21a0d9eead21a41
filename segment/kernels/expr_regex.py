"""Regular-expression, SIMILAR TO, format and quoting functions over batches.

Each is PostgreSQL's semantics as planner/pg_regex.py and planner/string_format.py compute
one value, applied once per distinct tuple of the arguments that vary by row
(`per_distinct`): a constant pattern is compiled once, and a column's repeated values cost
one call. `regexp_like`, the ~ operators, regexp_replace(s, p, r [, flags]),
regexp_count(s, p) and regexp_split_to_array / _to_table with constant pattern (and
replacement, flags) run as one pyarrow (RE2) kernel over the batch instead when RE2 reads
the translation the same way: no lookaround or back reference, and, where matches are
replaced, counted or split at, a pattern whose first match is PostgreSQL's (`simple`) and
that cannot match the empty string (RE2 and PostgreSQL step past empty matches otherwise).
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from planner import pg_regex, string_format
from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa
from segment.kernels.expr_arrays import per_distinct

# Python constructs RE2 lacks: lookaround and back references (written (?:\N)).
_NOT_RE2 = re.compile(r"\(\?[=!<]|\(\?:\\[1-9]\)")
# Python's \Z (the end of the string) is RE2's \z: an unescaped backslash before Z.
_END = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")


def _re2(r: pg_regex.Regex) -> str | None:
    """The RE2 text of a translated pattern, None when RE2 would read it otherwise."""
    text = r.rx.pattern
    if _NOT_RE2.search(text):
        return None
    flags = "".join(f for f, bit in (("i", re.IGNORECASE), ("s", re.DOTALL),
                                     ("m", re.MULTILINE)) if r.rx.flags & bit)
    return ("(?" + flags + ")" if flags else "") + _END.sub(r"\1\\z", text)


def _re2_like(s: xa.Datum, pattern: str, flags: str) -> xa.Datum | None:
    """s ~ pattern with RE2 over the batch, or None when RE2 cannot."""
    text = _re2(pg_regex.compile_are(pattern, pg_regex.parse_flags(flags, "regexp_like")))
    if text is None:
        return None
    try:
        return pc.match_substring_regex(s, text)
    except pa.ArrowInvalid:
        return None


def _rewrite(replacement: str) -> str:
    """PostgreSQL's replacement text as an RE2 rewrite: \\1..\\9 groups, \\& the match,
    \\\\ a backslash; any other backslash is itself."""
    out, i = [], 0
    while i < len(replacement):
        c, nxt = replacement[i], replacement[i + 1:i + 2]
        if c == "\\" and nxt and nxt in "123456789":
            out.append("\\" + nxt)
            i += 2
        elif c == "\\" and nxt in ("&", "\\") and nxt:
            out.append("\\0" if nxt == "&" else "\\\\")
            i += 2
        else:
            out.append("\\\\" if c == "\\" else c)
            i += 1
    return "".join(out)


def _re2_matches(pattern: str, opts: pg_regex.Options, anchors: bool = True) -> str | None:
    """The RE2 text of a pattern whose successive matches RE2 finds as PostgreSQL does;
    `anchors`: whether it may hold ^ or \\A (pyarrow's count and split kernels search
    again from each match's end as if the text began there)."""
    r = pg_regex.compile_are(pattern, opts)
    text = _re2(r)
    if text is None or not r.simple or r.rx.fullmatch("") is not None:
        return None
    if not anchors and ("^" in text.replace("[^", "") or "\\A" in text):
        return None
    return text


def _re2_replace(s: xa.Datum, pattern: str, replacement: str, flags: str
                 ) -> xa.Datum | None:
    """regexp_replace(s, p, r, flags) with RE2 over the batch, or None when RE2 cannot."""
    opts = pg_regex.parse_flags(flags, "regexp_replace", allow_global=True)
    text = _re2_matches(pattern, opts)
    if text is None or (pg_regex.uses_groups(replacement) and not pg_regex.compile_are(
            pattern, opts).free_groups):
        return None
    try:
        return pc.replace_substring_regex(s, text, _rewrite(replacement),
                                          max_replacements=None if opts.glob else 1)
    except pa.ArrowInvalid:  # e.g. \\3 of a pattern with two groups: PostgreSQL's ''
        return None


def regexp_like(e: Call, args: list, n: int) -> xa.Datum:
    s, pattern, flags = args
    if isinstance(s, pa.Array) and isinstance(pattern, pa.Scalar) and \
            isinstance(flags, pa.Scalar):
        if not pattern.is_valid or not flags.is_valid:
            return pa.nulls(n, pa.bool_())
        fast = _re2_like(s, pattern.as_py(), flags.as_py())
        if fast is not None:
            return fast
    return per_distinct(pg_regex.like, args, n, pa.bool_())


def regexp_replace(e: Call, args: list, n: int) -> xa.Datum:
    """regexp_replace's overloads: (s, p, r [, flags]) and (s, p, r, start [, N [, flags]])."""
    flags_form = len(args) == 3 or (len(args) == 4 and e.args[3].type.is_string)
    s, rest = args[0], args[1:]
    if flags_form and isinstance(s, pa.Array) and all(isinstance(a, pa.Scalar) for a in rest):
        if not all(a.is_valid for a in rest):
            return pa.nulls(n, pa.string())
        fast = _re2_replace(s, rest[0].as_py(), rest[1].as_py(),
                            rest[2].as_py() if len(rest) > 2 else "")
        if fast is not None:
            return fast
    if len(args) == 4 and e.args[3].type.is_string:
        return per_distinct(lambda s, p, r, f: pg_regex.replace(s, p, r, flags=f), args, n,
                            pa.string())
    return per_distinct(pg_regex.replace, args, n, pa.string())


def _constant_tail(args: list) -> list | None:
    """The Python values of the arguments after the string when the string varies by row
    and they are all constants and not NULL; None otherwise."""
    if not isinstance(args[0], pa.Array) or not all(
            isinstance(a, pa.Scalar) and a.is_valid for a in args[1:]):
        return None
    return [a.as_py() for a in args[1:]]


def regexp_count(e: Call, args: list, n: int) -> xa.Datum:
    """regexp_count(s, p [, 1 [, flags]]): RE2's count_substring_regex when it can."""
    tail = _constant_tail(args)
    if tail is not None and (len(tail) < 2 or tail[1] == 1):
        text = _re2_matches(tail[0], pg_regex.parse_flags(
            tail[2] if len(tail) > 2 else "", "regexp_count"), anchors=False)
        if text is not None:
            try:
                return pc.cast(pc.count_substring_regex(args[0], text), pa.int32())
            except pa.ArrowInvalid:
                pass  # RE2 refused the translated pattern: Python's re, below
    return per_distinct(pg_regex.count, args, n, pa.int32())


def regexp_split(e: Call, args: list, n: int) -> xa.Datum:
    """regexp_split_to_array / _to_table: RE2's split_pattern_regex when it can (the
    pieces between non-empty matches, as PostgreSQL's)."""
    fname = "regexp_split_to_array" if e.func is Func.REGEXP_SPLIT else "regexp_split_to_table"
    tail = _constant_tail(args)
    if tail is not None:
        text = _re2_matches(tail[0], pg_regex.parse_flags(tail[1] if len(tail) > 1 else "",
                                                          fname), anchors=False)
        if text is not None:
            try:
                return pc.split_pattern_regex(args[0], text).cast(e.type.arrow_type())
            except pa.ArrowInvalid:
                pass  # RE2 refused the translated pattern: Python's re, below
    return per_distinct(lambda s, p, flags=None: pg_regex.split(s, p, flags, fname), args, n,
                        e.type.arrow_type())


def _simple(fn, strict: bool = True):
    def run(e: Call, args: list, n: int) -> xa.Datum:
        return per_distinct(fn, args, n, e.type.arrow_type(), strict)
    return run


def _format(fmt, *values):
    return None if fmt is None else string_format.format_text(fmt, list(values))


CALLS = {
    Func.REGEXP_LIKE: regexp_like,
    Func.REGEXP_REPLACE: regexp_replace,
    Func.REGEXP_MATCH: _simple(pg_regex.match),
    Func.REGEXP_MATCHES: _simple(pg_regex.matches),
    Func.REGEXP_SPLIT: regexp_split,
    Func.REGEXP_SPLIT_ROWS: regexp_split,
    Func.REGEXP_COUNT: regexp_count,
    Func.REGEXP_INSTR: _simple(pg_regex.instr),
    Func.REGEXP_SUBSTR: _simple(pg_regex.substr),
    Func.SIMILAR: _simple(pg_regex.similar),
    Func.SUBSTRING_REGEX: _simple(pg_regex.substring_posix),
    Func.SUBSTRING_SIMILAR: _simple(pg_regex.substring_similar),
    Func.FORMAT: _simple(_format, strict=False),
    Func.QUOTE_LITERAL: _simple(string_format.quote_literal),
    Func.QUOTE_NULLABLE: _simple(string_format.quote_nullable, strict=False),
    Func.OVERLAY: _simple(string_format.overlay),
}
