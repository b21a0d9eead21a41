"""Seeded random SQL for differential testing of raympp ("correct or refused").

`schema(seed)` gives the statements that create and fill four small tables, one per
distribution policy; `queries(seed, n)` gives n random SELECTs over them, and `generate`
the same queries with the constructs each one uses (its tags, for the refusal summary).

The data and the queries depend only on the seed, and the first k queries of a seed are the
same whatever n is. Every query is meant to have one correct answer under PostgreSQL's
semantics, so the generator avoids what would make an answer depend on the plan:

- LIMIT / OFFSET only under an ORDER BY of every output column (or of a unique key of the
  only table), a scalar subquery returns at most one row (an aggregate, a unique key, or
  ORDER BY + LIMIT 1 of a single column);
- no error that depends on evaluation order: divisors are NULLIF(x, 0), products are kept
  small, no scalar subquery that could return two rows;
- no floats in the data (avg of numeric stays numeric in PostgreSQL), text compared in the
  C collation (raympp's), no functions whose result is locale or time-zone dependent.

One function per construct; each records the construct as a tag (`self.tag`).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass, field
from decimal import Decimal

INT, NUM, TEXT, DATE, BOOL = "int", "num", "text", "date", "bool"
CATEGORIES = (INT, NUM, TEXT, DATE, BOOL)
NULL_TYPES = {INT: "int4", NUM: "numeric", TEXT: "text", DATE: "date", BOOL: "bool"}

# (name, SQL type, category). `id` is unique and never NULL in every table.
COLUMNS = (("id", "int4", INT), ("a", "int4", INT), ("b", "int8", INT),
           ("c", "numeric(10,2)", NUM), ("s", "text", TEXT), ("d", "date", DATE),
           ("f", "bool", BOOL))


@dataclass(frozen=True)
class TableSpec:
    name: str
    policy: str
    min_rows: int
    max_rows: int


TABLES = (TableSpec("df1", "DISTRIBUTED BY (a)", 100, 200),
          TableSpec("df2", "DISTRIBUTED BY (b)", 50, 150),
          TableSpec("df3", "DISTRIBUTED RANDOMLY", 20, 100),
          TableSpec("df4", "DISTRIBUTED REPLICATED", 20, 30))
SMALL_TABLES = ("df3", "df4")
TABLE_NAMES = tuple(t.name for t in TABLES)

WORDS = ("a", "b", "ab", "abc", "B", "Ab", "ba", "x_y", "x%y", "", " a", "zz", "hello",
         "Hello world", "it's", "a b", "b%")
LIKE_PATTERNS = ("a%", "%b", "_b%", "%b_", "%", "_", "", "a", "x_y", "x%", "%o w%", "A%", "__",
                 "%''%", "%!_%", "%!%%")   # '!' escapes: those get ESCAPE '!'
DATE0 = dt.date(2023, 12, 20)
_COLUMN_REF = re.compile(r"\b[a-z]\d+\.[a-z]")   # t1.a, i3.s, q2.c1, v5.x2


# --- the schema ------------------------------------------------------------------------------

def _sql_literal(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, Decimal)):
        return str(v)
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    return "'" + str(v).replace("'", "''") + "'"


def _rows(r: random.Random, n: int) -> list[tuple]:
    nulls = {name: r.choice((0.05, 0.15, 0.25, 0.4)) for name, _, _ in COLUMNS[1:]}

    def maybe(name, value):
        return None if r.random() < nulls[name] else value

    rows = []
    for i in range(1, n + 1):
        a = maybe("a", r.randint(-2, 12))
        big = r.random() < 0.05   # a few values outside int4 keep int8 honest
        b = maybe("b", r.choice((3_000_000_000, -2_500_000_001)) if big else r.randint(-3, 20))
        c = maybe("c", (Decimal(r.randint(-20, 60)) / 4 if r.random() < 0.8
                        else Decimal(r.randint(-999, 2999)) / 100).quantize(Decimal("0.01")))
        s = maybe("s", r.choice(WORDS))
        d = maybe("d", DATE0 + dt.timedelta(days=r.randint(0, 50)))
        f = maybe("f", r.random() < 0.5)
        rows.append((i, a, b, c, s, d, f))
    # Exact duplicates of the non-key columns.
    for _ in range(n // 10):
        src, dst = r.randrange(n), r.randrange(n)
        rows[dst] = (rows[dst][0],) + rows[src][1:]
    return rows


def schema(seed: int) -> list[str]:
    """CREATE TABLE (with raympp's distribution clauses) and INSERT statements for `seed`."""
    r = random.Random(f"schema-{seed}")
    cols = ", ".join(f"{name} {typ}" + (" NOT NULL" if name == "id" else "")
                     for name, typ, _ in COLUMNS)
    out = []
    for t in TABLES:
        out.append(f"CREATE TABLE {t.name} ({cols}) {t.policy}")
        rows = _rows(r, r.randint(t.min_rows, t.max_rows))
        values = ", ".join("(" + ", ".join(_sql_literal(v) for v in row) + ")" for row in rows)
        out.append(f"INSERT INTO {t.name} VALUES {values}")
    if seed % 2 == 0:   # half the seeds plan with statistics
        out += [f"ANALYZE {t.name}" for t in TABLES]
    return out


# --- query generation -----------------------------------------------------------------------

@dataclass
class Rel:
    """A relation in a FROM clause: a table, a derived table or a CTE, with its alias."""
    alias: str
    source: str                         # "df1", "q1" or "(SELECT ...)"
    cols: list[tuple[str, str]]         # (name, category)
    table: str | None = None            # the base table, if it is one
    small: bool = False                 # at most ~30 rows (cross and non-equi joins)

    def columns(self, cat: str) -> list[str]:
        return [f"{self.alias}.{n}" for n, c in self.cols if c == cat]


@dataclass
class Sel:
    sql: str
    types: list[str]
    single_table: Rel | None = None     # a plain SELECT over one base table (ORDER BY id)


@dataclass
class Generated:
    sql: str
    tags: frozenset


@dataclass
class Gen:
    seed: int
    r: random.Random = field(init=False)
    tags: set = field(default_factory=set)
    n_alias: int = 0
    sub_depth: int = 0
    ctes: list = field(default_factory=list)   # Rels of the CTEs in scope
    pending_where: list = field(default_factory=list)   # comma joins' conditions


    def __post_init__(self):
        self.r = random.Random(f"queries-{self.seed}")

    # --- helpers --------------------------------------------------------------------------

    def tag(self, *names: str) -> None:
        self.tags.update(names)

    def pick(self, weights: dict):
        keys = list(weights)
        return self.r.choices(keys, weights=[weights[k] for k in keys])[0]

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def alias(self, prefix: str = "t") -> str:
        self.n_alias += 1
        return f"{prefix}{self.n_alias}"

    # --- literals and leaves --------------------------------------------------------------

    def literal(self, cat: str) -> str:
        r = self.r
        if self.chance(0.04):
            self.tag("null:literal")
            return f"CAST(NULL AS {NULL_TYPES[cat]})"
        if cat == INT:
            return str(r.randint(-2, 12))
        if cat == NUM:
            return str(Decimal(r.randint(-8, 40)) / 4)
        if cat == TEXT:
            return _sql_literal(r.choice(WORDS))
        if cat == DATE:
            return _sql_literal(DATE0 + dt.timedelta(days=r.randint(0, 50)))
        return r.choice(("TRUE", "FALSE"))

    def column(self, cat: str, scope: list[Rel]) -> str | None:
        cols = [c for rel in scope for c in rel.columns(cat)]
        return self.r.choice(cols) if cols else None

    def int4_leaf(self, scope: list[Rel]) -> str:
        cols = [f"{rel.alias}.{n}" for rel in scope if rel.table for n in ("a", "id")]
        return self.r.choice(cols) if cols and self.chance(0.6) else str(self.r.randint(1, 10))

    def leaf(self, cat: str, scope: list[Rel]) -> str:
        col = self.column(cat, scope)
        if col and self.chance(0.8):
            return col
        return self.literal(cat)

    # --- value expressions ----------------------------------------------------------------

    def expr(self, cat: str, scope: list[Rel], depth: int = 2, sub: bool = False) -> str:
        if depth <= 0 or self.chance(0.4):
            return self.leaf(cat, scope)
        if sub and self.sub_depth < 2 and self.chance(0.15):
            return self.scalar_subquery(cat, scope)
        return getattr(self, "e_" + cat)(scope, depth - 1)

    def numeric(self, scope, depth) -> str:
        """int or numeric: PostgreSQL resolves the mix to numeric."""
        return self.expr(self.r.choice((INT, NUM)), scope, depth)

    def e_int(self, scope, depth) -> str:
        x = lambda: self.expr(INT, scope, depth)
        k = self.pick({"add": 3, "mul": 2, "div": 2, "mod": 1, "neg": 1, "abs": 1,
                       "coalesce": 2, "case": 2, "length": 1, "date_diff": 1, "cast": 1,
                       "nullif": 1, "strpos": 0.5})
        if k == "add":
            self.tag("arith:int")
            return f"({x()} {self.r.choice('+-')} {x()})"
        if k == "mul":
            self.tag("arith:int")
            return f"({x()} * {self.r.choice(('2', '3', '-1', self.leaf(INT, scope)))})"
        if k == "div":
            self.tag("arith:int_div")
            return f"({x()} / NULLIF({x()}, 0))"
        if k == "mod":
            self.tag("arith:int_mod")
            return f"({x()} % NULLIF({x()}, 0))"
        if k == "neg":
            self.tag("arith:int")
            return f"(-{x()})"
        if k == "abs":
            return f"abs({x()})"
        if k == "coalesce":
            return self.coalesce(INT, scope, depth)
        if k == "case":
            return self.case(INT, scope, depth)
        if k == "length":
            self.tag("string:length")
            return f"length({self.expr(TEXT, scope, depth)})"
        if k == "date_diff":
            self.tag("date:diff")
            return f"({self.expr(DATE, scope, depth)} - {self.expr(DATE, scope, depth)})"
        if k == "cast":
            self.tag("cast:num_int")
            return f"CAST({self.expr(NUM, scope, depth)} AS int8)"
        if k == "nullif":
            self.tag("null:nullif")
            return f"NULLIF({x()}, {self.literal(INT)})"
        self.tag("string:strpos")
        return f"strpos({self.expr(TEXT, scope, depth)}, {self.r.choice(('a', 'b', ' '))!r})"

    def e_num(self, scope, depth) -> str:
        n = lambda: self.numeric(scope, depth)
        k = self.pick({"add": 3, "mul": 2, "div": 2, "round": 1, "abs": 1, "coalesce": 2,
                       "case": 2, "cast": 1, "mix": 2})
        if k == "add":
            self.tag("arith:numeric")
            return f"({self.expr(NUM, scope, depth)} {self.r.choice('+-')} {n()})"
        if k == "mul":
            self.tag("arith:numeric")
            return f"({self.expr(NUM, scope, depth)} * {self.r.choice(('2', '0.5', '-1.25', self.leaf(INT, scope)))})"
        if k == "div":
            self.tag("arith:numeric_div")
            if self.chance(0.5):
                return f"({self.expr(NUM, scope, depth)} / NULLIF({n()}, 0))"
            return f"({self.expr(INT, scope, depth)} / NULLIF({self.expr(NUM, scope, depth)}, 0))"
        if k == "round":
            self.tag("arith:round")
            return f"round({self.expr(NUM, scope, depth)}, {self.r.randint(0, 2)})"
        if k == "abs":
            return f"abs({self.expr(NUM, scope, depth)})"
        if k == "coalesce":
            return self.coalesce(NUM, scope, depth)
        if k == "case":
            return self.case(NUM, scope, depth)
        if k == "cast":
            self.tag("cast:int_num")
            # numeric(18,2): int8 products of 3e9 fit (an overflow would be an error that
            # depends on which rows the plan evaluates it on)
            return f"CAST({self.expr(INT, scope, depth)} AS numeric(18,2))"

        self.tag("arith:int_num")
        return f"({self.expr(INT, scope, depth)} {self.r.choice('+-*')} {self.literal(NUM)})"

    def e_text(self, scope, depth) -> str:
        t = lambda: self.expr(TEXT, scope, depth)
        k = self.pick({"concat": 3, "concat_int": 1, "lower": 1, "upper": 1, "substring": 2,
                       "coalesce": 2, "case": 2, "replace": 0.5, "trim": 0.5, "left": 0.5,
                       "cast_num": 0.3, "cast_date": 0.3, "cast_bool": 0.2, "concat_fn": 0.5})
        if k == "concat":
            self.tag("string:concat")
            return f"({t()} || {t()})"
        if k == "concat_int":
            self.tag("string:concat", "cast:int_text")
            return f"({t()} || CAST({self.expr(INT, scope, depth)} AS text))"
        if k in ("lower", "upper"):
            self.tag("string:lower_upper")
            return f"{k}({t()})"
        if k == "substring":
            self.tag("string:substring")
            i, n = self.r.randint(1, 3), self.r.randint(1, 3)
            if self.chance(0.5):
                return f"substring({t()} FROM {i} FOR {n})"
            return f"substr({t()}, {i}, {n})" if self.chance(0.5) else f"substr({t()}, {i})"
        if k == "coalesce":
            return self.coalesce(TEXT, scope, depth)
        if k == "case":
            return self.case(TEXT, scope, depth)
        if k == "replace":
            self.tag("string:replace")
            return f"replace({t()}, 'a', 'xy')"
        if k == "trim":
            self.tag("string:trim")
            return f"trim({t()})"
        if k == "left":
            self.tag("string:left")
            return f"left({t()}, {self.r.randint(1, 3)})"
        if k == "cast_num":
            self.tag("cast:num_text")
            # round: a quotient's text has PostgreSQL's value-dependent scale (issue 14)
            return f"CAST(round({self.expr(NUM, scope, depth)}, 2) AS text)"
        if k == "cast_date":
            self.tag("cast:date_text")
            return f"CAST({self.expr(DATE, scope, depth)} AS text)"
        if k == "cast_bool":
            self.tag("cast:bool_text")
            return f"CAST({self.pred(scope, depth)} AS text)"
        self.tag("string:concat_fn")
        return f"concat({t()}, {t()})"

    def e_date(self, scope, depth) -> str:
        k = self.pick({"add": 3, "coalesce": 1, "case": 1})
        if k == "add":
            self.tag("date:add_int")
            off = self.int4_leaf(scope)   # date + int4 (PostgreSQL has no date + int8)
            return f"({self.expr(DATE, scope, depth)} {self.r.choice('+-')} {off})"
        if k == "coalesce":
            return self.coalesce(DATE, scope, depth)
        return self.case(DATE, scope, depth)

    def e_bool(self, scope, depth) -> str:
        return self.pred(scope, depth)

    def coalesce(self, cat, scope, depth) -> str:
        self.tag("null:coalesce")
        args = [self.expr(cat, scope, depth) for _ in range(self.r.randint(1, 2))]
        return f"COALESCE({', '.join(args)}, {self.literal(cat)})"

    def case(self, cat, scope, depth) -> str:
        if self.chance(0.3) and cat != BOOL:
            self.tag("case:simple")
            subject_cat = self.r.choice((INT, TEXT))
            subject = self.expr(subject_cat, scope, depth)
            whens = " ".join(f"WHEN {self.literal(subject_cat)} THEN {self.expr(cat, scope, depth)}"
                             for _ in range(self.r.randint(1, 2)))
        else:
            self.tag("case:searched")
            subject = ""
            whens = " ".join(f"WHEN {self.pred(scope, depth)} THEN {self.expr(cat, scope, depth)}"
                             for _ in range(self.r.randint(1, 2)))
        other = f" ELSE {self.expr(cat, scope, depth)}" if self.chance(0.7) else ""
        return f"CASE {subject + ' ' if subject else ''}{whens}{other} END"

    # --- predicates -----------------------------------------------------------------------

    def pred(self, scope: list[Rel], depth: int = 2, sub: bool = False) -> str:
        if sub and self.sub_depth < 2 and self.chance(0.3):
            return self.sub_pred(scope)
        k = self.pick({"cmp": 5, "is_null": 2, "distinct_from": 1, "between": 1, "in_list": 1.5,
                       "like": 1.5, "bool_col": 1.5, "and": 2 * (depth > 0),
                       "or": 1.5 * (depth > 0), "not": 1 * (depth > 0), "is_true": 0.5})
        d = max(depth - 1, 0)
        if k == "cmp":
            return self.comparison(scope, d)
        if k == "is_null":
            self.tag("null:is_null")
            cat = self.r.choice(CATEGORIES)
            x = self.expr(cat, scope, d) if cat != BOOL else self.leaf(BOOL, scope)
            return f"{x} IS {'NOT ' if self.chance(0.5) else ''}NULL"
        if k == "distinct_from":
            self.tag("null:is_distinct_from")
            cat = self.r.choice((INT, TEXT, DATE, NUM))
            return (f"{self.expr(cat, scope, d)} IS {'NOT ' if self.chance(0.5) else ''}"
                    f"DISTINCT FROM {self.expr(cat, scope, d)}")
        if k == "between":
            self.tag("pred:between")
            cat = self.r.choice((INT, NUM, DATE, TEXT))
            lo, hi = sorted((self.literal(cat), self.literal(cat))) if cat == INT else (
                self.literal(cat), self.literal(cat))
            return (f"{self.expr(cat, scope, d)} {'NOT ' if self.chance(0.3) else ''}"
                    f"BETWEEN {lo} AND {hi}")
        if k == "in_list":
            self.tag("pred:in_list")
            cat = self.r.choice((INT, TEXT, NUM, DATE))
            items = [self.literal(cat) for _ in range(self.r.randint(1, 4))]
            if self.chance(0.3):
                self.tag("null:in_list_null")
                items.append("NULL")
            neg = self.chance(0.35)
            return f"{self.expr(cat, scope, d)} {'NOT ' if neg else ''}IN ({', '.join(items)})"
        if k == "like":
            self.tag("string:like")
            op = self.pick({"LIKE": 3, "NOT LIKE": 1, "ILIKE": 0.5})
            pat = self.r.choice(LIKE_PATTERNS)
            escape = ""
            if "!" in pat:
                self.tag("string:like_escape")
                escape = " ESCAPE '!'"
            return f"{self.expr(TEXT, scope, d)} {op} '{pat}'{escape}"
        if k == "bool_col":
            col = self.column(BOOL, scope)
            if col is None:
                return self.comparison(scope, d)
            self.tag("bool:column")
            return self.r.choice((col, f"NOT {col}", f"{col} = ({self.comparison(scope, d)})"))

        if k == "is_true":
            self.tag("null:is_true")
            test = self.r.choice(("IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE",
                                  "IS UNKNOWN", "IS NOT UNKNOWN"))
            return f"({self.pred(scope, d)}) {test}"
        if k in ("and", "or"):
            self.tag(f"bool:{k}")
            parts = [self.pred(scope, d, sub) for _ in range(self.r.randint(2, 3))]
            if self.chance(0.1):
                self.tag("null:bool_null")
                parts.append("CAST(NULL AS bool)")
            return "(" + f" {k.upper()} ".join(parts) + ")"
        self.tag("bool:not")
        return f"NOT ({self.pred(scope, d, sub)})"

    def comparison(self, scope, depth) -> str:
        op = self.r.choice(("=", "<>", "<", "<=", ">", ">=", "!="))
        cat = self.pick({INT: 3, NUM: 1, "mix": 1.5, TEXT: 2, DATE: 1})
        if cat == "mix":
            self.tag("cmp:int_num")
            left, right = self.expr(INT, scope, depth), self.expr(NUM, scope, depth)
            if self.chance(0.5):
                left, right = right, left
        else:
            self.tag(f"cmp:{cat}")
            left, right = self.expr(cat, scope, depth), self.expr(cat, scope, depth)
        return f"{left} {op} {right}"

    # --- subqueries -----------------------------------------------------------------------

    def inner_rel(self) -> Rel:
        """A base table (or CTE) for a subquery's FROM."""
        if self.ctes and self.chance(0.25):
            cte = self.r.choice(self.ctes)
            return Rel(self.alias("q"), cte.source, cte.cols, small=cte.small)
        t = self.r.choice(TABLE_NAMES)
        return Rel(self.alias("i"), t, [(n, c) for n, _, c in COLUMNS], t, t in SMALL_TABLES)

    def correlation(self, inner: Rel, outer: list[Rel]) -> str | None:
        """inner.x <op> outer.y, the predicate that makes a subquery correlated."""
        for _ in range(6):
            cat = self.pick({INT: 4, TEXT: 2, DATE: 1, NUM: 1})
            icol, ocol = self.column(cat, [inner]), self.column(cat, outer)
            if icol and ocol:
                break
        else:
            return None
        self.tag("subquery:correlated")
        op = self.pick({"=": 6, "<": 1, "<>": 1, ">=": 1})
        if cat == INT and self.chance(0.15):
            self.tag("subquery:correlated_expr")
            return f"{icol} {op} {ocol} + 1"
        if cat == TEXT and self.chance(0.15):
            self.tag("subquery:correlated_expr")
            return f"{icol} {op} lower({ocol})"
        return f"{icol} {op} {ocol}"

    def sub_where(self, inner: Rel, outer: list[Rel], correlate_p: float = 0.6) -> str:
        conds = []
        if outer and self.chance(correlate_p):
            c = self.correlation(inner, outer)
            if c:
                conds.append(c)
        if not conds:
            self.tag("subquery:uncorrelated")
        if self.chance(0.5):
            local = [inner]
            if outer and self.chance(0.15):
                self.tag("subquery:correlated_complex")   # outer columns anywhere in it
                local = [inner] + outer
            conds.append(self.pred(local, 1, sub=True))
        return f" WHERE {' AND '.join(conds)}" if conds else ""

    def sub_pred(self, scope: list[Rel]) -> str:
        k = self.pick({"exists": 3, "in": 3, "any_all": 2, "scalar": 2})
        self.sub_depth += 1
        try:
            return getattr(self, "sub_" + k)(scope)
        finally:
            self.sub_depth -= 1

    def sub_exists(self, scope) -> str:
        inner = self.inner_rel()
        neg = self.chance(0.4)
        self.tag("subquery:not_exists" if neg else "subquery:exists")
        what = self.r.choice(("1", "*", f"{inner.alias}.{inner.cols[0][0]}"))
        body = f"SELECT {what} FROM {inner.source} {inner.alias}{self.sub_where(inner, scope, 0.75)}"
        if self.chance(0.15):
            self.tag("subquery:exists_grouped")
            body = (f"SELECT count(*) FROM {inner.source} {inner.alias}"
                    f"{self.sub_where(inner, scope, 0.75)} HAVING count(*) > 1")
        return f"{'NOT ' if neg else ''}EXISTS ({body})"

    def one_column(self, cat: str, scope: list[Rel]) -> str:
        """SELECT <one column of `cat`> FROM ... for IN / ANY / ALL (NULLs left in)."""
        inner = self.inner_rel()
        col = self.column(cat, [inner])
        x = col if col and self.chance(0.75) else self.expr(cat, [inner], 1)
        where = self.sub_where(inner, scope)
        k = self.pick({"plain": 6, "distinct": 1, "not_null": 1, "grouped": 1, "limit": 0.7,
                       "union": 0.7})
        if k == "distinct":
            self.tag("subquery:distinct")
            return f"SELECT DISTINCT {x} FROM {inner.source} {inner.alias}{where}"
        if k == "not_null":
            cond = f"{x} IS NOT NULL"
            where = f"{where} AND {cond}" if where else f" WHERE {cond}"
        if k == "grouped" and cat in (INT, NUM, TEXT, DATE):
            self.tag("subquery:grouped")
            key = self.column(self.r.choice((INT, TEXT)), [inner]) or f"{inner.alias}.{inner.cols[0][0]}"
            return f"SELECT max({x}) FROM {inner.source} {inner.alias}{where} GROUP BY {key}"
        if k == "limit":
            self.tag("subquery:limit")
            return (f"SELECT {x} FROM {inner.source} {inner.alias}{where} "
                    f"ORDER BY 1{self.direction()} LIMIT {self.r.randint(1, 5)}")
        if k == "union":
            self.tag("subquery:set_op")
            other = self.inner_rel()
            return (f"SELECT {x} FROM {inner.source} {inner.alias}{where} "
                    f"{self.r.choice(('UNION', 'UNION ALL', 'EXCEPT'))} "
                    f"SELECT {self.leaf(cat, [other])} FROM {other.source} {other.alias}")
        return f"SELECT {x} FROM {inner.source} {inner.alias}{where}"

    def sub_in(self, scope) -> str:
        cat = self.pick({INT: 4, TEXT: 2, NUM: 1, DATE: 1})
        neg = self.chance(0.45)
        self.tag("subquery:not_in" if neg else "subquery:in")
        inner = cat
        if cat in (INT, NUM) and self.chance(0.3):
            self.tag("subquery:in_int_num")
            inner = NUM if cat == INT else INT
        return f"{self.expr(cat, scope, 1)} {'NOT ' if neg else ''}IN ({self.one_column(inner, scope)})"


    def sub_any_all(self, scope) -> str:
        cat = self.pick({INT: 4, TEXT: 1, NUM: 1, DATE: 1})
        quant = self.pick({"ANY": 2, "ALL": 2, "SOME": 0.3})
        op = self.r.choice(("=", "<>", "<", "<=", ">", ">="))
        self.tag(f"subquery:{'all' if quant == 'ALL' else 'any'}")
        return f"{self.expr(cat, scope, 1)} {op} {quant} ({self.one_column(cat, scope)})"

    def sub_scalar(self, scope) -> str:
        cat = self.pick({INT: 3, NUM: 2, TEXT: 1, DATE: 1})
        op = self.r.choice(("=", "<>", "<", "<=", ">", ">="))
        self.tag("subquery:scalar_where")
        left = self.expr(cat if cat != NUM else self.r.choice((INT, NUM)), scope, 1)
        return f"{left} {op} {self.scalar_body(cat, scope)}"

    def scalar_subquery(self, cat: str, scope: list[Rel]) -> str:
        """A scalar subquery as a value (in a SELECT list or any expression)."""
        self.tag("subquery:scalar_value")
        self.sub_depth += 1
        try:
            return self.scalar_body(cat, scope)
        finally:
            self.sub_depth -= 1

    def scalar_body(self, cat: str, scope: list[Rel]) -> str:
        inner = self.inner_rel()
        k = self.pick({"agg": 6, "by_id": 1.5 * (cat != BOOL), "limit1": 1})
        if k == "by_id" and inner.table:
            ids = [c for rel in scope for c in rel.columns(INT) if c.endswith(".id")]
            if ids:
                self.tag("subquery:scalar_by_key", "subquery:correlated")
                x = self.leaf(cat, [inner])
                return (f"(SELECT {x} FROM {inner.source} {inner.alias} "
                        f"WHERE {inner.alias}.id = {self.r.choice(ids)})")
        if k == "limit1" and cat != BOOL:
            self.tag("subquery:scalar_limit")
            x = self.leaf(cat, [inner])
            return (f"(SELECT {x} FROM {inner.source} {inner.alias}"
                    f"{self.sub_where(inner, scope)} ORDER BY 1{self.direction()} LIMIT 1)")
        agg, _ = self.aggregate([inner], want=cat)
        return f"(SELECT {agg} FROM {inner.source} {inner.alias}{self.sub_where(inner, scope)})"

    # --- aggregates -----------------------------------------------------------------------

    def aggregate(self, scope: list[Rel], want: str | None = None) -> tuple[str, str]:
        """An aggregate call and its result category (`want`: the category needed)."""
        options = {"count_star": 2, "count": 1.5, "count_distinct": 1.5, "sum": 2,
                   "sum_distinct": 0.5, "avg": 1.5, "min": 1.5, "max": 1.5, "bool": 0.4,
                   "filter": 0.4, "count_case": 0.4}
        if want == INT:
            options = {"count_star": 2, "count": 1, "count_distinct": 1, "min": 1, "max": 1,
                       "count_case": 0.4, "filter": 0.3}
        elif want == NUM:
            options = {"sum": 2, "avg": 2, "sum_distinct": 0.5, "min": 1, "max": 1}
        elif want in (TEXT, DATE):
            options = {"min": 1, "max": 1}
        elif want == BOOL:
            options = {"bool": 1}
        k = self.pick(options)
        self.tag(f"agg:{k}")
        if k == "count_star":
            return "count(*)", INT
        if k == "count":
            return f"count({self.expr(self.r.choice(CATEGORIES), scope, 1)})", INT
        if k == "count_distinct":
            return f"count(DISTINCT {self.expr(self.r.choice(CATEGORIES), scope, 1)})", INT
        if k in ("sum", "sum_distinct", "avg"):
            cat = want if want in (INT, NUM) else self.r.choice((INT, NUM))
            x = self.expr(cat, scope, 1)
            if k == "sum_distinct":
                return f"sum(DISTINCT {x})", NUM
            return f"{k}({x})", NUM   # sum(int4) is int8, sum(int8) numeric, avg numeric
        if k in ("min", "max"):
            cat = want or self.r.choice((INT, NUM, TEXT, DATE))
            return f"{k}({self.expr(cat, scope, 1)})", cat
        if k == "bool":
            return f"{self.r.choice(('bool_and', 'bool_or'))}({self.pred(scope, 0)})", BOOL
        if k == "count_case":
            return f"count(CASE WHEN {self.pred(scope, 1)} THEN 1 END)", INT
        return f"count(*) FILTER (WHERE {self.pred(scope, 1)})", INT

    def agg_item(self, scope) -> tuple[str, str]:
        """An aggregate, sometimes inside an expression."""
        agg, cat = self.aggregate(scope)
        if self.chance(0.15):
            self.tag("agg:in_expr")
            if cat == INT:
                return f"{agg} * 2 + 1", INT
            if cat == NUM:
                return f"COALESCE({agg}, 0) + 1", NUM
            if cat == TEXT:
                return f"COALESCE({agg}, '-')", TEXT
        return agg, cat

    def having(self, scope) -> str:
        self.tag("agg:having")
        k = self.pick({"count": 2, "agg_cmp": 2, "null": 1, "subquery": 0.5})
        if k == "subquery":
            self.tag("agg:having_subquery")
            agg, cat = self.aggregate(scope, want=self.r.choice((INT, NUM)))
            self.sub_depth += 1
            try:
                if self.chance(0.5):
                    return f"{agg} {self.r.choice(('>', '<=', '='))} {self.scalar_body(cat, [])}"
                return f"{agg} {'NOT ' if self.chance(0.4) else ''}IN ({self.one_column(cat, [])})"
            finally:
                self.sub_depth -= 1
        if k == "count":

            return f"count(*) {self.r.choice(('>', '>=', '<', '='))} {self.r.randint(1, 4)}"
        agg, cat = self.aggregate(scope, want=self.r.choice((INT, NUM, TEXT, DATE)))
        if k == "null":
            return f"{agg} IS {'NOT ' if self.chance(0.5) else ''}NULL"
        return f"{agg} {self.r.choice(('>', '<', '<>', '>='))} {self.literal(cat)}"

    # --- FROM clause ----------------------------------------------------------------------

    def base_rel(self, same_as: Rel | None = None, small: bool = False) -> Rel:
        if self.ctes and not small and self.chance(0.5):
            cte = self.r.choice(self.ctes)
            self.tag("cte:reference")
            return Rel(self.alias("q"), cte.source, cte.cols, small=cte.small)
        if same_as is not None and same_as.table:
            self.tag("join:self")
            t = same_as.table
        else:
            t = self.r.choice(SMALL_TABLES if small else TABLE_NAMES)
        return Rel(self.alias(), t, [(n, c) for n, _, c in COLUMNS], t, t in SMALL_TABLES)

    def derived_rel(self) -> Rel:
        """(SELECT ...) AS alias, with named columns."""
        self.tag("derived:table")
        saved = self.sub_depth
        self.sub_depth += 1
        try:
            k = self.pick({"plain": 2, "aggregate": 2, "distinct": 1, "set_op": 0.7,
                           "limit": 0.7})
            if k == "aggregate":
                self.tag("derived:aggregate")
                sel = self.aggregate_select(max_keys=2, named=True)
            elif k == "set_op":
                self.tag("derived:set_op")
                sel = self.set_op(named=True)
            else:
                sel = self.plain_select(joins=self.r.choice((0, 0, 1)), named=True,
                                        distinct=(k == "distinct"))
                if k == "limit":
                    self.tag("derived:limit")
                    sel = Sel(sel.sql + self.total_order(len(sel.types)) +
                              f" LIMIT {self.r.randint(1, 15)}", sel.types)
        finally:
            self.sub_depth = saved
        cols = [(f"c{i + 1}", t) for i, t in enumerate(sel.types)]
        return Rel(self.alias("v"), f"({sel.sql})", cols, small=(k in ("aggregate", "limit")))

    def join_cond(self, scope: list[Rel], rel: Rel, big: bool, full: bool = False) -> str:
        left = self.r.choice(scope)
        # PostgreSQL runs a FULL JOIN only with a hashable or mergeable condition.
        k = self.pick({"equi": 6, "equi2": 1.5, "expr": 1.5, "filter": 1.5, "id": 2,
                       "non_equi": 1 if not (big or full) else 0, "or": 0.6 * (not full),
                       "true": 0.3 if not (big or full) else 0, "subquery": 0.3})
        def eq(cats=(INT, INT, INT, TEXT, DATE, NUM, "mix")):
            for _ in range(8):
                cat = self.r.choice(cats)
                if cat == "mix":   # int = numeric: 1 and 1.00 must meet
                    a, b = self.column(INT, [left]), self.column(NUM, [rel])
                    if self.chance(0.5):
                        a, b = self.column(NUM, [left]), self.column(INT, [rel])
                    if a and b:
                        self.tag("join:key_int_num")
                        return f"{a} = {b}"
                    continue
                a, b = self.column(cat, [left]), self.column(cat, [rel])
                if a and b:
                    return f"{a} = {b}"
            self.tag("join:on_false")
            return "FALSE"
        if k == "id" and left.table and rel.table:
            self.tag("join:on_key")
            return f"{left.alias}.id = {rel.alias}.id"
        if k == "equi2":
            self.tag("join:on_multi")
            return f"{eq()} AND {eq()}"
        if k == "expr":
            self.tag("join:on_expr")
            a, b = self.column(INT, [left]), self.column(INT, [rel])
            ta, tb = self.column(TEXT, [left]), self.column(TEXT, [rel])
            if a and b and (self.chance(0.6) or not (ta and tb)):
                return self.r.choice((f"{a} + 1 = {b}", f"{a} = {b} % 5", f"abs({a}) = {b}",
                                      f"{a} * 2 = {b} + 1"))
            if ta and tb:
                return self.r.choice((f"lower({ta}) = lower({tb})", f"{ta} = {tb} || 'b'",
                                      f"substr({ta}, 1, 1) = {tb}"))
            return eq()
        if k == "filter":
            self.tag("join:on_filter")
            side = self.r.choice((left, rel))
            return f"{eq()} AND {self.pred([side], 1)}"
        if k == "non_equi":
            self.tag("join:non_equi")
            a, b = self.column(INT, [left]), self.column(INT, [rel])
            if a and b:
                return f"{a} {self.r.choice(('<', '<=', '<>', '>'))} {b}"
            return eq()
        if k == "or":
            self.tag("join:on_or")
            return f"({eq()} OR {eq()})"
        if k == "true":
            self.tag("join:on_true")
            return "TRUE"
        if k == "subquery":
            self.tag("join:on_subquery")
            self.sub_depth += 1
            try:
                return f"{eq()} AND {self.sub_pred([rel])}"
            finally:
                self.sub_depth -= 1
        return eq()

    def from_clause(self, joins: int, derived_p: float = 0.1) -> tuple[str, list[Rel]]:
        first = self.derived_rel() if self.chance(derived_p) and self.sub_depth < 2 else self.base_rel()
        sql = f"{first.source} {first.alias}"
        scope = [first]
        for j in range(joins):
            kind = self.pick({"INNER": 4, "LEFT": 3, "RIGHT": 2, "FULL": 2, "CROSS": 0.8,
                              "comma": 0.5, "USING": 0.8 * (j == 0)})
            if kind == "comma" and j < joins - 1:
                kind = "INNER"   # a later JOIN ... ON could not see the tables before a comma
            if kind in ("CROSS", "comma") or (j >= 1 and self.chance(0.5)):
                rel = self.base_rel(small=True)
            elif self.chance(0.2) and self.sub_depth < 2:
                rel = self.derived_rel()
            elif self.chance(0.2):
                rel = self.base_rel(same_as=self.r.choice(scope))
            else:
                rel = self.base_rel()
            # Cross and non-equi joins only where the result stays small.
            big = not rel.small and any(not x.small for x in scope)
            if kind == "CROSS":
                if j > 0:
                    kind = "INNER"
                else:
                    self.tag("join:cross")
                    sql += f" CROSS JOIN {rel.source} {rel.alias}"
                    scope.append(rel)
                    continue
            if kind == "comma":
                self.tag("join:comma")
                sql = f"{sql}, {rel.source} {rel.alias}"
                scope.append(rel)
                self.pending_where.append(self.join_cond(scope[:-1], rel, True))
                continue
            if kind == "USING":
                if first.table and rel.table:
                    self.tag("join:using")
                    jk = self.r.choice(("INNER", "LEFT", "FULL"))
                    sql += (f" {jk} JOIN {rel.source} {rel.alias} USING "
                            f"({self.r.choice(('a', 'b', 's', 'd', 'id'))})")
                    scope.append(rel)
                    continue
                kind = "INNER"
            self.tag(f"join:{kind.lower()}")
            on = self.join_cond(scope, rel, big, full=(kind == "FULL"))
            word = "JOIN" if kind == "INNER" and self.chance(0.5) else f"{kind} JOIN"
            sql += f" {word} {rel.source} {rel.alias} ON {on}"
            scope.append(rel)
        return sql, scope

    # --- SELECT blocks --------------------------------------------------------------------

    def where(self, scope, p=0.7, sub_p=0.25) -> str:
        conds = list(self.pending_where)
        self.pending_where.clear()
        if self.chance(p):
            conds.append(self.pred(scope, 2, sub=self.chance(sub_p)))
        return f" WHERE {' AND '.join(conds)}" if conds else ""

    def item_cat(self) -> str:
        return self.pick({INT: 4, NUM: 2, TEXT: 3, DATE: 1, BOOL: 1})

    def plain_select(self, joins: int | None = None, named: bool = False, distinct: bool = False,
                     types: list[str] | None = None, sub_p: float = 0.25) -> Sel:
        saved_pending, self.pending_where = self.pending_where, []
        if joins is None:
            joins = self.pick({0: 4, 1: 4, 2: 1.5})
        from_sql, scope = self.from_clause(joins)
        if types is None and not named and len(scope) == 1 and scope[0].table and self.chance(0.06):
            self.tag("select:star")
            where = self.where(scope, sub_p=sub_p + 0.1)
            self.pending_where = saved_pending
            what = self.r.choice(("*", f"{scope[0].alias}.*"))
            return Sel(f"SELECT {'DISTINCT ' if distinct else ''}{what} FROM {from_sql}{where}",
                       [c for _, c in scope[0].cols], None if distinct else scope[0])
        if types is None:
            types = [self.item_cat() for _ in range(self.r.randint(1, 4))]

        items = []
        for i, cat in enumerate(types):
            x = self.expr(cat, scope, self.r.choice((0, 1, 2)), sub=self.chance(sub_p))
            items.append(f"{x} AS c{i + 1}" if named or self.chance(0.2) else x)
        where = self.where(scope, sub_p=sub_p + 0.1)
        self.pending_where = saved_pending
        if distinct:
            self.tag("distinct")
        head = "SELECT DISTINCT " if distinct else "SELECT "
        single = scope[0] if len(scope) == 1 and scope[0].table and not distinct else None
        return Sel(f"{head}{', '.join(items)} FROM {from_sql}{where}", types, single)

    def aggregate_select(self, max_keys: int = 3, named: bool = False,
                         types: list[str] | None = None) -> Sel:
        saved_pending, self.pending_where = self.pending_where, []
        from_sql, scope = self.from_clause(self.pick({0: 5, 1: 3, 2: 0.5}))
        where = self.where(scope, p=0.5)
        self.pending_where = saved_pending
        n_keys = self.r.randint(0, max_keys)
        keys = []
        for _ in range(n_keys):
            cat = self.pick({INT: 4, TEXT: 3, DATE: 1, NUM: 1, BOOL: 1})
            if self.chance(0.75):
                x = self.column(cat, scope) or self.expr(cat, scope, 1)
            else:
                self.tag("group:expr")
                x = self.expr(cat, scope, 1) if cat != BOOL else self.pred(scope, 0)
            # A key without a column is a constant (PostgreSQL refuses a non-integer constant
            # in GROUP BY and reads an integer as a position).
            if _COLUMN_REF.search(x) and x not in [k for k, _ in keys]:
                keys.append((x, cat))
        self.tag("group:by" if keys else "agg:scalar")
        items = [k for k in keys if self.chance(0.85)]
        for _ in range(self.r.randint(1, 3) if not types else 0):
            items.append(self.agg_item(scope))
        if types is not None:   # a set operation branch: keys and aggregates of these types
            items = []
            for cat in types:
                ks = [k for k in keys if k[1] == cat]
                items.append(ks[0] if ks and self.chance(0.6) else self.aggregate(scope, want=cat))
        if not items:
            items.append(self.agg_item(scope))
        select = ", ".join(f"{x} AS c{i + 1}" if named else x for i, (x, _) in enumerate(items))
        sql = f"SELECT {select} FROM {from_sql}{where}"
        if keys:
            if all(k in items for k in keys) and self.chance(0.3):
                self.tag("group:ordinal")
                sql += " GROUP BY " + ", ".join(str(items.index(k) + 1) for k in keys)
            else:
                sql += " GROUP BY " + ", ".join(x for x, _ in keys)
        if self.chance(0.3):
            sql += f" HAVING {self.having(scope)}"
        return Sel(sql, [c for _, c in items])

    def set_op(self, named: bool = False) -> Sel:
        types = [self.pick({INT: 4, TEXT: 3, NUM: 1, DATE: 1, BOOL: 0.5})
                 for _ in range(self.r.randint(1, 3))]
        # INT and NUM mix in a set operation (PostgreSQL resolves them to numeric).
        n = self.pick({2: 4, 3: 1})
        branches = []
        for i in range(n):
            btypes = [NUM if t == INT and self.chance(0.1) else t for t in types]
            if self.chance(0.25):
                b = self.aggregate_select(max_keys=2, named=named and i == 0, types=btypes)
            else:
                b = self.plain_select(joins=self.pick({0: 4, 1: 1}), named=named and i == 0,
                                      types=btypes, sub_p=0.1)
            sql = b.sql
            if self.chance(0.2):
                self.tag("set:branch_order_limit")
                sql = f"({sql}{self.total_order(len(types))} LIMIT {self.r.randint(0, 8)})"
            elif self.chance(0.15):
                self.tag("set:parenthesized")
                sql = f"({sql})"
            branches.append(sql)
        sql = branches[0]
        for i, b in enumerate(branches[1:]):
            op = self.pick({"UNION": 3, "UNION ALL": 3, "INTERSECT": 2, "EXCEPT": 2,
                            "INTERSECT ALL": 0.4, "EXCEPT ALL": 0.4})
            self.tag("set:" + op.lower().replace(" ", "_"))
            if i > 0 and self.chance(0.6):
                sql = f"({sql})"
            elif i > 0:
                self.tag("set:precedence")
            sql = f"{sql} {op} {b}"
        return Sel(sql, types)

    # --- ORDER BY / LIMIT -----------------------------------------------------------------

    def direction(self) -> str:
        d = self.pick({"": 3, " ASC": 1, " DESC": 2})
        n = self.pick({"": 3, " NULLS FIRST": 1, " NULLS LAST": 1})
        if d == " DESC":
            self.tag("order:desc")
        if n:
            self.tag("order:" + n.strip().lower().replace(" ", "_"))
        return d + n

    def total_order(self, n_cols: int) -> str:
        cols = list(range(1, n_cols + 1))
        self.r.shuffle(cols)
        return " ORDER BY " + ", ".join(f"{c}{self.direction()}" for c in cols)

    def finish(self, sel: Sel) -> str:
        sql = sel.sql
        k = self.pick({"none": 4, "total": 3, "total_limit": 3, "partial": 1,
                       "key_limit": 1 if sel.single_table else 0})
        if k == "total":
            self.tag("order:total")
            return sql + self.total_order(len(sel.types))
        if k == "total_limit":
            self.tag("order:total", "limit")
            sql += self.total_order(len(sel.types)) + f" LIMIT {self.r.randint(0, 12)}"
            if self.chance(0.4):
                self.tag("offset")
                sql += f" OFFSET {self.r.randint(0, 12)}"
            return sql
        if k == "partial":
            self.tag("order:partial")
            return sql + f" ORDER BY 1{self.direction()}"
        if k == "key_limit":
            self.tag("order:hidden_key", "limit")
            return (sql + f" ORDER BY {sel.single_table.alias}.id{self.r.choice(('', ' DESC'))}"
                    f" LIMIT {self.r.randint(1, 12)}" +
                    (f" OFFSET {self.r.randint(1, 20)}" if self.chance(0.3) else ""))
        return sql

    # --- top-level shapes -----------------------------------------------------------------

    def q_plain(self) -> Sel:
        self.tag("shape:plain")
        return self.plain_select(joins=0)

    def q_join(self) -> Sel:
        self.tag("shape:join")
        return self.plain_select(joins=self.pick({1: 3, 2: 1}))

    def q_aggregate(self) -> Sel:
        self.tag("shape:aggregate")
        return self.aggregate_select()

    def q_subquery(self) -> Sel:
        self.tag("shape:subquery")
        return self.plain_select(joins=self.pick({0: 3, 1: 1}), sub_p=0.9)

    def q_set_op(self) -> Sel:
        self.tag("shape:set_op")
        return self.set_op()

    def q_distinct(self) -> Sel:
        self.tag("shape:distinct")
        return self.plain_select(distinct=True)

    def q_derived(self) -> Sel:
        self.tag("shape:derived")
        saved, self.pending_where = self.pending_where, []
        rel = self.derived_rel()
        scope = [rel]
        from_sql = f"{rel.source} {rel.alias}"
        if self.chance(0.4):
            other = self.base_rel()
            kind = self.pick({"JOIN": 2, "LEFT JOIN": 2, "RIGHT JOIN": 1, "FULL JOIN": 1})
            self.tag(f"join:{kind.split()[0].lower() if ' ' in kind else 'inner'}")
            on = self.join_cond(scope, other, not (rel.small or other.small),
                                full=(kind == "FULL JOIN"))

            from_sql += f" {kind} {other.source} {other.alias} ON {on}"

            scope.append(other)
        types = [self.item_cat() for _ in range(self.r.randint(1, 3))]
        items = [self.expr(t, scope, 1) for t in types]
        where = self.where(scope, p=0.5)
        self.pending_where = saved
        return Sel(f"SELECT {', '.join(items)} FROM {from_sql}{where}", types)

    def q_cte(self) -> Sel:
        self.tag("shape:cte")
        defs = []
        for _ in range(self.pick({1: 3, 2: 1})):
            name = f"w{len(defs) + 1}"
            k = self.pick({"plain": 2, "aggregate": 2, "set_op": 0.5})
            if k == "aggregate":
                sel = self.aggregate_select(max_keys=2, named=True)
            elif k == "set_op":
                sel = self.set_op(named=True)
            else:
                sel = self.plain_select(joins=self.pick({0: 3, 1: 1}), named=True)
            if self.chance(0.3):
                self.tag("cte:column_list")
                cols = [(f"x{i + 1}", t) for i, t in enumerate(sel.types)]
                defs.append(f"{name} ({', '.join(n for n, _ in cols)}) AS ({sel.sql})")
            else:
                cols = [(f"c{i + 1}", t) for i, t in enumerate(sel.types)]
                defs.append(f"{name} AS ({sel.sql})")
            self.ctes.append(Rel(name, name, cols, small=(k == "aggregate")))
        if len(defs) > 1:
            self.tag("cte:multiple")
        body = (self.aggregate_select() if self.chance(0.3)
                else self.plain_select(joins=self.pick({0: 2, 1: 2, 2: 0.5})))
        self.ctes = []
        return Sel(f"WITH {', '.join(defs)} {body.sql}", body.types)

    def query(self) -> Generated:
        self.tags, self.n_alias, self.sub_depth, self.ctes, self.pending_where = set(), 0, 0, [], []
        shape = self.pick({"plain": 2, "join": 4, "aggregate": 4, "subquery": 4, "set_op": 2,
                           "cte": 2, "derived": 2, "distinct": 1})
        sel = getattr(self, "q_" + shape)()
        return Generated(self.finish(sel), frozenset(self.tags))


def generate(seed: int, n: int) -> list[Generated]:
    g = Gen(seed)
    return [g.query() for _ in range(n)]


def queries(seed: int, n: int) -> list[str]:
    """n random SELECTs over `schema(seed)`'s tables."""
    return [q.sql for q in generate(seed, n)]


if __name__ == "__main__":
    import sys

    s = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    for q in generate(s, int(sys.argv[2]) if len(sys.argv) > 2 else 20):
        print(q.sql + ";")
