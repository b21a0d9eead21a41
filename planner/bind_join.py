"""Bind a FROM clause with several relations into a tree of HashJoins.

Every relation's columns get a *global* position (their place in the FROM clause's
combined scope), and predicates are bound once against that scope. Inner and cross joins
(commas, JOIN ... ON, CROSS JOIN) with the WHERE clause's conjuncts form one join group
that is ordered greedily from statistics (greedy operator ordering): repeatedly join the
two parts connected by an equality whose join is estimated smallest, the larger probed
and the smaller built, so intermediate results and hash tables stay small and the tree
may be bushy. Outer joins keep the order the query wrote them in.
Equalities between the two sides become hash keys; other conditions become the join's
residual or a Filter as soon as every column they use is available.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from planner import errors, functions, types
from planner import expr as ex
from planner import plan as pl
from planner import estimate
from planner.expr import Func
from planner.scope import Scope


@dataclass
class Part:
    """A partial plan and the global column positions of its output, in order."""

    node: pl.Node
    cols: list[int]

    def local(self, e: ex.Expr) -> ex.Expr:
        return ex.map_columns(e, {g: i for i, g in enumerate(self.cols)})


def conjuncts(e: ex.Expr) -> list[ex.Expr]:
    if isinstance(e, ex.Call) and e.func is Func.AND:
        return [c for a in e.args for c in conjuncts(a)]
    return [e]


def disjuncts(e: ex.Expr) -> list[ex.Expr]:
    if isinstance(e, ex.Call) and e.func is Func.OR:
        return [d for a in e.args for d in disjuncts(a)]
    return [e]


def factor_or(e: ex.Expr) -> list[ex.Expr]:
    """Conjuncts of `e`, with the conditions every branch of an OR shares pulled out:
    (a AND b) OR (a AND c) is a AND (b OR c), so a join key hidden in an OR (TPC-H Q19)
    still becomes a key."""
    out = []
    for c in conjuncts(e):
        branches = disjuncts(c)
        if len(branches) < 2:
            out.append(c)
            continue
        parts = [conjuncts(b) for b in branches]
        common = [x for x in parts[0] if all(x in p for p in parts[1:])]
        if not common:
            out.append(c)
            continue
        rests = [[x for x in p if x not in common] for p in parts]
        out += common
        if all(rests):
            ors = None
            for r in rests:
                term = conjoin(r)
                ors = term if ors is None else functions.bind_call(Func.OR, [ors, term])
            out.append(ors)
    return out


def restrictions_of_or(pred: ex.Expr, parts: list[Part]) -> list[ex.Expr]:
    """Filters on single relations implied by an OR over several (PostgreSQL's
    extract_restriction_or_clauses): from (n1 = 'A' AND n2 = 'B') OR (n1 = 'B' AND
    n2 = 'A'), n1 IN ('A', 'B') and n2 IN ('A', 'B') as ORs, each one relation's part of
    every branch. They are implied (where the OR is true, some branch is, and so is its
    part), so they filter a relation before it is joined and the OR stays as it was;
    a relation absent from some branch gets none. Only for inner joins: a filter below
    an outer join's preserved side would drop rows the join must keep."""
    branches = disjuncts(pred)
    used = ex.columns_used(pred)
    if len(branches) < 2 or any(used <= set(p.cols) for p in parts):
        return []
    out = []
    for part in parts:
        cols = set(part.cols)
        if not used & cols:
            continue
        terms = []
        for b in branches:
            mine = [c for c in conjuncts(b) if ex.columns_used(c) and ex.columns_used(c) <= cols]
            if not mine:
                break
            terms.append(conjoin(mine))
        else:
            ors = terms[0]
            for t in terms[1:]:
                ors = functions.bind_call(Func.OR, [ors, t])
            out.append(ors)
    return out


def conjoin(preds: list[ex.Expr]) -> ex.Expr | None:
    out = None
    for p in preds:
        out = p if out is None else functions.bind_call(Func.AND, [out, p])
    return out


_JOIN_TYPES = {"LEFT": pl.JoinType.LEFT, "RIGHT": pl.JoinType.RIGHT, "FULL": pl.JoinType.FULL}


# Operators that are NULL when an operand is (PostgreSQL's strict functions among them).
_STRICT = frozenset({Func.ADD, Func.SUB, Func.MUL, Func.DIV, Func.MOD, Func.NEG, Func.EQ,
                     Func.NE, Func.LT, Func.LE, Func.GT, Func.GE, Func.CONCAT})


def _null_when(e: ex.Expr, cols: set[int]) -> bool:
    """`e` is NULL whenever the columns `cols` are all NULL."""
    if isinstance(e, ex.ColumnRef):
        return e.index in cols
    if isinstance(e, ex.Call) and e.func in _STRICT:
        return any(_null_when(a, cols) for a in e.args)
    if isinstance(e, (ex.Cast, ex.Like, ex.InList)):
        return _null_when(e.arg, cols)
    return False


def rejects_nulls(pred: ex.Expr, cols: set[int]) -> bool:
    """A WHERE conjunct that is not true for a row whose columns `cols` are all NULL (a
    row an outer join NULL-extended on that side): NULL there, or `x IS NOT NULL` of such
    an x. PostgreSQL's reduce_outer_joins turns such outer joins into inner ones."""
    if isinstance(pred, ex.IsNull) and pred.negated:
        return _null_when(pred.arg, cols)
    return _null_when(pred, cols)


def reduced(kinds: list[pl.JoinType], parts: list[Part],
            preds: list[ex.Expr]) -> list[pl.JoinType]:
    """The join types of a FROM's joins (kinds[k] joins parts[k + 1] to what precedes it)
    with each LEFT or RIGHT JOIN whose NULL-extended side a WHERE conjunct rejects made
    an inner join: the rows it would add are filtered out above anyway."""
    out = list(kinds)
    for k, jt in enumerate(kinds):
        if jt is pl.JoinType.LEFT:
            nullable = set(parts[k + 1].cols)
        elif jt is pl.JoinType.RIGHT:
            nullable = {c for p in parts[:k + 1] for c in p.cols}
        else:
            continue
        if any(rejects_nulls(p, nullable) for p in preds):
            out[k] = pl.JoinType.INNER
    return out


def join_type_of(join: exp.Join) -> pl.JoinType:
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if side in _JOIN_TYPES:
        return _JOIN_TYPES[side]
    if kind in ("SEMI", "ANTI"):
        return pl.JoinType.SEMI if kind == "SEMI" else pl.JoinType.ANTI
    if kind not in ("", "INNER", "CROSS", "OUTER"):
        raise errors.FeatureNotSupported(f"{kind} JOIN")
    method = (join.args.get("method") or "").upper()
    if method not in ("", "NATURAL"):
        raise errors.FeatureNotSupported(f"{method} JOIN")
    return pl.JoinType.INNER


class JoinPlanner:
    """Turns relations and predicates (bound against the global scope) into joins."""

    def __init__(self, scope: Scope):
        self.scope = scope

    # --- building one join -----------------------------------------------------------
    def join(self, left: Part, right: Part, jt: pl.JoinType, preds: list[ex.Expr]) -> Part:
        """Join two parts; `preds` may only use their columns. Equalities across the
        sides are keys, the rest the residual."""
        lset, rset = set(left.cols), set(right.cols)
        # ON conditions on the side that is not preserved alone filter it before the
        # join (PostgreSQL pushes them down too): a row they reject could only be
        # NULL-extended (LEFT/RIGHT) or fail to match (SEMI/ANTI) anyway.
        inner = {pl.JoinType.LEFT: (right, rset), pl.JoinType.SEMI: (right, rset),
                 pl.JoinType.ANTI: (right, rset), pl.JoinType.RIGHT: (left, lset)}.get(jt)
        if inner is not None:
            only = [p for p in preds if ex.columns_used(p) and ex.columns_used(p) <= inner[1]]
            if only:
                preds = [p for p in preds if p not in only]
                filtered = self._filter(inner[0], list(only))
                if inner[0] is right:
                    right = filtered
                else:
                    left = filtered
        lkeys, rkeys, rest = [], [], []
        for p in preds:
            pair = self._equi(p, lset, rset)
            if pair is None:
                rest.append(p)
            else:
                lkeys.append(pair[0])
                rkeys.append(pair[1])
        left, lpos = self._key_columns(left, lkeys, rkeys, 0)
        right, rpos = self._key_columns(right, rkeys, lkeys, 1)
        both = left.cols + right.cols
        residual = conjoin(rest)
        if residual is not None:
            residual = ex.map_columns(residual, {g: i for i, g in enumerate(both)})
        if jt in (pl.JoinType.SEMI, pl.JoinType.ANTI, pl.JoinType.ANTI_NULL_AWARE):
            fields, cols = left.node.fields, left.cols
        else:
            fields = left.node.fields + self._nullable(right.node.fields)
            cols = both
        node = pl.HashJoin(left.node, right.node, jt, tuple(lpos), tuple(rpos), residual, fields)
        return Part(node, cols)

    @staticmethod
    def _nullable(fields):
        return fields

    def _equi(self, p: ex.Expr, lset: set[int], rset: set[int]):
        """(left expr, right expr) when `p` is `l = r` with each side on one part."""
        if not (isinstance(p, ex.Call) and p.func is Func.EQ):
            return None
        a, b = p.args
        ua, ub = ex.columns_used(a), ex.columns_used(b)
        if not ua or not ub:
            return None
        if ua <= lset and ub <= rset:
            return a, b
        if ua <= rset and ub <= lset:
            return b, a
        return None

    def _key_columns(self, part: Part, mine, theirs, side: int) -> tuple[Part, list[int]]:
        """Positions of the key expressions in `part`'s output, appending computed or
        cast keys (both sides of a key must have one type to hash and compare alike)."""
        positions, extra = [], []
        for e, other in zip(mine, theirs):
            t = types.common_type(e.type, other.type)
            if t.is_numeric and t.precision is None:
                # Unconstrained numeric keeps each side's own scale and storage on a
                # cast; keys need one representation on both sides.
                t = types.numeric(38, t.scale)
            k = e if e.type == t else functions.bind_cast(e, t)
            if isinstance(k, ex.ColumnRef) and k.index in part.cols:
                positions.append(part.cols.index(k.index))
            else:
                extra.append(part.local(k))
                positions.append(len(part.cols) + len(extra) - 1)
        if not extra:
            return part, positions
        fields = part.node.fields
        refs = tuple(ex.ColumnRef(i, f.type, f.name) for i, f in enumerate(fields))
        new_fields = fields + tuple(pl.Field(f"_key{side}_{i}", e.type)
                                    for i, e in enumerate(extra))
        node = pl.Project(part.node, refs + tuple(extra), new_fields)
        # Computed keys get global positions past every real column: nothing refers to them.
        hidden = [-(side + 1) * 1000 - i for i in range(len(extra))]
        return Part(node, part.cols + hidden), positions

    # --- a group of inner joins ------------------------------------------------------
    def inner_group(self, parts: list[Part], preds: list[ex.Expr]) -> tuple[Part, list[ex.Expr]]:
        """Join all `parts` (inner), consuming the predicates that involve them; returns
        the joined part and the predicates left over (none, normally)."""
        pending = [c for p in preds for c in factor_or(p)]
        pending += [r for q in pending for r in restrictions_of_or(q, parts)]
        # Single-part predicates filter that part first.
        parts = [self._filter(p, pending) for p in parts]
        # Greedy operator ordering: join next the two parts, of any already joined, whose
        # join is estimated smallest; the larger of the two is probed, the smaller built.
        # Joined parts may meet again (a bushy tree): TPC-DS q72 joins the filtered sales
        # with their dates, the inventory with its dates, and then the two on item and
        # week, where a left-deep order from the largest table joins sales to every
        # inventory row of their item first. Parts connected by no equality are joined
        # (a cross product) only when nothing else is left.
        sized = [(p, estimate.rows(p.node)) for p in parts]
        tried: dict[tuple[int, int], tuple] = {}
        while len(sized) > 1:
            trials = [self._trial(a, na, b, nb, pending, tried)
                      for i, (a, na) in enumerate(sized) for b, nb in sized[i + 1:]]
            connected = [t for t in trials if t[0]]
            _, _, a, b, usable, joined, n = min(connected or trials, key=lambda t: t[1])
            sized = [(p, m) for p, m in sized if p is not a and p is not b] + [(joined, n)]
            for q in usable:
                pending.remove(q)
        return sized[0][0], pending

    def _trial(self, a: Part, na: float, b: Part, nb: float, pending: list[ex.Expr],
               tried: dict) -> tuple:
        """(connected by an equality, cost, a, b, predicates used, the join, its rows) of
        joining parts a and b (estimated na and nb rows), the larger probed. Kept in
        `tried` between rounds while both parts and the predicates it used are: a round
        joins two parts, so the others' trials stand (planning many-way joins, TPC-DS
        q64, tries each pair once instead of once per round)."""
        known = tried.get((id(a), id(b)))
        if known is not None and known[2] is a and known[3] is b and all(
                any(q is p for p in pending) for q in known[4]):
            return known
        cols = set(a.cols) | set(b.cols)
        usable = [q for q in pending if ex.columns_used(q) <= cols]
        connected = any(self._equi(q, set(a.cols), set(b.cols)) for q in pending)
        left, right, nl, nr = (a, b, na, nb) if na >= nb else (b, a, nb, na)
        joined = self.join(left, right, pl.JoinType.INNER, usable)
        n = estimate.rows(joined.node)
        trial = (connected, (n, nr, nl), a, b, usable, joined, n)
        tried[(id(a), id(b))] = trial
        return trial

    def _filter(self, part: Part, pending: list[ex.Expr]) -> Part:
        mine = [q for q in pending if ex.columns_used(q) and ex.columns_used(q) <= set(part.cols)]
        if not mine:
            return part
        for q in mine:
            pending.remove(q)
        pred = part.local(conjoin(mine))
        return Part(pl.Filter(part.node, pred, part.node.fields), part.cols)

    def filter_rest(self, part: Part, preds: list[ex.Expr]) -> Part:
        if not preds:
            return part
        missing = set().union(*(ex.columns_used(p) for p in preds)) - set(part.cols)
        if missing:
            raise errors.InternalError("a predicate refers to columns no join provides")
        return Part(pl.Filter(part.node, part.local(conjoin(preds)), part.node.fields),
                    part.cols)


def output_project(part: Part, n_global: int, scope: Scope) -> pl.Node:
    """The join result with columns in global order (what the scope describes)."""
    exprs = []
    for g in range(n_global):
        i = part.cols.index(g)
        f = part.node.fields[i]
        exprs.append(ex.ColumnRef(i, f.type, scope.columns[g].name))
    if [e.index for e in exprs] == list(range(len(part.node.fields))):
        return part.node
    fields = tuple(pl.Field(scope.columns[g].name, part.node.fields[part.cols.index(g)].type)
                   for g in range(n_global))
    return pl.Project(part.node, tuple(exprs), fields)
