"""Plan rewrites, one per module, each a function `plan -> plan` named after its module.

RULES rewrite the bound (logical) plan, in order, before distribute.py places it.
DISTRIBUTED_RULES rewrite the placed plan, from distribute's exits: they read what only
placement makes (stats_aggregate answers the PARTIAL stage of a two-stage aggregate, which
exists only once distribute has split the aggregate; late_fetch narrows the per-segment
top-K of an ORDER BY ... LIMIT), and never add or move a Motion.
"""

from planner.rules.build_side import build_side
from planner.rules.join_filter_into_aggregate import join_filter_into_aggregate
from planner.rules.late_fetch import late_fetch
from planner.rules.prune_columns import prune_columns
from planner.rules.semi_join_pushdown import semi_join_pushdown
from planner.rules.pushdown_filters import pushdown_filters
from planner.rules.stats_aggregate import stats_aggregate
from planner.rules.sum_of_constant import sum_of_constant
from planner.rules.window_top_n import window_top_n

RULES = (pushdown_filters, sum_of_constant, window_top_n, join_filter_into_aggregate,
         semi_join_pushdown, build_side, prune_columns)
DISTRIBUTED_RULES = (stats_aggregate, late_fetch)


def rewrite(node):
    for rule in RULES:
        node = rule(node)
    return node


def rewrite_distributed(node):
    for rule in DISTRIBUTED_RULES:
        node = rule(node)
    return node
