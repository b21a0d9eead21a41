"""Window function calls and frames as a WindowAgg node (planner/plan.py) holds them.

A WindowAgg evaluates calls that share one window: PARTITION BY columns and ORDER BY
keys; each call has its own frame (only aggregates and first/last/nth_value read it).
Arguments are columns of the node's child (the binder projects expressions first), so
the operator (segment/operators/window.py) only ever reads plain columns. What the
binder refuses (RANGE with offsets, GROUPS, EXCLUDE) never reaches a Frame.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from planner.types import SqlType


class WindowFunc(enum.Enum):
    ROW_NUMBER = "row_number"
    RANK = "rank"
    DENSE_RANK = "dense_rank"
    PERCENT_RANK = "percent_rank"
    CUME_DIST = "cume_dist"
    NTILE = "ntile"
    LAG = "lag"
    LEAD = "lead"
    FIRST_VALUE = "first_value"
    LAST_VALUE = "last_value"
    NTH_VALUE = "nth_value"
    COUNT = "count"
    COUNT_STAR = "count_star"
    SUM = "sum"
    MIN = "min"
    MAX = "max"
    ARRAY_AGG = "array_agg"
    # float8_regr_accum over (arg, arg2) and the final function `regression` names: the
    # float regr_*, corr, covar_*, stddev and variance over a window.
    REGR = "regr"


# The calls whose value depends on the frame (the others see the whole partition).
FRAMED = frozenset({WindowFunc.FIRST_VALUE, WindowFunc.LAST_VALUE, WindowFunc.NTH_VALUE,
                    WindowFunc.COUNT, WindowFunc.COUNT_STAR, WindowFunc.SUM,
                    WindowFunc.MIN, WindowFunc.MAX, WindowFunc.ARRAY_AGG, WindowFunc.REGR})


class Bound(enum.Enum):
    UNBOUNDED_PRECEDING = "UNBOUNDED PRECEDING"
    PRECEDING = "PRECEDING"      # n rows before (ROWS only)
    CURRENT_ROW = "CURRENT ROW"  # ROWS: this row; RANGE: its first/last peer
    FOLLOWING = "FOLLOWING"      # n rows after (ROWS only)
    UNBOUNDED_FOLLOWING = "UNBOUNDED FOLLOWING"


class Exclude(enum.Enum):
    NO_OTHERS = "NO OTHERS"
    CURRENT_ROW = "CURRENT ROW"
    GROUP = "GROUP"      # the current row and its peers
    TIES = "TIES"        # its peers, not the current row


@dataclass(frozen=True, slots=True)
class Frame:
    """ROWS (`rows`), GROUPS (`groups`) or RANGE frame from `start` to `end`; offsets of
    PRECEDING and FOLLOWING are constant counts (>= 0) of rows or of peer groups."""

    rows: bool = False
    start: Bound = Bound.UNBOUNDED_PRECEDING
    end: Bound = Bound.CURRENT_ROW
    start_offset: int = 0
    end_offset: int = 0
    groups: bool = False
    exclude: Exclude = Exclude.NO_OTHERS

    def describe(self) -> str:
        def side(b, n):
            if isinstance(n, tuple):  # (months, microseconds) of a RANGE interval
                n = f"'{n[0]} mons {n[1]} us'"
            return f"{n} {b.value}" if b in (Bound.PRECEDING, Bound.FOLLOWING) else b.value
        mode = "ROWS" if self.rows else "GROUPS" if self.groups else "RANGE"
        out = (f"{mode} BETWEEN "
               f"{side(self.start, self.start_offset)} AND {side(self.end, self.end_offset)}")
        if self.exclude is not Exclude.NO_OTHERS:
            out += f" EXCLUDE {self.exclude.value}"
        return out


DEFAULT_FRAME = Frame()


@dataclass(frozen=True, slots=True)
class WindowCall:
    """func(arg) OVER the node's window. `arg` and `default` are child column positions;
    `n` is lag/lead's offset, nth_value's position and ntile's bucket count (None: the
    constant was NULL, and so is every result), or `n_col` the column holding it for
    each row."""

    func: WindowFunc
    arg: int | None
    type: SqlType
    frame: Frame = DEFAULT_FRAME
    n: int | None = 1
    default: int | None = None
    n_col: int | None = None  # lag/lead offsets, nth_value's n, ntile's n evaluated per row
    arg2: int | None = None   # REGR's second column
    regression: str = ""      # REGR's final function (regr_sxx, corr, ...)

    def sql(self, names=None) -> str:
        def col(i):
            return names[i] if names is not None and i < len(names) else f"${i}"
        if self.func is WindowFunc.COUNT_STAR:
            args = "*"
        elif self.func in (WindowFunc.LAG, WindowFunc.LEAD):
            n = col(self.n_col) if self.n_col is not None else self.n
            args = f"{col(self.arg)}, {n}" + (
                f", {col(self.default)}" if self.default is not None else "")
        elif self.func is WindowFunc.NTH_VALUE:
            n = col(self.n_col) if self.n_col is not None else self.n
            args = f"{col(self.arg)}, {n}"
        elif self.func is WindowFunc.REGR:
            args = f"{col(self.arg)}, {col(self.arg2)}"
        elif self.func is WindowFunc.NTILE:
            args = col(self.n_col) if self.n_col is not None else str(self.n)
        else:
            args = col(self.arg) if self.arg is not None else ""
        name = "count" if self.func is WindowFunc.COUNT_STAR else \
            self.regression if self.func is WindowFunc.REGR else self.func.value
        out = f"{name}({args})"
        if self.func in FRAMED and self.frame != DEFAULT_FRAME:
            out += " " + self.frame.describe()
        return out
