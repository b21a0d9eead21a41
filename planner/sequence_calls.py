"""Binding nextval('s'), currval('s'), setval('s', n [, is_called]) and lastval().

The sequence argument is a regclass: a constant name resolved through search_path when
the statement is bound (as PostgreSQL folds 'name'::regclass to an oid), 42P01 for a
relation that does not exist and 42809 for one that is no sequence. The call becomes an
`expr.SequenceCall`, computed by the coordinator's counters where the statement runs.
"""

from __future__ import annotations

import dataclasses

from planner import errors, types
from planner import expr as ex
from planner import plan as pl
from planner.coercion import coerce, no_function
from planner.schema import TableDef
from planner.session_info import catalog_context
from planner.types import Kind

NAMES = frozenset(f.value for f in ex.SeqFunc)
_ARITY = {"nextval": (1,), "currval": (1,), "setval": (2, 3), "lastval": (0,)}


def bind(name: str, args: list[ex.Expr]) -> ex.Expr:
    """The call `name(args)` of a sequence function."""
    if len(args) not in _ARITY[name]:
        raise no_function(name, args)
    func = ex.SeqFunc(name)
    if func is ex.SeqFunc.LASTVAL:
        return ex.SequenceCall(func, 0, "", (), types.INT8)
    seq_id, seq_name = sequence_of(args[0], name)
    rest: tuple[ex.Expr, ...] = ()
    if func is ex.SeqFunc.SETVAL:
        value = args[1]
        if not (value.type.is_integer or value.type.kind is Kind.UNKNOWN
                or value.type.is_number):
            raise no_function(name, args)
        rest = (coerce(value, types.INT8),)
        if len(args) == 3:
            flag = args[2]
            if flag.type.kind not in (Kind.BOOL, Kind.UNKNOWN):
                raise no_function(name, args)
            rest += (coerce(flag, types.BOOL),)
    return ex.SequenceCall(func, seq_id, seq_name, rest, types.INT8)


def sequence_of(arg: ex.Expr, fname: str) -> tuple[int, str]:
    """(id, name) of the sequence a regclass argument names."""
    if not isinstance(arg, ex.Literal):
        raise errors.FeatureNotSupported(
            f"{fname}() of a sequence that is not a constant name")
    if arg.value is None:
        raise errors.FeatureNotSupported(f"{fname}() of NULL")
    if not (arg.type.is_string or arg.type.kind in (Kind.UNKNOWN, Kind.REGCLASS)):
        raise errors.UndefinedFunction(
            f"function {fname}({arg.type.sql()}) does not exist",
            hint="No function matches the given name and argument types. You might need "
                 "to add explicit type casts.")
    ctx = catalog_context()
    if ctx is None or not hasattr(ctx, "sequence"):
        raise errors.UndefinedTable(f'relation "{arg.value}" does not exist')
    return ctx.sequence(str(arg.value))


# --- where the calls run ----------------------------------------------------------------------
def _has_call(value) -> bool:
    """Whether a plan node's field (an expression, an aggregate call, a sort key, or
    tuples of them) calls a sequence function."""
    if isinstance(value, ex.Expr):
        return ex.calls_sequence(value)
    if isinstance(value, TableDef):
        # Of a table's definition only its CHECK constraints are evaluated (defaults are
        # text, bound into the plan where used); walking its columns and statistics cost
        # 5 ms a query for a 105-column table.
        return any(_has_call(k.expr) for k in value.checks)
    if isinstance(value, (tuple, list)):
        return any(_has_call(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, (pl.Node, type)):
        return any(_has_call(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


def _node_calls(node: pl.Node) -> bool:
    """Whether a plan node's own expressions (not its children's) call a sequence."""
    kids = {id(c) for c in node.children()}
    return any(_has_call(getattr(node, f.name)) for f in dataclasses.fields(node)
               if id(getattr(node, f.name)) not in kids and f.name not in ("fields", "locus"))


def in_plan(root: pl.Node) -> bool:
    """Whether a plan calls a sequence function anywhere."""
    return any(_node_calls(n) for n in pl.walk(root))


def check_placement(root: pl.Node) -> None:
    """0A000 when a distributed plan would call a sequence function on the segments (below
    a Motion): the counters are the coordinator's. planner/distribute.py puts the Projects,
    Filters and VALUES that call one on the coordinator; other places (an aggregate's
    argument, a join condition) are refused rather than run wrong."""
    def visit(node: pl.Node, below: bool) -> None:
        if below and _node_calls(node):
            raise errors.FeatureNotSupported(
                "a sequence function (nextval, currval, setval, lastval) where it would run "
                "on the segments")
        for c in node.children():
            visit(c, below or isinstance(node, pl.Motion))
    visit(root, False)
