"""planner/pg_regex.py and segment/kernels/expr_regex.py: PostgreSQL's ARE over Python's re,
format() and the quoting functions, per value and over batches."""

from __future__ import annotations

import pyarrow as pa
import pytest
from expr_helpers import L, col, one, py_values, raises_sqlstate

from planner import errors, pg_regex, regex_rules, string_format
from planner import functions as F
from planner import types as T
from planner.expr import Call, Func
from segment.kernels import expr_regex as xre

S = col(0, T.TEXT, "s")
P = col(1, T.TEXT, "p")
STRINGS = ["hello world", "abab", None, "", "héllo wörld", "abab", "x\ny"]


@pytest.fixture
def batch():
    pats = ["o", "(a)(b)", "a", "x*", "[[:alpha:]]+", "b", "^y"]
    return pa.record_batch([pa.array(STRINGS), pa.array(pats)], names=["s", "p"])


@pytest.mark.parametrize("pattern,message", [
    ("(", "parentheses () not balanced"), (")", "parentheses () not balanced"),
    ("a{2,1}", "invalid repetition count(s)"), ("a{256}", "invalid repetition count(s)"),
    ("*a", "quantifier operand invalid"), ("a**", "quantifier operand invalid"),
    ("[a", "brackets [] not balanced"), ("a\\", "invalid escape \\ sequence"),
    ("[z-a]", "invalid character range"), ("[[:nope:]]", "invalid character class"),
    ("(a)\\2", "invalid backreference number"), ("a{1", "braces {} not balanced"),
    ("\\q", "invalid escape \\ sequence"),
])
def test_bad_patterns_have_postgres_messages(pattern, message):
    err = raises_sqlstate("2201B", pg_regex.like, "x", pattern)
    assert err.message == f"invalid regular expression: {message}"


def test_flags():
    assert raises_sqlstate("22023", pg_regex.like, "a", "a", "z").message == \
        'invalid regular expression option: "z"'
    err = raises_sqlstate("22023", pg_regex.match, "a", "a", "g")
    assert err.hint == "Use the regexp_matches function instead."
    assert pg_regex.like("ABC", "b", "i") and not pg_regex.like("ABC", "b", "ic")
    assert pg_regex.match("a\nb", "a.b") == ("a\nb",)
    assert pg_regex.match("a\nb", "a.b", "n") is None
    assert pg_regex.match("a\nb", "^b", "n") == ("b",)
    assert pg_regex.match("ab", "(?x) a b  # comment") == ("ab",)
    assert pg_regex.like("a*", "***=a*") and not pg_regex.like("a", "***=a*")
    assert pg_regex.like("a", "(?i)A")


def test_leftmost_longest_and_greediness():
    # PostgreSQL takes the longest match where Python's re takes the first alternative.
    assert pg_regex.match("abcd", "a|ab") == ("ab",)
    assert pg_regex.match("xy", "x*(xy)?") == ("xy",)
    assert pg_regex.match("ab", "(a)(x)?") == ("a", None)
    # A non-greedy first quantifier makes the whole RE prefer the shortest match; a
    # parenthesized alternation is greedy.
    assert pg_regex.substr("baaa", "a+?a*") == "a"
    assert pg_regex.substr("baaa", "(?:a|b)a+?") == "baaa"
    assert pg_regex.replace("ba\nab", "(a|ab)a*?a?", "<\\&>", flags="g") == "b<a>\n<ab>"
    # $ is the end of the string only (Python's $ also matches before a final newline).
    assert pg_regex.match("ab\n", "b$") is None


def test_captures_dissected_as_postgres():
    """With alternatives or non-greedy parts, each top-level item takes its longest (a
    non-greedy one its shortest) part of PostgreSQL's match, leaving a match of the rest."""
    assert pg_regex.match("ab", "(a|ab)(b?)") == ("ab", "")
    assert pg_regex.match("abb", "a+(b*?)(b*)") == ("", "bb")
    assert pg_regex.match("abb", "a*?(b|bb)(b?)") == ("b", "")
    assert pg_regex.match("abcd", "(a|ab)(c|bcd)(d*)") == ("ab", "c", "d")
    assert pg_regex.match("aab", "(a*)(a|ab)") == ("a", "ab")
    assert pg_regex.instr("xabb", "x(a|ab)(b*)", 1, 1, 0, "", 2) == 4
    assert pg_regex.match("abc", "(a|ab)") == ("ab",)  # one group around everything


def test_captures_nested_in_alternatives_are_refused():
    raises_sqlstate("0A000", pg_regex.match, "ab", "((a)|ab)(b?)")
    raises_sqlstate("0A000", pg_regex.match, "ab", "(a|b)+(b?)")
    assert pg_regex.like("ab", "((a)|ab)(b?)")  # no groups read


def test_character_classes_follow_c_utf8():
    assert pg_regex.like("É", "[[:upper:]]") and not pg_regex.like("é", "[[:upper:]]")
    assert pg_regex.like("٣", "[[:alpha:]]") and not pg_regex.like("٣", "\\d")
    assert not pg_regex.like("\u00a0", "\\s") and pg_regex.like("\u3000", "\\s")
    assert pg_regex.like("foo bar", "\\mbar\\M") and not pg_regex.like("foobar", "\\ybar")


def test_split_count_instr_substr():
    assert pg_regex.split("hello world", "\\s*") == tuple("helloworld")
    assert pg_regex.split("a,b,", ",") == ("a", "b", "")
    assert pg_regex.split("", "x") == ("",)
    assert pg_regex.matches("abc", "x*", "g") == (("",),) * 4
    assert pg_regex.count("abab", "^a", 2) == 0 and pg_regex.count("abab", "a", 2) == 1
    assert pg_regex.instr("abcabc", "b(c)", 1, 2, 0, "", 1) == 6
    assert pg_regex.instr("abcabc", "b", 1, 1, 1) == 3
    assert pg_regex.substr("1a22b333", "[0-9]+", 1, 3) == "333"
    raises_sqlstate("22023", pg_regex.count, "a", "a", 0)
    raises_sqlstate("22023", pg_regex.instr, "a", "a", 1, 1, 2)


def test_replace_forms():
    assert pg_regex.replace("abc", "b", "\\\\x\\&\\0\\9") == "a\\xb\\0c"
    assert pg_regex.replace("abcabc", "b", "X", 2) == "aXcabc"
    assert pg_regex.replace("abcabc", "b", "X", 1, 2) == "abcaXc"
    assert pg_regex.replace("abcabc", "B", "X", 1, 0, "i") == "aXcaXc"
    assert pg_regex.replace("  a b  ", "^\\s+|\\s+$", "", flags="g") == "a b"


def test_similar_to_escape():
    assert pg_regex.similar_to_are("a%b_(c|d)") == "^(?:a.*b.(?:c|d))$"
    assert pg_regex.similar("abc", "%(b|d)%") and not pg_regex.similar("abc", "(b|c)%")
    assert pg_regex.similar("a_c", "a#_c", "#") and not pg_regex.similar("abc", "a#_c", "#")
    raises_sqlstate("22025", pg_regex.similar, "a", "a", "xy")


def test_format_and_quoting():
    f = string_format.format_text
    assert f("%s|%I|%L|%%|%2$s|%-5s|%5s|%*s|", ["a", "b c", "it's", "x", "3", "y"]) == \
        "a|\"b c\"|'it''s'|%|b c|it's |    x|  y|"
    assert f("%L %s", [None, None]) == "NULL "
    assert raises_sqlstate("22023", f, "%s %s", ["1"]).message == \
        "too few arguments for format()"
    raises_sqlstate("22004", f, "%I", [None])
    assert string_format.quote_literal("a\\b'c") == "E'a\\\\b''c'"
    assert string_format.overlay("abcdef", "XY", 2, 3) == "aXYef"
    assert string_format.overlay("abc", "Z", 2, -1) == "aZabc"
    raises_sqlstate("22011", string_format.overlay, "abc", "Z", 0)


def _call(func, *args, t=T.TEXT):
    return Call(func, tuple(args), t)


def test_batches_match_per_value_results(batch):
    """Each distinct (value, pattern) computed once gives the per-value answers."""
    text_array = T.array_of(T.TEXT)
    cases = [
        (_call(Func.REGEXP_MATCH, S, P, t=text_array), pg_regex.match),
        (_call(Func.REGEXP_SPLIT, S, P, t=text_array), pg_regex.split),
        (_call(Func.REGEXP_COUNT, S, P, t=T.INT4), pg_regex.count),
        (_call(Func.REGEXP_LIKE, S, P, L("c"), t=T.BOOL), lambda s, p: pg_regex.like(s, p)),
        (_call(Func.REGEXP_REPLACE, S, P, L("<\\&>"), L("g")),
         lambda s, p: pg_regex.replace(s, p, "<\\&>", flags="g")),
    ]
    pats = batch.column(1).to_pylist()
    for e, fn in cases:
        want = [None if s is None else fn(s, p) for s, p in zip(STRINGS, pats)]
        got = py_values(e, batch)
        assert [tuple(v) if isinstance(v, list) else v for v in got] == want, e.func


def test_regexp_matches_rows_are_an_array_of_arrays(batch):
    e = _call(Func.REGEXP_MATCHES, S, L("[a-z]"), L("g"),
              t=T.SqlType(T.Kind.ARRAY, element=T.array_of(T.TEXT)))
    got = py_values(e, batch)
    assert got[1] == [["a"], ["b"], ["a"], ["b"]] and got[2] is None and got[3] == []


@pytest.mark.parametrize("pattern,flags", [("o.", "c"), ("^h", "c"), ("L+", "i"),
                                           ("[[:alpha:]]+ w", "c"), ("\\d", "c"),
                                           ("\\yw", "c"), ("o$", "c"), ("x.y", "n")])
def test_re2_fast_path_agrees_with_python(batch, pattern, flags):
    s = batch.column(0)
    slow = xre.per_distinct(pg_regex.like, [s, pa.scalar(pattern), pa.scalar(flags)],
                            len(s), pa.bool_())
    fast = xre.regexp_like(None, [s, pa.scalar(pattern), pa.scalar(flags)], len(s))
    assert fast.to_pylist() == slow.to_pylist()


def test_bound_calls_fold_constants():
    e = F.bind_call(Func.REGEXP_COUNT, [L("banana"), L("an")])
    assert e.value == 2
    # A bad pattern is left for the rows (none may come); the ~ operator fails at once.
    bad = F.bind_call(Func.REGEXP_LIKE, [L("a"), L("("), L("")])
    raises_sqlstate("2201B", one, bad)
    with pytest.raises(errors.QueryError):
        regex_rules.bind_operator("~", S, L("("))


@pytest.mark.parametrize("pattern,replacement,flags", [
    ("o", "0", "g"), ("(l+)", "[\\1]", "g"), ("^(\\w+) (\\w+)$", "\\2 \\1", ""),
    ("[[:space:]]+", "_", "g"), ("L", "<\\&>", "gi"), ("o$", "\\\\", ""), ("b", "\\q", "g")])
def test_re2_replace_agrees_with_python(batch, pattern, replacement, flags):
    s = batch.column(0)
    fast = xre._re2_replace(s, pattern, replacement, flags)
    assert fast is not None
    assert fast.to_pylist() == [None if v is None else pg_regex.replace(
        v, pattern, replacement, flags=flags) for v in s.to_pylist()]


def test_re2_replace_leaves_empty_matches_and_ambiguous_patterns_to_python(batch):
    s = batch.column(0)
    assert xre._re2_replace(s, "x*", "-", "g") is None       # can match ''
    assert xre._re2_replace(s, "a|ab", "-", "g") is None     # leftmost-longest
    assert xre._re2_replace(s, "(?=o)", "-", "g") is None    # lookahead


def test_re2_count_and_split_agree_with_python(batch):
    s = batch.column(0)
    count = Call(Func.REGEXP_COUNT, (), T.INT4)
    split = Call(Func.REGEXP_SPLIT, (), T.array_of(T.TEXT))
    for pattern in ("o", "l+", "[[:space:]]", "^h", "[^a]$"):
        got = xre.regexp_count(count, [s, pa.scalar(pattern), pa.scalar(1), pa.scalar("")],
                               len(s))
        assert got.to_pylist() == [None if v is None else pg_regex.count(v, pattern)
                                   for v in s.to_pylist()]
        got = xre.regexp_split(split, [s, pa.scalar(pattern)], len(s))
        assert got.to_pylist() == [None if v is None else list(pg_regex.split(v, pattern))
                                   for v in s.to_pylist()]


def test_case_insensitivity_is_postgres_own():
    """PostgreSQL adds each pattern character's towlower/towupper, no wider folding."""
    assert not pg_regex.like("ς", "Σ", "i") and not pg_regex.like("ſ", "s", "i")
    assert pg_regex.like("k", "\u212a", "i") and pg_regex.like("i", "\u0130", "i")
    assert not pg_regex.like("ǅ", "ǅ", "i") and pg_regex.like("ǆ", "ǅ", "i")
    assert pg_regex.like("É", "[à-é]", "i") and not pg_regex.like("x", "[^X]", "i")


def test_patterns_anchored_at_both_ends_take_re2():
    """^...$ leaves one possible match, so optional parts do not stop the RE2 path."""
    urls = pa.array(["https://www.example.com/a/b", "http://x.org/", "nope", None])
    pattern = "^https?://(?:www\\.)?([^/]+)/.*$"
    assert pg_regex.compile_are(pattern, pg_regex.Options()).simple
    fast = xre._re2_replace(urls, pattern, "\\1", "")
    assert fast is not None and fast.to_pylist() == ["example.com", "x.org", "nope", None]
