"""segment/kernels/substring_search.py: `LIKE '%needle%'` by one search of the data buffer
answers as Arrow's per-string match_substring does."""

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from segment.kernels import expr_string, substring_search


def _expect(arr, needle):
    return pc.match_substring(arr, needle)


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string(), pa.binary()])
def test_random_strings_agree_with_arrow(type_):
    rng = random.Random(7)
    alphabet = "abg\u00e9\u20ac"  # one-, two- and three-byte characters
    values = [None if rng.random() < 0.1 else
              "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 9)))
              for _ in range(3000)]
    if type_ == pa.binary():
        values = [None if v is None else v.encode() for v in values]
    arr = pa.array(values, type=type_)
    for needle in ["a", "ab", "gg", "\u00e9a", "\u20ac\u20ac", "abgab"]:
        got = substring_search.contains(arr, needle)
        assert got.equals(_expect(arr, needle.encode() if type_ == pa.binary() else needle))


def test_hits_that_straddle_rows_do_not_count():
    arr = pa.array(["xgoo", "gle", "googl", "e", "google", "", "agoogleb"])
    assert substring_search.contains(arr, "google").to_pylist() == [
        False, False, False, False, True, False, True]


def test_sliced_array_and_empty_data():
    arr = pa.array(["google", "nope", "xgooglex", None, "google"])[1:4]
    assert substring_search.contains(arr, "google").to_pylist() == [False, True, None]
    assert substring_search.contains(pa.array(["", ""]), "g").to_pylist() == [False, False]
    assert substring_search.contains(pa.array([], pa.string()), "g").to_pylist() == []


def test_like_takes_the_search_only_for_plain_infix_patterns():
    arr = pa.array(["a_b", "axb", "100%", "x%y", None])
    assert expr_string._infix("%_%") is None
    assert expr_string._infix("%a\\_b%") is None
    assert expr_string._infix("a%") is None
    assert expr_string._infix("%%ab%%") == "ab"
    for pattern in ["%_%", "%a\\_b%", "%0\\%%", "%b%", "%%x%%"]:
        got = expr_string.like(arr, pa.scalar(pattern), False, len(arr))
        assert got.equals(pc.match_like(arr, pattern)), pattern
