"""Run a query on raympp and on an oracle and judge the pair: agree, refused or disagree.

- refused: raympp failed with SQLSTATE 0A000 (feature not supported). Counted, never hidden.
- agree: both succeeded with the same answer, or both failed.
- disagree: a different answer, a raympp error other than 0A000 where the oracle succeeded,
  or a raympp answer where the oracle failed.

Answers compare exactly for integers, text, dates, booleans and numerics (as Decimal, so
1.50 = 1.5), floats within a relative 1e-9. One numeric exception, stated in every report:
PostgreSQL gives a quotient (`/`, avg) about 16 significant digits, a scale that varies
with each value (20 places for 1/3, 8 for 3000000001/3); raympp's numeric columns have one
scale, 16 places for quotients. So when raympp's value has 16 or more places, the two
must agree to every place the shorter of them shows (within one unit there): the digits
beyond it are the divergence recorded in issue 14 (numerics keeping each value's own
scale), not counted here. Such a value (raympp scale 16 or more: only quotients and what
is computed from them have it) is compared within a relative 1e-12, as floats are: the
rounding of the quotient carries through later arithmetic. The generator casts numerics
to text only after round(x, 2), for the same reason. Rows are compared in order only when the
query's outermost ORDER BY covers every output column; otherwise as multisets (the
generator never puts LIMIT under an ORDER BY that leaves ties). Against PostgreSQL the
result columns' type categories (integer, numeric, float, text, date, bool) must match too.

`shrink` reduces a disagreeing query with sqlglot (drop clauses, joins, select items, set
operation branches, replace an expression by one of its operands) while it keeps
disagreeing in the same way.

Run standalone against a running server (`raympp serve`):
    .venv/bin/python tests/differential/compare.py --port 5433 --seeds 1 2 --n 100 \\
        [--pg 'host=... port=... user=...']
"""

from __future__ import annotations

import collections
import datetime as dt
import importlib.util
import math
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFUSED = "0A000"


def _slt_runner():
    """tests/slt/runner.py (its oracle settings and tolerances), loaded under its own name."""
    name = "differential_slt_runner"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE.parent / "slt" / "runner.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


_runner = _slt_runner()
FLOAT_REL_TOL = _runner.FLOAT_REL_TOL
FLOAT_ABS_TOL = _runner.FLOAT_ABS_TOL

# --- answers ---------------------------------------------------------------------------------

_OID_CATEGORY = {16: "bool", 20: "int", 21: "int", 23: "int", 26: "int", 1700: "numeric",
                 700: "float", 701: "float", 18: "text", 19: "text", 25: "text", 1042: "text",
                 1043: "text", 1082: "date", 1114: "timestamp", 1184: "timestamptz"}


def _duck_category(type_name: str) -> str:
    t = str(type_name).upper()
    if t.startswith("DECIMAL"):
        return "numeric"
    if t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT", "UHUGEINT"):
        return "int"
    if t in ("FLOAT", "DOUBLE"):
        return "float"
    return {"VARCHAR": "text", "DATE": "date", "BOOLEAN": "bool",
            "TIMESTAMP": "timestamp"}.get(t, t.lower())


def _value(category: str, v):
    """A Python value from a driver, in a form both engines' answers share."""
    if v is None:
        return None
    if category == "int":
        return int(v)
    if category == "numeric":
        return v if isinstance(v, Decimal) else Decimal(str(v))
    if category == "float":
        return float(v)
    if category == "bool":
        return v if isinstance(v, bool) else {"t": True, "f": False, "true": True,
                                              "false": False}[str(v)]
    if category == "date" and isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    return v if isinstance(v, str) else str(v)


@dataclass
class Answer:
    names: list[str]
    categories: list[str]
    rows: list[tuple]


class EngineError(Exception):
    def __init__(self, sqlstate: str | None, message: str):
        super().__init__(f"{sqlstate or '-----'}: {message}")
        self.sqlstate = sqlstate
        self.message = message


class PgWire:
    """raympp or PostgreSQL through a psycopg connection (autocommit)."""

    def __init__(self, name: str, conn, statement_timeout_ms: int = 30_000,
                 reconnect: Callable | None = None):
        self.name = name
        self.strict_types = True
        self.timeout_ms = int(statement_timeout_ms)
        self.reconnect = reconnect   # a new connection after this one broke (or None)
        self._use(conn)

    def _use(self, conn) -> None:
        self.conn = conn
        try:
            conn.execute(f"SET statement_timeout = {self.timeout_ms}")
        except Exception:  # noqa: BLE001, S110 - an engine without the setting still answers
            pass

    def execute(self, sql: str) -> None:
        self.run(sql)

    def run(self, sql: str) -> Answer | None:
        import psycopg

        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
                if cur.description is None:
                    return None
                cats = [_OID_CATEGORY.get(d.type_code, f"oid{d.type_code}")
                        for d in cur.description]
                rows = [tuple(_value(c, v) for c, v in zip(cats, row)) for row in cur.fetchall()]
                return Answer([d.name for d in cur.description], cats, rows)
        except psycopg.Error as e:
            message = (e.diag.message_primary if e.diag else None) or str(e)
            if self.conn.closed and self.reconnect is not None:
                self._use(self.reconnect())   # this query fails; the next ones run again
                message = f"the connection broke: {message}"
            raise EngineError(e.sqlstate, message.strip().split("\n")[0]) from None

        except (ValueError, KeyError, ArithmeticError) as e:   # a value that does not parse
            raise EngineError("XXBAD", f"unreadable value: {e!r}") from None

    def close(self):
        self.conn.close()


class PostgresDatabase(PgWire):
    """The oracle on PostgreSQL: a fresh database in the C collation (raympp's), dropped on
    close. Without the right to create databases, a fresh schema with text columns in the C
    collation instead.

    `connect(dbname)` gives an autocommit psycopg connection to the server (the pg_oracle
    fixture's `.connect`, or `connector(conninfo)`)."""

    SESSION = ("SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, MDY'")   # raympp's defaults

    def __init__(self, connect: Callable, name: str):
        import psycopg

        self.db = name
        self.admin = connect("postgres")
        self.schema = None
        try:
            self.admin.execute(f"DROP DATABASE IF EXISTS {name}")
            self.admin.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' "
                               f"LC_COLLATE 'C' LC_CTYPE 'C'")
            conn = connect(name)
        except psycopg.errors.InsufficientPrivilege:
            self.schema = name
            self.admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
            self.admin.execute(f"CREATE SCHEMA {name}")
            conn = connect("postgres")
            conn.execute(f"SET search_path = {name}")
        for s in self.SESSION:
            conn.execute(s)
        super().__init__("PostgreSQL", conn)

    def execute(self, sql: str) -> None:
        sql = _runner.Oracle.translate(sql)
        if self.schema and re.match(r"\s*CREATE\s+TABLE", sql, re.IGNORECASE):
            sql = re.sub(r"\btext\b", 'text COLLATE "C"', sql)
        self.run(sql)

    def close(self):
        self.conn.close()
        try:
            if self.schema:
                self.admin.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
            else:
                self.admin.execute(f"DROP DATABASE IF EXISTS {self.db}")
        finally:
            self.admin.close()


def connector(conninfo: str) -> Callable:
    """connect(dbname) for a PostgreSQL conninfo string."""
    def connect(dbname: str):
        import psycopg

        return psycopg.connect(conninfo, dbname=dbname, autocommit=True, connect_timeout=30)
    return connect


class DuckDB:

    """DuckDB in memory with PostgreSQL's semantics where they differ (as the SLT oracle)."""

    name = "DuckDB"
    strict_types = False   # avg is a double in DuckDB, a numeric in PostgreSQL

    def __init__(self):
        import duckdb

        self.conn = duckdb.connect(":memory:")
        for s in _runner.Oracle.SETUP:
            self.conn.execute(s)

    def execute(self, sql: str) -> None:
        if re.match(r"\s*ANALYZE\b", sql, re.IGNORECASE):
            return
        self.conn.execute(_runner.Oracle.translate(sql))

    def run(self, sql: str) -> Answer | None:
        try:
            cur = self.conn.execute(_runner.Oracle.translate(sql))
            if cur.description is None:
                return None
            cats = [_duck_category(d[1]) for d in cur.description]
            rows = [tuple(_value(c, v) for c, v in zip(cats, row)) for row in cur.fetchall()]
            return Answer([d[0] for d in cur.description], cats, rows)
        except Exception as e:  # noqa: BLE001 - duckdb raises many classes; all are answers
            raise EngineError(None, f"{type(e).__name__}: {str(e).strip().splitlines()[0]}") \
                from None

    def close(self):
        self.conn.close()


class Cached:
    """An oracle whose answers (and errors) are remembered per SQL text."""

    def __init__(self, engine):
        self.engine = engine
        self.name = engine.name
        self.strict_types = engine.strict_types
        self.cache: dict[str, object] = {}

    def execute(self, sql):
        self.engine.execute(sql)

    def run(self, sql):
        if sql not in self.cache:
            try:
                self.cache[sql] = self.engine.run(sql)
            except EngineError as e:
                self.cache[sql] = e
        got = self.cache[sql]
        if isinstance(got, EngineError):
            raise got
        return got

    def close(self):
        self.engine.close()


# --- comparing -------------------------------------------------------------------------------

def _is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def same_value(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if _is_number(a) and _is_number(b):
        if isinstance(a, float) or isinstance(b, float):
            fa, fb = float(a), float(b)
            if math.isnan(fa) or math.isnan(fb):
                return math.isnan(fa) and math.isnan(fb)
            return math.isclose(fa, fb, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)
        return Decimal(a) == Decimal(b) or _same_quotient(Decimal(a), Decimal(b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


QUOTIENT_PLACES = 16   # raympp's scale of numeric quotients (see the module docstring)


def _same_quotient(a: Decimal, b: Decimal) -> bool:
    """A fixed-scale quotient against a value-scaled one (see the module docstring)."""
    if not (a.is_finite() and b.is_finite()):
        return False
    if min(a.as_tuple().exponent, b.as_tuple().exponent) > -QUOTIENT_PLACES:
        return False
    return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-15)


def _sort_key(row: tuple):
    out = []
    for v in row:
        if v is None:
            out.append((0, 0))
        elif isinstance(v, bool):
            out.append((1, int(v)))
        elif isinstance(v, float):
            out.append((2, float(f"{v:.9g}")))   # near-equal floats sort alike
        elif _is_number(v):
            out.append((2, v))                   # ints and numerics sort exactly

        else:
            out.append((3, str(v)))
    return tuple(out)


def fully_ordered(sql: str, names: list[str]) -> bool:
    """Whether the outermost ORDER BY names every output column (by position or name)."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.SqlglotError:
        return False
    order = tree.args.get("order")
    if not isinstance(order, exp.Order):
        return False
    covered = set()
    for o in order.expressions:
        key = o.this if isinstance(o, exp.Ordered) else o
        if isinstance(key, exp.Literal) and not key.is_string and key.this.isdigit():
            covered.add(int(key.this))
        elif isinstance(key, exp.Column) and not key.table:
            covered |= {i + 1 for i, n in enumerate(names) if n == key.name}
    return covered >= set(range(1, len(names) + 1))


def _show(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, Decimal) and v.is_finite():
        return format(v, "f")   # as PostgreSQL prints it (0.0000, not 0E-4)
    return str(v)


def render_rows(rows: list[tuple], limit: int = 8) -> str:
    if not rows:
        return "(no rows)"
    out = [" | ".join(_show(v) for v in r) for r in rows[:limit]]
    if len(rows) > limit:
        out.append(f"... ({len(rows)} rows)")
    return "; ".join(out)


def compare_rows(mine: list[tuple], theirs: list[tuple], ordered: bool) -> str | None:
    """None when the rows agree, else what differs."""
    def equal(xs, ys):
        return len(xs) == len(ys) and all(
            len(x) == len(y) and all(same_value(a, b) for a, b in zip(x, y))
            for x, y in zip(xs, ys))

    if ordered and equal(mine, theirs):
        return None
    a, b = sorted(mine, key=_sort_key), sorted(theirs, key=_sort_key)
    if equal(a, b):
        if not ordered:
            return None
        has_float = any(isinstance(v, float) for r in mine + theirs for v in r)
        if has_float:   # ties between near-equal floats may sort either way
            return None
        for i, (x, y) in enumerate(zip(mine, theirs)):
            if not equal([x], [y]):
                return f"same rows, different order (first at row {i + 1})"
    first = next(((i, x, y) for i, (x, y) in enumerate(zip(a, b)) if not equal([x], [y])), None)
    ka = collections.Counter(_sort_key(r) for r in a)
    kb = collections.Counter(_sort_key(r) for r in b)
    rep_a = {_sort_key(r): r for r in a}
    rep_b = {_sort_key(r): r for r in b}
    extra = [rep_a[k] for k in sorted((ka - kb).elements())]      # surplus copies only
    missing = [rep_b[k] for k in sorted((kb - ka).elements())]


    parts = [f"{len(mine)} rows vs {len(theirs)}"]
    if extra:
        parts.append(f"only raympp: {render_rows(extra, 4)}")
    if missing:
        parts.append(f"only oracle: {render_rows(missing, 4)}")
    if first is not None and len(a) == len(b) and _only_numeric_digits(a, b):
        parts[0] = ("numeric values differ only in digits past the last one of the shorter "
                    "(result scale)")
    if first is not None:
        i, x, y = first
        parts.append(f"first difference (rows sorted): raympp {render_rows([x])} vs "
                     f"oracle {render_rows([y])}")
    return "; ".join(parts)


def _only_numeric_digits(a: list[tuple], b: list[tuple]) -> bool:
    """Whether every difference between the sorted rows is a numeric's last digits."""
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            if same_value(u, v):
                continue
            if not (isinstance(u, Decimal) and isinstance(v, Decimal)) or \
                    not (u.is_finite() and v.is_finite()):
                return False
            # Within one unit in the last place of the less precise of the two.
            eu, ev = u.as_tuple().exponent, v.as_tuple().exponent
            if eu == ev or abs(u - v) >= Decimal(1).scaleb(max(eu, ev)):
                return False

    return True


@dataclass
class Verdict:
    outcome: str                  # "agree" | "refused" | "disagree"
    cause: str = ""               # for a disagreement: rows, types, raympp-error:XXXXX, ...
    detail: str = ""
    message: str = ""             # raympp's error message (refused, or an error)
    mine: str = ""                # raympp's answer, rendered
    theirs: str = ""              # the oracle's answer, rendered


def judge(sql: str, raympp, oracle) -> Verdict:
    try:
        got = raympp.run(sql)
        mine_err = None
    except EngineError as e:
        got, mine_err = None, e
    if mine_err is not None and mine_err.sqlstate == REFUSED:
        return Verdict("refused", message=mine_err.message)
    try:
        want = oracle.run(sql)
        their_err = None
    except EngineError as e:
        want, their_err = None, e
    if mine_err is not None and their_err is not None:
        return Verdict("agree", "both-error", message=mine_err.message)
    if mine_err is not None:
        return Verdict("disagree", f"raympp-error:{mine_err.sqlstate}",
                       f"raympp failed: {mine_err}", mine_err.message,
                       f"ERROR {mine_err}", render_rows(want.rows))
    if their_err is not None:
        return Verdict("disagree", "oracle-error", f"{oracle.name} failed: {their_err}",
                       mine=render_rows(got.rows), theirs=f"ERROR {their_err}")
    if got is None or want is None:
        return Verdict("disagree", "no-result", "one side returned no result set")
    if len(got.names) != len(want.names):
        return Verdict("disagree", "columns",
                       f"{len(got.names)} columns vs {len(want.names)}",
                       mine=render_rows(got.rows), theirs=render_rows(want.rows))
    diff = compare_rows(got.rows, want.rows, fully_ordered(sql, got.names))
    types = ""
    if getattr(oracle, "strict_types", False):
        bad = [f"column {i + 1}: {a} vs {b}" for i, (a, b)
               in enumerate(zip(got.categories, want.categories)) if a != b]
        types = "; ".join(bad)
    if diff is None and not types:
        return Verdict("agree")
    cause = ("rows:numeric-digits" if diff and diff.startswith("numeric values differ")
             else "rows" if diff else "types")

    detail = "; ".join(x for x in (diff, f"result types differ ({types})" if types else "") if x)
    mine = render_rows(got.rows) + (f"  [{', '.join(got.categories)}]" if types else "")
    theirs = render_rows(want.rows) + (f"  [{', '.join(want.categories)}]" if types else "")
    return Verdict("disagree", cause, detail, mine=mine, theirs=theirs)


# --- shrinking -------------------------------------------------------------------------------

def _has_unordered_limit(tree) -> bool:
    from sqlglot import exp

    for node in tree.walk():
        if isinstance(node, (exp.Select, exp.Union, exp.Intersect, exp.Except)) and \
                (node.args.get("limit") or node.args.get("offset")) and \
                not node.args.get("order"):
            return True
    return False


def _mutations(node):
    """Ways to make `node` smaller: each a function that edits it in place (in a copy)."""
    from sqlglot import exp

    out = []
    parent = node.parent
    if isinstance(node, (exp.Where, exp.Having, exp.Limit, exp.Offset, exp.Distinct, exp.Group)):
        out.append(lambda n: n.pop())
    if isinstance(node, exp.Order) and parent is not None and not (
            parent.args.get("limit") or parent.args.get("offset")):
        out.append(lambda n: n.pop())
    if isinstance(node, (exp.Join, exp.CTE, exp.From)):
        out.append(lambda n: n.pop())
    from_key = "from_" if "from_" in exp.Select.arg_types else "from"   # sqlglot >= 28: from_
    if isinstance(node, exp.Join) and isinstance(parent, exp.Select) and parent.args.get(from_key):
        def keep_right(n):   # FROM a JOIN b ON ...  ->  FROM b
            n.parent.args[from_key].set("this", n.this.copy())
            n.pop()

        out.append(keep_right)
    if isinstance(parent, exp.Select) and node.arg_key == "expressions" \
            and len(parent.expressions) > 1:
        out.append(lambda n: n.pop())
    if isinstance(node, (exp.Union, exp.Intersect, exp.Except)):
        out.append(lambda n: n.replace(n.this.unnest() if isinstance(n.this, exp.Subquery)
                                       and not n.this.args.get("alias") else n.this))
        out.append(lambda n: n.replace(n.expression.unnest()
                                       if isinstance(n.expression, exp.Subquery)
                                       and not n.expression.args.get("alias") else n.expression))
    if isinstance(node, exp.Nullif) or isinstance(parent, (exp.Order, exp.Ordered)):
        return out
    if isinstance(node, (exp.And, exp.Or)):
        out.append(lambda n: n.replace(n.this))
        out.append(lambda n: n.replace(n.expression))
    elif isinstance(node, (exp.Not, exp.Paren)):
        out.append(lambda n: n.replace(n.this))
    elif isinstance(node, exp.Case):
        for i in range(len(node.args.get("ifs") or [])):
            out.append(lambda n, i=i: n.replace(n.args["ifs"][i].args["true"]))
        if node.args.get("default") is not None:
            out.append(lambda n: n.replace(n.args["default"]))
    elif isinstance(node, (exp.Binary, exp.Func, exp.Cast, exp.Neg)) and not isinstance(
            node, (exp.AggFunc, exp.Count)) and not isinstance(
            node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike,
                   exp.Is, exp.In, exp.Exists, exp.Any, exp.All)):
        for child in node.iter_expressions():
            if isinstance(child, (exp.Column, exp.Literal, exp.Binary, exp.Func, exp.Cast,
                                  exp.Paren, exp.Case, exp.Neg, exp.Null, exp.Boolean)):
                key, idx = child.arg_key, child.index
                out.append(lambda n, key=key, idx=idx: n.replace(
                    (n.args[key][idx] if idx is not None else n.args[key]).copy()))
    elif isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like,
                           exp.ILike, exp.Is, exp.In, exp.Exists, exp.Between)) and \
            isinstance(parent, (exp.And, exp.Or, exp.Not, exp.Paren, exp.Where, exp.Join)):

        out.append(lambda n: n.replace(exp.true()))
    return out


def candidates(sql: str) -> list[str]:
    """Smaller variants of `sql`, shortest first."""
    import sqlglot

    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.SqlglotError:
        return []
    n_nodes = sum(1 for _ in tree.walk())
    out = set()
    for i in range(n_nodes):
        node = next(x for j, x in enumerate(tree.walk()) if j == i)
        for k in range(len(_mutations(node))):
            t = tree.copy()
            target = next(x for j, x in enumerate(t.walk()) if j == i)
            try:
                muts = _mutations(target)
                if k >= len(muts):
                    continue
                res = muts[k](target)
                root = res if target is t and res is not None else t
                if _has_unordered_limit(root):
                    continue
                s = root.sql(dialect="postgres")
            except Exception:  # noqa: BLE001, S112 - a mutation that does not apply here
                continue
            if len(s) < len(sql):
                out.add(s)
    return sorted(out, key=lambda s: (len(s), s))


def shrink(sql: str, check: Callable[[str], Verdict], cause: str, budget_s: float = 20.0,
           max_checks: int = 600) -> tuple[str, Verdict | None]:
    """Greedily the shortest variant of `sql` that still disagrees with the same cause."""
    import sqlglot

    deadline = time.monotonic() + budget_s
    best, best_v = sql, None
    try:   # the normalized text first: shorter, and what the candidates are built from
        norm = sqlglot.parse_one(sql, read="postgres").sql(dialect="postgres")
        v = check(norm)
        if v.outcome == "disagree" and v.cause == cause:
            best, best_v = norm, v
    except sqlglot.errors.SqlglotError:
        pass   # sqlglot cannot parse it: shrink nothing, keep the original
    seen = {best}
    checks = 0
    improved = True
    while improved and time.monotonic() < deadline and checks < max_checks:
        improved = False
        for cand in candidates(best):
            if cand in seen:
                continue
            seen.add(cand)
            if time.monotonic() > deadline or checks >= max_checks:
                break
            checks += 1
            v = check(cand)
            if v.outcome == "disagree" and v.cause == cause:
                best, best_v, improved = cand, v, True
                break
    return best, best_v


# --- bookkeeping -----------------------------------------------------------------------------

@dataclass
class Record:
    seed: int
    n_segments: int
    sql: str
    tags: frozenset
    verdict: Verdict
    minimal: str | None = None
    minimal_verdict: Verdict | None = None


@dataclass
class Collector:
    """Every judged query of a session, for the summary by construct."""
    records: list[Record] = field(default_factory=list)
    oracle_name: str = ""

    def add(self, record: Record) -> None:
        self.records.append(record)

    def by_construct(self) -> dict[str, collections.Counter]:
        """Outcomes per construct tag, per family of tags ("join:*": the runs that use any
        of them) and over all runs."""
        table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for r in self.records:
            families = {t.split(":")[0] + ":*" for t in r.tags
                        if ":" in t and not t.startswith("shape:")}
            for t in r.tags | families | {"(all)"}:
                table[t][r.verdict.outcome] += 1
        return table


    def summary(self) -> str:
        if not self.records:
            return ""
        lines = [f"differential: {len(self.records)} query runs against {self.oracle_name}"]
        table = self.by_construct()
        width = max(len(t) for t in table)
        lines.append(f"  {'construct':<{width}}  {'runs':>6} {'agree':>6} {'refused':>7} "
                     f"{'disagree':>8}")
        for t in sorted(table, key=lambda t: (t != "(all)", t)):
            c = table[t]
            lines.append(f"  {t:<{width}}  {sum(c.values()):>6} {c['agree']:>6} "
                         f"{c['refused']:>7} {c['disagree']:>8}")
        refused = [r for r in self.records if r.verdict.outcome == "refused"]
        if refused:
            lines.append(f"refusals (SQLSTATE 0A000) by message: {len(refused)}")
            groups = collections.defaultdict(list)
            for r in refused:
                groups[_refusal_key(r.verdict.message)].append(r)
            for key, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
                common = frozenset.intersection(*(r.tags for r in rs))
                common = sorted(t for t in common if not t.startswith("shape:")) or ["-"]
                example = min(rs, key=lambda r: len(r.sql))
                lines.append(f"  {len(rs):>5}  {key}")
                lines.append(f"         constructs in all of them: {', '.join(common)[:300]}")
                lines.append(f"         e.g. {example.sql[:400]}")
        bad = [r for r in self.records if r.verdict.outcome == "disagree"]
        if bad:
            lines.append(f"disagreements by cause: {len(bad)}")
            causes = collections.defaultdict(list)
            for r in bad:
                v = r.minimal_verdict or r.verdict
                causes[(v.cause, _refusal_key(v.message) if v.message else "")].append(r)
            for (cause, message), rs in sorted(causes.items(), key=lambda kv: -len(kv[1])):
                example = min((r.minimal or r.sql for r in rs), key=len)
                lines.append(f"  {len(rs):>5}  [{cause}] {message}")
                lines.append(f"         e.g. {example[:400]}")
            lines.append("disagreements (minimal SQL, distinct):")

            for minimal, rs in _group_disagreements(bad).items():
                segs = sorted({r.n_segments for r in rs})
                v = rs[0].minimal_verdict or rs[0].verdict
                lines.append(f"  [{v.cause}] x{len(rs)} at segments {segs}: {minimal}")
        return "\n".join(lines)

    def report(self) -> str:
        """The summary and every refused and disagreeing query in full."""
        out = [self.summary(), "", "== refused queries =="]
        for r in self.records:
            if r.verdict.outcome == "refused":
                out.append(f"[seed {r.seed}, {r.n_segments} seg] {r.verdict.message}\n  {r.sql}")
        out += ["", "== disagreements =="]
        for r in self.records:
            if r.verdict.outcome == "disagree":
                out.append(render_disagreement(r))
        return "\n".join(out)


STATS = Collector()   # this session's records (tests/differential/conftest.py prints them)


def _refusal_key(message: str) -> str:

    """A refusal message with its query-specific parts (quoted SQL, names) blurred."""
    m = re.sub(r"'[^']*'", "'…'", message)
    m = re.sub(r'"[^"]*"', '"…"', m)
    return m[:200]


def _group_disagreements(records: list[Record]) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = collections.defaultdict(list)
    for r in records:
        groups[r.minimal or r.sql].append(r)
    return groups


def render_disagreement(r: Record) -> str:
    v = r.minimal_verdict or r.verdict
    lines = [f"[{v.cause}] seed {r.seed}, {r.n_segments} segments",
             f"  minimal SQL: {r.minimal}" if r.minimal else f"  SQL (not reduced): {r.sql}",

             f"  {v.detail}",
             f"  raympp: {v.mine}",
             f"  oracle: {v.theirs}"]
    if r.minimal and r.minimal != r.sql:
        lines.append(f"  original:    {r.sql}")
    return "\n".join(lines)


# --- a standalone run ------------------------------------------------------------------------

def main(argv=None) -> int:
    import argparse

    import psycopg

    sys.path.insert(0, str(HERE))
    import generator

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5433)
    p.add_argument("--seeds", type=int, nargs="+", default=[1])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--pg", help="PostgreSQL conninfo of the oracle (default: DuckDB)")
    p.add_argument("--shrink", type=float, default=20.0, help="seconds per disagreement")
    p.add_argument("--show", action="store_true", help="print every query's outcome")
    args = p.parse_args(argv)
    stats = Collector()
    for seed in args.seeds:
        rconn = psycopg.connect(host=args.host, port=args.port, user="raympp", dbname="raympp",
                                autocommit=True)
        mine = PgWire("raympp", rconn)
        for t in generator.TABLE_NAMES:
            mine.execute(f"DROP TABLE IF EXISTS {t}")
        oracle_engine = (PostgresDatabase(connector(args.pg), f"raympp_diff_{seed}")
                         if args.pg else DuckDB())

        oracle = Cached(oracle_engine)
        stats.oracle_name = oracle.name
        for s in generator.schema(seed):
            mine.execute(s)
            oracle.execute(s)

        for q in generator.generate(seed, args.n):
            t0 = time.monotonic()
            v = judge(q.sql, mine, oracle)
            rec = Record(seed, 0, q.sql, q.tags, v)
            if v.outcome == "disagree" and args.shrink > 0:
                rec.minimal, rec.minimal_verdict = shrink(
                    q.sql, lambda s, m=mine, o=oracle: judge(s, m, o), v.cause, args.shrink)

            stats.add(rec)
            if args.show or v.outcome == "disagree":
                print(f"{v.outcome:9} {time.monotonic() - t0:6.2f}s {v.cause} {q.sql[:3000]}")
                if v.outcome == "refused":
                    print(f"          {v.message}")

                if v.outcome == "disagree":
                    print(render_disagreement(rec))
        oracle.close()
        mine.close()
    print(stats.summary())
    return 1 if any(r.verdict.outcome == "disagree" for r in stats.records) else 0


if __name__ == "__main__":
    sys.exit(main())
