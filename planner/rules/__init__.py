"""Logical rewrites, one per module, each a function `plan -> plan`, applied in order."""

from planner.rules.prune_columns import prune_columns
from planner.rules.pushdown_filters import pushdown_filters
from planner.rules.sum_of_constant import sum_of_constant

RULES = (pushdown_filters, sum_of_constant, prune_columns)


def rewrite(node):
    for rule in RULES:
        node = rule(node)
    return node
