"""PostgreSQL's regular expressions (Spencer's ARE) evaluated with Python's `re`.

`compile_are(pattern, flags)` translates an ARE into an equivalent Python pattern: PostgreSQL's
escapes (\\m \\M \\y \\Y word anchors, \\B for a backslash, \\d as [0-9], \\s as the C.UTF-8
space class), bracket expressions with [[:class:]] names (classes as glibc's C.UTF-8 ctype
has them), `$` only at the end of the string, the newline-sensitive modes (flags n, p, w),
expanded syntax (x), literal patterns (q, ***=) and embedded options (?i). A bad pattern is
2201B with PostgreSQL's message; what Python cannot match the same way (a lookbehind of
varying length, \\D inside brackets, octal escapes) is 0A000.

Which match. PostgreSQL takes the match that starts first and, among those, the longest (the
shortest when the RE is non-greedy); Python's backtracking takes the first alternative that
succeeds. They agree on where a match starts, and on its end when the pattern has no
alternation, non-greedy part, quantified group or back reference (`simple`). Otherwise the
end is found by trying each end with `fullmatch` (or, for a pattern that looks past its
match: $, \\y, lookahead, with a lookahead on the length that remains), from the longest.

Which groups. Inside that match Python's captures are PostgreSQL's unless the pattern has
alternatives or non-greedy parts; then, when its captures are whole unquantified groups of
one top-level concatenation, they are found as PostgreSQL's dissection does (`_dissect`),
and otherwise reading them is 0A000 (a match without groups is still computed).

The functions below (`match`, `matches`, `split`, `count`, `instr`, `substr`, `replace`,
`like`, `similar`, `substring_posix`, `substring_similar`) compute one value with
PostgreSQL's semantics; constant folding calls them directly and the segments once per
distinct argument tuple, or through RE2 where it reads a pattern the same way
(segment/kernels/expr_regex.py).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from planner import errors

# glibc's C.UTF-8 "space" class (PostgreSQL's [[:space:]] and \\s): not U+00A0 or U+0085.
# The characters themselves, not \\u escapes: RE2 (segment/kernels/expr_regex.py) reads
# the same class.
_SPACE = "\t\n\v\f\r \u1680\u2000-\u2006\u2008-\u200a\u2028\u2029\u205f\u3000"
_FIXED_CLASSES = {"digit": "0-9", "xdigit": "0-9A-Fa-f", "space": _SPACE, "blank": " \\t"}
_CLASSES = ("alpha", "alnum", "upper", "lower", "punct", "cntrl", "graph", "print", "digit",
            "xdigit", "space", "blank", "word")
_LAST_CODE_POINT = 0x2FFFF  # classes are built over the BMP and the next two planes


def _glibc_alpha(c: str) -> bool:
    # glibc counts the digits of other scripts and letter-like numbers as letters.
    return c.isalpha() or (unicodedata.category(c) in ("Nd", "Nl") and not "0" <= c <= "9")


_PREDICATES = {
    "alpha": _glibc_alpha,
    "alnum": lambda c: _glibc_alpha(c) or "0" <= c <= "9",
    "upper": lambda c: c.isupper() or unicodedata.category(c) == "Lt",
    "lower": lambda c: c.islower() or unicodedata.category(c) == "Lt",
    "cntrl": lambda c: unicodedata.category(c) == "Cc" or c in "\u2028\u2029",
    "print": lambda c: c == " " or (c.isprintable() and unicodedata.category(c) != "Zs")
    or c == "\u3000",
    "graph": lambda c: c.isprintable() and not c.isspace(),
    "punct": lambda c: c.isprintable() and not c.isspace() and not _glibc_alpha(c)
    and not "0" <= c <= "9",
}


@functools.lru_cache(maxsize=None)
def class_set(name: str) -> str:
    """The body of a Python character class for [:name:] as PostgreSQL's C.UTF-8 ctype."""
    if name in _FIXED_CLASSES:
        return _FIXED_CLASSES[name]
    if name == "word":
        name = "alnum"  # with "_", which the caller adds
    test = _PREDICATES[name]
    out, run_start, prev = [], None, None
    for code in range(_LAST_CODE_POINT + 1):
        if 0xD800 <= code <= 0xDFFF or not test(chr(code)):
            continue
        if prev is not None and code == prev + 1:
            prev = code
            continue
        if run_start is not None:
            out.append(_class_range(run_start, prev))
        run_start = prev = code
    if run_start is not None:
        out.append(_class_range(run_start, prev))
    return "".join(out)


def _class_range(lo: int, hi: int) -> str:
    a = _class_char(chr(lo))
    return a if lo == hi else a + "-" + _class_char(chr(hi))


_ESCAPE_CHARS = {"a": "\x07", "b": "\x08", "B": "\\", "e": "\x1b", "f": "\f", "n": "\n",
                 "r": "\r", "t": "\t", "v": "\v"}
DUPMAX = 255  # PostgreSQL's largest repetition count


def bad_regex(message: str) -> errors.QueryError:
    """2201B with PostgreSQL's wording."""
    return errors.QueryError(f"invalid regular expression: {message}", "2201B")


@dataclass(frozen=True)
class Options:
    """Parsed flags: case-insensitive, the newline modes, expanded syntax, literal, global."""

    icase: bool = False
    nl_stop: bool = False     # . and [^...] do not match a newline (n, p)
    nl_anchor: bool = False   # ^ and $ match at newlines too (n, w)
    expanded: bool = False
    literal: bool = False
    glob: bool = False


# What each flag letter sets (parse_re_flags); later letters override earlier ones.
_FLAGS = {
    "g": {"glob": True}, "i": {"icase": True}, "c": {"icase": False},
    "n": {"nl_stop": True, "nl_anchor": True}, "m": {"nl_stop": True, "nl_anchor": True},
    "p": {"nl_stop": True, "nl_anchor": False}, "w": {"nl_stop": False, "nl_anchor": True},
    "s": {"nl_stop": False, "nl_anchor": False}, "x": {"expanded": True},
    "t": {"expanded": False}, "q": {"literal": True},
}


def parse_flags(flags: str | None, fname: str | None = None, allow_global: bool = False
                ) -> Options:
    """The flags argument of a regexp function (PostgreSQL's parse_re_flags): 22023 for an
    unknown letter, and for g where `fname` does not take it."""
    opts = dict(icase=False, nl_stop=False, nl_anchor=False, expanded=False, literal=False,
                glob=False)
    for c in flags or "":
        if c in "be":
            raise errors.FeatureNotSupported(f'regular expression option "{c}" (basic or '
                                             "extended POSIX syntax)")
        if c not in _FLAGS:
            raise errors.InvalidParameterValue(f'invalid regular expression option: "{c}"')
        opts.update(_FLAGS[c])
    if opts["glob"] and not allow_global and fname is not None:
        hint = "Use the regexp_matches function instead." if fname == "regexp_match" else None
        raise errors.QueryError(f'{fname}() does not support the "global" option', "22023",
                                hint=hint)
    return Options(**opts)


@dataclass(frozen=True)
class Regex:
    """A compiled ARE: the Python pattern, its capture groups, and how its matches are found."""

    rx: re.Pattern
    groups: int
    simple: bool          # Python's match (not always its groups) is PostgreSQL's
    shortest: bool        # the RE is non-greedy: the shortest match wins
    looks_ahead: bool     # $, \Z, word anchors or lookahead: looks past a match's end
    free_groups: bool     # Python's captures within PostgreSQL's match are PostgreSQL's
    source: str
    # The top-level items (Python text, shortest first, capture group number or 0) when
    # the pattern is one concatenation whose captures are whole unquantified groups
    # without groups inside: their texts are then found as PostgreSQL's dissection does.
    items: tuple | None = None


@functools.lru_cache(maxsize=512)
def compile_are(pattern: str, opts: Options) -> Regex:
    """The Python translation of ARE `pattern` under `opts` (cached)."""
    t = _Translator(pattern, opts)
    py = t.run()
    # Case-insensitivity is spelled out in the pattern (`_char`), as PostgreSQL adds each
    # character's towlower/towupper: re.IGNORECASE folds more (σ ς Σ, ſ s); a back
    # reference still needs it.
    flags = re.IGNORECASE if t.icase and t.backref else 0
    if not t.nl_stop:
        flags |= re.DOTALL
    if t.nl_anchor:
        flags |= re.MULTILINE
    try:
        rx = re.compile(py, flags)
    except re.error as err:
        if "look-behind" in str(err):
            raise errors.FeatureNotSupported(
                "a lookbehind constraint whose matches differ in length") from None
        raise bad_regex(str(err)) from None
    except RecursionError:
        raise errors.FeatureNotSupported("a regular expression nested this deeply") from None
    free = not t.alternation or (t.groups == 1 and t.first_group_spans)
    items = None if t.backref or t.top_items is None or any(
        k is None for _, _, k in t.top_items) else tuple(t.top_items)
    # Anchored at both ends (^...$ without the newline modes), a match is the whole string
    # whichever alternatives Python tries first.
    whole = t.top_items is not None and len(t.top_items) >= 2 and not t.nl_anchor and \
        t.top_items[0][0] in ("^", "\\A") and t.top_items[-1][0] == "\\Z"
    return Regex(rx, t.groups, whole or not t.ambiguous, t.shortest, t.looks_ahead, free,
                 pattern, items)


class _Translator:
    """One pass over an ARE, writing the Python pattern."""

    def __init__(self, pattern: str, opts: Options):
        self.p = pattern
        self.i = 0
        self.icase, self.nl_stop, self.nl_anchor = opts.icase, opts.nl_stop, opts.nl_anchor
        self.expanded, self.literal = opts.expanded, opts.literal
        self.groups = 0
        self.ambiguous = False
        self.alternation = False  # | or a non-greedy quantifier: captures chosen otherwise
        self.greed: bool | None = None  # the last (sub)expression's greediness, None: none
        self.shortest = False
        self.looks_ahead = False
        self.first_group_spans = False
        self.backref = False
        self.top_items: list | None = None  # (text, shortest, group: 0 none, None other)
        self.body_start = 0

    def run(self) -> str:
        p = self.p
        if p.startswith("***="):
            return _literal(p[4:])
        if p.startswith("***:"):
            self.i = 4
        if self.literal:
            return _literal(p)
        if p.startswith("(?", self.i) and self.i + 2 < len(p) and p[self.i + 2].isalpha():
            self._embedded_options()
        if self.literal:
            return _literal(p[self.i:])
        self.body_start = self.i
        body = self._alternation(depth=0, in_look=False)
        if self.i < len(p):  # a ')' without its '('
            raise bad_regex("parentheses () not balanced")
        self.shortest = self.greed is False
        return body

    def _embedded_options(self) -> None:
        j = self.p.find(")", self.i)
        if j < 0:
            raise bad_regex("parentheses () not balanced")
        o = parse_flags(self.p[self.i + 2:j].replace("g", "?"))
        self.icase, self.nl_stop, self.nl_anchor = o.icase, o.nl_stop, o.nl_anchor
        self.expanded, self.literal = o.expanded, o.literal
        self.i = j + 1

    # --- structure ---------------------------------------------------------------------

    def _alternation(self, depth: int, in_look: bool) -> str:
        """Branches separated by |; sets `greed`: greedy with two or more branches, else
        the branch's."""
        branches = [self._branch(depth, in_look)]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            self.ambiguous = self.alternation = True
            branches.append(self._branch(depth, in_look))
        if len(branches) > 1:
            self.greed = True
            if depth == 0:
                self.top_items = None
        return "|".join(branches)

    def _branch(self, depth: int, in_look: bool) -> str:
        parts: list[str] = []
        atom_ok = False   # whether the last item can take a quantifier
        single = False    # whether it matches exactly one character
        greeds: list[bool | None] = []  # each item's greediness (PostgreSQL's rules)
        kinds: list[int | None] = []  # its capture group: 0 none, None other than whole
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if self.expanded and c in " \t\n\r\f\v":
                self.i += 1
                continue
            if self.expanded and c == "#":
                while self.i < len(p) and p[self.i] != "\n":
                    self.i += 1
                continue
            if c == "|" or c == ")":
                if c == ")" and depth == 0:
                    raise bad_regex("parentheses () not balanced")
                break
            if c in "*+?" or (c == "{" and self._bound_follows()):
                if not atom_ok:
                    raise bad_regex("quantifier operand invalid")
                q, fixed, lazy = self._quantifier(single)
                parts[-1] = "(?:" + parts[-1] + ")" + q
                greeds[-1] = False if lazy else (greeds[-1] if fixed else True)
                kinds[-1] = 0 if kinds[-1] == 0 else None
                atom_ok = False
                continue
            self.greed = None
            # one character: anything but a group or a back reference
            single = c != "(" and not (c == "\\" and p[self.i + 1:self.i + 2].isdigit())
            before = self.groups
            atom, atom_ok = self._atom(depth, in_look)
            single = single and atom_ok
            parts.append(atom)
            greeds.append(self.greed)
            made = self.groups - before
            kinds.append(0 if made == 0 else before + 1 if made == 1 and c == "(" and
                         atom.startswith("(") and not atom.startswith("(?") else None)
        self.greed = next((g for g in greeds if g is not None), None)
        if depth == 0:
            self.top_items = [(t, g is False, k) for t, g, k in zip(parts, greeds, kinds)]
        return "".join(parts)

    def _bound_follows(self) -> bool:
        """`{` starts a bound only before a digit (otherwise it is an ordinary character)."""
        j = self.i + 1
        return j < len(self.p) and self.p[j].isdigit()

    def _quantifier(self, single: bool) -> tuple[str, bool, bool]:
        """The quantifier's Python text, whether it is a fixed count {m}, whether lazy."""
        p = self.p
        c = p[self.i]
        self.i += 1
        if c == "{":
            j = p.find("}", self.i)
            if j < 0:
                raise bad_regex("braces {} not balanced")
            body = p[self.i:j]
            if not re.fullmatch(r"\d+(,\d*)?", body):
                raise bad_regex("braces {} not balanced" if not re.fullmatch(r"[\d,]*", body)
                                else "invalid repetition count(s)")
            lo, _, hi = body.partition(",")
            if int(lo) > DUPMAX or (hi and (int(hi) > DUPMAX or int(hi) < int(lo))):
                raise bad_regex("invalid repetition count(s)")
            self.i = j + 1
            q = "{" + body + "}"
            variable = "," in body and hi != lo
            fixed = "," not in body
        else:
            q, variable, fixed = c, True, False
        lazy = self.i < len(p) and p[self.i] == "?"
        if lazy:
            self.i += 1
            q += "?"
            self.ambiguous = self.alternation = True
        if variable and not single:
            self.ambiguous = True
        return q, fixed, lazy

    def _atom(self, depth: int, in_look: bool) -> tuple[str, bool]:
        """The next atom, translated, and whether a quantifier may follow it."""
        p = self.p
        c = p[self.i]
        self.i += 1
        if c == "(":
            return self._group(depth, in_look)
        if c == "[":
            return self._bracket(), True
        if c == ".":
            return ("[^\\n]" if self.nl_stop else "."), True
        if c == "^":
            return "^", False
        if c == "$":
            self.looks_ahead = True
            return ("$" if self.nl_anchor else "\\Z"), False
        if c == "\\":
            return self._escape(in_look)
        return self._char(c), True

    def _char(self, c: str) -> str:
        """One literal character; with case-insensitivity, a class of it and its cases."""
        if not self.icase:
            return _lit(c)
        cases = _cases(c)
        return _lit(cases[0]) if len(cases) == 1 else "[" + "".join(
            _class_char(v) for v in cases) + "]"

    def _group(self, depth: int, in_look: bool) -> tuple[str, bool]:
        p = self.p
        start_group = self.i - 1
        head, capture, look = "(", not in_look, False
        if p.startswith("?#", self.i):  # (?#comment)
            j = p.find(")", self.i)
            if j < 0:
                raise bad_regex("parentheses () not balanced")
            self.i = j + 1
            return "", False
        if p.startswith("?", self.i):
            for prefix, py in (("?:", "(?:"), ("?=", "(?="), ("?!", "(?!"), ("?<=", "(?<="),
                               ("?<!", "(?<!")):
                if p.startswith(prefix, self.i):
                    head, capture = py, False
                    look = prefix != "?:"
                    self.i += len(prefix)
                    break
            else:
                raise bad_regex("quantifier operand invalid")
        if look and head in ("(?=", "(?!"):
            self.looks_ahead = True
        if capture:
            self.groups += 1
            head = "("
            number = self.groups
        body = self._alternation(depth + 1, in_look or look)
        if self.i >= len(p) or p[self.i] != ")":
            raise bad_regex("parentheses () not balanced")
        self.i += 1
        if capture and number == 1 and start_group == self.body_start and \
                self.p[self.i:].strip(" \t\n\r\f\v" if self.expanded else "") == "":
            self.first_group_spans = True
        if look:
            self.greed = None  # a constraint has no greediness
        return head + body + ")", not look

    def _escape(self, in_look: bool) -> tuple[str, bool]:
        p = self.p
        if self.i >= len(p):
            raise bad_regex("invalid escape \\ sequence")
        c = p[self.i]
        self.i += 1
        if c in _ESCAPE_CHARS:
            return self._char(_ESCAPE_CHARS[c]), True
        if c == "d":
            return "[0-9]", True
        if c == "D":
            return "[^0-9]", True  # matches a newline even in newline-sensitive mode
        if c == "s":
            return "[" + _SPACE + "]", True
        if c == "S":
            return "[^" + _SPACE + "]", True
        if c == "w":
            return "[" + class_set("alnum") + "_]", True
        if c == "W":
            return "[^" + class_set("alnum") + "_]", True
        if c in "mMyY":
            self.looks_ahead = True
            w = "[" + class_set("alnum") + "_]"
            return {"m": f"(?<!{w})(?={w})", "M": f"(?<={w})(?!{w})",
                    "y": f"(?:(?<!{w})(?={w})|(?<={w})(?!{w}))",
                    "Y": f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"}[c], False
        if c == "A":
            return "\\A", False
        if c == "Z":
            self.looks_ahead = True
            return "\\Z", False
        if c == "c":
            if self.i >= len(p):
                raise bad_regex("invalid escape \\ sequence")
            self.i += 1
            return self._char(chr(ord(p[self.i - 1]) & 0x1F)), True
        if c in "uUx":
            size = {"u": 4, "U": 8, "x": 8}[c]
            m = re.match(r"[0-9A-Fa-f]{1,%d}" % size, p[self.i:])
            if m is None or (c != "x" and len(m.group()) != size):
                raise bad_regex("invalid escape \\ sequence")
            self.i += len(m.group())
            code = int(m.group(), 16)
            if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise bad_regex("invalid escape \\ sequence")
            return self._char(chr(code)), True
        if c.isdigit():
            if c == "0" or (self.i < len(p) and p[self.i].isdigit()):
                raise errors.FeatureNotSupported("octal escapes and back references above "
                                                 "\\9 in regular expressions")
            n = int(c)
            if n > self.groups or in_look:
                raise bad_regex("invalid backreference number")
            self.ambiguous = self.backref = True
            return f"(?:\\{n})", True
        if c.isalnum():
            raise bad_regex("invalid escape \\ sequence")
        return self._char(c), True

    def _bracket(self) -> str:
        """A bracket expression [...] (the '[' read) as one Python atom."""
        p = self.p
        negate = p.startswith("^", self.i)
        if negate:
            self.i += 1
        items: list[str] = []
        first = True
        while True:
            if self.i >= len(p):
                raise bad_regex("brackets [] not balanced")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if p.startswith("[:", self.i):
                j = p.find(":]", self.i + 2)
                if j < 0:
                    raise bad_regex("brackets [] not balanced")
                name = p[self.i + 2:j]
                self.i = j + 2
                if name not in _CLASSES:
                    raise bad_regex("invalid character class")
                if name in ("upper", "lower") and self.icase:
                    name = "alpha"  # PostgreSQL: case-insensitive [:upper:] is [:alpha:]
                items.append(class_set(name) + ("_" if name == "word" else ""))
                continue
            if p.startswith("\\", self.i) and p[self.i + 1:self.i + 2] in ("d", "s", "w"):
                items.append({"d": "0-9", "s": _SPACE,
                              "w": class_set("alnum") + "_"}[p[self.i + 1]])
                self.i += 2
                continue
            lo = self._bracket_char()
            if p.startswith("-", self.i) and self.i + 1 < len(p) and p[self.i + 1] != "]":
                self.i += 1
                hi = self._bracket_char()
                if ord(hi) < ord(lo):
                    raise bad_regex("invalid character range")
                items.append(_class_char(lo) + "-" + _class_char(hi))
                if self.icase and ord(hi) - ord(lo) < _CASED_RANGE:
                    items.extend(_class_char(v) for code in range(ord(lo), ord(hi) + 1)
                                 for v in _cases(chr(code)) if not lo <= v <= hi)
            else:
                items.extend(_class_char(v) for v in (_cases(lo) if self.icase else (lo,)))
        body = "".join(items)
        if negate:
            return "[^" + body + ("\\n" if self.nl_stop else "") + "]"
        return "[" + body + "]"

    def _bracket_char(self) -> str:
        p = self.p
        c = p[self.i]
        if p.startswith("[.", self.i) or p.startswith("[=", self.i):
            end = p.find(p[self.i + 1] + "]", self.i + 2)
            if end < 0:
                raise bad_regex("brackets [] not balanced")
            name = p[self.i + 2:end]
            if len(name) != 1:
                raise errors.FeatureNotSupported("multi-character collating elements")
            self.i = end + 2
            return name
        self.i += 1
        if c == "\\":
            if self.i >= len(p):
                raise bad_regex("invalid escape \\ sequence")
            e = p[self.i]
            self.i += 1
            if e in _ESCAPE_CHARS:
                return _ESCAPE_CHARS[e]
            if e in "DSW":
                raise errors.FeatureNotSupported("\\D, \\S or \\W inside a bracket expression")
            if e.isalnum():
                raise bad_regex("invalid escape \\ sequence")
            return e
        return c


_CASED_RANGE = 4096  # ranges up to this size get their characters' other cases


def _cases(c: str) -> tuple[str, ...]:
    """What a case-insensitive c matches: its lower and upper case (towlower/towupper, one
    character each), not c itself when it is neither (PostgreSQL's allcases: title-case
    ǅ matches ǆ and Ǆ only)."""
    low, up = c.lower(), c.upper()
    low = low if len(low) == 1 else ("i" if c == "\u0130" else c)  # İ's simple lower case
    up = up if len(up) == 1 else c
    return (low,) if low == up else (low, up)


def _lit(c: str) -> str:
    """One literal character as Python's re and RE2 both read it: only the characters
    special to them escaped (re.escape also escapes spaces, which RE2 rejects)."""
    if c in ".^$*+?{}[]\\|()":
        return "\\" + c
    return {"\n": "\\n", "\t": "\\t"}.get(c, c)


def _literal(text: str) -> str:
    return "".join(_lit(c) for c in text)


def _class_char(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else ("\\n" if c == "\n" else c)


# --- the functions ---------------------------------------------------------------------------
def _end(r: Regex, s: str, first: re.Match) -> int:
    """The end PostgreSQL picks for the match that starts where `first` does."""
    b = first.start()
    last = min(len(s), b + _widest(r.rx.pattern, r.rx.flags))
    order = range(b, last + 1) if r.shortest else range(last, b - 1, -1)
    for e in order:
        if _ends_at(r, s, b, e) is not None:
            return e
    return first.end()


@functools.lru_cache(maxsize=512)
def _widest(pattern: str, flags: int) -> int:
    """The most characters a match of the Python pattern can span (its parser's bound;
    huge when unbounded), so the ends tried stop there."""
    try:
        return min(re._parser.parse(pattern, flags).getwidth()[1], 2**62)
    except Exception:  # noqa: BLE001 - a private parser: without it every end is tried
        return 2**62


def _ends_at(r: Regex, s: str, b: int, e: int) -> re.Match | None:
    """A match of r over exactly s[b:e]. fullmatch's end bound hides the text after e,
    so a pattern that looks there ($, \\y, lookahead) is matched with a lookahead on the
    length of what remains instead."""
    if not r.looks_ahead:
        return r.rx.fullmatch(s, b, e)
    return _remaining(r.rx.pattern, r.rx.flags, len(s) - e).match(s, b)


@functools.lru_cache(maxsize=1024)
def _remaining(pattern: str, flags: int, k: int) -> re.Pattern:
    return re.compile(f"(?:{pattern})(?=(?s:.){{{k}}}\\Z)", flags)


def _find(r: Regex, s: str, pos: int, groups: bool) -> re.Match | None:
    """The first match at or after character `pos`, as PostgreSQL chooses it; `groups`:
    the caller reads its capture groups."""
    m = r.rx.search(s, pos)
    if m is None:
        return None
    dissect = groups and r.groups and not r.free_groups
    if r.simple and not dissect:
        return m
    if dissect and r.items is None:
        raise errors.FeatureNotSupported(
            f"capture groups of regular expression {r.source!r}: with alternatives or "
            "non-greedy parts PostgreSQL assigns them by other rules")
    e = m.end() if r.simple else _end(r, s, m)
    if dissect:
        return _dissect(r, s, m.start(), e)
    return m if e == m.end() else _ends_at(r, s, m.start(), e)


class _Groups:
    """The capture groups of a match found by `_dissect`, read as a re.Match's."""

    def __init__(self, s: str, spans: list):
        self.s, self.spans = s, spans

    def span(self, k: int = 0) -> tuple[int, int]:
        return self.spans[k] if self.spans[k] is not None else (-1, -1)

    def start(self, k: int = 0) -> int:
        return self.span(k)[0]

    def end(self, k: int = 0) -> int:
        return self.span(k)[1]

    def group(self, k: int = 0) -> str | None:
        b, e = self.span(k)
        return None if b < 0 else self.s[b:e]

    def groups(self) -> tuple:
        return tuple(self.group(k) for k in range(1, len(self.spans)))


def _dissect(r: Regex, s: str, b: int, e: int) -> _Groups:
    """The groups of the match s[b:e] as PostgreSQL's dissection assigns them: each
    top-level item in turn takes its longest (a non-greedy one its shortest) part that
    leaves a match of the rest; a whole group's text is its item's."""
    spans: list = [None] * (r.groups + 1)
    spans[0] = (b, e)
    texts = [t for t, _, _ in r.items]
    pos = b
    for i, (text, shortest, group) in enumerate(r.items):
        if i == len(texts) - 1:
            ends = (e,)
        else:
            ends = range(pos, e + 1) if shortest else range(e, pos - 1, -1)
        rest = "".join(texts[i + 1:])
        for m in ends:
            if _piece(text, r, s, pos, m) and (not rest or _piece(rest, r, s, m, e)):
                break
        else:
            raise errors.InternalError(f"no dissection of a match of {r.source!r}")
        if group:
            spans[group] = (pos, m)
        pos = m
    return _Groups(s, spans)


def _piece(text: str, r: Regex, s: str, b: int, e: int) -> bool:
    """Whether Python pattern `text` (r's flags) matches exactly s[b:e] in s."""
    if r.looks_ahead:
        return _remaining(text, r.rx.flags, len(s) - e).match(s, b) is not None
    return _compiled(text, r.rx.flags).fullmatch(s, b, e) is not None


@functools.lru_cache(maxsize=1024)
def _compiled(text: str, flags: int) -> re.Pattern:
    return re.compile(text, flags)


def iterate(r: Regex, s: str, start: int = 0, glob: bool = True, groups: bool = False):
    """Every match from character `start` on, as PostgreSQL's setup_regexp_matches finds
    them: the next search begins at the end of a match, one further after an empty one."""
    pos = start
    while pos <= len(s):
        m = _find(r, s, pos, groups)
        if m is None:
            return
        yield m
        if not glob:
            return
        pos = m.end() + 1 if m.start() == m.end() else m.end()


def _row(r: Regex, m: re.Match) -> tuple:
    """regexp_match's array for one match: its groups, or the match when it has none."""
    return m.groups() if r.groups else (m.group(),)


def match(s: str, pattern: str, flags: str | None = None) -> tuple | None:
    """regexp_match(): the capture groups of the first match (the match when there are
    none), NULL when nothing matches."""
    r = compile_are(pattern, parse_flags(flags, "regexp_match"))
    for m in iterate(r, s, glob=False, groups=True):
        return _row(r, m)
    return None


def matches(s: str, pattern: str, flags: str | None = None) -> tuple:
    """regexp_matches(): its rows (each a text[] as regexp_match's), every match with g."""
    opts = parse_flags(flags, "regexp_matches", allow_global=True)
    r = compile_are(pattern, opts)
    return tuple(_row(r, m) for m in iterate(r, s, glob=opts.glob, groups=True))


def split(s: str, pattern: str, flags: str | None = None,
          fname: str = "regexp_split_to_array") -> tuple:
    """regexp_split_to_array(): the text between matches, ignoring empty matches at
    either end of the string and right after another match."""
    r = compile_are(pattern, parse_flags(flags, fname))
    out, prev_end, last = [], 0, 0
    for m in iterate(r, s):
        b, e = m.span()
        if b < len(s) and e > prev_end:
            out.append(s[last:b])
            last = e
        prev_end = e
    out.append(s[last:])
    return tuple(out)


def _check_positive(value: int, name: str) -> None:
    if value <= 0:
        raise errors.InvalidParameterValue(f'invalid value for parameter "{name}": {value}')


def count(s: str, pattern: str, start: int = 1, flags: str | None = None) -> int:
    """regexp_count(): non-overlapping matches from character `start` on."""
    _check_positive(start, "start")
    r = compile_are(pattern, parse_flags(flags, "regexp_count"))
    return sum(1 for _ in iterate(r, s, start - 1))


def _nth(r: Regex, s: str, start: int, n: int, groups: bool) -> re.Match | None:
    for i, m in enumerate(iterate(r, s, start - 1, groups=groups)):
        if i + 1 == n:
            return m
    return None


def instr(s: str, pattern: str, start: int = 1, n: int = 1, endoption: int = 0,
          flags: str | None = None, subexpr: int = 0) -> int:
    """regexp_instr(): the 1-based position where the n-th match (or its subexpression)
    starts, or just after it ends (endoption 1); 0 when there is none."""
    _check_positive(start, "start")
    _check_positive(n, "n")
    if endoption not in (0, 1):
        raise errors.InvalidParameterValue(
            f'invalid value for parameter "endoption": {endoption}')
    if subexpr < 0:
        raise errors.InvalidParameterValue(f'invalid value for parameter "subexpr": {subexpr}')
    r = compile_are(pattern, parse_flags(flags, "regexp_instr"))
    if subexpr > r.groups:
        return 0
    m = _nth(r, s, start, n, subexpr > 0)
    if m is None or m.start(subexpr) < 0:
        return 0
    return (m.end(subexpr) if endoption else m.start(subexpr)) + 1


def substr(s: str, pattern: str, start: int = 1, n: int = 1, flags: str | None = None,
           subexpr: int = 0) -> str | None:
    """regexp_substr(): the text of the n-th match (or of its subexpression), NULL when
    there is none."""
    _check_positive(start, "start")
    _check_positive(n, "n")
    if subexpr < 0:
        raise errors.InvalidParameterValue(f'invalid value for parameter "subexpr": {subexpr}')
    r = compile_are(pattern, parse_flags(flags, "regexp_substr"))
    if subexpr > r.groups:
        return None
    m = _nth(r, s, start, n, subexpr > 0)
    return None if m is None else m.group(subexpr)


def like(s: str, pattern: str, flags: str | None = None) -> bool:
    """regexp_like() and the ~ operators: whether any match exists."""
    r = compile_are(pattern, parse_flags(flags, "regexp_like"))
    return r.rx.search(s) is not None


def _substitute(replacement: str, m: re.Match, r: Regex) -> str:
    """The replacement text for one match: \\1..\\9 its groups, \\& all of it, \\\\ a
    backslash; any other backslash is kept."""
    out, i = [], 0
    while i < len(replacement):
        c = replacement[i]
        nxt = replacement[i + 1] if i + 1 < len(replacement) else ""
        if c == "\\" and nxt and nxt in "123456789":
            k = int(nxt)
            if k <= r.groups and m.group(k) is not None:
                out.append(m.group(k))
            i += 2
        elif c == "\\" and nxt == "&":
            out.append(m.group())
            i += 2
        elif c == "\\" and nxt == "\\":
            out.append("\\")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def uses_groups(replacement: str) -> bool:
    """Whether a replacement refers to capture groups (\\1 to \\9)."""
    return re.search(r"\\[1-9]", replacement.replace("\\\\", "")) is not None


def replace(s: str, pattern: str, replacement: str, start: int = 1, n: int | None = None,
            flags: str | None = None) -> str:
    """regexp_replace(): the first match replaced, every one with g or n = 0, or only the
    n-th; the search begins at character `start`."""
    _check_positive(start, "start")
    if n is not None and n < 0:
        raise errors.InvalidParameterValue(f'invalid value for parameter "n": {n}')
    opts = parse_flags(flags, "regexp_replace", allow_global=True)
    r = compile_are(pattern, opts)
    every = opts.glob if n is None else n == 0
    want = 1 if n is None else n
    groups = uses_groups(replacement)
    out, last = [], 0
    for i, m in enumerate(iterate(r, s, start - 1, groups=groups)):
        if every or i + 1 == want:
            out.append(s[last:m.start()])
            out.append(_substitute(replacement, m, r))
            last = m.end()
            if not every:
                break
    out.append(s[last:])
    return "".join(out)


def substring_posix(s: str, pattern: str) -> str | None:
    """substring(s FROM pattern): the first capture group of the first match (the match
    when there is none), NULL when nothing matches."""
    r = compile_are(pattern, Options())
    for m in iterate(r, s, glob=False, groups=r.groups > 0):
        return m.group(1 if r.groups else 0)
    return None


# --- SIMILAR TO --------------------------------------------------------------------------
def similar_to_are(pattern: str, escape: str | None = "\\") -> str:
    """The ARE of a SIMILAR TO pattern (PostgreSQL's similar_to_escape): anchored at both
    ends, % and _ wildcards, `escape` quoting the next character; escape-double-quote
    marks the part substring(... SIMILAR ...) returns."""
    parts = similar_parts(pattern, escape)
    heads = ("^(?:", "){1,1}?(", "){1,1}(?:")
    return "".join(h + p for h, p in zip(heads, parts)) + ")$"


def similar_parts(pattern: str, escape: str | None = "\\") -> list[str]:
    """The ARE of each part of a SIMILAR TO pattern between its escape-double-quote
    separators (one to three parts)."""
    if escape is not None and len(escape) > 1:
        raise errors.QueryError("invalid escape string", "22025",
                                hint="Escape string must be empty or one character.")
    esc = escape or None
    parts: list[list[str]] = [[]]
    out = parts[0]
    after_escape, in_class = False, False
    for c in pattern:
        if after_escape:
            if c == '"' and not in_class:
                if len(parts) == 3:
                    raise errors.QueryError("SQL regular expression may not contain more "
                                            "than two escape-double-quote separators",
                                            "2201B")
                out = []
                parts.append(out)
            else:
                out.append("\\" + c)
            after_escape = False
        elif esc is not None and c == esc:
            after_escape = True
        elif in_class:
            if c == "\\":
                out.append("\\")
            out.append(c)
            if c == "]":
                in_class = False
        elif c == "[":
            out.append(c)
            in_class = True
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        elif c == "(":
            out.append("(?:")
        elif c in "\\.^$":
            out.append("\\" + c)
        else:
            out.append(c)
    if after_escape:
        raise errors.QueryError("invalid escape string", "22025",
                                hint="Escape string must be empty or one character.")
    return ["".join(p) for p in parts]


def similar(s: str, pattern: str, escape: str | None = "\\") -> bool:
    """s SIMILAR TO pattern [ESCAPE escape]."""
    return like(s, similar_to_are(pattern, escape))


def substring_similar(s: str, pattern: str, escape: str) -> str | None:
    """substring(s SIMILAR pattern ESCAPE escape) (also written FROM pattern FOR escape):
    the part between the escape-double-quotes when the whole string matches, the first
    part as short as possible and the middle one then as long as possible (PostgreSQL's
    non-greedy {1,1}? on the first part); the whole string without separators."""
    parts = [compile_are(p, Options()).rx for p in similar_parts(pattern, escape)]
    n = len(s)
    if len(parts) == 1:
        return s if parts[0].fullmatch(s) is not None else None
    first, middle = parts[0], parts[1]
    last = parts[2] if len(parts) == 3 else None
    for i in range(n + 1):
        if first.fullmatch(s, 0, i) is None:
            continue
        for j in range(n, i - 1, -1) if last is not None else (n,):
            if middle.fullmatch(s, i, j) is not None and (
                    last is None or last.fullmatch(s, j, n) is not None):
                return s[i:j]
    return None
