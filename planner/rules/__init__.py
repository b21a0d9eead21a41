"""Logical rewrites, one per module, each a function `plan -> plan`, applied in order."""

from planner.rules.prune_columns import prune_columns
from planner.rules.pushdown_filters import pushdown_filters

RULES = (pushdown_filters, prune_columns)


def rewrite(node):
    for rule in RULES:
        node = rule(node)
    return node
