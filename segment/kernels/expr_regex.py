"""Regular-expression, SIMILAR TO, format and quoting functions over batches.

Each is PostgreSQL's semantics as planner/pg_regex.py and planner/string_format.py compute
one value, applied once per distinct tuple of the arguments that vary by row
(`per_distinct`): a constant pattern is compiled once, and a column's repeated values cost
one call. `regexp_like` and the ~ operators with a constant pattern whose translation RE2
reads the same way run as one pyarrow match_substring_regex over the batch instead.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import pg_regex, string_format
from planner.expr import Call, Func
from segment.kernels import expr_arrays as xa

# Python constructs RE2 lacks or reads otherwise: lookaround, \Z, back references.
_NOT_RE2 = ("(?=", "(?!", "(?<", "\\Z", "(?:\\")


def per_distinct(fn, args: list, n: int, out_type: pa.DataType, strict: bool = True
                 ) -> xa.Datum:
    """fn(*values) once per distinct tuple of the row-varying arguments (the constant ones
    passed as they are); NULL wherever an argument is NULL when `strict`."""
    consts = [a.as_py() if isinstance(a, pa.Scalar) else None for a in args]
    varying = [i for i, a in enumerate(args) if not isinstance(a, pa.Scalar)]
    if strict and any(consts[i] is None for i in range(len(args)) if i not in varying):
        return pa.scalar(None, out_type) if not varying else pa.nulls(n, out_type)
    if not varying:
        return pa.scalar(fn(*consts), out_type)
    codes, dictionaries = [], []
    for i in varying:
        enc = pc.dictionary_encode(xa.as_array(args[i], n))
        codes.append(pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False)
                     .astype(np.int64))
        dictionaries.append(enc.dictionary.to_pylist())
    key = np.stack(codes, axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    out = []
    for row in first:
        vals = list(consts)
        for j, i in enumerate(varying):
            c = codes[j][row]
            vals[i] = None if c < 0 else dictionaries[j][c]
        out.append(None if strict and any(v is None for v in vals) else fn(*vals))
    return pa.array(out, out_type).take(pa.array(inverse.ravel()))


def _re2_like(s: xa.Datum, pattern: str, flags: str) -> xa.Datum | None:
    """s ~ pattern with RE2 over the batch, or None when the translation is not one RE2
    reads the same way."""
    r = pg_regex.compile_are(pattern, pg_regex.parse_flags(flags, "regexp_like"))
    text = r.rx.pattern
    if any(c in text for c in _NOT_RE2):
        return None
    prefix = "(?" + ("i" if r.rx.flags & re.IGNORECASE else "") + (
        "s" if r.rx.flags & re.DOTALL else "") + ("m" if r.rx.flags & re.MULTILINE else "") + ")"
    try:
        return pc.match_substring_regex(s, (prefix if prefix != "(?)" else "") + text)
    except pa.ArrowInvalid:
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
    if len(args) == 4 and e.args[3].type.is_string:
        return per_distinct(lambda s, p, r, f: pg_regex.replace(s, p, r, flags=f), args, n,
                            pa.string())
    return per_distinct(pg_regex.replace, args, n, pa.string())


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
    Func.REGEXP_SPLIT: _simple(pg_regex.split),
    Func.REGEXP_COUNT: _simple(pg_regex.count),
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
