"""Checking an engine's answer to a ClickBench query against an oracle's, fairly under ties.

Most of the 43 queries end in ORDER BY ... LIMIT, and many order by a count that ties, so
the rows an engine may return are not unique. `oracle_query` turns a query into one the
oracle (DuckDB) runs without LIMIT/OFFSET and with every ORDER BY key as an extra output
column; `check` then accepts exactly the answers PostgreSQL's semantics allow:

- without ORDER BY and LIMIT: the same multiset of rows;
- with LIMIT: as many rows as the window [OFFSET, OFFSET + LIMIT) of the full result holds;
  every row whose sort key lies strictly inside the window's key range is there; the
  others come from the rows tied with the window's first or last key; when the sort keys
  are output columns, the engine's rows are in the order they demand (the same key values
  position by position);
- with ORDER BY and no LIMIT: the same, over the whole result.

Values are normalised first: whole Decimals and floats below 2^53 become ints, other
Decimals and floats become floats rounded to 9 significant digits, so that numeric(38,16),
PostgreSQL's numeric (whose avg of large bigints has no fractional digits) and double
answers compare; ints (bigint keys such as UserID) stay exact.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from collections import Counter

import sqlglot
from sqlglot import exp

SIGNIFICANT = 9


@dataclasses.dataclass(frozen=True)
class OracleQuery:
    sql: str                          # DuckDB SQL: no LIMIT/OFFSET, keys appended
    n_keys: int                       # ORDER BY keys, appended as the last columns
    shown: tuple[int | None, ...]     # per key: the output column that shows it, if any
    limit: int | None
    offset: int

    @property
    def ordered(self) -> bool:
        return self.n_keys > 0

    @property
    def visible(self) -> bool:
        return all(p is not None for p in self.shown)


def oracle_query(sql: str) -> OracleQuery:
    tree = sqlglot.parse_one(sql.rstrip().rstrip(";"), read="postgres")
    limit = _int(tree.args.get("limit"))
    offset = _int(tree.args.get("offset")) or 0
    tree.set("limit", None)
    tree.set("offset", None)
    outputs = list(tree.expressions)
    order = tree.args.get("order")
    shown = []
    for j, o in enumerate(order.expressions if order is not None else []):
        pos = _output_position(o.this, outputs)
        star = any(isinstance(x, exp.Star) for x in outputs)
        shown.append(None if star else pos)
        key = o.this
        if pos is not None and not star:
            key = outputs[pos].this if isinstance(outputs[pos], exp.Alias) else outputs[pos]
        tree.append("expressions", exp.alias_(key.copy(), f"_key{j}"))
    return OracleQuery(tree.sql(dialect="duckdb"), len(shown), tuple(shown), limit, offset)


def _int(node) -> int | None:
    if node is None:
        return None
    value = node.args.get("expression") or node.this
    return int(value.name)


def _output_position(key: exp.Expression, outputs: list[exp.Expression]) -> int | None:
    if isinstance(key, exp.Literal) and key.is_int:
        return int(key.name) - 1
    if isinstance(key, exp.Column) and not key.table:
        for i, o in enumerate(outputs):
            if isinstance(o, exp.Alias) and o.alias.lower() == key.name.lower():
                return i
    for i, o in enumerate(outputs):
        inner = o.this if isinstance(o, exp.Alias) else o
        if inner == key:
            return i
    return None


def normalise(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (decimal.Decimal, float)):
        f = float(value)
        if f != f:
            return "NaN"
        if f.is_integer() and abs(f) < 2**53:
            return int(f)
        return float(f"{f:.{SIGNIFICANT}g}")
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None)
    return value


def _row(r) -> tuple:
    return tuple(normalise(v) for v in r)


def check(q: OracleQuery, got: list, oracle_rows: list) -> str | None:
    """None when `got` (the engine's rows) is a right answer, else what is wrong."""
    got = [_row(r) for r in got]
    full = [_row(r) for r in oracle_rows]
    n_out = len(full[0]) - q.n_keys if full else None
    outs = [r[:n_out] for r in full]
    if got and full and len(got[0]) != n_out:
        return f"{len(got[0])} columns, expected {n_out}"
    lo = min(q.offset, len(full))
    hi = len(full) if q.limit is None else min(len(full), lo + q.limit)
    if len(got) != hi - lo:
        return f"{len(got)} rows, expected {hi - lo}"
    if not got:
        return None
    if not q.ordered:
        if q.limit is None or hi - lo == len(full):
            return _multiset_diff(got, outs)
        extra = Counter(got) - Counter(outs)
        return f"rows not in the full result: {list(extra)[:3]}" if extra else None
    keys = [r[n_out:] for r in full]
    first, last = keys[lo], keys[hi - 1]
    determined = [outs[i] for i in range(lo, hi) if keys[i] != first and keys[i] != last]
    pool = Counter(outs[i] for i in range(len(full)) if keys[i] in (first, last))
    rest = Counter(got) - Counter(determined)
    missing = Counter(determined) - Counter(got)
    if missing:
        return f"missing rows {list(missing)[:3]}"
    wrong = rest - pool
    if wrong:
        return f"rows that do not belong in the window: {list(wrong)[:3]}"
    if q.visible:
        want = keys[lo:hi]
        have = [tuple(r[k] for k in q.shown) for r in got]
        if have != want:
            at = next(i for i, (a, b) in enumerate(zip(have, want)) if a != b)
            return f"sort keys differ at row {lo + at}: {have[at]} != {want[at]}"
    return None


def _multiset_diff(got: list[tuple], want: list[tuple]) -> str | None:
    extra, missing = Counter(got) - Counter(want), Counter(want) - Counter(got)
    if not extra and not missing:
        return None
    return f"unexpected {list(extra)[:3]}, missing {list(missing)[:3]}"


def same_rows(a: list, b: list) -> bool:
    """The same multiset of rows, values normalised as `check` does."""
    return _multiset_diff([_row(r) for r in a], [_row(r) for r in b]) is None
