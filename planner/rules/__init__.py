"""Logical rewrites, one per module, each a function `plan -> plan`, applied in order."""

from planner.rules.prune_columns import prune_columns
from planner.rules.pushdown_filters import pushdown_filters
from planner.rules.sum_of_constant import sum_of_constant
from planner.rules.window_top_n import window_top_n

RULES = (pushdown_filters, sum_of_constant, window_top_n, prune_columns)


def rewrite(node):
    for rule in RULES:
        node = rule(node)
    return node
