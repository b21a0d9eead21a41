"""Expressions to numba source: one loop over a batch's rows for a list of expressions,
optionally under a predicate (the rows it keeps and the expressions over just those).

What compiles: column references and constants of integer, float, boolean, date,
timestamp and scaled-numeric types (numeric results wider than 18 digits too, while their
values fit an int64: `scaled`); + - * (integers, scaled numerics, floats) and /
(floats, integers truncating); = <> < <= > >= over those (floats in PostgreSQL's order:
NaN equals NaN and sorts above every number); AND, OR, NOT in three-valued logic; IS
[NOT] NULL; [NOT] IN lists of constants; CASE; casts between integers, to floats and to scaled numerics. A subtree of
anything else whose result has one of those types (a LIKE, an IN over strings, an
EXTRACT) is a *leaf*: segment/expr.py evaluates it over the batch first and the loop
reads its result as one more column. A subtree that is neither makes the whole
expression uncompilable (`NotCompiled`): the caller keeps the general evaluator.

The generated code never raises: where a row would be an error or an edge the
general evaluator decides (an integer overflow, a division by zero, a float that
overflows, a numeric past its precision), the loop returns status 1 and the caller
evaluates the batch the general way, which raises exactly as it always did, lazily
(CASE branches and AND/OR operands only where PostgreSQL evaluates them). So compiled
and general paths answer alike by construction.

The source depends on the expressions' shape and types only: every constant is an
argument (`Program.constants`), so `x > 5` and `x > 7` share one compiled kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner import expr as ex
from planner import types
from planner.types import Kind, SqlType

F = ex.Func
INT, FLOAT, BOOL = "i", "f", "b"  # the three machine kinds of a value in the loop
_TEMPORAL = (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ)
_INT_KINDS = (Kind.INT2, Kind.INT4, Kind.INT8, Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ)
_INT_RANGE = {Kind.INT2: 1 << 15, Kind.INT4: 1 << 31}
_ARITH = {F.ADD: "+", F.SUB: "-", F.MUL: "*"}
_COMPARE = {F.EQ: "==", F.NE: "!=", F.LT: "<", F.LE: "<=", F.GT: ">", F.GE: ">="}
# beyond this magnitude an int64 result may have wrapped: the general path decides
_SAFE = 9.2e18
IN_LIST_MAX = 16  # values of an IN list compared in the loop; a longer list is a leaf


class NotCompiled(Exception):
    """The expression has a part that is neither compilable nor a leaf."""


def scaled(t: SqlType) -> bool:
    """A numeric of known scale: its unscaled value lives in the loop as an int64. Batches
    hold it so (scaled int64) up to 18 digits; a wider one (decimal128) is only computed
    in the loop, never read from a column (`_leaf`): its arithmetic leaves the loop
    (status 1) past int64's range, and the caller widens the results to decimal128. An
    unconstrained numeric (a display scale per value) is never compiled, nor a scale
    beyond 18 (its 10^scale is no int64: an average's value at 28 digits)."""
    return t.kind is Kind.NUMERIC and t.scale is not None and not t.is_dynamic \
        and t.scale <= 18


def machine_kind(t: SqlType) -> str | None:
    """How a value of SQL type t lives in the loop, or None if it cannot."""
    if t.kind in _INT_KINDS or scaled(t):
        return INT
    if t.is_float:
        return FLOAT
    if t.kind is Kind.BOOL:
        return BOOL
    return None


@dataclass
class Program:
    """Source of one kernel and what to feed it: `columns` (batch positions read),
    `leaves` (expressions the general evaluator computes first), `constants`."""

    source: str
    columns: list[int]
    leaves: list[ex.Expr]
    constants: list
    constant_kinds: list[str]
    outputs: list[SqlType]
    has_predicate: bool


@dataclass
class _Gen:
    lines: list[str] = field(default_factory=list)
    columns: dict[int, str] = field(default_factory=dict)      # batch column -> input name
    leaves: dict[ex.Expr, str] = field(default_factory=dict)   # leaf -> input name
    constants: list = field(default_factory=list)
    constant_kinds: list[str] = field(default_factory=list)
    count: int = 0
    compiled_nodes: int = 0
    bail: str = "return 1, 0"  # where a row is left to the general evaluator

    def tmp(self) -> tuple[str, str]:
        self.count += 1
        return f"v{self.count}", f"n{self.count}"

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


def compile_program(exprs: list[ex.Expr], predicate: ex.Expr | None) -> Program:
    """The kernel for `exprs` over the rows where `predicate` is true (all rows if None)."""
    g = _Gen()
    body = _Gen()  # the loop body is generated first, so the inputs are known
    body.columns, body.leaves = g.columns, g.leaves
    body.constants, body.constant_kinds = g.constants, g.constant_kinds
    ind = 2
    if predicate is not None:
        pv, pn = _node(body, predicate, ind)
        if not exprs:
            # A filter only: every row's position is written and the count advances by
            # whether it passes. A branch taken at random (TPC-H Q19's quantity ranges)
            # cost more than the rest of the loop.
            body.emit(ind, "sel[cnt] = i")
            body.emit(ind, f"cnt += (not {pn}) & {pv}")
        else:
            body.emit(ind, f"if {pn} or not {pv}:")
            body.emit(ind + 1, "continue")
    outs = []
    for e in exprs:
        v, n = _node(body, e, ind)
        outs.append((v, n))
    if body.compiled_nodes == 0:
        raise NotCompiled("nothing to compile")
    pos = "cnt" if predicate is not None else "i"
    for j, (v, n) in enumerate(outs):
        body.emit(ind, f"ov{j}[{pos}] = {v}")
        body.emit(ind, f"on{j}[{pos}] = {n}")
    if predicate is not None and exprs:
        body.emit(ind, "sel[cnt] = i")
        body.emit(ind, "cnt += 1")
    outputs = [f"ov{j}, on{j}" for j in range(len(exprs))]
    source = _source(g, outputs + ["sel"], ["    cnt = 0"], body.lines,
                     "    return 0, cnt" if predicate is not None else "    return 0, n")
    return Program(source, list(g.columns), list(g.leaves), g.constants, g.constant_kinds,
                   [e.type for e in exprs], predicate is not None)


def _source(g: _Gen, tail_params: list[str], setup: list[str], body: list[str],
            ret: str) -> str:
    """The kernel's text: its inputs (columns, leaves, constants, then `tail_params`),
    `setup`, the loop over rows with each input's NULL flag, `body`, and `ret`."""
    inputs = [f"c{c}, m{c}" for c in g.columns] + [f"l{j}, lm{j}" for j in range(len(g.leaves))]
    consts = [f"k{j}" for j in range(len(g.constants))]
    params = ", ".join(["n"] + inputs + consts + tail_params)
    head = [f"def kernel({params}):"] + setup + ["    for i in range(n):"]
    for c, name in g.columns.items():
        head.append(f"        {name}_null = m{c}.shape[0] != 0 and not m{c}[i]")
    for j in range(len(g.leaves)):
        head.append(f"        leaf{j}_null = lm{j}.shape[0] != 0 and not lm{j}[i]")
    return "\n".join(head + body + [ret]) + "\n"


# How an aggregate accumulates into a group table's arrays (segment/operators/agg_table.py
# `_accumulators` lays them out): the arrays each kind updates at the row's group.
ACCUMULATORS = {
    "count_rows": 1,   # count(*): counts
    "count": 1,        # count(x): counts of non-NULL
    "exact": 3,        # exact sums: low word (uint64), high word (int64), seen
    "exact_avg": 4,    # the same and a count
    "float": 2,        # float64 sums, seen
    "float_avg": 3,    # the same and a count
    "min": 2,          # int64 value, seen
    "max": 2,
}


def compile_accumulation(args: list[ex.Expr], ops: list[tuple[int | None, str]]) -> Program:
    """One loop that computes `args` for every row and adds them, at the row's group
    (gid[i]), to accumulators: ops[k] = (position in `args` or None, one of ACCUMULATORS),
    whose arrays follow the inputs as a<k>_<m>. A row the loop leaves to the general
    evaluator (an overflow, say) stops it before anything of that row is added: it returns
    (1, i) and the caller adds rows i.. the general way; else (0, n). All of a row's
    arguments are computed before any is added, so a row is added whole or not at all."""
    g = _Gen()
    body = _Gen(bail="return 1, i")
    body.columns, body.leaves = g.columns, g.leaves
    body.constants, body.constant_kinds = g.constants, g.constant_kinds
    ind = 2
    values = [_node(body, e, ind) for e in args]
    body.emit(ind, "gr = gid[i]")
    for k, (j, kind) in enumerate(ops):
        a = [f"a{k}_{m}" for m in range(ACCUMULATORS[kind])]
        if kind == "count_rows":
            body.emit(ind, f"{a[0]}[gr] += 1")
            continue
        v, n = values[j]
        body.emit(ind, f"if not {n}:")
        if kind == "count":
            body.emit(ind + 1, f"{a[0]}[gr] += 1")
        elif kind in ("exact", "exact_avg"):
            body.emit(ind + 1, f"old = {a[0]}[gr]")
            body.emit(ind + 1, f"new = old + np.uint64({v})")
            body.emit(ind + 1, f"{a[0]}[gr] = new")
            body.emit(ind + 1, f"{a[1]}[gr] += (np.int64(1) if new < old else np.int64(0)) - "
                               f"(np.int64(1) if {v} < 0 else np.int64(0))")
            body.emit(ind + 1, f"{a[2]}[gr] = True")
            if kind == "exact_avg":
                body.emit(ind + 1, f"{a[3]}[gr] += 1")
        elif kind in ("float", "float_avg"):
            body.emit(ind + 1, f"{a[0]}[gr] += {v}")
            body.emit(ind + 1, f"{a[1]}[gr] = True")
            if kind == "float_avg":
                body.emit(ind + 1, f"{a[2]}[gr] += 1")
        else:  # min, max
            op = "<" if kind == "min" else ">"
            body.emit(ind + 1, f"if not {a[1]}[gr] or {v} {op} {a[0]}[gr]:")
            body.emit(ind + 2, f"{a[0]}[gr] = {v}")
            body.emit(ind + 2, f"{a[1]}[gr] = True")
    accs = [f"a{k}_{m}" for k, (_, kind) in enumerate(ops) for m in range(ACCUMULATORS[kind])]
    source = _source(g, ["gid"] + accs, [], body.lines, "    return 0, n")
    return Program(source, list(g.columns), list(g.leaves), g.constants, g.constant_kinds,
                   [e.type for e in args], False)


def _node(g: _Gen, e: ex.Expr, ind: int) -> tuple[str, str]:
    """Emit e's value and null flag for row i; returns their names."""
    kind = machine_kind(e.type)
    if kind is None:
        raise NotCompiled(f"{e.type} is not a machine type")
    mark = len(g.lines), g.compiled_nodes
    try:
        out = _compiled(g, e, kind, ind)
    except NotCompiled:
        out = None
    if out is not None:
        return out
    del g.lines[mark[0]:]  # what a failed attempt emitted; the subtree is a leaf instead
    g.compiled_nodes = mark[1]
    return _leaf(g, e, kind)


def _leaf(g: _Gen, e: ex.Expr, kind: str) -> tuple[str, str]:
    if e.type.is_numeric and not e.type.is_scaled_int:
        raise NotCompiled("a decimal128 column")  # only computed wide, never read
    if ex.is_volatile(e):
        raise NotCompiled("random()")  # leaves are shared by equality: random() - random()
    if isinstance(e, ex.ColumnRef):
        if e.index not in g.columns:
            g.columns[e.index] = f"col{e.index}"
        name = g.columns[e.index]
        return _load(f"c{e.index}[i]", kind), f"{name}_null"
    if e not in g.leaves:
        g.leaves[e] = f"leaf{len(g.leaves)}"
    j = list(g.leaves).index(e)
    return _load(f"l{j}[i]", kind), f"leaf{j}_null"


def _load(ref: str, kind: str) -> str:
    return {INT: f"np.int64({ref})", FLOAT: f"np.float64({ref})", BOOL: f"bool({ref})"}[kind]


def _compiled(g: _Gen, e: ex.Expr, kind: str, ind: int) -> tuple[str, str] | None:
    if isinstance(e, ex.ColumnRef):
        return _leaf(g, e, kind)
    if isinstance(e, ex.Literal):
        return _constant(g, e, kind)
    if isinstance(e, ex.IsNull):
        if machine_kind(e.arg.type) is None:
            return None
        _, an = _node(g, e.arg, ind)
        v, n = g.tmp()
        g.emit(ind, f"{v} = {'not ' if e.negated else ''}{an}")
        g.emit(ind, f"{n} = False")
        g.compiled_nodes += 1
        return v, n
    if isinstance(e, ex.Case):
        return _case(g, e, kind, ind)
    if isinstance(e, ex.InList):
        return _in_list(g, e, ind)
    if isinstance(e, ex.Cast):
        return _cast(g, e, kind, ind)
    if not isinstance(e, ex.Call):
        return None
    f = e.func
    if f in (F.AND, F.OR):
        return _logic(g, e, ind)
    if f is F.NOT:
        av, an = _node(g, e.args[0], ind)
        v, n = g.tmp()
        g.emit(ind, f"{v} = not {av}")
        g.emit(ind, f"{n} = {an}")
        g.compiled_nodes += 1
        return v, n
    if f in _COMPARE and len(e.args) == 2:
        return _compare(g, e, ind)
    if f in _ARITH or f is F.DIV:
        return _arith(g, e, kind, ind)
    return None


def _constant(g: _Gen, e: ex.Literal, kind: str) -> tuple[str, str]:
    v, n = g.tmp()
    if e.value is None:
        return ("np.int64(0)" if kind == INT else "0.0" if kind == FLOAT else "False"), "True"
    g.constants.append(e)
    g.constant_kinds.append(kind)
    return f"k{len(g.constants) - 1}", "False"


def _operand(g: _Gen, a: ex.Expr, ind: int, scale: int) -> tuple[str, str, str]:
    """(value, null, kind) of an operand, a scaled numeric brought to `scale`."""
    v, n = _node(g, a, ind)
    k = machine_kind(a.type)
    if scaled(a.type) and a.type.scale < scale:
        up = 10 ** (scale - a.type.scale)
        w, _ = g.tmp()
        g.emit(ind, f"if not {n} and abs(np.float64({v}) * {float(up)!r}) > {_SAFE!r}:")
        g.emit(ind + 1, g.bail)
        g.emit(ind, f"{w} = {v} * np.int64({up})")
        v = w
    return v, n, k


def _numeric_ok(t: SqlType) -> bool:
    return not t.is_numeric or scaled(t)


def _comparable(a: SqlType, b: SqlType) -> bool:
    """Whether the loop compares values of types a and b."""
    ka, kb = machine_kind(a), machine_kind(b)
    if ka is None or ka != kb or not (_numeric_ok(a) and _numeric_ok(b)):
        return False
    # the binder casts mixed operands; anything else stays general
    return a.is_numeric == b.is_numeric and (a.kind == b.kind or a.is_integer and b.is_integer)


def _in_list(g: _Gen, e: ex.InList, ind: int):
    """x [NOT] IN (v1, ...) as [NOT] (x = v1 OR ...), its three-valued logic: a pyarrow
    is_in over every row as a leaf cost 25 ms per 5M rows where the loop's comparisons
    cost a few. Long lists stay that leaf (its hash lookup beats k comparisons)."""
    if len(e.values) > IN_LIST_MAX or not all(
            isinstance(v, ex.Literal) and _comparable(e.arg.type, v.type) for v in e.values):
        return None
    equal = tuple(ex.Call(F.EQ, (e.arg, v), types.BOOL) for v in e.values)
    found = equal[0] if len(equal) == 1 else ex.Call(F.OR, equal, types.BOOL)
    return _compiled(g, ex.Call(F.NOT, (found,), types.BOOL) if e.negated else found, BOOL, ind)


def _compare(g: _Gen, e: ex.Call, ind: int):
    a, b = e.args
    if not _comparable(a.type, b.type):
        return None
    ka = machine_kind(a.type)
    scale = max(a.type.scale, b.type.scale) if a.type.is_numeric else 0
    av, an, _ = _operand(g, a, ind, scale)
    bv, bn, _ = _operand(g, b, ind, scale)
    v, n = g.tmp()
    op = _COMPARE[e.func]
    # Both sides are computed already: & and | combine the flags without the branches
    # that `and` / `or` compile to, which data-dependent rows mispredict.
    g.emit(ind, f"{n} = {an} | {bn}")
    if ka == FLOAT:  # PostgreSQL: NaN = NaN, and NaN above every number
        g.emit(ind, f"{v} = (not {n}) & (_fcmp({av}, {bv}) {op} 0)")
    else:
        g.emit(ind, f"{v} = (not {n}) & ({av} {op} {bv})")
    g.compiled_nodes += 1
    return v, n


def _logic(g: _Gen, e: ex.Call, ind: int):
    parts = [_node(g, a, ind) for a in e.args]
    v, n = g.tmp()
    # Every operand is computed already (as _compare, branch-free & and |).
    if e.func is F.AND:
        false = " | ".join(f"((not {pn}) & (not {pv}))" for pv, pn in parts)
        g.emit(ind, f"{v} = not ({false})")
    else:
        true = " | ".join(f"((not {pn}) & {pv})" for pv, pn in parts)
        g.emit(ind, f"{v} = {true}")
    nulls = " | ".join(pn for _, pn in parts)
    # AND: NULL unless some operand is false; OR: NULL unless some operand is true
    undecided = v if e.func is F.AND else f"(not {v})"
    g.emit(ind, f"{n} = ({nulls}) & {undecided}")
    g.compiled_nodes += 1
    return v, n


def _arith(g: _Gen, e: ex.Call, kind: str, ind: int):
    a, b = e.args
    t = e.type
    if not _numeric_ok(t) or not (_numeric_ok(a.type) and _numeric_ok(b.type)):
        return None
    if machine_kind(a.type) != kind or machine_kind(b.type) != kind or kind == BOOL:
        return None
    if kind == FLOAT and not (t.kind is Kind.FLOAT8 and a.type.kind is Kind.FLOAT8
                              and b.type.kind is Kind.FLOAT8):
        return None  # float4 arithmetic rounds to single precision at every step
    # dates and timestamps: the general kernels (+/-infinity, PostgreSQL's errors)
    if t.kind in _TEMPORAL or a.type.kind in _TEMPORAL or a.type.kind != b.type.kind \
            and not (a.type.is_integer and b.type.is_integer) \
            and not (a.type.is_numeric and b.type.is_numeric):
        return None
    f = e.func
    if t.is_numeric:
        if f is F.DIV:
            return None  # numeric division rounds to a chosen scale: the general path
        scale = max(a.type.scale, b.type.scale) if f in (F.ADD, F.SUB) else 0
        if f is F.MUL and a.type.scale + b.type.scale != t.scale:
            return None
        if f in (F.ADD, F.SUB) and scale != t.scale:
            return None
    else:
        scale = 0
    av, an, _ = _operand(g, a, ind, scale)
    bv, bn, _ = _operand(g, b, ind, scale)
    v, n = g.tmp()
    g.emit(ind, f"{n} = {an} or {bn}")
    if kind == FLOAT:
        if f is F.DIV:
            g.emit(ind, f"if not {n} and {bv} == 0.0:")
            g.emit(ind + 1, g.bail)
            g.emit(ind, f"{v} = {av} / {bv} if not {n} else 0.0")
        else:
            g.emit(ind, f"{v} = {av} {_ARITH[f]} {bv} if not {n} else 0.0")
        # a float overflow from finite operands is an error: the general path raises it
        g.emit(ind, f"if not {n} and np.isinf({v}) and not np.isinf({av}) "
                    f"and not np.isinf({bv}):")
        g.emit(ind + 1, g.bail)
        g.compiled_nodes += 1
        return v, n
    if f is F.DIV:
        g.emit(ind, f"if not {n} and ({bv} == 0 or {bv} == -1):")
        g.emit(ind + 1, g.bail)  # by zero (22012) or MIN / -1: the general path
        g.emit(ind, f"{v} = _idiv({av}, {bv}) if not {n} else np.int64(0)")
    else:
        approx = f"np.float64({av}) {_ARITH[f]} np.float64({bv})"
        g.emit(ind, f"if not {n} and abs({approx}) > {_bound(t)!r}:")
        g.emit(ind + 1, g.bail)
        g.emit(ind, f"{v} = ({av} {_ARITH[f]} {bv}) if not {n} else np.int64(0)")
    g.compiled_nodes += 1
    return v, n


def _bound(t: SqlType) -> float:
    """Results past this magnitude go to the general path (its range errors)."""
    if t.kind in _INT_RANGE:
        return float(_INT_RANGE[t.kind] - 1)
    if scaled(t) and t.precision is not None:
        return min(_SAFE, 10.0 ** t.precision - 1)
    return _SAFE


def _cast(g: _Gen, e: ex.Cast, kind: str, ind: int):
    src, dst = e.arg.type, e.type
    ks = machine_kind(src)
    if ks is None or not _numeric_ok(src) or not _numeric_ok(dst):
        return None
    if src == dst:
        return _node(g, e.arg, ind)
    av, an = _node(g, e.arg, ind)
    v, n = g.tmp()
    if src.is_integer and dst.is_integer:
        g.emit(ind, f"if not {an} and abs(np.float64({av})) > {_bound(dst)!r}:")
        g.emit(ind + 1, g.bail)
        g.emit(ind, f"{v} = {av}")
    elif (src.is_integer or scaled(src)) and dst.is_float:
        div = 10.0 ** src.scale if src.is_numeric else 1.0
        # exact while the integer fits a double's 53 bits (then one correctly rounded
        # division, as PostgreSQL's numeric -> float conversion)
        g.emit(ind, f"if not {an} and abs({av}) >= 9007199254740992:")
        g.emit(ind + 1, g.bail)
        g.emit(ind, f"{v} = np.float64({av}) / {div!r}")
    elif (src.is_integer or scaled(src)) and scaled(dst) and \
            dst.scale >= (src.scale if src.is_numeric else 0):
        up = 10 ** (dst.scale - (src.scale if src.is_numeric else 0))
        g.emit(ind, f"if not {an} and abs(np.float64({av}) * {float(up)!r}) > {_bound(dst)!r}:")
        g.emit(ind + 1, g.bail)
        g.emit(ind, f"{v} = {av} * np.int64({up})")
    elif src.is_float and dst.is_float:
        g.emit(ind, f"{v} = {av}")
        if dst.kind is Kind.FLOAT4:  # a float4 out of range is an error: general path
            g.emit(ind, f"if not {an} and not np.isinf({av}) and abs({av}) > 3.4028234e38:")
            g.emit(ind + 1, g.bail)
    else:
        return None
    g.emit(ind, f"{n} = {an}")
    g.compiled_nodes += 1
    return v, n


def _case(g: _Gen, e: ex.Case, kind: str, ind: int):
    if not _numeric_ok(e.type) or any(machine_kind(r.type) != kind for _, r in e.whens) \
            or machine_kind(e.else_.type) != kind:
        return None
    if e.type.is_numeric and any(r.type.scale != e.type.scale for r in
                                 [r for _, r in e.whens] + [e.else_]):
        return None
    if any(r.type.kind != e.type.kind and not (r.type.is_integer and e.type.is_integer)
           for r in [r for _, r in e.whens] + [e.else_]):
        return None
    v, n = g.tmp()
    zero = {INT: "np.int64(0)", FLOAT: "0.0", BOOL: "False"}[kind]
    g.emit(ind, f"{v} = {zero}")
    g.emit(ind, f"{n} = True")
    g.emit(ind, "while True:")  # a block to break out of at the first branch taken
    for cond, result in e.whens:
        cv, cn = _node(g, cond, ind + 1)
        g.emit(ind + 1, f"if not {cn} and {cv}:")
        rv, rn = _node(g, result, ind + 2)
        g.emit(ind + 2, f"{v} = {rv}")
        g.emit(ind + 2, f"{n} = {rn}")
        g.emit(ind + 2, "break")
    ev, en = _node(g, e.else_, ind + 1)
    g.emit(ind + 1, f"{v} = {ev}")
    g.emit(ind + 1, f"{n} = {en}")
    g.emit(ind + 1, "break")
    g.compiled_nodes += 1
    return v, n
