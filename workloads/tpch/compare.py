"""Compare two engines' answers to a query: rows in order when the query has an outer
ORDER BY, as multisets otherwise; numbers with a tolerance.

Numbers of different engines differ in type and digits without being different answers:
- float (DuckDB's avg and decimal division) against anything: relative tolerance 1e-6.
- Decimal against Decimal: equal, or equal after rounding both to the fewer fractional
  digits of the two (never fewer than 2). PostgreSQL, and raympp after it, print avg and
  numeric division with 16 or more fractional digits where another engine keeps fewer;
  the rounding to the shorter one (2 places for Q22's avg of money) absorbs that. As a last
  resort the relative tolerance applies too.
- extract(year ...) is numeric in PostgreSQL and bigint in DuckDB: ints and Decimals
  compare by value.
Everything else (text, dates, NULL) must be equal.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import ROUND_HALF_EVEN, Decimal

REL_TOL = 1e-6
ABS_TOL = 1e-9
MIN_PLACES = 2


def _is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _places(d: Decimal) -> int:
    exp = d.as_tuple().exponent
    return -exp if isinstance(exp, int) and exp < 0 else 0


def same_value(a, b, rel_tol: float = REL_TOL) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if _is_number(a) and _is_number(b):
        if isinstance(a, float) or isinstance(b, float):
            fa, fb = float(a), float(b)
            if math.isnan(fa) or math.isnan(fb):
                return math.isnan(fa) and math.isnan(fb)
            return math.isclose(fa, fb, rel_tol=rel_tol, abs_tol=ABS_TOL)
        da, db = Decimal(a), Decimal(b)
        if da == db:
            return True
        places = max(MIN_PLACES, min(_places(da), _places(db)))
        q = Decimal(1).scaleb(-places)
        if da.quantize(q, ROUND_HALF_EVEN) == db.quantize(q, ROUND_HALF_EVEN):
            return True
        return math.isclose(float(da), float(db), rel_tol=rel_tol, abs_tol=ABS_TOL)
    if isinstance(a, dt.datetime) != isinstance(b, dt.datetime):
        return False
    return a == b


def same_row(a, b) -> bool:
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))


def _sort_key(row):
    def key(v):
        if v is None:
            return (0, 0)
        if _is_number(v):
            return (1, float(v))
        return (2, str(v))
    return tuple(key(v) for v in row)


def difference(got: list, want: list, ordered: bool) -> str | None:
    """None when `got` answers like `want`, else a short description of the first difference."""
    got, want = [tuple(r) for r in got], [tuple(r) for r in want]
    if len(got) != len(want):
        return (f"{len(got)} rows, expected {len(want)}; first rows got {got[:3]!r}, "
                f"expected {want[:3]!r}")
    a, b = (got, want) if ordered else (sorted(got, key=_sort_key), sorted(want, key=_sort_key))
    for i, (x, y) in enumerate(zip(a, b)):
        if not same_row(x, y):
            if ordered and difference(got, want, ordered=False) is None:
                return (f"the same rows in a different order: row {i} is {x!r}, "
                        f"expected {y!r}")
            return f"row {i}: got {x!r}, expected {y!r}"
    return None
