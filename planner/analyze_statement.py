"""The tables of ANALYZE and VACUUM, read from the statement's text as PostgreSQL's grammar
has them: ANALYZE/VACUUM [ (options) ] [ VERBOSE ... ] [ table [ (columns) ], ... ].
sqlglot does not parse these statements; planner/statements.py classifies them and keeps
the names here as RelationNames, which the coordinator (coordinator/ddl.py) resolves.
"""

from __future__ import annotations

import re

from planner import errors
from planner.schema import RelationName

_ANALYZE_TOKEN = re.compile(r'\s*(?:"((?:[^"]|"")*)"|([A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*)|(.))',
                            re.DOTALL)


def targets(text: str) -> tuple[RelationName, ...]:
    """The tables of ANALYZE/VACUUM [ (options) ] [ VERBOSE ... ] [ table [ (columns) ], ... ]
    (a column list analyzes the whole table: statistics of more columns than asked)."""
    tokens = []  # (kind, value): ("name", folded identifier) or ("sym", character)
    pos = 0
    while pos < len(text):
        m = _ANALYZE_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        if m.group(1) is not None:
            tokens.append(("name", m.group(1).replace('""', '"'), True))
        elif m.group(2) is not None:
            tokens.append(("name", m.group(2).lower(), False))
        elif m.group(3) is not None and not m.group(3).isspace():
            tokens.append(("sym", m.group(3), False))
    i = 1  # after ANALYZE / VACUUM
    if i < len(tokens) and tokens[i] == ("sym", "(", False):
        depth = 0
        while i < len(tokens):
            depth += {"(": 1, ")": -1}.get(tokens[i][1], 0) if tokens[i][0] == "sym" else 0
            i += 1
            if depth == 0:
                break
    while i < len(tokens) and tokens[i][0] == "name" and not tokens[i][2] and tokens[i][1] in (
            "verbose", "analyze", "analyse", "full", "freeze", "skip_locked"):
        i += 1
    out = []
    while i < len(tokens):
        parts = []
        while i < len(tokens) and tokens[i][0] == "name":
            parts.append(tokens[i][1])
            i += 1
            if i < len(tokens) and tokens[i] == ("sym", ".", False):
                i += 1
                continue
            break
        if not parts:
            raise errors.SyntaxError_(f'syntax error at or near "{tokens[i][1]}"')
        if len(parts) > 3:
            raise errors.SyntaxError_("improper qualified name (too many dotted names): "
                                      + ".".join(parts))
        out.append(RelationName(parts[-1], parts[-2] if len(parts) > 1 else None,
                                parts[-3] if len(parts) > 2 else None))
        if i < len(tokens) and tokens[i] == ("sym", "(", False):
            while i < len(tokens) and tokens[i] != ("sym", ")", False):
                i += 1
            i += 1
        if i < len(tokens):
            if tokens[i] != ("sym", ",", False):
                raise errors.SyntaxError_(f'syntax error at or near "{tokens[i][1]}"')
            i += 1
    return tuple(out)
